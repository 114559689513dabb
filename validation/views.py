"""Validation pages: the validator's queue and verdict page, the researcher's plans and reports.

The verdict page talks JSON to the endpoints below, as the annotation page does (save a draft,
heartbeat, submit, skip; 409 for a stale version or a lost lease); the queue is the annotation
queue's. Taking a task is a POST: opening a page never takes work from the pool.
"""

from __future__ import annotations

import csv
import io
import json

from django.contrib import messages
from django.contrib.auth.decorators import login_required
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
from annotation import permissions, queue
from annotation.endpoints import (
    beat,
    lease_answer,
    queue_error,
    read_json,
    read_reason,
    read_version,
    refused,
)
from annotation.models import Assignment, Project
from annotation.services import Refused, problem
from benchmarks.models import Item
from validation import plots, selectors, services
from validation.checks import VerdictRefused, check_for
from validation.forms import PlanForm
from validation.models import Plan

SHORTCUTS = (
    ("↑ / ↓", gettext_lazy("move between questions")),
    ("y / n", gettext_lazy("answer the selected yes/no question")),
    ("1–5", gettext_lazy("rate the selected question")),
    ("← / →", gettext_lazy("step through the program (its output objects are drawn)")),
    ("w", gettext_lazy("mark the selected step as the wrong one (again: no step is wrong)")),
    ("c", gettext_lazy("write a comment")),
    ("Ctrl+Enter", gettext_lazy("submit and go to the next item")),
    ("s", gettext_lazy("skip this item (with a reason)")),
)


#: The largest draft a save takes, in bytes (a verdict's answers are a few hundred).
DRAFT_LIMIT = 20_000


def verdict_refused(error: VerdictRefused) -> JsonResponse:
    return refused(Refused([problem(None, error.field, "verdict", error.message)]))


# --- validators ---------------------------------------------------------------------------------


@login_required
def my_plans(request):
    plans = [
        {"plan": plan, **selectors.validator_summary(plan, request.user)}
        for plan in selectors.plans_for_validator(request.user)
    ]
    return render(request, "validation/my_plans.html", {"plans": plans})


def own_plan(request, pk: int) -> Plan:
    return get_object_or_404(selectors.plans_for_validator(request.user), pk=pk)


def own_assignment(request, pk: int) -> Assignment:
    return permissions.worker_assignment(request.user, pk, Project.Kind.VALIDATION)


