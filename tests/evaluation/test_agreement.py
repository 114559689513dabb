"""Agreement statistics against published worked examples and independent hand computations."""

import itertools
import math
from collections import Counter

import numpy as np
import pytest
from shapely.geometry import Polygon

from evaluation.agreement import (
    Agreement,
    AgreementInputError,
    bootstrap_interval,
    cohens_kappa,
    fleiss_kappa,
    krippendorff_alpha,
    paired_labels,
    pairwise_polygon_iou,
    pairwise_text_similarity,
    percent_agreement,
    polygon_iou,
    text_similarity,
    to_fleiss_table,
    to_reliability_matrix,
)

# --------------------------------------------------------------------------- published data

# Wikipedia, "Fleiss' kappa", worked example: 10 subjects, 14 raters, 5 categories.
# Published: P_bar = 0.378, P_e = 0.213, kappa = 0.210.
WIKIPEDIA_FLEISS_TABLE = [
    [0, 0, 0, 0, 14],
    [0, 2, 6, 4, 2],
    [0, 0, 3, 5, 6],
    [0, 3, 9, 2, 0],
    [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0],
    [3, 2, 6, 3, 0],
    [2, 5, 3, 2, 2],
    [6, 5, 2, 1, 0],
    [0, 2, 2, 3, 7],
]

# Fleiss (1971), "Measuring nominal scale agreement among many raters": 30 patients, each
# diagnosed by 6 of 43 psychiatrists into 5 categories (1 depression, 2 personality disorder,
# 3 schizophrenia, 4 neurosis, 5 other). Published kappa = 0.430.
FLEISS_1971_DIAGNOSES = [
    [4, 4, 4, 4, 4, 4],
    [2, 2, 2, 5, 5, 5],
    [2, 3, 3, 3, 3, 5],
    [5, 5, 5, 5, 5, 5],
    [2, 2, 2, 4, 4, 4],
    [1, 1, 3, 3, 3, 3],
    [3, 3, 3, 3, 5, 5],
    [1, 1, 3, 3, 3, 4],
    [1, 1, 4, 4, 4, 4],
    [5, 5, 5, 5, 5, 5],
    [1, 4, 4, 4, 4, 4],
    [1, 2, 4, 4, 4, 4],
    [2, 2, 2, 3, 3, 3],
    [1, 4, 4, 4, 4, 4],
    [2, 2, 4, 4, 4, 5],
    [3, 3, 3, 3, 3, 5],
    [1, 1, 1, 4, 5, 5],
    [1, 1, 1, 1, 1, 2],
    [2, 2, 4, 4, 4, 4],
    [1, 3, 3, 5, 5, 5],
    [5, 5, 5, 5, 5, 5],
    [2, 4, 4, 4, 4, 4],
    [2, 2, 4, 5, 5, 5],
    [1, 1, 4, 4, 4, 4],
    [1, 4, 4, 4, 4, 5],
    [2, 2, 2, 2, 2, 4],
    [1, 1, 1, 1, 5, 5],
    [2, 2, 4, 4, 4, 4],
    [1, 3, 3, 3, 3, 3],
    [5, 5, 5, 5, 5, 5],
]

# Krippendorff (2011), "Computing Krippendorff's alpha-reliability", example C: 4 observers,
# 12 units, values 1..5, None = not coded. Published: nominal 0.743, ordinal 0.815,
# interval 0.849 (unit 12 has a single value and is not pairable).
KRIPPENDORFF_2011 = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
    [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
]


def as_ratings(raters_by_units):
    """Krippendorff's raters x units rows -> item_id -> {rater_id: label}."""
    return {
        f"unit{unit + 1}": {f"observer{rater + 1}": row[unit] for rater, row in enumerate(raters_by_units)}
        for unit in range(len(raters_by_units[0]))
    }


# --------------------------------------------------------------------------- independent formulas


def hand_fleiss(table):
    """Fleiss (1971) straight from the definitions."""
    table = np.asarray(table, dtype=float)
    items = table.shape[0]
    ratings_per_item = table[0].sum()
    item_agreement = ((table**2).sum(axis=1) - ratings_per_item) / (ratings_per_item * (ratings_per_item - 1))
    observed = item_agreement.mean()
    category_share = table.sum(axis=0) / (items * ratings_per_item)
    chance = (category_share**2).sum()
    return (observed - chance) / (1 - chance), observed, chance


