"""The per-sample scoring rules: Basic (`score_basic`, on the answer's first step) and the shared
work of Event and View (`evaluate_event`: replay each answer, compare with the true final state,
check the errors and order-sensitivity)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from benchmarks.records import FormatError, RecordError, RecordErrors
from evaluation.metrics.scored import Scored
from plugins.trance.formats import BASIC, MAX_STEPS, MIN_STEPS
from plugins.trance.metric.encoding import (
    EncodedAnswers,
    Sample,
    Step,
    answer_problems,
    encode_answers,
    encode_states,
    pair_key,
    step_code,
)
from plugins.trance.metric.predictions import ANSWER_PER_CAMERA_IN_VIEW_ONLY, answers_for, prediction_problems
from plugins.trance.metric.reading import EncodedSamples
from plugins.trance.metric.replay import order_sensitivity, replay_answers, state_distances
from plugins.trance.metric.summary import EventResults, parameters


def option_keys(true_step: Mapping[str, Any]) -> set[tuple[Any, ...]]:
    """The pairs that count as right for a true step: its options, or its own value without them."""
    attr = true_step["attr"]
    options = true_step.get("options") or [true_step["val"]]
    return {pair_key(attr, option) for option in options}


def score_basic(samples: Sequence[Sample], predictions: Mapping[int, Sequence[Step]]) -> Scored:
    """Basic: one true step per sample, scored on the answer's first step.

    Items: idx, obj_correct, attr_correct, pair_correct, correct, missing. Summary: ObjAcc,
    AttrAcc, ValAcc (pair right), Acc (object and pair right), n (None means for n = 0).
    Raises FormatError for a sample that has not exactly one transformation or a bad step.
    """
    answers, missing, extra = answers_for(samples, predictions)
    without = set(missing)
    errors = RecordErrors()
    items: list[dict[str, Any]] = []
    for sample, answer in zip(samples, answers, strict=True):
        label = f"idx {sample['idx']}"
        transformations = sample["transformations"]
        if len(transformations) != 1:
            errors.append(
                RecordError(
                    label, "transformations", f"Basic needs one transformation, got {len(transformations)}"
                )
            )
            continue
        if isinstance(answer, Mapping):
            errors.append(RecordError(label, "answer", ANSWER_PER_CAMERA_IN_VIEW_ONLY))
            continue
        if any(step_code(step) is None for step in answer):
            errors.extend(answer_problems(label, list(answer)))
            continue
        truth = transformations[0]
        item = {
            "idx": sample["idx"],
            "obj_correct": False,
            "attr_correct": False,
            "pair_correct": False,
            "correct": False,
            "missing": sample["idx"] in without,
        }
        if answer:
            first = answer[0]
            item["obj_correct"] = first["obj_idx"] == truth["obj_idx"]
            item["attr_correct"] = first["attr"] == truth["attr"]
            item["pair_correct"] = pair_key(first["attr"], first["val"]) in option_keys(truth)
            item["correct"] = item["obj_correct"] and item["pair_correct"]
        items.append(item)
    if errors:
        raise FormatError(errors)
    count = len(items)

    def share(key: str) -> float | None:
        return sum(item[key] for item in items) / count if count else None

    params = parameters(BASIC)
    summary = {
        "parameters": params,
        "ObjAcc": share("obj_correct"),
        "AttrAcc": share("attr_correct"),
        "ValAcc": share("pair_correct"),
        "Acc": share("correct"),
        "n": count,
        "missing_predictions": len(missing),
        "extra_predictions": len(extra),
    }
    problems = prediction_problems(missing, extra, "wrong on object, attribute and value")
    return Scored(items=items, summary=summary, params=params, problems=problems)


class SampleLabels(Sequence[str]):
    """ "idx 12" for each sample, made only when asked for (error messages are rare)."""

    def __init__(self, samples: Sequence[Sample]) -> None:
        self.samples = samples

    def __len__(self) -> int:
        return len(self.samples)

    def __getitem__(self, number: Any) -> Any:
        if isinstance(number, slice):
            return [f"idx {sample['idx']}" for sample in self.samples[number]]
        return f"idx {self.samples[number]['idx']}"


def evaluate_event(
    samples: Sequence[Sample],
    answers: Sequence[Sequence[Step]] | EncodedAnswers,
    units: np.ndarray | None = None,
) -> EventResults:
    """Score each answer against its sample (the shared work of Event and View).

    `units`: the sample number of each answer (View answers a sample once per final camera);
    None: one answer per sample, in order. Samples must have 1 to 4 true steps, as TRANCE
    defines (FormatError otherwise): none would make AND divide by zero, and order-sensitivity
    tries all L! orderings (once per sample, whatever its number of answers).
    """
    return evaluate_encoded(encode_samples(samples), answers, units)


def encode_samples(samples: Sequence[Sample]) -> EncodedSamples:
    """The samples as arrays (`evaluate_event`'s first half; a file read for scoring comes as
    arrays already, `reading.read_sample_batches`). FormatError for a sample without 1 to 4 true
    steps, or with a bad one; ValueError naming a state that is not 10 known objects."""
    labels = SampleLabels(samples)
    truths = [sample["transformations"] for sample in samples]
    errors = [
        RecordError(
            labels[number],
            "transformations",
            f"expected {MIN_STEPS} to {MAX_STEPS} true steps, got {len(truth)}",
        )
        for number, truth in enumerate(truths)
        if not MIN_STEPS <= len(truth) <= MAX_STEPS
    ]
    if errors:
        raise FormatError(errors)
    initial = encode_states([sample["states"][0]["objects"] for sample in samples], labels)
    final = encode_states([sample["states"][-1]["objects"] for sample in samples], labels)
    true_steps = encode_answers(truths, labels)
    return EncodedSamples([sample["idx"] for sample in samples], labels, initial, final, true_steps)


def evaluate_encoded(
    samples: EncodedSamples,
    answers: Sequence[Sequence[Step]] | EncodedAnswers,
    units: np.ndarray | None = None,
) -> EventResults:
    """`evaluate_event` on samples already encoded (its second half)."""
    initial, final, true_steps, labels = samples.initial, samples.final, samples.truth, samples.labels
    orderings = order_sensitivity(initial, final, true_steps)
    if units is None:
        units = np.arange(len(samples.idxs))
        answer_labels: Sequence[str] = labels
    else:
        initial, final = initial.take(units), final.take(units)
        answer_labels = UnitLabels(labels, units)
    predicted = answers if isinstance(answers, EncodedAnswers) else encode_answers(answers, answer_labels)

    replayed = replay_answers(initial, predicted)
    dist = state_distances(replayed.states, final)
    target_step = true_steps.lengths[units]
    loose_correct = dist == 0
    return EventResults(
        dist=dist,
        norm_dist=dist.astype(np.float32) / target_step.astype(np.float32),
        loose_correct=loose_correct,
        correct=loose_correct & ~replayed.overlap & ~replayed.invalid_position,
        err_overlap=replayed.overlap,
        err_invalid_position=replayed.invalid_position,
        pred_step=predicted.lengths,
        target_step=target_step,
        order_sensitive=orderings.sensitive[units],
        order_error_share=orderings.error_share[units],
    )


class UnitLabels(Sequence[str]):
    """The sample label of each unit, for error messages about an answer."""

    def __init__(self, labels: Sequence[str], units: np.ndarray) -> None:
        self.labels, self.units = labels, units

    def __len__(self) -> int:
        return len(self.units)

    def __getitem__(self, number: Any) -> Any:
        if isinstance(number, slice):
            return [self.labels[int(unit)] for unit in self.units[number]]
        return self.labels[int(self.units[number])]
