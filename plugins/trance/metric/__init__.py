"""TRANCE metrics: Basic (ObjAcc, AttrAcc, ValAcc, Acc) and Event / View (AD, AND, LAcc, Acc, EO).

Pure, no Django. Definitions follow the released TRANCE evaluator (hughplay/TVR,
``EventEvaluator``), as ../shared/FORMATS.md spells it out; docs/metrics-trance.md has worked
examples. An answer is a list of steps ``{"obj_idx", "attr", "val"}`` (View: or an object from
final camera to such a list); a prediction file is a JSON object from sample idx (as a string
key) to its answer.

Basic (one true step t with its ``options``; p = the answer's first step)::

    obj_correct  = p.obj_idx == t.obj_idx
    attr_correct = p.attr == t.attr                      (whatever the object)
    pair_correct = [p.attr, p.val] is one of t's options (any listed out-move counts)
    correct      = obj_correct and pair_correct
    ObjAcc, AttrAcc, ValAcc, Acc = the means of the four over the samples

An empty answer is wrong on all four. Later steps of a Basic answer are ignored (the released
models answer exactly one step). A true step without ``options`` has its own value as only
option, as in the released vectoriser.

Event and View (true steps T, predicted steps P, initial state S0, true final state S*)::

    S        = P applied in order to a copy of S0 (an empty answer leaves S0 as it is)
    dist     = sum over the 10 objects and the 5 attributes of [S and S* differ]
    norm_dist = float32(dist) / float32(len(T))          (the released code divides in float32)
    loose_correct = dist == 0;  correct = loose_correct and no overlap and no invalid position
    AD = mean dist;  AND = mean norm_dist;  LAcc = mean loose_correct;  Acc = mean correct
    EO = (LAcc_o - Acc_o) / LAcc_o over the order-sensitive samples o only

with these rules, each as the released evaluator has it:

* Positions compare equal when equal, or when the true final position is invisible (on the
  plane, outside the visible area) and the predicted one is invisible too; a predicted position
  off the plane [-40, 40] never compares equal. Every object counts, moved or not.
* After a position or size step (never colour, material or shape), the moved object, and only
  it, is checked against the nine others, wherever they are: an overlap error when
  ``distance + 1e-4 < r_i + r_j + 1``. Overlaps between other objects, present from the start,
  are never reported. After a position step, a moved object outside [-40, 40] (bounds
  included) raises an invalid-position error; later steps carry on from there, so moving out of
  the plane and back is loose-correct but not correct.
* pred_step counts every predicted step (duplicates and no-ops too); target_step = len(T).
  ``options`` play no part.
* Order-sensitive sample: some ordering of the TRUE steps raises an overlap or invalid-position
  error (at any of its steps, also one a later step undoes) while every ordering still reaches
  S* (dist 0). EO is None when no order-sensitive sample is loose-correct (no such sample, or
  LAcc_o = 0): the ratio is undefined there. ``order_sensitive`` gives n, LAcc, Acc and EO over
  them, and ``random_order_EO``: the EO of answering each with its true steps in a random order,
  exactly (the mean share of its L! orderings that err; no draw, no seed).
* View, as the released ViewEvaluator scores it (variant "official"): every sample once per
  final camera (Left, Center, Right; the initial image is always Center), 3 x N units, one
  answer per (sample, camera): a list of steps answers all three, an object
  ``{"Camera_Left": steps, ...}`` answers each camera (a camera left out: an empty answer).
  Every figure is a mean over the 3N units, ``by_camera`` over each camera's N. Variant
  "one-camera": each sample once, with the camera its answer was made from. Both settings
  report per true length (``by_length``, "1" to "4").

Summaries are exact means in float64 over per-item values (AND over the float32 per-item
values); the released code sums float32 per batch, so its AND can differ in the last digits.
A sample without a prediction is scored as an empty answer and listed in ``Scored.problems``;
predictions for unknown idx are listed there too and ignored.

Speed: the released evaluator replays each answer through torch, one sample at a time. Here
states are arrays (N samples, 10 objects) and step k of every answer is applied at once
(`replay_answers`): 60,000 View answers score in 2 to 2.5 s on one core, about half of it
spent reading the objects out of their dicts (perf/results/score_trance.md). A file is read
otherwise (`reading`): a few records at a time, checked and encoded right after their parse,
while their objects are still in the processor's cache, so that scoring 60,000 Event answers
from files, the whole process, takes 1.6 to 1.7 times a streaming parse of the files on a quiet
machine (perf/results/score_process.md). The rules are
those of plugins.trance.simulator, with its constants (`move_delta`, radii, tolerance,
bounds); plugins/trance/tests/test_metric.py checks, on thousands of random cases, that the
arrays give exactly the simulator's states, errors and distances. One subtlety, checked there
exhaustively too: the overlap test takes ``sqrt(dx^2 + dy^2)`` where the simulator takes
``math.hypot(dx, dy)``. Both are within an ulp of the true distance d, and with integer
coordinates and integer reaches R (5 to 13) either d >= R, 1e-4 above the threshold
``R - 1e-4``, or d <= sqrt(R^2 - 1) < R - 0.038: never within an ulp of it, so the two agree.

The package, layer by layer: `encoding` (steps and states as arrays), `replay` (answers replayed
on them, the distance between states, order-sensitivity), `predictions` (prediction files),
`summary` (the parameters and the means over groups), `scores` (the per-sample rules of Basic
and of Event / View), `view` (final cameras when none was recorded, for the one-camera variant),
`reading` (a data.jsonl read as arrays for Event and View) and `streamed` (Event and View scored
BATCH samples at a time, and `score_file`). Every public
name is imported here, so that `plugins.trance.metric` offers what the single module did.
"""

