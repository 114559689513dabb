"""The report page: every scored submission of a dataset side by side, with exports."""

from __future__ import annotations

import json
from typing import Any

from django.contrib import messages
from django.contrib.auth.mixins import PermissionRequiredMixin
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.functional import cached_property
from django.utils.safestring import mark_safe
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.generic import FormView, View

from accounts.inputs import attachment
from benchmarks.records import FormatError
from benchmarks.selectors import datasets_for
from benchmarks.spec import described_answer
from evaluation.comparison import ComparisonInputError
from evaluation.forms import RenameForm, SubmissionForm
from evaluation.models import Submission
from evaluation.plots import overlap_plot, report_plots
from evaluation.reports import (
    SKIP_REASONS,
    comparison_csv,
    comparison_latex,
    format_value,
    pairwise_csv,
    pairwise_latex,
    table_csv,
    table_json,
    table_latex,
)
from evaluation.selectors import (
    OVERLAP_KINDS,
    RowNotFound,
    diagnostic_tables,
    error_overlap_units,
    passed_units,
    report_row_labels,
    report_table,
    scored_submissions,
    scoring_jobs,
)
from evaluation.services import (
    SubmissionRefused,
    change_problem,
    delete_submission,
    deletion_effects,
    rename_submission,
    scored_in_request,
    start_scoring_job,
    submit_predictions,
)
from evaluation.tasks import current_comparison, current_pairwise


class ReportView(PermissionRequiredMixin, FormView):
    """GET shows the report; POST adds a submission from an uploaded prediction file."""

    permission_required = ("evaluation.view_report", "benchmarks.view_dataset")
    template_name = "evaluation/report.html"
    form_class = SubmissionForm

    @cached_property
    def dataset(self):
        # Looked up after the permission check, so that people without rights get 403, not 404.
        return get_object_or_404(datasets_for(self.request.user), pk=self.kwargs["pk"])

    def get_form_kwargs(self):
        return {**super().get_form_kwargs(), "spec": self.dataset.spec}

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        submissions = scored_submissions(self.dataset)
        table = report_table(self.dataset, submissions)
        context["dataset"] = self.dataset
        context["table"] = table
        context["rows"] = formatted_rows(table)
        context["diagnostics"] = [
            (diagnostic, formatted_rows(diagnostic))
            for diagnostic in diagnostic_tables(self.dataset, submissions)
        ]
        context["submissions"] = submissions
        user = self.request.user
        may_change = user.has_perm("evaluation.change_submission") or user.has_perm(
            "evaluation.delete_submission"
        )
        for submission in submissions:
            # Rename and delete links where this user can use them (their own rows, or any as an
            # admin; a test plan's row is changed from the plan's page).
            submission.changeable = may_change and change_problem(user=user, submission=submission) is None
        kept = passed_units(self.dataset)
        if kept is not None:
            passed = report_table(self.dataset, submissions, keep_units=kept)
            context["passed"] = {
                "units": len(kept),
                "marked": self.dataset.marks.count(),
                "rows": [
                    (row, [(cell, format_value(cell.value)) for cell in row.cells]) for row in passed.rows
                ],
            }
        # SVG drawn by matplotlib from our own numbers and names of our own submissions.
        context["plots"] = [mark_safe(svg) for svg in report_plots(self.dataset.spec, submissions, _)]  # noqa: S308
        context["parameters"] = json.dumps(table.parameters, indent=2, ensure_ascii=False)
        context["pairwise"] = pairwise_context(self.dataset, len(table.rows))
        context["scoring"] = scoring_jobs(self.dataset)
        return context

    def form_valid(self, form):
        if not self.request.user.has_perm("evaluation.add_submission"):
            raise Http404
        data = form.cleaned_data
        upload = data["file"]
        in_request = scored_in_request(self.dataset)
        submit = submit_predictions if in_request else start_scoring_job
        try:
            submitted = submit(
                dataset=self.dataset,
                name=data["name"],
                producer=data["producer"],
                setting=data["setting"],
                variant=data["variant"],
                data=upload.read(),
                source=upload.name,
                created_by=self.request.user,
            )
        except FormatError as error:
            for line in error.summary(limit=50):
                form.add_error("file", line)
            return self.form_invalid(form)
        except SubmissionRefused as error:
            form.add_error(error.field if error.field in form.fields else None, str(error))
            return self.form_invalid(form)
        except ValueError as error:
            form.add_error(None, str(error))
            return self.form_invalid(form)
        if in_request:
            messages.info(self.request, _("%(submission)s scored.") % {"submission": submitted})
        else:
            messages.info(
                self.request,
                _("%(name)s is being scored by a worker (%(units)s units): its row appears when it is done.")
                % {"name": repr(submitted.name), "units": f"{self.dataset.unit_count:,}"},
            )
        return redirect("evaluation:report", pk=self.dataset.pk)