def hand_krippendorff(units, level):
    """Krippendorff's alpha from the coincidence matrix, as in Krippendorff (2011)."""
    values = sorted({value for unit in units for value in unit})
    coincidences = Counter()
    for unit in units:
        if len(unit) < 2:
            continue
        for first, second in itertools.permutations(range(len(unit)), 2):
            coincidences[unit[first], unit[second]] += 1 / (len(unit) - 1)
    marginals = {value: sum(coincidences[value, other] for other in values) for value in values}
    total = sum(marginals.values())

    def squared_distance(first, second):
        if level == "nominal":
            return float(first != second)
        if level == "interval":
            return float(first - second) ** 2
        low, high = sorted((first, second))
        between = sum(marginals[value] for value in values if low <= value <= high)
        return (between - (marginals[first] + marginals[second]) / 2) ** 2

    observed_disagreement = (
        sum(coincidences[c, k] * squared_distance(c, k) for c in values for k in values) / total
    )
    expected_disagreement = sum(
        marginals[c] * marginals[k] * squared_distance(c, k) for c in values for k in values
    ) / (total * (total - 1))
    return 1 - observed_disagreement / expected_disagreement


# --------------------------------------------------------------------------- percent agreement


def test_percent_agreement_with_missing_ratings():
    ratings = {
        "q1": {"ann": "cat", "bob": "cat", "cy": None},  # 1 pair, agrees -> 1
        "q2": {"ann": "cat", "bob": "dog"},  # 1 pair, disagrees -> 0
        "q3": {"ann": "cat"},  # one rating: skipped
        "q4": {"ann": "cat", "bob": "cat", "cy": "dog"},  # 1 of 3 pairs agree -> 1/3
        "q5": {"ann": math.nan, "bob": "dog"},  # NaN is missing: skipped
    }
    result = percent_agreement(ratings)
    assert result.value == pytest.approx((1 + 0 + 1 / 3) / 3)
    assert result.items == 3
    assert result.raters == 3
    assert result.per_item == pytest.approx({"q1": 1.0, "q2": 0.0, "q4": 1 / 3})
    assert result.params["skipped_items"] == 2
    assert result.low is None and result.high is None


def test_percent_agreement_two_raters_is_share_of_items_agreed():
    ratings = {item: {"a": label, "b": other} for item, (label, other) in enumerate(["xx", "xy", "yy", "yx"])}
    assert percent_agreement(ratings).value == pytest.approx(0.5)


def test_fewer_than_two_raters_is_named():
    with pytest.raises(AgreementInputError, match=r"at least 2 raters; found 1 \('ann'\)"):
        percent_agreement({"q1": {"ann": "cat"}, "q2": {"ann": "dog"}})


def test_no_item_rated_twice_is_named():
    with pytest.raises(AgreementInputError, match="no item was rated by two or more raters"):
        krippendorff_alpha({"q1": {"ann": "cat"}, "q2": {"bob": "dog"}})


# --------------------------------------------------------------------------- Cohen's kappa


def textbook_two_by_two():
    """50 items: 20 yes/yes, 5 yes/no, 10 no/yes, 15 no/no (rater A / rater B)."""
    rater_a = ["yes"] * 20 + ["yes"] * 5 + ["no"] * 10 + ["no"] * 15
    rater_b = ["yes"] * 20 + ["no"] * 5 + ["yes"] * 10 + ["no"] * 15
    return rater_a, rater_b


def test_cohens_kappa_textbook_table():
    rater_a, rater_b = textbook_two_by_two()
    observed = (20 + 15) / 50  # 0.7
    chance = (25 / 50) * (30 / 50) + (25 / 50) * (20 / 50)  # 0.5
    assert (observed, chance) == pytest.approx((0.7, 0.5))
    result = cohens_kappa(rater_a, rater_b)
    assert result.value == pytest.approx((observed - chance) / (1 - chance))
    assert result.value == pytest.approx(0.4)
    assert (result.items, result.raters, result.statistic) == (50, 2, "cohens_kappa")