from __future__ import annotations

from plugins.trance.metric.encoding import (
    CATEGORY_FIELDS,
    OBJECT_KIND_CODES,
    OBJECT_KINDS,
    PAIR_CODES,
    PAIR_COLUMN,
    PAIR_MOVE_X,
    PAIR_MOVE_Y,
    PAIR_VALUE,
    PAIRS,
    POSITION_COLUMN,
    RADIUS_BY_SIZE,
    SIZE_COLUMN,
    EncodedAnswers,
    EncodedStates,
    Sample,
    Step,
    answer_problems,
    canonical_step,
    decode_states,
    describe_bad_state,
    encode_answers,
    encode_states,
    pair_key,
    step_code,
)
from plugins.trance.metric.predictions import (
    ANSWER_PER_CAMERA_IN_VIEW_ONLY,
    Answer,
    PackedPredictions,
    answer_for_camera,
    answer_form_problems,
    answers_for,
    pack_answer,
    pack_answers,
    parse_predictions,
    prediction_problems,
    read_packed_predictions,
    read_predictions,
)
from plugins.trance.metric.reading import (
    EncodedSamples,
    SampleBatches,
    read_sample_batches,
)
from plugins.trance.metric.replay import (
    Orderings,
    OrderSensitivity,
    Replayed,
    apply_step_batch,
    erring_orderings,
    invisible,
    moved_object_overlaps,
    on_plane,
    order_sensitive,
    order_sensitivity,
    replay_answers,
    state_distances,
    try_all_orderings,
    visible,
)
from plugins.trance.metric.scores import (
    SampleLabels,
    encode_samples,
    evaluate_encoded,
    evaluate_event,
    option_keys,
    score_basic,
)
from plugins.trance.metric.streamed import (
    BATCH,
    CAMERA_CODES,
    EVENT_ITEM_KEYS,
    EventItems,
    EventRun,
    batches,
    evaluate_event_batches,
    event_scored,
    score_event,
    score_file,
    score_view,
    score_view_cameras,
)
from plugins.trance.metric.summary import (
    LENGTHS,
    METRIC,
    METRIC_VERSION,
    ONE_CAMERA,
    VARIANT,
    VARIANTS,
    EventResults,
    event_summary,
    parameters,
)
from plugins.trance.metric.view import (
    ViewCameras,
    view_cameras,
)

__all__ = [
    "erring_orderings",
    "pack_answers",
    "evaluate_encoded",
    "encode_samples",
    "read_sample_batches",
    "SampleBatches",
    "EncodedSamples",
    "ANSWER_PER_CAMERA_IN_VIEW_ONLY",
    "BATCH",
    "CAMERA_CODES",
    "CATEGORY_FIELDS",
    "EVENT_ITEM_KEYS",
    "EncodedAnswers",
    "EncodedStates",
    "EventItems",
    "EventResults",
    "EventRun",
    "LENGTHS",
    "METRIC",
    "METRIC_VERSION",
    "OBJECT_KINDS",
    "OBJECT_KIND_CODES",
    "ONE_CAMERA",
    "OrderSensitivity",
    "Orderings",
    "PAIRS",
    "PAIR_CODES",
    "PAIR_COLUMN",
    "PAIR_MOVE_X",
    "PAIR_MOVE_Y",
    "PAIR_VALUE",
    "POSITION_COLUMN",
    "PackedPredictions",
    "RADIUS_BY_SIZE",
    "Answer",
    "Replayed",
    "SIZE_COLUMN",
    "Sample",
    "SampleLabels",
    "Step",
    "VARIANT",
    "VARIANTS",
    "ViewCameras",
    "answer_for_camera",
    "answer_form_problems",
    "answer_problems",
    "answers_for",
    "apply_step_batch",
    "batches",
    "canonical_step",
    "decode_states",
    "describe_bad_state",
    "encode_answers",
    "encode_states",
    "evaluate_event",
    "evaluate_event_batches",
    "event_scored",
    "event_summary",
    "invisible",
    "moved_object_overlaps",
    "on_plane",
    "option_keys",
    "order_sensitive",
    "order_sensitivity",
    "pack_answer",
    "pair_key",
    "parameters",
    "parse_predictions",
    "prediction_problems",
    "read_packed_predictions",
    "read_predictions",
    "replay_answers",
    "score_basic",
    "score_event",
    "score_file",
    "score_view",
    "score_view_cameras",
    "state_distances",
    "step_code",
    "try_all_orderings",
    "view_cameras",
    "visible",
]
