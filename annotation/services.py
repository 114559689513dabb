"""Annotation writes: making a project, submitting a task, reviewing a pair, publishing the output.

Views and the API validate the request's shape and call these; every rule lives here once. A
refused write raises Refused with every problem (pair, field, code, message) and changes
nothing; a write based on an old version raises queue.Stale with what the server holds.
"""

from __future__ import annotations

import functools
import json
import math
import random
import time
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone
from django.utils.translation import gettext

from accounts import inputs
from accounts.roles import ANNOTATOR, REVIEWER
from annotation import queue
from annotation.models import Assignment, Project, QAPair, QARevision, Task
from annotation.permissions import is_member
from annotation.problems import Problem
from annotation.workflows import NoWorkflow, workflow_for
from benchmarks.models import Dataset, Item
from benchmarks.services import import_dataset
from benchmarks.storage import local_folder, local_path, media
from jobs import services as jobs

_ocr_pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="ocr")


@dataclass
class Refused(ValueError):
    """A write that breaks rules; `problems` are dicts: pair, field, code, message, confirmable."""

    problems: list[dict[str, Any]] = field(default_factory=list)

    def __str__(self) -> str:
        return "; ".join(
            (f"pair {p['pair'] + 1} " if p.get("pair") is not None else "") + f"{p['field']}: {p['message']}"
            for p in self.problems
        )


def problem(pair: int | None, field_name: str, code: str, message: str, confirmable: bool = False) -> dict:
    return {"pair": pair, "field": field_name, "code": code, "message": message, "confirmable": confirmable}


def explain(found: Problem, messages: dict[str, str]) -> dict[str, Any]:
    """A rule's problem in the user's language (the active translation); `messages`: the
    workflow's English templates by code."""
    template = messages.get(found.code, found.code)
    try:
        message = gettext(template).format(**found.params)
    except (KeyError, IndexError, ValueError):
        message = gettext(template)
    return problem(found.pair, found.field, found.code, message, found.confirmable)


# --- projects -----------------------------------------------------------------------------------


def project_problems(
    *, dataset: Dataset, pairs_per_item: int, overlap: float, lease_seconds: int, annotators, reviewers
) -> dict[str, str]:
    """What is wrong with a project's choices, by field (empty when it can be made)."""
    found: dict[str, str] = {}
    try:
        workflow = workflow_for(dataset.benchmark)
    except NoWorkflow as error:
        return {"dataset": str(error)}
    if not workflow.annotatable(dataset.items.all()).exists():
        found["dataset"] = gettext("this dataset has no images to annotate (import it with its images)")
    if not 1 <= pairs_per_item <= 20:
        found["pairs_per_item"] = gettext("ask for 1 to 20 pairs per image")
    if not (isinstance(overlap, (int, float)) and math.isfinite(overlap) and 0 <= overlap <= 1):
        found["overlap"] = gettext("the overlap is a share between 0 and 1")
    if not 30 <= lease_seconds <= 24 * 3600:
        found["lease_seconds"] = gettext("a lease lasts between 30 seconds and a day")
    annotators, reviewers = list(annotators), list(reviewers)
    not_annotators = [u.username for u in annotators if not u.groups.filter(name=ANNOTATOR).exists()]
    if not_annotators:
        found["annotators"] = gettext("not annotators: %s") % ", ".join(not_annotators)
    elif overlap > 0 and len(annotators) < 2:
        found["annotators"] = gettext(
            "a second opinion needs at least two annotators (or set the overlap to 0)"
        )
    not_reviewers = [u.username for u in reviewers if not u.groups.filter(name=REVIEWER).exists()]
    if not_reviewers:
        found["reviewers"] = gettext("not reviewers: %s") % ", ".join(not_reviewers)
    return found


#: The longest instructions a project (or a validation plan) shows, in characters.
INSTRUCTIONS_LIMIT = 20_000


class ProjectRefused(ValueError):
    def __init__(self, problems: dict[str, str]) -> None:
        super().__init__("; ".join(f"{key}: {value}" for key, value in problems.items()))
        self.problems = problems


