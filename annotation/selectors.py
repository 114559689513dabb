"""Annotation reads: who works on what, what waits for review, progress and agreement."""

from __future__ import annotations

import statistics
from collections import defaultdict
from typing import Any

from django.db.models import Count, Q, QuerySet

from accounts.roles import ADMIN, user_roles
from annotation.models import Assignment, Project, QAPair, Task


def projects_for_annotator(user: Any) -> QuerySet[Project]:
    return Project.objects.filter(annotators=user, kind=Project.Kind.AUTHORING).select_related("dataset")


def projects_for_reviewer(user: Any) -> QuerySet[Project]:
    return Project.objects.filter(reviewers=user, kind=Project.Kind.AUTHORING).select_related("dataset")


def projects_for_researcher(user: Any) -> QuerySet[Project]:
    """Projects a researcher may see: all, for those who may see progress (researchers, admins)."""
    if not user.has_perm("annotation.view_progress"):
        return Project.objects.none()
    return Project.objects.filter(kind=Project.Kind.AUTHORING).select_related("dataset", "created_by")


def may_manage(user: Any, project: Project) -> bool:
    return user.has_perm("annotation.view_progress") or ADMIN in user_roles(user)


def work_summary(project: Project, user: Any) -> dict[str, Any]:
    """What an annotator sees of a project: work in hand, returned, done, and whether any is left."""
    mine = Assignment.objects.filter(task__project=project, annotator=user)
    counts = dict(mine.values_list("status").annotate(n=Count("pk")).values_list("status", "n"))
    return {
        "held": counts.get(Assignment.Status.LEASED, 0),
        "returned": counts.get(Assignment.Status.RETURNED, 0),
        "submitted": counts.get(Assignment.Status.SUBMITTED, 0),
        "skipped": counts.get(Assignment.Status.SKIPPED, 0),
    }


def pending_reviews(user: Any) -> QuerySet[QAPair]:
    """First-annotation pairs waiting for review in the projects `user` reviews, oldest first.

    A reviewer never reviews their own pairs.
    """
    return (
        QAPair.objects.filter(
            review=QAPair.Review.PENDING,
            assignment__round=1,
            assignment__status=Assignment.Status.SUBMITTED,
            assignment__task__project__reviewers=user,
        )
        .exclude(assignment__annotator=user)
        .select_related("assignment__task__item__dataset", "assignment__annotator")
        .order_by("assignment__submitted_at", "assignment_id", "index")
    )


def files_shown_to(user: Any, dataset_id: int) -> set[str]:
    """Names of a dataset's media files an annotator or reviewer is working on.

    An annotator: the images of tasks they hold (leased or returned to them) or submitted; a
    reviewer: the images of the projects they review.
    """
    if not user.is_authenticated:
        return set()
    held = Task.objects.filter(
        item__dataset_id=dataset_id,
        assignments__annotator=user,
        assignments__status__in=Assignment.LIVE,
    )
    reviewed = Task.objects.filter(item__dataset_id=dataset_id, project__reviewers=user)
    names: set[str] = set()
    for media in (held | reviewed).values_list("item__media", flat=True).distinct():
        names.update(str(name).rsplit("/", 1)[-1] for name in (media or {}).values())
    return names


def progress(project: Project) -> dict[str, Any]:
    """Counts over the project and per annotator, with acceptance rates and server-clock times."""
    tasks = project.tasks.aggregate(total=Count("pk"), doubled=Count("pk", filter=Q(opinions=2)))
    assignments = Assignment.objects.filter(task__project=project)
    by_status = dict(assignments.values_list("status").annotate(n=Count("pk")).values_list("status", "n"))
    first_done = assignments.filter(round=1, status=Assignment.Status.SUBMITTED).count()
    second_done = assignments.filter(round=2, status=Assignment.Status.SUBMITTED).count()
    pairs = QAPair.objects.filter(assignment__task__project=project, assignment__round=1)
    reviews = dict(pairs.values_list("review").annotate(n=Count("pk")).values_list("review", "n"))
    people = []
    rows = (
        assignments.values("annotator__username")
        .annotate(
            submitted=Count("pk", filter=Q(status=Assignment.Status.SUBMITTED)),
            skipped=Count("pk", filter=Q(status=Assignment.Status.SKIPPED)),
            expired=Count("pk", filter=Q(status=Assignment.Status.EXPIRED)),
            returned=Count("pk", filter=Q(status=Assignment.Status.RETURNED)),
            held=Count("pk", filter=Q(status=Assignment.Status.LEASED)),
        )
        .order_by("annotator__username")
    )
    # Two grouped reads for everyone, not two per annotator.
    reviewed: dict[str, dict[str, int]] = defaultdict(dict)
    for name, review, n in (
        pairs.values_list("assignment__annotator__username", "review")
        .annotate(n=Count("pk"))
        .values_list("assignment__annotator__username", "review", "n")
    ):
        reviewed[name][review] = n
    seconds_per_pair: dict[str, list[float]] = defaultdict(list)
    for name, seconds, n in (
        assignments.filter(status=Assignment.Status.SUBMITTED)
        .annotate(n=Count("pairs"))
        .values_list("annotator__username", "work_seconds", "n")
    ):
        if n:
            seconds_per_pair[name].append(seconds / n)
    for row in rows:
        name = row["annotator__username"]
        counts = reviewed[name]
        decided = sum(
            counts.get(k, 0) for k in (QAPair.Review.ACCEPTED, QAPair.Review.FIXED, QAPair.Review.REJECTED)
        )
        accepted = counts.get(QAPair.Review.ACCEPTED, 0) + counts.get(QAPair.Review.FIXED, 0)
        per_pair = seconds_per_pair[name]
        people.append(
            {
                "annotator": name,
                **{key: row[key] for key in ("submitted", "skipped", "expired", "returned", "held")},
                "pairs": sum(counts.values()),
                "accepted": accepted,
                "fixed": counts.get(QAPair.Review.FIXED, 0),
                "rejected": counts.get(QAPair.Review.REJECTED, 0),
                "acceptance_rate": accepted / decided if decided else None,
                "median_seconds_per_pair": statistics.median(per_pair) if per_pair else None,
            }
        )
    return {
        "tasks": tasks["total"],
        "doubled": tasks["doubled"],
        "first_done": first_done,
        "second_done": second_done,
        "by_status": by_status,
        "reviews": reviews,
        "pairs": sum(reviews.values()),
        "people": people,
    }


