"""Pages of the human-test app: testers' sessions and trials, researchers' plans and results.

Testers hold no permissions; every tester page checks that the session or trial is the
requesting user's own (403 otherwise). Researchers' pages need the humantest permissions.
"""

from __future__ import annotations

import csv
import io
import json
from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth.decorators import login_required, permission_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.templatetags.static import static
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django.views.decorators.http import require_http_methods, require_POST

from accounts import inputs
from accounts.permissions import may_change, ownership_problem
from humantest import answers, clock, qualification, selectors, sessions, studies, study_views
from humantest.drawing import PlanProblem
from humantest.forms import TestPlanForm
from humantest.models import Participant, TestPlan, TestSession, Trial
from humantest.plans import PlanRefused, create_test_plan, delete_test_plan
from humantest.rescoring import schedule_pooled
from humantest.scoring import unit_for
from humantest.trials import AnswerRefused, trial_for


def own_session(request, pk: int) -> TestSession:
    """The requesting person's own session: a participant's, or an invited tester's while they are
    still invited (a tester taken off a plan cannot go on)."""
    session = get_object_or_404(TestSession.objects.select_related("plan__dataset"), pk=pk)
    if session.tester_id != request.user.pk:
        raise PermissionDenied(_("this is another tester's session"))
    if (
        not Participant.objects.filter(session=session).exists()
        and not session.plan.testers.filter(pk=request.user.pk).exists()
    ):
        raise PermissionDenied(_("you are no longer invited to this test"))
    return session


# --- tester ----------------------------------------------------------------------------------------


@login_required
def my_tests(request):
    return render(
        request, "humantest/my_tests.html", {"entries": selectors.sessions_for_tester(request.user)}
    )


@login_required
@require_POST
def start(request, plan_pk: int):
    plan = get_object_or_404(TestPlan.objects.select_related("dataset"), pk=plan_pk)
    if not plan.testers.filter(pk=request.user.pk).exists():
        raise PermissionDenied(_("you are not invited to this test"))
    try:
        session = sessions.start_session(plan, request.user)
    except PlanProblem as problem:
        messages.error(request, _("This test cannot start: %(problem)s") % {"problem": problem})
        return redirect("humantest:my-tests")
    return redirect("humantest:session", pk=session.pk)


@login_required
def session_page(request, pk: int):
    session = own_session(request, pk)
    plan = session.plan
    participant = study_views.participant_of(request, session)
    if participant is not None:
        studies.seen(participant)
    context = {"session": session, "plan": plan, "participant": participant}
    if session.declined_at is not None:
        return study_views.ended_page(request, session, participant, declined=True)
    if participant is not None and participant.status == Participant.Status.SCREENED_OUT:
        return study_views.ended_page(request, session, participant)
    if session.status == TestSession.Status.SCREENED_OUT:
        context["standing"] = qualification.qualification(session)
        return render(request, "humantest/screened_out.html", context)
    if studies.needs_consent(session):
        study = studies.study_for(plan)
        context.update(study=study, consent=studies.consent_html(study))
        return render(request, "humantest/consent.html", context)
    if session.status in (TestSession.Status.PRACTICE, TestSession.Status.RUNNING):
        trial, expired = clock.serve_current_trial(session)
        for closed in expired:
            messages.warning(
                request, _("Trial %(n)s ran out of time while you were away.") % {"n": closed.position + 1}
            )
        if trial is not None:
            return trial_page(request, session, trial)
    if session.status == TestSession.Status.PRACTICE:
        context["standing"] = qualification.settle(session)
        if session.status == TestSession.Status.SCREENED_OUT:
            return redirect("humantest:session", pk=session.pk)  # shown the screen-out ending
        return render(request, "humantest/practice_done.html", context)
    if session.status == TestSession.Status.PAUSED:
        tests = session.trials.filter(phase__in=Trial.SEQUENCE)  # catch trials look like the others
        context["total"] = tests.count()
        context["done"] = tests.filter(status__in=selectors.FINISHED).count()
        return render(request, "humantest/paused.html", context)
    if session.status == TestSession.Status.FINISHED and participant is not None:
        return study_views.ended_page(request, session, participant)
    if session.status == TestSession.Status.FINISHED:
        trials = session.trials.filter(phase=Trial.Phase.TEST)
        context["result"] = selectors.tester_result(
            request.user.username, list(trials), trial_for(plan.dataset.benchmark)
        )
        return render(request, "humantest/finished.html", context)
    context["has_practice"] = bool(plan.practice_items)
    context["standing"] = qualification.qualification(session)
    context["brief_template"] = trial_for(plan.dataset.benchmark).brief_template
    return render(request, "humantest/brief.html", context)


