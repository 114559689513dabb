"""python manage.py generate_clevrref --count N --out DIR [--seed S] [--false-premise SHARE] [--json]"""

import json
import sys
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from plugins.clevrref.expressions import generate


class Command(BaseCommand):
    help = (
        "Generate a CLEVR-Ref+ style dataset: N rendered CLEVR scenes (DIR/images), their scenes file "
        "(DIR/clevrref_scenes.json) and referring expressions (DIR/clevrref_refexps.json), ready for "
        "import_dataset. The same seed gives the same files."
    )

    def add_arguments(self, parser):
        parser.add_argument("--count", type=int, required=True, help="number of images (at least 1)")
        parser.add_argument("--out", type=Path, required=True, help="output folder (created if missing)")
        parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
        parser.add_argument(
            "--expressions-per-image", type=int, default=5, help="expressions wanted per image (default 5)"
        )
        parser.add_argument("--split", default="val", help="split name used in file names (default val)")
        parser.add_argument(
            "--false-premise",
            type=float,
            default=0.0,
            metavar="SHARE",
            help=(
                "share of expressions, 0 to 1, that refer to no object (false premises, scored apart as "
                "false_premise); default 0: none, the files are as without the option"
            ),
        )
        parser.add_argument("--json", action="store_true", help="print the result as JSON")

    def handle(self, *args, **options):
        count: int = options["count"]
        out: Path = options["out"]
        if count < 1:
            raise CommandError(f"--count must be at least 1, got {count}")
        if options["expressions_per_image"] < 1:
            raise CommandError(
                f"--expressions-per-image must be at least 1, got {options['expressions_per_image']}"
            )
        if not options["split"].isidentifier():
            raise CommandError(f"--split must be a plain word such as val or train, got {options['split']!r}")
        share = options["false_premise"]
        if not 0 <= share <= 1:
            raise CommandError(f"--false-premise must be a share between 0 and 1, got {share}")
        prepare_output(out)
        show_bar = not options["json"] and options["verbosity"] > 0
        bar = tqdm(total=count, desc="images", unit="img", file=sys.stderr, leave=False, disable=not show_bar)

        def progress(done: int, total: int) -> None:
            bar.update(done - bar.n)

        try:
            files = generate(
                out,
                images=count,
                seed=options["seed"],
                expressions_per_image=options["expressions_per_image"],
                split=options["split"],
                progress=progress,
                false_premise_share=share,
            )
        except OSError as error:
            raise CommandError(f"cannot write to {out}: {error.strerror or error}") from None
        finally:
            bar.close()
        summary = {
            "images": files.image_count,
            "expressions": files.refexp_count,
            "images_dir": str(files.images_dir),
            "scenes_file": str(files.scenes_file),
            "refexps_file": str(files.refexps_file),
            "seed": options["seed"],
            "false_premises": files.false_premise_count,
        }
        if options["json"]:
            self.stdout.write(json.dumps(summary))
        else:
            false_premises = f" ({files.false_premise_count} false premises)" if share else ""
            self.stdout.write(
                f"Generated {summary['images']} images and {summary['expressions']} expressions"
                f"{false_premises} in {out}"
            )


def prepare_output(out: Path) -> None:
    """Refuse an output path that is a file or cannot be created, before anything is written."""
    if out.exists() and not out.is_dir():
        raise CommandError(f"--out {out} exists and is not a folder")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise CommandError(f"cannot create --out {out}: {error.strerror or error}") from None
