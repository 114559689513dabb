"""Pages of model runs: the list, the form that starts one, a run's progress, cancelling it, and a
served model's requests and responses."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import FileResponse, Http404, JsonResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from accounts.inputs import InputRefused, object_id
from accounts.permissions import may_change, ownership_problem
from inference import selectors, services
from inference.forms import SERVED_FIELDS, RunForm
from inference.models import ModelRun
from inference.serializers import ModelRunSerializer
from inference.served import ServedBaseline


def visible_run(request, pk: int) -> ModelRun:
    if not request.user.has_perm("inference.view_modelrun"):
        raise PermissionDenied
    run = selectors.runs_for(request.user).filter(pk=pk).first()
    if run is None:
        raise Http404("no such model run")
    return run


@login_required
def run_list(request):
    if not request.user.has_perm("inference.view_modelrun"):
        raise PermissionDenied
    runs = selectors.runs_for(request.user)[:200]
    return render(request, "inference/run_list.html", {"runs": runs})


@login_required
def run_new(request):
    if not request.user.has_perm("inference.add_modelrun"):
        raise PermissionDenied
    try:
        chosen = object_id(request.GET.get("dataset"), "dataset")
    except InputRefused:
        chosen = None
    initial = {"dataset": chosen} if chosen is not None else None
    form = RunForm(request.POST or None, user=request.user, initial=initial)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            run = services.start_run(
                dataset=data["dataset"],
                baseline=data["baseline_name"],
                setting=data["setting"],
                checkpoint=data["checkpoint"] or None,
                device=data["device"],
                batch_size=data["batch_size"],
                seed=data["seed"],
                options=data["options"],
                user=request.user,
            )
        except services.RunRefused as error:
            form.add_error(None, str(error))
        else:
            # No notice: the run's page shows its status as it changes, and a "queued" message
            # would stay on it while the run is running.
            return redirect("inference:run", pk=run.pk)
    baselines = [
        {
            "value": f"{benchmark}:{baseline.name}",
            "benchmark": benchmark,
            "baseline": baseline,
            "served": isinstance(baseline, ServedBaseline),
        }
        for benchmark, baseline in form.baselines
    ]
    settings_by_benchmark = {
        dataset.pk: {
            "benchmark": dataset.benchmark,
            "settings": [[c.value, _(c.label)] for c in dataset.spec.settings],
        }
        for dataset in form.fields["dataset"].queryset
    }
    return render(
        request,
        "inference/run_form.html",
        {
            "form": form,
            "baselines": baselines,
            "datasets": settings_by_benchmark,
            "broken_plugins": selectors.broken_plugins(),
            "served_fields": list(SERVED_FIELDS),
        },
    )


@login_required
def run_detail(request, pk: int):
    run = visible_run(request, pk)
    if request.headers.get("Accept") == "application/json" or request.GET.get("format") == "json":
        return JsonResponse(ModelRunSerializer(run).data)
    return render(
        request,
        "inference/run_detail.html",
        {
            "run": run,
            "Status": ModelRun.Status,
            "may_change": may_change(request.user, run),
            "parameters": [(key, parameter_text(value)) for key, value in run.parameters.items()],
        },
    )


@login_required
def run_audit(request, pk: int):
    """A served model's requests and responses (JSON lines), to whoever may see the run."""
    run = visible_run(request, pk)
    if not run.audit:
        raise Http404("this run kept no requests")
    return audit_response(run)


def audit_response(run: ModelRun) -> FileResponse:
    """The audit file as a download, never sniffed or run (the responses are the server's text)."""
    response = FileResponse(
        run.audit.open("rb"),
        as_attachment=True,
        filename=f"run-{run.pk}-requests.jsonl",
        content_type="application/x-ndjson",
    )
    response["X-Content-Type-Options"] = "nosniff"
    response["Content-Security-Policy"] = "sandbox; default-src 'none'"
    return response


def parameter_text(value) -> str:
    """A baseline's parameter as the page shows it: a mapping (a learned baseline's `trained`:
    samples, epochs, seed...) as "name: value" pairs, a list joined, anything else as it is."""
    if isinstance(value, dict):
        return ", ".join(f"{key}: {parameter_text(item)}" for key, item in value.items()) or "–"
    if isinstance(value, list | tuple):
        return ", ".join(parameter_text(item) for item in value) or "–"
    return str(value)


@login_required
@require_POST
def run_cancel(request, pk: int):
    run = visible_run(request, pk)
    if not request.user.has_perm("inference.change_modelrun"):
        raise PermissionDenied
    if problem := ownership_problem(request.user, run, _("model run %(run)s") % {"run": run.pk}):
        raise PermissionDenied(problem)
    run = services.cancel_run(run)
    messages.info(request, _("Model run %(run)s: %(stage)s.") % {"run": run.pk, "stage": run.stage})
    return redirect("inference:run", pk=run.pk)
