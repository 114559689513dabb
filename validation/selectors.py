"""Validation reads: who validates what, a plan's progress, its verdicts as report rows, its report."""

from __future__ import annotations

from typing import Any

from django.db.models import Count, Q, QuerySet, Sum

from accounts.roles import ADMIN, user_roles
from annotation.models import Assignment, Task
from validation import estimates
from validation.checks import check_for
from validation.models import Plan, Verdict


def plans_for_validator(user: Any) -> QuerySet[Plan]:
    return Plan.objects.filter(project__annotators=user).select_related("dataset", "project")


def plans_for_researcher(user: Any) -> QuerySet[Plan]:
    if not (user.has_perm("validation.view_estimates") or ADMIN in user_roles(user)):
        return Plan.objects.none()
    return Plan.objects.select_related("dataset", "project", "created_by")


def validator_summary(plan: Plan, user: Any) -> dict[str, int]:
    mine = Assignment.objects.filter(task__project=plan.project, annotator=user)
    counts = dict(mine.values_list("status").annotate(n=Count("pk")).values_list("status", "n"))
    return {
        "held": counts.get(Assignment.Status.LEASED, 0),
        "submitted": counts.get(Assignment.Status.SUBMITTED, 0),
        "skipped": counts.get(Assignment.Status.SKIPPED, 0),
    }


def progress(plan: Plan) -> dict[str, Any]:
    wanted = Task.objects.filter(project=plan.project).aggregate(items=Count("pk"), opinions=Sum("opinions"))
    verdicts = Verdict.objects.filter(sampled__plan=plan)
    judged = verdicts.filter(round=1).count()
    per_validator = list(
        verdicts.values("validator__username")
        .annotate(n=Count("pk"), errors=Count("pk", filter=Q(error=True)))
        .order_by("-n", "validator__username")
    )
    held = Assignment.objects.filter(task__project=plan.project, status=Assignment.Status.LEASED).count()
    return {
        "items": wanted["items"],
        "judged": judged,
        "verdicts_wanted": wanted["opinions"] or 0,
        "verdicts": verdicts.count(),
        "held": held,
        "per_validator": per_validator,
        "percent": round(100 * judged / wanted["items"]) if wanted["items"] else 0,
    }


def verdict_rows(plan: Plan) -> list[estimates.VerdictRow]:
    check = check_for(plan.dataset.benchmark)
    verdicts = (
        Verdict.objects.filter(sampled__plan=plan)
        .select_related("sampled__item", "validator")
        .order_by("sampled__task__position", "round")
    )
    step_questions = [question.name for question in check.questions if question.kind == "step"]
    rows = []
    for verdict in verdicts.iterator(chunk_size=2000):
        item = verdict.sampled.item
        step = next(
            (verdict.answers.get(name) for name in step_questions if verdict.answers.get(name) is not None),
            None,
        )
        rows.append(
            estimates.VerdictRow(
                item=item.external_id,
                item_pk=item.pk,
                stratum=verdict.sampled.stratum,
                round=verdict.round,
                validator=verdict.validator.username,
                answers=verdict.answers,
                error=verdict.error,
                failures=check.failures(verdict.answers),
                failing_step=check.step_kind(item, step) if step is not None else None,
                template=check.template_of(item),
            )
        )
    return rows


def report(plan: Plan, *, resamples: int = 1000, seed: int = 0) -> estimates.Report:
    check = check_for(plan.dataset.benchmark)
    # Labels as plain strings in the reader's language: the report is also exported as JSON.
    return estimates.build_report(
        draw=plan.draw,
        rows=verdict_rows(plan),
        criteria=[(criterion.name, str(criterion.label)) for criterion in check.criteria()],
        questions=[
            estimates.AgreementQuestion(
                question.name, str(question.label), "ordinal" if question.kind == "scale" else "nominal"
            )
            for question in check.agreement_questions()
        ],
        confidence=plan.confidence,
        resamples=resamples,
        seed=seed,
    )


def parameters(plan: Plan) -> dict[str, Any]:
    """The plan's choices, as exports record them."""
    return {
        "plan": plan.name,
        "plan_id": plan.pk,
        "dataset": str(plan.dataset),
        "dataset_id": plan.dataset_id,
        "benchmark": plan.dataset.benchmark,
        "strata": list(plan.strata),
        "allocation": plan.allocation,
        "requested_size": plan.requested_size,
        "margin": plan.margin,
        "confidence": plan.confidence,
        "seed": plan.seed,
        "overlap": plan.overlap,
        "validators_per_overlap": plan.validators_per_overlap,
        "population_size": plan.draw.get("population_size"),
        "sample_size": plan.draw.get("sample_size"),
        "created_at": plan.created_at.isoformat(),
    }


def files_shown_to(user: Any, dataset_id: int) -> set[str]:
    """Names of a dataset's files a validator is shown: the images of items they hold or judged."""
    if not user.is_authenticated:
        return set()
    rows = Task.objects.filter(
        item__dataset_id=dataset_id,
        project__validation_plan__isnull=False,
        assignments__annotator=user,
        assignments__status__in=Assignment.LIVE,
    ).values_list("item__scene__image", "item__media")
    names: set[str] = set()
    for image, media in rows.distinct():
        if image:
            names.add(str(image).rsplit("/", 1)[-1])
        names.update(str(name).rsplit("/", 1)[-1] for name in (media or {}).values())
    return names
