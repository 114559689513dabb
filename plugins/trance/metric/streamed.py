"""Event and View scored BATCH samples at a time, so that memory holds one batch of samples and a
few bytes of results per unit (`score_event`; View as released, every sample under each final
camera, `score_view_cameras`; View with one camera per answer, `score_view`), the per-unit rows
made from those results when read, and the scoring of a prediction file against a data.jsonl
file (`score_file`), read as it is scored."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import IO, Any

import numpy as np

from benchmarks.records import FormatError, RecordError, RecordErrors, paused_gc
from evaluation.metrics.scored import Scored, describe_ids
from plugins.trance import formats
from plugins.trance.formats import BASIC, EVENT, FINAL_CAMERAS, SETTINGS, VIEW
from plugins.trance.metric.encoding import EncodedAnswers, Sample, Step
from plugins.trance.metric.predictions import (
    ANSWER_PER_CAMERA_IN_VIEW_ONLY,
    PackedPredictions,
    answer_for_camera,
    answer_form_problems,
    parse_predictions,
    prediction_problems,
    read_packed_predictions,
)
from plugins.trance.metric.reading import EncodedSamples, SampleBatches, read_sample_batches
from plugins.trance.metric.scores import encode_samples, evaluate_encoded, evaluate_event, score_basic
from plugins.trance.metric.summary import (
    ONE_CAMERA,
    VARIANT,
    VARIANTS,
    EventResults,
    event_summary,
    parameters,
)
from plugins.trance.metric.view import ViewCameras

#: Samples scored at a time: memory holds one batch of parsed samples, never the whole file.
BATCH = 4096
#: A file read as arrays (`reading.read_sample_batches`) is scored this many BATCHes at a time:
#: its batch holds a few hundred bytes a sample, not the parsed samples, and the replays of
#: order-sensitivity are numpy calls on small arrays, fewer for larger batches.
FILE_BATCHES = 4


def batches(samples: Iterable[Sample], size: int | None = None) -> Iterator[list[Sample]]:
    """Lists of `size` samples (BATCH, read when called, so a test may make batches small)."""
    iterator = iter(samples)
    while batch := list(itertools.islice(iterator, size or BATCH)):
        yield batch


@dataclass(slots=True)
class EventRun:
    """The Event / View scoring of a sequence of samples, unit by unit (a unit is a sample in
    Event, a (sample, final camera) pair in View): each unit's idx, the per-unit arrays, which
    units had no answer, the labels of those units and the predictions for unknown idx, and
    (View) each unit's camera code (index into FINAL_CAMERAS) and the number of samples."""

    idxs: list[Any]
    results: EventResults
    missing: list[Any]
    extra: list[Any]
    cameras: np.ndarray | None = None
    unanswered: np.ndarray | None = None
    samples: int = 0
    seconds: np.ndarray | None = None


#: What `evaluate_event_batches` takes as the cameras of a View sample: one camera or several.
CameraChoice = str | Sequence[str]
#: Each final camera's code (its index in FINAL_CAMERAS), and all three: a View sample's units.
CAMERA_CODES = {camera: code for code, camera in enumerate(FINAL_CAMERAS)}
EVERY_CAMERA = tuple(range(len(FINAL_CAMERAS)))


def unit_camera_codes(idx: Any, chosen: Any, errors: RecordErrors) -> list[int]:
    """The camera codes a sample is scored under, from what `cameras` gives for it (one camera,
    or a list of distinct cameras); every fault is noted and the sample gets no unit."""
    names = [chosen] if isinstance(chosen, str) else chosen
    if chosen is None or not isinstance(names, list | tuple) or not names:
        message = (
            "no final camera given"
            if chosen is None
            else f"expected a camera or a list of them, got {chosen!r}"
        )
        errors.append(
            RecordError(f"idx {idx}", "camera", f"{message} (expected one of {', '.join(FINAL_CAMERAS)})")
        )
        return []
    codes = []
    for name in names:
        code = CAMERA_CODES.get(name) if isinstance(name, str) else None
        if code is None or code in codes:
            problem = f"camera {name!r} given twice" if code is not None else f"unknown camera {name!r}"
            errors.append(
                RecordError(f"idx {idx}", "camera", f"{problem} (expected one of {', '.join(FINAL_CAMERAS)})")
            )
            return []
        codes.append(code)
    return codes