class SubmissionChangeView(PermissionRequiredMixin, View):
    """A page that changes one submission of a dataset's report (GET shows it, POST changes it);
    a submission the user may not change (another researcher's, a test plan's row) is 403 with
    the reason."""

    template_name = ""

    def submission(self, request, pk: int, submission_pk: int) -> Submission:
        dataset = get_object_or_404(datasets_for(request.user), pk=pk)
        return get_object_or_404(
            dataset.submissions.select_related("dataset", "created_by"), pk=submission_pk
        )

    def page(self, request, submission: Submission, status: int = 200, **context):
        problem = change_problem(user=request.user, submission=submission)
        context = {"dataset": submission.dataset, "submission": submission, "problem": problem, **context}
        return render(request, self.template_name, context, status=403 if problem else status)


class SubmissionRenameView(SubmissionChangeView):
    permission_required = (
        "evaluation.view_report",
        "benchmarks.view_dataset",
        "evaluation.change_submission",
    )
    template_name = "evaluation/submission_rename.html"

    def get(self, request, pk: int, submission_pk: int):
        submission = self.submission(request, pk, submission_pk)
        return self.page(request, submission, form=RenameForm(initial={"name": submission.name}))

    def post(self, request, pk: int, submission_pk: int):
        submission = self.submission(request, pk, submission_pk)
        form = RenameForm(request.POST)
        if form.is_valid():
            old_name = submission.name
            try:
                rename_submission(submission=submission, name=form.cleaned_data["name"], user=request.user)
            except SubmissionRefused as error:
                if error.field is None:
                    return self.page(request, submission, form=form)
                form.add_error("name", str(error))
            else:
                messages.info(
                    request,
                    _("%(old)s is now called %(new)s.")
                    % {"old": repr(old_name), "new": repr(submission.name)},
                )
                return redirect("evaluation:report", pk=pk)
        submission.refresh_from_db()
        return self.page(request, submission, form=form)


class SubmissionDeleteView(SubmissionChangeView):
    permission_required = (
        "evaluation.view_report",
        "benchmarks.view_dataset",
        "evaluation.delete_submission",
    )
    template_name = "evaluation/submission_delete.html"

    def get(self, request, pk: int, submission_pk: int):
        submission = self.submission(request, pk, submission_pk)
        return self.page(request, submission, effects=deletion_effects(submission))

    def post(self, request, pk: int, submission_pk: int):
        submission = self.submission(request, pk, submission_pk)
        name = submission.name
        try:
            delete_submission(submission=submission, user=request.user)
        except SubmissionRefused:
            return self.page(request, submission, effects=deletion_effects(submission))
        messages.info(request, _("%(name)s and its answers and scores were deleted.") % {"name": repr(name)})
        return redirect("evaluation:report", pk=pk)


def formatted_rows(table) -> list[tuple[Any, list[tuple[Any, str, str, str]]]]:
    """Each row of a table with its cells and their value and interval as the page prints them."""
    return [
        (
            row,
            [
                (
                    cell,
                    format_value(cell.value, whole=column.count),
                    format_value(cell.low),
                    format_value(cell.high),
                )
                for column, cell in zip(table.columns, row.cells, strict=True)
            ],
        )
        for row in table.rows
    ]


