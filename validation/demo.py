"""Demo work for `load_demo`: a small validation plan on each demo dataset that can be validated.

The demo reviewer ("reviewer") validates; the demo annotator ("annotator") has already checked a
few items, one of them found faulty, so the plan's report has numbers and the reviewer's queue
starts with items the annotator judged too (an overlap item is offered to a second validator
first).
"""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.db import transaction

from annotation import queue
from validation import services
from validation.checks import check_for
from validation.models import Plan

SAMPLE_SIZE = 20
DONE_BY_ANNOTATOR = 5


def demo_answers(check, faulty: bool) -> dict:
    answers = {}
    failed = False
    for question in check.questions:
        if question.kind == "yesno":
            answers[question.name] = not (faulty and question.fails_on_no and not failed)
            failed = failed or not answers[question.name]
        elif question.kind == "scale":
            answers[question.name] = 4
        elif question.kind == "step":
            answers[question.name] = None
        else:
            answers[question.name] = "the answer does not match the image" if faulty else ""
    return answers


def create_demo_plan(spec, dataset) -> str | None:
    """The demo plan on `dataset`, unless its benchmark has no check or the plan exists."""
    if not spec.validation or not dataset.has_media:
        return None
    name = f"{spec.title} validation (demo)"
    if Plan.objects.filter(name=name, dataset=dataset).exists():
        return None
    User = get_user_model()
    annotator = User.objects.get(username="annotator")
    check = check_for(spec.name)
    with transaction.atomic():
        plan = services.create_plan(
            dataset=dataset,
            name=name,
            strata=[check.stratifiers[0].key],
            sample_size=min(SAMPLE_SIZE, dataset.item_count),
            seed=1,
            overlap=0.5,
            validators_per_overlap=2,
            validators=[User.objects.get(username="reviewer"), annotator],
            created_by=User.objects.get(username="researcher"),
            instructions="A demo plan: check a few generated items; the report estimates the error rate.",
        )
        for index in range(DONE_BY_ANNOTATOR):
            held = queue.claim(plan.project, annotator)
            if held is None:
                break
            services.submit_verdict(
                held, annotator, version=held.version, answers=demo_answers(check, faulty=index == 0)
            )
    return name
