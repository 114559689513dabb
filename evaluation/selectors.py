"""Reads of the evaluation engine: submissions a user may see, and a dataset's report table."""

from __future__ import annotations

import hashlib
import time
from datetime import timedelta
from typing import Any

from django.db.models import Count, Q, QuerySet
from django.utils import timezone
from django.utils.translation import gettext

from benchmarks.models import Dataset, Item
from benchmarks.spec import DiagnosticTable
from evaluation.comparison import ComparisonInputError
from evaluation.models import Prediction, ScoringJob, Submission
from evaluation.reports import (
    PRODUCER_ORDER,
    ScoredSubmission,
    Table,
    build_table,
    compare_rows,
    row_groups,
    submission_cells,
)
from evaluation.services import scoring_units
from jobs.models import ACTIVE


def submissions_for(user: Any) -> QuerySet[Submission]:
    if user.has_perm("evaluation.view_submission"):
        return Submission.objects.select_related("dataset")
    return Submission.objects.none()


def scored_submissions(dataset: Dataset) -> list[Submission]:
    """The report's submissions, scored, each with `answered`: how many units it gave an answer for.

    A submission pooled into another (a tester's own, pooled into the test plan's Human row) is
    left out: the pool answers through its members' predictions (see `prediction_rows`). In the
    report's order: models first, Human last.
    """
    from django.core.cache import cache

    found = dataset.submissions.filter(scored_at__isnull=False, pool__isnull=True).exclude(
        origin=Submission.Origin.TEST_SESSION
    )
    submissions = sorted(found, key=lambda s: (PRODUCER_ORDER.get(s.producer, 1), s.name, s.setting))
    # How many answered is kept with the submission's version: counting it reads every
    # prediction row (2.5 million for five rows of 500,000 items).
    keys = {pk: f"{key}:answered" for pk, key in cell_keys(dataset.spec, submissions).items()}
    known = cache.get_many(list(keys.values()))
    missing = [submission.pk for submission in submissions if keys[submission.pk] not in known]
    if missing:
        answered = Count("predictions", filter=Q(predictions__answer__isnull=False))
        pooled_answers = Count("members__predictions", filter=Q(members__predictions__answer__isnull=False))
        counted = Submission.objects.filter(pk__in=missing)
        own = dict(counted.annotate(answered=answered).values_list("pk", "answered"))
        through_members = dict(counted.annotate(answered=pooled_answers).values_list("pk", "answered"))
        fresh = {keys[pk]: own[pk] + through_members[pk] for pk in missing}
        cache.set_many(fresh, timeout=CELLS_TIMEOUT_S)
        known.update(fresh)
    for submission in submissions:
        submission.answered = known[keys[submission.pk]]
    return submissions


def per_unit_rows(score: Any) -> list[dict]:
    """The metric's rows a prediction keeps: one, or several where the metric scores the unit
    more than once (`services.unit_scores`)."""
    return score if isinstance(score, list) else [score]


def prediction_rows(submissions: list[Submission]) -> dict[int, list[dict]]:
    """Per-unit score rows of each submission; a pool gets its members' rows besides its own."""
    owners: dict[int, list[int]] = {submission.pk: [submission.pk] for submission in submissions}
    members = list(Submission.objects.filter(pool__in=submissions).values_list("pk", "pool_id"))
    for member, pool in members:
        owners.setdefault(member, []).append(pool)
    rows: dict[int, list[dict]] = {submission.pk: [] for submission in submissions}
    scores = Prediction.objects.filter(submission__in=list(owners)).values_list(
        "submission_id", "item_id", "part", "score"
    )
    # A tester's row is scored per trial and names the trial, not the unit: the members' rows are
    # labelled with the unit their prediction answers, so that people and models pair by unit.
    member_ids = {member for member, _ in members}
    member_rows = []
    for submission_id, item_id, part, score in scores.iterator(chunk_size=5000):
        if submission_id in member_ids:
            member_rows.extend((submission_id, item_id, part, row) for row in per_unit_rows(score))
        else:
            rows[submission_id].extend(per_unit_rows(score))
    if not member_rows:
        return rows
    dataset = submissions[0].dataset
    spec = dataset.spec
    unit_at = member_units(dataset, {(item_id, part) for _, item_id, part, _ in member_rows})
    for submission_id, item_id, part, score in member_rows:
        unit_id = unit_at.get((item_id, part))
        if unit_id is not None and score:
            score = {**score, spec.unit_id_field: spec.unit_id_type(unit_id)}
        for owner in owners[submission_id]:
            rows[owner].append(score)
    return rows


