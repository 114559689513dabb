"""Importing official files into the catalog and exporting them back, through the database."""

import io
from pathlib import Path

import orjson
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from benchmarks.models import Dataset, Item, Scene
from benchmarks.records import FormatError
from benchmarks.services import ImportRefused, export_chunks, import_dataset
from tests.benchmarks import builders

pytestmark = pytest.mark.django_db


def exported(dataset) -> bytes:
    return b"".join(export_chunks(dataset))


def catalog_counts() -> tuple[int, int, int]:
    return Dataset.objects.count(), Item.objects.count(), Scene.objects.count()


def test_stevqa_test_ground_truth_round_trips_and_keeps_answers_apart():
    records = builders.stevqa_questions()
    dataset = import_dataset(benchmark="stevqa", data=orjson.dumps(records), name="gt", split="test")

    assert dataset.item_count == len(records)
    assert orjson.loads(exported(dataset)) == records
    item = dataset.items.get(external_id="1")
    assert item.payload == {"question_id": 1, "question": "这家店的名字是什么?"}
    assert item.ground_truth["answer"] == "華為專賣店"
    assert not dataset.has_media


def test_real_stevqa_sample_round_trips(shared_data):
    data = shared_data("estvqa_sample/gt_sample.json").read_bytes()
    dataset = import_dataset(benchmark="ste-vqa", data=data, name="est-vqa sample")
    assert dataset.item_count == 100
    assert orjson.loads(exported(dataset)) == orjson.loads(data)


def test_real_trance_sample_round_trips(shared_data):
    sample = orjson.loads(shared_data("trance_example/example.json").read_bytes())
    data = orjson.dumps(sample) + b"\n" + orjson.dumps(builders.trance_sample(idx=1)) + b"\n"
    dataset = import_dataset(benchmark="trance", data=data, name="trance")

    lines = exported(dataset).splitlines()
    assert [orjson.loads(line) for line in lines] == [sample, builders.trance_sample(idx=1)]
    item = dataset.items.get(external_id="0")
    assert "transformations" not in orjson.dumps(item.payload).decode()
    assert item.media["fin.Camera_Left"].endswith("img_000000-fin.L.png")


def test_trance_images_are_copied_into_the_dataset_media(shared_data, settings):
    sample_path = shared_data("trance_example/example.json")
    sample = orjson.loads(sample_path.read_bytes())
    dataset = import_dataset(
        benchmark="trance", data=orjson.dumps(sample), name="with images", images_dir=sample_path.parent
    )
    folder = Path(settings.MEDIA_ROOT) / dataset.media_folder
    assert sorted(path.name for path in folder.iterdir()) == sorted(
        ["img_000000-init.C.png", "img_000000-fin.L.png", "img_000000-fin.C.png", "img_000000-fin.R.png"]
    )
    assert dataset.has_media


def test_cric_questions_and_scene_graphs_round_trip():
    questions, scenes = builders.cric_questions(), builders.cric_scenes()
    dataset = import_dataset(
        benchmark="cric",
        data=orjson.dumps(questions),
        name="cric",
        split="val",
        scenes_data=orjson.dumps(scenes),
    )
    assert orjson.loads(exported(dataset)) == questions
    scenes_out = io.BytesIO()
    from benchmarks.services import export_scene_chunks

    scenes_out.write(b"".join(export_scene_chunks(dataset)))
    assert orjson.loads(scenes_out.getvalue()) == scenes
    item = dataset.items.get(external_id=questions[0]["question_id"])
    assert item.scene.external_id == str(questions[0]["image_id"])
    assert "answer" not in item.payload and "target" not in item.payload


def test_clevrref_refexps_and_scenes_round_trip():
    document, scenes = builders.clevrref_document(), builders.clevrref_scenes()
    dataset = import_dataset(
        benchmark="clevrref", data=orjson.dumps(document), name="refs", scenes_data=orjson.dumps(scenes)
    )
    assert orjson.loads(exported(dataset)) == document
    item = dataset.items.first()
    assert "program" not in item.payload
    assert item.scene.data == scenes["scenes"][0]


