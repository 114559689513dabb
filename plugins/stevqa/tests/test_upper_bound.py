"""STE-VQA's OCR upper bounds on hand-made tokens: the paper's (up to four tokens combined,
`ocr-upper-bound`) and the single token's (`ocr-upper-bound-1`).

No OCR runs here: the tokens are written by hand, as the OCR would give them (text, corners
clockwise from the top-left), so the tests need neither the fonts nor the OCR models.
"""

from __future__ import annotations

import math
import random
from itertools import permutations

from shapely.geometry import Point, Polygon

from inference.baselines import RunChoices, Unit, load_baseline
from plugins.stevqa import metric
from plugins.stevqa.baselines import (
    COMBINED_POOL,
    COMBINED_TOKENS,
    Token,
    combinations,
    covering_quad,
    join_texts,
    reading_order,
)
from plugins.stevqa.spec import SPEC


def token(text: str, left: float, top: float, width: float = 60, height: float = 20) -> Token:
    return Token(text, (left, top, left + width, top, left + width, top + height, left, top + height), 0.9)


def tilted(text: str, x: float, y: float, degrees: float, width: float = 60, height: float = 20) -> Token:
    """A token whose top-left corner is at (x, y), its top edge turned by `degrees` (image axes:
    positive turns clockwise on the screen, the right end lower)."""
    angle = math.radians(degrees)
    ux, uy = math.cos(angle), math.sin(angle)
    vx, vy = -uy, ux  # down the text
    corners = ((0, 0), (width, 0), (width, height), (0, height))
    return Token(
        text, tuple(value for a, b in corners for value in (x + a * ux + b * vx, y + a * uy + b * vy))
    )


def unit(answer: str, evidence: list | None = None, question: str = "What is written on the sign?") -> Unit:
    record = {"question_id": 1, "question": question, "answer": answer}
    if evidence is not None:
        record["evidence"] = [str(value) for value in evidence]
    return Unit("1", 0, record)


def bound(answer: str, tokens: list[Token], evidence: list | None = None, name: str = "ocr-upper-bound"):
    baseline = load_baseline(SPEC, name)
    baseline.load([], RunChoices())
    return baseline.choose(unit(answer, evidence), tokens)


def box(token: Token) -> tuple[float, float, float, float]:
    return min(token.quad[0::2]), min(token.quad[1::2]), max(token.quad[0::2]), max(token.quad[1::2])


def test_two_tokens_make_the_answer_in_reading_order_with_a_space():
    # The OCR lists the tokens in its own order; the answer reads them left to right.
    sign = [token("STREET", 170, 100, width=70), token("MAIN", 100, 102, width=50), token("EXIT", 400, 300)]
    chosen = bound("MAIN STREET", sign)
    assert chosen.text == "MAIN STREET"
    assert bound("MAIN STREET", sign, name="ocr-upper-bound-1").text in {"MAIN", "STREET"}
    # The evidence: the box of every corner of both tokens, clockwise from the top-left.
    assert chosen.evidence() == [100, 100, 240, 100, 240, 122, 100, 122]


def test_three_tokens_on_two_rows():
    board = [
        token("SEAFOOD", 100, 60, width=80),
        token("OCEAN", 170, 20, width=70),
        token("BLUE", 100, 22, width=60),
        token("OPEN", 300, 200),
    ]
    chosen = bound("BLUE OCEAN SEAFOOD", board)
    assert chosen.text == "BLUE OCEAN SEAFOOD"
    assert box(chosen) == (100, 20, 240, 80)


def test_chinese_tokens_join_without_a_space():
    street = [token("路", 190, 100, width=30), token("东风", 130, 100), token("出口", 10, 10)]
    assert bound("东风路", street).text == "东风路"
    board = [token("元", 160, 40, width=20), token("46", 120, 40, width=40)]
    assert bound("46元", board).text == "46元"
    assert join_texts(["MAIN", "STREET"]) == "MAIN STREET"
    assert join_texts(["DONGFENG", "路"]) == "DONGFENG路"


def test_the_closeness_is_the_metrics_own():
    # Traditional script in the image, simplified in the answer: equal once the metric normalises.
    chosen = bound("软件", [token("軟體", 100, 100), token("硬件店", 100, 200)])
    assert chosen.text == "軟體"
    assert metric.answer_score(chosen.text, "软件") == 1.0


def test_a_single_token_wins_when_it_is_the_answer():
    sign = [token("GOLDEN", 100, 20), token("BAKERY", 170, 20)]
    chosen = bound("GOLDEN", sign)
    assert chosen == sign[0]  # its own text and quadrilateral, not a covering box
    # When a single token and a combination spell the answer equally well, the single one.
    read_twice = [
        token("MAIN STREET", 100, 100, width=120),
        token("MAIN", 100, 300),
        token("STREET", 170, 300),
    ]
    assert bound("MAIN STREET", read_twice) == read_twice[0]


def test_the_one_on_the_true_evidence_wins_a_tie():
    # The same words twice: the combination on the true evidence wins over the single token.
    board = [token("MAIN STREET", 100, 300, width=120), token("MAIN", 100, 100), token("STREET", 170, 100)]
    truth = [100, 100, 230, 100, 230, 120, 100, 120]
    chosen = bound("MAIN STREET", board, evidence=truth)
    assert chosen.text == "MAIN STREET" and box(chosen) == (100, 100, 230, 120)
    prices = [token("2.5元", 100, 40), token("2.5元", 100, 80)]
    for name in ("ocr-upper-bound", "ocr-upper-bound-1"):
        assert bound("2.5元", prices, evidence=[100, 80, 160, 80, 160, 100, 100, 100], name=name) == prices[1]


