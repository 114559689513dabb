"""Writes of the evaluation engine: storing submitted predictions and scoring them.

One scoring path: every Submission, whatever produced it, is scored here by the benchmark's
pure metric module (evaluation/metrics/), against the catalog's ground truth rebuilt in the
official format, exactly as `manage.py score` does with files.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.utils import timezone

from benchmarks.models import Dataset
from benchmarks.records import FormatError, RecordError
from benchmarks.registry import format_module
from evaluation.metrics.scored import Scored
from evaluation.models import Prediction, Submission


class SubmissionRefused(ValueError):
    """The submission cannot be scored on this dataset; nothing was stored."""


@dataclass(frozen=True)
class MetricAdapter:
    """How a benchmark's metric module meets the catalog.

    `answers` turns a parsed prediction file into {item external id: stored answer};
    `run` scores the dataset's official records against the stored answers;
    `row_id` names the item a per-item row belongs to.
    """

    module: str
    id_field: str
    answers: Callable[[Any], dict[str, Any]]
    run: Callable[[Any, Submission, list[dict], dict[str, Any]], Scored]
    row_id: Callable[[dict], str]
    settings: tuple[str, ...] = ("",)

    def metric(self):
        return importlib.import_module(self.module)


def run_stevqa(metric, submission: Submission, records: list[dict], answers: dict[str, Any]) -> Scored:
    if submission.dataset.meta.get("layout") != "test":
        raise SubmissionRefused(
            "STE-VQA answers are scored against test-layout ground truth (one item per question)"
        )
    return metric.score(records, list(answers.values()), variant=submission.variant or "official")


def run_trance(metric, submission: Submission, records: list[dict], answers: dict[str, Any]) -> Scored:
    predictions = {int(key): steps for key, steps in answers.items()}
    if submission.setting == "basic":
        return metric.score_basic(records, predictions)
    if submission.setting == "event":
        return metric.score_event(records, predictions)
    cameras = submission.parameters.get("cameras")
    if cameras:
        return metric.score_view(records, predictions, {int(key): value for key, value in cameras.items()})
    scored = metric.score_view(records, predictions, metric.view_cameras(records))
    scored.params["cameras"] = "view_cameras(seed=0)"
    return scored


def run_clevrref(metric, submission: Submission, records: list[dict], answers: dict[str, Any]) -> Scored:
    scenes = list(submission.dataset.scenes.order_by("position").values_list("data", flat=True))
    if not scenes:
        raise SubmissionRefused(
            "CLEVR-Ref+ answers need the dataset's scenes (import it with its scenes file)"
        )
    return metric.score(records, scenes, list(answers.values()))


ADAPTERS: dict[str, MetricAdapter] = {
    "stevqa": MetricAdapter(
        module="evaluation.metrics.stevqa",
        id_field="question_id",
        answers=lambda parsed: {str(record["question_id"]): record for record in parsed},
        run=run_stevqa,
        row_id=lambda row: str(row["question_id"]),
        settings=("", "mono", "bi"),
    ),
    "cric": MetricAdapter(
        module="evaluation.metrics.cric",
        id_field="question_id",
        answers=lambda parsed: {str(record["question_id"]): record for record in parsed},
        run=lambda metric, submission, records, answers: metric.score(records, list(answers.values())),
        row_id=lambda row: str(row["question_id"]),
    ),
    "clevrref": MetricAdapter(
        module="evaluation.metrics.clevrref",
        id_field="refexp_index",
        answers=lambda parsed: {str(record["refexp_index"]): record for record in parsed},
        run=run_clevrref,
        row_id=lambda row: str(row["refexp_index"]),
    ),
    "trance": MetricAdapter(
        module="evaluation.metrics.trance",
        id_field="idx",
        answers=lambda parsed: {str(idx): steps for idx, steps in parsed.items()},
        run=run_trance,
        row_id=lambda row: str(row["idx"]),
        settings=("basic", "event", "view"),
    ),
}


def official_records(dataset: Dataset) -> tuple[list[dict], dict[str, int]]:
    """The dataset's items as official records (file order), and item ids by external id."""
    module = format_module(dataset.benchmark)
    rows = dataset.items.order_by("position").values_list("pk", "external_id", "payload", "ground_truth")
    records, item_ids = [], {}
    for pk, external_id, payload, ground_truth in rows.iterator(chunk_size=2000):
        records.append(module.to_official(payload, ground_truth))
        item_ids[external_id] = pk
    return records, item_ids