def evaluate_event_batches(
    samples: Iterable[Sample] | SampleBatches,
    predictions: Mapping[int, Any] | PackedPredictions,
    cameras: Mapping[Any, CameraChoice] | None = None,
    *,
    view: bool = False,
    seconds: Mapping[Any, float] | None = None,
) -> EventRun:
    """`evaluate_event` over samples read BATCH at a time (a list, or a stream of a file), or
    over the batches of a file already read as arrays (`reading.read_sample_batches`): memory
    holds one batch of samples and the per-unit arrays. Every fault of every batch is
    reported in one FormatError; the same idx twice is a ValueError naming it.

    Event (`view` False): one unit per sample, answered by a list of steps. View: one unit per
    (sample, camera), for the cameras `cameras` gives for the sample (one camera, or a list),
    every final camera when `cameras` is None; each unit is answered by the sample's list of
    steps, or by its camera's entry of an answer per camera (no entry: no answer). With
    `cameras`, every sample needs known cameras. `seconds`: idx -> the seconds its answer took
    (human trials), kept on its units.
    """
    idxs: list[Any] = []
    seen: set[Any] = set()
    missing: list[Any] = []
    parts: list[EventResults] = []
    camera_codes: list[int] = []
    unanswered: list[bool] = []
    unit_seconds: list[float | None] = []
    errors = RecordErrors()
    packed = isinstance(predictions, PackedPredictions)
    count = 0
    for batch in samples if isinstance(samples, SampleBatches) else batches(samples):
        encoded_samples = batch if isinstance(batch, EncodedSamples) else None
        batch_idxs = (
            encoded_samples.idxs if encoded_samples is not None else [sample["idx"] for sample in batch]
        )
        for idx in batch_idxs:
            if idx in seen:
                raise ValueError(f"idx {idx}: the samples hold this idx twice")
            seen.add(idx)
        count += len(batch_idxs)
        units: list[int] = []
        answers: list[Any] = []
        batch_answers = list(map(predictions.get, batch_idxs)) if packed and not view else []
        quick = bool(batch_answers) and set(map(type, batch_answers)) <= {bytes, type(None)}
        if quick:
            # Event, every answer a packed list of steps or none: what the loop below does for
            # each sample, a few calls for the batch.
            idxs += batch_idxs
            unanswered += [answer is None for answer in batch_answers]
            missing += [idx for idx, answer in zip(batch_idxs, batch_answers, strict=True) if answer is None]
            answers = [b"" if answer is None else answer for answer in batch_answers]
            if seconds is not None:
                unit_seconds += map(seconds.get, batch_idxs)
        for number, idx in enumerate(() if quick else batch_idxs):
            answer = predictions.get(idx)
            if not view:
                codes: Sequence[int | None] = (None,)
                if isinstance(answer, dict):
                    errors.append(RecordError(f"idx {idx}", "answer", ANSWER_PER_CAMERA_IN_VIEW_ONLY))
                    answer = b"" if packed else ()
            elif cameras is None:
                codes = EVERY_CAMERA
            else:
                codes = unit_camera_codes(idx, cameras.get(idx), errors)
            if isinstance(answer, dict) and not packed:
                # Read files are checked when read; answers given in memory are checked here, and
                # a faulty one is scored as empty so that the other faults are found too.
                problems = answer_form_problems(f"idx {idx}", answer)
                if problems:
                    errors.extend(problems)
                    answer = ()
            for code in codes:
                steps = answer_for_camera(answer, None if code is None else FINAL_CAMERAS[code])
                units.append(number)
                idxs.append(idx)
                if steps is None:
                    missing.append(idx if code is None else f"{idx} {FINAL_CAMERAS[code]}")
                    unanswered.append(True)
                    steps = b"" if packed else ()
                else:
                    unanswered.append(False)
                answers.append(steps)
                if code is not None:
                    camera_codes.append(code)
                if seconds is not None:
                    unit_seconds.append(seconds.get(idx))
        encoded: Sequence[Sequence[Step]] | EncodedAnswers = (
            EncodedAnswers.from_packed(answers) if packed else answers
        )
        try:
            parts.append(
                evaluate_encoded(
                    encoded_samples if encoded_samples is not None else encode_samples(batch),
                    encoded,
                    None if not view else np.array(units, dtype=np.int64),
                )
            )
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
        cameras=np.array(camera_codes, dtype=np.int8) if view else None,
        unanswered=np.array(unanswered, dtype=bool),
        samples=count,
        seconds=np.array([np.nan if value is None else value for value in unit_seconds], dtype=np.float64)
        if seconds is not None
        else None,
    )


