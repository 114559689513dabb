"""python manage.py generate_trance --count N --out DIR --seed S [--workers K] [--no-images] [--json]
[--lengths 1 ...] [--cameras Camera_Center ...]"""

import json
import os
import sys
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from plugins.trance.formats import FINAL_CAMERAS
from plugins.trance.generator import LENGTHS, GenerationError, generate


class Command(BaseCommand):
    help = (
        "Generate a balanced TRANCE dataset: data.jsonl in the released simple format and four "
        "320x240 renders per sample, in one folder. The same seed gives the same files."
    )

    def add_arguments(self, parser):
        parser.add_argument("--count", type=int, required=True, help="number of samples")
        parser.add_argument(
            "--out",
            type=Path,
            required=True,
            help="folder to write into (created; same-named files replaced)",
        )
        parser.add_argument("--seed", type=int, required=True, help="random seed")
        parser.add_argument("--workers", type=int, default=1, help="rendering processes (default 1)")
        parser.add_argument("--no-images", action="store_true", help="write data.jsonl only, no renders")
        parser.add_argument("--json", action="store_true", help="print the result as JSON")
        parser.add_argument(
            "--lengths",
            type=int,
            nargs="+",
            choices=LENGTHS,
            default=LENGTHS,
            help="transformation lengths to draw (default all; 1: single-step samples, for Basic training data)",
        )
        parser.add_argument(
            "--cameras",
            nargs="+",
            choices=FINAL_CAMERAS,
            default=FINAL_CAMERAS,
            help="final views to render (default all three; the initial Center view is always rendered)",
        )

    def handle(self, *args, **options):
        count: int = options["count"]
        workers: int = options["workers"]
        out: Path = options["out"]
        if count < 1:
            raise CommandError(f"--count must be at least 1, got {count}")
        if workers < 1:
            raise CommandError(f"--workers must be at least 1, got {workers}")
        check_output_folder(out)
        bar = None
        if not options["json"] and options["verbosity"] > 0:
            bar = tqdm(total=count, desc="samples", unit="sample", file=sys.stderr, leave=False)

        def progress(done: int, total: int) -> None:
            if bar is not None:
                bar.update(done - bar.n)

        try:
            report = generate(
                out,
                count=count,
                seed=options["seed"],
                workers=workers,
                render_images=not options["no_images"],
                lengths=options["lengths"],
                final_cameras=options["cameras"],
                progress=progress,
            )
        except GenerationError as error:
            raise CommandError(str(error)) from None
        except OSError as error:
            raise CommandError(f"cannot write into {out}: {error.strerror or error}") from None
        finally:
            if bar is not None:
                bar.close()
        if options["json"]:
            self.stdout.write(json.dumps(report.as_dict()))
        else:
            self.stdout.write(report.describe())


def check_output_folder(out: Path) -> None:
    """Refuse, before writing anything, a path that is a file or a folder that cannot be made or written."""
    if out.exists():
        if not out.is_dir():
            raise CommandError(f"{out} is not a folder")
        if not os.access(out, os.W_OK | os.X_OK):
            raise CommandError(f"cannot write into {out}: permission denied")
        return
    ancestor = out.absolute().parent
    while not ancestor.exists():
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        raise CommandError(f"cannot create {out}: {ancestor} is not a folder")
    if not os.access(ancestor, os.W_OK | os.X_OK):
        raise CommandError(f"cannot create {out}: {ancestor} is not writable")
