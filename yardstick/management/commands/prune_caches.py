"""python manage.py prune_caches [--older-than DAYS] [--dry-run]

Empty this host's caches of what is no longer needed, and with --older-than of what was not read
for that long: the file cache (YARDSTICK_FILE_CACHE_DIR: copies of stored files: a dataset's images,
checkpoints) and the inputs cache (YARDSTICK_INFERENCE_CACHE_DIR: decoded, resized images). Anything
removed that is needed again is fetched or decoded again; nothing else is touched. Run it on each
host, e.g. weekly from a timer (docs/production.md, "Caches").

Always removed: the copies of deleted datasets' images, copies of checkpoints the store no longer
has, and leftovers of interrupted writes (a `.part` copy, a temporary folder or inputs cache file
older than a day). With --older-than DAYS also: a dataset's copies not read for DAYS (the time of
its folder's `.used` file), the checkpoint copies when none was read for DAYS, and inputs cache
files not read for DAYS (their time is set on each read).
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from benchmarks.models import Dataset
from benchmarks.storage import USED, checkpoints, is_local, listing

DAY = 86400
#: A leftover of a write is at least this old (a write in progress is younger).
LEFTOVER_S = DAY


class Command(BaseCommand):
    help = "Empty this host's file and inputs caches of what is no longer needed (and, --older-than, unused)."

    def add_arguments(self, parser):
        parser.add_argument(
            "--older-than", type=float, default=None, metavar="DAYS", help="also what was not read for DAYS"
        )
        parser.add_argument("--dry-run", action="store_true", help="say what would go, remove nothing")

    def handle(self, *args, older_than: float | None, dry_run: bool, **options):
        if older_than is not None and older_than < 0:
            raise CommandError("--older-than: expected a number of days of at least 0")
        self.now = time.time()
        self.unused_since = None if older_than is None else self.now - older_than * DAY
        self.dry_run = dry_run
        self.freed = self.count = 0
        self.file_cache(Path(settings.FILE_CACHE_DIR))
        self.inputs_cache(Path(settings.INFERENCE_CACHE_DIR))
        verb = "would free" if dry_run else "freed"
        self.stdout.write(f"{self.count} removed, {verb} {self.freed / 2**20:.1f} MB")

    # --- what goes ------------------------------------------------------------------------------

    def remove(self, path: Path, why: str) -> None:
        size = (
            sum(entry.stat().st_size for entry in path.rglob("*") if entry.is_file())
            if path.is_dir()
            else path.stat().st_size
        )
        self.stdout.write(f"{'would remove' if self.dry_run else 'removed'} {path} ({why})")
        self.freed += size
        self.count += 1
        if not self.dry_run:
            shutil.rmtree(path, ignore_errors=True) if path.is_dir() else path.unlink(missing_ok=True)

    def unused(self, path: Path) -> bool:
        if self.unused_since is None:
            return False
        try:
            return path.stat().st_mtime < self.unused_since
        except OSError:
            return True  # never marked as read

    def old(self, path: Path) -> bool:
        try:
            return path.stat().st_mtime < self.now - LEFTOVER_S
        except OSError:
            return False

    # --- the file cache -------------------------------------------------------------------------

    def file_cache(self, root: Path) -> None:
        if not root.is_dir():
            return
        for part in sorted(root.rglob("*.part")):
            if self.old(part):
                self.remove(part, "an interrupted copy")
        for folder in sorted((root / "tmp").glob("*")) if (root / "tmp").is_dir() else []:
            if self.old(folder):
                self.remove(folder, "an interrupted read of an upload")
        datasets = root / "media" / "datasets"
        if datasets.is_dir():
            folders = {folder.name: folder for folder in datasets.iterdir() if folder.is_dir()}
            existing = {
                str(pk)
                for pk in Dataset.objects.filter(pk__in=[n for n in folders if n.isdigit()]).values_list(
                    "pk", flat=True
                )
            }
            for name, folder in sorted(folders.items()):
                if name not in existing:
                    self.remove(folder, "its dataset was deleted")
                elif self.unused(folder / USED):
                    self.remove(folder, "not read since the time asked")
        copies = root / "checkpoints"
        if copies.is_dir() and not is_local(checkpoints):
            stored = set(listing(checkpoints, ""))
            everything_unused = self.unused(copies / USED)
            for copy in sorted(path for path in copies.iterdir() if path.is_file() and path.name != USED):
                if copy.name not in stored:
                    self.remove(copy, "the store no longer has it")
                elif everything_unused:
                    self.remove(copy, "no checkpoint read since the time asked")

    # --- the inputs cache -----------------------------------------------------------------------

    def inputs_cache(self, root: Path) -> None:
        if not root.is_dir():
            return
        for path in sorted(root.rglob("*")):
            if not path.is_file():
                continue
            if path.suffix == ".tmp" and self.old(path):
                self.remove(path, "an interrupted write")
            elif path.suffix == ".imgcache" and self.unused(path):
                self.remove(path, "not read since the time asked")