def member_units(dataset: Dataset, places: set[tuple[int, int]]) -> dict[tuple[int, int], str]:
    """(item, part) -> unit id for these places only, read from what people are shown."""
    spec = dataset.spec
    parts: dict[int, list[int]] = {}
    for item_id, part in places:
        parts.setdefault(item_id, []).append(part)
    items = Item.objects.filter(pk__in=list(parts)).values_list("pk", "external_id", "payload")
    return {
        (pk, part): spec.unit_id(external_id, payload, part)
        for pk, external_id, payload in items.iterator(chunk_size=2000)
        for part in parts[pk]
    }


def passed_units(dataset: Dataset) -> set[str] | None:
    """The scoring units of the items nobody marked faulty; None when no item is marked."""
    marked = set(dataset.marks.values_list("item_id", flat=True))
    if not marked:
        return None
    return {unit.id for unit in scoring_units(dataset) if unit.item_id not in marked}


def scored_rows(submissions: list[Submission]) -> list[ScoredSubmission]:
    rows_by_submission = prediction_rows(submissions) if submissions else {}
    return [scored_row(submission, rows_by_submission[submission.pk]) for submission in submissions]


def scored_row(
    submission: Submission, item_rows: list[dict], cells: dict[str, Any] | None = None
) -> ScoredSubmission:
    return ScoredSubmission(
        producer=submission.producer,
        name=submission.name,
        setting=submission.setting,
        summary=submission.summary,
        item_rows=item_rows,
        parameters=submission.parameters if submission.origin == Submission.Origin.MODEL_RUN else {},
        pk=submission.pk,
        cells=cells,
    )


class RowNotFound(LookupError):
    """No report row has this label (the message lists the ones there are)."""


def report_row_labels(dataset: Dataset) -> list[str]:
    """The report's row labels, in its order (models first, Human last)."""
    groups = row_groups(dataset.spec, scored_submissions(dataset))
    return [label for _, label in sorted(groups, key=lambda key: (PRODUCER_ORDER.get(key[0], 1), key[1]))]


def labelled_rows(
    dataset: Dataset, labels: list[str] | None = None, submissions: list[Submission] | None = None
) -> dict[str, dict[str, ScoredSubmission]]:
    """Report rows by label (setting -> submission with its per-unit rows), reading the per-unit
    rows of the rows asked for only (`labels`; None: every row). RowNotFound names the rows there are."""
    submissions = scored_submissions(dataset) if submissions is None else submissions
    grouped = {label: row for (_, label), row in row_groups(dataset.spec, submissions).items()}
    for label in labels or ():
        if label not in grouped:
            known = ", ".join(repr(name) for name in grouped) or gettext("none")
            raise RowNotFound(
                gettext("%(dataset)s has no report row %(label)r (rows: %(known)s)")
                % {"dataset": dataset, "label": label, "known": known}
            )
    wanted = [submission for label in (labels or list(grouped)) for submission in grouped[label].values()]
    scored = {submission.pk: row for submission, row in zip(wanted, scored_rows(wanted), strict=True)}
    return {
        label: {setting: scored[submission.pk] for setting, submission in grouped[label].items()}
        for label in (labels or list(grouped))
    }


def submission_versions(dataset: Dataset, submissions: list[Submission]) -> str:
    """A digest of the submissions' ids, names (the rows' labels: a renamed row is computed again)
    and scoring times, their pools' members' too: what a cached computation from their per-unit
    rows is valid for."""
    members = Submission.objects.filter(pool__in=submissions).values_list("pk", "scored_at")
    versions = sorted(
        [(submission.pk, str(submission.scored_at), submission.name) for submission in submissions]
        + [(pk, str(scored_at), "") for pk, scored_at in members]
    )
    return hashlib.sha256(repr((dataset.pk, versions)).encode()).hexdigest()[:32]


