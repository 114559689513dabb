"""The human baseline report of a plan (issue 27): the reporting checklist filled from what the plan
recorded, the form that asks the rest once, the downloads (Markdown, LaTeX, JSON) and the plan's
pre-registration (its design document, recorded and exported). humantest/checklist.py builds it.

Every researcher reads a report; only the plan's maker (or an admin) saves its form or records a
pre-registration. Text typed on the form passes the input gate (accounts/inputs.py): a one-line
field refuses line breaks and control characters, a link must be an http(s) address, and a save
made on a page older than the stored answers is refused.
"""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import permission_required
from django.core.exceptions import ValidationError
from django.core.validators import URLValidator
from django.db import transaction
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_http_methods, require_POST

from accounts import inputs
from accounts.permissions import may_change
from humantest import checklist
from humantest.models import ReportAnswers
from humantest.study_views import owned_plan, researcher_plan

#: Longest text a field of the form keeps (one-line fields, links, several-line fields).
LINE_LIMIT, URL_LIMIT, TEXT_LIMIT = 300, 500, 5000

CONTENT_TYPES = {
    "md": "text/markdown; charset=utf-8",
    "tex": "application/x-tex; charset=utf-8",
    "json": "application/json; charset=utf-8",
}


class CheckedText(forms.CharField):
    """Text through the input gate before anything else (a stripped line break is still refused)."""

    def __init__(self, *, single_line: bool, **kwargs) -> None:
        self.single_line = single_line
        super().__init__(**kwargs)

    def to_python(self, value):
        if isinstance(value, str) and (problem := inputs.text_problem(value, single_line=self.single_line)):
            raise ValidationError(problem, code="text")
        return super().to_python(value)


class CheckedLink(CheckedText):
    """An http(s) address, on one line (javascript:, data: and other schemes are refused)."""

    default_validators = [
        URLValidator(schemes=["http", "https"], message=gettext_lazy("enter an http or https address"))
    ]

    def __init__(self, **kwargs) -> None:
        super().__init__(single_line=True, **kwargs)


class ReportAnswersForm(forms.Form):
    """What the checklist asks that Yardstick cannot know: every field optional."""

    updated_at = forms.CharField(required=False, widget=forms.HiddenInput)

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        for name, (label, kind, choices) in checklist.FORM_FIELDS.items():
            if kind == "line":
                field = CheckedText(single_line=True, max_length=LINE_LIMIT)
            elif kind == "text":
                field = CheckedText(
                    single_line=False, max_length=TEXT_LIMIT, widget=forms.Textarea(attrs={"rows": 3})
                )
            elif kind == "url":
                field = CheckedLink(max_length=URL_LIMIT, widget=forms.URLInput)
            elif kind == "year":
                field = forms.IntegerField(min_value=1900, max_value=2100)
            elif kind == "choice":
                field = forms.ChoiceField(
                    choices=[("", _("— not answered"))] + [(value, value) for value in choices]
                )
            else:
                field = forms.MultipleChoiceField(
                    choices=[(value, value) for value in choices], widget=forms.CheckboxSelectMultiple
                )
            field.required = False
            field.label = label
            self.fields[name] = field

    def answers(self) -> dict:
        """The cleaned answers as ReportAnswers keeps them (blank ones left out)."""
        values = {}
        for name in checklist.FORM_FIELDS:
            value = self.cleaned_data.get(name)
            if value not in (None, "", []):
                values[name] = value
        return values

    def problems(self) -> list[dict[str, str]]:
        return [
            {
                "field": name,
                "label": self.fields[name].label if name in self.fields else name,
                "message": message,
            }
            for name, errors in self.errors.items()
            for message in errors
        ]


def initial_of(answers: dict, stored: ReportAnswers | None) -> dict:
    return {**answers, "updated_at": stored.updated_at.isoformat() if stored else ""}


def shown_sections(report: dict) -> list[dict]:
    """The report's sections with what each item's Answer cell shows."""
    return [
        {**section, "items": [{**entry, "shown": checklist.cell(entry)} for entry in section["items"]]}
        for section in report["sections"]
    ]