def create_project(
    *,
    dataset: Dataset,
    name: str,
    created_by=None,
    pairs_per_item: int = 3,
    overlap: float = 0.2,
    lease_seconds: int = 600,
    seed: int = 0,
    instructions: str = "",
    annotators=(),
    reviewers=(),
) -> Project:
    """A project with one task per annotatable item; round(overlap × n) of them, drawn with the
    seed, want a second opinion. ProjectRefused names each bad choice; nothing is made then."""
    annotators, reviewers = list(annotators), list(reviewers)
    problems = project_problems(
        dataset=dataset,
        pairs_per_item=pairs_per_item,
        overlap=overlap,
        lease_seconds=lease_seconds,
        annotators=annotators,
        reviewers=reviewers,
    )
    try:
        name = inputs.name(name, "name")
    except inputs.InputRefused as error:
        problems["name"] = (
            error.message if isinstance(name, str) and name.strip() else gettext("a project needs a name")
        )
    try:
        instructions = inputs.text(instructions, "instructions", max_length=INSTRUCTIONS_LIMIT)
    except inputs.InputRefused as error:
        problems["instructions"] = error.message
    if problems:
        raise ProjectRefused(problems)
    workflow = workflow_for(dataset.benchmark)
    item_ids = list(workflow.annotatable(dataset.items.order_by("position")).values_list("pk", flat=True))
    doubled = set(random.Random(seed).sample(item_ids, round(overlap * len(item_ids))))
    with transaction.atomic():
        project = Project.objects.create(
            name=name,
            dataset=dataset,
            pairs_per_item=pairs_per_item,
            overlap=overlap,
            lease_seconds=lease_seconds,
            seed=seed,
            instructions=instructions,
            created_by=created_by,
        )
        project.annotators.set(annotators)
        project.reviewers.set(reviewers)
        Task.objects.bulk_create(
            [
                Task(
                    project=project,
                    item_id=item_id,
                    position=position,
                    opinions=2 if item_id in doubled else 1,
                )
                for position, item_id in enumerate(item_ids)
            ],
            batch_size=2000,
        )
    return project


# --- images -------------------------------------------------------------------------------------


def image_file(item: Item, role: str) -> Path | None:
    """The item's image of `role` as a file on this machine (fetched from an object store once);
    None when the item has none or the store lacks it."""
    name = item.media.get(role)
    if not name:
        return None
    try:
        return local_path(media, f"{item.dataset.media_folder}/{name.rsplit('/', 1)[-1]}")
    except FileNotFoundError:
        return None


def image_size(path: Path | None) -> tuple[int, int]:
    """(width, height) from the file's header; (0, 0) when the file is missing or unreadable."""
    if path is None:
        return 0, 0
    try:
        modified = path.stat().st_mtime_ns
    except OSError:
        return 0, 0
    return header_size(str(path), modified)


@functools.lru_cache(maxsize=8192)
def header_size(path: str, modified: int) -> tuple[int, int]:
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(path) as image:
            return image.size
    except (OSError, UnidentifiedImageError):
        return 0, 0


# --- submitting ---------------------------------------------------------------------------------


#: The longest question or answer, and the longest reason (a skip's, a reviewer's), in characters.
TEXT_LIMIT = 1000
REASON_LIMIT = 2000


def read_pairs(raw: Any) -> list[dict[str, Any]]:
    """The submitted pairs in a fixed shape; Refused naming the first field that has the wrong type.

    Questions and answers pass the input gate (accounts/inputs.py: valid Unicode, no control
    characters, at most TEXT_LIMIT characters); runs of white space become one space.
    """
    if not isinstance(raw, list):
        raise Refused([problem(None, "pairs", "shape", gettext("expected a list of question-answer pairs"))])
    if len(raw) > 50:
        raise Refused([problem(None, "pairs", "too_many", gettext("at most 50 pairs per image"))])
    pairs = []
    for index, entry in enumerate(raw):
        if not isinstance(entry, dict):
            raise Refused([problem(index, "pairs", "shape", gettext("expected an object"))])
        text = {}
        for name in ("question", "answer"):
            value = entry.get(name, "")
            if not isinstance(value, str):
                raise Refused([problem(index, name, "shape", gettext("expected text"))])
            try:
                value = inputs.text(value, name, max_length=TEXT_LIMIT, single_line=False)
            except inputs.InputRefused as error:
                raise Refused([problem(index, name, "shape", error.message)]) from None
            text[name] = " ".join(value.split())
        source = entry.get("source")
        if source is not None and (
            isinstance(source, bool) or not isinstance(source, int) or not 0 < source <= inputs.INT64_MAX
        ):
            raise Refused([problem(index, "source", "shape", gettext("expected a pair id"))])
        pairs.append(
            {
                **text,
                "evidence": entry.get("evidence"),
                "source": source,
                "ocr_confirmed": entry.get("ocr_confirmed") is True,
            }
        )
    return pairs


def first_round_pairs(task: Task) -> list[QAPair]:
    """The first annotator's pairs of a task (what a second opinion answers), as they stand."""
    return list(
        QAPair.objects.filter(
            assignment__task=task, assignment__round=1, assignment__status__in=Assignment.LIVE
        ).order_by("index")
    )


