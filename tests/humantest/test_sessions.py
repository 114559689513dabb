"""Test plans, drawing, the server clock, answers, isolation between testers, results and exports."""

import csv
import io
from collections import Counter
from datetime import timedelta
from functools import partial

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from evaluation.models import Prediction, Submission
from evaluation.selectors import report_table
from humantest import answers, clock, drawing, sessions
from humantest.models import TestPlan, TestSession, Trial
from humantest.selectors import EXPORT_FIELDS
from tests import factories
from tests.factories import answer_all, logged_in, make_user, right_answer, steps_of, wrong_answer

pytestmark = pytest.mark.django_db


make_plan = partial(factories.make_plan, items_per_tester=4)
#: What the browser reports with each answer of answer_all's.
CLIENT = {"shown_ms": 5.0, "submit_ms": 2000.0, "events": []}


def length(trial):
    return len(trial.item.ground_truth["transformations"])


# --- drawing ---------------------------------------------------------------------------------------


def test_each_tester_gets_a_reproducible_draw_and_the_balance_asked_for(trance_dataset):
    alice, bob = make_user("alice", "tester"), make_user("bob", "tester")
    lengths = Counter(len(item.ground_truth["transformations"]) for item in trance_dataset.items.all())
    plan = make_plan(trance_dataset, alice, bob, items_per_tester=8, balance_by="length")
    first = [(unit[0], unit[2]) for unit in drawing.draw_units(plan, alice)]
    assert first == [(unit[0], unit[2]) for unit in drawing.draw_units(plan, alice)]
    assert first != [(unit[0], unit[2]) for unit in drawing.draw_units(plan, bob)]
    length_of = {item.pk: len(item.ground_truth["transformations"]) for item in trance_dataset.items.all()}
    drawn = Counter(length_of[pk] for pk, _, _ in drawing.draw_units(plan, alice))
    # As even as the dataset allows: each length gets 8 / (number of lengths), or all it has.
    share = 8 // len(lengths)
    assert all(
        drawn[value] in (min(share, lengths[value]), min(share + 1, lengths[value])) for value in lengths
    )
    assert sum(drawn.values()) == 8


def test_basic_plans_draw_one_step_samples_and_practice_items_are_never_test_items(trance_dataset):
    tester = make_user("tester1", "tester")
    one_step = [
        item.external_id
        for item in trance_dataset.items.all()
        if len(item.ground_truth["transformations"]) == 1
    ]
    plan = make_plan(
        trance_dataset, tester, setting="basic", items_per_tester=50, practice_items=one_step[:1]
    )
    external_id = dict(trance_dataset.items.values_list("pk", "external_id"))
    drawn = [external_id[pk] for pk, _, _ in drawing.draw_units(plan, tester)]
    assert sorted(drawn) == sorted(one_step[1:])


def test_view_plans_balance_the_final_camera(trance_dataset):
    tester = make_user("tester1", "tester")
    plan = make_plan(trance_dataset, tester, setting="view", items_per_tester=9, balance_by="camera")
    cameras = Counter(context["camera"] for _, _, context in drawing.draw_units(plan, tester))
    assert cameras == {"Camera_Left": 3, "Camera_Center": 3, "Camera_Right": 3}


def test_a_fixed_draw_gives_every_tester_the_listed_items_in_order(trance_dataset):
    alice, bob = make_user("alice", "tester"), make_user("bob", "tester")
    plan = make_plan(trance_dataset, alice, bob, draw="fixed", fixed_items=["5", "2", "9"])
    external_id = dict(trance_dataset.items.values_list("pk", "external_id"))
    for tester in (alice, bob):
        drawn = [external_id[pk] for pk, _, _ in drawing.draw_units(plan, tester)]
        assert drawn == ["5", "2", "9"]


# --- the server clock --------------------------------------------------------------------------------


