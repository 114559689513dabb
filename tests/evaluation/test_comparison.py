"""Paired comparisons: the bootstrap interval, McNemar, Holm and the sample size, against the
libraries they stand on and against simulations with a planted difference."""

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.contingency_tables import mcnemar

from evaluation.comparison import (
    ComparisonInputError,
    error_overlap,
    holm,
    mcnemar_exact,
    paired_difference,
    paired_sample_size,
    paired_values,
    unit_means,
)

A = [1, 1, 0, 1, 1, 0, 1, 1, 1, 0, 1, 1, 0, 1, 1, 1, 0, 1, 1, 1]
B = [1, 0, 0, 1, 0, 0, 1, 1, 0, 0, 1, 1, 0, 0, 1, 1, 0, 1, 0, 1]


def test_the_paired_interval_is_scipys_bca_bootstrap_over_units_resampled_together():
    result = paired_difference(A, B, resamples=999, seed=4)
    reference = stats.bootstrap(
        (np.array(A, float), np.array(B, float)),
        lambda x, y, axis=-1: np.mean(x, axis=axis) - np.mean(y, axis=axis),
        paired=True,
        vectorized=True,
        n_resamples=999,
        method="BCa",
        random_state=np.random.default_rng(4),
    ).confidence_interval
    assert result.method == "BCa" and result.n == 20
    assert result.difference == pytest.approx(0.25)
    assert (result.low, result.high) == pytest.approx((reference.low, reference.high))
    assert result.low > 0  # B is never right where A is wrong: the gap is clear once paired


def test_pairing_makes_the_interval_narrower_than_two_separate_ones_on_correlated_scores():
    rng = np.random.default_rng(0)
    difficulty = rng.random(300)
    a = (rng.random(300) > difficulty * 0.9).astype(float)
    b = np.where(rng.random(300) < 0.9, a, 1 - a)  # B mostly agrees with A, item by item
    paired = paired_difference(a, b, resamples=999)
    separate = [
        stats.bootstrap(
            (values,), np.mean, n_resamples=999, random_state=np.random.default_rng(1)
        ).confidence_interval
        for values in (a, b)
    ]
    unpaired_width = (separate[0].high - separate[0].low) + (separate[1].high - separate[1].low)
    assert paired.high - paired.low < unpaired_width / 2


def test_the_paired_bootstrap_covers_a_planted_difference_at_the_stated_rate():
    """300 experiments of 150 items where A is right 75% and B 68% of the time, with correlated
    errors (a shared item difficulty); the 95% interval holds the true 0.07 in 91-98% of them."""
    rng = np.random.default_rng(20261123)
    covered = 0
    runs = 300
    for run in range(runs):
        uniform = rng.random(150)
        a = (uniform < 0.75).astype(float)
        b = (uniform < 0.68).astype(float)
        flip = rng.random(150) < 0.2  # some items swap, keeping each row's rate in expectation
        b[flip] = (rng.random(flip.sum()) < 0.68).astype(float)
        a[flip] = (rng.random(flip.sum()) < 0.75).astype(float)
        result = paired_difference(a, b, resamples=999, seed=run)
        covered += result.low <= 0.07 <= result.high
    assert 0.91 <= covered / runs <= 0.98, covered / runs


def test_mcnemar_is_statsmodels_exact_test_and_the_binomial_test_on_the_discordant_units():
    result = mcnemar_exact([bool(v) for v in A], [bool(v) for v in B])
    table = [[result.both_right, result.only_a_right], [result.only_b_right, result.both_wrong]]
    assert table == [[10, 5], [0, 5]]
    assert result.p_value == pytest.approx(mcnemar(np.array(table), exact=True).pvalue)
    assert result.p_value == pytest.approx(stats.binomtest(0, 5, 0.5).pvalue) == pytest.approx(2 * 0.5**5)
    same = mcnemar_exact([True, False, True], [True, False, True])
    assert same.p_value == 1.0 and same.as_dict()["discordant"] == 0


def test_holm_adjusts_a_family_of_p_values_step_down():
    rows = holm([0.01, 0.04, 0.03, 0.20])
    assert [row["p_holm"] for row in rows] == pytest.approx([0.04, 0.09, 0.09, 0.20])
    assert [row["significant"] for row in rows] == [True, False, False, False]


