"""Reads of the human-test app: plans a user may see, a tester's history, a plan's results."""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.db.models import Count, F, Q, QuerySet
from django.db.models.functions import Coalesce
from django.utils import timezone
from django.utils.translation import gettext as _

from benchmarks.models import Item
from evaluation.models import Prediction
from evaluation.reports import ScoredSubmission, Table, build_table
from evaluation.sampling import wilson_interval
from evaluation.selectors import per_unit_rows
from humantest.models import TestPlan, TestSession, Trial, tester_label
from humantest.scoring import agreement_key, unit_for
from humantest.trials import BenchmarkTrial, trial_for

FINISHED = (Trial.Status.ANSWERED, Trial.Status.TIMED_OUT)


#: A finished trial's files stay readable this long after it was shown: its result panel shows them.
RESULT_WINDOW = timedelta(minutes=30)


def files_shown_to(user: Any, dataset_id: int) -> set[str]:
    """Names of the dataset's media files that a trial in front of `user` shows them.

    Open trials, and trials served in the last RESULT_WINDOW; only the files their view names
    (a trial that shows one of an item's views names that one, not the others).
    """
    if not user.is_authenticated:
        return set()
    trials = (
        Trial.objects.filter(session__tester=user, item__dataset_id=dataset_id)
        .filter(
            Q(status=Trial.Status.SERVED)
            | Q(status__in=FINISHED, served_at__gte=timezone.now() - RESULT_WINDOW)
        )
        .select_related("session__plan", "item__dataset", "item__scene")
    )
    prefix = f"{settings.MEDIA_URL}datasets/{dataset_id}/"
    names: set[str] = set()
    for trial in trials:
        view = trial_for(trial.item.dataset.benchmark).view(unit_for(trial))
        names.update(text.removeprefix(prefix) for text in strings_in(view) if text.startswith(prefix))
    return names


def strings_in(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, list | tuple):
        return [text for element in value for text in strings_in(element)]
    return []


def plans_for_researcher(user: Any) -> QuerySet[TestPlan]:
    if user.has_perm("humantest.view_testplan"):
        return TestPlan.objects.select_related("dataset").annotate(session_count=Count("sessions"))
    return TestPlan.objects.none()


def what_deleting_takes(plan: TestPlan) -> dict[str, Any]:
    """What deleting `plan` removes with it, for the confirmation page: its testers' sessions and
    trials, each tester's row and the pooled row in the dataset's evaluation report."""
    sessions = list(
        plan.sessions.select_related("tester__participant", "submission").order_by("tester__username")
    )
    trials = Trial.objects.filter(session__plan=plan)
    return {
        "sessions": sessions,
        "unfinished": [
            tester_label(session.tester)
            for session in sessions
            if session.status not in (TestSession.Status.BRIEF, TestSession.Status.FINISHED)
        ],
        "trials": trials.count(),
        "finished_tests": trials.filter(phase=Trial.Phase.TEST, status__in=FINISHED).count(),
        "tester_rows": [session for session in sessions if session.submission is not None],
        "pooled": plan.pooled_submission,
    }


def sessions_for_tester(user: Any) -> list[dict[str, Any]]:
    """Every plan the tester is invited to, with their session's progress (None before starting)."""
    sessions = {
        session.plan_id: session
        for session in TestSession.objects.filter(tester=user).annotate(
            done=Count("trials", filter=Q(trials__phase__in=Trial.SEQUENCE, trials__status__in=FINISHED)),
            total=Count("trials", filter=Q(trials__phase__in=Trial.SEQUENCE)),
        )
    }
    plans = TestPlan.objects.filter(testers=user).select_related("dataset").order_by("name")
    return [{"plan": plan, "session": sessions.get(plan.pk)} for plan in plans]


#: What the tables of trials read of an item: its id. The rest (payload, ground truth) is big.
ITEM_BULK = ("item__payload", "item__ground_truth", "item__media")


def trial_figures(trial: Trial, trial_type: BenchmarkTrial | None = None) -> dict[str, Any]:
    """What the result panel and history show of one finished trial (`trial_type`: the plan's
    benchmark's trial, when the caller has it; otherwise read through the trial's plan)."""
    trial_type = trial_type or trial_for(trial.session.plan.dataset.benchmark)
    return figures_of(trial.result, trial.status, trial.seconds_used, trial_type)


