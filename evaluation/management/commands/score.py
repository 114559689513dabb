"""python manage.py score <benchmark> --gt FILE --predictions FILE [...]: scoring from files alone."""

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from benchmarks.records import FormatError
from benchmarks.registry import BENCHMARKS, UnknownBenchmark, canonical_name
from evaluation.metrics.scored import Scored


class Command(BaseCommand):
    help = (
        "Score a prediction file against a ground-truth file with the same metric code the app uses. "
        "Needs no database. Prints the summary; --details writes one JSON line per item."
    )
    requires_system_checks = []

    def add_arguments(self, parser):
        parser.add_argument("benchmark", help=f"one of {', '.join(BENCHMARKS)}")
        parser.add_argument("--gt", type=Path, required=True, help="ground truth in the official format")
        parser.add_argument("--predictions", type=Path, required=True, help="the predictions file")
        parser.add_argument("--scenes", type=Path, help="CLEVR-Ref+ scenes file (needed for CLEVR-Ref+)")
        parser.add_argument("--setting", choices=["basic", "event", "view"], help="TRANCE setting")
        parser.add_argument(
            "--variant", choices=["official", "paper"], default="official", help="STE-VQA variant"
        )
        parser.add_argument(
            "--details", type=Path, help="write per-item values here, one JSON object per line"
        )
        parser.add_argument("--json", action="store_true", help="print the summary as JSON")

    def handle(self, *args, **options):
        try:
            benchmark = canonical_name(options["benchmark"])
        except UnknownBenchmark as error:
            raise CommandError(str(error)) from None
        if options["details"] is not None and not options["details"].resolve().parent.is_dir():
            raise CommandError(f"folder {options['details'].resolve().parent} does not exist")
        try:
            scored = score_files(benchmark, options)
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


def read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as error:
        raise CommandError(f"cannot read {path}: {error.strerror}") from None


def score_files(benchmark: str, options: dict) -> Scored:
    """Dispatch to the benchmark's metric module; its own checks name bad records and fields."""
    gt, predictions = read(options["gt"]), read(options["predictions"])
    names = {"gt_source": options["gt"].name, "pred_source": options["predictions"].name}
    if benchmark == "trance":
        from evaluation.metrics import trance

        if options["setting"] is None:
            raise CommandError("TRANCE needs --setting basic, event or view")
        return trance.score_file(
            gt,
            predictions,
            setting=options["setting"],
            gt_source=names["gt_source"],
            predictions_source=names["pred_source"],
        )
    if benchmark == "stevqa":
        from evaluation.metrics import stevqa

        return stevqa.score_file(gt, predictions, variant=options["variant"], **names)
    if benchmark == "cric":
        from evaluation.metrics import cric

        return cric.score_file(
            gt, predictions, questions_source=names["gt_source"], predictions_source=names["pred_source"]
        )
    from evaluation.metrics import clevrref

    if options["scenes"] is None:
        raise CommandError("CLEVR-Ref+ needs --scenes (the scenes file with the objects' masks)")
    return clevrref.score_file(gt, read(options["scenes"]), predictions)
