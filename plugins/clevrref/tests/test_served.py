"""CLEVR-Ref+'s prompt and parser for served chat models: the image's size and the expression
asked, a box [x1, y1, x2, y2] read and written as [x, y, w, h]; NONE is an answer without a box;
a reply without a box is unparsed (a box over the whole image: wrong everywhere)."""

import pytest
from PIL import Image

from inference.plugins import ModelInput
from inference.served import Unparsed
from plugins.clevrref.served import ClevrRefServed
from plugins.clevrref.spec import SPEC

FORMAT = ClevrRefServed()


@pytest.fixture
def item(tmp_path):
    path = tmp_path / "CLEVR_val_000003.png"
    Image.new("RGB", (480, 320), "gray").save(path)
    payload = {"refexp_index": 12, "refexp": "the small cylinder left of the red cube", "image_index": 3}
    return ModelInput("12", "", payload, {"image": str(path)})


def test_the_prompt_gives_the_image_s_size_and_the_expression(item):
    text, roles = FORMAT.prompt(item)
    assert text.startswith("The image is 480 x 320 pixels.") and roles == ["image"]
    assert '"the small cylinder left of the red cube"' in text and "[x1, y1, x2, y2]" in text


@pytest.mark.parametrize(
    ("reply", "box"),
    [
        ("[100, 50, 160, 120]", [100, 50, 60, 70]),
        ("The object is at [x1, y1, x2, y2] = [100.5, 50, 160, 120.25].", [100.5, 50, 59.5, 70.25]),
        ('```json\n{"bbox": [160, 120, 100, 50]}\n```', [100, 50, 60, 70]),  # corners in either order
        ("(0.25, 0.5, 0.5, 0.75)", [120, 160, 120, 80]),  # fractions of the image
    ],
)
def test_the_parser_reads_a_box_through_the_chatter(item, reply, box):
    prediction = FORMAT.parse(reply, item)
    assert prediction == {"refexp_index": 12, "box": box}
    assert SPEC.read_predictions(SPEC.write_predictions([("12", prediction)]))["12"]["box"] == box


def test_none_is_an_answer_without_a_box(item):
    assert FORMAT.parse("NONE: no object matches.", item) == {"refexp_index": 12}


@pytest.mark.parametrize("reply", ["", "It is the cylinder.", "[1, 2, 3]"])
def test_a_reply_without_a_box_is_unparsed_and_answered_with_the_whole_image(item, reply):
    with pytest.raises(Unparsed):
        FORMAT.parse(reply, item)
    assert FORMAT.unparsed(item) == {"refexp_index": 12, "box": [0, 0, 480, 320]}
