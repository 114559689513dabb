"""Annotation pages: the annotator's queue and authoring page, the reviewer's page, the project pages.

The authoring page talks JSON to the endpoints below (the contract is in docs/architecture.md,
"Annotation"): save a draft, heartbeat, submit (the answer carries the next task), skip.
Claiming a task is a POST: opening a page never takes work from the pool.
"""

from __future__ import annotations

import hashlib
from typing import Any

import orjson
from django.contrib import messages
from django.contrib.auth.decorators import login_required, permission_required
from django.core.cache import cache
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_POST

from accounts import inputs
from accounts.permissions import may_change, ownership_problem
from annotation import exports, permissions, queue, selectors, services
from annotation.endpoints import (
    beat,
    lease_answer,
    queue_error,
    read_json,
    read_reason,
    read_version,
    refused,
)
from annotation.forms import ProjectForm
from annotation.models import Assignment, Project, QAPair
from annotation.workflows import workflow_for
from benchmarks.records import FormatError
from benchmarks.services import ImportRefused

#: The largest draft a save takes, in bytes (a draft of 50 pairs is about 10,000).
DRAFT_LIMIT = 200_000

#: Keys of the authoring page, listed on it (the page's script handles the same keys).
SHORTCUTS = (
    ("n", gettext_lazy("add a question-answer pair")),
    ("d", gettext_lazy("draw the evidence of the selected pair (four clicks)")),
    ("Esc", gettext_lazy("cancel the drawing in progress")),
    ("1–9", gettext_lazy("select a pair")),
    ("0 / + / −", gettext_lazy("fit the image / zoom in / zoom out (or the mouse wheel; drag to pan)")),
    ("Ctrl+Z / Ctrl+Shift+Z", gettext_lazy("undo / redo a corner")),
    ("Ctrl+S", gettext_lazy("save now (drafts also save by themselves)")),
    ("Ctrl+Enter", gettext_lazy("submit and go to the next image")),
    ("s", gettext_lazy("skip this image (with a reason)")),
)
#: The review states as the project page counts them (QAPair.Review's values, in words).
REVIEW_WORDS = {
    QAPair.Review.PENDING: gettext_lazy("pending"),
    QAPair.Review.ACCEPTED: gettext_lazy("accepted"),
    QAPair.Review.FIXED: gettext_lazy("fixed"),
    QAPair.Review.REJECTED: gettext_lazy("rejected"),
}
REVIEW_SHORTCUTS = (
    ("a", gettext_lazy("accept")),
    ("f", gettext_lazy("save your fix (text or corners) as a new version")),
    ("r", gettext_lazy("reject, with a reason that goes back to the annotator")),
    ("0 / + / −", gettext_lazy("fit / zoom")),
)


def work_context(user) -> dict[str, Any]:
    """An annotator's projects with their own counts, and a reviewer's with what waits."""
    projects = [
        {"project": project, **selectors.work_summary(project, user)}
        for project in selectors.projects_for_annotator(user)
    ]
    reviews = selectors.pending_reviews(user)
    reviewing = [
        {"project": project, "waiting": reviews.filter(assignment__task__project=project).count()}
        for project in selectors.projects_for_reviewer(user)
    ]
    return {"work_projects": projects, "reviewing": reviewing}


@login_required
def my_work(request):
    """Annotators' and reviewers' start page: their projects and what waits for them."""
    return render(request, "annotation/my_work.html", work_context(request.user))


def own_project(request, pk: int) -> Project:
    return get_object_or_404(selectors.projects_for_annotator(request.user), pk=pk)


def own_assignment(request, pk: int) -> Assignment:
    return permissions.worker_assignment(request.user, pk, Project.Kind.AUTHORING)


