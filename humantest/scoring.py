"""Scores of human tests: each trial scored by its benchmark's metric, and the submissions they feed.

A tester's finished test trials become the Predictions of their own Submission (origin "test
session"), which is pooled into the plan's Submission (origin "test plan"): the report's Human
row. Every write to submissions and predictions goes through `evaluation.services`, the one
scoring writer; this module decides what to write.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from django.core.cache import cache
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from evaluation import services as evaluation
from evaluation.agreement import AgreementInputError
from evaluation.agreement_reports import dataset_agreement
from evaluation.metrics.scored import Scored
from evaluation.models import Submission
from humantest.models import TestPlan, TestSession, Trial, tester_label
from humantest.rescoring import schedule_pooled, schedule_session
from humantest.trials import TrialUnit, trial_for


def unit_for(trial: Trial) -> TrialUnit:
    """What a trial type sees of a trial: its item and part, what the plan chose for it (a camera),
    the plan's setting and, once the trial is finished, the seconds it took (for the time per
    condition a benchmark reports, such as seconds per camera)."""
    context = {**trial.context, "setting": trial.session.plan.setting}
    seconds = trial.seconds_used
    if seconds is not None:
        context["seconds"] = round(seconds, 3)
    return TrialUnit(item=trial.item, part=trial.part, context=context, key=trial.pk)


def score_one(trial: Trial, answer: Any) -> dict[str, Any]:
    """The metric's row for one trial's answer (None: no answer, as when time ran out)."""
    unit = unit_for(trial)
    scored = trial_for(trial.item.dataset.benchmark).score(
        trial.session.plan.setting, [unit], {} if answer is None else {unit.key: answer}
    )
    return scored.items[0]


# --- the submissions a plan feeds ------------------------------------------------------------------


def ensure_plan_pool(plan: TestPlan) -> Submission:
    """The plan's pooled submission (the report's Human row), made when first needed.

    The plan's row is locked while it is looked up, so two testers starting at once make one.
    """
    with transaction.atomic():
        plan = (
            TestPlan.objects.select_for_update(of=("self",))
            .select_related("dataset", "pooled_submission")
            .get(pk=plan.pk)
        )
        if plan.pooled_submission is not None:
            return plan.pooled_submission
        pool = evaluation.create_submission(
            dataset=plan.dataset,
            name=plan.row_label,
            producer=Submission.Producer.HUMAN,
            origin=Submission.Origin.TEST_PLAN,
            setting=plan.setting,
            source=f"test plan {plan.pk} (pooled)",
            parameters={"plan": plan.pk},
            created_by=plan.created_by,
        )
        TestPlan.objects.filter(pk=plan.pk).update(pooled_submission=pool)
    return pool


def create_session_submission(plan: TestPlan, tester) -> Submission:
    return evaluation.create_submission(
        dataset=plan.dataset,
        name=f"{plan.row_label} · {tester_label(tester)}",
        producer=Submission.Producer.HUMAN,
        origin=Submission.Origin.TEST_SESSION,
        setting=plan.setting,
        source=f"test plan {plan.pk}",
        parameters={"plan": plan.pk, "tester": tester.username},
        pool=ensure_plan_pool(plan),
        created_by=tester,
    )


def ensure_session_submission(session: TestSession) -> Submission:
    """The session's submission; remade, with every finished trial in it, if it was deleted.

    A researcher may delete a tester's submission while the tester is still answering: the trials
    keep every answer, so the submission is rebuilt from them instead of failing the next answer.
    """
    if session.submission_id is not None:
        return session.submission
    submission = create_session_submission(session.plan, session.tester)
    TestSession.objects.filter(pk=session.pk).update(submission=submission)
    session.submission = submission
    for trial in finished_test_trials(session=session):
        record_prediction(trial, submission)
    return submission


def record_prediction(trial: Trial, submission: Submission) -> None:
    trial_type = trial_for(trial.item.dataset.benchmark)
    answer = None if trial.answer is None else trial_type.stored_answer(unit_for(trial), trial.answer)
    evaluation.record_prediction(
        submission=submission, item_id=trial.item_id, part=trial.part, answer=answer, score=trial.result
    )


def store_prediction(trial: Trial) -> None:
    """A finished test trial becomes its Prediction; the summaries are refreshed after commit."""
    if trial.phase != Trial.Phase.TEST:
        return
    session = trial.session
    record_prediction(trial, ensure_session_submission(session))
    plan_pk, session_pk = session.plan_id, session.pk
    transaction.on_commit(lambda: schedule_session(session_pk))
    transaction.on_commit(lambda: schedule_pooled(plan_pk))


# --- summaries -------------------------------------------------------------------------------------


def finished_test_trials(**filters):
    return (
        Trial.objects.filter(
            phase=Trial.Phase.TEST, status__in=(Trial.Status.ANSWERED, Trial.Status.TIMED_OUT)
        )
        .filter(**filters)
        .select_related("session__plan", "item__dataset", "item__scene")
        .order_by("session_id", "position")
    )


def score_trials(plan: TestPlan, trials: list[Trial]) -> Scored:
    units = [unit_for(trial) for trial in trials]
    answers = {trial.pk: trial.answer for trial in trials if trial.answer is not None}
    scored = trial_for(plan.dataset.benchmark).score(plan.setting, units, answers)
    # A trial without an answer timed out: the tables count it as wrong, it is not a problem.
    return dataclasses.replace(scored, problems=[])


def rescore_session(session: TestSession) -> None:
    trials = list(finished_test_trials(session=session))
    if not trials or session.submission_id is None:
        return
    evaluation.store_summary(submission=session.submission, scored=score_trials(session.plan, trials))


#: Bootstrap resamples for the agreement intervals on the plan's page (the command uses 1,000).
PAGE_RESAMPLES = 300
SHOWN_STATISTIC = ("statistic", "name", "value", "low", "high", "items", "raters")


def agreement_key(plan_pk: int) -> str:
    return f"humantest:plan-agreement:{plan_pk}"


def refresh_plan_agreement(plan: TestPlan) -> list[dict[str, Any]]:
    """Agreement between the plan's testers, computed and kept for the plan's page.

    Run in the background with the pooled row's summary: its bootstrap over dozens of testers
    took most of a busy server's CPU when page views computed it (perf/results/mixed_load.md).
    """
    raters = Submission.objects.filter(pk__in=plan.sessions.values("submission_id"))
    try:
        statistics = dataset_agreement(plan.dataset, raters=raters, resamples=PAGE_RESAMPLES)["statistics"]
    except AgreementInputError:
        # The normal early state of a random draw: testers answered, but no question twice yet.
        statistics = []
    now = timezone.now()
    shown = [
        {**{field: statistic[field] for field in SHOWN_STATISTIC}, "computed_at": now}
        for statistic in statistics
        if statistic["items"]
    ]
    cache.set(agreement_key(plan.pk), shown, timeout=7 * 24 * 3600)
    return shown


def rescore_plan(plan: TestPlan) -> Submission | None:
    """The pooled row scored (`pool_plan`), then the study's stopping rules checked on it."""
    from humantest import stopping

    pool = pool_plan(plan)
    if pool is not None:
        plan.pooled_submission = pool
        stopping.update(plan)
    return pool


