"""Sampled validation: Wilson and stratified intervals by hand, and the stratified draw."""

import math

import pytest

from evaluation.sampling import (
    SamplingInputError,
    draw_stratified_sample,
    stratified_error_rate,
    wilson_interval,
)

Z_95 = 1.959963984540054  # standard normal quantile for a two-sided 95% interval


def hand_wilson(errors, n, z=Z_95):
    proportion = errors / n
    denominator = 1 + z**2 / n
    centre = (proportion + z**2 / (2 * n)) / denominator
    half_width = z * math.sqrt(proportion * (1 - proportion) / n + z**2 / (4 * n**2)) / denominator
    return centre - half_width, centre + half_width


def test_wilson_interval_three_errors_in_a_hundred():
    # p = 0.03, z^2 = 3.8415: centre = 0.049207 / 1.038415 = 0.047387,
    # half width = 1.96 * sqrt(0.000291 + 0.000096) / 1.038415 = 0.037133.
    low, high = wilson_interval(3, 100)
    assert low == pytest.approx(0.010255, abs=1e-6)
    assert high == pytest.approx(0.084519, abs=1e-6)
    assert (low, high) == pytest.approx(hand_wilson(3, 100))


def test_wilson_interval_edges():
    low, high = wilson_interval(0, 100)
    assert low == 0.0
    assert high == pytest.approx(Z_95**2 / (100 + Z_95**2))  # 0.0370
    assert wilson_interval(100, 100)[1] == 1.0
    narrow = wilson_interval(3, 100, confidence=0.9)
    assert narrow[0] > low and narrow == pytest.approx(hand_wilson(3, 100, z=1.6448536269514722))
    with pytest.raises(SamplingInputError, match="between 0 and n = 10"):
        wilson_interval(11, 10)
    with pytest.raises(SamplingInputError, match="at least one checked item"):
        wilson_interval(0, 0)


def test_stratified_error_rate_two_strata_by_hand():
    # Stratum A: 8000 items, 160 checked, 4 wrong (p = 0.025); B: 2000 items, 100 checked,
    # 10 wrong (p = 0.1). Weights 0.8 and 0.2.
    estimate = stratified_error_rate({"A": (8000, 160, 4), "B": (2000, 100, 10)})
    assert estimate.value == pytest.approx(0.8 * 0.025 + 0.2 * 0.1)  # 0.04
    variance = 0.8**2 * (1 - 160 / 8000) * 0.025 * 0.975 / 160 + 0.2**2 * (1 - 100 / 2000) * 0.1 * 0.9 / 100
    assert variance == pytest.approx(0.00012975, rel=1e-4)
    assert estimate.standard_error == pytest.approx(math.sqrt(variance))
    assert estimate.low == pytest.approx(0.04 - Z_95 * math.sqrt(variance))  # 0.0177
    assert estimate.high == pytest.approx(0.04 + Z_95 * math.sqrt(variance))  # 0.0623
    # Pooling ignores that B was over-sampled (5% vs 2%) and over-states the error rate.
    assert estimate.pooled_value == pytest.approx(14 / 260)
    assert (estimate.pooled_low, estimate.pooled_high) == pytest.approx(hand_wilson(14, 260))
    assert (estimate.population_size, estimate.sampled, estimate.errors) == (10000, 260, 14)
    assert [stratum.weight for stratum in estimate.strata] == pytest.approx([0.8, 0.2])
    assert str(estimate) == "error rate 0.040 [0.018, 0.062] (260 checked, 14 errors; pooled 0.054)"


def test_stratified_equals_pooled_under_proportional_allocation_and_fpc_matters():
    estimate = stratified_error_rate({"A": (1000, 20, 2), "B": (500, 10, 3)})
    assert estimate.value == pytest.approx(estimate.pooled_value) == pytest.approx(5 / 30)
    fully_checked = stratified_error_rate({"A": (50, 50, 5), "B": (50, 10, 1)})
    # A was checked completely: only B contributes sampling variance.
    assert fully_checked.standard_error == pytest.approx(math.sqrt(0.25 * (1 - 10 / 50) * 0.1 * 0.9 / 10))