def test_cohens_kappa_from_mappings_and_ratings():
    rater_a, rater_b = textbook_two_by_two()
    ratings = {
        item: {"a": first, "b": second}
        for item, (first, second) in enumerate(zip(rater_a, rater_b, strict=True))
    }
    ratings[50] = {"a": "yes", "b": None}  # missing: dropped
    ratings[51] = {"a": "no"}  # rated by one: dropped
    first, second, item_ids = paired_labels(ratings, "a", "b")
    assert len(item_ids) == 50
    assert cohens_kappa(first, second).value == pytest.approx(0.4)
    by_item_a = {item: labels.get("a") for item, labels in ratings.items()}
    by_item_b = {item: labels.get("b") for item, labels in ratings.items()}
    assert cohens_kappa(by_item_a, by_item_b).value == pytest.approx(0.4)


def test_weighted_cohens_kappa_matches_hand_formula():
    rater_a = [1, 1, 2, 2, 3, 3, 1, 2, 3, 3]
    rater_b = [1, 2, 2, 3, 3, 1, 1, 2, 2, 3]
    categories = [1, 2, 3]
    observed = np.zeros((3, 3))
    for first, second in zip(rater_a, rater_b, strict=True):
        observed[categories.index(first), categories.index(second)] += 1
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0)) / observed.sum()
    for name, weight in {"linear": lambda i, j: abs(i - j), "quadratic": lambda i, j: (i - j) ** 2}.items():
        weights = np.array([[weight(i, j) for j in range(3)] for i in range(3)], dtype=float)
        hand = 1 - (weights * observed).sum() / (weights * expected).sum()
        result = cohens_kappa(rater_a, rater_b, weights=name)
        assert result.value == pytest.approx(hand)
        assert result.statistic == f"cohens_kappa_{name}"


def test_cohens_kappa_undefined_and_bad_input():
    assert cohens_kappa(["x", "x"], ["x", "x"]).value is None
    assert cohens_kappa(["x", "x"], ["y", "y"]).value == pytest.approx(0.0)
    with pytest.raises(AgreementInputError, match="rater_a has 2 and rater_b 3"):
        cohens_kappa(["x", "y"], ["x", "y", "x"])
    with pytest.raises(AgreementInputError, match="no item was rated by both"):
        cohens_kappa(["x", None], [None, "y"])


# --------------------------------------------------------------------------- Fleiss' kappa


def test_fleiss_kappa_wikipedia_example():
    hand, observed, chance = hand_fleiss(WIKIPEDIA_FLEISS_TABLE)
    assert round(observed, 3) == 0.378
    assert round(chance, 3) == 0.213
    result = fleiss_kappa(WIKIPEDIA_FLEISS_TABLE)
    assert result.value == pytest.approx(hand)
    assert round(result.value, 3) == 0.210
    assert (result.items, result.raters) == (10, 14)


def test_fleiss_kappa_1971_psychiatric_diagnoses_from_ratings():
    ratings = {
        f"patient{patient + 1}": {f"psychiatrist{slot + 1}": diagnosis for slot, diagnosis in enumerate(row)}
        for patient, row in enumerate(FLEISS_1971_DIAGNOSES)
    }
    table, categories = to_fleiss_table(ratings)
    assert categories == [1, 2, 3, 4, 5]
    assert table.shape == (30, 5) and set(table.sum(axis=1)) == {6}
    result = fleiss_kappa(ratings)
    assert result.value == pytest.approx(hand_fleiss(table)[0])
    assert round(result.value, 3) == 0.430
    assert result.items == 30
    assert result.params["ratings_per_item"] == 6


def test_fleiss_kappa_rejects_unbalanced_and_flags_undefined():
    with pytest.raises(AgreementInputError, match="same number of ratings"):
        fleiss_kappa({"q1": {"a": 1, "b": 1, "c": 2}, "q2": {"a": 1, "b": 2}})
    with pytest.raises(AgreementInputError, match="row sums are"):
        fleiss_kappa([[2, 1], [1, 1]])
    everyone_agrees = fleiss_kappa([[3, 0], [3, 0]])
    assert everyone_agrees.value is None
    assert "same category" in everyone_agrees.params["undefined_reason"]


