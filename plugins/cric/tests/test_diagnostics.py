"""CRIC's diagnostics (pure Python, no database): the breakdowns by question length, program
length and target object size, recognition accuracy, set IoU per function, and the report
columns and plots the spec declares over them. Every number is worked out by hand below."""

from __future__ import annotations

import io
import json

import pytest

from benchmarks.records import FormatError
from benchmarks.spec import ScoringFiles, ScoringInput
from evaluation.reports.cells import ScoredSubmission, cell_for
from plugins.cric import metric as cric
from plugins.cric.spec import SPEC

ALL = [10, 11, 12, 13, 14]

# One image of 100 × 100 = 10,000 px². Relative areas (w × h / 10,000):
#   10: 5 × 10 = 50      -> 0.005  small
#   11: 10 × 10 = 100    -> 0.01   medium (the boundary belongs to medium)
#   12: 30 × 30 = 900    -> 0.09   medium
#   13: 40 × 25 = 1,000  -> 0.1    large (the boundary belongs to large)
#   14: 50 × 60 = 3,000  -> 0.3    large
SIZES = {10: (5, 10), 11: (10, 10), 12: (30, 30), 13: (40, 25), 14: (50, 60)}


def scene(image_id=1, sizes=SIZES, **changes):
    graph = {
        "image_id": image_id,
        "width": 100,
        "height": 100,
        "objects": [
            {"object_id": object_id, "names": ["thing"], "x": 0, "y": 0, "w": w, "h": h, "attributes": []}
            for object_id, (w, h) in sizes.items()
        ],
    }
    graph.update(changes)
    return graph


def step(function, output, *text):
    return {"function": function, "text_input": list(text), "output": output}


def question(question_id, question_type, text, answer, target, program, image_id=1):
    return {
        "image_id": image_id,
        "question_id": question_id,
        "question": text,
        "answer": answer,
        "question_type": question_type,
        "target": target,
        "program": program,
    }


# Words (whitespace tokens), program steps, size of the largest target:
#   q1  5 words -> 1-6    4 steps -> 4-5   [10]       small
#   q2  8 words -> 7-9    5 steps -> 4-5   [11, 13]   max(0.01, 0.1) = 0.1: large
#   q3 13 words -> 13+    7 steps -> 6-7   [12]       medium
#   q4  4 words -> 1-6    3 steps -> 1-3   "no": no size
#   q5 10 words -> 10-12  8 steps -> 8+    [14]       large
QUESTIONS = [
    question(
        "q1",
        "QueryObjKG",
        "What can be used for cutting?",
        "knife",
        [10],
        [
            step("Initial", ALL),
            step("Find KG", [10, 12], "UsedFor", "cutting"),
            step("Find", [10], "knife"),
            step("Recognition", [10], "name"),
        ],
    ),
    question(
        "q2",
        "QueryAtt",
        "What color is the object on the table?",
        "red",
        [11, 13],
        [
            step("Initial", ALL),
            step("Find", [14], "table"),
            step("Relate Reverse", [11, 13], "on"),
            step("Find", [11, 13], "object"),
            step("Recognition", [11, 13], "color"),
        ],
    ),
    question(
        "q3",
        "VerifyKG",
        "Is there an object on the table that can be used for cutting?",
        "yes",
        [12],
        [
            step("Initial", ALL),
            step("Find", [14], "table"),
            step("Relate Reverse", [12], "on"),
            step("Initial", ALL),
            step("Find KG", [10, 12], "UsedFor", "cutting"),
            step("And", [12]),
            step("Verify", []),
        ],
    ),
    question(
        "q4",
        "VerifyAtt",
        "Is the cup red?",
        "no",
        [],
        [step("Initial", ALL), step("Find", [11], "cup"), step("Verify", [], "red")],
    ),
    question(
        "q5",
        "QueryObjSG",
        "What animal is next to the bench in the garden?",
        "dog",
        [14],
        [step("Initial", ALL)] * 7 + [step("Recognition", [14], "name")],
    ),
]

