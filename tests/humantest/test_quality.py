"""Quality control of human baselines (issue 27): qualification on practice, catch trials, exclusion
rules stated before data and versioned after, results with and without exclusions.

The simulated studies plant careless testers (random answers, very fast, tab hidden) among careful
ones and check that the rules exclude exactly them, that catch trials never reach a score, and that
the pooled row with exclusions differs from the all-testers row as the planted answers say.
"""

from __future__ import annotations

import csv
import io
import re
from datetime import timedelta

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from evaluation.models import Prediction, Submission
from evaluation.selectors import report_table
from humantest import answers, clock, drawing, exclusions, qualification, scoring, sessions
from humantest.models import ExclusionRules, TestPlan, TestSession, Trial
from humantest.plans import PlanRefused, create_test_plan
from tests.factories import PASSWORD, make_user, steps_of, wrong_steps_of

pytestmark = pytest.mark.django_db


def ids(dataset, count, *, skip=0):
    return list(dataset.items.order_by("position").values_list("external_id", flat=True)[skip : skip + count])


def make_quality_plan(dataset, testers, **fields):
    values = {
        "dataset": dataset,
        "name": "Careful test",
        "setting": "event",
        "items_per_tester": 4,
        "seed": 11,
        "practice_items": ids(dataset, 2),
        "catch_items": ids(dataset, 3, skip=2),
        "catch_count": 2,
        **fields,
    }
    return create_test_plan(created_by=make_user("rita", "researcher"), testers=testers, **values)


def answer(trial, tester, *, right: bool, seconds: float, hidden_s: float = 0.0):
    """Answer an open trial after `seconds` on the server's clock (the trial's start is moved back,
    as if the tester had looked that long), hidden `hidden_s` of them."""
    Trial.objects.filter(pk=trial.pk).update(served_at=timezone.now() - timedelta(seconds=seconds))
    events = []
    if hidden_s:
        events = [{"type": "hidden", "t": 100.0}, {"type": "visible", "t": 100.0 + hidden_s * 1000}]
    client = {"shown_ms": 50.0, "submit_ms": 100.0 + hidden_s * 1000 + 10, "events": events}
    steps = steps_of(trial.item) if right else wrong_steps_of(trial.item)
    return answers.record_answer(trial.pk, tester, {"steps": steps}, client)


def take_test(plan, tester, *, right=True, catch_right=True, seconds=12.0, hidden_s=0.0, stop_after=None):
    session = sessions.start_session(plan, tester)
    if plan.qualify_min_correct is not None:
        practise(session, tester, right=True)
    session = sessions.begin_test(session)
    answered = 0
    while stop_after is None or answered < stop_after:
        trial, _ = clock.serve_current_trial(session)
        if trial is None:
            break
        is_catch = trial.phase == Trial.Phase.CATCH
        answer(
            trial,
            tester,
            right=catch_right if is_catch else right,
            seconds=seconds,
            hidden_s=hidden_s if answered == 0 else 0.0,
        )
        answered += 1
    session.refresh_from_db()
    return session


def practise(session, tester, *, right: bool):
    sessions.start_practice(session)
    while True:
        trial, _ = clock.serve_current_trial(session)
        if trial is None:
            return qualification.settle(session)
        answer(trial, tester, right=right, seconds=5.0)


# --- catch trials ----------------------------------------------------------------------------------


def test_catch_trials_sit_among_the_test_trials_at_seeded_places_and_are_never_measured(trance_dataset):
    alice, bob = make_user("alice", "tester"), make_user("bob", "tester")
    plan = make_quality_plan(trance_dataset, [alice, bob])
    catch_pks = set(
        trance_dataset.items.filter(external_id__in=plan.catch_items).values_list("pk", flat=True)
    )

    session = sessions.start_session(plan, alice)
    trials = list(session.trials.filter(phase__in=Trial.SEQUENCE).order_by("position"))
    assert [trial.position for trial in trials] == list(range(6))  # one sequence of 4 + 2
    catches = [trial for trial in trials if trial.phase == Trial.Phase.CATCH]
    assert len(catches) == 2 and {trial.item_id for trial in catches} <= catch_pks
    measured = [trial for trial in trials if trial.phase == Trial.Phase.TEST]
    assert not {trial.item_id for trial in measured} & catch_pks  # a catch item is never measured
    # The same tester gets the same places again; the places are not fixed for everyone.
    again = drawing.catch_units(plan, alice, drawing.draw_units(plan, alice))
    assert [unit[0] for unit in again] == [trial.position for trial in catches]
    places = {
        tuple(
            unit[0]
            for unit in drawing.catch_units(
                plan, make_user(f"t{n}", "tester"), drawing.draw_units(plan, alice)
            )
        )
        for n in range(8)
    }
    assert len(places) > 1


