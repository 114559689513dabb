"""Demo work for `load_demo`: every baseline of a benchmark run once on its demo dataset.

Runs go through the same path as a worker's (`execute_run`), in this process, so that the demo
report has model rows beside the Human row as soon as `make run` is up; the demo setting is the
one the demo test plan uses, where the Human row is.
"""

from __future__ import annotations

from django.contrib.auth import get_user_model

from inference.baselines import baselines_of
from inference.models import ModelRun
from inference.services import RunRefused, execute_run, start_run


def create_demo_runs(spec, dataset) -> list[str]:
    """Run each of the benchmark's baselines on `dataset`, in each of the demo's model settings,
    unless a finished run of it is there."""
    made = []
    researcher = get_user_model().objects.filter(username="researcher").first()
    for setting in spec.demo_plan.model_settings or (plan_setting_of(spec),):
        made += demo_runs_in(spec, dataset, setting, researcher)
    return made


def plan_setting_of(spec) -> str:
    return spec.demo_plan.setting or spec.settings[0].value


def demo_runs_in(spec, dataset, setting: str, researcher) -> list[str]:
    made = []
    for baseline in baselines_of(spec):
        if baseline.setting_problem(setting):
            continue
        done = ModelRun.objects.filter(
            dataset=dataset, baseline=baseline.name, setting=setting, status=ModelRun.Status.SUCCEEDED
        )
        if done.exists():
            continue
        try:
            run = start_run(
                dataset=dataset, baseline=baseline.name, setting=setting, user=researcher, enqueue=False
            )
        except RunRefused:
            continue  # a dataset imported without images, say: the baselines that need them sit out
        run = execute_run(run)
        label = f" {spec.setting_label(setting)}" if setting != plan_setting_of(spec) else ""
        summary = f"{baseline.title} on {spec.title}{label} ({run.status}"
        made.append(summary + (f": {run.error})" if run.error else ")"))
    return made
