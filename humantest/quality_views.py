"""The plan's quality control page: its exclusion rules (versioned), who each version keeps and
excludes and why, results with and without exclusions, and accuracy against time per tester."""

from __future__ import annotations

import csv
import io

from django.contrib import messages
from django.contrib.auth.decorators import permission_required
from django.core.exceptions import PermissionDenied
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.safestring import mark_safe
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_http_methods

from accounts import inputs
from accounts.permissions import may_change, ownership_problem
from evaluation.plots import accuracy_against_time
from humantest import exclusions, selectors
from humantest.models import TestPlan, Trial
from humantest.rescoring import schedule_pooled
from humantest.trials import trial_for

#: A tester's status under the rules, as the page shows it (the CSV keeps the English word).
STATUS_WORDS = {
    "kept": gettext_lazy("kept"),
    "excluded": gettext_lazy("excluded"),
    "screened out": gettext_lazy("screened out"),
    "counted": gettext_lazy("counted"),
}


def shown_status(status: str) -> str:
    return str(STATUS_WORDS.get(status, status))


def visible_plan(request, pk: int) -> TestPlan:
    return get_object_or_404(selectors.plans_for_researcher(request.user).select_related("dataset"), pk=pk)


def with_and_without(plan: TestPlan, quality: dict) -> dict:
    """The pooled figures of every measured tester and of the kept ones (current rules)."""
    trial_type = trial_for(plan.dataset.benchmark)
    outcomes = quality["current"]["outcomes"]
    measured = {outcome.facts.session for outcome in outcomes if outcome.status != "screened out"}
    kept = {outcome.facts.session for outcome in outcomes if outcome.status == "kept"}
    trials = list(
        Trial.objects.filter(session_id__in=measured, phase=Trial.Phase.TEST, status__in=exclusions.FINISHED)
    )
    return {
        "all": selectors.tester_result("All measured testers", trials, trial_type),
        "kept": selectors.tester_result(
            "Kept testers", [trial for trial in trials if trial.session_id in kept], trial_type
        ),
    }


def tester_rows(plan: TestPlan, quality: dict) -> list[dict]:
    """One row per measured (or screened-out) tester: facts, accuracy with its interval, and what
    each rule version made of them (newest first)."""
    from evaluation.sampling import wilson_interval

    by_version = [
        (version["version"], {outcome.facts.session: outcome for outcome in version["outcomes"]})
        for version in quality["versions"]
    ]
    current = {outcome.facts.session: outcome for outcome in quality["current"]["outcomes"]}
    rows = []
    for facts in quality["facts"]:
        low, high = wilson_interval(facts.correct, facts.trials) if facts.trials else (None, None)
        outcome = current[facts.session]
        status = outcome.status if quality["has_rules"] or outcome.status != "kept" else "counted"
        rows.append(
            {
                "facts": facts,
                "low": low,
                "high": high,
                "status": status,
                "shown_status": shown_status(status),
                "reasons": [_(exclusions.BY_NAME[name].label) for name in outcome.reasons],
                "reason_names": list(outcome.reasons),
                "versions": [
                    (number, shown_status(outcomes[facts.session].status), outcomes[facts.session].reasons)
                    for number, outcomes in by_version
                ],
            }
        )
    return rows


def plot_svg(plan: TestPlan, quality: dict) -> str:
    rules = quality["current"]["rules"]
    points = [
        (outcome.facts.median_s, outcome.facts.accuracy, outcome.status)
        for outcome in quality["current"]["outcomes"]
        if outcome.status != "screened out" and outcome.facts.median_s is not None and outcome.facts.trials
    ]
    labels = {
        "x": _("median seconds per trial"),
        "y": _("accuracy"),
        "kept": _("kept"),
        "excluded": _("excluded"),
    }
    return accuracy_against_time(points, fastest=rules.get("min_median_s"), labels=labels)