class ReportExportView(PermissionRequiredMixin, View):
    """The report's main table, or one diagnostic table (``?table=<key>``), as CSV, JSON or LaTeX."""

    permission_required = ("evaluation.view_report", "benchmarks.view_dataset")
    FORMATS = {"csv": "text/csv", "json": "application/json", "tex": "application/x-tex"}

    def get(self, request, pk: int, extension: str):
        if extension not in self.FORMATS:
            raise Http404
        dataset = get_object_or_404(datasets_for(request.user), pk=pk)
        key = request.GET.get("table", "")
        diagnostic = dataset.spec.diagnostic(key) if key else None
        if key and diagnostic is None:
            raise Http404("no such table")
        table = report_table(dataset, diagnostic=diagnostic)
        if extension == "csv":
            body = table_csv(table)
        elif extension == "json":
            body = json.dumps(table_json(table), ensure_ascii=False, indent=2)
        else:
            body = table_latex(table)
        response = HttpResponse(body, content_type=f"{self.FORMATS[extension]}; charset=utf-8")
        suffix = f"-{diagnostic.key}" if diagnostic is not None else ""
        return attachment(response, f"report-{dataset.benchmark}-{dataset.name}{suffix}.{extension}")


class CompareView(PermissionRequiredMixin, View):
    """Two report rows compared on the units both answered (?a=<row>&b=<row>[&metric=M])."""

    permission_required = ("evaluation.view_report", "benchmarks.view_dataset")

    def get(self, request, pk: int):
        dataset = get_object_or_404(datasets_for(request.user), pk=pk)
        labels = report_row_labels(dataset)
        first, second = request.GET.get("a", ""), request.GET.get("b", "")
        if not first and len(labels) >= 2:
            first, second = labels[0], labels[-1]
        by = request.GET.get("by", "")
        context = {
            "dataset": dataset,
            "labels": labels,
            "a": first,
            "b": second,
            "by": by,
            "strata": dataset.spec.comparison_strata,
            "error": "",
            "columns": [],
            "computing": False,
        }
        if first and second:
            try:
                result = current_comparison(
                    dataset, first, second, metric=request.GET.get("metric") or None, by=by or None
                )
            except (RowNotFound, ComparisonInputError) as error:
                context["error"] = str(error)
            else:
                # Not kept yet: a worker computes it, and the page's script fetches it when it is there.
                context["computing"] = result is None
                if result is not None:
                    context["columns"] = [comparison_cells(column) for column in result["columns"]]
                    for column in context["columns"]:
                        column["strata"] = [comparison_cells(stratum) for stratum in column.get("strata", ())]
                    context["parameters"] = json.dumps(result["parameters"], indent=2)
        return render(request, "evaluation/compare.html", context)


def pairwise_context(dataset, rows: int) -> dict | None:
    """The report's table of every pair of rows: kept from the last computation for these
    submissions, or asked of a worker now ("computing": the page fetches it when it is there);
    None with fewer than two rows."""
    if rows < 2:
        return None
    result = current_pairwise(dataset)
    if result is None:
        return {"state": "computing", "dataset": dataset}
    if "error" in result:
        return {"state": "failed", "dataset": dataset, "error": result["error"]}
    return {
        "state": "ready",
        "dataset": dataset,
        "pairs": [comparison_cells(pair) for pair in result["pairs"]],
        "computed_at": result.get("computed_at"),
        "seconds": result.get("seconds"),
        "resamples": result["resamples"],
    }


class PairwiseView(PermissionRequiredMixin, View):
    """The report's table of every pair as a page fragment: 200 with the table, 202 while a worker
    computes it (the report page polls this until it gets the table)."""

    permission_required = ("evaluation.view_report", "benchmarks.view_dataset")

    def get(self, request, pk: int):
        dataset = get_object_or_404(datasets_for(request.user), pk=pk)
        pairwise = pairwise_context(dataset, len(report_row_labels(dataset)))
        if pairwise is None:
            raise Http404
        response = render(request, "evaluation/_pairwise.html", {"pairwise": pairwise})
        if pairwise["state"] == "computing":
            response.status_code = 202
        return response


