"""Qualification: a plan may ask its practice round to reach a score before the test.

A practice round is scored as it is shown (each answer against the truth, by the benchmark's own
rule of what is correct). A tester qualifies when one finished round has at least the plan's number
of right answers; one who has used every round the plan allows without that is screened out for good:
the session ends (status "screened out", with the server's time) and a participant who came from a
platform is sent back with the study's screen-out code. Nobody is dropped silently: the plan's page
and its report count the screened-out.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db import transaction
from django.utils import timezone

from humantest.models import Participant, TestSession, Trial
from humantest.trials import trial_for


@dataclass(frozen=True)
class Round:
    number: int
    correct: int
    total: int
    finished: bool


@dataclass(frozen=True)
class Qualification:
    """Where a tester stands: whether the plan asks for a qualification and what they reached."""

    required: bool
    needed: int | None
    allowed: int
    rounds: tuple[Round, ...]

    @property
    def finished_rounds(self) -> int:
        return sum(1 for round_ in self.rounds if round_.finished)

    @property
    def qualified(self) -> bool:
        return not self.required or any(
            round_.finished and round_.correct >= (self.needed or 0) for round_ in self.rounds
        )

    @property
    def rounds_left(self) -> int:
        return max(0, self.allowed - len(self.rounds))

    @property
    def failed(self) -> bool:
        """Every allowed round finished without reaching the score."""
        return self.required and not self.qualified and self.finished_rounds >= self.allowed

    @property
    def last(self) -> Round | None:
        return self.rounds[-1] if self.rounds else None


def practice_rounds(session: TestSession) -> tuple[Round, ...]:
    trial_type = trial_for(session.plan.dataset.benchmark)
    by_round: dict[int, list[Trial]] = {}
    for trial in session.trials.filter(phase=Trial.Phase.PRACTICE).order_by("round", "position"):
        by_round.setdefault(trial.round, []).append(trial)
    return tuple(
        Round(
            number=number,
            correct=sum(1 for trial in trials if trial.finished and trial_type.correct(trial.result)),
            total=len(trials),
            finished=all(trial.finished for trial in trials),
        )
        for number, trials in sorted(by_round.items())
    )


def qualification(session: TestSession) -> Qualification:
    plan = session.plan
    return Qualification(
        required=plan.qualify_min_correct is not None,
        needed=plan.qualify_min_correct,
        allowed=plan.qualify_rounds if plan.qualify_min_correct is not None else 0,
        rounds=practice_rounds(session) if plan.qualify_min_correct is not None else (),
    )


def settle(session: TestSession) -> Qualification:
    """After a practice round: screen the tester out if they have failed for good. Idempotent."""
    standing = qualification(session)
    if standing.failed and session.status in (TestSession.Status.BRIEF, TestSession.Status.PRACTICE):
        screen_out(session)
    return standing


def screen_out(session: TestSession) -> None:
    from humantest.studies import screen_out as end_participant

    with transaction.atomic():
        TestSession.objects.filter(
            pk=session.pk, status__in=(TestSession.Status.BRIEF, TestSession.Status.PRACTICE)
        ).update(status=TestSession.Status.SCREENED_OUT, screened_out_at=timezone.now())
        session.refresh_from_db(fields=["status", "screened_out_at"])
        participant = Participant.objects.filter(session=session).first()
        if participant is not None and session.status == TestSession.Status.SCREENED_OUT:
            end_participant(participant)