def trial_page(request, session: TestSession, trial: Trial):
    trial_type = trial_for(session.plan.dataset.benchmark)
    phases = [Trial.Phase.PRACTICE] if trial.phase == Trial.Phase.PRACTICE else Trial.SEQUENCE
    test_trials = session.trials.filter(phase__in=phases, round=trial.round)
    count = test_trials.count()
    data = {
        "trial": trial.pk,
        "benchmark": trial_type.spec.name,
        "widget": static(trial_type.widget_script),
        "setting": session.plan.setting,
        "practice": trial.phase == Trial.Phase.PRACTICE,
        "remaining_ms": clock.remaining_ms(trial),
        "served_at": trial.served_at.isoformat(),
        "answer_url": reverse("humantest:answer", args=[trial.pk]),
        "timeout_url": reverse("humantest:timeout", args=[trial.pk]),
        "view": trial_type.view(unit_for(trial)),
    }
    context = {
        "session": session,
        "plan": session.plan,
        "trial": trial,
        "number": trial.position + 1,
        "count": count,
        "data": data,
        "widget_template": trial_type.widget_template,
        # A tester may end practice early and start the test, unless the plan asks them to qualify.
        "may_skip_practice": trial.phase == Trial.Phase.PRACTICE
        and trial.position + 1 < count
        and not qualification.qualification(session).required,
    }
    response = render(request, "humantest/trial.html", context)
    response["Cache-Control"] = "no-store"
    return response


@login_required
@require_POST
def practice(request, pk: int):
    session = own_session(request, pk)
    if studies.needs_consent(session) or session.declined_at is not None:
        return redirect("humantest:session", pk=session.pk)  # consent comes before anything else
    try:
        sessions.start_practice(session)
    except sessions.TrialClosed as problem:
        messages.error(request, str(problem))
    return redirect("humantest:session", pk=session.pk)


@login_required
@require_POST
def begin(request, pk: int):
    session = own_session(request, pk)
    if not studies.needs_consent(session) and session.declined_at is None:
        try:
            sessions.begin_test(session)
        except sessions.TrialClosed as problem:
            messages.error(request, _("Not yet: %(problem)s.") % {"problem": problem})
    return redirect("humantest:session", pk=pk)


@login_required
@require_POST
def pause(request, pk: int):
    sessions.pause(own_session(request, pk))
    messages.info(request, _("Paused. Come back to this page when you want to go on."))
    return redirect("humantest:my-tests")


@login_required
@require_POST
def resume(request, pk: int):
    sessions.resume(own_session(request, pk))
    return redirect("humantest:session", pk=pk)


#: The largest answer body a trial takes, in bytes: the answer and the browser's timings (up to
#: browser.MAX_CLIENT_EVENTS focus events of ~35 bytes each).
TRIAL_BODY_LIMIT = 128 * 1024


def read_json(request) -> dict:
    """The answer's JSON body, through the input gate (accounts/inputs.py)."""
    try:
        return inputs.read_json(request.body, max_bytes=TRIAL_BODY_LIMIT)
    except inputs.InputRefused as error:
        raise AnswerRefused(error.field, error.message) from None


def result_json(trial: Trial) -> dict:
    """The result panel's data: only now, with the answer final, may the truth be sent."""
    trial_type = trial_for(trial.item.dataset.benchmark)
    unit = unit_for(trial)
    return {
        "status": trial.status,
        "answer": trial.answer,
        "truth": trial_type.truth(unit),
        "why": trial_type.explain(unit, trial.answer),
        "figures": selectors.trial_figures(trial),
        "result": trial.result,
        "guidance": trial.session.plan.guidance if trial.phase == Trial.Phase.PRACTICE else "",
    }


def closing(request, pk: int, close) -> JsonResponse:
    """Run `close(body)` on the request's JSON body: the result panel's data, or the error.

    Whose trial it is is checked before the body is read: another tester's trial is a 403
    whatever was sent."""
    session_id = Trial.objects.filter(pk=pk).values_list("session_id", flat=True).first()
    if session_id is None:
        raise Http404("no such trial")
    session = own_session(request, session_id)  # another tester's, or one no longer invited: a 403
    participant = study_views.participant_of(request, session)
    if participant is not None:
        studies.seen(participant)
    try:
        trial = close(read_json(request))
    except Trial.DoesNotExist as missing:
        raise Http404("no such trial") from missing
    except AnswerRefused as problem:
        return JsonResponse({"error": problem.message, "field": problem.field}, status=400)
    except sessions.TrialClosed as problem:
        return JsonResponse({"error": str(problem)}, status=409)
    return JsonResponse(result_json(trial))


