"""python manage.py store_checkpoint FILE [--name NAME]

Put a checkpoint file where the run form offers it: CHECKPOINT_DIR, or checkpoints/ of the object
store when the site keeps its files there (then every worker fetches it when a run names it).
"""

from pathlib import Path

from django.core.files import File
from django.core.management.base import BaseCommand, CommandError

from benchmarks.storage import checkpoints


class Command(BaseCommand):
    help = "Store a checkpoint (*.pt) where the run form offers it (CHECKPOINT_DIR or the object store)."

    def add_arguments(self, parser):
        parser.add_argument("file", type=Path, help="the checkpoint file to store")
        parser.add_argument("--name", default="", help="its name on the run form (default: the file's name)")

    def handle(self, *args, **options):
        source: Path = options["file"]
        name = options["name"] or source.name
        if not source.is_file():
            raise CommandError(f"{source}: no such file")
        if not name.endswith(".pt") or "/" in name or "\\" in name or name.startswith("."):
            raise CommandError(f"name {name!r}: expected a file name ending in .pt, without folders")
        if checkpoints.exists(name):
            checkpoints.delete(name)
        with source.open("rb") as handle:
            stored = checkpoints.save(name, File(handle, name=name))
        self.stdout.write(f"stored {source} as {stored}: the run form offers it as {Path(stored).name}")
