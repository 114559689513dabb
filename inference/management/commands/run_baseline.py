"""python manage.py run_baseline <baseline> <dataset> [--setting S] [--checkpoint F] [--device auto|cpu|cuda]
[--batch-size N] [--seed S] [--enqueue] [--json]

A served model: run_baseline served <dataset> --endpoint URL [--protocol openai|yardstick]
[--served-model NAME] [--api-key-env VAR] [--concurrency N] [--timeout S] [--retries N] [--max-tokens N]"""

import json
import time

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from benchmarks.selectors import DatasetNotFound, find_dataset
from inference.models import ModelRun
from inference.served import PROTOCOLS
from inference.services import RunRefused, execute_run, start_run

#: The command's served-model flags and the run options they fill.
SERVED_FLAGS = {
    "endpoint": "endpoint",
    "protocol": "protocol",
    "served_model": "model",
    "api_key_env": "api_key_env",
    "concurrency": "concurrency",
    "timeout": "timeout_s",
    "retries": "retries",
    "max_tokens": "max_tokens",
}


def served_options(options: dict) -> dict:
    """The run options the served-model flags give (those not given are left to their defaults)."""
    return {option: options[flag] for flag, option in SERVED_FLAGS.items() if options.get(flag) is not None}


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
        served = parser.add_argument_group("served model (baseline 'served')")
        served.add_argument(
            "--endpoint", help="the server's URL (openai: its base, such as http://host:8000/v1)"
        )
        served.add_argument("--protocol", choices=PROTOCOLS, help="default: openai")
        served.add_argument("--served-model", help="the model's name as the server knows it (openai)")
        served.add_argument(
            "--api-key-env", help="the NAME of an environment variable on the worker holding the key"
        )
        served.add_argument("--concurrency", type=int, help="requests at once (1-32, default 4)")
        served.add_argument("--timeout", type=float, help="seconds per request (default 60)")
        served.add_argument("--retries", type=int, help="retries of a failed request (0-10, default 3)")
        served.add_argument("--max-tokens", type=int, help="most tokens per answer (openai, default 256)")

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
                options=served_options(options),
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