def compare_report_rows(
    dataset: Dataset,
    label_a: str,
    label_b: str,
    *,
    metric: str | None = None,
    by: str | None = None,
    resamples: int = 2000,
    compute: bool = True,
) -> dict[str, Any] | None:
    """Two report rows compared on the units both answered (`evaluation.reports.compare_rows`),
    kept in the cache under the versions of the dataset's submissions.

    With `compute` False, only what is kept: None when nothing is (pages ask a worker for it,
    `evaluation.tasks.schedule_comparison`; the bootstrap over 60,000 units takes 20 s and more).
    A comparison that failed in the worker is kept as its error and raised again here.
    """
    from django.core.cache import cache

    if label_a == label_b:
        raise RowNotFound(gettext("choose two different rows"))
    strata = {choice.value for choice in dataset.spec.comparison_strata}
    if by and by not in strata:
        choices = ", ".join(sorted(strata)) or gettext("none")
        raise RowNotFound(
            gettext("%(title)s rows are compared within %(choices)s, not %(by)r")
            % {"title": dataset.spec.title, "choices": choices, "by": by}
        )
    submissions = scored_submissions(dataset)
    key = f"yardstick:compare:{submission_versions(dataset, submissions)}:" + hashlib_of(
        (label_a, label_b, metric, by, resamples)
    )
    cached = cache.get(key)
    if cached is not None:
        if "error" in cached:
            raise ComparisonInputError(cached["error"])
        return cached
    if not compute:
        return None
    try:
        groups = labelled_rows(dataset, [label_a, label_b], submissions)
        columns = compare_rows(
            dataset.spec, groups[label_a], groups[label_b], metric=metric, by=by, resamples=resamples
        )
    except (RowNotFound, ComparisonInputError) as error:
        # Kept as the answer for these rows and versions: a page waiting on a worker shows it.
        cache.set(key, {"error": str(error)}, timeout=7 * 24 * 3600)
        raise
    result = {
        "dataset": dataset.pk,
        "a": label_a,
        "b": label_b,
        "columns": columns,
        "parameters": {
            "interval": "BCa bootstrap over units resampled together (scipy.stats.bootstrap, paired=True)",
            "resamples": resamples,
            "confidence": 0.95,
            "seed": 0,
            "test": "McNemar exact on right/wrong units (statsmodels), Holm-adjusted over the table",
            "unit": "scoring unit; several testers' scores on a unit averaged first",
        },
    }
    cache.set(key, result, timeout=7 * 24 * 3600)
    return result


def hashlib_of(value: Any) -> str:
    return hashlib.sha256(repr(value).encode()).hexdigest()[:16]


OVERLAP_KINDS = (
    ("both_wrong", "both miss"),
    ("only_b_wrong", "only B misses"),
    ("only_a_wrong", "only A misses"),
    ("both_right", "both right"),
)


def overlap_split(dataset: Dataset, label_a: str, label_b: str, column_label: str) -> dict[str, Any]:
    """The units both rows answered in one right/wrong column, split by who missed them, with each
    unit's (item, part); kept in the cache under the submissions' versions (the split reads both
    rows' per-unit scores: seconds on 60,000 items, so it is done once, not per page of the list)."""
    from django.core.cache import cache

    from evaluation.comparison import error_overlap
    from evaluation.reports import paired_unit_values

    spec = dataset.spec
    submissions = scored_submissions(dataset)
    key = f"yardstick:overlap:{submission_versions(dataset, submissions)}:" + hashlib_of(
        (label_a, label_b, column_label)
    )
    cached = cache.get(key)
    if cached is not None:
        return cached
    column = next(
        (
            c
            for c in spec.report_columns()
            if f"{c.group} {c.label}".strip() == column_label.strip() and c.item_key
        ),
        None,
    )
    if column is None or not column.proportion:
        raise RowNotFound(
            gettext("%(title)s reports have no right/wrong column %(column)r")
            % {"title": spec.title, "column": column_label}
        )
    groups = labelled_rows(dataset, [label_a, label_b], submissions)
    first, second = groups[label_a].get(column.setting), groups[label_b].get(column.setting)
    if first is None or second is None:
        raise RowNotFound(
            gettext("one of the rows has no answers in the setting of %(column)s") % {"column": column_label}
        )
    units, x, y = paired_unit_values(spec, column, first, second)
    split = error_overlap(
        {unit: value >= 0.5 for unit, value in zip(units, x, strict=True)},
        {unit: value >= 0.5 for unit, value in zip(units, y, strict=True)},
    )
    owners = {side: submission_owners(submission.pk) for side, submission in (("a", first), ("b", second))}
    result = {
        "column": column_label,
        "setting": column.setting,
        "counts": {kind: len(split[kind]) for kind, _ in OVERLAP_KINDS},
        "units": split,
        "places": unit_places(dataset, owners["a"] + owners["b"], set(units)),
        "owners": owners,
    }
    cache.set(key, result, timeout=PAIRWISE_TIMEOUT_S)
    return result


