"""TranceNet with the decoded-inputs cache: the first run fills it while answering, the next ones
read it and decode nothing, and the answers are the same as without it."""

import json
import os
from pathlib import Path

import pytest
from PIL import Image

import plugins.trance.baselines.training as training
from inference.baselines import RunChoices
from inference.baselines.inputs_cache import SUFFIX
from plugins.trance.baselines import TranceNetBaseline
from plugins.trance.formats import EVENT, VIEW
from plugins.trance.generator import generate
from plugins.trance.spec import SPEC
from plugins.trance.tests.helpers import fake_pixel_counter
from plugins.trance.tests.test_baselines import answer, camera_image_writer, read_records, units_of


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """7 samples with a different small render per camera (quick to decode, and each camera's
    answer comes from its own render)."""
    folder = tmp_path_factory.mktemp("trance-cache-samples")
    generate(folder, count=7, seed=4, pixel_counter=fake_pixel_counter, image_writer=camera_image_writer)
    return folder


@pytest.fixture
def decodes(monkeypatch):
    """Every image the DataLoader decodes (in this process: no loader workers)."""
    calls = []
    decode = training.load_image

    def counted(path, height, width):
        calls.append(path)
        return decode(path, height, width)

    monkeypatch.setattr(training, "load_image", counted)
    return calls


def cache_files(cache):
    files = sorted(Path(cache).iterdir()) if Path(cache).exists() else []
    assert all(file.suffix == SUFFIX for file in files), files  # no temporary file left behind
    return files


@pytest.mark.parametrize("setting", [EVENT, VIEW])
def test_the_first_run_fills_the_cache_the_second_decodes_nothing_and_the_answers_never_change(
    folder, tmp_path, decodes, setting
):
    units = units_of(read_records(folder), folder)
    pairs = len(units) * (3 if setting == VIEW else 1)
    uncached = answer(TranceNetBaseline(SPEC), units, setting)
    assert len(decodes) == 2 * pairs
    decodes.clear()
    first = answer(TranceNetBaseline(SPEC), units, setting, cache_dir=tmp_path / "cache")
    assert len(decodes) == 2 * pairs  # the first run decodes as the uncached one does
    assert len(cache_files(tmp_path / "cache")) == 1
    decodes.clear()
    second = answer(TranceNetBaseline(SPEC), units, setting, cache_dir=tmp_path / "cache")
    assert decodes == []
    assert first == uncached and second == uncached
    # Another batch size (batches of another shape) reads the same cache, same answers.
    again = TranceNetBaseline(SPEC)
    again.load(units, RunChoices(setting=setting, cache_dir=tmp_path / "cache"))
    answers = [answer for batch, inputs in again.batches(units, 3) for answer in again.predict(batch, inputs)]
    assert decodes == []
    assert json.loads(json.dumps(answers)) == [uncached[unit.record["idx"]] for unit in units]


def test_a_render_changed_on_disk_is_decoded_again_and_answered_from_its_new_pixels(
    folder, tmp_path, decodes
):
    changed = tmp_path / "samples"
    changed.mkdir()
    for file in folder.iterdir():
        (changed / file.name).write_bytes(file.read_bytes())
    units = units_of(read_records(changed), changed)
    answer(TranceNetBaseline(SPEC), units, EVENT, cache_dir=tmp_path / "cache")
    render = Path(units[0].images["fin.Camera_Center"])
    Image.open(render).transpose(Image.Transpose.ROTATE_180).save(render)
    decodes.clear()
    after = answer(TranceNetBaseline(SPEC), units, EVENT, cache_dir=tmp_path / "cache")
    assert len(decodes) == 2 * len(units)
    assert after == answer(TranceNetBaseline(SPEC), units, EVENT)
    assert len(cache_files(tmp_path / "cache")) == 1
    decodes.clear()
    assert answer(TranceNetBaseline(SPEC), units, EVENT, cache_dir=tmp_path / "cache") == after
    assert decodes == []


def test_a_damaged_cache_file_is_rebuilt_and_the_answers_stay_right(folder, tmp_path, decodes):
    units = units_of(read_records(folder), folder)
    right = answer(TranceNetBaseline(SPEC), units, EVENT, cache_dir=tmp_path / "cache")
    (file,) = cache_files(tmp_path / "cache")
    data = bytearray(file.read_bytes())
    data[-100:] = bytes(100)  # some pixels zeroed: same size, wrong checksum
    file.write_bytes(bytes(data))
    decodes.clear()
    assert answer(TranceNetBaseline(SPEC), units, EVENT, cache_dir=tmp_path / "cache") == right
    assert len(decodes) == 2 * len(units)
    decodes.clear()
    assert answer(TranceNetBaseline(SPEC), units, EVENT, cache_dir=tmp_path / "cache") == right
    assert decodes == []


def test_a_run_stopped_midway_keeps_no_cache_and_the_next_run_fills_it(folder, tmp_path, decodes):
    units = units_of(read_records(folder), folder)
    baseline = TranceNetBaseline(SPEC)
    baseline.load(units, RunChoices(setting=EVENT, cache_dir=tmp_path / "cache"))
    batches = baseline.batches(units, 2)
    next(batches)
    batches.close()  # a cancelled run stops taking batches
    assert cache_files(tmp_path / "cache") == []
    decodes.clear()
    answer(TranceNetBaseline(SPEC), units, EVENT, cache_dir=tmp_path / "cache")
    assert len(decodes) == 2 * len(units) and len(cache_files(tmp_path / "cache")) == 1


def test_a_cache_folder_that_cannot_be_written_only_costs_the_cache(folder, tmp_path):
    units = units_of(read_records(folder), folder)
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")
    assert answer(TranceNetBaseline(SPEC), units, EVENT, cache_dir=blocked / "cache") == answer(
        TranceNetBaseline(SPEC), units, EVENT
    )


def test_a_cache_filled_by_loader_workers_gives_the_same_answers(folder, tmp_path):
    units = units_of(read_records(folder), folder)
    filled = answer(TranceNetBaseline(SPEC), units, VIEW, cache_dir=tmp_path / "cache", workers=1)
    assert len(cache_files(tmp_path / "cache")) == 1
    assert answer(TranceNetBaseline(SPEC), units, VIEW, cache_dir=tmp_path / "cache") == filled
    assert answer(TranceNetBaseline(SPEC), units, VIEW) == filled


@pytest.mark.django_db
def test_a_model_run_keeps_its_inputs_in_the_configured_cache_folder(trance_dataset, settings, tmp_path):
    from inference.services import execute_run, start_run

    settings.INFERENCE_CACHE_DIR = tmp_path / "inference-cache"

    def predictions():
        run = execute_run(
            start_run(dataset=trance_dataset, baseline="trancenet", setting="event", enqueue=False)
        )
        assert run.status == "succeeded", run.error
        return run.predictions.read()

    first = predictions()
    (file,) = cache_files(settings.INFERENCE_CACHE_DIR)
    built = file.stat().st_ino  # a cache written again is a new file renamed over the old one
    os.utime(file, (1_000_000_000, 1_000_000_000))
    assert predictions() == first
    assert file.stat().st_ino == built  # read, not written again
    assert file.stat().st_mtime > 1_000_000_000  # the read is marked (prune_caches --older-than)
