"""What participants earn, by the rule their study states, and the files that pay them.

A participant who finished is paid the study's base pay and a bonus: `bonus_per_correct` for each
correct test trial (correct as the benchmark's trial scores it, the same metric as every report),
plus `bonus_above` when their accuracy is at least `bonus_threshold`, the bonus capped at
`bonus_cap`. Amounts are exact decimals, to the cent.

Paying is in batches: `new_batch` takes every finished participant not yet in a batch, computes
their pay once and keeps it (one Payment per participant, which the database keeps unique), so a
participant is in exactly one batch whatever is downloaded how often; a batch's files are the
same every time they are downloaded. Files: Prolific's bulk bonus (`participant_id,amount`),
MTurk's (worker id, assignment id, amount, reason), and the full table (base, bonus, time on the
server's clock, status, codes).
"""

from __future__ import annotations

import csv
import io
from decimal import Decimal

from django.db import transaction
from django.db.models import Max, QuerySet

from humantest.models import Participant, Payment, PaymentBatch, Study, TestPlan, Trial
from humantest.selectors import FINISHED, trial_figures
from humantest.trials import trial_for

FORMATS = ("prolific", "mturk", "full")
CENT = Decimal("0.01")


def rule_of(study: Study) -> dict:
    """The pay rule as it stands, kept with each batch."""
    return {
        "currency": study.currency,
        "base_pay": str(study.base_pay),
        "bonus_per_correct": str(study.bonus_per_correct),
        "bonus_threshold": study.bonus_threshold,
        "bonus_above": str(study.bonus_above),
        "bonus_cap": None if study.bonus_cap is None else str(study.bonus_cap),
    }


def bonus_for(correct: int, trials: int, study: Study) -> Decimal:
    """The bonus the rule gives for `correct` of `trials` test trials."""
    bonus = Decimal(study.bonus_per_correct) * correct
    if study.bonus_threshold is not None and trials and correct / trials >= study.bonus_threshold:
        bonus += Decimal(study.bonus_above)
    if study.bonus_cap is not None:
        bonus = min(bonus, Decimal(study.bonus_cap))
    return bonus.quantize(CENT)


def waiting(plan: TestPlan) -> QuerySet[Participant]:
    """Finished participants in no batch yet."""
    return Participant.objects.filter(
        plan=plan, status=Participant.Status.FINISHED, payment__isnull=True
    ).select_related("session")


def new_batch(plan: TestPlan, *, created_by=None) -> PaymentBatch | None:
    """A batch of every finished participant not paid by an earlier one; None when there is none."""
    trial_type = trial_for(plan.dataset.benchmark)
    with transaction.atomic():
        study = Study.objects.select_for_update().get(plan=plan)  # one batch at a time per plan
        people = list(waiting(plan))
        if not people:
            return None
        number = (plan.payment_batches.aggregate(last=Max("number"))["last"] or 0) + 1
        batch = PaymentBatch.objects.create(
            plan=plan, number=number, created_by=created_by, rule=rule_of(study)
        )
        for participant in people:
            trials = list(
                Trial.objects.filter(
                    session=participant.session, phase=Trial.Phase.TEST, status__in=FINISHED
                ).select_related("item__dataset", "item__scene", "session__plan")
            )
            correct = sum(1 for trial in trials if trial_figures(trial, trial_type)["correct"])
            total = participant.session.trials.filter(phase=Trial.Phase.TEST).count()
            seconds = (
                (participant.finished_at - participant.arrived_at).total_seconds()
                if participant.finished_at
                else None
            )
            Payment.objects.create(
                participant=participant,
                batch=batch,
                base=Decimal(study.base_pay).quantize(CENT),
                bonus=bonus_for(correct, total, study),
                correct=correct,
                trials=total,
                seconds=seconds,
            )
    return batch


def batch_csv(batch: PaymentBatch, fmt: str) -> str:
    """The batch as a file: `prolific` and `mturk` list bonuses (above zero) as the platforms'
    bulk bonus takes them; `full` lists everything of every participant in it."""
    rows = batch.payments.select_related("participant").order_by("participant__arrived_at")
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    currency = batch.rule.get("currency", "")
    if fmt == "prolific":
        for payment in rows:
            if payment.bonus > 0:
                writer.writerow([payment.participant.external_id, f"{payment.bonus:.2f}"])
    elif fmt == "mturk":
        writer.writerow(["WorkerId", "AssignmentId", "BonusAmount", "Reason"])
        for payment in rows:
            if payment.bonus > 0:
                reason = f"{payment.correct} of {payment.trials} correct in {batch.plan.name}"
                writer.writerow(
                    [
                        payment.participant.external_id,
                        payment.participant.attempt_id,
                        f"{payment.bonus:.2f}",
                        reason,
                    ]
                )
    else:
        writer.writerow(
            ["platform", "participant_id", "attempt_id", "status", "correct", "trials", "minutes",
             "base", "bonus", "total", "currency", "batch", "arrived_at", "finished_at"]
        )  # fmt: skip
        for payment in rows:
            person = payment.participant
            writer.writerow(
                [
                    person.platform,
                    person.external_id,
                    person.attempt_id,
                    person.status,
                    payment.correct,
                    payment.trials,
                    "" if payment.seconds is None else round(payment.seconds / 60, 2),
                    f"{payment.base:.2f}",
                    f"{payment.bonus:.2f}",
                    f"{payment.base + payment.bonus:.2f}",
                    currency,
                    batch.number,
                    person.arrived_at.isoformat(),
                    person.finished_at.isoformat() if person.finished_at else "",
                ]
            )
    return buffer.getvalue()