# Ans, Grd, Final per question:
#   q1 knife, 10        T T T
#   q2 red, 12          T F F   (12 is not a target)
#   q3 no, 12           F T F
#   q4 no, null         T T T
#   q5 no prediction    F F F
PREDICTIONS = [
    {"question_id": "q1", "answer": "knife", "object": 10},
    {"question_id": "q2", "answer": "red", "object": 12},
    {"question_id": "q3", "answer": "no", "object": 12},
    {"question_id": "q4", "answer": "no", "object": None},
]


def group(count, ans, grd, final):
    return {"count": count, "Ans": ans, "Grd": grd, "Final": final}


NOTHING = group(0, None, None, None)


# --- buckets -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("words", "key"),
    [(0, "1-6"), (6, "1-6"), (7, "7-9"), (9, "7-9"), (10, "10-12"), (12, "10-12"), (13, "13+"), (40, "13+")],
)
def test_question_length_buckets_edges(words, key):
    assert cric.bucket(words, cric.LENGTH_BUCKETS) == key


@pytest.mark.parametrize(
    ("steps", "key"), [(1, "1-3"), (3, "1-3"), (4, "4-5"), (5, "4-5"), (6, "6-7"), (7, "6-7"), (8, "8+")]
)
def test_function_count_buckets_edges(steps, key):
    assert cric.bucket(steps, cric.FUNCTION_BUCKETS) == key


def test_words_are_whitespace_tokens_with_punctuation_attached():
    assert cric.question_words({"question": "Is the 刀 on the table?"}) == 6
    assert cric.question_words({"question": "What  is\tthis ?"}) == 4  # the lone "?" is a token


@pytest.mark.parametrize(
    ("area", "key"), [(0.0, "small"), (0.0099, "small"), (0.01, "medium"), (0.0999, "medium"), (0.1, "large")]
)
def test_size_thresholds(area, key):
    assert cric.size_bucket(area) == key


# --- breakdowns in the summary -----------------------------------------------------------------


def test_breakdowns_by_length_functions_and_size():
    scored = cric.score(QUESTIONS, PREDICTIONS, scenes=[scene()])
    summary = scored.summary
    # 1-6: q1 TTT, q4 TTT. 7-9: q2 TFF. 10-12: q5 (missing) FFF. 13+: q3 FTF.
    assert summary["by_question_length"] == {
        "1-6": group(2, 1.0, 1.0, 1.0),
        "7-9": group(1, 1.0, 0.0, 0.0),
        "10-12": group(1, 0.0, 0.0, 0.0),
        "13+": group(1, 0.0, 1.0, 0.0),
    }
    # 1-3: q4 TTT. 4-5: q1 TTT, q2 TFF -> Ans 2/2, Grd 1/2, Final 1/2. 6-7: q3 FTF. 8+: q5 FFF.
    assert summary["by_functions"] == {
        "1-3": group(1, 1.0, 1.0, 1.0),
        "4-5": group(2, 1.0, 0.5, 0.5),
        "6-7": group(1, 0.0, 1.0, 0.0),
        "8+": group(1, 0.0, 0.0, 0.0),
    }
    # small: q1 TTT. medium: q3 FTF. large: q2 TFF, q5 FFF -> Ans 1/2, Grd 0, Final 0. q4: none.
    assert summary["by_object_size"] == {
        "small": group(1, 1.0, 1.0, 1.0),
        "medium": group(1, 0.0, 1.0, 0.0),
        "large": group(2, 0.5, 0.0, 0.0),
    }
    # Programs with a Recognition step: q1 TTT, q2 TFF, q5 FFF -> Ans 2/3, Grd 1/3, Final 1/3.
    assert summary["recognition"] == group(3, 2 / 3, 1 / 3, 1 / 3)
    rows = {row["question_id"]: row for row in scored.items}
    assert [
        (row["length_bucket"], row["functions_bucket"], row["size_bucket"], row["recognition_step"])
        for row in rows.values()
    ] == [
        ("1-6", "4-5", "small", True),
        ("7-9", "4-5", "large", True),
        ("13+", "6-7", "medium", False),
        ("1-6", "1-3", None, False),
        ("10-12", "8+", "large", True),
    ]
    assert scored.params["scene_graphs"] is True
    assert scored.params["object_size_thresholds"] == {"small_below": 0.01, "large_from": 0.1}
    assert scored.problems == [
        "1 question has no prediction and counts as wrong on Ans, Grd and Final: question_id q5"
    ]


