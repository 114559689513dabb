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
    """Run each of the benchmark's baselines on `dataset` unless a finished run of it is there."""
    made = []
    setting = spec.demo_plan.setting or spec.settings[0].value
    researcher = get_user_model().objects.filter(username="researcher").first()
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
        summary = f"{baseline.title} on {spec.title} ({run.status}"
        made.append(summary + (f": {run.error})" if run.error else ")"))
    return made
