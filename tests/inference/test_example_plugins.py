"""The worked examples of docs/models.md (examples/model-plugin): the package installed by pip as a
researcher installs it, each benchmark's example found by its entry point and run as a model run
on a small dataset of its benchmark, every unit answered, and the scores what the example's rule
gives, worked out here from the answers and the ground truth by the benchmark's definitions."""

import io
import json
import sys
from pathlib import Path

import numpy as np
import pytest
from django.core.management import call_command
from PIL import Image

from benchmarks import registry
from benchmarks.services import import_dataset
from benchmarks.spec import ScoringFiles
from inference import selectors
from inference.baselines import RunChoices, Unit
from inference.plugins import PluginBaseline
from inference.services import dataset_units, execute_run, start_run
from tests.inference.conftest import pip_install_copy

pytestmark = pytest.mark.django_db

PACKAGE = Path(__file__).resolve().parents[2] / "examples" / "model-plugin"
MODULE = "yardstick_example_models"
MODELS = {
    ("trance", "colour-count"): "yardstick_example_models.trance:ColourCount",
    ("stevqa", "keyword-answer"): "yardstick_example_models.stevqa:KeywordAnswer",
    ("stevqa", "keyword-answer-only"): "yardstick_example_models.stevqa:KeywordAnswerOnly",
    ("cric", "type-answer"): "yardstick_example_models.cric:TypeAnswer",
    ("clevrref", "colour-box"): "yardstick_example_models.clevrref:ColourBox",
}


@pytest.fixture(scope="module")
def example_site(tmp_path_factory):
    """The example package installed by pip into a folder of its own."""
    return pip_install_copy(PACKAGE, tmp_path_factory)


def forget_plugins():
    selectors.model_plugins.cache_clear()
    for name in [name for name in sys.modules if name == MODULE or name.startswith(f"{MODULE}.")]:
        del sys.modules[name]


@pytest.fixture
def examples(example_site, monkeypatch, settings):
    """The example package on the path, as if installed in the environment; no models folder."""
    settings.MODELS = []
    monkeypatch.syspath_prepend(str(example_site))
    forget_plugins()
    yield example_site / MODULE
    forget_plugins()


def answered(dataset, model, setting=""):
    """A run of `model` on `dataset` to its end here; the run and its answers by unit id."""
    run = execute_run(start_run(dataset=dataset, baseline=model, setting=setting, enqueue=False))
    assert run.status == "succeeded", run.error
    units = dataset_units(dataset)
    assert run.done == run.total == len(units)
    answers = dataset.spec.read_predictions(run.predictions.read())
    assert sorted(answers) == sorted(unit.id for unit in units)  # every unit answered
    return run, answers


def mean(values):
    values = list(values)
    return sum(values) / len(values)


def predicted(benchmark, name, units, setting=""):
    """The example's answers to `units` ((id, payload, images) each) as the run machinery takes
    them, without a database: loaded, asked, and its answers checked by the prediction reader."""
    plugin = next(plugin for plugin in selectors.model_plugins() if plugin.path == MODELS[(benchmark, name)])
    model = PluginBaseline(registry.get(benchmark), plugin)
    model.load([], RunChoices(setting=setting))
    return model.predict([Unit(id, 0, {}, payload, images) for id, payload, images in units], None)


# --- found ----------------------------------------------------------------------------------------


def test_every_example_is_found_by_its_entry_point_and_none_is_broken(examples):
    found = {(plugin.benchmark, plugin.name): plugin for plugin in selectors.model_plugins()}
    for key, path in MODELS.items():
        plugin = found[key]
        assert (plugin.path, plugin.problem) == (path, "")
        assert (plugin.package, plugin.package_version) == ("yardstick-example-models", "0.1.0")


# --- TRANCE --------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def one_step_files(tmp_path_factory):
    """12 generated one-step TRANCE samples with their four renders (Basic needs one step)."""
    from plugins.trance.generator import generate

    folder = tmp_path_factory.mktemp("trance-one-step")
    generate(folder, count=12, seed=5, workers=1, lengths=(1,))
    return folder


@pytest.fixture
def one_step(one_step_files):
    data = (one_step_files / "data.jsonl").read_bytes()
    samples = {str(sample["idx"]): sample for sample in map(json.loads, data.splitlines())}
    dataset = import_dataset(
        benchmark="trance", data=data, name="one step", split="val", images_dir=one_step_files
    )
    return dataset, samples