def test_the_first_serve_starts_the_clock_and_a_reload_returns_the_same_trial(trance_dataset, client):
    tester = make_user("tester1", "tester")
    plan = make_plan(trance_dataset, tester, time_limit_s=90)
    session = sessions.begin_test(sessions.start_session(plan, tester))
    logged_in(client, tester)
    first = client.get(f"/test/sessions/{session.pk}/")
    assert first.status_code == 200
    trial = Trial.objects.get(session=session, status=Trial.Status.SERVED)
    assert trial.position == 0
    assert trial.deadline - trial.served_at == timedelta(seconds=90)
    served_at = trial.served_at
    again = client.get(f"/test/sessions/{session.pk}/")
    data = again.context["data"]
    trial.refresh_from_db()
    assert data["trial"] == trial.pk and trial.served_at == served_at
    assert 0 < data["remaining_ms"] <= 90_000
    assert Trial.objects.filter(session=session, status=Trial.Status.SERVED).count() == 1


def test_an_answer_is_scored_once_and_a_second_answer_is_refused(
    trance_dataset, client, django_capture_on_commit_callbacks
):
    tester = make_user("tester1", "tester")
    plan = make_plan(trance_dataset, tester)
    session = sessions.begin_test(sessions.start_session(plan, tester))
    logged_in(client, tester)
    data = client.get(f"/test/sessions/{session.pk}/").context["data"]
    trial = Trial.objects.get(pk=data["trial"])
    client_data = {
        "shown_ms": 12.5,
        "first_input_ms": 900,
        "submit_ms": 4000.25,
        "events": [{"type": "blur", "t": 2000}, {"type": "focus", "t": 2500}],
    }
    right = {"answer": {"steps": steps_of(trial.item)}, "client": client_data}
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(data["answer_url"], right, content_type="application/json")
    assert response.status_code == 200
    result = response.json()
    assert result["figures"]["correct"] is True and result["figures"]["distance"] == 0
    assert result["truth"]["steps"] == steps_of(trial.item)
    trial.refresh_from_db()
    assert trial.status == Trial.Status.ANSWERED and trial.focus_losses == 1
    assert trial.client["submit_ms"] == 4000.2 or trial.client["submit_ms"] == 4000.3
    prediction = Prediction.objects.get(submission=session.submission, item=trial.item)
    assert prediction.answer == steps_of(trial.item) and prediction.score["correct"] is True
    session.submission.refresh_from_db()
    assert session.submission.summary["Acc"] == 1.0

    wrong = {"answer": {"steps": [{"obj_idx": 0, "attr": "color", "val": "red"}]}}
    second = client.post(data["answer_url"], wrong, content_type="application/json")
    assert second.status_code == 409
    trial.refresh_from_db()
    assert trial.answer == steps_of(trial.item)


@pytest.mark.parametrize(
    ("answer", "client_data", "field"),
    [
        ({"steps": []}, {}, "steps"),
        ({"steps": [{"obj_idx": 0, "attr": "colour", "val": "red"}]}, {}, "steps[0].attr"),
        ({"steps": [{"obj_idx": 12, "attr": "color", "val": "red"}]}, {}, "steps[0].obj_idx"),
        ({"steps": [{"obj_idx": 1, "attr": "color", "val": "red"}] * 5}, {}, "steps"),
        (
            {"steps": [{"obj_idx": 1, "attr": "color", "val": "red"}]},
            {"submit_ms": "soon"},
            "client.submit_ms",
        ),
        (
            {"steps": [{"obj_idx": 1, "attr": "color", "val": "red"}]},
            {"events": [{"type": "scroll", "t": 1}]},
            "client.events[0].type",
        ),
    ],
)
def test_a_bad_answer_is_refused_with_its_field_and_changes_nothing(
    trance_dataset, client, answer, client_data, field
):
    tester = make_user("tester1", "tester")
    session = sessions.begin_test(sessions.start_session(make_plan(trance_dataset, tester), tester))
    logged_in(client, tester)
    data = client.get(f"/test/sessions/{session.pk}/").context["data"]
    response = client.post(
        data["answer_url"], {"answer": answer, "client": client_data}, content_type="application/json"
    )
    assert response.status_code == 400
    assert response.json()["field"] == field
    trial = Trial.objects.get(pk=data["trial"])
    assert trial.status == Trial.Status.SERVED and trial.answer is None
    assert not Prediction.objects.filter(submission=session.submission, answer__isnull=False).exists()


