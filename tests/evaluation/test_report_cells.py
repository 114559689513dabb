"""A report reads each submission's per-unit rows once: its cells are kept under its version."""

import json

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from evaluation.selectors import report_table
from evaluation.services import submit_predictions

pytestmark = pytest.mark.django_db


def prediction_reads(queries) -> int:
    return sum(1 for query in queries if "evaluation_prediction" in query["sql"])


def test_the_second_view_reads_no_per_unit_row_and_a_new_scoring_is_seen(trance_dataset, trance_files):
    samples = [json.loads(line) for line in (trance_files / "data.jsonl").read_text().splitlines()]
    truth = {
        str(s["idx"]): [{k: step[k] for k in ("obj_idx", "attr", "val")} for step in s["transformations"]]
        for s in samples
    }
    half = {key: steps if int(key) % 2 else [] for key, steps in truth.items()}
    submit_predictions(dataset=trance_dataset, name="Half", setting="event", data=json.dumps(half).encode())

    with CaptureQueriesContext(connection) as first:
        table = report_table(trance_dataset)
    with CaptureQueriesContext(connection) as second:
        again = report_table(trance_dataset)
    assert prediction_reads(first.captured_queries) >= 1 and prediction_reads(second.captured_queries) == 0
    assert again == table
    acc = [column.label for column in table.columns].index("Acc", 4)  # Event Acc
    cell = table.rows[0].cells[acc]
    assert (cell.value, cell.n) == (0.5, 12) and 0 < cell.low < 0.5 < cell.high < 1

    # Scored again with better answers: a new version, so the cells are computed again.
    submission = trance_dataset.submissions.get()
    for prediction in submission.predictions.all():
        prediction.answer = truth[str(prediction.item.external_id)]
        prediction.save(update_fields=["answer"])
    from evaluation.services import rescore

    rescore(submission)
    assert report_table(trance_dataset).rows[0].cells[acc].value == 1.0
