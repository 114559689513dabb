"""python manage.py copy_store export|import FOLDER [--store media,uploads,checkpoints]

Copy the site's stored files between its stores (local folders or an S3-compatible bucket) and a
folder on this machine, one subfolder per store: `export` brings FOLDER up to date with the stores
(a file whose copy has the stored size is not fetched again, a copy the store no longer has is
removed), so that deploy/backup.sh can keep dated, hard-linked backups of it; `import` puts every
file of FOLDER into the stores under its name (restoring a backup, or moving a site's local files
into a bucket).
"""

from __future__ import annotations

import os
from pathlib import Path

from django.core.files import File
from django.core.management.base import BaseCommand, CommandError

from benchmarks.storage import STORES, fetch, is_copy, walk


class Command(BaseCommand):
    help = "Copy the stored files (media, uploads, checkpoints) to a folder (export) or from one (import)."

    def add_arguments(self, parser):
        parser.add_argument("direction", choices=["export", "import"])
        parser.add_argument("folder", type=Path)
        parser.add_argument(
            "--store",
            default=",".join(STORES),
            help=f"which stores, comma-separated (default: {','.join(STORES)})",
        )

    def handle(self, *args, direction: str, folder: Path, store: str, **options):
        chosen = [name.strip() for name in store.split(",") if name.strip()]
        unknown = sorted(set(chosen) - set(STORES))
        if unknown:
            raise CommandError(f"--store: no store {', '.join(unknown)} (there are: {', '.join(STORES)})")
        try:
            readable = folder.is_dir() and os.access(folder, os.R_OK | os.X_OK)
        except OSError:
            readable = False
        if direction == "import" and not readable:
            raise CommandError(
                f"{folder}: no such folder, or this user ({os.getuid()}) may not read it "
                "(backup.sh writes root-only backups: run the import as root)"
            )
        for name in chosen:
            target = folder / name
            if direction == "export":
                fetched, kept, removed = export(STORES[name], target)
                self.stdout.write(
                    f"{name}: {fetched} fetched, {kept} unchanged, {removed} removed -> {target}"
                )
            else:
                sent = restore(STORES[name], target)
                self.stdout.write(f"{name}: {sent} files stored from {target}")


def export(store, target: Path) -> tuple[int, int, int]:
    stored = {name: (size, modified) for name, size, modified in walk(store)}
    fetched = kept = removed = 0
    for name, (size, modified) in stored.items():
        copy = target / name
        if is_copy(copy, size, modified):  # a copy takes its file's time: one replaced is fetched again
            kept += 1
            continue
        fetch(store, name, copy, modified)
        fetched += 1
    if target.is_dir():
        for path in sorted(target.rglob("*"), reverse=True):
            relative = path.relative_to(target).as_posix()
            if path.is_file() and relative not in stored:
                path.unlink()
                removed += 1
            elif path.is_dir() and not any(path.iterdir()):
                path.rmdir()
    return fetched, kept, removed


def restore(store, source: Path) -> int:
    sent = 0
    if not source.is_dir():
        return 0
    for directory, _folders, files in os.walk(source, onerror=unreadable):
        for file_name in sorted(files):
            path = Path(directory) / file_name
            name = path.relative_to(source).as_posix()
            if store.exists(name):
                store.delete(name)  # the backup's bytes, under the same name
            with path.open("rb") as handle:
                saved = store.save(name, File(handle, name=file_name))
            if saved != name:
                raise CommandError(f"the store kept {name} as {saved}")
            sent += 1
    return sent


def unreadable(error: OSError) -> None:
    raise CommandError(
        f"{error.filename}: {error.strerror} (run the import as a user who may read the backup)"
    )