def test_a_trial_past_its_deadline_is_closed_as_timed_out(trance_dataset, client):
    tester = make_user("tester1", "tester")
    session = sessions.begin_test(
        sessions.start_session(make_plan(trance_dataset, tester, time_limit_s=30), tester)
    )
    logged_in(client, tester)
    data = client.get(f"/test/sessions/{session.pk}/").context["data"]
    # Asking to close it early is refused: the server's clock decides.
    early = client.post(data["timeout_url"], {}, content_type="application/json")
    assert early.status_code == 409
    # The tester comes back after the deadline: the trial is closed and the next one is served.
    Trial.objects.filter(pk=data["trial"]).update(deadline=timezone.now() - timedelta(seconds=5))
    page = client.get(f"/test/sessions/{session.pk}/")
    assert "ran out of time" in page.content.decode()
    assert page.context["data"]["trial"] != data["trial"]
    expired = Trial.objects.get(pk=data["trial"])
    assert expired.status == Trial.Status.TIMED_OUT and expired.answer is None
    prediction = Prediction.objects.get(submission=session.submission, item=expired.item)
    assert prediction.answer is None and prediction.score["correct"] is False
    # An answer that arrives late is not scored as an answer either.
    late = page.context["data"]
    Trial.objects.filter(pk=late["trial"]).update(deadline=timezone.now() - timedelta(seconds=5))
    response = client.post(
        late["answer_url"],
        {"answer": {"steps": [{"obj_idx": 1, "attr": "color", "val": "red"}]}},
        content_type="application/json",
    )
    assert response.status_code == 200 and response.json()["figures"]["timed_out"] is True
    assert Trial.objects.get(pk=late["trial"]).answer is None


def test_practice_rounds_repeat_until_the_tester_starts_and_never_count(trance_dataset, client):
    tester = make_user("tester1", "tester")
    plan = make_plan(trance_dataset, tester, practice_items=["0", "1"], guidance="Read the table first.")
    session = sessions.start_session(plan, tester)
    logged_in(client, tester)
    for round_number in (1, 2):
        client.post(f"/test/sessions/{session.pk}/practice/")
        for _ in range(2):
            data = client.get(f"/test/sessions/{session.pk}/").context["data"]
            assert data["practice"] is True
            result = client.post(
                data["answer_url"],
                {"answer": {"steps": [{"obj_idx": 1, "attr": "color", "val": "red"}]}},
                content_type="application/json",
            ).json()
            assert result["guidance"] == "Read the table first." and result["truth"]["steps"]
        assert (
            f"Practice round {round_number} done"
            in client.get(f"/test/sessions/{session.pk}/").content.decode()
        )
    client.post(f"/test/sessions/{session.pk}/begin/")
    data = client.get(f"/test/sessions/{session.pk}/").context["data"]
    assert data["practice"] is False
    assert not Prediction.objects.filter(submission=session.submission).exists()
    assert Trial.objects.filter(session=session, phase=Trial.Phase.PRACTICE).count() == 4


def test_a_session_pauses_between_trials_and_resumes_where_it_stopped(trance_dataset, client):
    tester = make_user("tester1", "tester")
    session = sessions.begin_test(sessions.start_session(make_plan(trance_dataset, tester), tester))
    logged_in(client, tester)
    data = client.get(f"/test/sessions/{session.pk}/").context["data"]
    client.post(
        data["answer_url"],
        {"answer": {"steps": [{"obj_idx": 1, "attr": "color", "val": "red"}]}},
        content_type="application/json",
    )
    client.post(f"/test/sessions/{session.pk}/pause/")
    page = client.get(f"/test/sessions/{session.pk}/")
    assert "is paused" in page.content.decode() and "1 of 4" in page.content.decode()
    assert not Trial.objects.filter(session=session, status=Trial.Status.SERVED).exists()
    client.post(f"/test/sessions/{session.pk}/resume/")
    resumed = client.get(f"/test/sessions/{session.pk}/").context["data"]
    assert Trial.objects.get(pk=resumed["trial"]).position == 1


