"""TRANCE baselines: Random, the symbolic solver, TranceNet, and the training command."""

import dataclasses
import json
from pathlib import Path

import pytest
import torch
from django.core.management import call_command
from django.core.management.base import CommandError
from PIL import Image, ImageDraw

from benchmarks import registry
from benchmarks.spec import BenchmarkSpec
from inference.baselines import RunChoices, Unit, load_baseline
from plugins.trance import formats, metric
from plugins.trance.baselines import TranceNetBaseline, final_cameras, solve
from plugins.trance.formats import BASIC, EVENT, VIEW
from plugins.trance.generator import generate
from plugins.trance.simulator import apply_steps
from plugins.trance.spec import SPEC
from plugins.trance.tests.helpers import fake_pixel_counter

TINY = {"hidden": 16, "image_height": 24, "image_width": 32}


def fake_image_writer(objects, camera, path):
    """A small PNG with a coloured square per drawn object where it stands: quick, and it changes
    when the scene does."""
    image = Image.new("RGB", (64, 48), "gray")
    draw = ImageDraw.Draw(image)
    palette = {"red": "red", "blue": "blue", "green": "green", "yellow": "yellow", "cyan": "cyan"}
    for obj in objects:
        column, row = 32 + obj.y * 1.4, 24 + obj.x * 1.0
        side = {2.0: 2, 4.0: 3, 6.0: 4}.get(obj.radius, 3)
        draw.rectangle(
            (column - side, row - side, column + side, row + side), fill=palette.get(obj.color, "white")
        )
    image.save(path)


def read_records(folder):
    return [json.loads(line) for line in (Path(folder) / "data.jsonl").read_text().splitlines()]


def units_of(records, folder=None):
    units = []
    for record in records:
        catalog = formats.record_to_catalog(record, None)
        images = {role: str(Path(folder) / name) for role, name in catalog.media.items()} if folder else {}
        units.append(
            Unit(id=catalog.external_id, part=0, record=record, payload=catalog.payload, images=images)
        )
    return units


def answer(baseline, units, setting, **choices):
    """Run a baseline the way the inference runner does; return the parsed prediction file."""
    baseline.load(units, RunChoices(setting=setting, **choices))
    pairs = []
    for batch_units, inputs in baseline.batches(units, 4):
        pairs.extend(
            zip([unit.id for unit in batch_units], baseline.predict(batch_units, inputs), strict=True)
        )
    assert [unit_id for unit_id, _ in pairs] == [unit.id for unit in units]
    return metric.parse_predictions(SPEC.write_predictions(pairs))


@pytest.fixture(scope="module")
def samples(tmp_path_factory):
    """60 samples of every length, no images."""
    folder = tmp_path_factory.mktemp("trance-samples")
    generate(folder, count=60, seed=5, render_images=False, pixel_counter=fake_pixel_counter)
    return read_records(folder)


@pytest.fixture(scope="module")
def tiny_folder(tmp_path_factory):
    """12 single-step samples with small fake renders of the initial and final Center views."""
    folder = tmp_path_factory.mktemp("trance-tiny")
    generate(
        folder,
        count=12,
        seed=3,
        lengths=[1],
        final_cameras=["Camera_Center"],
        pixel_counter=fake_pixel_counter,
        image_writer=fake_image_writer,
    )
    return folder


# --- Random --------------------------------------------------------------------------------------


def test_random_is_reproducible_per_seed_and_answers_in_the_official_form(samples):
    units = units_of(samples)
    first = answer(load_baseline(SPEC, "random"), units, EVENT, seed=7)
    again = answer(load_baseline(SPEC, "random"), units, EVENT, seed=7)
    other = answer(load_baseline(SPEC, "random"), units, EVENT, seed=8)
    assert first == again
    assert first != other
    assert set(first) == {record["idx"] for record in samples}
    assert {len(steps) for steps in first.values()} == {1, 2, 3, 4}
    basic = answer(load_baseline(SPEC, "random"), units, BASIC, seed=7)
    assert {len(steps) for steps in basic.values()} == {1}
    assert metric.score_event(samples, first).summary["Acc"] < 0.1


# --- Symbolic ------------------------------------------------------------------------------------


def test_symbolic_solver_is_right_on_every_basic_event_and_view_sample(samples):
    symbolic = load_baseline(SPEC, "symbolic")
    single = [record for record in samples if len(record["transformations"]) == 1]
    assert single
    basic = metric.score_basic(single, answer(symbolic, units_of(single), BASIC))
    assert basic.summary["Acc"] == 1.0
    event = metric.score_event(samples, answer(symbolic, units_of(samples), EVENT))
    assert event.summary["Acc"] == 1.0
    view_answers = answer(symbolic, units_of(samples), VIEW)
    # It reads no image: one list of steps answers all three cameras of the released protocol.
    assert all(isinstance(steps, list) for steps in view_answers.values())
    view = metric.score_view_cameras(samples, view_answers)
    assert (view.summary["Acc"], view.summary["n"]) == (1.0, 3 * len(samples))


