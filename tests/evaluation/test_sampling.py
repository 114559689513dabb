"""Sampled validation: Wilson and stratified intervals by hand, and the stratified draw."""

import hashlib
import math

import numpy as np
import pytest
from statsmodels.stats.proportion import proportion_confint, samplesize_confint_proportion

from evaluation.sampling import (
    SamplingInputError,
    allocate,
    draw_stratified_sample,
    sample_size_for_margin,
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


@pytest.mark.parametrize(
    ("errors", "n", "confidence"),
    [(0, 30, 0.95), (1, 50, 0.95), (7, 200, 0.9), (45, 1000, 0.99), (12, 12, 0.95), (150, 400, 0.95)],
)
def test_wilson_interval_matches_statsmodels_and_the_formula(errors, n, confidence):
    expected = proportion_confint(errors, n, alpha=1 - confidence, method="wilson")
    low, high = wilson_interval(errors, n, confidence=confidence)
    assert (low, high) == pytest.approx(expected, abs=1e-12)
    z = {0.9: 1.6448536269514722, 0.95: Z_95, 0.99: 2.5758293035489004}[confidence]
    assert (low, high) == pytest.approx(hand_wilson(errors, n, z=z), abs=1e-12)
    assert 0.0 <= low <= errors / n <= high <= 1.0


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


def test_draw_with_a_sample_size_and_equal_allocation():
    population = {
        "big": [f"b{n}" for n in range(5000)],
        "mid": [f"m{n}" for n in range(1000)],
        "small": [f"s{n}" for n in range(40)],
    }
    sample = draw_stratified_sample(population, rate=0.5, sample_size=300, allocation="equal", seed=3)
    sizes = {name: info["sample_size"] for name, info in sample["strata"].items()}
    # 300 / 3 = 100 each, but "small" holds only 40: it is checked completely and the other 260
    # go 130 / 130 to the rest. The rate is ignored.
    assert sizes == {"big": 130, "mid": 130, "small": 40}
    assert sample["strata"]["small"]["ids"] == sorted(population["small"])
    assert (sample["allocation"], sample["requested_size"], sample["sample_size"]) == ("equal", 300, 300)
    assert sample["rate"] is None
    for name, info in sample["strata"].items():
        assert len(set(info["ids"])) == info["sample_size"]
        assert set(info["ids"]) <= set(population[name])
    by_rate = draw_stratified_sample(population, rate=0.05, allocation="equal", seed=3)
    # 5% of 6040 = 302: small 40 complete, 262 / 2 = 131 each.
    assert by_rate["requested_size"] == 302
    assert [info["sample_size"] for info in by_rate["strata"].values()] == [131, 131, 40]


def test_rate_draws_follow_the_documented_recipe_and_match_a_sample_size():
    population = {
        "x": [f"x{n:05d}" for n in range(1500)],
        "y": [f"y{n:05d}" for n in range(2500)],
        "z": [f"z{n:05d}" for n in range(700)],
    }
    sample = draw_stratified_sample(population, rate=0.02, seed=7)
    assert (sample["allocation"], sample["requested_size"], sample["rate"]) == ("proportional", 94, 0.02)
    # The draw promised by the docstring (and made before allocation methods existed): 2% of each
    # stratum, positions from default_rng([seed, first 8 bytes of SHA-256(name)]) in the sorted ids.
    for name, item_ids in population.items():
        stream = int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "big")
        positions = np.random.default_rng([7, stream]).choice(
            len(item_ids), size=len(item_ids) // 50, replace=False
        )
        assert sample["strata"][name]["ids"] == [sorted(item_ids)[p] for p in sorted(positions)]
    by_size = draw_stratified_sample(population, sample_size=94, seed=7)
    assert by_size["strata"] == sample["strata"]