@pytest.mark.parametrize(
    ("benchmark", "data", "expected"),
    [
        (
            "stevqa",
            b'[{"question_id": 1, "question": "q", "answer": "a"}]',
            "record 0: evidence: missing field",
        ),
        (
            "stevqa",
            b'[{"question_id": "x", "question": "q", "answer": "a", "evidence": [1,2,3,4,5,6,7,8]}]',
            "record 0: question_id: expected an integer, got a string",
        ),
        (
            "stevqa",
            b'[{"question_id": 1, "question": "q", "answer": "a", "evidence": [1,2,3,4,5,6,7]}]',
            "record 0: evidence: a quadrilateral needs 8 numbers",
        ),
        ("stevqa", b'[{"question_id": 1, "question": "q",\n "answer": }]', "line 2"),
        ("trance", None, "line 1: transformations[0].obj_idx"),
        ("trance", "unknown color", "line 1: states[0].objects[3].color: unknown value 'pink'"),
    ],
)
def test_bad_records_are_named_and_nothing_is_loaded(benchmark, data, expected):
    if benchmark == "trance":
        sample = builders.trance_sample()
        if data is None:
            sample["transformations"][0]["obj_idx"] = 12
        else:
            sample["states"][0]["objects"][3]["color"] = "pink"
        data = orjson.dumps(sample)
    before = catalog_counts()
    with pytest.raises(FormatError) as raised:
        import_dataset(benchmark=benchmark, data=data, name="bad")
    assert expected in str(raised.value)
    assert "nothing was loaded" in str(raised.value)
    assert catalog_counts() == before


def test_every_bad_record_is_listed():
    records = builders.stevqa_questions()
    records[0]["evidence"] = ["1", "2"]
    del records[2]["answer"]
    with pytest.raises(FormatError) as raised:
        import_dataset(benchmark="stevqa", data=orjson.dumps(records), name="bad")
    problems = [str(error) for error in raised.value.errors]
    assert any(problem.startswith("record 0: evidence") for problem in problems)
    assert "record 2: answer: missing field" in problems
    assert Dataset.objects.count() == 0


def test_object_index_out_of_the_scene_is_refused():
    questions, scenes = builders.cric_questions(), builders.cric_scenes()
    questions[0]["target"] = [99999]
    with pytest.raises(FormatError) as raised:
        import_dataset(
            benchmark="cric", data=orjson.dumps(questions), name="cric", scenes_data=orjson.dumps(scenes)
        )
    assert "99999" in str(raised.value)
    assert catalog_counts() == (0, 0, 0)


def test_missing_image_is_named_and_leaves_no_files(tmp_path, settings):
    records = [
        {"id": 7, "image": "missing.png", "annotation": []},
        {"id": 8, "image": "there.png", "annotation": []},
    ]
    (tmp_path / "there.png").write_bytes(b"png")
    with pytest.raises(FormatError) as raised:
        import_dataset(benchmark="stevqa", data=orjson.dumps(records), name="x", images_dir=tmp_path)
    assert "item 7: image: file 'missing.png' not found" in str(raised.value)
    assert catalog_counts() == (0, 0, 0)
    assert not (Path(settings.MEDIA_ROOT) / "datasets").exists()


def test_a_name_already_taken_is_refused():
    data = orjson.dumps(builders.stevqa_questions())
    import_dataset(benchmark="stevqa", data=data, name="same", split="test")
    with pytest.raises(ImportRefused, match="already exists"):
        import_dataset(benchmark="stevqa", data=data, name="same", split="test")
    assert Dataset.objects.count() == 1


def test_failure_while_saving_rolls_back_rows_and_files(tmp_path, settings, monkeypatch):
    from benchmarks import services

    records = [{"id": 1, "image": "a.png", "annotation": []}]
    (tmp_path / "a.png").write_bytes(b"png")

    def broken_save(*args, **kwargs):
        raise RuntimeError("disk full")

    monkeypatch.setattr(services, "save_items", broken_save)
    with pytest.raises(RuntimeError):
        import_dataset(benchmark="stevqa", data=orjson.dumps(records), name="x", images_dir=tmp_path)
    assert catalog_counts() == (0, 0, 0)
    assert not any((Path(settings.MEDIA_ROOT) / "datasets").glob("*"))


