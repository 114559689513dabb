"""python manage.py import_dataset <benchmark> <path> --name N [--split S] [--images DIR]"""

import json
import sys
from pathlib import Path
from typing import BinaryIO

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from benchmarks import registry
from benchmarks.records import FormatError
from benchmarks.selectors import dataset_summary
from benchmarks.services import ImportRefused, import_dataset


class Command(BaseCommand):
    help = (
        "Import an official benchmark file as a new dataset. All or nothing: a bad file loads "
        "nothing and every bad record is listed with its line or index and field."
    )

    def add_arguments(self, parser):
        parser.add_argument("benchmark", help=f"one of {', '.join(registry.names())}")
        parser.add_argument(
            "path", type=Path, help="the official file (JSON list, data.jsonl or refexp JSON)"
        )
        parser.add_argument("--name", required=True, help="the dataset's name")
        parser.add_argument("--split", default="", help="train, val, test... (optional)")
        parser.add_argument("--dataset-version", default="1", help="the dataset's version (default 1)")
        parser.add_argument("--images", type=Path, help="folder holding the images the file references")
        parser.add_argument("--scenes", type=Path, help=f"the scenes file of {registry.scenes_titles()}")
        parser.add_argument("--json", action="store_true", help="print the result as JSON")

    def handle(self, *args, **options):
        try:
            registry.get(options["benchmark"])
        except registry.UnknownBenchmark as error:
            raise CommandError(str(error)) from None
        path: Path = options["path"]
        data = open_file(path)  # streamed where the format allows (bounded memory)
        scenes_path: Path | None = options["scenes"]
        scenes_data = read_file(scenes_path) if scenes_path else None
        bar = None
        show_bar = not options["json"] and options["verbosity"] > 0

        def progress(stage: str, done: int, total: int) -> None:
            nonlocal bar
            if not show_bar or not total or stage == "done":
                return
            if bar is None or bar.desc != stage:
                if bar is not None:
                    bar.close()
                bar = tqdm(total=total, desc=stage, unit="rec", file=sys.stderr, leave=False)
            bar.update(done - bar.n)

        try:
            dataset = import_dataset(
                benchmark=options["benchmark"],
                data=data,
                name=options["name"],
                split=options["split"],
                version=options["dataset_version"],
                source=path.name,
                images_dir=options["images"],
                scenes_data=scenes_data,
                scenes_source=scenes_path.name if scenes_path else "",
                progress=progress,
            )
        except FormatError as error:
            raise CommandError(error.describe()) from None
        except ImportRefused as error:
            raise CommandError(str(error)) from None
        finally:
            data.close()
            if bar is not None:
                bar.close()
        summary = dataset_summary(dataset)
        if options["json"]:
            self.stdout.write(json.dumps(summary))
        else:
            self.stdout.write(
                f"Imported {summary['items']} items into dataset {dataset.pk} ({dataset})"
                + ("" if dataset.has_media else ", without images (scoring only)")
            )


def open_file(path: Path) -> BinaryIO:
    try:
        return path.open("rb")
    except OSError as error:
        raise CommandError(f"cannot read {path}: {error.strerror}") from None


def read_file(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as error:
        raise CommandError(f"cannot read {path}: {error.strerror}") from None