class ScoringJobsView(PermissionRequiredMixin, View):
    """The report's uploads being scored by a worker, as a page fragment the report page polls."""

    permission_required = ("evaluation.view_report", "benchmarks.view_dataset")

    def get(self, request, pk: int):
        dataset = get_object_or_404(datasets_for(request.user), pk=pk)
        scoring = scoring_jobs(dataset) or {"jobs": [], "running": False}
        return render(request, "evaluation/_scoring_jobs.html", {"dataset": dataset, "scoring": scoring})


# Why a column is not compared, in the reader's language (the English ones are SKIP_REASONS's).
SKIPPED_LABELS = {
    "not_a_mean": gettext_lazy("not a mean over units: no paired comparison"),
    "setting_unanswered": gettext_lazy("one of the rows has no answers in this setting"),
    "no_common_units": gettext_lazy("no unit was answered by both rows"),
}
SKIPPED_CODES = {text: code for code, text in SKIP_REASONS.items()}


def comparison_cells(column: dict) -> dict:
    """A compared column with its numbers formatted for the page (a skipped one's reason in the
    reader's language, its code under "skipped_code")."""
    cells = dict(column)
    if "skipped" in column:
        # A result cached before the codes were kept names its reason by the English text only.
        code = column.get("skipped_code") or SKIPPED_CODES.get(column["skipped"], "")
        cells["skipped_code"] = code
        cells["skipped"] = SKIPPED_LABELS.get(code, column["skipped"])
    else:
        cells["shown"] = {key: format_value(column[key]) for key in ("mean_a", "mean_b", "low", "high")} | {
            "difference": f"{column['difference']:+.3f}"
        }
        if column["low"] is not None:
            cells["shown"]["low"] = f"{column['low']:+.3f}"
            cells["shown"]["high"] = f"{column['high']:+.3f}"
            cells["excludes_zero"] = column["low"] > 0 or column["high"] < 0
        elif column.get("method") == "too few units":
            cells["no_interval"] = _("too few units to compare (fewer than %(count)s): no interval") % {
                "count": column.get("minimum_units", "")
            }
        elif column.get("method") == "degenerate":
            cells["no_interval"] = _("the same difference on every unit: no interval")
    return cells


OVERLAP_PAGE = 60


def overlap_words(first: str, second: str) -> dict[str, str]:
    """The overlap page's groups in the reader's language, with the rows' own names: the tabs and
    the plot say the same ("only Human misses", never "only B misses" beside it)."""
    return {
        "both_wrong": _("both miss"),
        "only_b_wrong": _("only %(name)s misses") % {"name": second},
        "only_a_wrong": _("only %(name)s misses") % {"name": first},
        "both_right": _("both right"),
        "axis": _("units both answered"),
    }


def column_heading(dataset, column: str) -> str:
    """A report column named "group label" (as links name it) in the reader's language."""
    for candidate in dataset.spec.report_columns():
        if f"{candidate.group} {candidate.label}".strip() == column.strip():
            return f"{_(candidate.group)} {_(candidate.label)}".strip()
    return column