def pool_plan(plan: TestPlan) -> Submission | None:
    """The pooled human row: the finished test trials of every tester the plan's exclusion rules
    keep (every tester when it has none), scored together. With rules, the row's label names
    their version and a second row counts every measured tester (humantest/exclusions.py)."""
    from humantest.exclusions import current_rules, kept_sessions

    trials = list(finished_test_trials(session__plan=plan))
    if not trials:
        return None
    pool = ensure_plan_pool(plan)
    members = plan.sessions.exclude(submission=None)
    rules = current_rules(plan)
    kept = kept_sessions(plan)
    if rules is None or kept is None:
        # Every tester's submission counts, also when the pool was made again after a deletion.
        evaluation.join_pool(pool=pool, members=members.values_list("submission_id", flat=True))
        evaluation.rename_row(submission=pool, name=plan.row_label)
        return evaluation.store_summary(submission=pool, scored=score_trials(plan, trials))
    evaluation.set_pool(
        pool=pool, members=members.filter(pk__in=kept).values_list("submission_id", flat=True)
    )
    evaluation.rename_row(submission=pool, name=f"{plan.row_label} (exclusion rules v{rules.version})")
    evaluation.store_summary(submission=ensure_all_testers_row(plan), scored=score_trials(plan, trials))
    kept_trials = [trial for trial in trials if trial.session_id in kept]
    return evaluation.store_summary(submission=pool, scored=score_trials(plan, kept_trials))


def ensure_all_testers_row(plan: TestPlan) -> Submission:
    """The row of every measured tester, excluded ones too (its summary only: the pooled row, with
    its members' answers, is the one paired with models)."""
    with transaction.atomic():
        plan = TestPlan.objects.select_for_update(of=("self",)).get(pk=plan.pk)
        if plan.all_testers_submission_id is not None:
            return plan.all_testers_submission
        row = evaluation.create_submission(
            dataset=plan.dataset,
            name=f"{plan.row_label} (all testers)",
            producer=Submission.Producer.HUMAN,
            origin=Submission.Origin.TEST_PLAN,
            setting=plan.setting,
            source=f"test plan {plan.pk} (all testers, no exclusions)",
            parameters={"plan": plan.pk, "rows": "all testers"},
            created_by=plan.created_by,
        )
        TestPlan.objects.filter(pk=plan.pk).update(all_testers_submission=row)
    return row


def rescore_session_submission(submission: Submission) -> None:
    """`evaluation.services.rescore` for a tester's row: their finished trials scored again."""
    session = TestSession.objects.select_related("plan__dataset").filter(submission=submission).first()
    if session is not None:
        rescore_session(session)


def rescore_pooled_submission(submission: Submission) -> None:
    """`evaluation.services.rescore` for a plan's pooled row: every tester's trials scored again."""
    plan = (
        TestPlan.objects.select_related("dataset")
        .filter(Q(pooled_submission=submission) | Q(all_testers_submission=submission))
        .first()
    )
    if plan is not None:
        rescore_plan(plan)
