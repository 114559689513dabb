"""Interaction data per trial (issue 27): what the browser reports with an answer (timings, edits,
the viewport, focus and visibility events) is checked field by field, the time the page was hidden
is worked out by the server from the events, and all of it reaches the plan's trial export."""

import csv
import io
from datetime import timedelta

import pytest
from django.utils import timezone

from humantest import answers, browser, clock, sessions
from humantest.models import TestPlan, Trial
from humantest.selectors import EXPORT_FIELDS
from tests.factories import logged_in, make_user, steps_of

pytestmark = pytest.mark.django_db


@pytest.fixture
def tester():
    return make_user("tess", "tester")


@pytest.fixture
def plan(trance_dataset, tester):
    plan = TestPlan.objects.create(
        dataset=trance_dataset, name="Interaction", setting="event", items_per_tester=3, seed=5
    )
    plan.testers.add(tester)
    return plan


@pytest.fixture
def open_trial(plan, tester, client):
    """The tester logged in with the first test trial served: (its page data, the trial)."""
    sessions.begin_test(sessions.start_session(plan, tester))
    logged_in(client, tester)
    session = plan.sessions.get(tester=tester)
    data = client.get(f"/test/sessions/{session.pk}/").context["data"]
    return data, Trial.objects.select_related("item").get(pk=data["trial"])


def post_answer(client, data, trial, client_data):
    return client.post(
        data["answer_url"],
        {"answer": {"steps": steps_of(trial.item)}, "client": client_data},
        content_type="application/json",
    )


def hidden_between(events):
    """The hidden time a person reads off a list of (type, t): each "hidden" to the next "visible"."""
    total, since = 0.0, None
    for kind, moment in events:
        if kind == "hidden":
            since = moment
        elif kind == "visible":
            total += moment - since
    return total


# --- what is stored with an answer ------------------------------------------------------------------


def test_an_answer_keeps_edits_viewport_and_the_hidden_time_the_server_worked_out(client, open_trial):
    data, trial = open_trial
    events = [("blur", 1200.0), ("hidden", 1250.0), ("visible", 4250.5), ("focus", 4260.0)]
    events += [("hidden", 6000.0), ("visible", 6400.0)]
    sent = {
        "loaded_ms": 80.0,
        "shown_ms": 310.4,
        "first_input_ms": 900.0,
        "submit_ms": 9000.0,
        "answer_changes": 7,
        "viewport": {"width": 1280, "height": 900, "dpr": 1.5},
        "events": [{"type": kind, "t": moment} for kind, moment in events],
        "hidden_ms": 1.0,  # a total the browser claims is never what is stored
    }
    assert post_answer(client, data, trial, sent).status_code == 200
    trial.refresh_from_db()
    assert trial.status == Trial.Status.ANSWERED
    assert trial.hidden_ms == pytest.approx(hidden_between(events))
    assert trial.focus_losses == 3  # one blur and two hidden
    assert trial.client["answer_changes"] == sent["answer_changes"]
    assert trial.client["viewport"] == sent["viewport"]
    assert trial.client["loaded_ms"] == sent["loaded_ms"] and trial.client["shown_ms"] == sent["shown_ms"]
    assert "hidden_ms" not in trial.client


def test_a_page_still_hidden_at_the_answer_counts_until_the_answer_was_sent(client, open_trial):
    data, trial = open_trial
    hidden_at, submit = 2000.0, 7500.0
    sent = {"submit_ms": submit, "events": [{"type": "hidden", "t": hidden_at}]}
    assert post_answer(client, data, trial, sent).status_code == 200
    trial.refresh_from_db()
    assert trial.hidden_ms == pytest.approx(submit - hidden_at)


def test_hidden_time_without_an_answer_time_counts_until_the_last_event():
    events = [("hidden", 1000.0), ("visible", 1600.0), ("hidden", 3000.0), ("blur", 3300.0)]
    checked = browser.clean_client({"events": [{"type": kind, "t": moment} for kind, moment in events]})
    # The first interval closed, the second still open at the last event.
    assert browser.hidden_ms(checked) == pytest.approx(hidden_between(events[:2]) + (3300.0 - 3000.0))
    assert browser.hidden_ms(browser.clean_client({"events": []})) == 0


def test_a_timed_out_trial_keeps_its_hidden_time_up_to_the_time_out_request(client, plan, open_trial):
    data, trial = open_trial
    Trial.objects.filter(pk=trial.pk).update(deadline=timezone.now() - timedelta(milliseconds=100))
    hidden_at, timeout_at = 4000.0, 30000.0
    sent = {
        "timeout_ms": timeout_at,
        "answer_changes": 2,
        "viewport": {"width": 800, "height": 600, "dpr": 2},
        "events": [{"type": "hidden", "t": hidden_at}],
    }
    response = client.post(data["timeout_url"], {"client": sent}, content_type="application/json")
    assert response.status_code == 200 and response.json()["figures"]["timed_out"] is True
    trial.refresh_from_db()
    assert trial.status == Trial.Status.TIMED_OUT
    assert trial.hidden_ms == pytest.approx(timeout_at - hidden_at) and trial.focus_losses == 1
    assert trial.client["answer_changes"] == 2 and trial.client["viewport"]["width"] == 800


# --- refusals: the field is named and nothing is stored ---------------------------------------------


