"""Event and View scored BATCH samples at a time, so that memory holds one batch of samples and a
few bytes of results per sample (`score_event`, `score_view`), the per-item rows made from those
results when read, and the scoring of a prediction file against a data.jsonl file
(`score_file`), read as it is scored."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import IO, Any

import numpy as np

from benchmarks.records import FormatError, RecordError, RecordErrors, paused_gc
from evaluation.metrics.scored import Scored
from plugins.trance import formats
from plugins.trance.formats import BASIC, EVENT, FINAL_CAMERAS, SETTINGS, VIEW
from plugins.trance.metric.encoding import EncodedAnswers, Sample, Step
from plugins.trance.metric.predictions import (
    PackedPredictions,
    parse_predictions,
    prediction_problems,
    read_packed_predictions,
)
from plugins.trance.metric.scores import evaluate_event, score_basic
from plugins.trance.metric.summary import EventResults, event_summary, parameters
from plugins.trance.metric.view import ViewCameras

#: Samples scored at a time: memory holds one batch of parsed samples, never the whole file.
BATCH = 4096


def batches(samples: Iterable[Sample], size: int | None = None) -> Iterator[list[Sample]]:
    """Lists of `size` samples (BATCH, read when called, so a test may make batches small)."""
    iterator = iter(samples)
    while batch := list(itertools.islice(iterator, size or BATCH)):
        yield batch


@dataclass(slots=True)
class EventRun:
    """The Event / View scoring of a sequence of samples: ids, per-sample arrays, the samples
    without a prediction, the predictions for unknown idx, and (View) each sample's camera code
    (index into FINAL_CAMERAS)."""

    idxs: list[Any]
    results: EventResults
    missing: list[Any]
    extra: list[Any]
    cameras: np.ndarray | None = None


def evaluate_event_batches(
    samples: Iterable[Sample],
    predictions: Mapping[int, Sequence[Step]] | PackedPredictions,
    cameras: Mapping[Any, str] | None = None,
) -> EventRun:
    """`evaluate_event` over samples read BATCH at a time (a list, or a stream of a file):
    memory holds one batch of samples and the per-sample arrays. Every fault of every batch is
    reported in one FormatError; the same idx twice is a ValueError naming it. With `cameras`
    (View), every sample needs a known final camera."""
    idxs: list[Any] = []
    seen: set[Any] = set()
    missing: list[Any] = []
    parts: list[EventResults] = []
    camera_codes: list[int] = []
    errors = RecordErrors()
    camera_code = {camera: code for code, camera in enumerate(FINAL_CAMERAS)}
    for batch in batches(samples):
        batch_idxs = [sample["idx"] for sample in batch]
        for idx in batch_idxs:
            if idx in seen:
                raise ValueError(f"idx {idx}: the samples hold this idx twice")
            seen.add(idx)
        idxs.extend(batch_idxs)
        missing.extend(idx for idx in batch_idxs if idx not in predictions)
        if cameras is not None:
            for idx in batch_idxs:
                camera = cameras.get(idx)
                code = camera_code.get(camera) if isinstance(camera, str) else None
                if code is None:
                    message = "no final camera given" if camera is None else f"unknown camera {camera!r}"
                    errors.append(
                        RecordError(
                            f"idx {idx}", "camera", f"{message} (expected one of {', '.join(FINAL_CAMERAS)})"
                        )
                    )
                    code = 0
                camera_codes.append(code)
        answers: Sequence[Sequence[Step]] | EncodedAnswers
        if isinstance(predictions, PackedPredictions):
            answers = EncodedAnswers.from_packed([predictions.get(idx, b"") for idx in batch_idxs])
        else:
            answers = [predictions.get(idx, ()) for idx in batch_idxs]
        try:
            parts.append(evaluate_event(batch, answers))
        except FormatError as error:
            errors.extend(error.errors)
    if errors:
        raise FormatError(errors)
    results = (
        EventResults(
            *(np.concatenate([getattr(part, name) for part in parts]) for name in EventResults.__slots__)
        )
        if len(parts) > 1
        else parts[0]
        if parts
        else evaluate_event([], [])
    )
    return EventRun(
        idxs=idxs,
        results=results,
        missing=missing,
        extra=[idx for idx in predictions if idx not in seen],
        cameras=np.array(camera_codes, dtype=np.int8) if cameras is not None else None,
    )


#: The keys of an Event / View item, in order (View adds "camera").
EVENT_ITEM_KEYS = (
    "idx",
    "dist",
    "norm_dist",
    "loose_correct",
    "correct",
    "err_overlap",
    "err_invalid_position",
    "pred_step",
    "target_step",
    "order_sensitive",
    "missing",
)


class EventItems(Sequence[dict[str, Any]]):
    """The per-item rows of an Event / View run, each made from the run's arrays when read: a
    list of 500,000 dicts would be most of the memory of a large run, the arrays are a few
    bytes a sample."""

    def __init__(self, run: EventRun) -> None:
        self.run = run
        self.missing = set(run.missing)

    def __len__(self) -> int:
        return len(self.run.idxs)

    def __getitem__(self, number: Any) -> Any:
        if isinstance(number, slice):
            return [self.rows(index, index + 1)[0] for index in range(*number.indices(len(self)))]
        if number < 0:
            number += len(self)
        if not 0 <= number < len(self):
            raise IndexError(number)
        return self.rows(number, number + 1)[0]

    def __iter__(self) -> Iterator[dict[str, Any]]:
        for start in range(0, len(self), BATCH):
            yield from self.rows(start, start + BATCH)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, str | bytes):
            return NotImplemented
        return len(self) == len(other) and all(
            mine == theirs for mine, theirs in zip(self, other, strict=True)
        )

    __hash__ = None  # type: ignore[assignment]

    def rows(self, start: int, stop: int) -> list[dict[str, Any]]:
        results, idxs = self.run.results, self.run.idxs[start:stop]
        columns = [
            idxs,
            *(
                getattr(results, name)[start:stop].tolist()
                for name in (
                    "dist",
                    "norm_dist",
                    "loose_correct",
                    "correct",
                    "err_overlap",
                    "err_invalid_position",
                    "pred_step",
                    "target_step",
                    "order_sensitive",
                )
            ),
            [idx in self.missing for idx in idxs],
        ]
        keys: tuple[str, ...] = EVENT_ITEM_KEYS
        if self.run.cameras is not None:
            columns.append([FINAL_CAMERAS[code] for code in self.run.cameras[start:stop].tolist()])
            keys = (*keys, "camera")
        return [dict(zip(keys, values, strict=True)) for values in zip(*columns, strict=True)]


def event_scored(run: EventRun, params: dict[str, Any]) -> Scored:
    summary = event_summary(run.results, params)
    if run.cameras is not None:
        summary["by_camera"] = {
            camera: run.results.group_summary(run.cameras == code)
            for code, camera in enumerate(FINAL_CAMERAS)
        }
    summary["missing_predictions"], summary["extra_predictions"] = len(run.missing), len(run.extra)
    problems = prediction_problems(run.missing, run.extra, "the initial state stays as it is")
    return Scored(items=EventItems(run), summary=summary, params=params, problems=problems)


def score_event(
    samples: Iterable[Sample], predictions: Mapping[int, Sequence[Step]] | PackedPredictions
) -> Scored:
    """Event: AD, AND, LAcc, Acc, EO and the error rates over all samples, and by true length.

    Items: idx, dist, norm_dist, loose_correct, correct, err_overlap, err_invalid_position,
    pred_step, target_step, order_sensitive, missing. Summary: n, AD, AND, LAcc, Acc, EO,
    OverlapErrorRate, InvalidPositionErrorRate (shares of answers raising each error), StepDiff
    (mean pred_step - target_step), order_sensitive_n, ``by_length`` {1..4: the same}.
    FormatError for a bad step (the released code crashes on those). `samples` may be a stream:
    they are scored BATCH at a time.
    """
    with paused_gc():
        run = evaluate_event_batches(samples, predictions)
    return event_scored(run, parameters(EVENT))


def score_view(
    samples: Iterable[Sample],
    predictions: Mapping[int, Sequence[Step]] | PackedPredictions,
    cameras: Mapping[Any, str],
) -> Scored:
    """View: Event's metrics, plus each item's final ``camera`` and a ``by_camera`` summary.

    `cameras` maps each sample's idx to the final view it was shown with (Camera_Left,
    Camera_Center or Camera_Right); every sample needs one (FormatError otherwise).
    """
    with paused_gc():
        run = evaluate_event_batches(samples, predictions, cameras)
    return event_scored(run, parameters(VIEW, cameras="given"))


def score_file(
    gt_data: bytes | IO[bytes],
    predictions_data: bytes | IO[bytes],
    *,
    setting: str,
    cameras: Mapping[int, str] | None = None,
    camera_seed: int = 0,
    gt_source: str = "ground truth",
    predictions_source: str = "predictions",
) -> Scored:
    """Score a prediction file against a data.jsonl file (raw bytes, or files open for reading)
    in one setting.

    The ground truth is read by the TRANCE format module (`formats.iter_samples`: the checks of
    `formats.parse`, every bad record named, without building catalog records), one line at a
    time when it is an open file and scored BATCH samples at a time, so memory holds one batch of
    samples, the predictions and a few bytes of results per sample; the predictions by
    `parse_predictions`.

    `setting`: "basic", "event" or "view". For View, `cameras` (idx -> final camera) gives the
    views the answers were made from; explicit cameras always take precedence. Without them
    the cameras come from ``view_cameras(samples, camera_seed)`` and the parameters say so.
    """
    if setting not in SETTINGS:
        raise ValueError(f"unknown TRANCE setting {setting!r} (expected one of {', '.join(SETTINGS)})")
    # Collection stays off while the files are read: a collection over the parsed objects kept
    # alive (the predictions, a batch of samples) would walk them again and again.
    with paused_gc():
        read = parse_predictions if setting == BASIC else read_packed_predictions
        predictions = read(predictions_data, source=predictions_source)
        samples = formats.iter_samples(gt_data, source=gt_source)
        if setting == BASIC:
            truths = [
                {"idx": sample["idx"], "transformations": sample["transformations"]} for sample in samples
            ]
            scored = score_basic(truths, predictions)
        elif setting == EVENT:
            scored = score_event(samples, predictions)
        elif cameras is not None:
            scored = score_view(samples, predictions, cameras)
        else:
            scored = score_view(samples, predictions, ViewCameras(camera_seed))
            scored.params["cameras"] = f"view_cameras(seed={camera_seed})"
        del samples, predictions
    return scored