def test_stratified_error_rate_edge_cases():
    no_errors = stratified_error_rate({"A": (1000, 20, 0), "B": (10, 5, 0)})
    assert (no_errors.value, no_errors.low, no_errors.high) == (0.0, 0.0, 0.0)
    assert no_errors.pooled_high > 0  # the Wilson interval stays informative
    clipped = stratified_error_rate({"A": (100, 3, 1)})
    assert clipped.low == 0.0  # normal interval 1/3 - 0.52 clipped at 0
    empty_stratum = stratified_error_rate({"A": (100, 10, 1), "B": (0, 0, 0)})
    assert empty_stratum.value == pytest.approx(0.1)
    with pytest.raises(SamplingInputError, match="stratum 'B' has 10 items but none was sampled"):
        stratified_error_rate({"A": (100, 10, 1), "B": (10, 0, 0)})
    with pytest.raises(SamplingInputError, match="sampled 20 items out of a population of 10"):
        stratified_error_rate({"A": (10, 20, 1)})
    with pytest.raises(SamplingInputError, match="5 errors among only 4"):
        stratified_error_rate({"A": (10, 4, 5)})


def cric_like_population():
    """500,000 question ids over the five CRIC question types, unevenly sized."""
    sizes = {
        "QueryObjKG": 180_000,
        "QueryObjSG": 120_000,
        "QueryAtt": 100_000,
        "VerifyKG": 70_000,
        "VerifyAtt": 30_000,
    }
    population = {}
    start = 0
    for question_type, size in sizes.items():
        population[question_type] = [f"q{number:06d}" for number in range(start, start + size)]
        start += size
    return population


def test_two_percent_sample_of_cric_like_population():
    population = cric_like_population()
    sample = draw_stratified_sample(population, rate=0.02, seed=11)
    assert sample["population_size"] == 500_000
    assert sample["sample_size"] == 10_000  # "about 10,000 samples (about 2%)"
    assert sample["realised_rate"] == pytest.approx(0.02)
    for question_type, info in sample["strata"].items():
        assert info["sample_size"] == len(population[question_type]) // 50
        assert len(set(info["ids"])) == info["sample_size"]
        assert set(info["ids"]) <= set(population[question_type])
        assert info["ids"] == sorted(info["ids"])


def test_draw_is_deterministic_order_free_and_seeded():
    population = {"common": list(range(1000)), "rare": list(range(1000, 1030))}
    first = draw_stratified_sample(population, seed=5)
    assert first == draw_stratified_sample({name: ids[::-1] for name, ids in population.items()}, seed=5)
    assert first != draw_stratified_sample(population, seed=6)
    # Adding a stratum leaves the draw in the others unchanged.
    extended = draw_stratified_sample(population | {"new": list(range(2000, 2100))}, seed=5)
    assert extended["strata"]["rare"]["ids"] == first["strata"]["rare"]["ids"]


def test_allocation_is_proportional_with_a_floor():
    population = {"big": list(range(1000)), "small": list(range(1000, 1030)), "tiny": ["t1"], "none": []}
    sample = draw_stratified_sample(population, rate=0.02, minimum_per_stratum=2)
    sizes = {name: info["sample_size"] for name, info in sample["strata"].items()}
    # 2% of 1031 = 20.62 -> 21 by largest remainder: big 20, small 0.6 -> 1; floor 2 lifts small;
    # tiny is capped at its single item; the empty stratum draws nothing.
    assert sizes == {"big": 20, "small": 2, "tiny": 1, "none": 0}
    assert sample["strata"]["small"]["realised_rate"] == pytest.approx(2 / 30)
    assert sample["strata"]["none"]["realised_rate"] == 0.0


def test_draw_then_estimate_round_trip():
    population = {"easy": [f"e{n}" for n in range(4000)], "hard": [f"h{n}" for n in range(400)]}
    sample = draw_stratified_sample(population, rate=0.02, minimum_per_stratum=20)
    errors = {"easy": 2, "hard": 4}
    estimate = stratified_error_rate(
        {
            name: (info["population_size"], info["sample_size"], errors[name])
            for name, info in sample["strata"].items()
        }
    )
    assert sample["strata"]["hard"]["sample_size"] == 20  # floor: 2% would be 8
    assert estimate.value == pytest.approx(4000 / 4400 * 2 / 80 + 400 / 4400 * 4 / 20)
    assert estimate.pooled_value == pytest.approx(6 / 100)


def test_draw_rejects_bad_input():
    with pytest.raises(SamplingInputError, match="rate must be in"):
        draw_stratified_sample({"a": [1]}, rate=0)
    with pytest.raises(SamplingInputError, match="item 3 appears in both 'a' and stratum 'b'"):
        draw_stratified_sample({"a": [1, 3], "b": [3]})
    with pytest.raises(SamplingInputError, match="appears twice in stratum 'a'"):
        draw_stratified_sample({"a": [1, 1]})