def test_stratified_estimate_after_equal_allocation():
    sizes = {"A": 6000, "B": 3000, "C": 800, "D": 200}
    population = {name: [f"{name}{n}" for n in range(size)] for name, size in sizes.items()}
    sample = draw_stratified_sample(population, sample_size=400, allocation="equal", seed=1)
    errors = {"A": 3, "B": 7, "C": 12, "D": 20}
    estimate = stratified_error_rate(
        {
            name: (info["population_size"], info["sample_size"], errors[name])
            for name, info in sample["strata"].items()
        }
    )
    population_sizes = np.array(list(sizes.values()), dtype=float)
    sampled = np.array([sample["strata"][name]["sample_size"] for name in sizes], dtype=float)
    assert sampled.tolist() == [100, 100, 100, 100]
    error_counts = np.array(list(errors.values()), dtype=float)
    weights = population_sizes / population_sizes.sum()
    rates = error_counts / sampled
    value = float(weights @ rates)  # 0.6 * 0.03 + 0.3 * 0.07 + 0.08 * 0.12 + 0.02 * 0.2 = 0.0526
    standard_error = math.sqrt(
        np.sum(weights**2 * (1 - sampled / population_sizes) * rates * (1 - rates) / sampled)
    )
    assert estimate.value == pytest.approx(value) == pytest.approx(0.0526)
    assert estimate.standard_error == pytest.approx(standard_error)
    assert (estimate.low, estimate.high) == pytest.approx(
        (value - Z_95 * standard_error, value + Z_95 * standard_error)
    )
    # The small, error-prone strata were over-sampled: pooling doubles the error rate.
    assert estimate.pooled_value == pytest.approx(42 / 400)


def planted_population():
    """20,000 ids in five strata of very different sizes; exactly 5% of them are wrong overall."""
    sizes = {"A": 9000, "B": 6000, "C": 3000, "D": 1500, "E": 500}
    rates = {"A": 0.02, "B": 0.05, "C": 0.08, "D": 0.12, "E": 0.20}
    generator = np.random.default_rng(2024)
    population, wrong, start = {}, set(), 0
    for name, size in sizes.items():
        ids = list(range(start, start + size))
        start += size
        population[name] = ids
        wrong.update(generator.choice(ids, size=round(rates[name] * size), replace=False).tolist())
    assert len(wrong) == 1000 == 0.05 * start  # 180 + 300 + 240 + 180 + 100
    return population, wrong, rates


@pytest.mark.parametrize("allocation", ["proportional", "equal"])
def test_simulated_coverage_and_bias(allocation):
    # 1,500 checks: proportional gives 675 / 450 / 225 / 113 / 37 (expected errors 13.5, 22.5, 18,
    # 13.6, 7.4), equal gives 300 each (6, 15, 24, 36, 60) -- enough for a normal interval.
    population, wrong, rates = planted_population()
    repetitions = 300
    values, pooled, covered = [], [], 0
    for repetition in range(repetitions):
        sample = draw_stratified_sample(population, sample_size=1500, allocation=allocation, seed=repetition)
        estimate = stratified_error_rate(
            {
                name: (info["population_size"], info["sample_size"], len(wrong.intersection(info["ids"])))
                for name, info in sample["strata"].items()
            }
        )
        values.append(estimate.value)
        pooled.append(estimate.pooled_value)
        covered += estimate.low <= 0.05 <= estimate.high
    monte_carlo_error = math.sqrt(0.95 * 0.05 / repetitions)  # 0.0126
    assert abs(covered / repetitions - 0.95) < 3 * monte_carlo_error
    # Unbiased: the mean estimate is within 3 of its own standard errors of the true 5%.
    assert abs(np.mean(values) - 0.05) < 3 * np.std(values, ddof=1) / math.sqrt(repetitions)
    if allocation == "equal":
        # Pooling equal-sized samples averages the stratum rates without weights: (0.02 + 0.05 +
        # 0.08 + 0.12 + 0.20) / 5 = 0.094, nearly twice the truth.
        assert np.mean(pooled) == pytest.approx(np.mean(list(rates.values())), abs=0.003)
        assert np.mean(pooled) - 0.05 > 0.04
    else:
        assert np.mean(pooled) == pytest.approx(0.05, abs=0.002)