@pytest.mark.parametrize(
    ("client_data", "field"),
    [
        ({"answer_changes": -1}, "client.answer_changes"),
        ({"answer_changes": 2.5}, "client.answer_changes"),
        ({"answer_changes": True}, "client.answer_changes"),
        ({"answer_changes": "3"}, "client.answer_changes"),
        ({"answer_changes": browser.MAX_ANSWER_CHANGES + 1}, "client.answer_changes"),
        ({"viewport": [1280, 900]}, "client.viewport"),
        ({"viewport": {"width": 0, "height": 900, "dpr": 1}}, "client.viewport.width"),
        ({"viewport": {"width": "1280", "height": 900, "dpr": 1}}, "client.viewport.width"),
        ({"viewport": {"width": 1280.5, "height": 900, "dpr": 1}}, "client.viewport.width"),
        ({"viewport": {"width": 1280, "dpr": 1}}, "client.viewport.height"),
        (
            {"viewport": {"width": 1280, "height": browser.MAX_VIEWPORT_PX + 1, "dpr": 1}},
            "client.viewport.height",
        ),
        ({"viewport": {"width": 1280, "height": 900}}, "client.viewport.dpr"),
        ({"viewport": {"width": 1280, "height": 900, "dpr": 0}}, "client.viewport.dpr"),
        ({"viewport": {"width": 1280, "height": 900, "dpr": 17}}, "client.viewport.dpr"),
        ({"viewport": {"width": 1280, "height": 900, "dpr": "2"}}, "client.viewport.dpr"),
        ({"timeout_ms": -3}, "client.timeout_ms"),
        ({"loaded_ms": "early"}, "client.loaded_ms"),
        (
            {"events": [{"type": "hidden", "t": 500}, {"type": "visible", "t": 400}]},
            "client.events[1].t",
        ),
    ],
)
def test_bad_interaction_data_is_refused_by_field_and_nothing_is_stored(
    client, open_trial, client_data, field
):
    data, trial = open_trial
    response = post_answer(client, data, trial, client_data)
    assert response.status_code == 400 and response.json()["field"] == field
    trial.refresh_from_db()
    assert trial.status == Trial.Status.SERVED and trial.answer is None
    assert trial.client == {} and trial.hidden_ms == 0 and trial.focus_losses == 0


def test_events_at_the_same_moment_are_in_order():
    checked = browser.clean_client(
        {"events": [{"type": "blur", "t": 700}, {"type": "hidden", "t": 700}, {"type": "visible", "t": 900}]}
    )
    assert [event["type"] for event in checked["events"]] == ["blur", "hidden", "visible"]
    assert browser.hidden_ms(checked) == pytest.approx(900 - 700)


# --- the export ---------------------------------------------------------------------------------------


def test_the_trial_export_has_the_interaction_columns(client, plan, tester):
    researcher = make_user("rita", "researcher")
    session = sessions.begin_test(sessions.start_session(plan, tester))
    sent = []
    for number in range(plan.items_per_tester):
        trial, _ = clock.serve_current_trial(session)
        client_data = {
            "shown_ms": 100.0 + number,
            "submit_ms": 5000.0,
            "answer_changes": number,
            "viewport": {"width": 1000 + number, "height": 700 + number, "dpr": 1},
            "events": [
                {"type": "hidden", "t": 1000.0},
                {"type": "visible", "t": 1000.0 + 250 * (number + 1)},
            ],
        }
        if number:  # the first trial: answered without an edit
            client_data["first_input_ms"] = 400.0 * number
        answers.record_answer(trial.pk, tester, {"steps": steps_of(trial.item)}, client_data)
        sent.append(client_data)

    logged_in(client, researcher)
    exported = client.get(f"/test/plans/{plan.pk}/trials.csv").content.decode()
    reader = csv.DictReader(io.StringIO(exported))
    columns = reader.fieldnames
    new = ["time_to_first_input_ms", "answer_changes", "hidden_ms", "viewport_width", "viewport_height"]
    assert set(new) <= set(columns) and columns == EXPORT_FIELDS
    # New columns come after the ones exports had before, so old readers keep working.
    assert all(columns.index(name) > columns.index("focus_events") for name in new)
    rows = sorted(reader, key=lambda row: int(row["position"]))
    assert len(rows) == len(sent)
    for row, client_data in zip(rows, sent, strict=True):
        first_input = client_data.get("first_input_ms")
        if first_input is None:
            assert row["time_to_first_input_ms"] == ""  # no edit: empty, not zero
        else:
            assert float(row["time_to_first_input_ms"]) == pytest.approx(
                first_input - client_data["shown_ms"]
            )
        assert int(row["answer_changes"]) == client_data["answer_changes"]
        events = [(event["type"], event["t"]) for event in client_data["events"]]
        assert float(row["hidden_ms"]) == pytest.approx(hidden_between(events))
        assert int(row["viewport_width"]) == client_data["viewport"]["width"]
        assert int(row["viewport_height"]) == client_data["viewport"]["height"]
        assert int(row["focus_losses"]) == 1
    as_json = client.get(f"/test/plans/{plan.pk}/trials.json").json()["trials"]
    assert [trial["answer_changes"] for trial in as_json] == [row["answer_changes"] for row in sent]