def submit_predictions(
    *,
    dataset: Dataset,
    name: str,
    data: bytes,
    kind: str = Submission.Kind.MODEL,
    setting: str = "",
    variant: str = "official",
    source: str = "",
    parameters: dict | None = None,
    created_by=None,
) -> Submission:
    """Store a prediction file as a Submission on `dataset` and score it.

    A file that does not parse, or that answers items the dataset does not have, is refused
    with every bad record named (FormatError); nothing is stored.
    """
    adapter = ADAPTERS[dataset.benchmark]
    if setting not in adapter.settings:
        allowed = ", ".join(repr(value) for value in adapter.settings)
        raise SubmissionRefused(
            f"setting {setting!r} is not one of {allowed} for {dataset.get_benchmark_display()}"
        )
    if not name.strip():
        raise SubmissionRefused("a submission needs a name (the row label in reports)")
    answers = adapter.answers(adapter.metric().parse_predictions(data, source=source))
    known = dict(dataset.items.values_list("external_id", "pk"))
    unknown = [key for key in answers if key not in known]
    if unknown:
        raise FormatError(
            [
                RecordError(f"prediction {key}", adapter.id_field, f"no item with this id in {dataset}")
                for key in unknown
            ],
            source=source,
        )
    with transaction.atomic():
        submission = Submission.objects.create(
            dataset=dataset,
            kind=kind,
            name=name,
            setting=setting,
            variant=variant if dataset.benchmark == "stevqa" else "official",
            source=source,
            parameters=parameters or {},
            created_by=created_by,
        )
        Prediction.objects.bulk_create(
            [
                Prediction(submission=submission, item_id=known[key], answer=answer)
                for key, answer in answers.items()
            ],
            batch_size=2000,
        )
        score_submission(submission)
    return submission


def score_submission(submission: Submission) -> Submission:
    """(Re)score a submission: per-item rows onto its predictions, the summary onto itself."""
    adapter = ADAPTERS[submission.dataset.benchmark]
    records, item_ids = official_records(submission.dataset)
    external_ids = {pk: external_id for external_id, pk in item_ids.items()}
    predictions = list(submission.predictions.all())
    answers = {
        external_ids[prediction.item_id]: prediction.answer
        for prediction in predictions
        if prediction.answer is not None
    }
    scored = adapter.run(adapter.metric(), submission, records, answers)
    rows = {adapter.row_id(row): row for row in scored.items}
    for prediction in predictions:
        prediction.score = rows.get(external_ids[prediction.item_id], {})
    Prediction.objects.bulk_update(predictions, ["score"], batch_size=2000)
    # Items left unanswered are scored too (as the metric defines an empty answer); keeping their
    # rows makes every item count in the report's intervals, not just the answered ones.
    answered = {prediction.item_id for prediction in predictions}
    Prediction.objects.bulk_create(
        [
            Prediction(submission=submission, item_id=pk, answer=None, score=rows.get(external_id, {}))
            for external_id, pk in item_ids.items()
            if pk not in answered
        ],
        batch_size=2000,
    )
    submission.summary = scored.summary
    submission.parameters = {**submission.parameters, **scored.params}
    submission.problems = scored.problems
    submission.scored_at = timezone.now()
    submission.save(update_fields=["summary", "parameters", "problems", "scored_at"])
    return submission