def figures_of(
    result: dict | None, status: str, seconds: float | None, trial_type: BenchmarkTrial
) -> dict[str, Any]:
    row = result or {}
    label, key = trial_type.headline
    return {
        "correct": trial_type.correct(row) if row else None,
        "distance": row.get("dist"),
        "headline_label": label,
        "headline": row.get(key),
        "seconds": seconds,
        "timed_out": status == Trial.Status.TIMED_OUT,
    }


def history(user: Any) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The tester's finished trials, newest first, and totals per benchmark and setting.

    A trial ends when it is answered, or at its deadline when it times out: `ended_at`, which the
    page shows and orders by (ordering by answered_at alone put timed-out trials, which have none,
    below every answered one on SQLite and above them all on PostgreSQL)."""
    trials = (
        Trial.objects.filter(session__tester=user, status__in=FINISHED)
        .select_related("session__plan__dataset", "item")
        .defer(*ITEM_BULK)
        .annotate(ended_at=Coalesce("answered_at", "deadline", "served_at"))
        .order_by(F("ended_at").desc(nulls_last=True), "-pk")
    )
    rows = []
    totals: dict[tuple[str, str], dict[str, Any]] = {}
    for trial in trials:
        figures = trial_figures(trial)
        plan = trial.session.plan
        rows.append({"trial": trial, "plan": plan, **figures})
        if trial.phase != Trial.Phase.TEST:
            continue
        key = (plan.dataset.benchmark_title, plan.setting_label)
        total = totals.setdefault(
            key, {"benchmark": key[0], "setting": key[1], "n": 0, "correct": 0, "seconds": []}
        )
        total["n"] += 1
        total["correct"] += 1 if figures["correct"] else 0
        if figures["seconds"] is not None:
            total["seconds"].append(figures["seconds"])
    for total in totals.values():
        total["accuracy"] = total["correct"] / total["n"] if total["n"] else None
        total["median_seconds"] = statistics.median(total["seconds"]) if total["seconds"] else None
    return rows, sorted(totals.values(), key=lambda total: (total["benchmark"], total["setting"]))


@dataclass
class TesterResult:
    label: str
    trials: int
    answered: int
    timed_out: int
    correct: int
    accuracy: float | None
    low: float | None
    high: float | None
    median_seconds: float | None
    q1_seconds: float | None
    q3_seconds: float | None
    focus_losses: int
    headline: float | None = None
    seconds: list[float] = field(default_factory=list, repr=False)


def tester_result(label: str, trials: list[Trial], trial_type: BenchmarkTrial) -> TesterResult:
    answered = sum(1 for trial in trials if trial.status == Trial.Status.ANSWERED)
    figures = [trial_figures(trial, trial_type) for trial in trials]
    correct = sum(1 for figure in figures if figure["correct"])
    seconds = sorted(trial.seconds_used for trial in trials if trial.seconds_used is not None)
    low = high = accuracy = None
    if trials:
        accuracy = correct / len(trials)
        low, high = wilson_interval(correct, len(trials))
    quartiles = statistics.quantiles(seconds, n=4) if len(seconds) >= 2 else [None, None, None]
    values = [figure["headline"] for figure in figures if figure["headline"] is not None]
    return TesterResult(
        label=label,
        trials=len(trials),
        answered=answered,
        timed_out=len(trials) - answered,
        correct=correct,
        accuracy=accuracy,
        low=low,
        high=high,
        median_seconds=statistics.median(seconds) if seconds else None,
        q1_seconds=quartiles[0],
        q3_seconds=quartiles[2],
        focus_losses=sum(trial.focus_losses for trial in trials),
        headline=sum(float(value) for value in values) / len(values) if values else None,
        seconds=seconds,
    )


def plan_results(plan: TestPlan) -> dict[str, Any]:
    """Per-tester and pooled figures from the finished test trials, and the report-style table."""
    trial_type = trial_for(plan.dataset.benchmark)
    trials = list(
        Trial.objects.filter(session__plan=plan, phase=Trial.Phase.TEST, status__in=FINISHED)
        .select_related("session__tester__participant")
        .order_by("session__tester__username", "position")
    )
    by_tester: dict[str, list[Trial]] = {}
    for trial in trials:
        by_tester.setdefault(tester_label(trial.session.tester), []).append(trial)
    testers = [tester_result(name, rows, trial_type) for name, rows in by_tester.items()]
    pooled = tester_result(_("%(label)s (pooled)") % {"label": plan.row_label}, trials, trial_type)
    sessions = list(
        plan.sessions.select_related("tester__participant", "submission").order_by("tester__username")
    )
    agreement = tester_agreement(plan) if len(by_tester) > 1 else None
    return {
        "testers": testers,
        "pooled": pooled,
        "sessions": sessions,
        "agreement": agreement,
        # Several testers answered but no summary has run yet: the view asks for one.
        "agreement_pending": len(by_tester) > 1 and agreement is None,
        "table": results_table(plan, sessions),
        "headline_label": trial_type.headline[0],
        "difficulty": item_difficulty(trials, trial_type),
    }


def item_difficulty(trials: list[Trial], trial_type: BenchmarkTrial) -> list[dict[str, Any]]:
    """Per item (and part): how many testers answered, the share right, the median time; hardest
    first. An item every one of at least two testers got wrong is flagged: people who agree on
    failing it may be seeing a data error (send it to a validation plan, or look at it)."""
    by_unit: dict[tuple[int, int], list[Trial]] = {}
    for trial in trials:
        by_unit.setdefault((trial.item_id, trial.part), []).append(trial)
    items = {item.pk: item for item in Item.objects.filter(pk__in={item_id for item_id, _part in by_unit})}
    rows = []
    for (item_id, part), unit_trials in by_unit.items():
        right = sum(1 for trial in unit_trials if trial_figures(trial, trial_type)["correct"])
        seconds = [trial.seconds_used for trial in unit_trials if trial.seconds_used is not None]
        rows.append(
            {
                "item": items[item_id],
                "part": part,
                "testers": len(unit_trials),
                "right": right,
                "share_right": right / len(unit_trials),
                "median_seconds": statistics.median(seconds) if seconds else None,
                "all_failed": right == 0 and len(unit_trials) >= 2,
            }
        )
    rows.sort(key=lambda row: (row["share_right"], -row["testers"], row["item"].position, row["part"]))
    return rows


def tester_agreement(plan: TestPlan) -> list[dict[str, Any]] | None:
    """Agreement between the plan's testers, as the background summary last computed it (see
    `scoring.refresh_plan_agreement`); None when it has not been computed yet."""
    return cache.get(agreement_key(plan.pk))


def results_table(plan: TestPlan, sessions: list[TestSession]) -> Table:
    """The evaluation report's columns for each tester and the pooled row, with intervals."""
    submissions = [
        session.submission for session in sessions if session.submission and session.submission.scored_at
    ]
    pooled = plan.pooled_submission if plan.pooled_submission and plan.pooled_submission.scored_at else None
    rows_by_submission: dict[int, list[dict]] = {submission.pk: [] for submission in submissions}
    for submission_id, score in Prediction.objects.filter(submission__in=submissions).values_list(
        "submission_id", "score"
    ):
        rows_by_submission[submission_id].extend(per_unit_rows(score))
    scored = [
        ScoredSubmission(
            producer="annotator",  # per-tester rows come before the pooled Human row
            name=submission.parameters.get("tester", submission.name),
            setting=submission.setting,
            summary=submission.summary,
            item_rows=rows_by_submission[submission.pk],
        )
        for submission in submissions
    ]
    if pooled:
        scored.append(
            ScoredSubmission(
                producer="human",
                name=pooled.name,
                setting=pooled.setting,
                summary=pooled.summary,
                item_rows=[row for rows in rows_by_submission.values() for row in rows],
            )
        )
    table = build_table(plan.dataset.spec, scored)
    if any(column.setting for column in table.columns):
        # A plan is one setting, so only that setting's columns have values.
        keep = [index for index, column in enumerate(table.columns) if column.setting == plan.setting]
        table.columns = [table.columns[index] for index in keep]
        for row in table.rows:
            row.cells = [row.cells[index] for index in keep]
    return table