def written_pairs(project: Project) -> list[dict[str, Any]]:
    """The first annotations' pairs as they stand now (question, answer), for the data statistics."""
    return list(
        QAPair.objects.filter(
            assignment__task__project=project,
            assignment__round=1,
            assignment__status__in=(Assignment.Status.SUBMITTED, Assignment.Status.RETURNED),
        ).values("question", "answer")
    )


def second_opinion_agreement(project: Project, *, resamples: int = 1000, seed: int = 0) -> dict[str, Any]:
    """How far second opinions agree with first annotations, pair by pair and in groups.

    Per pair: the answers' text similarity (1 - normalised Levenshtein, case-folded) and the IoU
    of the two evidence quadrilaterals. Per group (all, each language, each pair of annotators):
    their means with 95% bootstrap intervals over the questions, from evaluation/agreement.py.
    """
    from evaluation import agreement

    region = project.dataset.spec.answer_region  # the evidence as polygon points

    seconds = QAPair.objects.filter(
        assignment__task__project=project,
        assignment__round=2,
        assignment__status=Assignment.Status.SUBMITTED,
        source__isnull=False,
    ).select_related("source__assignment__annotator", "assignment__annotator", "assignment__task__item")
    rows = []
    for second in seconds:
        first = second.source
        names = (first.assignment.annotator.username, second.assignment.annotator.username)
        text = agreement.text_similarity(first.answer, second.answer, normalise=True)
        try:
            iou = agreement.polygon_iou(region(first.content()), region(second.content()))
        except (ValueError, TypeError):
            iou = None
        rows.append(
            {
                "unit": second.pk,
                "item": second.assignment.task.item.external_id,
                "question": first.question,
                "language": first.language,
                "first": names[0],
                "second": names[1],
                "first_answer": first.answer,
                "second_answer": second.answer,
                "first_evidence": first.evidence,
                "second_evidence": second.evidence,
                "text_similarity": text,
                "iou": iou,
            }
        )
    groups: list[tuple[str, list[dict[str, Any]]]] = [("all", rows)]
    for code, label in (("en", "English"), ("ch", "Chinese")):
        groups.append((label, [row for row in rows if row["language"] == code]))
    for pair in sorted({tuple(sorted((row["first"], row["second"]))) for row in rows}):
        groups.append(
            (" & ".join(pair), [row for row in rows if tuple(sorted((row["first"], row["second"]))) == pair])
        )
    summary = []
    for label, members in groups:
        if not members:
            continue
        texts = {
            row["unit"]: {"first": row["first_answer"], "second": row["second_answer"]} for row in members
        }
        quads = {
            row["unit"]: {
                "first": region({"evidence": row["first_evidence"]}),
                "second": region({"evidence": row["second_evidence"]}),
            }
            for row in members
        }
        options = {"resamples": resamples, "seed": seed}
        summary.append(
            {
                "group": label,
                "questions": len(members),
                "text": agreement.pairwise_text_similarity(texts, normalise=True, **options),
                "iou": agreement.pairwise_polygon_iou(quads, **options),
                # Similarity 1 is the same text after case folding and spacing.
                "exact": sum(row["text_similarity"] == 1.0 for row in members) / len(members),
            }
        )
    return {"rows": rows, "groups": summary}
