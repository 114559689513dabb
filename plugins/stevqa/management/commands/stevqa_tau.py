"""python manage.py stevqa_tau --gt FILE --predictions FILE [--variant V] [--json]: CLC as tau varies."""

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from benchmarks.records import FormatError
from benchmarks.spec import ScoringFiles
from evaluation.reports import format_value
from plugins.stevqa.spec import SPEC


class Command(BaseCommand):
    help = (
        "Score STE-VQA predictions against a ground-truth file and print TC and CLC for tau = 0.00, "
        "0.05, ..., 1.00 (the paper's curve), the variant's other rules unchanged. Needs no database."
    )
    requires_system_checks = []

    def add_arguments(self, parser):
        parser.add_argument("--gt", type=Path, required=True, help="ground truth in the official format")
        parser.add_argument("--predictions", type=Path, required=True, help="the predictions file")
        parser.add_argument(
            "--variant",
            default="official",
            help="metric variant: " + ", ".join(choice.value for choice in SPEC.variants),
        )
        parser.add_argument("--json", action="store_true", help="print the curve as JSON")

    def handle(self, *args, **options):
        problem = SPEC.variant_problem(options["variant"])
        if problem:
            raise CommandError(problem)
        files = {name: read(options[name]) for name in ("gt", "predictions")}
        try:
            scored = SPEC.score_files(
                ScoringFiles(
                    files["gt"],
                    files["predictions"],
                    variant=options["variant"],
                    ground_truth_source=options["gt"].name,
                    predictions_source=options["predictions"].name,
                )
            )
        except FormatError as error:
            raise CommandError(error.describe()) from None
        except ValueError as error:
            raise CommandError(str(error)) from None
        summary = scored.summary
        tau = summary["parameters"]["tau"]
        if options["json"]:
            self.stdout.write(
                json.dumps({"variant": options["variant"], "tau": tau, "by_tau": summary["by_tau"]})
            )
            return
        for note in scored.problems:
            self.stderr.write(f"note: {note}")
        self.stdout.write(f"variant {options['variant']} (its own tau: {tau:g}, marked *)")
        self.stdout.write(f"{'tau':>6}  {'TC':>6}  {'CLC':>6}")
        for key, values in summary["by_tau"].items():
            mark = " *" if float(key) == tau else ""
            self.stdout.write(
                f"{key:>6}  {format_value(values['TC']):>6}  {format_value(values['CLC']):>6}{mark}"
            )


def read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as error:
        raise CommandError(f"cannot read {path}: {error.strerror}") from None
