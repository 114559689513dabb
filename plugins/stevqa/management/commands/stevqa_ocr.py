"""python manage.py stevqa_ocr --gt FILE --images DIR --out FILE [--image-pattern P] [--json]"""

import json
import sys
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from benchmarks.records import FormatError
from plugins.stevqa import formats
from plugins.stevqa.ocr import attach_tokens, check_image_pattern


class Command(BaseCommand):
    help = (
        "Read the text in each image of an STE-VQA ground-truth file with the project's OCR (RapidOCR, "
        "PP-OCRv4 Chinese + English, on the CPU) and write the file again with each record's tokens as "
        "ocr_tokens: what the metric's ocr and paper-ocr variants give answer-only predictions their "
        "evidence from. Import or score the written file. Needs no database."
    )
    requires_system_checks = []

    def add_arguments(self, parser):
        parser.add_argument("--gt", type=Path, required=True, help="ground truth in the official format")
        parser.add_argument("--images", type=Path, required=True, help="the folder of the images")
        parser.add_argument("--out", type=Path, required=True, help="where to write the file with OCR tokens")
        parser.add_argument(
            "--image-pattern",
            default="",
            help="the image of a test record, which names none, e.g. '{question_id}.jpg' "
            "(training records name theirs)",
        )
        parser.add_argument("--json", action="store_true", help="print the counts as JSON")

    def handle(self, *args, **options):
        images: Path = options["images"]
        out: Path = options["out"]
        if not images.is_dir():
            raise CommandError(f"--images {images} is not a folder")
        if not out.resolve().parent.is_dir():
            raise CommandError(f"folder {out.resolve().parent} does not exist")
        try:
            check_image_pattern(options["image_pattern"])
        except ValueError as error:
            raise CommandError(str(error)) from None
        try:
            data = options["gt"].read_bytes()
        except OSError as error:
            raise CommandError(f"cannot read {options['gt']}: {error.strerror}") from None
        try:
            formats.parse(data, source=options["gt"].name)
        except FormatError as error:
            raise CommandError(error.describe()) from None
        document = json.loads(data)

        from plugins.stevqa.baselines import SceneText

        scene_text = SceneText()

        def read(name: str) -> list[dict[str, Any]] | None:
            path = images / name
            if not path.is_file():
                path = images / Path(name).name
            if not path.is_file():
                return None
            return [{"text": token.text, "quad": token.evidence()} for token in scene_text.tokens(str(path))]

        show_bar = not options["json"] and options["verbosity"] > 0
        bar = tqdm(total=len(document), desc="records", file=sys.stderr, leave=False, disable=not show_bar)
        try:
            counts = attach_tokens(
                document,
                read,
                image_pattern=options["image_pattern"],
                progress=lambda done, total: bar.update(done - bar.n),
            )
        finally:
            bar.close()
        try:
            out.write_text(json.dumps(document, ensure_ascii=False), encoding="utf-8")
        except OSError as error:
            raise CommandError(f"cannot write {out}: {error.strerror or error}") from None
        if options["json"]:
            self.stdout.write(json.dumps({**counts, "out": str(out)}))
            return
        self.stdout.write(
            f"OCR tokens for {counts['read']} of {counts['records']} records ({counts['tokens']} tokens) "
            f"written to {out}"
        )
        if counts["no_image"]:
            self.stderr.write(
                f"note: {counts['no_image']} records name no image (test records: give --image-pattern)"
            )
        if counts["missing"]:
            self.stderr.write(f"note: {counts['missing']} records' images are not in {images}")
