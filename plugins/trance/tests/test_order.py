"""The order table: LAcc, Acc and EO over the order-sensitive samples, and the random-order
reference; which orderings count as erring.

Worked numbers (the same as docs/metrics-trance.md, "The order table"). All objects small (two
overlap when closer than 2 + 2 + 1 = 5); "behind" is +x, one step 10.

* Chain: A (0, 0), B (10, 0), C (20, 0); true steps C behind 1 -> (30, 0), B behind 1 ->
  (20, 0), A behind 1 -> (10, 0). B moved before C lands on C, A moved before B lands on B:
  only the order C, B, A is free of overlaps, 1 of the 3! = 6 orderings; 5/6 err. All six end
  in the same state: order-sensitive.
* Swap: object 0 (0, 0), object 1 (10, 0); true steps 1 behind 1, then 0 behind 1. The other
  order overlaps: 1/2 err. Order-sensitive.
* Colours: two colour steps on two objects: no ordering errs, not order-sensitive.

Answers: chain in the order A, B, C (loose-correct, overlaps), swap in the true order (correct),
colours empty (wrong). Order-sensitive: n 2, LAcc 2/2 = 1, Acc 1/2, EO (1 - 1/2) / 1 = 1/2.
Random order: (5/6 + 1/2) / 2 = 2/3.
"""

from __future__ import annotations

import itertools

import pytest

from plugins.trance import metric
from plugins.trance.simulator import apply_steps
from plugins.trance.tests.helpers import change, move, sample, scene, thing

CHAIN_TRUTH = [move(2, "behind", 1), move(1, "behind", 1), move(0, "behind", 1)]
SWAP_TRUTH = [move(1, "behind", 1), move(0, "behind", 1)]
COLOURS = [change(0, "color", "red"), change(1, "color", "blue")]


def worked_samples():
    chain = scene(thing(0, 0), thing(10, 0), thing(20, 0))
    swap = scene(thing(0, 0), thing(10, 0))
    return [sample(0, chain, CHAIN_TRUTH), sample(1, swap, SWAP_TRUTH), sample(2, swap, COLOURS)]


def worked_answers():
    return {0: CHAIN_TRUTH[::-1], 1: SWAP_TRUTH, 2: []}


def test_the_share_of_orderings_that_err_is_counted_by_hand():
    samples = worked_samples()
    items = metric.score_event(samples, worked_answers()).items
    assert [item["order_sensitive"] for item in items] == [True, True, False]
    assert [item["order_error_share"] for item in items] == [pytest.approx(5 / 6), 0.5, 0.0]
    # The same count from the simulator, ordering by ordering.
    chain = samples[0]
    erring = [
        ordering
        for ordering in itertools.permutations(CHAIN_TRUTH)
        if apply_steps(chain["states"][0]["objects"], ordering).overlap_error
    ]
    assert len(erring) == 5 and tuple(CHAIN_TRUTH) not in erring


def test_an_ordering_counts_as_erring_when_any_step_errs_even_if_a_later_step_undoes_it():
    # B, C, A: B lands on C at (20, 0) (overlap), then C moves away and A follows: the end state
    # is the true one with no overlap left. The released rule asks whether the ordering, given
    # as an answer, raises an error: it does, so it counts. Were only errors left at the end
    # counted, no ordering would err and the chain would not be order-sensitive at all.
    chain = worked_samples()[0]
    outcome = apply_steps(chain["states"][0]["objects"], [CHAIN_TRUTH[1], CHAIN_TRUTH[0], CHAIN_TRUTH[2]])
    assert outcome.overlap_error and outcome.objects == chain["states"][1]["objects"]
    labels = ["chain"]
    found = metric.try_all_orderings(
        metric.encode_states([chain["states"][0]["objects"]], labels),
        metric.encode_states([chain["states"][1]["objects"]], labels),
        metric.encode_answers([CHAIN_TRUTH], labels).objects.reshape(1, 3),
        metric.encode_answers([CHAIN_TRUTH], labels).codes.reshape(1, 3),
    )
    assert (found.always_reaches.tolist(), found.erring.tolist()) == ([True], [5])


def test_the_order_table_of_event():
    summary = metric.score_event(worked_samples(), worked_answers()).summary
    assert summary["order_sensitive"] == {
        "n": 2,
        "LAcc": 1.0,
        "Acc": 0.5,
        "EO": 0.5,
        "random_order_EO": pytest.approx(2 / 3),
    }
    # Beside the figures over every sample: LAcc 2/3, Acc 1/3 (the empty answer is wrong).
    assert (summary["LAcc"], summary["Acc"]) == (pytest.approx(2 / 3), pytest.approx(1 / 3))
    assert summary["EO"] == summary["order_sensitive"]["EO"] and summary["order_sensitive_n"] == 2


def test_the_order_table_of_view_counts_units():
    # Each list answers all three cameras: every order-sensitive sample is 3 units, each with
    # its sample's share, so the figures are Event's and n is 3 x 2.
    order = metric.score_view_cameras(worked_samples(), worked_answers()).summary["order_sensitive"]
    assert order == {"n": 6, "LAcc": 1.0, "Acc": 0.5, "EO": 0.5, "random_order_EO": pytest.approx(2 / 3)}


def test_the_random_order_reference_is_the_mean_eo_of_true_steps_shuffled():
    # The exact expectation matches what answering with shuffled true steps gives on average:
    # over all 6 x 2 = 12 combinations of one ordering per sample, the EO's mean is 2/3.
    samples = worked_samples()[:2]
    eos = []
    for chain_order, swap_order in itertools.product(
        itertools.permutations(CHAIN_TRUTH), itertools.permutations(SWAP_TRUTH)
    ):
        eos.append(metric.score_event(samples, {0: list(chain_order), 1: list(swap_order)}).summary["EO"])
    assert sum(eos) / len(eos) == pytest.approx(2 / 3)
    reference = metric.score_event(samples, {}).summary["order_sensitive"]["random_order_EO"]
    assert reference == pytest.approx(2 / 3)


def test_no_order_sensitive_sample_gives_empty_figures():
    order = metric.score_event(worked_samples()[2:], {}).summary["order_sensitive"]
    assert order == {"n": 0, "LAcc": None, "Acc": None, "EO": None, "random_order_EO": None}