def test_trance_s_example_answers_one_colour_step_and_basic_scores_it_step_by_step(examples, one_step):
    dataset, samples = one_step
    run, answers = answered(dataset, "colour-count", "basic")
    first = {idx: (steps[0] if steps else None) for idx, steps in answers.items()}
    assert all(
        step is None or (step["attr"], len(answers[idx])) == ("color", 1) for idx, step in first.items()
    )
    truth = {idx: sample["transformations"][0] for idx, sample in samples.items()}

    def obj(idx):
        return first[idx] is not None and first[idx]["obj_idx"] == truth[idx]["obj_idx"]

    def pair(idx):
        step, true = first[idx], truth[idx]
        return step is not None and step["attr"] == true["attr"] and step["val"] in true["options"]

    summary = run.submission.summary
    assert summary["ObjAcc"] == pytest.approx(mean(obj(idx) for idx in samples))
    assert summary["AttrAcc"] == pytest.approx(
        mean(first[idx] is not None and truth[idx]["attr"] == "color" for idx in samples)
    )
    assert summary["ValAcc"] == pytest.approx(mean(pair(idx) for idx in samples))
    assert summary["Acc"] == pytest.approx(mean(obj(idx) and pair(idx) for idx in samples))
    params = run.submission.parameters
    assert params["model_package"] == "yardstick-example-models 0.1.0"
    palette = examples / "palette.json"
    assert params["model_files_sha256"] == [f"palette.json {sha256(palette)}"]
    assert params["model_min_pixels"] == json.loads(palette.read_text())["min_pixels"]


def test_trance_s_example_answers_view_once_per_final_camera(examples, one_step):
    dataset, samples = one_step
    run, answers = answered(dataset, "colour-count", "view")
    cameras = ("Camera_Left", "Camera_Center", "Camera_Right")
    assert all(sorted(answer) == sorted(cameras) for answer in answers.values())
    # One true step: a camera's answer is right when it is that very step (a colour change of
    # the right object to the right colour); any other answer leaves some attribute wrong.
    right = [
        answers[idx][camera] == [{key: true[key] for key in ("obj_idx", "attr", "val")}]
        for idx, sample in samples.items()
        for true in sample["transformations"]
        for camera in cameras
    ]
    summary = run.submission.summary
    assert summary["n"] == len(right) == 3 * len(samples)
    assert summary["Acc"] == pytest.approx(mean(right)) == summary["LAcc"]


def test_trance_s_rule_on_a_drawn_pair_of_renders(examples, tmp_path):
    """A red square turns cyan: the red object (the second) is answered, cyan, from every camera."""
    before, after = (
        flat_image(tmp_path / "init.png", (173, 35, 35)),
        flat_image(tmp_path / "fin.png", (41, 208, 208)),
    )
    objects = [{"color": color} for color in ("blue", "red", "red", "gray")]
    images = {
        "init.Camera_Center": before,
        **{f"fin.{camera}": after for camera in ("Camera_Left", "Camera_Center")},
    }
    payload = {"initial": {"objects": objects}}
    step = [{"obj_idx": 1, "attr": "color", "val": "cyan"}]
    assert predicted("trance", "colour-count", [("0", payload, images)], "event") == [step]
    assert predicted("trance", "colour-count", [("0", payload, images)], "view") == [
        {"Camera_Left": step, "Camera_Center": step}
    ]
    same = {"init.Camera_Center": before, "fin.Camera_Center": before}
    assert predicted("trance", "colour-count", [("0", payload, same)], "basic") == [[]]


# --- STE-VQA -------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def stevqa_files(tmp_path_factory):
    from plugins.stevqa.demo import generate_demo

    return generate_demo(tmp_path_factory.mktemp("stevqa"), count=8, seed=4)