def submission_owners(pk: int) -> list[int]:
    """A submission and, for a pooled row, its members (whose predictions hold the answers)."""
    return [pk, *Submission.objects.filter(pool_id=pk).values_list("pk", flat=True)]


def unit_places(dataset: Dataset, submission_pks: list[int], wanted: set[str]) -> dict[str, tuple[int, int]]:
    """unit id -> (item, part) for these units, from the submissions' prediction rows (the unit id
    a model's score row names; a tester's rows, which name trials, through what they were shown),
    without reading every item's record."""
    spec = dataset.spec
    places: dict[str, tuple[int, int]] = {}
    unnamed: set[tuple[int, int]] = set()
    members = set(
        Submission.objects.filter(pk__in=submission_pks, pool__isnull=False).values_list("pk", flat=True)
    )
    rows = Prediction.objects.filter(submission__in=submission_pks).values_list(
        "submission_id", "item_id", "part", f"score__{spec.unit_id_field}"
    )
    for submission_id, item_id, part, unit_id in rows.iterator(chunk_size=5000):
        if submission_id in members or unit_id is None:
            unnamed.add((item_id, part))  # a tester's row names the trial, not the unit
        elif str(unit_id) in wanted:
            places[str(unit_id)] = (item_id, part)
    for place, unit_id in member_units(dataset, unnamed).items():
        if str(unit_id) in wanted:
            places.setdefault(str(unit_id), place)
    return places


def error_overlap_units(
    dataset: Dataset, label_a: str, label_b: str, column_label: str, kind: str, *, limit: int
) -> dict[str, Any]:
    """One group of `overlap_split` (such as "both_wrong"): its first `limit` units, each with its
    item and both rows' answers (a pooled row: every tester's answer)."""
    split = overlap_split(dataset, label_a, label_b, column_label)
    chosen = split["units"][kind]
    shown = [unit for unit in chosen[:limit] if unit in split["places"]]
    unit_at = {split["places"][unit]: unit for unit in shown}
    items = dataset.items.in_bulk({item_id for item_id, _ in unit_at})
    answers: dict[str, dict[str, list[Any]]] = {unit: {"a": [], "b": []} for unit in shown}
    for side in ("a", "b"):
        rows = Prediction.objects.filter(
            submission__in=split["owners"][side], item_id__in=list(items), answer__isnull=False
        ).values_list("item_id", "part", "answer")
        for item_id, part, answer in rows:
            unit = unit_at.get((item_id, part))
            if unit is not None:
                answers[unit][side].append(answer)
    return {
        **{key: split[key] for key in ("column", "setting", "counts")},
        "total": len(chosen),
        "shown": [{"unit": unit, "item": items[split["places"][unit][0]], **answers[unit]} for unit in shown],
    }


#: How long a computed table of every pair is kept (it is found again only under the same
#: submissions' versions, so a stale one is never shown).
PAIRWISE_TIMEOUT_S = 7 * 24 * 3600
#: Resamples per paired interval of the table of every pair (the two-row page uses 2,000).
PAIRWISE_RESAMPLES = 1000


def pairwise_key(dataset: Dataset, submissions: list[Submission] | None = None) -> str:
    submissions = scored_submissions(dataset) if submissions is None else submissions
    return f"yardstick:pairwise:{submission_versions(dataset, submissions)}:{PAIRWISE_RESAMPLES}"


def cached_pairwise(dataset: Dataset) -> dict[str, Any] | None:
    """The table of every pair as last computed for these submissions' versions, or None (not
    computed yet; `tasks.schedule_pairwise` asks a worker for it). A failed computation is kept
    as {"error": message}."""
    from django.core.cache import cache

    return cache.get(pairwise_key(dataset))


def pairwise_report(dataset: Dataset) -> dict[str, Any]:
    """Every pair of report rows on the headline columns, computed now and kept in the cache under
    the versions of the submissions it was computed from (a new or rescored submission computes it
    again). Minutes on a large dataset: the report page has a worker run it (evaluation.tasks)."""
    from django.core.cache import cache

    from evaluation.reports import pairwise_comparisons

    submissions = scored_submissions(dataset)
    key = pairwise_key(dataset, submissions)
    cached = cache.get(key)
    if cached is not None:
        return cached
    started = time.perf_counter()
    groups = labelled_rows(dataset, None, submissions)
    try:
        pairs = pairwise_comparisons(dataset.spec, groups, resamples=PAIRWISE_RESAMPLES)
    except Exception as error:  # kept for the page to say, instead of a "computing" that never ends
        result = {"error": f"{type(error).__name__}: {error}"}
        cache.set(key, result, timeout=3600)
        raise
    result = {
        "pairs": pairs,
        "resamples": PAIRWISE_RESAMPLES,
        "rows": list(groups),
        "computed_at": timezone.now().strftime("%Y-%m-%d %H:%M UTC"),
        "seconds": round(time.perf_counter() - started, 1),
    }
    cache.set(key, result, timeout=PAIRWISE_TIMEOUT_S)
    return result