@permission_required("humantest.view_results", raise_exception=True)
@require_http_methods(["GET", "POST"])
def report_page(request, pk: int):
    """The filled checklist, the form for what it asks once, the downloads, the pre-registration."""
    plan = researcher_plan(request, pk)
    answers, stored = checklist.answers_of(plan)
    status, problems, stale = 200, [], None
    form = ReportAnswersForm(initial=initial_of(answers, stored))
    if request.method == "POST":
        owned_plan(request, pk)
        form = ReportAnswersForm(request.POST)
        if not form.is_valid():
            status, problems = 400, form.problems()
        else:
            with transaction.atomic():
                current = ReportAnswers.objects.select_for_update().filter(plan=plan).first()
                sent = form.cleaned_data.get("updated_at") or ""
                if current is not None and sent != current.updated_at.isoformat():
                    who = current.updated_by.username if current.updated_by else _("someone")
                    stale = _(
                        "These answers were saved by %(who)s at %(when)s (UTC), after this page was opened: "
                        "nothing was saved. Reload the page to see them, then make your changes again."
                    ) % {"who": who, "when": f"{current.updated_at:%Y-%m-%d %H:%M:%S}"}
                else:
                    current = current or ReportAnswers(plan=plan)
                    current.answers = form.answers()
                    current.updated_by = request.user
                    current.save()
            if stale is None:
                messages.success(request, _("The report's answers are saved."))
                return redirect("humantest:report", pk=plan.pk)
            status = 409
    report = checklist.build_report(plan)
    context = {
        "plan": plan,
        "report": report,
        "sections": shown_sections(report),
        "prereg": report["preregistration"],
        "form": form,
        "may_change": may_change(request.user, plan),
        "problems": problems,
        "stale": stale,
        "api_url": reverse("testplan-report", args=[plan.pk]),
    }
    return render(request, "humantest/report.html", context, status=status)


@permission_required("humantest.view_results", raise_exception=True)
def report_export(request, pk: int, fmt: str):
    """The filled checklist as Markdown, a LaTeX appendix section, or JSON."""
    plan = researcher_plan(request, pk)
    report = checklist.build_report(plan)
    renderers = {"md": checklist.as_markdown, "tex": checklist.as_latex, "json": checklist.as_json}
    if fmt not in renderers:
        raise Http404("no such format")
    response = HttpResponse(renderers[fmt](report), content_type=CONTENT_TYPES[fmt])
    return inputs.attachment(response, f"plan-{plan.pk}-human-baseline-report.{fmt}")


@permission_required("humantest.view_results", raise_exception=True)
@require_POST
def preregistration(request, pk: int):
    """Record the plan's design as it stands now (its maker or an admin); the report then compares
    what ran with it, and says whether it was recorded before the first tester started."""
    plan = owned_plan(request, pk)
    registration = checklist.record_preregistration(plan, user=request.user)
    started = plan.sessions.exclude(started_at=None).exists()
    when = {"when": f"{registration.created_at:%Y-%m-%d %H:%M:%S}"}
    if started:
        recorded = _(
            "Pre-registration recorded at %(when)s (UTC): testers had already started, and the report says so."
        )
    else:
        recorded = _("Pre-registration recorded at %(when)s (UTC), before any data.")
    messages.success(request, recorded % when)
    return redirect(reverse("humantest:report", args=[plan.pk]) + "#preregistration")


@permission_required("humantest.view_results", raise_exception=True)
def preregistration_export(request, pk: int, fmt: str):
    """The plan's design document (no result in it), as Markdown or JSON: a pre-registration."""
    plan = researcher_plan(request, pk)
    document = checklist.design_document(plan)
    renderers = {"md": checklist.design_markdown, "json": checklist.design_json}
    if fmt not in renderers:
        raise Http404("no such format")
    response = HttpResponse(renderers[fmt](document), content_type=CONTENT_TYPES[fmt])
    return inputs.attachment(response, f"plan-{plan.pk}-preregistration.{fmt}")
