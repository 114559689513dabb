"""CRIC baselines: the leave-one-out question-type prior and the program executor (no database)."""

from pathlib import Path

import pytest

from benchmarks.spec import ScoringFiles
from inference.baselines import RunChoices, Unit, load_baseline
from plugins.cric import demo as demo_data
from plugins.cric import metric
from plugins.cric.baselines import most_frequent
from plugins.cric.spec import SPEC


def demo_units(questions: Path, scene_graphs: Path) -> list[Unit]:
    """The scoring units of a demo question file, as the inference runner builds them."""
    scenes = {
        scene.external_id: scene.data for scene in SPEC.formats.parse_scenes(scene_graphs.read_bytes()).scenes
    }
    return [
        Unit(unit.id, unit.part, unit.record, record.payload, {}, scenes.get(record.scene))
        for record in SPEC.formats.parse(questions.read_bytes()).records
        for unit in SPEC.units(record.external_id, record.payload, record.ground_truth)
    ]


def run(name: str, units: list[Unit], seed: int = 0, batch_size: int = 16) -> list[dict]:
    baseline = load_baseline(SPEC, name)
    baseline.load(units, RunChoices(seed=seed))
    predictions = []
    for batch, inputs in baseline.batches(units, batch_size):
        predictions += baseline.predict(batch, inputs)
    return predictions


def score(files, units, predictions):
    data = SPEC.write_predictions(
        [(unit.id, prediction) for unit, prediction in zip(units, predictions, strict=True)]
    )
    assert len(metric.parse_predictions(data)) == len(units)
    return SPEC.score_files(ScoringFiles(files.questions.read_bytes(), data))


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    files = demo_data.generate_demo(tmp_path_factory.mktemp("cric"), images=20, seed=3)
    return files, demo_units(files.questions, files.scene_graphs)


def test_the_spec_lists_both_baselines():
    assert {load_baseline(SPEC, name).name for name in ("prior", "executor")} == {"prior", "executor"}
    for name in ("prior", "executor"):
        baseline = load_baseline(SPEC, name)
        assert baseline.title and baseline.description and baseline.uses


def test_the_executor_answers_and_grounds_every_demo_question(demo):
    files, units = demo
    predictions = run("executor", units)
    scored = score(files, units, predictions)
    overall = scored.summary["overall"]
    assert overall["count"] == len(units) > 100
    assert overall["Ans"] == overall["Grd"] == overall["Final"] == 1.0
    assert scored.problems == []
    # The knowledge graph is pieced together from the sub-graphs, so an intermediate Find KG step
    # may miss an object the full graph would give; the answers never depend on it.
    assert scored.summary["step_iou"]["count"] == len(units)
    assert scored.summary["step_iou"]["mean"] >= 0.95


def test_the_executor_answers_a_program_it_cannot_run_with_nothing(demo):
    _, units = demo
    unit = units[0]
    broken = Unit(
        "broken",
        0,
        {**unit.record, "program": [{"function": "Teleport", "text_input": [], "output": []}]},
        unit.payload,
        scene=unit.scene,
    )
    sceneless = Unit("sceneless", 0, unit.record, unit.payload, scene=None)
    baseline = load_baseline(SPEC, "executor")
    baseline.load([unit, broken, sceneless], RunChoices())
    first, second, third = baseline.predict([unit, broken, sceneless], None)
    assert first["answer"] == unit.record["answer"]
    assert second == {"question_id": "broken", "answer": "", "object": None}
    assert third == {"question_id": "sceneless", "answer": "", "object": None}
    assert baseline.parameters()["programs_failed"] == 2


def prior_unit(question_id: str, question_type: str, answer: str) -> Unit:
    record = {"question_id": question_id, "question_type": question_type, "answer": answer}
    return Unit(question_id, 0, record, {"question_type": question_type})


def test_the_prior_answers_the_most_frequent_other_answer_of_the_type():
    units = [
        prior_unit("v1", "VerifyAtt", "yes"),
        prior_unit("v2", "VerifyAtt", "yes"),
        prior_unit("v3", "VerifyAtt", "yes"),
        prior_unit("v4", "VerifyAtt", "no"),
        prior_unit("a1", "QueryAtt", "red"),
        prior_unit("a2", "QueryAtt", "red"),
        prior_unit("a3", "QueryAtt", "green"),
        prior_unit("a4", "QueryAtt", "blue"),
        prior_unit("k1", "QueryObjKG", "knife"),
    ]
    answers = {prediction["question_id"]: prediction for prediction in run("prior", units, batch_size=4)}
    assert {key: value["answer"] for key, value in answers.items()} == {
        "v1": "yes",
        "v2": "yes",
        "v3": "yes",
        "v4": "yes",
        # Without its own vote, red is left with one, tied with blue and green: the first
        # alphabetically wins, so a run repeats exactly.
        "a1": "blue",
        "a2": "blue",
        "a3": "red",
        "a4": "red",
        # Alone of its type: the most frequent answer of every other question.
        "k1": "yes",
    }
    assert all(prediction["object"] is None for prediction in answers.values())


def test_no_question_sees_its_own_answer_in_the_prior():
    units = [prior_unit(f"q{index}", "QueryObjSG", f"object{index}") for index in range(5)]
    for unit, prediction in zip(units, run("prior", units), strict=True):
        assert prediction["answer"] != unit.record["answer"]


def test_most_frequent_leaves_one_vote_out():
    from collections import Counter

    counts = Counter({"yellow": 3, "black": 2})
    assert most_frequent(counts) == "yellow"
    assert most_frequent(counts, "yellow") == "black"  # 2 against 2: alphabetical
    assert most_frequent(Counter({"cat": 1}), "cat") is None


def test_the_prior_on_the_demo_is_right_only_where_no_object_is_right(demo):
    files, units = demo
    predictions = run("prior", units)
    scored = score(files, units, predictions)
    assert scored.summary["by_kind"]["recognize"]["Final"] == 0.0  # no object: never grounded
    for unit, prediction, row in zip(units, predictions, scored.items, strict=True):
        truth = unit.record["answer"]
        assert row["grounding_correct"] == (row["kind"] == "verify" and truth == "no")
        assert row["final_correct"] == (row["kind"] == "verify" and truth == prediction["answer"] == "no")
    assert scored.summary["overall"]["Final"] < 0.5