# --------------------------------------------------------------------------- Krippendorff's alpha


@pytest.mark.parametrize(
    ("level", "published"), [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849)]
)
def test_krippendorff_2011_example(level, published):
    units = [
        [row[unit] for row in KRIPPENDORFF_2011 if row[unit] is not None]
        for unit in range(len(KRIPPENDORFF_2011[0]))
    ]
    independent = hand_krippendorff(units, level)
    assert round(independent, 3) == published
    from_matrix = krippendorff_alpha(KRIPPENDORFF_2011, level=level)
    from_mapping = krippendorff_alpha(as_ratings(KRIPPENDORFF_2011), level=level)
    assert from_matrix.value == pytest.approx(independent, abs=1e-12)
    assert from_mapping.value == pytest.approx(independent, abs=1e-12)
    assert (from_mapping.items, from_mapping.raters) == (11, 4)
    assert from_mapping.params["skipped_items"] == 1
    assert from_mapping.params["pairable_ratings"] == 40  # n in Krippendorff (2011)


def test_krippendorff_ordinal_with_word_labels_and_value_order():
    words = {1: "very low", 2: "low", 3: "mid", 4: "high", 5: "very high"}
    worded = [[None if value is None else words[value] for value in row] for row in KRIPPENDORFF_2011]
    ordinal = krippendorff_alpha(
        as_ratings(worded), level="ordinal", value_order=["very low", "low", "mid", "high", "very high"]
    )
    assert round(ordinal.value, 3) == 0.815
    assert round(krippendorff_alpha(as_ratings(worded), level="nominal").value, 3) == 0.743
    with pytest.raises(AgreementInputError, match="numeric labels"):
        krippendorff_alpha(as_ratings(worded), level="interval")
    with pytest.raises(AgreementInputError, match="not in value_order"):
        krippendorff_alpha(as_ratings(worded), level="ordinal", value_order=["low", "mid"])


def test_reliability_matrix_converter():
    reliability = to_reliability_matrix({"u1": {"b": "no", "a": "yes"}, "u2": {"a": "no"}})
    assert reliability.rater_ids == ["a", "b"]
    assert reliability.item_ids == ["u1", "u2"]
    assert reliability.categories == ["no", "yes"]
    np.testing.assert_array_equal(reliability.matrix, [[1, 0], [0, np.nan]])


def test_krippendorff_undefined_without_variation():
    result = krippendorff_alpha({"q1": {"a": "x", "b": "x"}, "q2": {"a": "x", "c": "x"}})
    assert result.value is None
    assert "same value" in result.params["undefined_reason"]


# --------------------------------------------------------------------------- regions and text

UNIT_SQUARE = [(0, 0), (1, 0), (1, 1), (0, 1)]
SHIFTED_SQUARE = [(0.5, 0), (1.5, 0), (1.5, 1), (0.5, 1)]


def test_polygon_iou_of_half_offset_unit_squares_is_one_third():
    # Intersection 0.5, union 1.5.
    assert polygon_iou(UNIT_SQUARE, SHIFTED_SQUARE) == pytest.approx(1 / 3)
    result = pairwise_polygon_iou({"region1": {"ann": UNIT_SQUARE, "bob": Polygon(SHIFTED_SQUARE)}})
    assert result.value == pytest.approx(1 / 3)
    assert (result.items, result.raters) == (1, 2)


def test_pairwise_polygon_iou_averages_pairs_then_items():
    far_square = [(5, 5), (6, 5), (6, 6), (5, 6)]
    polygons = {
        "item1": {"ann": UNIT_SQUARE, "bob": SHIFTED_SQUARE, "cy": UNIT_SQUARE},  # pairs 1/3, 1, 1/3
        "item2": {"ann": UNIT_SQUARE, "bob": far_square},  # 0
        "item3": {"ann": UNIT_SQUARE, "bob": None},  # one region: skipped
    }
    result = pairwise_polygon_iou(polygons)
    assert result.per_item == pytest.approx({"item1": 5 / 9, "item2": 0.0})
    assert result.value == pytest.approx((5 / 9 + 0) / 2)
    assert result.items == 2 and result.raters == 3


