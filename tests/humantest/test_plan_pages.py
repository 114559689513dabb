"""What researchers and testers see on the human-test pages: deleting a plan (what it takes with
it), the plan form's settings and balancing (the chosen dataset's benchmark's only), and the
tester's history (newest first, settings by their labels)."""

import re
from datetime import timedelta
from functools import partial

import pytest
from django.contrib.auth.models import Group
from django.utils import timezone

from evaluation.models import Submission
from evaluation.selectors import report_table
from humantest import answers, clock, forms, sessions
from humantest.models import TestPlan, TestSession, Trial
from tests import factories
from tests.factories import answer_all, logged_in, make_user, steps_of

pytestmark = pytest.mark.django_db


make_plan = partial(factories.make_plan, items_per_tester=2)


def text(response) -> str:
    """The page's text, tags dropped and white space squeezed: what a reader sees."""
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", response.content.decode()))


# --- deleting a plan -----------------------------------------------------------------------------------


def test_deleting_a_plan_asks_first_then_takes_its_rows_off_the_report(
    trance_dataset, client, django_capture_on_commit_callbacks
):
    researcher = make_user("rita", "researcher")
    alice, bob = make_user("alice", "tester"), make_user("bob", "tester")
    plan = make_plan(trance_dataset, alice, bob, row_label="Human", created_by=researcher)
    kept = make_plan(
        trance_dataset,
        alice,
        name="Basic test",
        setting="basic",
        items_per_tester=1,
        row_label="Human (basic)",
    )
    with django_capture_on_commit_callbacks(execute=True):
        answer_all(plan, alice)
        answer_all(kept, alice)
        sessions.begin_test(sessions.start_session(plan, bob))  # bob is half-way
    assert sorted(row.label for row in report_table(trance_dataset).rows) == ["Human", "Human (basic)"]
    # Another researcher reads the plan, but only who made it (or an admin) deletes it.
    logged_in(client, make_user("rex", "researcher"))
    assert "/delete/" not in client.get(f"/test/plans/{plan.pk}/").content.decode()
    refused = client.post(f"/test/plans/{plan.pk}/delete/")
    assert refused.status_code == 403 and "(rita), or an admin" in refused.content.decode()
    assert TestPlan.objects.filter(pk=plan.pk).exists()
    logged_in(client, researcher)

    page = client.get(f"/test/plans/{plan.pk}/")
    assert f'href="/test/plans/{plan.pk}/delete/"' in page.content.decode()

    # The confirmation says what goes with the plan, and deletes nothing.
    confirm = client.get(f"/test/plans/{plan.pk}/delete/")
    assert confirm.status_code == 200
    shown = text(confirm)
    assert "Delete the test plan “Event test”?" in shown
    assert "2 tester sessions (alice, bob)" in shown
    assert "4 trials, 2 of them answered or timed out test trials" in shown
    assert "each tester’s own row" in shown and "“Human · alice”" in shown
    assert f"the pooled row “Human” on {trance_dataset}’s report" in shown
    assert "Still taking this test: bob" in shown
    assert "cannot be undone" in shown
    assert TestPlan.objects.filter(pk=plan.pk).exists()

    deleted = client.post(f"/test/plans/{plan.pk}/delete/", follow=True)
    assert deleted.redirect_chain == [("/test/plans/", 302)]
    message = text(deleted)
    assert "Test plan “Event test” deleted with 2 tester sessions and 4 trials" in message
    assert f"its row “Human” is gone from {trance_dataset}’s report" in message
    assert not TestPlan.objects.filter(pk=plan.pk).exists()
    assert not TestSession.objects.filter(plan_id=plan.pk).exists()
    assert not Trial.objects.filter(session__plan_id=plan.pk).exists()
    # Its rows are gone from the report; the other plan's row stays.
    report = client.get(f"/datasets/{trance_dataset.pk}/report/")
    assert [row.label for row in report.context["table"].rows] == ["Human (basic)"]
    kept.refresh_from_db()
    assert set(Submission.objects.values_list("pk", flat=True)) == {
        kept.pooled_submission_id,
        kept.sessions.get().submission_id,
    }