def test_the_last_answer_finishes_the_session(trance_dataset, client):
    tester = make_user("tester1", "tester")
    session = sessions.begin_test(
        sessions.start_session(make_plan(trance_dataset, tester, items_per_tester=2), tester)
    )
    logged_in(client, tester)
    for _ in range(2):
        data = client.get(f"/test/sessions/{session.pk}/").context["data"]
        client.post(
            data["answer_url"],
            {"answer": {"steps": steps_of(Trial.objects.get(pk=data["trial"]).item)}},
            content_type="application/json",
        )
    page = client.get(f"/test/sessions/{session.pk}/")
    assert "is finished" in page.content.decode()
    session.refresh_from_db()
    assert session.status == TestSession.Status.FINISHED and session.finished_at
    history = client.get("/test/history/").content.decode()
    assert history.count("correct</span>") == 2


# --- isolation ---------------------------------------------------------------------------------------


def test_two_testers_never_see_each_others_trials_or_results(trance_dataset):
    from django.test import Client

    alice, bob = make_user("alice", "tester"), make_user("bob", "tester")
    plan = make_plan(trance_dataset, alice, bob, items_per_tester=3)
    clients = {user.username: logged_in(Client(), user) for user in (alice, bob)}
    sessions = {}
    for name, client in clients.items():
        client.post(f"/test/plans/{plan.pk}/start/")
        sessions[name] = TestSession.objects.get(plan=plan, tester__username=name)
        client.post(f"/test/sessions/{sessions[name].pk}/begin/")
    seen = {name: set() for name in clients}
    # Interleaved, as two people working at once.
    for _ in range(3):
        for name, client in clients.items():
            data = client.get(f"/test/sessions/{sessions[name].pk}/").context["data"]
            assert Trial.objects.get(pk=data["trial"]).session == sessions[name]
            seen[name].add(data["trial"])
            other = "bob" if name == "alice" else "alice"
            # The other tester can neither answer this trial nor open this session.
            attempt = clients[other].post(
                data["answer_url"], {"answer": {"steps": []}}, content_type="application/json"
            )
            assert attempt.status_code == 403
            assert clients[other].get(f"/test/sessions/{sessions[name].pk}/").status_code == 403
            assert (
                clients[other].post(data["timeout_url"], {}, content_type="application/json").status_code
                == 403
            )
            client.post(
                data["answer_url"],
                {"answer": {"steps": [{"obj_idx": 1, "attr": "color", "val": "red"}]}},
                content_type="application/json",
            )
    assert not seen["alice"] & seen["bob"]
    for name in clients:
        predictions = Prediction.objects.filter(submission=sessions[name].submission)
        assert predictions.count() == 3
        assert {p.item_id for p in predictions} == set(
            sessions[name].trials.values_list("item_id", flat=True)
        )
    history = clients["alice"].get("/test/history/").context["rows"]
    assert {row["trial"].pk for row in history} == seen["alice"]


def test_testers_get_403_on_plans_they_are_not_invited_to_and_on_researcher_pages(trance_dataset, client):
    invited, outsider = make_user("invited", "tester"), make_user("outsider", "tester")
    plan = make_plan(trance_dataset, invited)
    logged_in(client, outsider)
    assert client.post(f"/test/plans/{plan.pk}/start/").status_code == 403
    assert plan.name not in client.get("/test/").content.decode()
    for url in (
        "/test/plans/",
        "/test/plans/new/",
        f"/test/plans/{plan.pk}/",
        f"/test/plans/{plan.pk}/trials.csv",
        f"/test/plans/{plan.pk}/trials.json",
        f"/datasets/{trance_dataset.pk}/",
        f"/datasets/{trance_dataset.pk}/report/",
    ):
        assert client.get(url).status_code == 403, url