def test_a_catch_trial_looks_like_any_other_trial_to_the_tester(trance_dataset, client):
    alice = make_user("alice", "tester")
    plan = make_quality_plan(trance_dataset, [alice], catch_count=3)
    session = sessions.begin_test(sessions.start_session(plan, alice))
    assert client.login(username="alice", password=PASSWORD)
    seen = []
    shapes = set()  # the page's elements, by id: the same on every trial
    while True:
        page = client.get(f"/test/sessions/{session.pk}/")
        trial = page.context.get("trial") if page.context else None
        if trial is None:
            break
        seen.append(
            (trial.phase, page.context["count"], page.context["data"]["practice"], page.context["number"])
        )
        shapes.add(frozenset(re.findall(r'id="([^"]+)"', page.content.decode())))
        response = client.post(
            f"/test/trials/{trial.pk}/answer/",
            {"answer": {"steps": steps_of(trial.item)}, "client": {"shown_ms": 1.0, "events": []}},
            content_type="application/json",
        )
        assert response.status_code == 200
        assert set(response.json()) == {"status", "answer", "truth", "why", "figures", "result", "guidance"}
    assert sorted(phase for phase, *_ in seen) == ["catch"] * 3 + ["test"] * 4
    # Every trial says "n of 7", none says practice: nothing tells a catch trial apart.
    assert {(count, practice) for _, count, practice, _ in seen} == {(7, False)}
    assert [number for *_, number in seen] == list(range(1, 8))
    assert len(shapes) == 1 and "pause" in next(iter(shapes))


def test_catch_items_cannot_be_measured_or_practice_items_and_need_enough_items(trance_dataset):
    researcher = make_user("rita", "researcher")
    practice = ids(trance_dataset, 2)
    with pytest.raises(PlanRefused) as refused:
        create_test_plan(
            created_by=researcher, dataset=trance_dataset, name="x", setting="event",
            practice_items=practice, catch_items=[practice[0]], catch_count=1,
        )  # fmt: skip
    assert "catch_items" in refused.value.problems
    with pytest.raises(PlanRefused) as refused:
        create_test_plan(
            created_by=researcher, dataset=trance_dataset, name="x", setting="event",
            catch_items=ids(trance_dataset, 1), catch_count=2,
        )  # fmt: skip
    assert "at least 2 catch items" in refused.value.problems["catch_count"]
    assert not TestPlan.objects.exists()


def test_catch_items_can_be_drawn_from_items_every_tester_answered_right(trance_dataset):
    testers = [make_user(f"t{n}", "tester") for n in range(4)]
    plan = create_test_plan(
        created_by=make_user("rita", "researcher"), testers=testers, dataset=trance_dataset, name="easy",
        setting="event", draw=TestPlan.Draw.FIXED, fixed_items=ids(trance_dataset, 3),
        catch_count=1, catch_from_easy=True,
    )  # fmt: skip
    assert drawing.easy_units(plan) == []
    first = sessions.start_session(plan, testers[0])
    assert not first.trials.filter(phase=Trial.Phase.CATCH).exists()  # none known yet: none given
    take_test(plan, testers[0])
    take_test(plan, testers[1])
    assert len(drawing.easy_units(plan)) == 3  # both answered all three right
    # A fixed draw gives everyone the same items: none is left to be a catch trial for them.
    assert not sessions.start_session(plan, testers[2]).trials.filter(phase=Trial.Phase.CATCH).exists()


# --- qualification ---------------------------------------------------------------------------------