class OverlapView(PermissionRequiredMixin, View):
    """The units two rows answered, split by who missed them, with images and both rows' answers."""

    permission_required = ("evaluation.view_report", "benchmarks.view_dataset")

    def get(self, request, pk: int):
        dataset = get_object_or_404(datasets_for(request.user), pk=pk)
        first, second = request.GET.get("a", ""), request.GET.get("b", "")
        column, kind = request.GET.get("column", ""), request.GET.get("kind", "both_wrong")
        kinds = dict(OVERLAP_KINDS)
        if kind not in kinds:
            raise Http404("no such group of units")
        try:
            overlap = error_overlap_units(dataset, first, second, column, kind, limit=OVERLAP_PAGE)
        except RowNotFound as error:
            raise Http404(str(error)) from None
        shown = [
            {
                "unit": unit["unit"],
                "item": unit["item"],
                # Every image of the item, in the order its benchmark shows them (the initial
                # scene before the final ones, say), each captioned with its role.
                "images": [
                    (role, dataset.media_url(unit["item"].media[role]))
                    for role in dataset.spec.media_roles(unit["item"].media)
                ],
                "a": [described_answer(dataset.spec, answer) for answer in unit["a"]],
                "b": [described_answer(dataset.spec, answer) for answer in unit["b"]],
            }
            for unit in overlap["shown"]
        ]
        words = overlap_words(first, second)
        tabs = [(key, words[key], overlap["counts"][key]) for key, _label in OVERLAP_KINDS]
        return render(
            request,
            "evaluation/overlap.html",
            {
                "dataset": dataset,
                "a": first,
                "b": second,
                "column": column,
                "column_label": column_heading(dataset, column),
                "kind": kind,
                "kind_label": words[kind],
                "tabs": tabs,
                "units": shown,
                "more": max(overlap["total"] - OVERLAP_PAGE, 0),
                "plot": mark_safe(overlap_plot(overlap["counts"], first, second, words)),  # noqa: S308 (our own SVG)
            },
        )


class CompareExportView(PermissionRequiredMixin, View):
    """The comparison of two rows as CSV, JSON or LaTeX (?a=<row>&b=<row>)."""

    permission_required = ("evaluation.view_report", "benchmarks.view_dataset")
    formats = {
        "csv": ("text/csv; charset=utf-8", comparison_csv),
        "json": ("application/json", lambda result: json.dumps(result, indent=2, ensure_ascii=False)),
        "tex": ("application/x-tex; charset=utf-8", comparison_latex),
    }

    def get(self, request, pk: int, extension: str):
        if extension not in self.formats:
            raise Http404("no such export format")
        dataset = get_object_or_404(datasets_for(request.user), pk=pk)
        try:
            result = current_comparison(
                dataset, request.GET.get("a", ""), request.GET.get("b", ""), by=request.GET.get("by") or None
            )
        except (RowNotFound, ComparisonInputError) as error:
            raise Http404(str(error)) from None
        if result is None:
            return HttpResponse(
                _("The comparison is being computed by a worker: download it again in a moment."),
                status=202,
                content_type="text/plain; charset=utf-8",
            )
        content_type, render_export = self.formats[extension]
        response = HttpResponse(render_export(result), content_type=content_type)
        return attachment(response, f"dataset-{dataset.pk}-comparison.{extension}")


class PairwiseExportView(PermissionRequiredMixin, View):
    """The report's table of every pair as CSV, JSON or LaTeX; 202 while a worker computes it."""

    permission_required = ("evaluation.view_report", "benchmarks.view_dataset")
    formats = {
        "csv": ("text/csv; charset=utf-8", pairwise_csv),
        "json": ("application/json", lambda result: json.dumps(result, indent=2, ensure_ascii=False)),
        "tex": ("application/x-tex; charset=utf-8", pairwise_latex),
    }

    def get(self, request, pk: int, extension: str):
        if extension not in self.formats:
            raise Http404("no such export format")
        dataset = get_object_or_404(datasets_for(request.user), pk=pk)
        if len(report_row_labels(dataset)) < 2:
            raise Http404("a comparison needs two scored rows")
        result = current_pairwise(dataset)
        if result is None:
            return HttpResponse(
                _("A worker is comparing every pair of rows; ask again in a minute.") + "\n",
                status=202,
                content_type="text/plain; charset=utf-8",
            )
        if "error" in result:
            # The computation failed (its error is on the report page): a conflict with the data
            # as it is, not a server fault; a new or changed submission makes it computed again.
            return HttpResponse(
                _(
                    "The comparison of every pair could not be computed for these rows (the report "
                    "page says why); it is computed again when a submission of this dataset changes."
                )
                + "\n",
                status=409,
                content_type="text/plain; charset=utf-8",
            )
        content_type, render_export = self.formats[extension]
        response = HttpResponse(render_export(result), content_type=content_type)
        return attachment(response, f"dataset-{dataset.pk}-pairs.{extension}")