def test_without_scene_graphs_no_question_has_a_size():
    scored = cric.score(QUESTIONS, PREDICTIONS)
    assert scored.summary["by_object_size"] == {"small": NOTHING, "medium": NOTHING, "large": NOTHING}
    assert all(row["size_bucket"] is None for row in scored.items)
    assert scored.params["scene_graphs"] is False
    # The other breakdowns need no scene graph.
    assert scored.summary["by_question_length"]["1-6"] == group(2, 1.0, 1.0, 1.0)


def test_questions_the_scene_graphs_cannot_size_are_named():
    questions = [
        question("a", "QueryObjKG", "What is it?", "cup", [11], [step("Initial", [11])], image_id=1),
        question("b", "QueryObjKG", "What is it?", "cup", [21], [step("Initial", [21])], image_id=2),
        question("c", "QueryObjKG", "What is it?", "cup", [99], [step("Initial", [99])], image_id=3),
        question("d", "QueryObjKG", "What is it?", "cup", [31], [step("Initial", [31])], image_id=4),
    ]
    graphs = [
        scene(1),
        scene(2, {21: (10, 10)}),
        scene(3),  # object 99 is not in it; image 4 has no scene graph at all
    ]
    del graphs[1]["width"], graphs[1]["height"]  # no image size (optional in a scene graph)
    predictions = [{"question_id": q, "answer": "cup", "object": None} for q in "abcd"]
    scored = cric.score(questions, predictions, scenes=graphs)
    assert [row["size_bucket"] for row in scored.items] == ["medium", None, None, None]
    assert scored.summary["by_object_size"]["medium"]["count"] == 1
    assert scored.problems == [
        "1 question has no object size, as their image's scene graph gives no width and height: question_id b",
        "1 question has no object size, as their image's scene graph lacks a target object: question_id c",
        "1 question has no object size, as their image has no scene graph: question_id d",
    ]


def test_a_bad_scene_graph_is_named_by_record_and_field():
    broken = scene(1)
    broken["objects"][2]["w"] = "30"
    with pytest.raises(FormatError) as raised:
        cric.score(QUESTIONS, PREDICTIONS, scenes=[scene(2), broken, scene(2)])
    errors = {(error.record, error.field) for error in raised.value.errors}
    assert errors == {("record 1", "objects[2].w"), ("record 2", "image_id")}  # the last: a repeated image
    with pytest.raises(FormatError, match="objects\\[2\\].w"):
        cric.score_file(
            json.dumps(QUESTIONS).encode(),
            json.dumps(PREDICTIONS).encode(),
            scenes_data=json.dumps([broken]).encode(),
        )


# --- set IoU per function ----------------------------------------------------------------------

