"""TRANCE's prompt and parser for served chat models: the initial objects described and both
Center renders shown, the steps read from a JSON list in the reply (leniently), a reply that
cannot be read unparsed (no steps). View is not offered: it needs an answer per final camera."""

import pytest

from inference.plugins import ModelInput
from inference.served import Unparsed
from plugins.trance.served import TranceServed
from plugins.trance.spec import SPEC

FORMAT = TranceServed()
OBJECTS = [
    {"color": "red", "material": "metal", "shape": "cube", "size": "small", "position": [10, -20]},
    {"color": "cyan", "material": "glass", "shape": "sphere", "size": "large", "position": [-30, 0]},
]
IMAGES = {
    "init.Camera_Center": "/x/0-init.png",
    "fin.Camera_Center": "/x/0-fin.C.png",
    "fin.Camera_Left": "/x/l.png",
}


def item(setting: str = "event") -> ModelInput:
    return ModelInput("4", setting, {"idx": 4, "initial": {"objects": OBJECTS, "images": {}}}, IMAGES)


def test_the_prompt_lists_the_objects_the_values_and_the_number_of_steps():
    text, roles = FORMAT.prompt(item("basic"))
    assert roles == ["init.Camera_Center", "fin.Camera_Center"]
    assert "0: small red metal cube at (10, -20)\n1: large cyan glass sphere at (-30, 0)" in text
    assert "Exactly one transformation" in text and "color to gray, red" in text
    assert "front-left (-x -y)" in text and '[2, "position", ["behind", 2]]' in text
    assert "Between 1 and 4 transformations" in FORMAT.prompt(item("event"))[0]
    assert FORMAT.settings == ("basic", "event")


@pytest.mark.parametrize(
    "reply",
    [
        '[[1, "color", "red"], [0, "position", ["behind", 2]]]',
        'Comparing the two scenes:\n```json\n[[1, "Color", "Red"], ["0", "position", "behind 2"]]\n```\nDone.',
        "The steps are [[1, 'color', 'red'], [0, 'position', ['behind', 2]]] in this order.",
        '{"steps": [{"obj_idx": 1, "attr": "color", "val": "red"}, {"object": 0, "attribute": "position", "value": ["behind", "2"]}]}',
    ],
)
def test_the_parser_reads_the_steps_through_the_chatter(reply):
    steps = FORMAT.parse(reply, item())
    assert steps == [
        {"obj_idx": 1, "attr": "color", "val": "red"},
        {"obj_idx": 0, "attr": "position", "val": ["behind", 2]},
    ]
    assert SPEC.read_predictions(SPEC.write_predictions([("4", steps)])) == {"4": steps}


def test_one_step_outside_a_list_and_no_steps_are_read_too():
    assert FORMAT.parse('[3, "size", "large"]', item("basic")) == [
        {"obj_idx": 3, "attr": "size", "val": "large"}
    ]
    assert FORMAT.parse("No change: []", item()) == []


@pytest.mark.parametrize(
    "reply",
    [
        "The red cube became blue.",
        '[[12, "color", "red"]]',
        '[[1, "colour", "red"]]',
        '[[1, "color", "pink"]]',
        '[[1, "position", ["up", 1]]]',
        '[[1, "position", ["behind", 3]]]',
    ],
)
def test_garbage_or_an_unknown_step_is_unparsed_and_answered_with_no_steps(reply):
    with pytest.raises(Unparsed):
        FORMAT.parse(reply, item())
    assert FORMAT.unparsed(item()) == []