@login_required
@require_POST
def answer(request, pk: int):
    return closing(
        request,
        pk,
        lambda body: answers.record_answer(pk, request.user, body.get("answer"), body.get("client")),
    )


@login_required
@require_POST
def timeout(request, pk: int):
    return closing(request, pk, lambda body: answers.request_timeout(pk, request.user, body.get("client")))


@login_required
def history(request):
    rows, totals = selectors.history(request.user)
    return render(request, "humantest/history.html", {"rows": rows, "totals": totals})


# --- researcher ------------------------------------------------------------------------------------


@permission_required("humantest.view_testplan", raise_exception=True)
def plan_list(request):
    return render(
        request, "humantest/plan_list.html", {"plans": selectors.plans_for_researcher(request.user)}
    )


@permission_required("humantest.add_testplan", raise_exception=True)
def plan_new(request):
    """A new plan; `?from=<id>` starts from a copy of that plan (plans are not edited once made,
    so that every tester of a plan answered under the same conditions)."""
    initial = {}
    try:
        copied = inputs.object_id(request.GET.get("from"), "from")
    except inputs.InputRefused:
        copied = None  # not a plan's id: a new plan from nothing
    source = selectors.plans_for_researcher(request.user).filter(pk=copied).first() if copied else None
    if source is not None:
        initial = {field: getattr(source, field) for field in TestPlanForm.Meta.fields if field != "testers"}
        initial.update(
            name=_("%(name)s (copy)") % {"name": source.name},
            row_label="",
            testers=list(source.testers.all()),
        )
    form = TestPlanForm(request.POST or None, initial=initial, user=request.user)
    if request.method == "POST" and form.is_valid():
        try:
            plan = create_test_plan(created_by=request.user, **form.cleaned_data)
        except PlanRefused as refused:
            for field, message in refused.problems.items():
                form.add_error(field, message)
            return render(request, "humantest/plan_form.html", {"form": form})
        messages.success(
            request,
            _("Test plan “%(name)s” created; invited testers see it on their home page.")
            % {"name": plan.name},
        )
        return redirect("humantest:plan-results", pk=plan.pk)
    if request.GET.get("format") == "json":
        # The power card computes in place (humantest/static/humantest/plan_form.js): nothing
        # typed in the plan's form is lost.
        power = power_planning(request.GET)
        return JsonResponse(
            {
                "values": power["values"],
                "units": power.get("units"),
                "testers": power.get("testers"),
                "error": str(power["error"]) if power.get("error") else "",
                "models": model_rows(request.user, request.GET.get("dataset", "")),
            }
        )
    return render(request, "humantest/plan_form.html", {"form": form, "power": power_planning(request.GET)})


def model_rows(user, dataset_id: str) -> list[dict]:
    """The accuracies of a dataset's model rows the power card may start from: each proportion
    column with a value, as the report shows it ("<row> · <group> <column>: 0.167")."""
    from benchmarks.selectors import datasets_for
    from evaluation.selectors import report_table

    if not dataset_id.isdigit():
        return []
    dataset = datasets_for(user).filter(pk=int(dataset_id)).first()
    if dataset is None:
        return []
    table = report_table(dataset)
    choices = []
    for row in table.rows:
        if row.producer != "model":
            continue
        for column, cell in zip(table.columns, row.cells, strict=True):
            if column.proportion and cell.value is not None:
                name = f"{_(column.group)} {_(column.label)}".strip()
                choices.append(
                    {"label": f"{row.label} · {name}: {cell.value:.3f}", "accuracy": round(cell.value, 4)}
                )
    return choices


