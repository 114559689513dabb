"""CLEVR-Ref+ baselines: the program executor and a random object (no database)."""

from pathlib import Path

import numpy as np
import pytest

from benchmarks.spec import ScoringFiles
from inference.baselines import RunChoices, Unit, load_baseline
from plugins.clevrref import metric
from plugins.clevrref.baselines import EMPTY_BOX, union_box
from plugins.clevrref.expressions import generate
from plugins.clevrref.scenes import decode_mask
from plugins.clevrref.spec import SPEC


def demo_units(refexps: Path, scenes_file: Path, images: Path) -> list[Unit]:
    """The scoring units of a demo refexp file, as the inference runner builds them."""
    scenes = {
        scene.external_id: scene.data for scene in SPEC.formats.parse_scenes(scenes_file.read_bytes()).scenes
    }
    return [
        Unit(
            unit.id,
            unit.part,
            unit.record,
            record.payload,
            {role: str(images / name) for role, name in record.media.items()},
            scenes.get(record.scene),
        )
        for record in SPEC.formats.parse(refexps.read_bytes()).records
        for unit in SPEC.units(record.external_id, record.payload, record.ground_truth)
    ]


def run(name: str, units: list[Unit], seed: int = 0) -> list[dict]:
    baseline = load_baseline(SPEC, name)
    baseline.load(units, RunChoices(seed=seed))
    predictions = []
    for batch, inputs in baseline.batches(units, 16):
        predictions += baseline.predict(batch, inputs)
    return predictions


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    files = generate(tmp_path_factory.mktemp("clevrref"), images=8, seed=2, split="val")
    return files, demo_units(files.refexps_file, files.scenes_file, files.images_dir)


def score(files, units, predictions, variant="official"):
    data = SPEC.write_predictions(
        [(unit.id, prediction) for unit, prediction in zip(units, predictions, strict=True)]
    )
    parsed = metric.parse_predictions(data)
    assert [record["refexp_index"] for record in parsed] == [int(unit.id) for unit in units]
    assert all("box" in record and "mask" in record for record in parsed)
    return SPEC.score_files(
        ScoringFiles(files.refexps_file.read_bytes(), data, files.scenes_file.read_bytes(), variant=variant)
    ).summary


def test_the_executor_finds_every_referred_object(demo):
    files, units = demo
    summary = score(files, units, run("executor", units))
    overall = summary["overall"]
    assert overall["count"] == len(units) >= 30
    assert overall["detection_count"] > 0
    assert overall["detection_accuracy"] == overall["official_cumulative_iou"] == 1.0
    # Its full-resolution masks are resized like the ground truth, and score 1 at full resolution too.
    overall = score(files, units, run("executor", units), variant="full-resolution")["overall"]
    assert overall["full_resolution_mean_iou"] == overall["full_resolution_cumulative_iou"] == 1.0


def test_several_referred_objects_get_their_union_box_and_mask(demo):
    _, units = demo
    unit, prediction = next(
        (unit, prediction)
        for unit, prediction in zip(units, run("executor", units), strict=True)
        if len(unit.record["program"][-1]["_output"]) > 1
    )
    referred = unit.record["program"][-1]["_output"]
    boxes = [unit.scene["obj_bbox"][str(index + 1)] for index in referred]
    assert prediction["box"] == union_box(boxes)
    expected = np.zeros_like(decode_mask(prediction["mask"]))
    for index in referred:
        expected |= decode_mask(unit.scene["obj_mask"][str(index + 1)])
    assert np.array_equal(decode_mask(prediction["mask"]), expected)


def test_union_box():
    assert union_box([[10, 20, 5, 5], [0, 30, 4, 10]]) == [0, 20, 15, 20]
    assert union_box([]) == EMPTY_BOX


def test_the_executor_answers_a_program_it_cannot_run_with_an_empty_box(demo):
    _, units = demo
    unit = units[0]
    program = [
        {"type": "scene", "inputs": [], "value_inputs": [], "_output": []},
        {"type": "unique", "inputs": [0], "value_inputs": [], "_output": []},
    ]
    broken = Unit(unit.id, 0, {**unit.record, "program": program}, unit.payload, unit.images, unit.scene)
    baseline = load_baseline(SPEC, "executor")
    baseline.load([broken], RunChoices())
    (prediction,) = baseline.predict([broken], None)
    assert prediction["box"] == EMPTY_BOX
    assert not decode_mask(prediction["mask"]).any()
    assert baseline.parameters()["programs_failed"] == 1


def test_a_random_object_repeats_with_its_seed_and_scores_low(demo):
    files, units = demo
    first, again, other = (
        run("random", units, seed=5),
        run("random", units, seed=5),
        run("random", units, seed=6),
    )
    assert first == again
    assert first != other
    for unit, prediction in zip(units, first, strict=True):
        assert prediction["box"] in [list(box) for box in unit.scene["obj_bbox"].values()]
    summary = score(files, units, first)
    assert summary["overall"]["detection_accuracy"] < 0.6
    assert summary["overall"]["official_cumulative_iou"] < 0.6


def test_the_executor_names_nothing_for_a_false_premise(tmp_path):
    """On false premises the program outputs no object, so the executor answers the box
    [0, 0, 0, 0] (no area) and the empty mask: it names nothing, which is right every time."""
    files = generate(tmp_path, images=6, seed=2, split="val", false_premise_share=0.5)
    units = demo_units(files.refexps_file, files.scenes_file, files.images_dir)
    assert files.false_premise_count > 0
    summary = score(files, units, run("executor", units))
    assert summary["false_premise"]["n"] == files.false_premise_count
    assert summary["false_premise"]["accuracy"] == 1.0
    assert (
        summary["false_premise"]["detection_accuracy"]
        == summary["false_premise"]["segmentation_accuracy"]
        == 1.0
    )
    assert summary["overall"]["count"] == len(units) - files.false_premise_count
    assert summary["overall"]["detection_accuracy"] == summary["overall"]["official_cumulative_iou"] == 1.0