def test_a_plan_no_one_has_opened_is_deleted_with_nothing_else(trance_dataset, client):
    researcher = make_user("rita", "researcher")
    plan = make_plan(trance_dataset, make_user("tom", "tester"), created_by=researcher)
    logged_in(client, researcher)
    shown = text(client.get(f"/test/plans/{plan.pk}/delete/"))
    assert "no tester session: no tester has opened the test yet" in shown
    assert "no row on" in shown and "Still taking" not in shown
    client.post(f"/test/plans/{plan.pk}/delete/")
    assert not TestPlan.objects.exists()


def test_only_researchers_delete_plans_and_only_by_post(trance_dataset, client):
    tester = make_user("tom", "tester")
    plan = make_plan(trance_dataset, tester)
    url = f"/test/plans/{plan.pk}/delete/"
    logged_in(client, tester)
    assert client.get(url).status_code == 403
    assert client.post(url).status_code == 403
    assert "delete" not in client.get("/test/").content.decode().lower()
    client.logout()

    # The permission is the researcher role's; a role without it sees no link and gets a 403.
    viewer = make_user("vera")
    viewer.user_permissions.add(
        *Group.objects.get(name="researcher").permissions.filter(
            codename__in=["view_testplan", "view_results"]
        )
    )
    logged_in(client, viewer)
    assert client.get(f"/test/plans/{plan.pk}/").status_code == 200
    assert url not in client.get(f"/test/plans/{plan.pk}/").content.decode()
    assert client.post(url).status_code == 403
    client.logout()

    logged_in(client, make_user("rita", "researcher"))
    assert client.put(url).status_code == 405
    assert client.post("/test/plans/999999/delete/").status_code == 404
    assert TestPlan.objects.filter(pk=plan.pk).exists()


# --- the plan form -------------------------------------------------------------------------------------


@pytest.fixture
def cric_dataset(tmp_path):
    import json

    from benchmarks.services import import_dataset
    from plugins.cric.demo import generate_demo

    files = generate_demo(tmp_path / "cric", images=1, seed=4)
    return import_dataset(
        benchmark="cric",
        data=json.dumps(json.loads(files.questions.read_text())).encode(),
        name="cric plan form",
        split="val",
        images_dir=files.images_dir,
        scenes_data=files.scene_graphs.read_bytes(),
        scenes_source=files.scene_graphs.name,
    )


def plan_form(dataset, tester, **changes):
    return {
        "name": "Paper replication",
        "dataset": dataset.pk,
        "setting": "event",
        "row_label": "Human",
        "items_per_tester": 5,
        "draw": "random",
        "seed": 3,
        "balance_by": "length",
        "time_limit_s": 120,
        "testers": [tester.pk],
        **changes,
    }


def test_the_plan_form_marks_each_setting_and_balancing_with_its_benchmark(
    trance_dataset, cric_dataset, client
):
    logged_in(client, make_user("rita", "researcher"))
    html = client.get("/test/plans/new/").content.decode()
    # The datasets name their benchmark, and so does every setting and way to balance.
    assert f'value="{trance_dataset.pk}" data-benchmark="trance"' in html
    assert f'value="{cric_dataset.pk}" data-benchmark="cric"' in html
    setting = re.search(r'<select name="setting".*?</select>', html, re.S).group(0)
    assert re.search(r'<option value="event" data-benchmark="trance">Event</option>', setting)
    assert re.search(r'<option value="" data-benchmark="cric"( selected)?>–</option>', setting)
    balance = re.search(r'<select name="balance_by".*?</select>', html, re.S).group(0)
    assert '<option value="" selected>No balancing</option>' in balance
    assert '<optgroup label="TRANCE">' in balance and '<optgroup label="CRIC">' in balance
    assert '<option value="length" data-benchmark="trance">Number of transformations</option>' in balance
    assert (
        '<option value="camera" data-benchmark="trance" data-setting="view">Final camera (View)</option>'
        in balance
    )
    assert '<option value="question_type" data-benchmark="cric">Question type</option>' in balance
    assert "humantest/plan_form.js" in html  # the script that shows the chosen benchmark's only