def power_planning(query) -> dict:
    """How many items a paired comparison of people and a model needs (Connor's formula for
    McNemar's test), from the accuracies the researcher expects; the form's side card."""
    from evaluation.comparison import ComparisonInputError, paired_sample_size

    values = {"human": "0.83", "model": "0.59", "alpha": "0.05", "power": "0.8", "per_tester": "20"}
    values.update({key: query[key] for key in values if query.get(key)})
    result = {"values": values, "asked": any(query.get(key) for key in values)}
    if not result["asked"]:
        return result
    try:
        human, model = float(values["human"]), float(values["model"])
        alpha, power, per_tester = float(values["alpha"]), float(values["power"]), int(values["per_tester"])
        if per_tester < 1:
            raise ValueError(_("items per tester must be at least 1"))
        units = paired_sample_size(human, model, alpha=alpha, power=power)
    except (ValueError, ComparisonInputError) as error:
        result["error"] = str(error)
        return result
    if units is None:
        result["error"] = _("the two accuracies are equal: no number of items detects no gap")
        return result
    result.update(units=units, testers=-(-units // per_tester))
    return result


def balance_label(plan: TestPlan) -> str:
    """What the plan's draw is balanced by, as the form named it ("Number of transformations")."""
    field = trial_for(plan.dataset.benchmark).balance_fields.get(plan.balance_by)
    return field.label if field else plan.balance_by


def quality_summary(plan: TestPlan) -> dict:
    """The plan page's line on quality control: the rule version, kept of measured, screened out,
    the study's stopping state."""
    from humantest import exclusions
    from humantest.models import Study

    quality = exclusions.plan_quality(plan)
    rules = exclusions.current_rules(plan)
    return {
        "version": rules.version if rules else None,
        "current": quality["current"],
        "study": Study.objects.filter(plan=plan).first(),
    }


@permission_required("humantest.view_results", raise_exception=True)
def plan_results(request, pk: int):
    plan = get_object_or_404(selectors.plans_for_researcher(request.user), pk=pk)
    results = selectors.plan_results(plan)
    if results["agreement_pending"]:
        schedule_pooled(plan.pk)  # its summary computes the agreement too
    flagged = list(dict.fromkeys(row["item"].pk for row in results["difficulty"] if row["all_failed"]))
    validate_flagged = ""
    if flagged and plan.dataset.spec.validation and request.user.has_perm("validation.add_plan"):
        validate_flagged = (
            reverse("validation:plan-new")
            + "?"
            + urlencode(
                {
                    "dataset": plan.dataset.pk,
                    "name": _("Items every tester failed in %(name)s") % {"name": plan.name},
                    "items": ",".join(str(pk) for pk in flagged),
                    "source": _("every tester failed them in test plan “%(name)s”") % {"name": plan.name},
                }
            )
        )
    return render(
        request,
        "humantest/plan_results.html",
        {
            "plan": plan,
            **results,
            "flagged": flagged,
            "validate_flagged": validate_flagged,
            "balance_label": balance_label(plan),
            "may_change": may_change(request.user, plan),
            "quality": quality_summary(plan),
        },
    )


@permission_required("humantest.delete_testplan", raise_exception=True)
@require_http_methods(["GET", "POST"])
def plan_delete(request, pk: int):
    """GET: what deleting the plan takes with it, and a button; POST: delete it (a plan the
    researcher cannot see is a 404, as on its page)."""
    plan = get_object_or_404(selectors.plans_for_researcher(request.user), pk=pk)
    if problem := ownership_problem(request.user, plan, _("test plan “%(name)s”") % {"name": plan.name}):
        raise PermissionDenied(problem)
    if request.method == "POST":
        taken = selectors.what_deleting_takes(plan)
        name, dataset = plan.name, str(plan.dataset)
        delete_test_plan(plan)
        sessions_count, trials_count = len(taken["sessions"]), taken["trials"]
        values = {
            "name": name,
            "sessions": ngettext("%(count)s tester session", "%(count)s tester sessions", sessions_count)
            % {"count": sessions_count},
            "trials": ngettext("%(count)s trial", "%(count)s trials", trials_count) % {"count": trials_count},
        }
        if taken["pooled"]:
            values.update(row=taken["pooled"].name, dataset=dataset)
            text = _(
                "Test plan “%(name)s” deleted with %(sessions)s and %(trials)s; "
                "its row “%(row)s” is gone from %(dataset)s’s report."
            )
        else:
            text = _("Test plan “%(name)s” deleted with %(sessions)s and %(trials)s.")
        messages.success(request, text % values)
        return redirect("humantest:plan-list")
    return render(
        request, "humantest/plan_delete.html", {"plan": plan, **selectors.what_deleting_takes(plan)}
    )


@permission_required("humantest.view_results", raise_exception=True)
def plan_export(request, pk: int, fmt: str):
    plan = get_object_or_404(selectors.plans_for_researcher(request.user), pk=pk)
    rows = selectors.export_rows(plan)
    if fmt == "json":
        response = JsonResponse(
            {"plan": plan.name, "trials": rows}, json_dumps_params={"ensure_ascii": False}
        )
    else:
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=selectors.EXPORT_FIELDS)
        writer.writeheader()
        for row in rows:
            writer.writerow(
                {
                    **row,
                    "answer": json.dumps(row["answer"], ensure_ascii=False)
                    if row["answer"] is not None
                    else "",
                    "focus_events": json.dumps(row["focus_events"]),
                }
            )
        response = HttpResponse(buffer.getvalue(), content_type="text/csv; charset=utf-8")
    return inputs.attachment(response, f"plan-{plan.pk}-trials.{fmt}")