def test_symbolic_solver_moves_the_blocking_object_first():
    def cube(x, y):
        return {"color": "red", "material": "rubber", "shape": "cube", "size": "small", "position": [x, y]}

    initial = [cube(0, 0), cube(10, 0), *(cube(-40 + 8 * n, 40) for n in range(8))]
    final = [cube(10, 0), cube(10, 10), *initial[2:]]
    steps = solve(initial, final)
    assert [step["obj_idx"] for step in steps] == [1, 0]
    outcome = apply_steps(initial, steps)
    assert outcome.objects == final and not outcome.overlap_error


def test_symbolic_solver_splits_a_double_move_of_one_object():
    def sphere(x, y):
        return {"color": "blue", "material": "metal", "shape": "sphere", "size": "small", "position": [x, y]}

    initial = [sphere(0, 0), *(sphere(-40 + 8 * n, 40) for n in range(9))]
    final = [sphere(10, 20), *initial[1:]]
    steps = solve(initial, final)
    assert len(steps) == 2
    assert apply_steps(initial, steps).objects == final


# --- TranceNet -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny_checkpoint(tiny_folder, tmp_path_factory):
    out = tmp_path_factory.mktemp("trance-checkpoint") / "tiny.pt"
    trained = TranceNetBaseline(SPEC).train(
        data=tiny_folder,
        out=out,
        epochs=2,
        batch_size=4,
        seed=1,
        config=TINY,
        val=tiny_folder,
        log=lambda line: None,
    )
    return out, trained


def test_a_trained_trancenet_round_trips_through_its_checkpoint(tiny_folder, tiny_checkpoint):
    out, trained = tiny_checkpoint
    assert trained["epochs"] == 2 and trained["samples"] == 12
    assert [line["epoch"] for line in trained["history"]] == [1, 2]
    records = read_records(tiny_folder)
    units = units_of(records, tiny_folder)
    first = TranceNetBaseline(SPEC)
    assert first.checkpoint_problem(out) is None
    answers = answer(first, units, BASIC, checkpoint=out)
    assert all(len(steps) == 1 for steps in answers.values())
    assert answer(TranceNetBaseline(SPEC), units, BASIC, checkpoint=out, workers=1) == answers
    assert first.parameters()["encoder"] == "cnn"
    assert first.parameters()["trained"]["epochs"] == 2
    assert metric.score_basic(records, answers).summary["n"] == 12


def test_training_resumes_from_a_checkpoint(tiny_folder, tiny_checkpoint, tmp_path):
    out, _ = tiny_checkpoint
    again = TranceNetBaseline(SPEC).train(
        data=tiny_folder, out=tmp_path / "more.pt", epochs=1, batch_size=4, resume=out, log=lambda line: None
    )
    assert again["epochs"] == 3
    saved = torch.load(tmp_path / "more.pt", weights_only=True)
    assert saved["config"]["hidden"] == TINY["hidden"]


def test_checkpoint_problem_refuses_other_files_and_other_models(tmp_path, tiny_checkpoint):
    baseline = TranceNetBaseline(SPEC)
    text = tmp_path / "notes.pt"
    text.write_text("not a checkpoint")
    assert "not a torch checkpoint" in baseline.checkpoint_problem(text)
    assert str(text) in baseline.checkpoint_problem(text)
    other = tmp_path / "other.pt"
    torch.save({"model": "other", "config": {}, "state_dict": {}}, other)
    assert "model 'other'" in baseline.checkpoint_problem(other)
    saved = torch.load(tiny_checkpoint[0], weights_only=True)
    saved["config"]["hidden"] = 32
    misfit = tmp_path / "misfit.pt"
    torch.save(saved, misfit)
    assert "do not fit" in baseline.checkpoint_problem(misfit)
    assert "does not exist" in baseline.checkpoint_problem(tmp_path / "absent.pt")


def test_the_shipped_checkpoint_answers_rendered_samples(tmp_path):
    baseline = TranceNetBaseline(SPEC)
    assert baseline.checkpoint_problem(None) is None
    assert baseline.default_checkpoint.stat().st_size < 2_000_000
    generate(tmp_path, count=3, seed=1)
    records = read_records(tmp_path)
    units = units_of(records, tmp_path)
    event = answer(baseline, units, EVENT)
    assert set(event) == {record["idx"] for record in records}
    assert all(1 <= len(steps) <= 4 for steps in event.values())
    assert metric.score_event(records, event).summary["n"] == 3
    assert baseline.parameters()["trained"]["setting"] == BASIC
    assert baseline.forward_only(batch_size=2, steps=1)["samples_per_second"] > 0