def test_another_benchmarks_balancing_or_setting_is_refused_saying_what_to_choose(
    trance_dataset, cric_dataset, client
):
    tester = make_user("tom", "tester")
    logged_in(client, make_user("rita", "researcher"))
    refused = client.post("/test/plans/new/", plan_form(trance_dataset, tester, balance_by="question_type"))
    errors = refused.context["form"].errors
    assert list(errors) == ["balance_by"]
    assert errors["balance_by"] == [
        "TRANCE items can be balanced by “Number of transformations” ('length'): choose one of them or "
        "“No balancing”, not 'question_type'"
    ]
    assert "choose one of them or “No balancing”" in text(refused)

    refused = client.post("/test/plans/new/", plan_form(trance_dataset, tester, balance_by="camera"))
    assert refused.context["form"].errors["balance_by"] == [
        "balancing by “Final camera (View)” needs the setting “View” ('view'): choose that setting, "
        "or another balancing"
    ]
    refused = client.post("/test/plans/new/", plan_form(trance_dataset, tester, setting="", balance_by=""))
    assert refused.context["form"].errors["setting"] == [
        "TRANCE needs a setting: choose “Basic” ('basic'), “Event” ('event') or “View” ('view')"
    ]
    refused = client.post(
        "/test/plans/new/", plan_form(cric_dataset, tester, setting="event", balance_by="length")
    )
    errors = refused.context["form"].errors
    assert errors["setting"] == ["CRIC has no settings: choose “–” (no setting), not 'event'"]
    assert errors["balance_by"] == [
        "CRIC items can be balanced by “Question type” ('question_type'): choose one of them or "
        "“No balancing”, not 'length'"
    ]
    assert not TestPlan.objects.exists()

    created = client.post(
        "/test/plans/new/", plan_form(cric_dataset, tester, setting="", balance_by="question_type")
    )
    assert created.status_code == 302
    assert TestPlan.objects.get().balance_by == "question_type"


def test_settings_people_are_not_tested_in_are_refused_with_what_to_choose():
    from benchmarks import registry
    from humantest.trials import trial_for

    assert trial_for("stevqa").setting_problem("mono") == (
        "people are tested on STE-VQA without a setting: choose “–” (no setting), not “monolingual” ('mono')"
    )
    # People are tested in every TRANCE setting: the benchmark's own refusal.
    assert trial_for("trance").setting_problem("mono") == registry.get("trance").setting_problem("mono")
    assert "choose one of them, not 'mono'" in trial_for("trance").setting_problem("mono")
    assert trial_for("trance").setting_problem("view") is None
    assert registry.get("cric").trial and trial_for("cric").setting_problem("") is None


def test_the_form_offers_each_benchmark_its_own_settings_only(trance_dataset):
    form = forms.TestPlanForm(user=make_user("rita", "researcher"))
    groups = dict(form.fields["setting"].choices)
    assert groups["TRANCE"] == [("basic", "Basic"), ("event", "Event"), ("view", "View")]
    assert groups["STE-VQA"] == [("", "–")]  # people answer in both languages
    assert groups["CRIC"] == [("", "–")]


def test_a_plan_page_names_its_setting_and_balancing_by_their_labels(trance_dataset, client):
    plan = make_plan(trance_dataset, make_user("tom", "tester"), balance_by="length")
    logged_in(client, make_user("rita", "researcher"))
    assert "balanced by number of transformations" in text(client.get(f"/test/plans/{plan.pk}/"))
    listed = text(client.get("/test/plans/"))
    assert "Event" in listed and " event " not in listed