def report_table(
    dataset: Dataset,
    submissions: list[Submission] | None = None,
    *,
    keep_units: set[str] | None = None,
    diagnostic: DiagnosticTable | None = None,
) -> Table:
    """The dataset's side-by-side table, with intervals from the stored per-unit rows
    (`submissions`: the dataset's `scored_submissions`, when the caller has them already;
    `keep_units`: only these units, as `passed_units` gives them; `diagnostic`: that diagnostic
    table of the benchmark's instead of the main one).

    Each submission's cells are kept in the cache under its version (its scoring time, a pool's
    members' too, and the spec's columns): a report reads a submission's per-unit rows once, not
    on every view (perf/results/compare_rows.md: 300,000 rows read per view before)."""
    from django.core.cache import cache

    spec = dataset.spec
    submissions = scored_submissions(dataset) if submissions is None else submissions
    if keep_units is not None:
        return build_table(spec, scored_rows(submissions), keep_units=keep_units, diagnostic=diagnostic)
    keys = cell_keys(spec, submissions)
    known = cache.get_many(list(keys.values()))
    missing = [submission for submission in submissions if keys[submission.pk] not in known]
    fresh = {}
    for row in scored_rows(missing):
        row.cells = fresh[keys[row.pk]] = submission_cells(spec, row)
        known[keys[row.pk]] = row.cells
    if fresh:
        cache.set_many(fresh, timeout=CELLS_TIMEOUT_S)
    return build_table(
        spec,
        [scored_row(submission, [], known[keys[submission.pk]]) for submission in submissions],
        diagnostic=diagnostic,
    )


def diagnostic_tables(dataset: Dataset, submissions: list[Submission] | None = None) -> list[Table]:
    """The benchmark's diagnostic tables that have something to show on this dataset (a column
    some row has a value for), in the spec's order; their cells are kept with the main table's."""
    submissions = scored_submissions(dataset) if submissions is None else submissions
    if not submissions:
        return []
    tables = [report_table(dataset, submissions, diagnostic=table) for table in dataset.spec.diagnostics]
    return [table for table in tables if table.columns and table.rows]


#: How long a submission's computed cells are kept (found again only under its version).
CELLS_TIMEOUT_S = 30 * 24 * 3600


def cell_keys(spec, submissions: list[Submission]) -> dict[int, str]:
    """submission -> the cache key of its cells: its scoring time, its pool members' (a pooled
    row's cells come from their rows), and the spec's columns as declared."""
    members: dict[int, list[tuple[int, str]]] = {}
    for pool, pk, scored_at in Submission.objects.filter(pool__in=submissions).values_list(
        "pool_id", "pk", "scored_at"
    ):
        members.setdefault(pool, []).append((pk, str(scored_at)))
    columns = hashlib_of(
        [
            (
                c.group,
                c.label,
                c.setting,
                c.summary_path,
                c.item_key,
                c.proportion,
                c.upper_bound,
                c.optional,
                c.count,
            )
            for c in spec.all_columns()
        ]
    )
    return {
        submission.pk: "yardstick:cells:"
        + hashlib_of(
            (
                spec.name,
                columns,
                submission.pk,
                str(submission.scored_at),
                sorted(members.get(submission.pk, [])),
            )
        )
        for submission in submissions
    }


#: How long a failed scoring job stays on its report page.
FAILED_JOBS_SHOWN = timedelta(days=1)


def scoring_jobs(dataset: Dataset) -> dict[str, Any] | None:
    """The dataset's uploads being scored by a worker, and those that failed in the last day, each
    with its stage and counts (live from the worker while it runs); None when there are none."""
    jobs = list(
        dataset.scoring_jobs.filter(
            Q(status__in=ACTIVE)
            | Q(status=ScoringJob.Status.FAILED, finished_at__gte=timezone.now() - FAILED_JOBS_SHOWN)
        )[:10]
    )
    if not jobs:
        return None
    entries = [{"job": job, **job.progress()} for job in jobs]
    return {"jobs": entries, "running": any(job.active for job in jobs)}
