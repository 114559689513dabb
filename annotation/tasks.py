"""Background work of the annotation app: reading evidence with OCR when a submit ran out of time."""

from __future__ import annotations

from celery import shared_task


@shared_task(acks_late=True, reject_on_worker_lost=True)
def read_pairs_later(assignment_pk: int) -> int:
    """Fill in what OCR reads inside each pair's evidence, for reviewers; returns pairs read."""
    from annotation.models import QAPair
    from annotation.services import image_file
    from annotation.workflows import workflow_for

    pairs = list(
        QAPair.objects.filter(assignment_id=assignment_pk, ocr_similarity__isnull=True).select_related(
            "assignment__task__item__dataset"
        )
    )
    read = 0
    for pair in pairs:
        item = pair.assignment.task.item
        workflow = workflow_for(item.dataset.benchmark)
        path = image_file(item, workflow.image_role)
        if path is None or not path.is_file():
            continue
        reading = workflow.read_evidence(path, pair.evidence, pair.answer)
        QAPair.objects.filter(pk=pair.pk, version=pair.version).update(
            ocr_text=reading.text, ocr_similarity=reading.similarity
        )
        read += 1
    return read