# --- the tester's history ------------------------------------------------------------------------------


def test_history_lists_trials_newest_first_timed_out_ones_included_with_setting_labels(
    trance_dataset, client, django_capture_on_commit_callbacks
):
    tester = make_user("tessa", "tester")
    plan = make_plan(trance_dataset, tester, items_per_tester=3, time_limit_s=60)
    session = sessions.begin_test(sessions.start_session(plan, tester))
    now = timezone.now()
    with django_capture_on_commit_callbacks(execute=True):
        for minutes_ago in (50, 40):  # two answered trials, 50 and 40 minutes ago
            trial, _ = clock.serve_current_trial(session)
            answers.record_answer(trial.pk, tester, {"steps": steps_of(trial.item)}, {})
            Trial.objects.filter(pk=trial.pk).update(
                served_at=now - timedelta(minutes=minutes_ago, seconds=30),
                answered_at=now - timedelta(minutes=minutes_ago),
            )
        # The third ran out of time 10 minutes ago: the newest, so listed first.
        trial, _ = clock.serve_current_trial(session)
        Trial.objects.filter(pk=trial.pk).update(
            served_at=now - timedelta(minutes=11), deadline=now - timedelta(minutes=10)
        )
        assert clock.serve_current_trial(session)[0] is None  # closes it as timed out
    timed_out = Trial.objects.get(pk=trial.pk)
    assert timed_out.status == Trial.Status.TIMED_OUT and timed_out.answered_at is None

    logged_in(client, tester)
    page = client.get("/test/history/")
    rows = page.context["rows"]
    assert [row["trial"].position for row in rows] == [2, 1, 0]
    assert rows[0]["timed_out"] and [row["correct"] for row in rows[1:]] == [True, True]
    history = re.search(r'<table class="grid" id="history">.*?</table>', page.content.decode(), re.S).group(0)
    body_rows = re.findall(r"<tr>(.*?)</tr>", history.split("<tbody>")[1], re.S)
    when = [re.search(r"<td>(.*?)</td>", row).group(1) for row in body_rows]
    assert when == sorted(when, reverse=True) and len(when) == 3
    assert "timed out" in body_rows[0]
    # Each trial's own score, named as the benchmark's trial names it (TRANCE: the distance AD).
    assert all('<span class="muted">AD</span> 0' in row for row in body_rows[1:])
    # The setting as the benchmark names it, in the rows and the totals.
    assert history.count("TRANCE · Event") == 3
    totals = re.search(r'<table class="grid" id="totals">.*?</table>', page.content.decode(), re.S).group(0)
    assert "<td>Event</td>" in totals and ">event<" not in page.content.decode()


# --- ending practice early -------------------------------------------------------------------------


@pytest.mark.parametrize("qualify", [None, 1])
def test_a_tester_may_end_practice_early_unless_the_plan_asks_to_qualify(trance_dataset, client, qualify):
    tester = make_user("tessa", "tester")
    practice = list(trance_dataset.items.order_by("position").values_list("external_id", flat=True)[:3])
    plan = make_plan(trance_dataset, tester, practice_items=practice, qualify_min_correct=qualify)
    session = sessions.start_practice(sessions.start_session(plan, tester))
    logged_in(client, tester)
    page = client.get(f"/test/sessions/{session.pk}/").content.decode()
    assert "Practice" in page
    if qualify:
        # The plan asks for a qualifying round: practice cannot be cut short.
        assert 'id="skip-practice"' not in page
        return
    assert 'id="skip-practice"' in page and f'action="/test/sessions/{session.pk}/begin/"' in page
    client.post(f"/test/sessions/{session.pk}/begin/")
    session.refresh_from_db()
    assert session.status == TestSession.Status.RUNNING
    # The next trial is a test trial, not the rest of practice.
    trial, _ = clock.serve_current_trial(session)
    assert trial.phase == Trial.Phase.TEST