def task_data(request, assignment: Assignment) -> dict[str, Any]:
    """What the authoring page needs of a task (no other person's work, no ground truth)."""
    task, project = assignment.task, assignment.task.project
    item = task.item
    workflow = workflow_for(item.dataset.benchmark)
    width, height = services.image_size(services.image_file(item, workflow.image_role))
    fixed = (
        [{"source": pair.pk, "question": pair.question} for pair in services.first_round_pairs(task)]
        if assignment.round > 1
        else []
    )
    returned = (
        [
            {"index": index, "reason": reason}
            for index, reason in assignment.pairs.filter(review=QAPair.Review.REJECTED).values_list(
                "index", "review_reason"
            )
        ]
        if assignment.submitted_at
        else []
    )
    draft = assignment.draft or {}
    if not draft.get("pairs") and fixed:
        draft = {
            "pairs": [{**entry, "answer": "", "evidence": None, "ocr_confirmed": False} for entry in fixed]
        }
    name = item.media.get(workflow.image_role, "")
    return {
        "assignment": assignment.pk,
        "version": assignment.version,
        "round": assignment.round,
        "project": project.pk,
        "image_url": item.dataset.media_url(name) if name else "",
        "image_width": width,
        "image_height": height,
        "pairs_wanted": project.pairs_per_item,
        "fixed_questions": fixed,
        "draft": draft,
        "return_reason": assignment.return_reason,
        "returned_pairs": returned,
        "lease_seconds": project.lease_seconds,
        "heartbeat_s": max(5, min(60, project.lease_seconds // 4)),
        "urls": {
            name: reverse(f"annotation:{name}", args=[assignment.pk])
            for name in ("save", "heartbeat", "submit", "skip")
        }
        | {"queue": reverse("annotation:work", args=[project.pk])},
    }


@login_required
def work(request, pk: int):
    """The task this person holds in the project, or a button to take the next one (or to take
    back the one a reviewer returned: opening the page leases nothing)."""
    project = own_project(request, pk)
    held = queue.in_hand(project, request.user, timezone.now())
    leased = held is not None and held.status == Assignment.Status.LEASED
    context = {
        "project": project,
        "task": task_data(request, held) if leased else None,
        "returned": held if held is not None and not leased else None,
        "shortcuts": SHORTCUTS,
        "summary": selectors.work_summary(project, request.user),
    }
    return render(request, "annotation/author.html", context)


@login_required
@require_POST
def next_task(request, pk: int):
    """Take the next task on a lease (the one key press on the start page)."""
    project = own_project(request, pk)
    try:
        taken = queue.claim(project, request.user)
    except queue.NotMember:
        raise PermissionDenied(_("you are not on this project's team")) from None
    if taken is None:
        messages.info(request, _("No task is waiting for you in this project."))
    return redirect("annotation:work", pk=project.pk)


@login_required
@require_POST
def save(request, pk: int):
    assignment = own_assignment(request, pk)
    try:
        body = read_json(request, max_bytes=DRAFT_LIMIT)
        draft = body.get("draft")
        if not isinstance(draft, dict):
            raise services.Refused(
                [services.problem(None, "draft", "shape", _("expected the draft as an object"))]
            )
        version, until = queue.save_draft(assignment, request.user, read_version(body), draft)
    except services.Refused as error:
        return refused(error)
    except queue.QueueError as error:
        return queue_error(error)
    return lease_answer(until, version=version)


@login_required
@require_POST
def heartbeat(request, pk: int):
    return beat(request, own_assignment(request, pk))


def next_payload(request, project: Project) -> dict[str, Any] | None:
    """The person's next task, taken on a lease (after a submit or skip); None when none is left."""
    try:
        following = queue.claim(project, request.user)
    except queue.NotMember:
        return None
    return task_data(request, following) if following else None


@login_required
@require_POST
def submit(request, pk: int):
    assignment = own_assignment(request, pk)
    try:
        body = read_json(request)
        assignment = services.submit(
            assignment, request.user, version=read_version(body), pairs=body.get("pairs")
        )
    except services.Refused as error:
        return refused(error)
    except queue.QueueError as error:
        return queue_error(error)
    return JsonResponse(
        {"submitted": len(body.get("pairs") or ()), "next": next_payload(request, assignment.task.project)}
    )


@login_required
@require_POST
def skip(request, pk: int):
    assignment = own_assignment(request, pk)
    try:
        body = read_json(request)
        reason = read_reason(body, _("say why you skip this image"))
        queue.skip(assignment, request.user, read_version(body), reason)
    except services.Refused as error:
        return refused(error)
    except queue.QueueError as error:
        return queue_error(error)
    return JsonResponse({"next": next_payload(request, assignment.task.project)})


# --- reviewers ----------------------------------------------------------------------------------


def pair_data(pair: QAPair) -> dict[str, Any]:
    assignment = pair.assignment
    item = assignment.task.item
    workflow = workflow_for(item.dataset.benchmark)
    width, height = services.image_size(services.image_file(item, workflow.image_role))
    name = item.media.get(workflow.image_role, "")
    return {
        "pair": pair.pk,
        "version": pair.version,
        "question": pair.question,
        "answer": pair.answer,
        "evidence": pair.evidence,
        "language": pair.language,
        "review": pair.review,
        "image_url": item.dataset.media_url(name) if name else "",
        "image_width": width,
        "image_height": height,
        "annotator": assignment.annotator.username,
        "ocr_text": pair.ocr_text,
        "ocr_similarity": pair.ocr_similarity,
        "ocr_confirmed": pair.ocr_confirmed,
        "other_pairs": [other.content() for other in assignment.pairs.exclude(pk=pair.pk).order_by("index")],
        "history": [
            {
                "version": revision.version,
                "kind": revision.kind,
                "author": revision.author.username if revision.author else "",
                "question": revision.question,
                "answer": revision.answer,
                "evidence": revision.evidence,
                "created_at": revision.created_at.isoformat(),
            }
            for revision in pair.revisions.select_related("author")
        ],
        "urls": {
            "review": reverse("annotation:review-pair", args=[pair.pk]),
            "next": reverse("annotation:review-next", args=[assignment.task.project_id]),
        },
    }


def reviewable(request, pk: int) -> QAPair:
    return permissions.reviewable_pair(request.user, pk)


@login_required
def review_next(request, pk: int):
    """The oldest pair waiting for this reviewer in the project, or the start page when none is."""
    project = get_object_or_404(selectors.projects_for_reviewer(request.user), pk=pk)
    pair = selectors.pending_reviews(request.user).filter(assignment__task__project=project).first()
    if pair is None:
        messages.info(
            request, _("Nothing is waiting for review in “%(project)s”.") % {"project": project.name}
        )
        return redirect("annotation:my-work")
    return redirect("annotation:review-pair", pk=pair.pk)


@login_required
def review_pair(request, pk: int):
    pair = reviewable(request, pk)
    if request.method != "POST":
        return render(
            request,
            "annotation/review.html",
            {
                "pair": pair_data(pair),
                "project": pair.assignment.task.project,
                "shortcuts": REVIEW_SHORTCUTS,
                "reviewed": pair if pair.review != QAPair.Review.PENDING else None,
            },
        )
    try:
        body = read_json(request)
        services.review(
            pair,
            request.user,
            version=read_version(body),
            action=body.get("action"),
            question=body.get("question", ""),
            answer=body.get("answer", ""),
            evidence=body.get("evidence"),
            reason=body.get("reason"),
        )
    except services.Refused as error:
        return refused(error)
    except queue.Stale as error:
        return queue_error(error)
    pair.refresh_from_db()
    done = _("“%(question)s”: %(review)s.") % {"question": pair.question, "review": pair.get_review_display()}
    project = pair.assignment.task.project
    following = selectors.pending_reviews(request.user).filter(assignment__task__project=project).first()
    if following is not None:
        messages.success(request, done)  # shown on the next pair's page, which the script opens
    return JsonResponse(
        {"next": reverse("annotation:review-pair", args=[following.pk]) if following else None, "done": done}
    )


# --- researchers --------------------------------------------------------------------------------


@permission_required("annotation.view_progress", raise_exception=True)
def project_list(request):
    return render(
        request, "annotation/project_list.html", {"projects": selectors.projects_for_researcher(request.user)}
    )


@permission_required("annotation.add_project", raise_exception=True)
def project_new(request):
    form = ProjectForm(request.POST or None, user=request.user)
    if request.method == "POST" and form.is_valid():
        try:
            project = services.create_project(created_by=request.user, **form.cleaned_data)
        except services.ProjectRefused as error:
            for field, message in error.problems.items():
                form.add_error(field if field in form.fields else None, message)
        else:
            messages.success(
                request,
                _("Project “%(name)s” made with %(tasks)s images.")
                % {"name": project.name, "tasks": project.tasks.count()},
            )
            return redirect("annotation:project", pk=project.pk)
    return render(request, "annotation/project_form.html", {"form": form})


def researcher_project(request, pk: int) -> Project:
    return get_object_or_404(selectors.projects_for_researcher(request.user), pk=pk)


@permission_required("annotation.view_progress", raise_exception=True)
def project_detail(request, pk: int):
    project = researcher_project(request, pk)
    progress = selectors.progress(project)
    context = {
        "project": project,
        "progress": progress,
        "reviews": [(REVIEW_WORDS.get(status, status), n) for status, n in progress["reviews"].items()],
        "agreement": selectors.second_opinion_agreement(project),
        "may_change": may_change(request.user, project),
    }
    return render(request, "annotation/project_detail.html", context)


@permission_required("annotation.view_progress", raise_exception=True)
def project_plot(request, pk: int, name: str):
    project = researcher_project(request, pk)
    pairs = selectors.written_pairs(project)
    # Drawn once per set of pairs and kept: the first drawing in a process loads the tokeniser's
    # dictionary and matplotlib's fonts (about 2 s), which made the project page's first view slow.
    key = f"annotation:plot:{project.pk}:{name}:{hashlib.sha256(orjson.dumps(pairs)).hexdigest()}"
    png = cache.get(key)
    if png is None:
        png = workflow_for(project.dataset.benchmark).statistics_plot(name, pairs)
        if png is None:
            raise Http404("no such plot")
        cache.set(key, png, timeout=24 * 3600)
    response = HttpResponse(png, content_type="image/png")
    response["Cache-Control"] = "private, max-age=60"
    return response


@permission_required("annotation.view_progress", raise_exception=True)
def project_export(request, pk: int, layout: str):
    project = researcher_project(request, pk)
    try:
        name, content_type, body = exports.export(project, layout)
    except exports.UnknownLayout:
        raise Http404("no such layout") from None
    return inputs.attachment(HttpResponse(body, content_type=content_type), name)


@permission_required("annotation.add_project", raise_exception=True)
@require_POST
def project_publish(request, pk: int):
    project = researcher_project(request, pk)
    if problem := ownership_problem(request.user, project, _("project “%(name)s”") % {"name": project.name}):
        raise PermissionDenied(problem)
    try:
        dataset, counts = services.publish(project, created_by=request.user)
    except (services.NothingToPublish, ImportRefused, FormatError) as error:
        reason = "; ".join(error.summary()[:5]) if isinstance(error, FormatError) else str(error)
        messages.error(request, _("Nothing was published: %(reason)s") % {"reason": reason})
        return redirect("annotation:project", pk=project.pk)
    messages.success(
        request,
        _(
            "Published %(images)s images (%(pairs)s pairs) as “%(dataset)s”; %(left)s images are not ready yet."
        )
        % {
            "images": counts["images"],
            "pairs": counts["pairs"],
            "dataset": dataset,
            "left": counts["left_out"],
        },
    )
    return redirect("benchmarks:dataset-detail", pk=dataset.pk)