# --- results, report and exports -------------------------------------------------------------------


def test_results_pool_testers_into_the_report_human_row_and_export_every_trial(
    trance_dataset, client, django_capture_on_commit_callbacks
):
    alice, bob = make_user("alice", "tester"), make_user("bob", "tester")
    researcher = make_user("rita", "researcher")
    plan = make_plan(trance_dataset, alice, bob, items_per_tester=3, row_label="Human")
    with django_capture_on_commit_callbacks(execute=True):
        answer_all(plan, alice, right_answer, CLIENT)
        answer_all(plan, bob, wrong_answer, CLIENT)

    table = report_table(trance_dataset)
    assert [row.label for row in table.rows] == ["Human"]  # per-tester rows stay on the plan's page
    plan.refresh_from_db()
    pooled = plan.pooled_submission
    assert pooled.summary["Acc"] == pytest.approx(0.5) and pooled.summary["n"] == 6
    event_acc = next(
        cell
        for column, cell in zip(table.columns, table.rows[0].cells, strict=True)
        if column.setting == "event" and column.label == "Acc"
    )
    assert event_acc.value == pytest.approx(0.5) and event_acc.n == 6

    logged_in(client, researcher)
    page = client.get(f"/test/plans/{plan.pk}/")
    assert page.status_code == 200
    testers = {row.label: row for row in page.context["testers"]}
    assert testers["alice"].correct == 3 and testers["bob"].correct == 0
    assert (
        page.context["pooled"].trials == 6 and page.context["pooled"].low < 0.5 < page.context["pooled"].high
    )
    assert [row.label for row in page.context["table"].rows] == ["alice", "bob", "Human"]

    exported = client.get(f"/test/plans/{plan.pk}/trials.csv")
    rows = list(csv.DictReader(io.StringIO(exported.content.decode())))
    assert len(rows) == 6
    assert {row["tester"] for row in rows} == {"alice", "bob"}
    assert all(row["status"] == "answered" and row["served_at"] and row["answered_at"] for row in rows)
    assert {row["correct"] for row in rows if row["tester"] == "alice"} == {"True"}
    assert all(row["client_submit_ms"] == "2000.0" for row in rows)
    as_json = client.get(f"/test/plans/{plan.pk}/trials.json").json()
    assert list(as_json["trials"][0]) == list(rows[0]) == EXPORT_FIELDS  # CSV and JSON: the same columns
    assert len(as_json["trials"]) == 6 and as_json["trials"][0]["answer"]


def test_researchers_create_plans_in_the_browser_and_bad_plans_are_refused(trance_dataset, client):
    researcher = make_user("rita", "researcher")
    tester = make_user("tom", "tester")
    logged_in(client, researcher)
    form = {
        "name": "Paper replication",
        "dataset": trance_dataset.pk,
        "setting": "event",
        "row_label": "Human",
        "items_per_tester": 5,
        "draw": "random",
        "seed": 3,
        "balance_by": "length",
        "practice_items": "0, 1",
        "fixed_items": "",
        "time_limit_s": 120,
        "testers": [tester.pk],
    }
    bad = client.post("/test/plans/new/", {**form, "setting": "mono", "practice_items": "0 999"})
    assert bad.status_code == 200
    errors = bad.context["form"].errors
    assert "setting" in errors and "999" in errors["practice_items"][0]
    assert not TestPlan.objects.exists()
    created = client.post("/test/plans/new/", form)
    plan = TestPlan.objects.get()
    assert created.url == f"/test/plans/{plan.pk}/"
    assert plan.practice_items == ["0", "1"] and list(plan.testers.all()) == [tester]
    client.logout()
    logged_in(client, tester)
    assert "Paper replication" in client.get("/").content.decode()