def test_a_tester_who_fails_qualification_is_screened_out_and_counted(trance_dataset, client):
    alice, bob = make_user("alice", "tester"), make_user("bob", "tester")
    plan = make_quality_plan(trance_dataset, [alice, bob], qualify_min_correct=2, qualify_rounds=2)
    session = sessions.start_session(plan, alice)
    with pytest.raises(sessions.TrialClosed):
        sessions.begin_test(session)  # not before qualifying
    standing = practise(session, alice, right=False)
    assert (standing.last.correct, standing.rounds_left, standing.failed) == (0, 1, False)
    session.refresh_from_db()
    assert session.status == TestSession.Status.PRACTICE
    standing = practise(session, alice, right=False)
    session.refresh_from_db()
    assert standing.failed and session.status == TestSession.Status.SCREENED_OUT
    assert session.screened_out_at is not None
    with pytest.raises(sessions.TrialClosed):
        sessions.start_practice(session)
    assert client.login(username="alice", password=PASSWORD)
    page = client.get(f"/test/sessions/{session.pk}/").content.decode()
    assert "did not reach the score this test needs" in page
    assert client.post(f"/test/sessions/{session.pk}/begin/").status_code == 302
    session.refresh_from_db()
    assert session.status == TestSession.Status.SCREENED_OUT and session.started_at is None

    bob_session = take_test(plan, bob)
    assert bob_session.status == TestSession.Status.FINISHED
    quality = exclusions.plan_quality(plan)
    assert quality["current"]["screened_out"] == 1 and quality["current"]["measured"] == 1


def test_a_participant_who_fails_qualification_gets_the_screen_out_code(trance_dataset):
    from humantest import studies
    from humantest.models import Participant

    plan = make_quality_plan(trance_dataset, [], qualify_min_correct=2)
    studies.update_study(plan, screen_out_code="SCREENED1", screen_out_url="https://example.org/out")
    link = studies.open_link(plan, "prolific", created_by=plan.created_by)
    arrival = studies.read_arrival(link, {"PROLIFIC_PID": "p1", "STUDY_ID": "s", "SESSION_ID": "a"})
    participant = studies.arrive(link, arrival)
    session = participant.session or sessions.start_session(plan, participant.user)
    practise(session, participant.user, right=False)
    participant.refresh_from_db()
    assert participant.status == Participant.Status.SCREENED_OUT
    ending = studies.ending(participant)
    assert (ending.kind, ending.code, ending.url) == ("screened_out", "SCREENED1", "https://example.org/out")


# --- exclusion rules, a simulated study ------------------------------------------------------------


PLANTED = {
    # tester: (answers right, catch answers right, seconds per trial, seconds hidden)
    "careful1": (True, True, 14.0, 0.0),
    "careful2": (True, True, 9.0, 2.0),
    "random": (False, False, 11.0, 0.0),
    "speedy": (True, True, 0.6, 0.0),
    "away": (True, True, 10.0, 300.0),
}
RULES = {"catch_failures": 1, "min_median_s": 2.0, "max_hidden_s": 60.0, "max_focus_losses": None}


def simulated_study(dataset, django_capture_on_commit_callbacks):
    testers = {name: make_user(name, "tester") for name in [*PLANTED, "quitter"]}
    plan = make_quality_plan(dataset, list(testers.values()))
    exclusions.save_rules(plan, {**RULES, "exclude_unfinished": True})
    with django_capture_on_commit_callbacks(execute=True):
        for name, (right, catch_right, seconds, hidden) in PLANTED.items():
            take_test(
                plan, testers[name], right=right, catch_right=catch_right, seconds=seconds, hidden_s=hidden
            )
        take_test(plan, testers["quitter"], stop_after=2)
    scoring.rescore_plan(plan)
    plan.refresh_from_db()
    return plan


def test_the_rules_exclude_exactly_the_planted_careless_testers(
    trance_dataset, django_capture_on_commit_callbacks
):
    plan = simulated_study(trance_dataset, django_capture_on_commit_callbacks)
    outcomes = {
        outcome.facts.tester: outcome for outcome in exclusions.plan_quality(plan)["current"]["outcomes"]
    }
    assert {name: outcome.reasons for name, outcome in outcomes.items()} == {
        "careful1": [],
        "careful2": [],
        "random": ["catch_failures"],
        "speedy": ["min_median_s"],
        "away": ["max_hidden_s"],
        "quitter": ["exclude_unfinished"],
    }
    assert outcomes["random"].facts.catch_failed == 2 and outcomes["careful2"].facts.catch_failed == 0
    assert outcomes["away"].facts.hidden_s == pytest.approx(300.0)
    summary = exclusions.plan_quality(plan)["current"]
    assert (summary["measured"], summary["kept"], summary["excluded"]) == (6, 2, 4)
    assert summary["exclusion_rate"] == pytest.approx(4 / 6)


