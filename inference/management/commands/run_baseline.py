"""python manage.py run_baseline <baseline> <dataset> [--setting S] [--checkpoint F] [--device auto|cpu|cuda]
[--batch-size N] [--seed S] [--enqueue] [--json]"""

import json
import time

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from benchmarks.selectors import DatasetNotFound, find_dataset
from inference.models import ModelRun
from inference.services import RunRefused, execute_run, start_run


class Command(BaseCommand):
    help = (
        "Run a baseline or a model plug-in on a dataset's units and score its answers as a model submission (the report's "
        "model row). Runs here with a progress bar, or with --enqueue on the worker's gpu queue."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "baseline",
            help="the baseline's or model plug-in's name (unknown: the error lists the dataset's)",
        )
        parser.add_argument("dataset", help="the dataset's id, or its name when that is unique")
        parser.add_argument("--setting", default=None, help="the benchmark's setting (default: its first)")
        parser.add_argument("--checkpoint", default=None, help="checkpoint file of a learned baseline")
        parser.add_argument("--device", default="auto", choices=ModelRun.Device.values)
        parser.add_argument(
            "--batch-size", type=int, default=None, help="default: the model's own (32 for the baselines)"
        )
        parser.add_argument("--seed", type=int, default=0, help="the same seed gives the same answers")
        parser.add_argument(
            "--enqueue", action="store_true", help="hand the run to a worker and follow its progress"
        )
        parser.add_argument("--json", action="store_true", help="print the finished run as JSON")

    def handle(self, *args, **options):
        try:
            dataset = find_dataset(options["dataset"])
        except DatasetNotFound as error:
            raise CommandError(str(error)) from None
        setting = options["setting"]
        if setting is None:
            setting = dataset.spec.settings[0].value
        try:
            run = start_run(
                dataset=dataset,
                baseline=options["baseline"],
                setting=setting,
                checkpoint=options["checkpoint"],
                device=options["device"],
                batch_size=options["batch_size"],
                seed=options["seed"],
                enqueue=options["enqueue"],
            )
        except RunRefused as error:
            raise CommandError(str(error)) from None
        quiet = options["json"] or options["verbosity"] == 0
        bar = None if quiet else tqdm(desc=f"run {run.pk}", unit="unit", file=self.stderr, leave=False)

        def show(current: ModelRun) -> None:
            if bar is not None:
                bar.total = current.total or None
                bar.set_postfix_str(current.stage)
                bar.update(current.done - bar.n)

        try:
            run = self.follow(run, show) if options["enqueue"] else execute_run(run, progress=show)
        finally:
            if bar is not None:
                bar.close()
        run.refresh_from_db()
        self.report(run, options["json"])
        if run.status != ModelRun.Status.SUCCEEDED:
            raise CommandError(f"run {run.pk} {run.status}: {run.error or run.stage}")

    def follow(self, run: ModelRun, show) -> ModelRun:
        """Poll a queued run until it ends (Ctrl-C stops following; the run goes on)."""
        try:
            while True:
                run.refresh_from_db()
                show(run)
                if run.finished:
                    return run
                time.sleep(0.5)
        except KeyboardInterrupt:
            raise CommandError(f"stopped following run {run.pk}; it goes on in the worker") from None

    def report(self, run: ModelRun, as_json: bool) -> None:
        submission = run.submission
        result = {
            "run": run.pk,
            "status": run.status,
            "baseline": run.baseline,
            "dataset": run.dataset_id,
            "setting": run.setting,
            "device": run.used_device,
            "units": run.total,
            "answered": run.done,
            "submission": submission.pk if submission else None,
            "summary": submission.summary if submission else None,
            "error": run.error,
        }
        if as_json:
            self.stdout.write(json.dumps(result, ensure_ascii=False))
            return
        self.stdout.write(
            f"run {run.pk}: {run.baseline} on {run.dataset} - {run.status}, {run.done}/{run.total} units"
        )
        if submission:
            self.stdout.write(
                f"submission {submission.pk} ({submission.name}): {json.dumps(submission.summary)[:400]}"
            )