def submit(
    assignment: Assignment, user, *, version: int, pairs: Any, check_evidence: bool = True
) -> Assignment:
    """Check and store an assignment's pairs; Refused (nothing stored), queue.Stale or LeaseLost.

    `check_evidence=False` leaves OCR out (loading demo work); the rules are always checked.
    """
    task = assignment.task
    if not is_member(user, task.project):
        raise queue.NotMember()  # before any checking or OCR: nothing of theirs is taken now
    item = task.item
    workflow = workflow_for(item.dataset.benchmark)
    pairs = read_pairs(pairs)
    second = assignment.round > 1
    if not second and any(pair["source"] is not None for pair in pairs):
        # Only a second opinion answers another person's pair, and only the pairs of its own task.
        index = next(index for index, pair in enumerate(pairs) if pair["source"] is not None)
        raise Refused(
            [problem(index, "source", "source", gettext("a first annotation answers no other pair"))]
        )
    if second:
        given = first_round_pairs(task)
        if [pair["source"] for pair in pairs] != [pair.pk for pair in given]:
            raise Refused(
                [problem(None, "pairs", "questions", gettext("answer each of the given questions, in order"))]
            )
        for pair, source in zip(pairs, given, strict=True):
            pair["question"] = source.question
    path = image_file(item, workflow.image_role)
    width, height = image_size(path)
    found = [
        explain(p, workflow.messages)
        for p in workflow.check(pairs, width=width, height=height, fixed_questions=second)
    ]
    if found:
        raise Refused(found)
    readings = read_evidence(workflow, path, pairs) if check_evidence else [None] * len(pairs)
    mismatched = []
    for index, (pair, reading) in enumerate(zip(pairs, readings, strict=True)):
        if (
            reading is not None
            and reading.similarity < workflow.ocr_threshold()
            and not pair["ocr_confirmed"]
        ):
            mismatched.append(explain(workflow.ocr_problem(index, reading.text), workflow.messages))
    if mismatched:
        raise Refused(mismatched)
    now = timezone.now()
    first_time = assignment.submitted_at is None
    with transaction.atomic():
        assignment = queue.close(
            assignment,
            user,
            version,
            status=Assignment.Status.SUBMITTED,
            submitted_at=now,
            return_reason="",
            draft={"pairs": [public_pair(pair) for pair in pairs]},
        )
        write_pairs(assignment, user, pairs, readings, workflow, first_time=first_time)
        queue.submitted(assignment, first_time)
    unread = [index for index, reading in enumerate(readings) if reading is None]
    if unread and path is not None and check_evidence:
        jobs.enqueue("annotation.tasks.read_pairs_later", assignment.pk)
    return assignment


def public_pair(pair: dict[str, Any]) -> dict[str, Any]:
    return {key: pair[key] for key in ("question", "answer", "evidence", "source", "ocr_confirmed")}


def read_evidence(workflow, path: Path | None, pairs: list[dict[str, Any]]) -> list[Any]:
    """OCR of each pair's evidence within settings.ANNOTATION_OCR_BUDGET_S seconds in all.

    None for a pair not read in time: the submit goes through unchecked and a Celery task
    (annotation/tasks.py) reads it later, for the reviewer.
    """
    budget = settings.ANNOTATION_OCR_BUDGET_S
    if path is None or budget <= 0:
        return [None] * len(pairs)
    futures = [
        _ocr_pool.submit(workflow.read_evidence, path, pair["evidence"], pair["answer"]) for pair in pairs
    ]
    deadline = time.monotonic() + budget
    readings = []
    for future in futures:
        try:
            readings.append(future.result(timeout=max(0.0, deadline - time.monotonic())))
        except FutureTimeout:
            readings.append(None)
        except Exception:  # an image OCR cannot read is not the annotator's fault: leave it unchecked
            readings.append(None)
    return readings


