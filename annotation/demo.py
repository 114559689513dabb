"""Demo work for `load_demo`: an annotation project on a demo dataset, some of it already done.

The demo annotator gets a queue with new images and second opinions to give; a second demo
annotator ("annotator2", password "annotator2-demo") has submitted a few images from the
dataset's own released pairs, so the demo reviewer has pairs waiting, with what OCR reads in
their evidence once the worker has read it.
"""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import transaction

from accounts.roles import ANNOTATOR
from annotation import queue, services
from annotation.models import Project
from annotation.workflows import workflow_for
from jobs import services as jobs

SECOND_ANNOTATOR = ("annotator2", "annotator2-demo")
DONE_BY_SECOND = 4


def create_demo_project(spec, dataset) -> str | None:
    """The demo project on `dataset`, unless its benchmark has no workflow or the project exists."""
    if not spec.authoring or not dataset.has_media:
        return None
    name = f"{spec.title} (demo)"
    if Project.objects.filter(name=name, dataset=dataset).exists():
        return None
    User = get_user_model()
    second, created = User.objects.get_or_create(username=SECOND_ANNOTATOR[0])
    if created:
        second.set_password(SECOND_ANNOTATOR[1])
        second.save()
    second.groups.add(Group.objects.get(name=ANNOTATOR))
    workflow = workflow_for(spec.name)
    with transaction.atomic():
        project = services.create_project(
            dataset=dataset,
            name=name,
            created_by=User.objects.get(username="researcher"),
            pairs_per_item=3,
            overlap=0.25,
            seed=1,
            instructions=(
                "Ask questions that can only be answered by reading text in the image, in English or "
                "Chinese; no yes/no questions. Draw the quadrilateral tightly around the answer's text."
            ),
            annotators=[User.objects.get(username="annotator"), second],
            reviewers=[User.objects.get(username="reviewer")],
        )
        for _ in range(DONE_BY_SECOND):
            held = queue.claim(project, second)
            if held is None:
                break
            pairs = workflow.demo_pairs(held.task.item)
            try:
                services.submit(held, second, version=held.version, pairs=pairs, check_evidence=False)
            except services.Refused as refused:  # a released pair our rules refuse: skip the image
                queue.skip(held, second, held.version, str(refused)[:500])
            else:
                # What OCR reads in each pair's evidence, for the demo reviewer: read by the worker
                # once it runs (loading the demo stays quick), as for a submit that ran out of time.
                jobs.enqueue("annotation.tasks.read_pairs_later", held.pk)
    return name