def test_catch_trials_never_reach_a_score_and_the_rows_with_and_without_exclusions_differ(
    trance_dataset, django_capture_on_commit_callbacks
):
    plan = simulated_study(trance_dataset, django_capture_on_commit_callbacks)
    catch_pks = set(
        trance_dataset.items.filter(external_id__in=plan.catch_items).values_list("pk", flat=True)
    )
    human = Prediction.objects.filter(submission__test_session__plan=plan)
    quitter = Trial.objects.filter(session__tester__username="quitter", phase="test", status="answered")
    assert human.count() == 5 * 4 + quitter.count()  # measured trials only, never a catch trial
    assert not human.filter(item_id__in=catch_pks).exists()
    kept = plan.pooled_submission
    everyone = plan.all_testers_submission
    assert kept.name == "Human (exclusion rules v1)" and everyone.name == "Human (all testers)"
    assert kept.summary["n"] == 8  # careful1 and careful2, 4 measured trials each
    assert kept.summary["Acc"] == pytest.approx(1.0)
    # Everyone measured: 5 finished testers x 4 + the quitter's measured answers; "random" got all wrong.
    assert everyone.summary["n"] == human.count()
    assert everyone.summary["Acc"] < kept.summary["Acc"]
    members = set(
        Submission.objects.filter(pool=kept).values_list("test_session__tester__username", flat=True)
    )
    assert members == {"careful1", "careful2"}
    labels = [row.label for row in report_table(trance_dataset).rows]
    assert "Human (exclusion rules v1)" in labels and "Human (all testers)" in labels


def test_rules_are_fixed_when_the_first_tester_starts_and_a_change_makes_a_new_version(
    trance_dataset, django_capture_on_commit_callbacks
):
    plan = simulated_study(trance_dataset, django_capture_on_commit_callbacks)
    first = exclusions.current_rules(plan)
    assert first.version == 1 and first.fixed_at is not None
    exclusions.save_rules(plan, {**RULES, "min_median_s": 10.0, "exclude_unfinished": True})
    versions = exclusions.plan_quality(plan)["versions"]
    assert [version["version"] for version in versions] == [2, 1]
    assert [version["before_data"] for version in versions] == [False, True]
    assert versions[1]["kept"] == 2  # version 1's numbers are kept
    assert versions[0]["kept"] == 1  # careful2's 9 s median is now too fast
    assert ExclusionRules.objects.get(plan=plan, version=1).min_median_s == 2.0
    scoring.rescore_plan(plan)
    plan.refresh_from_db()
    assert plan.pooled_submission.name == "Human (exclusion rules v2)"
    assert plan.pooled_submission.summary["n"] == 4


def test_rules_before_anyone_starts_change_in_place(trance_dataset):
    plan = make_quality_plan(trance_dataset, [make_user("alice", "tester")])
    exclusions.save_rules(plan, {"catch_failures": 2})
    exclusions.save_rules(plan, {"catch_failures": 1})
    assert list(plan.exclusion_rules.values_list("version", "catch_failures", "fixed_at")) == [(1, 1, None)]


@pytest.mark.parametrize(
    ("raw", "field"),
    [
        ({"catch_failures": 0}, "catch_failures"),
        ({"catch_failures": 1.5}, "catch_failures"),
        ({"min_median_s": "fast"}, "min_median_s"),
        ({"min_median_s": float("nan")}, "min_median_s"),
        ({"max_hidden_s": -1}, "max_hidden_s"),
        ({"max_focus_losses": True}, "max_focus_losses"),
        ({"exclude_unfinished": "maybe"}, "exclude_unfinished"),
        ({"min_median": 3}, "min_median"),
    ],
)
def test_bad_rules_are_refused_naming_the_field_and_change_nothing(trance_dataset, raw, field):
    plan = make_quality_plan(trance_dataset, [])
    exclusions.save_rules(plan, {"catch_failures": 2})
    with pytest.raises(exclusions.RulesRefused) as refused:
        exclusions.save_rules(plan, raw)
    assert refused.value.field == field
    assert list(plan.exclusion_rules.values_list("catch_failures", "min_median_s")) == [(2, None)]


# --- pages, exports and the API --------------------------------------------------------------------


