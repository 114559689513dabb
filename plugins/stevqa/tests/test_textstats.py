"""Tests for the question/answer statistics and their plots (pure Python, no database)."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from PIL import Image

from plugins.stevqa import textstats
from plugins.stevqa.textstats import first_words, lengths, statistics

ROOT = Path(__file__).resolve().parents[3]
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"

ENGLISH_QUESTIONS = [
    "What is the name of the shop?",
    "What is the price of the tea?",
    "what IS the street called",
    "Which street is this?",
    "How many?",
]
CHINESE_QUESTIONS = ["这家店叫什么名字？", "这家店的名字是什么?", "这条路叫什么名字?"]


def test_first_words_of_english_questions_are_lower_cased_without_punctuation():
    assert first_words(ENGLISH_QUESTIONS) == [("what is the", 3), ("how many", 1), ("which street is", 1)]
    assert first_words(ENGLISH_QUESTIONS, words=1) == [("what", 3), ("how", 1), ("which", 1)]
    assert first_words(ENGLISH_QUESTIONS, words=2, top=2) == [("what is", 3), ("how many", 1)]


def test_first_words_of_chinese_questions_are_jieba_tokens():
    assert first_words(CHINESE_QUESTIONS) == [("这家 店 叫", 1), ("这家 店 的", 1), ("这条 路 叫", 1)]
    assert first_words(CHINESE_QUESTIONS, words=1) == [("这家", 2), ("这条", 1)]
    assert first_words(CHINESE_QUESTIONS, words=2) == [("这家 店", 2), ("这条 路", 1)]


def test_first_words_skip_what_is_not_a_question():
    assert first_words(["", "？", None, "What?"]) == [("what", 1)]
    assert first_words([]) == []


@pytest.mark.parametrize(
    ("text", "length"),
    [
        ("What is the name of the shop?", 7),
        ("GOLDEN BAKERY", 2),
        ("9AM - 6PM", 2),  # the dash alone is no word
        ("$7.75", 1),
        ("这家店叫什么名字？", 5),  # 这家 店 叫 什么 名字
        ("9元/斤", 3),  # 9 元 斤
        ("东风路", 1),
        ("", 0),
        ("  ", 0),
    ],
)
def test_lengths_in_tokens(text, length):
    assert lengths([text]) == [length]


def test_lengths_keep_the_order_and_count_non_text_as_zero():
    assert lengths(["a b c", None, "这家店叫什么名字", "x"]) == [3, 0, 5, 1]


def test_statistics_split_by_the_language_of_the_question():
    pairs = [
        {"question": "What is the name of the shop?", "answer": "GOLDEN BAKERY"},
        {"question": "What is the price of the tea?", "answer": "$2.50"},
        {"question": "这条路叫什么名字？", "answer": "ZHONGSHAN RD"},  # a Chinese question, Latin answer
        {"question": "这家店叫什么名字？", "answer": "小颜家电维修"},
        {"question": "   ", "answer": "ignored"},
        {"question": "Which street is this?", "answer": ""},
        "not a pair",
    ]
    stats = statistics(pairs)
    assert set(stats) == {"en", "ch"}
    english, chinese = stats["en"], stats["ch"]
    assert english["questions"] == 3 and chinese["questions"] == 2
    assert english["question_lengths"] == [7, 7, 4]
    assert english["answer_lengths"] == [2, 1]
    assert english["first_words"] == [("what is the", 2), ("which street is", 1)]
    assert chinese["answer_lengths"] == [2, len(textstats.tokens("小颜家电维修"))]
    assert chinese["first_words"] == [("这家 店 叫", 1), ("这条 路 叫", 1)]


def test_statistics_of_nothing_have_both_languages_empty():
    empty = {"questions": 0, "question_lengths": [], "answer_lengths": [], "first_words": []}
    assert statistics([]) == {"en": empty, "ch": empty}


# --- plots --------------------------------------------------------------------------------------


def demo_stats(tmp_path):
    from plugins.stevqa import demo

    if not demo.CHINESE_FONT_PATH.is_file():
        pytest.skip("fonts-wqy-microhei missing")
    records = json.loads(demo.generate_demo(tmp_path, count=10, seed=2).read_text(encoding="utf-8"))
    return statistics([pair for record in records for pair in record["annotation"]])


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == PNG_SIGNATURE
    with Image.open(io.BytesIO(data)) as image:
        image.verify()
    with Image.open(io.BytesIO(data)) as image:
        return image.size


def test_first_words_plot_is_a_two_panel_png(tmp_path):
    stats = demo_stats(tmp_path)
    assert stats["en"]["questions"] and stats["ch"]["questions"]
    width, height = png_size(textstats.first_words_plot(stats))
    assert width >= 1000 and 300 <= height <= 1200


def test_length_histograms_plot_is_a_png(tmp_path):
    width, height = png_size(textstats.length_histograms_plot(demo_stats(tmp_path)))
    assert width >= 900 and height >= 600


def test_plots_draw_statistics_read_back_from_json_and_empty_ones(tmp_path):
    stats = json.loads(json.dumps(statistics([{"question": "这家店叫什么名字？", "answer": "东风路"}])))
    for plot in (textstats.first_words_plot, textstats.length_histograms_plot):
        png_size(plot(stats))
        png_size(plot(statistics([])))
        png_size(plot({}))


def test_labels_can_be_replaced(tmp_path):
    stats = statistics([{"question": "What is the name of the shop?", "answer": "ACE SHOES"}])
    plain = textstats.first_words_plot(stats)
    translated = textstats.first_words_plot(
        stats, labels={"en": "英文", "first_words": "{language}：{count} 个问题"}
    )
    assert plain != translated


def test_chinese_labels_use_a_cjk_font():
    from matplotlib import font_manager

    from plugins.stevqa import demo

    if not demo.CHINESE_FONT_PATH.is_file():
        pytest.skip("fonts-wqy-microhei missing")
    family = textstats.cjk_family()
    assert family == "WenQuanYi Micro Hei"
    found = font_manager.findfont(font_manager.FontProperties(family=family), fallback_to_default=False)
    assert Path(found).name == demo.CHINESE_FONT_PATH.name


def test_without_any_cjk_font_the_plots_are_still_drawn(monkeypatch, tmp_path):
    from plugins.stevqa import demo

    monkeypatch.setattr(demo, "CHINESE_FONT_PATH", tmp_path / "absent.ttc")
    assert textstats.cjk_family.__wrapped__() in (*textstats.CJK_FAMILIES, None)
    monkeypatch.setattr(textstats, "cjk_family", lambda: None)
    stats = statistics([{"question": "这家店叫什么名字？", "answer": "东风路"}])
    png_size(textstats.first_words_plot(stats))
    png_size(textstats.length_histograms_plot(stats))


def test_the_modules_import_no_django_and_jieba_stays_quiet():
    """The three modules are pure, and counting Chinese tokens prints nothing (jieba logs its
    dictionary loading unless told not to)."""
    script = (
        "import sys\n"
        "from plugins.stevqa import evidence, rules, textstats\n"
        "print(textstats.lengths(['这家店叫什么名字？']))\n"
        "assert not [name for name in sys.modules if name.split('.')[0] in ('django', 'rest_framework', 'celery')]\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "[5]\n"
    assert done.stderr == ""
