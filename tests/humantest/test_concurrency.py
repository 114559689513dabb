"""Many requests for one trial at once: the clock starts once, exactly one answer is stored."""

import threading
import time

import pytest
from django.db import connection, connections

from evaluation.models import Prediction
from humantest import answers, clock, scoring, sessions
from humantest.models import TestPlan, Trial
from tests.factories import make_user

pytestmark = pytest.mark.django_db(transaction=True)

THREADS = 8


def hammer(work):
    """Run `work(index)` in THREADS threads released together; return results or exceptions."""
    barrier = threading.Barrier(THREADS)
    outcomes: list = [None] * THREADS

    def run(index):
        try:
            barrier.wait()
            outcomes[index] = work(index)
        except Exception as error:  # noqa: BLE001 - the test inspects what each thread got
            outcomes[index] = error
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(index,)) for index in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return outcomes


@pytest.fixture
def running_session(trance_dataset):
    if connection.vendor == "sqlite":
        pytest.skip("the in-memory SQLite test database serialises connections; this runs on PostgreSQL")
    tester = make_user("tessa", "tester")
    plan = TestPlan.objects.create(
        name="Race", dataset=trance_dataset, setting="event", items_per_tester=3, time_limit_s=60
    )
    plan.testers.add(tester)
    return sessions.begin_test(sessions.start_session(plan, tester)), tester


def test_simultaneous_serves_start_one_trial_once(running_session):
    session, _ = running_session
    outcomes = hammer(lambda index: clock.serve_current_trial(type(session).objects.get(pk=session.pk))[0])
    assert all(isinstance(trial, Trial) for trial in outcomes), outcomes
    assert len({trial.pk for trial in outcomes}) == 1
    assert len({trial.served_at for trial in outcomes}) == 1
    assert Trial.objects.filter(session=session, status=Trial.Status.SERVED).count() == 1


def test_simultaneous_answers_to_one_trial_store_exactly_one(running_session, monkeypatch):
    session, tester = running_session
    # Scoring takes a while, so that every thread is inside record_answer at the same time.
    score_one = scoring.score_one
    monkeypatch.setattr(clock, "score_one", lambda *args: (time.sleep(0.05), score_one(*args))[1])
    trial, _ = clock.serve_current_trial(session)
    values = ["red", "blue", "green", "brown", "purple", "cyan", "yellow", "gray"]
    current = trial.item.payload["initial"]["objects"][0]["color"]
    values = [value for value in values if value != current][: THREADS - 1] + ["large"]

    def answer(index):
        attr = "size" if values[index] == "large" else "color"
        step = {"obj_idx": 0, "attr": attr, "val": values[index]}
        return answers.record_answer(trial.pk, tester, {"steps": [step]}, {})

    outcomes = hammer(answer)
    stored = [outcome for outcome in outcomes if isinstance(outcome, Trial)]
    refused = [outcome for outcome in outcomes if isinstance(outcome, sessions.TrialClosed)]
    assert len(stored) == 1 and len(refused) == THREADS - 1, outcomes
    trial.refresh_from_db()
    assert trial.status == Trial.Status.ANSWERED and trial.answer == stored[0].answer
    assert Prediction.objects.filter(submission=session.submission).get().answer == stored[0].answer


@pytest.fixture
def open_study(trance_dataset):
    if connection.vendor == "sqlite":
        pytest.skip("the in-memory SQLite test database serialises connections; this runs on PostgreSQL")
    from humantest import studies

    plan = TestPlan.objects.create(name="Crowd", dataset=trance_dataset, setting="event", items_per_tester=2)
    return plan, studies.open_link(plan, "prolific")


def test_one_participant_in_two_tabs_at_once_gets_one_session(open_study):
    from humantest import studies
    from humantest.models import Participant, TestSession

    plan, link = open_study
    arrival = studies.Arrival(external_id="P-same", attempt_id="S-same")
    outcomes = hammer(lambda index: studies.arrive(type(link).objects.get(pk=link.pk), arrival))
    assert all(isinstance(outcome, Participant) for outcome in outcomes), outcomes
    assert len({outcome.pk for outcome in outcomes}) == 1
    assert Participant.objects.count() == 1 and TestSession.objects.filter(plan=plan).count() == 1


def test_arrivals_at_once_never_go_past_the_cap(open_study):
    from humantest import studies
    from humantest.models import Participant

    plan, link = open_study
    studies.update_study(plan, participant_cap=3)
    outcomes = hammer(
        lambda index: studies.arrive(
            type(link).objects.get(pk=link.pk),
            studies.Arrival(external_id=f"P{index}", attempt_id=f"S{index}"),
        )
    )
    admitted = [outcome for outcome in outcomes if isinstance(outcome, Participant)]
    refused = [outcome for outcome in outcomes if isinstance(outcome, studies.StudyRefused)]
    assert len(admitted) == 3 and len(refused) == THREADS - 3, outcomes
    assert {outcome.code for outcome in refused} == {"full"}
    assert Participant.objects.filter(plan=plan).count() == 3