#: The keys of an Event / View item, in order (View adds "camera", human trials "seconds").
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
    "order_error_share",
    "missing",
)
#: The per-unit arrays an item is read from, in EVENT_ITEM_KEYS order.
RESULT_COLUMNS = EVENT_ITEM_KEYS[1:-1]


class EventItems(Sequence[dict[str, Any]]):
    """The per-unit rows of an Event / View run, each made from the run's arrays when read: a
    list of 500,000 dicts would be most of the memory of a large run, the arrays are a few
    bytes a unit."""

    def __init__(self, run: EventRun) -> None:
        self.run = run

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
        run = self.run
        results, idxs = run.results, run.idxs[start:stop]
        columns = [
            idxs,
            *(getattr(results, name)[start:stop].tolist() for name in RESULT_COLUMNS),
            run.unanswered[start:stop].tolist(),
        ]
        keys: tuple[str, ...] = EVENT_ITEM_KEYS
        if run.cameras is not None:
            columns.append([FINAL_CAMERAS[code] for code in run.cameras[start:stop].tolist()])
            keys = (*keys, "camera")
        if run.seconds is not None:
            columns.append([None if np.isnan(value) else value for value in run.seconds[start:stop].tolist()])
            keys = (*keys, "seconds")
        return [dict(zip(keys, values, strict=True)) for values in zip(*columns, strict=True)]


def mean_seconds(seconds: np.ndarray | None, selected: np.ndarray) -> float | None:
    """The mean of the times given for the selected units; None when none has one."""
    if seconds is None:
        return None
    timed = seconds[selected & ~np.isnan(seconds)]
    return float(timed.mean()) if len(timed) else None


def event_scored(run: EventRun, params: dict[str, Any]) -> Scored:
    summary = event_summary(run.results, params)
    if run.cameras is not None:
        summary["samples"] = run.samples
        summary["by_camera"] = {}
        for code, camera in enumerate(FINAL_CAMERAS):
            selected = run.cameras == code
            summary["by_camera"][camera] = run.results.group_summary(selected)
            if run.seconds is not None:
                summary["by_camera"][camera]["seconds"] = mean_seconds(run.seconds, selected)
        if run.seconds is not None:
            summary["seconds"] = mean_seconds(run.seconds, np.ones(len(run.seconds), dtype=bool))
    summary["missing_predictions"], summary["extra_predictions"] = len(run.missing), len(run.extra)
    empty_means = "the initial state stays as it is"
    if run.cameras is None:
        problems = prediction_problems(run.missing, run.extra, empty_means)
    else:
        problems = unit_problems(run.missing, empty_means) + prediction_problems([], run.extra, empty_means)
    return Scored(items=EventItems(run), summary=summary, params=params, problems=problems)


def unit_problems(missing: list[Any], empty_means: str) -> list[str]:
    """The View units (sample and camera) left without an answer."""
    if not missing:
        return []
    plural = len(missing) != 1
    return [
        f"{len(missing)} (sample, camera) unit{'s have' if plural else ' has'} no answer and "
        f"{'are' if plural else 'is'} scored as an empty answer ({empty_means}): "
        f"idx {describe_ids(missing, 20)}"
    ]


def score_event(
    samples: Iterable[Sample] | SampleBatches, predictions: Mapping[int, Sequence[Step]] | PackedPredictions
) -> Scored:
    """Event: AD, AND, LAcc, Acc, EO and the error rates over all samples, by true length and
    over the order-sensitive samples.

    Items: idx, dist, norm_dist, loose_correct, correct, err_overlap, err_invalid_position,
    pred_step, target_step, order_sensitive, order_error_share (the share of the orderings of the
    true steps that err), missing. Summary: n, AD, AND, LAcc, Acc, EO, OverlapErrorRate,
    InvalidPositionErrorRate (shares of answers raising each error), StepDiff (mean pred_step -
    target_step), order_sensitive_n, ``by_length`` {"1".."4": the same}, ``order_sensitive``
    {n, LAcc, Acc, EO, random_order_EO}. FormatError for a bad step (the released code crashes
    on those) or an answer per camera. `samples` may be a stream: they are scored BATCH at a time.
    """
    with paused_gc():
        run = evaluate_event_batches(samples, predictions)
    return event_scored(run, parameters(EVENT))