def test_the_quality_page_shows_who_is_excluded_and_why_and_exports_it(
    trance_dataset, client, django_capture_on_commit_callbacks
):
    plan = simulated_study(trance_dataset, django_capture_on_commit_callbacks)
    assert client.login(username="rita", password=PASSWORD)
    page = client.get(f"/test/plans/{plan.pk}/quality/")
    assert page.status_code == 200
    html = page.content.decode()
    assert 'data-tester="speedy"' in html and "too fast (median seconds per trial)" in html
    assert "Human (exclusion rules v1)" in html and "<svg" in html and "2 s" in html
    rows = {
        row["tester"]: row
        for row in csv.DictReader(
            io.StringIO(client.get(f"/test/plans/{plan.pk}/quality/testers.csv").content.decode())
        )
    }
    assert rows["away"]["status"] == "excluded" and rows["away"]["reasons"] == "max_hidden_s"
    assert rows["careful1"]["status"] == "kept" and rows["careful1"]["accuracy"] == "1.0"
    assert float(rows["careful1"]["accuracy_low"]) < 1.0
    trials = list(
        csv.DictReader(io.StringIO(client.get(f"/test/plans/{plan.pk}/trials.csv").content.decode()))
    )
    assert {row["phase"] for row in trials if row["tester"] == "random"} == {"test", "catch"}
    assert {
        (row["tester_status"], row["exclusion_reasons"]) for row in trials if row["tester"] == "speedy"
    } == {("excluded", "min_median_s")}
    assert sum(1 for row in trials if row["tester"] == "careful1" and row["phase"] == "catch") == 2
    # Changing the rules on the page: a new version, the old one's row stays.
    response = client.post(
        f"/test/plans/{plan.pk}/quality/",
        {"catch_failures": "1", "min_median_s": "", "max_hidden_s": "", "exclude_unfinished": "on"},
        follow=True,
    )
    assert "Saved as version 2" in response.content.decode()
    assert 'id="version-1"' in response.content.decode()
    refused = client.post(f"/test/plans/{plan.pk}/quality/", {"catch_failures": "lots"}, follow=True)
    assert "Nothing changed: catch_failures" in refused.content.decode()
    assert plan.exclusion_rules.count() == 2


def test_only_the_plans_maker_or_an_admin_changes_its_rules(trance_dataset, client):
    plan = make_quality_plan(trance_dataset, [])
    make_user("rob", "researcher")
    assert client.login(username="rob", password=PASSWORD)
    assert client.post(f"/test/plans/{plan.pk}/quality/", {"catch_failures": "1"}).status_code in (403, 404)
    api = APIClient()
    api.login(username="rob", password=PASSWORD)
    assert api.put(
        f"/api/v1/test-plans/{plan.pk}/exclusions/", {"catch_failures": 1}, format="json"
    ).status_code in (403, 404)
    assert not plan.exclusion_rules.exists()
    make_user("tess", "tester")
    assert client.login(username="tess", password=PASSWORD)
    assert client.get(f"/test/plans/{plan.pk}/quality/").status_code == 403


def test_the_api_states_rules_and_reports_each_testers_outcome(
    trance_dataset, django_capture_on_commit_callbacks
):
    plan = simulated_study(trance_dataset, django_capture_on_commit_callbacks)
    api = APIClient()
    api.login(username="rita", password=PASSWORD)
    body = api.get(f"/api/v1/test-plans/{plan.pk}/exclusions/").json()
    testers = {row["tester"]: row for row in body["current"]["testers"]}
    assert testers["random"]["reasons"] == ["catch_failures"] and testers["careful1"]["status"] == "kept"
    assert body["current"]["exclusion_rate"] == pytest.approx(4 / 6)
    refused = api.put(f"/api/v1/test-plans/{plan.pk}/exclusions/", {"max_hidden_s": "NaN"}, format="json")
    assert refused.status_code == 400 and "max_hidden_s" in refused.json()
    done = api.put(f"/api/v1/test-plans/{plan.pk}/exclusions/", {"catch_failures": 3}, format="json")
    assert done.status_code == 200 and [v["version"] for v in done.json()["versions"]] == [2, 1]


# --- stopping for precision ------------------------------------------------------------------------


def prolific_finisher(plan, link, number: int):
    from humantest import studies

    arrival = studies.read_arrival(
        link, {"PROLIFIC_PID": f"pid{number}", "STUDY_ID": "s", "SESSION_ID": f"a{number}"}
    )
    participant = studies.arrive(link, arrival)
    session = participant.session or sessions.start_session(plan, participant.user)
    take_test(plan, participant.user) if session.status == TestSession.Status.BRIEF else None
    return participant


