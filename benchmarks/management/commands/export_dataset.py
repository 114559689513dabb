"""python manage.py export_dataset <dataset> <path> [--scenes PATH]"""

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from benchmarks import registry
from benchmarks.selectors import DatasetNotFound, find_dataset
from benchmarks.services import ImportRefused, export_dataset


class Command(BaseCommand):
    help = "Write a dataset back as its benchmark's official file (and, with --scenes, its scenes file)."

    def add_arguments(self, parser):
        parser.add_argument("dataset", help="the dataset's id, or its name when that is unique")
        parser.add_argument("path", type=Path, help="where to write the official file")
        parser.add_argument(
            "--scenes", type=Path, help=f"also write the scenes file here ({registry.scenes_titles()})"
        )
        parser.add_argument("--json", action="store_true", help="print the result as JSON")

    def handle(self, *args, **options):
        try:
            dataset = find_dataset(options["dataset"])
        except DatasetNotFound as error:
            raise CommandError(str(error)) from None
        path: Path = options["path"]
        for target in (path, options["scenes"]):
            if target is not None and not target.resolve().parent.is_dir():
                raise CommandError(f"folder {target.resolve().parent} does not exist")
        try:
            export_dataset(dataset=dataset, path=path, scenes_path=options["scenes"])
        except ImportRefused as error:
            raise CommandError(str(error)) from None
        except OSError as error:
            raise CommandError(f"cannot write {path}: {error.strerror}") from None
        if options["json"]:
            self.stdout.write(json.dumps({"id": dataset.pk, "path": str(path), "items": dataset.item_count}))
        else:
            self.stdout.write(f"Wrote {dataset.item_count} items of {dataset} to {path}")
