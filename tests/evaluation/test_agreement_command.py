"""`manage.py agreement` over stored human answers (fixtures until the annotation app exists)."""

import io
import json

import orjson
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from benchmarks.services import import_dataset
from evaluation.services import submit_predictions
from tests.benchmarks import builders

pytestmark = pytest.mark.django_db


def stevqa_dataset():
    return import_dataset(
        benchmark="stevqa", data=orjson.dumps(builders.stevqa_questions()), name="gt", split="test"
    )


def answer(question_id, text, quad=(0, 0, 10, 0, 10, 10, 0, 10)):
    return {"question_id": question_id, "answer": text, "evidence": list(quad)}


def test_two_annotators_agreement_on_stevqa():
    dataset = stevqa_dataset()
    first = [answer(0, "Golden Bakery"), answer(1, "华为专卖店"), answer(2, "12元")]
    second = [answer(0, "golden bakery"), answer(1, "华为"), answer(2, "12元", (5, 0, 15, 0, 15, 10, 5, 10))]
    for name, answers in (("ann", first), ("bob", second)):
        submit_predictions(
            dataset=dataset, name=name, producer="annotator", data=orjson.dumps(answers), setting="bi"
        )
    submit_predictions(dataset=dataset, name="model", data=orjson.dumps(first), setting="bi")  # not a rater
    out = io.StringIO()
    call_command("agreement", str(dataset.pk), "--json", "--resamples", "200", stdout=out)
    result = json.loads(out.getvalue())
    assert result["items_rated"] == 3 and len(result["raters"]) == 2
    statistics = {s["statistic"]: s for s in result["statistics"]}
    assert statistics["percent_agreement"]["value"] == pytest.approx(2 / 3)  # answers compared lower-cased
    assert statistics["pairwise_polygon_iou"]["value"] == pytest.approx((1 + 1 + 1 / 3) / 3)
    assert statistics["pairwise_text_similarity"]["items"] == 3


def test_no_second_rater_is_a_clear_error():
    dataset = stevqa_dataset()
    submit_predictions(
        dataset=dataset, name="ann", producer="annotator", data=orjson.dumps([answer(0, "x")]), setting="bi"
    )
    with pytest.raises(CommandError, match="at least 2 raters"):
        call_command("agreement", str(dataset.pk), stdout=io.StringIO())
