"""Answers in words, as the pages that list answers show them (who misses what), per benchmark."""

import pytest

from benchmarks import registry
from benchmarks.spec import described_answer


@pytest.mark.parametrize(
    ("benchmark", "answer", "lines"),
    [
        (
            "trance",
            [{"obj_idx": 3, "attr": "position", "val": ["behind", 2]}],
            ["object 3: position → behind 2"],
        ),
        ("trance", [], ["no steps"]),
        ("cric", {"answer": "table", "object": 4}, ["“table”", "object 4"]),
        ("cric", {"answer": "no", "object": None}, ["“no”", "no object"]),
        (
            "stevqa",
            {"answer": "出口", "evidence": [1, 2, 3, 2, 3, 4, 1, 4]},
            ["“出口”", "evidence (1, 2), (3, 2), (3, 4), (1, 4)"],
        ),
        ("clevrref", {"objects": [4, 1]}, ["objects 1, 4"]),
        ("clevrref", {"box": [10, 20, 30.5, 40]}, ["box x, y, w, h = 10, 20, 30.5, 40"]),
    ],
)
def test_each_benchmark_words_its_answers(benchmark, answer, lines):
    assert described_answer(registry.get(benchmark), answer) == lines


@pytest.mark.parametrize("benchmark", ["trance", "cric", "stevqa", "clevrref"])
@pytest.mark.parametrize("odd", [{"x": 1}, "text", 7, None, [1, 2], {"answer": None, "evidence": "x"}])
def test_an_answer_the_benchmark_cannot_read_is_shown_as_json(benchmark, odd):
    lines = described_answer(registry.get(benchmark), odd)
    assert len(lines) >= 1 and all(isinstance(line, str) for line in lines)


def test_trance_shows_the_initial_scene_first_whatever_order_the_database_keeps():
    media = {
        "fin.Camera_Right": "r",
        "fin.Camera_Center": "c",
        "init.Camera_Center": "i",
        "fin.Camera_Left": "l",
    }
    assert registry.get("trance").media_roles(media) == [
        "init.Camera_Center",
        "fin.Camera_Center",
        "fin.Camera_Left",
        "fin.Camera_Right",
    ]
    assert registry.get("cric").media_roles({"b": "1", "a": "2"}) == ["a", "b"]