# q1 true outputs:   Initial ALL, Find KG {10,12}, Find {10},    Recognition {10}
#    predicted:      ALL            {10}            {10,11}       {10}
#    set IoU:        1              1/2             1/2           1            -> step_iou 3/4
# q2 true outputs:   Initial ALL, Find {14}, Relate Reverse {11,13}, Find {11,13}, Recognition {11,13}
#    predicted:      ALL          {14}       {11}                    {11}          {11,13}
#    set IoU:        1            1          1/2                     1/2           1    -> step_iou 4/5
# Over the steps of each function:
#   Initial      q1 1, q2 1                  -> 2 steps, 2 questions, 1
#   Find         q1 1/2; q2 1 and 1/2        -> 3 steps, 2 questions, (1/2 + 1 + 1/2) / 3 = 2/3
#                (q1's own mean 1/2, q2's 3/4: the rows' values an interval is drawn from)
#   Relate Rev.  q2 1/2                      -> 1 step, 1/2
#   Recognition  q1 1, q2 1                  -> 2 steps, 1
#   Find KG      q1 1/2                      -> 1 step, 1/2
OUTPUTS = {
    "q1": [ALL, [10], [10, 11], [10]],
    "q2": [ALL, [14], [11], [11], [11, 13]],
}


def with_outputs(predictions):
    return [
        {**prediction, "program_outputs": OUTPUTS[prediction["question_id"]]}
        if prediction["question_id"] in OUTPUTS
        else prediction
        for prediction in predictions
    ]


def test_set_iou_per_function_is_the_mean_over_its_steps():
    scored = cric.score(QUESTIONS, with_outputs(PREDICTIONS))
    by_function = scored.summary["by_function"]
    # In the paper's order; functions no scored step has (Relate, And, Verify, ...) are absent.
    assert list(by_function) == ["Initial", "Find", "Relate Reverse", "Recognition", "Find KG"]
    assert by_function["Initial"] == {"count": 2, "questions": 2, "set_iou": 1.0}
    assert by_function["Find"] == {"count": 3, "questions": 2, "set_iou": pytest.approx(2 / 3)}
    assert by_function["Relate Reverse"] == {"count": 1, "questions": 1, "set_iou": 0.5}
    assert by_function["Recognition"] == {"count": 2, "questions": 2, "set_iou": 1.0}
    assert by_function["Find KG"] == {"count": 1, "questions": 1, "set_iou": 0.5}
    rows = {row["question_id"]: row for row in scored.items}
    assert rows["q1"]["step_iou"] == pytest.approx(3 / 4) and rows["q2"]["step_iou"] == pytest.approx(4 / 5)
    assert rows["q1"]["set_iou:Find"] == 0.5 and rows["q2"]["set_iou:Find"] == 0.75
    assert "set_iou:Relate Reverse" not in rows["q1"]
    # No program outputs given: no per-function field.
    assert not any(key.startswith("set_iou:") for key in rows["q3"])


def test_no_program_outputs_no_per_function_iou():
    assert cric.score(QUESTIONS, PREDICTIONS).summary["by_function"] == {}


# --- the streamed scorer -----------------------------------------------------------------------


def test_score_file_gives_the_summary_and_rows_of_score_with_scene_graphs():
    predictions = with_outputs(PREDICTIONS)
    in_memory = cric.score(QUESTIONS, predictions, scenes=[scene()])
    data = [json.dumps(value).encode() for value in (QUESTIONS, predictions, [scene()])]
    whole = cric.score_file(data[0], data[1], scenes_data=data[2])
    streamed = cric.score_file(io.BytesIO(data[0]), io.BytesIO(data[1]), scenes_data=io.BytesIO(data[2]))
    for scored in (whole, streamed):
        assert scored.summary == in_memory.summary
        assert scored.items == in_memory.items
        assert scored.problems == in_memory.problems
    assert whole.summary["by_object_size"]["large"]["count"] == 2  # the scene graphs were read


def test_the_spec_scores_with_the_scenes_it_is_given():
    answers = {p["question_id"]: {k: v for k, v in p.items() if k != "question_id"} for p in PREDICTIONS}
    with_scenes = SPEC.score(ScoringInput(records=QUESTIONS, answers=answers, scenes=[scene()]))
    without = SPEC.score(ScoringInput(records=QUESTIONS, answers=answers))
    assert with_scenes.summary["by_object_size"]["large"] == group(2, 0.5, 0.0, 0.0)
    assert without.summary["by_object_size"]["large"] == NOTHING
    files = ScoringFiles(
        json.dumps(QUESTIONS).encode(), json.dumps(PREDICTIONS).encode(), json.dumps([scene()]).encode()
    )
    assert SPEC.score_files(files).summary == with_scenes.summary