def test_deleting_a_plan_takes_its_human_rows_out_of_the_report(
    trance_dataset, django_capture_on_commit_callbacks
):
    tester = make_user("alice", "tester")
    plan = make_plan(trance_dataset, tester, items_per_tester=2)
    with django_capture_on_commit_callbacks(execute=True):
        answer_all(plan, tester, right_answer, CLIENT)
    assert [row.label for row in report_table(trance_dataset).rows] == ["Human"]
    plan.delete()
    assert report_table(trance_dataset).rows == []
    assert not trance_dataset.submissions.exists()


def test_a_second_plan_with_the_same_row_label_is_refused(trance_dataset, client):
    researcher = make_user("rita", "researcher")
    tester = make_user("tom", "tester")
    make_plan(trance_dataset, tester, row_label="Human")
    logged_in(client, researcher)
    form = {
        "name": "Second",
        "dataset": trance_dataset.pk,
        "setting": "event",
        "row_label": "Human",
        "items_per_tester": 5,
        "draw": "random",
        "seed": 0,
        "testers": [tester.pk],
    }
    response = client.post("/test/plans/new/", form)
    assert "row_label" in response.context["form"].errors
    assert client.post("/test/plans/new/", {**form, "row_label": "Human (novices)"}).status_code == 302


def test_the_pooled_row_is_rescored_once_per_waiting_period_not_after_every_answer(
    trance_dataset, django_capture_on_commit_callbacks
):
    from django.core.cache import cache

    from humantest.rescoring import pooled_key

    tester = make_user("alice", "tester")
    plan = make_plan(trance_dataset, tester, items_per_tester=2)
    session = sessions.begin_test(sessions.start_session(plan, tester))
    cache.add(pooled_key(plan.pk), 1)  # a re-scoring is already waiting
    with django_capture_on_commit_callbacks(execute=True):
        trial, _ = clock.serve_current_trial(session)
        answers.record_answer(trial.pk, tester, {"steps": steps_of(trial.item)}, {})
    plan.refresh_from_db()
    session.submission.refresh_from_db()
    assert plan.pooled_submission.scored_at is None  # not scored yet: the waiting run will do it
    assert session.submission.summary["n"] == 1  # the tester's own row is always fresh
    cache.delete(pooled_key(plan.pk))  # the waiting run has started
    with django_capture_on_commit_callbacks(execute=True):
        trial, _ = clock.serve_current_trial(session)
        answers.record_answer(trial.pk, tester, {"steps": steps_of(trial.item)}, {})
    plan.refresh_from_db()
    assert plan.pooled_submission.summary["n"] == 2


def test_a_plan_can_be_started_again_from_a_copy(trance_dataset, client):
    researcher = make_user("rita", "researcher")
    tester = make_user("tom", "tester")
    plan = make_plan(trance_dataset, tester, practice_items=["0", "1"], time_limit_s=75, balance_by="length")
    logged_in(client, researcher)
    assert f"/test/plans/new/?from={plan.pk}" in client.get(f"/test/plans/{plan.pk}/").content.decode()
    page = client.get(f"/test/plans/new/?from={plan.pk}")
    html = page.content.decode()
    assert 'value="Event test (copy)"' in html and "0, 1" in html and 'value="75"' in html
    form = page.context["form"]
    assert form.initial["row_label"] == "" and list(form.initial["testers"]) == [tester]


