"""Plots drawn with Chinese words show them, in the CJK font `make run` installs (issue 28)."""

import re
from pathlib import Path

import pytest

from evaluation.plots import accuracy_against_time


@pytest.mark.skipif(
    not Path("/usr/share/fonts/truetype/wqy").is_dir(),
    reason="needs fonts-wqy-microhei (make test installs it)",
)
def test_chinese_labels_are_drawn_with_the_cjk_font_and_latin_with_dejavu():
    svg = accuracy_against_time(
        [(3.0, 0.8, "kept"), (1.0, 0.2, "excluded")],
        fastest=2.0,
        labels={"x": "每试次中位秒数", "y": "准确率", "kept": "保留", "excluded": "排除"},
    )
    fonts = set(re.findall(r'id="([A-Za-z]+)-[0-9a-f]+"', svg))
    # Each Chinese character is a glyph of WenQuanYi Micro Hei; digits and "s" stay in DejaVu Sans.
    assert {"WenQuanYiMicroHei", "DejaVuSans"} <= fonts
    english = accuracy_against_time([(3.0, 0.8, "kept")])
    assert "WenQuanYiMicroHei" not in english