def task_data(assignment: Assignment) -> dict:
    """What the verdict page needs: the item as the check draws it, the questions, the draft."""
    item = assignment.task.item
    check = check_for(item.dataset.benchmark)
    project = assignment.task.project
    return {
        "assignment": assignment.pk,
        "version": assignment.version,
        "round": assignment.round,
        "item": item.external_id,
        "view": check.view(item),
        "questions": [
            {
                "name": question.name,
                "label": str(question.label),
                "kind": question.kind,
                "help": str(question.help),
                "scale": question.scale,
                "required": question.required,
            }
            for question in check.questions
        ],
        "draft": (assignment.draft or {}).get("answers") or {},
        "heartbeat_s": max(5, min(60, project.lease_seconds // 4)),
        "urls": {
            name: reverse(f"validation:{name}", args=[assignment.pk])
            for name in ("save", "heartbeat", "submit", "skip")
        }
        | {"queue": reverse("validation:work", args=[assignment.task.project.validation_plan.pk])},
    }


@login_required
def work(request, pk: int):
    plan = own_plan(request, pk)
    held = queue.in_hand(plan.project, request.user, timezone.now())
    if held is not None and held.status != Assignment.Status.LEASED:
        held = None  # validation work is never returned; were it, taking it is a POST
    check = check_for(plan.dataset.benchmark)
    context = {
        "plan": plan,
        "check": check,
        "task": task_data(held) if held else None,
        "shortcuts": SHORTCUTS,
        "summary": selectors.validator_summary(plan, request.user),
    }
    return render(request, "validation/work.html", context)


@login_required
@require_POST
def next_task(request, pk: int):
    plan = own_plan(request, pk)
    try:
        taken = queue.claim(plan.project, request.user)
    except queue.NotMember:
        raise PermissionDenied(_("you are not a validator of this plan")) from None
    if taken is None:
        messages.info(request, _("Nothing is left for you to check in this plan."))
    return redirect("validation:work", pk=plan.pk)


@login_required
@require_POST
def save(request, pk: int):
    assignment = own_assignment(request, pk)
    try:
        body = read_json(request, max_bytes=DRAFT_LIMIT)
        version = read_version(body)
        answers = body.get("answers")
        if not isinstance(answers, dict):
            raise Refused([problem(None, "answers", "json", _("expected the answers as an object"))])
        new_version, until = queue.save_draft(assignment, request.user, version, {"answers": answers})
    except Refused as error:
        return refused(error)
    except queue.QueueError as error:
        return queue_error(error)
    return lease_answer(until, version=new_version)


def next_payload(request, plan: Plan) -> dict | None:
    try:
        following = queue.claim(plan.project, request.user)
    except queue.NotMember:
        return None
    return task_data(following) if following else None


@login_required
@require_POST
def heartbeat(request, pk: int):
    return beat(request, own_assignment(request, pk))


@login_required
@require_POST
def submit(request, pk: int):
    assignment = own_assignment(request, pk)
    try:
        body = read_json(request)
        verdict = services.submit_verdict(
            assignment, request.user, version=read_version(body), answers=body.get("answers")
        )
    except Refused as error:
        return refused(error)
    except VerdictRefused as error:
        return verdict_refused(error)
    except queue.QueueError as error:
        return queue_error(error)
    plan = assignment.task.project.validation_plan
    return JsonResponse({"error": verdict.error, "next": next_payload(request, plan)})


@login_required
@require_POST
def skip(request, pk: int):
    assignment = own_assignment(request, pk)
    try:
        body = read_json(request)
        reason = read_reason(body, _("say why you skip this item"))
        queue.skip(assignment, request.user, read_version(body), reason)
    except Refused as error:
        return refused(error)
    except queue.QueueError as error:
        return queue_error(error)
    return JsonResponse({"next": next_payload(request, assignment.task.project.validation_plan)})


# --- researchers ---------------------------------------------------------------------------------


def researcher_plan(request, pk: int) -> Plan:
    plan = selectors.plans_for_researcher(request.user).filter(pk=pk).first()
    if plan is None:
        if not request.user.has_perm("validation.view_estimates"):
            raise PermissionDenied
        raise Http404("no such plan")
    return plan


@login_required
def plan_list(request):
    if not request.user.has_perm("validation.view_estimates"):
        raise PermissionDenied
    plans = [
        {"plan": plan, "progress": selectors.progress(plan)}
        for plan in selectors.plans_for_researcher(request.user)
    ]
    return render(request, "validation/plan_list.html", {"plans": plans})


@login_required
def plan_new(request):
    if not request.user.has_perm("validation.add_plan"):
        raise PermissionDenied
    initial = {key: request.GET[key] for key in ("name", "dataset", "items", "source") if key in request.GET}
    form = PlanForm(request.POST or None, user=request.user, initial=initial)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            plan = services.create_plan(
                dataset=data["dataset"],
                name=data["name"],
                strata=data["strata"],
                allocation=data["allocation"],
                sample_size=data["sample_size"],
                margin=data["margin"],
                confidence=data["confidence"],
                seed=data["seed"],
                overlap=data["overlap"],
                validators_per_overlap=data["validators_per_overlap"],
                lease_seconds=data["lease_seconds"],
                validators=data["validators"],
                instructions=data["instructions"],
                created_by=request.user,
                items=data["items"],
                source=data["source"],
            )
        except services.PlanRefused as error:
            for field, message in error.problems.items():
                form.add_error(field if field in form.fields else None, message)
        else:
            messages.success(
                request,
                _("Plan “%(name)s”: %(n)s of %(N)s items drawn in %(s)s s.")
                % {
                    "name": plan.name,
                    "n": plan.draw["sample_size"],
                    "N": plan.draw["population_size"],
                    "s": plan.draw["draw_seconds"],
                },
            )
            return redirect("validation:plan", pk=plan.pk)
    chosen = form.cleaned_data.get("items") if form.is_bound and hasattr(form, "cleaned_data") else None
    if chosen is None and not form.is_bound and initial.get("items"):
        chosen = [part for part in initial["items"].split(",") if part.strip()]
    source = form["source"].value() or ""
    return render(request, "validation/plan_form.html", {"form": form, "chosen": chosen, "source": source})


#: Bootstrap resamples for the agreement intervals on the page (the command and exports use 1,000):
#: Cohen's kappa takes ~3 ms a resample per question, so 300 kept the page waiting ~3 s.
PAGE_RESAMPLES = 100


@login_required
def plan_detail(request, pk: int):
    plan = researcher_plan(request, pk)
    check = check_for(plan.dataset.benchmark)
    report = selectors.report(plan, resamples=PAGE_RESAMPLES)
    marked = plan.dataset.marks.filter(source=f"validation plan {plan.pk}").count()
    items = Item.objects.select_related("dataset", "scene").in_bulk(
        [entry["item_pk"] for entry in report.rejected_by_all]
    )
    rejected = [
        {
            **entry,
            "image": check.view(items[entry["item_pk"]]).get("image", ""),
            "summary": plan.dataset.spec.summary(
                items[entry["item_pk"]].payload, items[entry["item_pk"]].ground_truth
            ),
        }
        for entry in report.rejected_by_all
    ]
    context = {
        "agreement": agreement_table(report.agreement),
        "rejected": rejected,
        "plan": plan,
        "check": check,
        "criteria": {criterion.name: criterion.label for criterion in check.criteria()},
        "progress": selectors.progress(plan),
        "report": report,
        "parameters": selectors.parameters(plan),
        "marked": marked,
        "may_change": may_change(request.user, plan),
        "stratifiers": [check.stratifier(key).label for key in plan.strata if key],
    }
    return render(request, "validation/plan_detail.html", context)


#: Agreement statistics as the report's columns, in order: (statistic prefix, heading). The other
#: headings are the statistics' names.
AGREEMENT_COLUMNS = (
    ("percent_agreement", gettext_lazy("Agreement")),
    ("krippendorff_alpha", "Krippendorff's α"),
    ("fleiss_kappa", "Fleiss' κ"),
    ("cohens_kappa", "Cohen's κ"),
)


def agreement_table(statistics: list[dict]) -> dict:
    """One row per question, one column per statistic (empty where the overlap does not support it)."""
    rows: dict[str, dict] = {}
    for statistic in statistics:
        row = rows.setdefault(
            statistic["question"],
            {
                "label": statistic["label"],
                "items": statistic["items"],
                "raters": statistic["raters"],
                "cells": {},
            },
        )
        column = next(
            prefix for prefix, _heading in AGREEMENT_COLUMNS if statistic["statistic"].startswith(prefix)
        )
        row["cells"][column] = statistic
    return {
        "headings": [heading for _prefix, heading in AGREEMENT_COLUMNS],
        "rows": [
            {**row, "cells": [row["cells"].get(prefix) for prefix, _heading in AGREEMENT_COLUMNS]}
            for row in rows.values()
        ],
    }


@login_required
def plan_plot(request, pk: int):
    plan = researcher_plan(request, pk)
    report = selectors.report(plan, resamples=0)
    response = HttpResponse(
        plots.error_rates_plot(report.strata, report.error, plan.confidence), content_type="image/png"
    )
    response["Cache-Control"] = "private, max-age=30"
    return response


def export_rows(plan: Plan, report) -> list[dict]:
    rows = [
        {"kind": "parameter", "name": key, "value": value}
        for key, value in selectors.parameters(plan).items()
    ]
    if report.error:
        rows.append({"kind": "estimate", "name": "item error rate", **estimate_columns(report.error)})
    for name, estimate in report.criteria.items():
        if estimate:
            rows.append({"kind": "criterion", "name": name, **estimate_columns(estimate)})
    for stratum in report.strata:
        rows.append(
            {
                "kind": "stratum",
                "name": stratum["stratum"],
                "value": stratum["error_rate"],
                "low": stratum["low"],
                "high": stratum["high"],
                "population": stratum["population_size"],
                "sampled": stratum["sample_size"],
                "judged": stratum["judged"],
                "errors": stratum["errors"],
            }
        )
    for statistic in report.agreement:
        rows.append(
            {
                "kind": "agreement",
                "name": f"{statistic['question']}: {statistic['statistic']}",
                "value": statistic["value"],
                "low": statistic["low"],
                "high": statistic["high"],
                "judged": statistic["items"],
            }
        )
    return rows


def estimate_columns(estimate: dict) -> dict:
    return {
        "value": estimate["value"],
        "low": estimate["low"],
        "high": estimate["high"],
        "standard_error": estimate["standard_error"],
        "population": estimate["covered_population"],
        "judged": estimate["judged"],
        "errors": estimate["errors"],
    }


EXPORT_COLUMNS = (
    "kind",
    "name",
    "value",
    "low",
    "high",
    "standard_error",
    "population",
    "sampled",
    "judged",
    "errors",
)


@login_required
def plan_export(request, pk: int, extension: str):
    plan = researcher_plan(request, pk)
    report = selectors.report(plan)
    stem = f"validation-plan-{plan.pk}"
    if extension == "json":
        body = json.dumps(
            {"parameters": selectors.parameters(plan), "draw": plan.draw, "report": report.as_dict()},
            indent=2,
            ensure_ascii=False,
        )
        response = HttpResponse(body, content_type="application/json")
    elif extension == "csv":
        output = io.StringIO()
        writer = csv.DictWriter(output, fieldnames=EXPORT_COLUMNS, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(export_rows(plan, report))
        response = HttpResponse(output.getvalue(), content_type="text/csv")
    else:
        raise Http404("no such format")
    return inputs.attachment(response, f"{stem}.{extension}")


@login_required
@require_POST
def plan_mark(request, pk: int):
    """Mark (or unmark) the items every validator rejected as faulty on the dataset."""
    if not request.user.has_perm("validation.add_plan"):
        raise PermissionDenied
    plan = researcher_plan(request, pk)
    if problem := ownership_problem(
        request.user, plan, _("validation plan “%(name)s”") % {"name": plan.name}
    ):
        raise PermissionDenied(problem)
    if request.POST.get("action") == "unmark":
        count = services.unmark(plan)
        messages.success(request, _("%(n)s marks removed.") % {"n": count})
    else:
        report = selectors.report(plan, resamples=0)
        ids = [entry["item_pk"] for entry in report.rejected_by_all]
        count = services.mark_rejected(plan, ids, marked_by=request.user)
        messages.success(
            request,
            _("%(n)s items marked as rejected on “%(dataset)s”; its report can now leave them out.")
            % {"n": count, "dataset": plan.dataset},
        )
    return redirect("validation:plan", pk=plan.pk)