def test_deleting_the_submissions_a_live_test_writes_to_loses_no_answer(
    trance_dataset, client, django_capture_on_commit_callbacks
):
    tester = make_user("alice", "tester")
    api = APIClient()
    api.force_authenticate(make_user("ada", "admin"))  # only an admin deletes others' submissions
    plan = make_plan(trance_dataset, tester, items_per_tester=3)
    session = sessions.begin_test(sessions.start_session(plan, tester))
    logged_in(client, tester)

    def answer_next():
        trial, _ = clock.serve_current_trial(session)
        with django_capture_on_commit_callbacks(execute=True):
            response = client.post(
                f"/test/trials/{trial.pk}/answer/",
                {"answer": {"steps": steps_of(trial.item)}},
                content_type="application/json",
            )
        assert response.status_code == 200, response.content
        return trial

    answered = [answer_next()]
    # A researcher deletes the tester's own submission while the test goes on.
    assert api.delete(f"/api/v1/submissions/{session.submission_id}/").status_code == 204
    answered.append(answer_next())  # this answer used to be a 500
    session.refresh_from_db()
    rebuilt = session.submission
    assert rebuilt.origin == Submission.Origin.TEST_SESSION
    assert sorted(rebuilt.predictions.values_list("item_id", flat=True)) == sorted(
        t.item_id for t in answered
    )
    assert rebuilt.summary["n"] == 2

    # And the plan's pooled row: the next answer makes it again, with the tester in it.
    plan.refresh_from_db()
    assert api.delete(f"/api/v1/submissions/{plan.pooled_submission_id}/").status_code == 204
    answered.append(answer_next())
    plan.refresh_from_db()
    assert plan.pooled_submission.summary["n"] == 3
    assert list(plan.pooled_submission.members.all()) == [rebuilt]
    human = report_table(trance_dataset).rows[-1]
    assert human.label == "Human" and max(cell.n for cell in human.cells) == 3


def test_a_view_plan_reports_the_testers_seconds_per_final_camera(trance_dataset):
    """The time a trial took reaches the metric (`unit_for`), so a View plan's Human row has its
    seconds per trial for each final camera in the by-camera table."""
    from humantest.scoring import rescore_plan

    tester = make_user("tester1", "tester")
    plan = make_plan(trance_dataset, tester, setting="view", items_per_tester=6, balance_by="camera")
    session = answer_all(plan, tester)
    # Each trial took 10 s from the left camera, 20 s from the centre and 40 s from the right.
    took = {"Camera_Left": 10, "Camera_Center": 20, "Camera_Right": 40}
    for trial in Trial.objects.filter(session=session, phase=Trial.Phase.TEST):
        trial.served_at = trial.answered_at - timedelta(seconds=took[trial.context["camera"]])
        trial.save(update_fields=["served_at"])
    rescore_plan(plan)
    plan.refresh_from_db()
    by_camera = plan.pooled_submission.summary["by_camera"]
    assert {camera: by_camera[camera]["seconds"] for camera in took} == pytest.approx(took)
    table = report_table(trance_dataset, diagnostic=trance_dataset.spec.diagnostic("by-camera"))
    seconds = {
        column.summary_path[1]: cell
        for column, cell in zip(table.columns, table.rows[-1].cells, strict=True)
        if column.summary_path[-1] == "seconds"
    }
    assert table.rows[-1].label == "Human"
    assert {camera: (cell.value, cell.n) for camera, cell in seconds.items()} == {
        camera: (pytest.approx(value), 2) for camera, value in took.items()
    }


def test_a_rotated_view_plan_shows_each_item_under_all_three_cameras_across_testers(trance_dataset):
    """Balanced by rotation, three testers in turn see every item of a fixed list from the left,
    the centre and the right, and the Human row is scored as the released View protocol scores
    a sample: once per final camera."""
    testers = [make_user(f"tester{number}", "tester") for number in range(3)]
    items = ["1", "2", "3", "4"]
    plan = make_plan(
        trance_dataset,
        *testers,
        setting="view",
        draw="fixed",
        fixed_items=items,
        balance_by="camera_rotation",
    )
    for tester in testers:
        answer_all(plan, tester)
    shown = Counter(
        (trial.item.external_id, trial.context["camera"])
        for trial in Trial.objects.filter(session__plan=plan, phase=Trial.Phase.TEST).select_related("item")
    )
    assert shown == {
        (item, camera): 1 for item in items for camera in ("Camera_Left", "Camera_Center", "Camera_Right")
    }
    from humantest.scoring import rescore_plan

    summary = rescore_plan(plan).summary
    assert summary["n"] == 12 and summary["Acc"] == 1.0
    assert {camera: group["n"] for camera, group in summary["by_camera"].items()} == {
        "Camera_Left": 4,
        "Camera_Center": 4,
        "Camera_Right": 4,
    }