def write_pairs(
    assignment: Assignment,
    user,
    pairs: list[dict[str, Any]],
    readings: list[Any],
    workflow,
    *,
    first_time: bool,
) -> None:
    """Store the submitted pairs by position: a changed or rejected pair gets a new version."""
    existing = {} if first_time else {pair.index: pair for pair in assignment.pairs.all()}
    for index, (pair, reading) in enumerate(zip(pairs, readings, strict=True)):
        content = {
            "question": pair["question"],
            "answer": pair["answer"],
            "evidence": [round(float(v), 1) for v in pair["evidence"]],
        }
        ocr = {"ocr_confirmed": pair["ocr_confirmed"]}
        if reading is not None:
            ocr.update(ocr_text=reading.text, ocr_similarity=reading.similarity)
        old = existing.pop(index, None)
        if old is None:
            stored = QAPair.objects.create(
                assignment=assignment,
                index=index,
                source_id=pair["source"],
                language=workflow.language(content["question"]),
                **content,
                **ocr,
            )
            revise(stored, user, QARevision.Kind.WRITTEN)
            continue
        if old.content() == content and old.review != QAPair.Review.REJECTED:
            QAPair.objects.filter(pk=old.pk).update(**ocr)
            continue
        QAPair.objects.filter(pk=old.pk).update(
            **content,
            **ocr,
            language=workflow.language(content["question"]),
            version=F("version") + 1,
            review=QAPair.Review.PENDING,
            review_reason="",
        )
        old.refresh_from_db()
        revise(old, user, QARevision.Kind.WRITTEN)
    QAPair.objects.filter(pk__in=[pair.pk for pair in existing.values()]).delete()


def revise(pair: QAPair, author, kind: str) -> None:
    QARevision.objects.create(
        pair=pair,
        version=pair.version,
        kind=kind,
        question=pair.question,
        answer=pair.answer,
        evidence=pair.evidence,
        author=author,
    )


# --- reviewing ----------------------------------------------------------------------------------

REVIEW_ACTIONS = ("accept", "fix", "reject")


def review(
    pair: QAPair,
    reviewer,
    *,
    version: int,
    action: str,
    question: str = "",
    answer: str = "",
    evidence: Any = None,
    reason: str = "",
) -> QAPair:
    """Accept, fix (a new version, the old one kept) or reject a pair (its task back to its annotator).

    Refused names a bad field; queue.Stale when the pair changed since `version` was read.
    """
    if action not in REVIEW_ACTIONS:
        raise Refused([problem(None, "action", "action", gettext("choose accept, fix or reject"))])
    try:
        reason = inputs.text(reason, "reason", max_length=REASON_LIMIT)
    except inputs.InputRefused as error:
        raise Refused([problem(None, "reason", "reason", error.message)]) from None
    now = timezone.now()
    changes: dict[str, Any] = {"reviewed_by": reviewer, "reviewed_at": now, "version": F("version") + 1}
    if action == "accept":
        changes.update(review=QAPair.Review.ACCEPTED, review_reason="")
    elif action == "reject":
        if not reason:
            raise Refused([problem(None, "reason", "reason", gettext("say why the pair is rejected"))])
        changes.update(review=QAPair.Review.REJECTED, review_reason=reason)
    else:
        fixed = fix_content(pair, question=question, answer=answer, evidence=evidence)
        changes.update(review=QAPair.Review.FIXED, review_reason=reason, **fixed)
    with transaction.atomic():
        updated = QAPair.objects.filter(
            pk=pair.pk, version=version, assignment__status=Assignment.Status.SUBMITTED
        ).update(**changes)
        if not updated:
            current = QAPair.objects.select_related("reviewed_by", "assignment").get(pk=pair.pk)
            raise queue.Stale(current.version, review_state(current))
        pair.refresh_from_db()
        if action == "fix":
            revise(pair, reviewer, QARevision.Kind.FIXED)
        if action == "reject":
            assignment = pair.assignment
            reasons = list(
                assignment.pairs.filter(review=QAPair.Review.REJECTED).values_list("index", "review_reason")
            )
            Assignment.objects.filter(pk=assignment.pk, status=Assignment.Status.SUBMITTED).update(
                status=Assignment.Status.RETURNED,
                return_reason="\n".join(f"{index + 1}: {text}" for index, text in reasons),
                version=F("version") + 1,
            )
    return pair


def fix_content(pair: QAPair, *, question: Any, answer: Any, evidence: Any) -> dict[str, Any]:
    """A reviewer's fixed pair, checked by the same rules as an annotator's (against the image's others)."""
    assignment = pair.assignment
    item = assignment.task.item
    workflow = workflow_for(item.dataset.benchmark)
    others = list(assignment.pairs.exclude(pk=pair.pk).order_by("index"))
    fixed = read_pairs([{"question": question, "answer": answer, "evidence": evidence}])[0]
    if assignment.round > 1:
        fixed["question"] = pair.question
    width, height = image_size(image_file(item, workflow.image_role))
    candidates = [fixed] + [other.content() for other in others]
    found = [
        explain(p, workflow.messages)
        for p in workflow.check(candidates, width=width, height=height, fixed_questions=assignment.round > 1)
        if p.pair in (0, None)
    ]
    if found:
        raise Refused([{**p, "pair": None} for p in found])
    content = {
        "question": fixed["question"],
        "answer": fixed["answer"],
        "evidence": [round(float(v), 1) for v in fixed["evidence"]],
    }
    if content == pair.content():
        raise Refused(
            [problem(None, "pairs", "unchanged", gettext("nothing was changed: accept it instead"))]
        )
    return {**content, "language": workflow.language(content["question"])}