def test_commands_import_list_and_export(tmp_path):
    source = tmp_path / "gt.json"
    records = builders.stevqa_questions()
    source.write_bytes(orjson.dumps(records))
    out = io.StringIO()
    call_command(
        "import_dataset", "stevqa", str(source), "--name", "cli", "--split", "test", stdout=out, verbosity=0
    )
    assert "Imported 3 items" in out.getvalue()
    imported = io.StringIO()
    call_command(
        "import_dataset", "ste-vqa", str(source), "--name", "cli", "--split", "val", "--json", stdout=imported
    )

    listing = io.StringIO()
    call_command("list_datasets", "--json", stdout=listing)
    test_split = {
        "id": Dataset.objects.get(split="test").pk,
        "benchmark": "stevqa",
        "name": "cli",
        "split": "test",
        "version": "1",
        "items": 3,
        "units": 3,
        "scenes": 0,
        "images": False,
    }
    # The listing and the import's own summary say the same of a dataset.
    assert orjson.loads(listing.getvalue()) == [test_split, orjson.loads(imported.getvalue())]
    assert orjson.loads(imported.getvalue())["split"] == "val"

    target = tmp_path / "out.json"
    call_command("export_dataset", str(test_split["id"]), str(target), stdout=io.StringIO())
    assert orjson.loads(target.read_bytes()) == records
    with pytest.raises(CommandError, match="several datasets are named 'cli'"):
        call_command("export_dataset", "cli", str(target), stdout=io.StringIO())


def test_import_command_fails_with_every_bad_record(tmp_path):
    source = tmp_path / "bad.json"
    source.write_bytes(
        b'[{"question_id": 1}, {"question_id": 2, "question": "q", "answer": "a", "evidence": "x"}]'
    )
    with pytest.raises(CommandError) as raised:
        call_command("import_dataset", "stevqa", str(source), "--name", "bad", verbosity=0)
    message = str(raised.value)
    assert "record 0: question: missing field" in message
    assert "record 1: evidence: expected a list, got a string" in message
    assert Dataset.objects.count() == 0


def test_import_command_refuses_unknown_benchmark_and_missing_file(tmp_path):
    with pytest.raises(CommandError, match="unknown benchmark 'vqa2'"):
        call_command("import_dataset", "vqa2", str(tmp_path / "x.json"), "--name", "n")
    with pytest.raises(CommandError, match="cannot read"):
        call_command("import_dataset", "cric", str(tmp_path / "absent.json"), "--name", "n")


def test_a_bad_record_after_thousands_of_good_ones_still_loads_nothing():
    """Without scenes or images, records are checked while they are written: the end decides."""
    questions = [builders.cric_question(f"q{index}") for index in range(12000)]
    questions.append(builders.cric_question("q5"))  # a duplicate id, last in the file
    questions[-2]["question_type"] = "CountObj"
    with pytest.raises(FormatError) as raised:
        import_dataset(benchmark="cric", data=orjson.dumps(questions), name="late faults")
    problems = [str(error) for error in raised.value.errors]
    assert problems == [
        "record 11999: question_type: unknown value 'CountObj' (expected one of QueryAtt, QueryObjKG, "
        "QueryObjSG, VerifyAtt, VerifyKG)",
        "record 12000: question_id: duplicate id 'q5' (first at record 5)",
    ]
    assert catalog_counts() == (0, 0, 0)


def test_an_empty_file_or_a_scenes_file_where_none_belongs_is_refused():
    with pytest.raises(ImportRefused, match="holds no records"):
        import_dataset(benchmark="stevqa", data=b"[]", name="empty", source="empty.json")
    with pytest.raises(ImportRefused, match="STE-VQA has no separate scenes file"):
        import_dataset(benchmark="stevqa", data=b"[", name="x", scenes_data=b"[]")
    assert catalog_counts() == (0, 0, 0)


def test_images_given_but_none_referenced_is_still_scoring_only(tmp_path):
    (tmp_path / "unrelated.png").write_bytes(b"png")
    dataset = import_dataset(
        benchmark="stevqa", data=orjson.dumps(builders.stevqa_questions()), name="gt", images_dir=tmp_path
    )
    assert not dataset.has_media
