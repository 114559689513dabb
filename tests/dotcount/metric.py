"""Dot count's metric (pure): accuracy of the count, and the mean absolute error.

A prediction is ``{"id": str, "answer": str}``. Per item: ``correct`` (the answers are equal
after stripping), ``abs_error`` (|predicted - true| when both are whole numbers, else the true
count: an answer that is not a number counts as missing every dot). Missing predictions score
as wrong with the full error. Summary: "overall" and "by_count" (true count), each with n, Acc
and MAE.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from benchmarks.records import RecordChecker, check_unique, indexed, load_json_list
from evaluation.metrics.scored import Scored, describe_ids, mean_or_none

METRIC = "Dot count"
METRIC_VERSION = "1"


def prediction_from_record(raw: Any, checker: RecordChecker) -> dict[str, Any] | None:
    if not checker.is_object(raw):
        return None
    before = len(checker.errors)
    item_id = checker.get(raw, "id", str)
    answer = checker.get(raw, "answer", str)
    if len(checker.errors) > before:
        return None
    return {"id": item_id, "answer": answer}


def parse_predictions(data: bytes, *, source: str = "") -> list[dict[str, Any]]:
    document = load_json_list(data, source=source, what="predictions")
    return check_unique(indexed(document), prediction_from_record, id_field="id", source=source)


def as_count(text: str) -> int | None:
    text = text.strip()
    return int(text) if text.isdigit() else None


def group(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    return {
        "n": len(rows),
        "Acc": mean_or_none(float(row["correct"]) for row in rows),
        "MAE": mean_or_none(float(row["abs_error"]) for row in rows),
    }


def score(records: Sequence[Mapping[str, Any]], predictions: Sequence[Mapping[str, Any]]) -> Scored:
    checked = check_unique(
        indexed(list(predictions)), prediction_from_record, id_field="id", source="predictions"
    )
    by_id = {prediction["id"]: prediction["answer"] for prediction in checked}
    rows = []
    for record in records:
        truth = as_count(record["answer"])
        given = by_id.get(record["id"])
        guess = as_count(given) if given is not None else None
        rows.append(
            {
                "id": record["id"],
                "count": truth,
                "correct": given is not None and given.strip() == record["answer"].strip(),
                "abs_error": abs(guess - truth) if guess is not None and truth is not None else truth,
                "missing": given is None,
            }
        )
    missing = [row["id"] for row in rows if row["missing"]]
    params = {"metric": METRIC, "metric_version": METRIC_VERSION, "variant": "official"}
    counts = sorted({row["count"] for row in rows if row["count"] is not None})
    summary = {
        "overall": group(rows),
        "by_count": {str(count): group([row for row in rows if row["count"] == count]) for count in counts},
        "parameters": params,
    }
    problems = [f"{len(missing)} items have no prediction: {describe_ids(missing, 10)}"] if missing else []
    return Scored(items=rows, summary=summary, params=params, problems=problems)