def test_stevqa_s_examples_answer_with_and_without_evidence(examples, stevqa_files):
    dataset = import_dataset(
        benchmark="stevqa",
        data=stevqa_files.read_bytes(),
        name="signs",
        images_dir=stevqa_files.parent / "images",
    )
    table = json.loads((examples / "stevqa_answers.json").read_text(encoding="utf-8"))
    truth = {}
    for image in json.loads(stevqa_files.read_text(encoding="utf-8")):
        with Image.open(stevqa_files.parent / "images" / image["image"]) as picture:
            width, height = picture.size
        for qa in image["annotation"]:
            truth[str(len(truth))] = (qa, width * height)

    def keyword_answer(question):
        lang = "zh" if any("\u4e00" <= character <= "\u9fa5" for character in question) else "en"
        kind = next((k for k in table["kinds"] if any(w in question.lower() for w in k["words"])), None)
        return (kind["answers"] if kind else table["otherwise"])[lang]

    run, answers = answered(dataset, "keyword-answer")
    tc, lc = {}, {}
    for question_id, (qa, image_area) in truth.items():
        answer = answers[question_id]
        assert answer["answer"] == keyword_answer(qa["question"])
        width, height = answer["evidence"][4:6]
        assert (
            answer["evidence"] == [0, 0, width, 0, width, height, 0, height] and width * height == image_area
        )
        tc[question_id] = answer_score(answer["answer"], qa["answer"])
        # The whole image holds the true quadrilateral: official LC = its area over the image's.
        lc[question_id] = quad_area([int(float(value)) for value in qa["evidence"]]) / image_area
    overall = run.submission.summary["overall"]
    assert overall["count"] == len(truth) >= 10
    assert overall["TC"] == pytest.approx(mean(tc.values())) and overall["TC"] > 0
    assert overall["LC"] == pytest.approx(mean(lc.values()))
    assert overall["CLC"] == pytest.approx(mean(tc[key] if lc[key] >= 0.5 else 0 for key in truth)) == 0

    run, answers = answered(dataset, "keyword-answer-only")
    assert all(
        set(answer) <= {"answer", "evidence"} and answer.get("evidence") is None
        for answer in answers.values()
    )
    summary = run.submission.summary
    assert summary["overall"]["TC"] == pytest.approx(mean(tc.values()))
    assert summary["overall"]["LC"] is None and summary["overall"]["CLC"] is None
    assert summary["evidence"] == "none"


def test_stevqa_s_example_finds_its_question_in_either_layout(examples):
    training = {"id": 7, "image": "a.png", "questions": ["What street is this?", "橙子的价格是多少?"]}
    training["question_ids"] = [4, 5]
    test = {"question_id": 9, "question": "What are the opening hours?"}
    units = [("5", training, {}), ("4", training, {}), ("9", test, {})]
    assert predicted("stevqa", "keyword-answer-only", units) == [
        {"question_id": 5, "answer": "16元/斤"},
        {"question_id": 4, "answer": "RIVER ROAD"},
        {"question_id": 9, "answer": "24 HOURS"},
    ]


# --- CRIC ----------------------------------------------------------------------------------------


def test_cric_s_example_answers_by_question_type_and_grounds_nothing(examples, cric_files):
    dataset = import_dataset(
        benchmark="cric",
        data=cric_files.questions.read_bytes(),
        name="cric",
        scenes_data=cric_files.scene_graphs.read_bytes(),
        images_dir=cric_files.images_dir,
    )
    table = json.loads((examples / "cric_answers.json").read_text())["answers"]
    questions = {
        question["question_id"]: question for question in json.loads(cric_files.questions.read_text())
    }
    run, answers = answered(dataset, "type-answer")
    assert all(answer.get("object") is None for answer in answers.values())

    def right_answer(key):
        return answers[key]["answer"] == questions[key]["answer"] == table[questions[key]["question_type"]]

    def right_grounding(key):  # no object is right only for a verify question answered "no"
        return questions[key]["question_type"].startswith("Verify") and questions[key]["answer"] == "no"

    overall = run.submission.summary["overall"]
    assert overall["count"] == len(questions)
    assert (
        overall["Ans"] == pytest.approx(mean(right_answer(key) for key in questions)) and overall["Ans"] > 0
    )
    assert overall["Grd"] == pytest.approx(mean(right_grounding(key) for key in questions))
    assert overall["Final"] == pytest.approx(mean(right_answer(k) and right_grounding(k) for k in questions))
    # The command line docs/models.md shows runs it alike.
    out = io.StringIO()
    call_command("run_baseline", "type-answer", str(dataset.pk), "--json", stdout=out, stderr=io.StringIO())
    result = json.loads(out.getvalue())
    assert (result["status"], result["answered"]) == ("succeeded", len(questions))
    assert result["summary"] == run.submission.summary


# --- CLEVR-Ref+ ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def clevrref_files(tmp_path_factory):
    from plugins.clevrref.expressions import generate

    return generate(tmp_path_factory.mktemp("clevrref"), images=8, seed=3, split="val")