def review_state(pair: QAPair) -> dict[str, Any]:
    return {
        "version": pair.version,
        **pair.content(),
        "review": pair.review,
        "reviewed_by": pair.reviewed_by.username if pair.reviewed_by else "",
    }


# --- publishing ---------------------------------------------------------------------------------


class NothingToPublish(ValueError):
    pass


def publish(project: Project, *, created_by=None) -> tuple[Dataset, dict[str, int]]:
    """The accepted work as a new dataset of the benchmark's own format, with its images.

    An image is published when its first annotation is submitted and every pair of it is accepted
    or fixed; the rest is counted, not published. Second opinions on published images become one
    annotator submission per person on the new dataset, so its agreement report and `manage.py
    agreement` compare them, and they are scored like any answers.
    """
    workflow = workflow_for(project.dataset.benchmark)
    records, answers, left_out = published_records(project, workflow)
    if not records:
        raise NothingToPublish(gettext("no image has all its pairs accepted yet"))
    taken = set(
        Dataset.objects.filter(
            benchmark=project.dataset.benchmark, name=project.name, split="train"
        ).values_list("version", flat=True)
    )
    version = next(str(number) for number in range(1, len(taken) + 2) if str(number) not in taken)
    images = local_folder(media, project.dataset.media_folder)
    with transaction.atomic():
        dataset = import_dataset(
            benchmark=project.dataset.benchmark,
            data=json.dumps(records, ensure_ascii=False).encode(),
            name=project.name,
            split="train",
            version=version,
            source=f"annotation project {project.pk}",
            images_dir=images,
            images_label=str(project.dataset),
            created_by=created_by,
        )
        Project.objects.filter(pk=project.pk).update(published=dataset)
        store_opinions(dataset, answers, created_by=created_by)
    return dataset, {
        "images": len(records),
        "left_out": left_out,
        "pairs": sum(len(r["annotation"]) for r in records),
    }


Answers = dict[tuple[str, str], dict[tuple[int, int], dict]]


def published_records(project: Project, workflow) -> tuple[list[dict], Answers, int]:
    """(records, answers by (person, role) by (record, pair), images left out)."""
    done = QAPair.Review.ACCEPTED, QAPair.Review.FIXED
    firsts = (
        Assignment.objects.filter(task__project=project, round=1, status=Assignment.Status.SUBMITTED)
        .select_related("task__item", "annotator")
        .prefetch_related("pairs__second_opinions__assignment__annotator")
        .order_by("task__position")
    )
    records: list[dict] = []
    answers: Answers = {}
    left_out = Task.objects.filter(project=project).count()
    for assignment in firsts:
        pairs = list(assignment.pairs.all())
        if not pairs or any(pair.review not in done for pair in pairs):
            continue
        item = assignment.task.item
        record_index = len(records)
        records.append(
            workflow.record(
                item.external_id, item.media[workflow.image_role], [pair.content() for pair in pairs]
            )
        )
        for part, pair in enumerate(pairs):
            for opinion in pair.second_opinions.all():
                if opinion.assignment.status != Assignment.Status.SUBMITTED:
                    continue
                second = (opinion.assignment.annotator.username, "second opinion")
                answers.setdefault(second, {})[(record_index, part)] = {
                    "answer": opinion.answer,
                    "evidence": opinion.evidence,
                }
                answers.setdefault((assignment.annotator.username, "first annotation"), {})[
                    (record_index, part)
                ] = {
                    "answer": pair.answer,
                    "evidence": pair.evidence,
                }
    return records, answers, left_out - len(records)


def store_opinions(dataset: Dataset, answers: Answers, *, created_by=None) -> None:
    """Each person's answers on doubly annotated images as an annotator submission on `dataset`."""
    from evaluation.models import Submission
    from evaluation.services import submit_predictions

    items = list(dataset.items.order_by("position").values_list("payload", flat=True))
    for (person, role), by_unit in sorted(answers.items()):
        rows = [
            {"question_id": items[record]["question_ids"][part], **answer}
            for (record, part), answer in sorted(by_unit.items())
        ]
        submit_predictions(
            dataset=dataset,
            name=f"{person} ({role})",
            data=json.dumps(rows, ensure_ascii=False).encode(),
            producer=Submission.Producer.ANNOTATOR,
            origin=Submission.Origin.ANNOTATION,
            source=f"annotation project: {role}s",
            created_by=created_by,
        )