def test_allocate_proportional_sums_and_stays_within_one():
    # 7 of 1000: exact shares 1.4 / 2.1 / 3.5 -> 1 / 2 / 3, the spare unit to the largest remainder (c).
    assert allocate({"a": 200, "b": 300, "c": 500}, 7) == {"a": 1, "b": 2, "c": 4}
    generator = np.random.default_rng(0)
    for _ in range(200):
        sizes = {
            f"s{k}": int(size)
            for k, size in enumerate(generator.integers(0, 5000, size=generator.integers(1, 12)))
        }
        total = sum(sizes.values())
        if total == 0:
            continue
        sample_size = int(generator.integers(1, total + 1))
        allocation = allocate(sizes, sample_size, minimum_per_stratum=0)
        assert sum(allocation.values()) == sample_size
        for name, size in sizes.items():
            assert abs(allocation[name] - sample_size * size / total) < 1
            assert 0 <= allocation[name] <= size
        # Largest remainder: a stratum rounded up had a fractional share at least as large as
        # any stratum rounded down.
        fraction = {name: sample_size * size / total % 1 for name, size in sizes.items()}
        rounded_up = [
            fraction[name] for name in sizes if allocation[name] > sample_size * sizes[name] / total
        ]
        rounded_down = [
            fraction[name] for name in sizes if allocation[name] < sample_size * sizes[name] / total
        ]
        if rounded_up and rounded_down:
            assert min(rounded_up) >= max(rounded_down) - 1e-9


def test_allocate_equal_caps_small_strata_and_shares_the_surplus():
    # 150 / 4 = 37.5: a (5 items) is taken whole; 145 / 3 = 48.3: d (30) whole; 115 / 2 = 57.5:
    # b and c get 58 and 57, the odd unit to the first name.
    assert allocate({"a": 5, "b": 100, "c": 100, "d": 30}, 150, method="equal") == {
        "a": 5,
        "b": 58,
        "c": 57,
        "d": 30,
    }
    assert allocate({"a": 5, "b": 100}, 105, method="equal") == {"a": 5, "b": 100}
    # Three items over five strata: a, b, c get one each, the floor of 1 lifts d and e too.
    assert allocate(dict.fromkeys("abcde", 10), 3, method="equal") == dict.fromkeys("abcde", 1)
    assert allocate({"a": 2, "b": 50}, 10, method="equal", minimum_per_stratum=5) == {"a": 2, "b": 8}
    generator = np.random.default_rng(1)
    for _ in range(200):
        sizes = {
            f"s{k}": int(size)
            for k, size in enumerate(generator.integers(0, 300, size=generator.integers(1, 12)))
        }
        total = sum(sizes.values())
        if total == 0:
            continue
        sample_size = int(generator.integers(1, total + 1))
        allocation = allocate(sizes, sample_size, method="equal", minimum_per_stratum=0)
        assert sum(allocation.values()) == sample_size
        partial = [allocation[name] for name, size in sizes.items() if allocation[name] < size]
        if partial:
            # As even as possible: strata not taken whole differ by at most one, and a stratum
            # taken whole is no bigger than what the others got.
            assert max(partial) - min(partial) <= 1
            assert all(size <= max(partial) for name, size in sizes.items() if allocation[name] == size)