def test_a_study_stops_taking_participants_once_the_planned_number_finished(
    trance_dataset, django_capture_on_commit_callbacks
):
    from humantest import studies
    from humantest.models import Participant

    plan = make_quality_plan(trance_dataset, [])
    studies.update_study(plan, planned_participants=2)
    link = studies.open_link(plan, "prolific", created_by=plan.created_by)
    with django_capture_on_commit_callbacks(execute=True):
        prolific_finisher(plan, link, 1)
    scoring.rescore_plan(plan)
    assert studies.study_for(plan).stopped_at is None
    with django_capture_on_commit_callbacks(execute=True):
        prolific_finisher(plan, link, 2)
    scoring.rescore_plan(plan)
    study = studies.study_for(plan)
    assert study.stopped_at is not None and "2 kept participants finished" in study.stopped_because
    with pytest.raises(studies.StudyRefused) as refused:
        studies.arrive(
            link, studies.read_arrival(link, {"PROLIFIC_PID": "late", "STUDY_ID": "s", "SESSION_ID": "x"})
        )
    assert refused.value.code == "full" and not Participant.objects.filter(external_id="late").exists()
    # Planning more opens the study again until the new number is reached.
    studies.update_study(plan, planned_participants=3)
    assert studies.study_for(plan).stopped_at is None
    assert studies.arrive(
        link, studies.read_arrival(link, {"PROLIFIC_PID": "late", "STUDY_ID": "s", "SESSION_ID": "x"})
    )


def test_a_study_stops_once_the_paired_interval_with_a_model_is_narrow_enough(
    trance_dataset, trance_files, django_capture_on_commit_callbacks, monkeypatch
):
    import json

    from evaluation.selectors import compare_report_rows
    from evaluation.services import submit_predictions
    from humantest import studies

    samples = [json.loads(line) for line in (trance_files / "data.jsonl").read_text().splitlines()]
    half = {
        str(s["idx"]): [{k: step[k] for k in ("obj_idx", "attr", "val")} for step in s["transformations"]]
        if s["idx"] % 2
        else []
        for s in samples
    }
    submit_predictions(dataset=trance_dataset, name="Half", setting="event", data=json.dumps(half).encode())
    plan = make_quality_plan(trance_dataset, [])
    with pytest.raises(studies.StudyRefused) as refused:
        studies.update_study(plan, stop_against="No such model", stop_width=0.2)
    assert refused.value.field == "stop_against"
    with pytest.raises(studies.StudyRefused) as refused:
        studies.update_study(plan, stop_against="Half", stop_width="nan")
    assert refused.value.field == "stop_width"
    with pytest.raises(studies.StudyRefused) as refused:
        studies.update_study(plan, stop_against="Half", stop_metric="ObjAcc", stop_width=0.2)
    assert refused.value.field == "stop_metric"  # a Basic column, not this Event plan's
    studies.update_study(plan, stop_against="Half", stop_metric="Acc", stop_width=0.01)
    link = studies.open_link(plan, "prolific", created_by=plan.created_by)
    with django_capture_on_commit_callbacks(execute=True):
        for number in range(3):
            prolific_finisher(plan, link, number)
    scoring.rescore_plan(plan)
    plan.refresh_from_db()
    study = studies.study_for(plan)
    # Three participants answered 7 distinct units (12 samples, 2 of them practice and 3 catch):
    # too few for an interval, so there is no width to stop on yet, and the study says why.
    assert study.precision_width is None and "too few shared units" in study.precision_note
    assert study.stopped_at is None
    # With the minimum lowered, the width is the paired interval's, and the rule applies.
    monkeypatch.setattr("evaluation.comparison.MIN_UNITS", 3)
    scoring.rescore_plan(plan)
    study.refresh_from_db()
    compared = compare_report_rows(
        trance_dataset, plan.pooled_submission.name, "Half", metric="Acc", resamples=1000
    )
    column = next(c for c in compared["columns"] if c["setting"] == "event")
    assert study.precision_width == pytest.approx(column["high"] - column["low"])
    assert study.stopped_at is None  # seven shared units are far from a 0.01-wide interval
    # A width the interval already meets stops the study at the next check.
    studies.update_study(plan, stop_width=round(study.precision_width + 0.01, 3))
    scoring.rescore_plan(plan)
    study.refresh_from_db()
    assert study.stopped_at is not None and "Half" in study.stopped_because