def test_clevrref_s_example_answers_a_box_and_a_mask_scored_as_drawn(examples, clevrref_files):
    files = clevrref_files
    dataset = import_dataset(
        benchmark="clevrref",
        data=files.refexps_file.read_bytes(),
        name="refs",
        split="val",
        scenes_data=files.scenes_file.read_bytes(),
        images_dir=files.images_dir,
    )
    run, answers = answered(dataset, "colour-box")
    refexps = {
        str(refexp["refexp_index"]): refexp
        for refexp in json.loads(files.refexps_file.read_text())["refexps"]
    }
    scenes = {scene["image_index"]: scene for scene in json.loads(files.scenes_file.read_text())["scenes"]}

    def referred(key):
        refexp = refexps[key]
        return scenes[refexp["image_index"]], refexp["program"][-1]["_output"]

    detected = []
    intersection = union = 0
    for key, answer in answers.items():
        scene, objects = referred(key)
        assert answer["mask_size"] == [320, 480]
        mask = decode_runs(answer["mask"])
        assert box_of_mask(mask) == answer["box"]  # the box is its mask's
        if len(objects) == 1:
            detected.append(box_iou(answer["box"], scene["obj_bbox"][str(objects[0] + 1)]) >= 0.5)
        true = np.zeros_like(mask)
        for index in objects:
            true |= decode_runs(scene["obj_mask"][str(index + 1)])
        intersection += int((mask & true).sum())
        union += int((mask | true).sum())
    overall = run.submission.summary["overall"]
    assert overall["detection_count"] == len(detected) > 0
    assert overall["detection_accuracy"] == pytest.approx(mean(detected))
    # Segmentation: the run is scored on the released scorer's 320 x 320 grid; at full
    # resolution the same file scores the cumulative IoU of the masks as drawn.
    full = dataset.spec.score_files(
        ScoringFiles(
            files.refexps_file.read_bytes(),
            run.predictions.open("rb").read(),
            files.scenes_file.read_bytes(),
            variant="full-resolution",
        )
    ).summary["overall"]
    assert full["full_resolution_cumulative_iou"] == pytest.approx(intersection / union)
    assert intersection > 0
    assert overall["official_cumulative_iou"] > 0


def test_clevrref_s_rule_on_a_drawn_image(examples, tmp_path):
    """The first colour of the expression's head: the red square's box and mask, not the blue one's."""
    pixels = np.full((320, 480, 3), 128, dtype=np.uint8)
    pixels[100:140, 200:260] = (173, 35, 35)
    pixels[10:30, 10:30] = (42, 75, 215)
    Image.fromarray(pixels).save(tmp_path / "scene.png")
    image = {"image": str(tmp_path / "scene.png")}
    [answer] = predicted(
        "clevrref", "colour-box", [("3", {"refexp": "the red cube that is left of the blue sphere"}, image)]
    )
    assert answer["refexp_index"] == 3 and answer["box"] == [200, 100, 60, 40]
    assert np.array_equal(decode_runs(answer["mask"]), (pixels == (173, 35, 35)).all(axis=-1))
    [both] = predicted(
        "clevrref", "colour-box", [("4", {"refexp": "the thing that is left of the red cube"}, image)]
    )
    assert both["box"] == [10, 10, 250, 130]  # no colour in the head: every coloured pixel


# --- helpers: the benchmarks' definitions, written out ------------------------------------------


def sha256(path: Path) -> str:
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()


def flat_image(path: Path, square: tuple[int, int, int]) -> str:
    pixels = np.full((60, 80, 3), 128, dtype=np.uint8)
    pixels[20:40, 30:50] = square
    Image.fromarray(pixels).save(path)
    return str(path)


def answer_score(predicted: str, true: str) -> float:
    """STE-VQA's official TC: 1 - normalised Levenshtein distance of the lower-cased strings, kept
    below 0.5 (the demo's answers are simplified Chinese already, so conversion changes nothing)."""
    a, b = predicted.lower(), true.lower()
    row = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        previous, row[0] = row[0], i
        for j, y in enumerate(b, 1):
            previous, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, previous + (x != y))
    distance = row[-1] / max(len(a), len(b))
    return 1 - distance if distance < 0.5 else 0.0


def quad_area(quad: list[int]) -> float:
    """The shoelace formula (the demo's quadrilaterals are convex: their own hull)."""
    xs, ys = quad[0::2], quad[1::2]
    return abs(sum(xs[i - 1] * ys[i] - xs[i] * ys[i - 1] for i in range(len(xs)))) / 2


def decode_runs(text: str, height: int = 320, width: int = 480) -> np.ndarray:
    runs = [int(part) for part in text.split(",")]
    flat = np.repeat(np.arange(len(runs)) % 2 == 1, runs)
    return np.concatenate([flat, np.zeros(height * width - flat.size, dtype=bool)]).reshape(height, width)


def box_of_mask(mask: np.ndarray) -> list[int]:
    rows, columns = np.nonzero(mask)
    return [
        int(columns.min()),
        int(rows.min()),
        int(columns.max() - columns.min() + 1),
        int(rows.max() - rows.min() + 1),
    ]


def box_iou(a, b) -> float:
    width = max(0, min(a[0] + a[2], b[0] + b[2]) - max(a[0], b[0]))
    height = max(0, min(a[1] + a[3], b[1] + b[3]) - max(a[1], b[1]))
    inter = width * height
    return inter / (a[2] * a[3] + b[2] * b[3] - inter)