def test_allocate_rejects_bad_input():
    with pytest.raises(SamplingInputError, match="unknown allocation method 'optimal'"):
        allocate({"a": 10}, 5, method="optimal")
    with pytest.raises(SamplingInputError, match="between 1 and the population size 10, got 0"):
        allocate({"a": 10}, 0)
    with pytest.raises(SamplingInputError, match="between 1 and the population size 15, got 16"):
        allocate({"a": 10, "b": 5}, 16, method="equal")
    with pytest.raises(SamplingInputError, match="stratum 'b': population size cannot be negative, got -3"):
        allocate({"a": 10, "b": -3}, 5)
    with pytest.raises(SamplingInputError, match="minimum_per_stratum cannot be negative, got -1"):
        allocate({"a": 10}, 5, minimum_per_stratum=-1)
    with pytest.raises(SamplingInputError, match="unknown allocation method 'random'"):
        draw_stratified_sample({"a": [1, 2]}, allocation="random")
    with pytest.raises(SamplingInputError, match="population size 2, got 3"):
        draw_stratified_sample({"a": [1, 2]}, sample_size=3)


@pytest.mark.parametrize(
    ("expected_rate", "margin", "confidence"),
    [(0.5, 0.05, 0.95), (0.5, 0.01, 0.95), (0.05, 0.01, 0.95), (0.1, 0.02, 0.99), (0.3, 0.03, 0.9)],
)
def test_sample_size_for_margin_without_correction_matches_statsmodels(expected_rate, margin, confidence):
    expected = math.ceil(samplesize_confint_proportion(expected_rate, margin, alpha=1 - confidence))
    size = sample_size_for_margin(10**12, margin, confidence=confidence, expected_rate=expected_rate)
    assert size == expected


def test_sample_size_for_margin_with_the_finite_population_correction():
    # n0 = 1.95996^2 * 0.25 / 0.01^2 = 9603.65; n = 9603.65 / (1 + 9602.65 / 500,000) = 9422.68 -> 9423.
    assert sample_size_for_margin(500_000, 0.01) == 9423
    # Krejcie & Morgan's table (±5%, 95%): 370 for N = 10,000 (369.97) and 278 for N = 1,000 (277.73).
    assert sample_size_for_margin(10_000, 0.05) == 370
    assert sample_size_for_margin(1_000, 0.05) == 278
    assert sample_size_for_margin(1, 0.01) == 1
    assert sample_size_for_margin(10**6, 0.5, expected_rate=0.01) == 1  # n0 = 0.15
    populations = [*range(1, 300), *range(300, 200_000, 997)]
    sizes = [sample_size_for_margin(population, 0.02) for population in populations]
    assert all(size <= population for population, size in zip(populations, sizes, strict=True))
    assert sizes == sorted(sizes)  # a bigger population never needs fewer checks


@pytest.mark.parametrize(
    ("population", "margin"), [(10**6, 0.03), (5000, 0.03), (20_000, 0.02), (2000, 0.05)]
)
def test_sample_size_for_margin_gives_that_margin_when_checked(population, margin):
    # Checking that many items and finding half of them wrong (the worst case) gives a stratified
    # interval no wider than asked; one item fewer does not.
    size = sample_size_for_margin(population, margin)
    for checked, within in ((size, True), (size - 1, False)):
        estimate = stratified_error_rate({"all": (population, checked, checked // 2)})
        assert ((estimate.high - estimate.low) / 2 <= margin) is within


def test_sample_size_for_margin_rejects_bad_input():
    with pytest.raises(SamplingInputError, match=r"margin must be in \(0, 0.5\], got 0"):
        sample_size_for_margin(1000, 0)
    with pytest.raises(SamplingInputError, match="margin must be in .*got 0.6"):
        sample_size_for_margin(1000, 0.6)
    with pytest.raises(SamplingInputError, match="population_size must be at least 1, got 0"):
        sample_size_for_margin(0, 0.05)
    with pytest.raises(SamplingInputError, match="expected_rate must be strictly between 0 and 1, got 1"):
        sample_size_for_margin(1000, 0.05, expected_rate=1)
    with pytest.raises(SamplingInputError, match="confidence must be between 0 and 1, got 95"):
        sample_size_for_margin(1000, 0.05, confidence=95)