def score_view_cameras(
    samples: Iterable[Sample] | SampleBatches,
    predictions: Mapping[int, Any] | PackedPredictions,
    shown: Mapping[Any, CameraChoice] | None = None,
    *,
    seconds: Mapping[Any, float] | None = None,
) -> Scored:
    """View as the released ViewEvaluator scores it: every sample once per final camera (Center,
    Left, Right), 3 x N units, each answered by the sample's list of steps or by its camera's
    entry of an answer per camera (none: an empty answer). Every figure is a mean over the units;
    ``by_camera`` gives each camera's over its N units, ``samples`` the N.

    `shown`: idx -> the camera (or cameras) a sample was shown with, when only those were
    answered (human trials: a trial shows one); every sample then needs one. Items: Event's, one
    per unit, with its ``camera`` (and ``seconds`` when `seconds` gives the trials' times; the
    summary then has the mean ``seconds``, overall and by camera).
    """
    with paused_gc():
        run = evaluate_event_batches(samples, predictions, shown, view=True, seconds=seconds)
    units = (
        "the cameras each sample was shown with"
        if shown is not None
        else "every sample under each final camera"
    )
    return event_scored(run, parameters(VIEW, units=units))


def score_view(
    samples: Iterable[Sample] | SampleBatches,
    predictions: Mapping[int, Any] | PackedPredictions,
    cameras: Mapping[Any, str],
) -> Scored:
    """View with one camera per answer (the "one-camera" variant): each sample scored once, with
    the final camera its answer was made from. Event's metrics, plus each item's ``camera`` and
    a ``by_camera`` summary.

    `cameras` maps each sample's idx to the final view it was shown with (Camera_Left,
    Camera_Center or Camera_Right); every sample needs one (FormatError otherwise). An answer
    per camera answers with that camera's entry.
    """
    with paused_gc():
        run = evaluate_event_batches(samples, predictions, cameras, view=True)
    return event_scored(run, parameters(VIEW, ONE_CAMERA, cameras="given"))


def score_file(
    gt_data: bytes | IO[bytes],
    predictions_data: bytes | IO[bytes],
    *,
    setting: str,
    variant: str = VARIANT,
    cameras: Mapping[int, CameraChoice] | None = None,
    camera_seed: int = 0,
    gt_source: str = "ground truth",
    predictions_source: str = "predictions",
) -> Scored:
    """Score a prediction file against a data.jsonl file (raw bytes, or files open for reading)
    in one setting.

    The ground truth is read with the checks of `formats.parse` (every bad record named, without
    building catalog records), as it is scored when it is an open file. Event and View read it
    a few records at a time, each chunk checked and encoded right after its parse, and score
    FILE_BATCHES x BATCH samples at a time as arrays (`reading.read_sample_batches`), so memory
    holds a few hundred bytes a sample of a batch, the predictions and a few bytes of results
    per unit. The predictions are read by `parse_predictions` (Basic), or packed as they are
    read (`read_packed_predictions`).

    `setting`: "basic", "event" or "view". View, `variant` "official": every sample under each
    final camera (`score_view_cameras`; `cameras`, if given, names the cameras shown per idx).
    View, "one-camera": each sample under one camera (`score_view`): `cameras` (idx -> final
    camera) gives the views the answers were made from; without them the cameras come from
    ``view_cameras(samples, camera_seed)`` and the parameters say so.
    """
    if setting not in SETTINGS:
        raise ValueError(f"unknown TRANCE setting {setting!r} (expected one of {', '.join(SETTINGS)})")
    if variant not in VARIANTS:
        raise ValueError(f"unknown TRANCE metric variant {variant!r} (expected one of {', '.join(VARIANTS)})")
    # Collection stays off while the files are read: a collection over the parsed objects kept
    # alive (the predictions, a batch of samples) would walk them again and again.
    with paused_gc():
        read = parse_predictions if setting == BASIC else read_packed_predictions
        predictions = read(predictions_data, source=predictions_source)
        if setting == BASIC:
            truths = [
                {"idx": sample["idx"], "transformations": sample["transformations"]}
                for sample in formats.iter_samples(gt_data, source=gt_source)
            ]
            scored = score_basic(truths, predictions)
            del truths, predictions
            return scored
        samples = read_sample_batches(gt_data, size=FILE_BATCHES * BATCH, source=gt_source)
        if setting == EVENT:
            scored = score_event(samples, predictions)
        elif variant == VARIANT:
            scored = score_view_cameras(samples, predictions, cameras)
        elif cameras is not None:
            scored = score_view(samples, predictions, cameras)
        else:
            scored = score_view(samples, predictions, ViewCameras(camera_seed))
            scored.params["cameras"] = f"view_cameras(seed={camera_seed})"
        del samples, predictions
    return scored
