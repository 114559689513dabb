"""python manage.py score <benchmark> --gt FILE --predictions FILE [...]: scoring from files alone."""

import gc
import json
from contextlib import ExitStack
from pathlib import Path
from typing import IO

from django.core.management.base import BaseCommand, CommandError

from benchmarks import registry
from benchmarks.records import FormatError
from benchmarks.spec import BenchmarkSpec, ScoringFiles


def described(choices) -> str:
    return ", ".join(choice.value for choice in choices if choice.value)


class Command(BaseCommand):
    help = (
        "Score a prediction file against a ground-truth file with the same metric code the app uses. "
        "Needs no database. Prints the summary; --details writes one JSON line per item."
    )
    requires_system_checks = []

    def add_arguments(self, parser):
        specs = registry.specs()
        parser.add_argument("benchmark", help=f"one of {', '.join(spec.name for spec in specs)}")
        parser.add_argument("--gt", type=Path, required=True, help="ground truth in the official format")
        parser.add_argument("--predictions", type=Path, required=True, help="the predictions file")
        parser.add_argument(
            "--scenes",
            type=Path,
            help="the scenes file, for "
            + (
                ", ".join(spec.title for spec in specs if spec.scenes_needed_to_score)
                or "benchmarks scored on scenes"
            ),
        )
        parser.add_argument(
            "--setting",
            default="",
            help="; ".join(
                f"{spec.title}: {described(spec.settings)}" for spec in specs if described(spec.settings)
            ),
        )
        parser.add_argument(
            "--variant",
            default="official",
            help="metric variant (default official); "
            + "; ".join(
                f"{spec.title}: {described(spec.variants)}" for spec in specs if len(spec.variants) > 1
            ),
        )
        parser.add_argument(
            "--details", type=Path, help="write per-item values here, one JSON object per line"
        )
        parser.add_argument("--json", action="store_true", help="print the summary as JSON")

    def handle(self, *args, **options):
        if getattr(self, "_called_from_command_line", False):
            # A process of its own (not call_command): what Django loaded lives until the exit, so
            # the collector need not walk it again and again while scoring allocates millions of
            # objects, nor at the interpreter's exit (about 0.3 s of a 3 s scoring run).
            gc.freeze()
        try:
            spec = registry.get(options["benchmark"])
        except registry.UnknownBenchmark as error:
            raise CommandError(str(error)) from None
        if options["details"] is not None and not options["details"].resolve().parent.is_dir():
            raise CommandError(f"folder {options['details'].resolve().parent} does not exist")
        try:
            with ExitStack() as files:
                scored = spec.score_files(files_for(spec, options, files))
        except FormatError as error:
            raise CommandError(error.describe()) from None
        except ValueError as error:
            raise CommandError(str(error)) from None
        if options["details"] is not None:
            with open(options["details"], "w", encoding="utf-8") as stream:
                for row in scored.items:
                    stream.write(json.dumps(row, ensure_ascii=False) + "\n")
        if options["json"]:
            self.stdout.write(
                json.dumps({"summary": scored.summary, "problems": scored.problems}, ensure_ascii=False)
            )
            return
        for problem in scored.problems:
            self.stderr.write(f"note: {problem}")
        self.stdout.write(json.dumps(scored.summary, ensure_ascii=False, indent=2))


def opened(path: Path, spec: BenchmarkSpec, files: ExitStack) -> bytes | IO[bytes]:
    """The file open for reading (closed with `files`) for a benchmark that scores as it reads,
    else its bytes."""
    try:
        stream = files.enter_context(open(path, "rb"))  # noqa: SIM115 - closed by the ExitStack
        return stream if spec.scores_streamed_files else stream.read()
    except OSError as error:
        raise CommandError(f"cannot read {path}: {error.strerror}") from None


def files_for(spec: BenchmarkSpec, options: dict, files: ExitStack) -> ScoringFiles:
    """The files and choices, checked against what the benchmark takes before anything is read."""
    setting, variant = options["setting"], options["variant"]
    if not setting and spec.setting_problem(""):
        raise CommandError(f"{spec.title} needs --setting: one of {described(spec.settings)}")
    problem = spec.setting_problem(setting) or spec.variant_problem(variant)
    if problem:
        raise CommandError(problem)
    if spec.scenes_needed_to_score and options["scenes"] is None:
        raise CommandError(f"{spec.title} needs --scenes (the scenes file the ground truth refers to)")
    return ScoringFiles(
        ground_truth=opened(options["gt"], spec, files),
        predictions=opened(options["predictions"], spec, files),
        scenes=opened(options["scenes"], spec, files) if options["scenes"] is not None else None,
        setting=setting,
        variant=variant,
        ground_truth_source=options["gt"].name,
        predictions_source=options["predictions"].name,
    )