def test_several_testers_on_one_item_count_once_as_their_mean():
    means = unit_means([("u1", 1.0), ("u1", 0.0), ("u2", 1.0), ("u3", None), ("u1", 1.0)])
    assert means == pytest.approx({"u1": 2 / 3, "u2": 1.0})
    units, a, b = paired_values(means, {"u1": 1.0, "u2": 0.0, "u4": 1.0})
    assert units == ["u1", "u2"] and list(b) == [1.0, 0.0]


def test_error_overlap_splits_the_shared_units():
    split = error_overlap(
        {"1": True, "2": False, "3": False, "4": True, "5": True},
        {"1": True, "2": False, "3": True, "4": False},
    )
    assert split == {"both_wrong": ["2"], "only_a_wrong": ["3"], "only_b_wrong": ["4"], "both_right": ["1"]}


def test_the_sample_size_is_connors_and_reaches_the_stated_power_in_a_simulation():
    n = paired_sample_size(0.8, 0.7)
    assert n == 296
    rng = np.random.default_rng(7)
    rejected = sum(mcnemar_exact(rng.random(n) < 0.8, rng.random(n) < 0.7).p_value < 0.05 for _ in range(400))
    assert 0.72 <= rejected / 400 <= 0.88  # exact McNemar is slightly conservative
    assert paired_sample_size(0.7, 0.7) is None
    assert paired_sample_size(0.83, 0.59) < paired_sample_size(0.83, 0.78)


def test_bad_input_is_refused_with_a_reason():
    with pytest.raises(ComparisonInputError, match="no scored unit in common"):
        paired_difference([], [])
    with pytest.raises(ComparisonInputError, match="same length"):
        paired_difference([1, 0], [1])
    with pytest.raises(ComparisonInputError, match="between 0 and 1"):
        paired_sample_size(1.2, 0.5)


def test_too_few_units_get_no_interval_and_a_constant_difference_never_a_point():
    """Below MIN_UNITS shared units there is no interval; the same difference on every unit gives
    Wilson's interval for right/wrong rows, never a collapsed [d, d], and none for other values."""
    from evaluation.comparison import MIN_UNITS

    for n in (1, 3, MIN_UNITS - 1):
        few = paired_difference([1] * n, [0] * n)
        assert (few.low, few.high, few.method) == (None, None, "too few units") and few.difference == 1.0
    always = paired_difference([1] * 30, [0] * 30)
    assert always.method == "Wilson" and always.high == 1.0
    assert always.low == pytest.approx(0.8865, abs=1e-4)
    agree = paired_difference([1] * 30, [1] * 30)
    assert agree.low == pytest.approx(-agree.high) and 0.1 < agree.high < 0.12
    behind = paired_difference([0] * 12, [1] * 12)
    assert behind.high < -0.7 and behind.low == -1.0
    distances = paired_difference([2.5] * 12, [1.0] * 12)
    assert (distances.low, distances.high, distances.method) == (None, None, "degenerate")
    # At MIN_UNITS and varied differences the bootstrap applies as before.
    varied = paired_difference([1, 0] * 6, [0, 0] * 6)
    assert varied.method == "BCa" and varied.low < 0.5 < varied.high


@pytest.mark.django_db
def test_the_test_plan_form_says_how_many_items_and_testers_a_gap_needs(client):
    from tests.factories import make_user

    client.force_login(make_user("rita", "researcher"))
    page = client.get(
        "/test/plans/new/", {"human": "0.8", "model": "0.7", "per_tester": "25"}
    ).content.decode()
    assert "<strong>296 items</strong>" in page and "<strong>12 testers</strong>" in page
    page = client.get("/test/plans/new/", {"human": "0.8", "model": "0.8"}).content.decode()
    assert "the two accuracies are equal" in page
    page = client.get("/test/plans/new/", {"human": "1.5"}).content.decode()
    assert "must be between 0 and 1" in page


def test_above_five_thousand_units_the_interval_is_the_percentile_one_and_agrees_with_bca():
    rng = np.random.default_rng(3)
    a = (rng.random(5001) < 0.62).astype(float)
    b = np.where(rng.random(5001) < 0.8, a, (rng.random(5001) < 0.55).astype(float))
    large = paired_difference(a, b, resamples=999)
    reference = paired_difference(a[:5000], b[:5000], resamples=999)
    assert (large.method, reference.method) == ("percentile", "BCa")
    assert large.low == pytest.approx(reference.low, abs=0.01) and large.high == pytest.approx(
        reference.high, abs=0.01
    )