#: The columns of a trial export, in order (the keys of each `export_rows` row).
EXPORT_FIELDS = [
    "plan",
    "tester",
    "platform",
    "position",
    "item",
    "part",
    "camera",
    "status",
    "answer",
    "correct",
    "score",
    "distance",
    "served_at",
    "deadline",
    "answered_at",
    "seconds",
    "client_shown_ms",
    "client_first_input_ms",
    "client_submit_ms",
    "focus_losses",
    "focus_events",
    "client_loaded_ms",
    "time_to_first_input_ms",
    "answer_changes",
    "hidden_ms",
    "viewport_width",
    "viewport_height",
    "viewport_dpr",
    "phase",
    "tester_status",
    "exclusion_reasons",
]


def export_rows(plan: TestPlan) -> list[dict[str, Any]]:
    """One row per test or catch trial (`phase` says which: catch trials are never scored): who,
    what, the answer, correctness, server and client times, and what the plan's current exclusion
    rules made of the tester (`tester_status`: kept, excluded, screened out, or counted without
    rules; `exclusion_reasons`: the rules that exclude them).

    Read as plain values, items for their id only: a plan of 40 testers x 600 trials is 24,000
    rows, and building model objects with each item's whole record took 15 s of a 2-core server
    (perf/results/mixed_load.md)."""
    from humantest.exclusions import plan_quality

    trial_type = trial_for(plan.dataset.benchmark)
    quality = plan_quality(plan)
    outcomes = {
        outcome.facts.session: (
            outcome.status if quality["has_rules"] or outcome.status != "kept" else "counted",
            ";".join(outcome.reasons),
        )
        for outcome in quality["current"]["outcomes"]
    }
    trials = (
        Trial.objects.filter(session__plan=plan, phase__in=Trial.SEQUENCE)
        .order_by("session__tester__username", "position")
        .values_list(
            "session_id",
            "phase",
            "session__tester__username",
            "session__tester__participant__external_id",
            "session__tester__participant__platform",
            "position",
            "item__external_id",
            "part",
            "context",
            "status",
            "answer",
            "result",
            "served_at",
            "deadline",
            "answered_at",
            "client",
            "focus_losses",
            "hidden_ms",
        )
    )
    rows = []
    for (
        session_id,
        phase,
        username,
        participant_id,
        platform,
        position,
        item,
        part,
        context,
        status,
        answer,
        result,
        served,
        deadline,
        answered,
        client,
        losses,
        hidden,
    ) in trials.iterator(chunk_size=2000):
        seconds = Trial.seconds_between(served, answered, deadline, status)
        figures = figures_of(result, status, seconds, trial_type) if status in FINISHED else {}
        client = client or {}
        shown, first_input = client.get("shown_ms"), client.get("first_input_ms")
        viewport = client.get("viewport") or {}
        rows.append(
            {
                "plan": plan.pk,
                "tester": participant_id if participant_id is not None else username,
                "platform": platform or "",
                "position": position + 1,
                "item": item,
                "part": part,
                "camera": (context or {}).get("camera", ""),
                "status": status,
                "answer": answer,
                "correct": figures.get("correct"),
                "score": figures.get("headline"),
                "distance": figures.get("distance"),
                "served_at": served.isoformat() if served else None,
                "deadline": deadline.isoformat() if deadline else None,
                "answered_at": answered.isoformat() if answered else None,
                "seconds": seconds,
                "client_shown_ms": client.get("shown_ms"),
                "client_first_input_ms": client.get("first_input_ms"),
                "client_submit_ms": client.get("submit_ms"),
                "focus_losses": losses,
                "focus_events": client.get("events", []),
                "client_loaded_ms": client.get("loaded_ms"),
                "time_to_first_input_ms": round(first_input - shown, 1)
                if shown is not None and first_input is not None
                else None,
                "answer_changes": client.get("answer_changes"),
                "hidden_ms": hidden,
                "viewport_width": viewport.get("width"),
                "viewport_height": viewport.get("height"),
                "viewport_dpr": viewport.get("dpr"),
                "phase": phase,
                "tester_status": outcomes.get(session_id, ("not started", ""))[0],
                "exclusion_reasons": outcomes.get(session_id, ("", ""))[1],
            }
        )
    return rows