def camera_image_writer(objects, camera, path):
    """`fake_image_writer`, seen differently by each camera: Left mirrored, Right upside down."""
    fake_image_writer(objects, camera, path)
    if camera in ("Camera_Left", "Camera_Right"):
        image = Image.open(path)
        turn = Image.Transpose.FLIP_LEFT_RIGHT if camera == "Camera_Left" else Image.Transpose.FLIP_TOP_BOTTOM
        image.transpose(turn).save(path)


def test_view_answers_one_list_of_steps_per_final_camera_each_from_its_render(tmp_path):
    # Five samples with a different fake render per final camera, answered 4 units a batch (a
    # batch of 12 image pairs, then 3: a unit's three cameras never split across batches). Each
    # camera's answer is what the model answers on that camera's render: the same model in Event,
    # on units whose final Center render is replaced by that camera's, answers the same steps.
    generate(tmp_path, count=5, seed=2, pixel_counter=fake_pixel_counter, image_writer=camera_image_writer)
    records = read_records(tmp_path)
    units = units_of(records, tmp_path)
    view = answer(TranceNetBaseline(SPEC), units, VIEW)
    assert all(set(steps) == {"Camera_Left", "Camera_Center", "Camera_Right"} for steps in view.values())
    # The renders differ, and so do some of the model's answers across cameras.
    assert any(len({json.dumps(answers) for answers in steps.values()}) > 1 for steps in view.values())
    for camera in ("Camera_Left", "Camera_Center", "Camera_Right"):
        seen_from = [
            dataclasses.replace(
                unit, images={**unit.images, "fin.Camera_Center": unit.images[f"fin.{camera}"]}
            )
            for unit in units
        ]
        event = answer(TranceNetBaseline(SPEC), seen_from, EVENT)
        assert {idx: steps[camera] for idx, steps in view.items()} == event, camera
    scored = metric.score_view_cameras(records, view)
    assert (scored.summary["n"], scored.summary["samples"], scored.summary["missing_predictions"]) == (
        15,
        5,
        0,
    )
    assert final_cameras(EVENT) == ("Camera_Center",) and final_cameras(BASIC) == ("Camera_Center",)


# --- The training command ------------------------------------------------------------------------


def test_train_baseline_command_writes_a_loadable_checkpoint(tiny_folder, tmp_path, capsys):
    out = tmp_path / "command.pt"
    call_command(
        "train_baseline", "trance", "--data", str(tiny_folder), "--out", str(out), "--epochs", "1",
        "--batch-size", "6", "--val", str(tiny_folder),
    )  # fmt: skip
    printed = capsys.readouterr().out
    assert "epoch 1: loss" in printed and "held-out basic Acc" in printed
    assert TranceNetBaseline(SPEC).checkpoint_problem(out) is None
    assert torch.load(out, weights_only=True)["trained"]["epochs"] == 1


def test_train_baseline_command_refuses_bad_input(tmp_path):
    with pytest.raises(CommandError, match="no such folder"):
        call_command(
            "train_baseline", "trance", "--data", str(tmp_path / "absent"), "--out", str(tmp_path / "x.pt")
        )
    with pytest.raises(CommandError, match="has no data.jsonl"):
        call_command("train_baseline", "trance", "--data", str(tmp_path), "--out", str(tmp_path / "x.pt"))
    with pytest.raises(CommandError, match="nosuch"):
        call_command("train_baseline", "nosuch", "--data", str(tmp_path), "--out", str(tmp_path / "x.pt"))
    assert not (tmp_path / "x.pt").exists()


class NoModelsSpec(BenchmarkSpec):
    name = "nomodels"
    title = "No models"


def test_train_baseline_command_refuses_a_benchmark_without_a_learned_baseline(tmp_path):
    registry.register(NoModelsSpec())
    try:
        with pytest.raises(CommandError, match="No models has no learned baseline"):
            call_command(
                "train_baseline", "nomodels", "--data", str(tmp_path), "--out", str(tmp_path / "x.pt")
            )
    finally:
        registry.unregister("nomodels")


# --- Faster training data ------------------------------------------------------------------------


def test_training_data_can_be_single_step_with_the_center_view_only(tiny_folder):
    records = read_records(tiny_folder)
    assert {len(record["transformations"]) for record in records} == {1}
    assert {tuple(record["states"][1]["images"]) for record in records} == {("Camera_Center",)}
    files = sorted(path.name for path in tiny_folder.glob("*.png"))
    assert len(files) == 2 * len(records)
    assert formats.parse((tiny_folder / "data.jsonl").read_bytes()).records


def test_generate_command_takes_lengths_and_cameras(tmp_path):
    call_command(
        "generate_trance", "--count", "3", "--out", str(tmp_path), "--seed", "1", "--no-images",
        "--lengths", "1", "2", "--cameras", "Camera_Left", "--json",
    )  # fmt: skip
    records = read_records(tmp_path)
    assert {len(record["transformations"]) for record in records} <= {1, 2}
    assert {tuple(record["states"][1]["images"]) for record in records} == {("Camera_Left",)}