@permission_required("humantest.view_results", raise_exception=True)
@require_http_methods(["GET", "POST"])
def quality_page(request, pk: int):
    plan = visible_plan(request, pk)
    if request.method == "POST":
        if problem := ownership_problem(request.user, plan, f"test plan “{plan.name}”"):
            raise PermissionDenied(problem)
        raw = {
            name: request.POST.get(name, "") for name in exclusions.RULE_NAMES if name != "exclude_unfinished"
        }
        raw["exclude_unfinished"] = "on" if request.POST.get("exclude_unfinished") else ""
        try:
            before = exclusions.current_rules(plan)
            rules = exclusions.save_rules(plan, raw, user=request.user)
        except exclusions.RulesRefused as refused:
            messages.error(
                request,
                _("Nothing changed: %(field)s: %(message)s.")
                % {"field": refused.field, "message": refused.message},
            )
            return redirect("humantest:quality", pk=plan.pk)
        if before is not None and rules.version != before.version:
            messages.success(
                request,
                _(
                    "Saved as version %(version)s: version %(before)s was fixed when the first tester "
                    "started, and its numbers stay below."
                )
                % {"version": rules.version, "before": before.version},
            )
        else:
            messages.success(
                request, _("Exclusion rules saved (version %(version)s).") % {"version": rules.version}
            )
        schedule_pooled(plan.pk)  # the pooled row counts the testers the new rules keep
        return redirect("humantest:quality", pk=plan.pk)
    quality = exclusions.plan_quality(plan)
    for version in [*quality["versions"], quality["current"]]:  # the rules in the reader's words
        version["described"] = exclusions.describe(version["rules"], translated=True)
    current_rules = exclusions.current_rules(plan)
    return render(
        request,
        "humantest/quality.html",
        {
            "plan": plan,
            "quality": quality,
            "rules": exclusions.rules_dict(current_rules),
            "rules_object": current_rules,
            "rows": tester_rows(plan, quality),
            "results": with_and_without(plan, quality),
            "plot": mark_safe(plot_svg(plan, quality)),  # noqa: S308 (our own SVG, text drawn literally)
            "may_change": may_change(request.user, plan),
            "rule_list": exclusions.RULES,
        },
    )


EXPORT_FIELDS = [
    "tester", "status", "reasons", "rules_version", "trials", "correct", "accuracy", "accuracy_low",
    "accuracy_high", "catch_trials", "catch_failed", "median_seconds", "hidden_seconds", "focus_losses",
    "finished",
]  # fmt: skip


def export_rows(plan: TestPlan) -> list[dict]:
    quality = exclusions.plan_quality(plan)
    version = quality["versions"][0]["version"] if quality["versions"] else ""
    rows = []
    for row in tester_rows(plan, quality):
        facts = row["facts"]
        rows.append(
            {
                "tester": facts.tester,
                "status": row["status"],
                "reasons": ";".join(row["reason_names"]),
                "rules_version": version,
                "trials": facts.trials,
                "correct": facts.correct,
                "accuracy": facts.accuracy,
                "accuracy_low": row["low"],
                "accuracy_high": row["high"],
                "catch_trials": facts.catch_total,
                "catch_failed": facts.catch_failed,
                "median_seconds": facts.median_s,
                "hidden_seconds": facts.hidden_s,
                "focus_losses": facts.focus_losses,
                "finished": facts.finished,
            }
        )
    return rows


@permission_required("humantest.view_results", raise_exception=True)
def quality_export(request, pk: int):
    plan = visible_plan(request, pk)
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=EXPORT_FIELDS)
    writer.writeheader()
    writer.writerows(export_rows(plan))
    response = HttpResponse(buffer.getvalue(), content_type="text/csv; charset=utf-8")
    return inputs.attachment(response, f"{plan.name} testers.csv")


@permission_required("humantest.view_results", raise_exception=True)
def quality_plot(request, pk: int):
    plan = visible_plan(request, pk)
    svg = plot_svg(plan, exclusions.plan_quality(plan))
    return HttpResponse(svg, content_type="image/svg+xml")
