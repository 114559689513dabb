"""What the result panel says about an answer, per benchmark (pure, no database)."""

from types import SimpleNamespace

from humantest.trials import TrialUnit, trial_for
from tests.benchmarks.builders import trance_sample


def trance_unit() -> TrialUnit:
    sample = trance_sample()
    initial, final = sample["states"]
    item = SimpleNamespace(
        payload={"initial": {"objects": initial["objects"]}}, ground_truth={"final_objects": final["objects"]}
    )
    return TrialUnit(item=item, part=0, context={"setting": "event"}, key=1)


def test_trance_explains_each_difference_from_the_final_scene():
    unit = trance_unit()
    explain = trial_for("trance").explain
    right = [
        {"obj_idx": 2, "attr": "color", "val": "cyan"},
        {"obj_idx": 2, "attr": "position", "val": ["behind", 2]},
    ]
    assert explain(unit, right) == ["Your steps lead exactly to the final scene."]
    assert explain(unit, right[1:]) == ["Object 2: your color is blue, the final scene shows cyan."]
    moved = [*right, {"obj_idx": 3, "attr": "position", "val": ["front", 1]}]
    assert explain(unit, moved) == [
        "Object 3: your steps put it at (-22, 19), the final scene has it at (-12, 19)."
    ]
    # Both positions outside the visible area: the images cannot tell them apart, so no difference.
    assert explain(unit, right[:1]) == ["Your steps lead exactly to the final scene."]
    assert explain(unit, None) == ["Object 2: your color is blue, the final scene shows cyan."]  # timed out
