"""Text with NUL in an official file: no database stores it (PostgreSQL refuses it), so an import
names each place that holds one and loads nothing, on every database alike (issue 25)."""

import json

import pytest

from benchmarks.models import Dataset
from benchmarks.records import FormatError
from benchmarks.services import import_dataset
from tests.benchmarks import builders

pytestmark = pytest.mark.django_db


def test_a_nul_anywhere_in_a_record_is_named_and_nothing_is_imported():
    questions = builders.cric_questions()
    questions[1]["question"] = "what\u0000 is it?"
    questions[2]["program"][0]["value_inputs"] = ["x\u0000"]
    with pytest.raises(FormatError) as refused:
        import_dataset(benchmark="cric", data=json.dumps(questions).encode(), name="nul")
    shown = "\n".join(refused.value.summary())
    assert f"item {questions[1]['question_id']}: question: holds a NUL character" in shown
    assert "program[0].value_inputs[0]" in shown
    assert not Dataset.objects.filter(name="nul").exists()


def test_a_nul_in_a_scene_is_named_too():
    scenes = builders.cric_scenes()
    scenes[0]["objects"][0]["names"] = ["cup\u0000"]
    with pytest.raises(FormatError) as refused:
        import_dataset(
            benchmark="cric",
            data=json.dumps(builders.cric_questions()).encode(),
            scenes_data=json.dumps(scenes).encode(),
            name="nul",
        )
    assert "scene 3: objects[0].names[0]: holds a NUL character" in "\n".join(refused.value.summary())
    assert not Dataset.objects.filter(name="nul").exists()