def test_at_most_four_tokens_are_combined():
    words = ["ONE", "TWO", "THREE", "FOUR", "FIVE"]
    line = [token(word, 100 + 80 * index, 100) for index, word in enumerate(words)]
    answer = " ".join(words)
    chosen = bound(answer, line)
    assert len(chosen.text.split()) == COMBINED_TOKENS
    assert chosen.text != answer
    # Leaving out a three-letter word costs least; ONE and TWO tie, and the first combination of
    # the tokens as listed wins the tie (it keeps ONE).
    assert chosen.text == "ONE THREE FOUR FIVE"
    assert metric.answer_score(chosen.text, answer) < 1
    four = [token(word, 100 + 80 * index, 100) for index, word in enumerate(words[:4])]
    assert bound(" ".join(words[:4]), four).text == " ".join(words[:4])


def test_tilted_text_reads_along_its_tilt_and_the_evidence_tilts_with_it():
    # A sign rising to the right: STREET's centre is above MAIN's, yet it is read second.
    angle = -20
    main = tilted("MAIN", 100, 200, angle, width=50)
    step = 60
    street = tilted(
        "STREET",
        100 + step * math.cos(math.radians(angle)),
        200 + step * math.sin(math.radians(angle)),
        angle,
    )
    assert street.centre[1] < main.centre[1]
    assert reading_order([street, main]) == [main, street]
    chosen = bound("MAIN STREET", [street, main])
    assert chosen.text == "MAIN STREET"
    (x1, y1), (x2, y2) = chosen.corner(0), chosen.corner(1)
    assert math.isclose(math.degrees(math.atan2(y2 - y1, x2 - x1)), angle, abs_tol=1e-6)
    # It covers both tokens, tightly: every corner of them is inside it, and it is no larger than
    # the two tokens and the gap between them. Its corners run clockwise on the screen (y down).
    cover = Polygon(list(zip(chosen.quad[0::2], chosen.quad[1::2], strict=True)))
    assert cover.is_valid and cover.exterior.is_ccw
    assert all(
        cover.buffer(1e-6).contains(Point(piece.corner(index)))
        for piece in (main, street)
        for index in range(4)
    )
    assert math.isclose(cover.area, (step + 60) * 20)
    assert chosen.quad == covering_quad([main, street])
    assert len(chosen.evidence()) == 8


def test_only_tokens_that_may_be_part_of_the_answer_are_combined():
    scene = [
        token("MAIN", 100, 100),
        token("STREET", 170, 100),
        token("EXIT", 100, 300),
        token("SALE", 200, 300),
    ]
    found = combinations(scene, "MAIN STREET")
    assert [[piece.text for piece in combined] for combined in found] == [["MAIN", "STREET"]]
    assert combinations(scene, "") == []


def test_sixty_tokens_are_searched_over_a_bounded_number_of_combinations():
    rng = random.Random(5)
    words = ["MAIN", "STREET", "STAR", "NOODLE", "HOUSE", "MART", "AMIN", "TREES", "SEAT", "HOME"]
    scene = [token(rng.choice(words), rng.uniform(0, 580), rng.uniform(0, 460)) for _ in range(60)]
    found = combinations(scene, "MAIN STREET NOODLE HOUSE")
    pool = COMBINED_POOL
    assert len(found) == math.comb(pool, 2) + math.comb(pool, 3) + math.comb(pool, 4)
    assert bound("MAIN STREET NOODLE HOUSE", scene).text


def test_the_answer_does_not_depend_on_the_order_the_ocr_lists_tokens_in():
    sign = [
        token("HAPPY", 100, 20),
        token("NOODLE", 170, 20, width=70),
        token("HOUSE", 250, 20),
        token("OPEN", 100, 60),
        token("9AM", 170, 60),
    ]
    first = bound("HAPPY NOODLE HOUSE", sign)
    assert first.text == "HAPPY NOODLE HOUSE"
    assert first.evidence() == [100, 20, 310, 20, 310, 40, 100, 40]
    for order in permutations(sign):
        again = bound("HAPPY NOODLE HOUSE", list(order))
        assert (again.text, again.evidence()) == (first.text, first.evidence())


def test_predictions_carry_the_combined_answer_and_its_evidence(tmp_path):
    baseline = load_baseline(SPEC, "ocr-upper-bound")
    units = [unit("MAIN STREET"), Unit("2", 0, {"question_id": 2, "question": "?", "answer": "MAIN"})]
    baseline.load(units, RunChoices())
    baseline.reader.cache[str(tmp_path / "a.png")] = [token("STREET", 170, 100), token("MAIN", 100, 100)]
    units = [Unit(item.id, 0, item.record, {}, {"image": str(tmp_path / "a.png")}) for item in units]
    predictions = baseline.predict(units, None)
    assert predictions == [
        {"question_id": 1, "answer": "MAIN STREET", "evidence": [100, 100, 230, 100, 230, 120, 100, 120]},
        {"question_id": 2, "answer": "MAIN", "evidence": [100, 100, 160, 100, 160, 120, 100, 120]},
    ]
    parameters = baseline.parameters()
    assert parameters["combined_tokens_at_most"] == 4 and parameters["combined_pool"] == COMBINED_POOL