# --- what the report shows ---------------------------------------------------------------------


def table(key):
    return next(table for table in SPEC.diagnostics if table.key == key)


def submission(scored):
    return ScoredSubmission("model", "M", "", scored.summary, scored.items)


def test_declared_tables_keep_to_twelve_columns_and_unique_keys():
    assert [t.key for t in SPEC.diagnostics] == ["by-function", "by-length", "by-functions", "by-size"]
    assert all(len(t.columns) <= 12 for t in SPEC.diagnostics)
    keys = [(c.group, c.label, c.setting, c.summary_path) for c in SPEC.all_columns()]
    assert len(keys) == len(set(keys))


def test_size_table_cells_with_their_question_counts():
    made = submission(cric.score(QUESTIONS, PREDICTIONS, scenes=[scene()]))
    cells = [cell_for(column, made) for column in table("by-size").columns]
    # small (q1): 1, 1, 1; medium (q3): 0, 1, 0; large (q2, q5): 1/2, 0, 0.
    assert [cell.value for cell in cells] == [1.0, 1.0, 1.0, 0.0, 1.0, 0.0, 0.5, 0.0, 0.0]
    assert [cell.n for cell in cells] == [1, 1, 1, 1, 1, 1, 2, 2, 2]


def test_length_table_interval_is_drawn_over_the_bucket_questions():
    made = submission(cric.score(QUESTIONS, PREDICTIONS))
    first = cell_for(table("by-length").columns[0], made)  # ≤ 6 words, Ans: q1 and q4 both right
    # Wilson for 2 of 2, z = 1.96: (1 + z²/4 ± z·sqrt(z²/16)) / (1 + z²/2) = (1.9604 ± 0.9604) / 2.9207
    assert (first.value, first.n) == (1.0, 2)
    assert first.low == pytest.approx(1.0 / 2.9207, abs=1e-3) and first.high == pytest.approx(1.0)


def test_function_table_reads_set_iou_and_recognition():
    made = submission(cric.score(QUESTIONS, with_outputs(PREDICTIONS)))
    columns = {
        column.label if column.group != "Recognition" else "Recognition Ans": column
        for column in table("by-function").columns
    }
    find = cell_for(columns["Find"], made)
    # Value: the mean over Find's 3 steps, 2/3. Interval: over the 2 questions' own means 1/2
    # and 3/4: mean 0.625, sd sqrt(2 × 0.125²) = 0.17678, half 1.96 × 0.17678 / sqrt(2) = 0.245.
    assert find.value == pytest.approx(2 / 3) and find.n == 2
    assert (find.low, find.high) == (pytest.approx(0.380, abs=1e-3), pytest.approx(0.870, abs=1e-3))
    assert cell_for(columns["Relate"], made).value is None  # no Relate step: the column is dropped
    recognition = cell_for(columns["Recognition Ans"], made)
    assert (recognition.value, recognition.n) == (pytest.approx(2 / 3), 3)


def test_plots_read_the_breakdowns_in_order():
    summary = cric.score(QUESTIONS, PREDICTIONS, scenes=[scene()]).summary
    finals = {
        plot.summary_path: [
            summary[plot.summary_path[0]][choice.value][plot.metric] for choice in plot.groups
        ]
        for plot in SPEC.plots[1:]
    }
    assert finals == {
        ("by_question_length",): [1.0, 0.0, 0.0, 0.0],
        ("by_functions",): [1.0, 0.5, 0.0, 0.0],
        ("by_object_size",): [1.0, 0.0, 0.0],
    }
    assert [plot.kind for plot in SPEC.plots[1:]] == ["line", "line", "bars"]