def test_invalid_bow_tie_polygon_is_repaired():
    bow_tie = [(0, 0), (1, 1), (1, 0), (0, 1)]  # self-intersecting; two triangles of area 1/4
    assert polygon_iou(bow_tie, UNIT_SQUARE) == pytest.approx(0.5)  # make_valid keeps both lobes
    assert polygon_iou(bow_tie, UNIT_SQUARE, repair="convex_hull") == pytest.approx(1.0)
    assert polygon_iou(bow_tie, UNIT_SQUARE, repair="buffer") == pytest.approx(0.25)  # drops a lobe


def test_two_empty_regions_are_undefined_not_perfect():
    line = [(0, 0), (1, 1), (2, 2)]
    assert polygon_iou(line, line) is None
    result = pairwise_polygon_iou({"a": {"x": line, "y": line}, "b": {"x": UNIT_SQUARE, "y": UNIT_SQUARE}})
    assert result.value == pytest.approx(1.0)
    assert result.params["undefined_pairs"] == 1
    assert result.items == 1


def test_text_similarity_is_one_minus_normalised_levenshtein():
    assert text_similarity("kitten", "sitting") == pytest.approx(1 - 3 / 7)
    assert text_similarity("", "") == 1.0
    assert text_similarity("abc", "") == 0.0
    assert text_similarity("Red  Cube", "red cube") < 1
    assert text_similarity("Red  Cube", "red cube", normalise=True) == 1.0


def test_pairwise_text_similarity():
    texts = {
        "q1": {"ann": "kitten", "bob": "sitting"},
        "q2": {"ann": "cube", "bob": "cube", "cy": "tube"},  # 1, 3/4, 3/4
        "q3": {"ann": "sphere", "bob": None},
    }
    result = pairwise_text_similarity(texts)
    assert result.per_item == pytest.approx({"q1": 4 / 7, "q2": 2.5 / 3})
    assert result.value == pytest.approx((4 / 7 + 2.5 / 3) / 2)


# --------------------------------------------------------------------------- bootstrap


def test_bootstrap_is_deterministic_and_covers_the_estimate():
    first = fleiss_kappa(WIKIPEDIA_FLEISS_TABLE, resamples=500, seed=3)
    again = fleiss_kappa(WIKIPEDIA_FLEISS_TABLE, resamples=500, seed=3)
    other = fleiss_kappa(WIKIPEDIA_FLEISS_TABLE, resamples=500, seed=4)
    assert (first.low, first.high) == (again.low, again.high)
    assert (first.low, first.high) != (other.low, other.high)
    assert first.low < first.value < first.high
    assert first.params["resamples"] == 500 and first.params["seed"] == 3

    rater_a, rater_b = textbook_two_by_two()
    kappa = cohens_kappa(rater_a, rater_b, resamples=500)
    assert kappa.low < 0.4 < kappa.high
    alpha = krippendorff_alpha(KRIPPENDORFF_2011, level="interval", resamples=300)
    assert alpha.low <= alpha.value <= alpha.high <= 1


def test_bootstrap_interval_resamples_items():
    items = list(range(1, 101))
    mean = lambda sample: float(np.mean(sample))  # noqa: E731
    low, high = bootstrap_interval(items, mean, resamples=1000, seed=0)
    assert (low, high) == bootstrap_interval(items, mean, resamples=1000, seed=0)
    assert low < 50.5 < high
    # Standard error of the mean of 1..100 is about 2.9, so a 95% interval spans about 11.
    assert 8 < high - low < 14
    assert bootstrap_interval([1, 1, 1], lambda sample: None, resamples=10) == (None, None)


def test_agreement_describe():
    result = Agreement("fleiss_kappa", 0.2099, 0.1, 0.3, items=10, raters=14, params={})
    assert str(result) == "fleiss_kappa 0.210 [0.100, 0.300] (10 items, 14 raters)"
    assert (
        Agreement("cohens_kappa", None, None, None, 2, 2).describe()
        == "cohens_kappa undefined (2 items, 2 raters)"
    )
    assert result.to_dict()["value"] == 0.2099
