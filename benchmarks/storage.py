"""Where the app's files live: dataset media, uploads and checkpoints, through Django's storage API.

Three stores, named in settings.STORAGES: ``media`` (each dataset's images under
``datasets/<id>/``), ``uploads`` (import files waiting for their job, prediction files, model runs'
predictions and audits: never served as they are) and ``checkpoints`` (``*.pt`` files offered on
the run form). By default they are folders on this machine (MEDIA_ROOT, UPLOADS_ROOT,
CHECKPOINT_DIR); with YARDSTICK_S3_BUCKET set they are prefixes of one bucket of an S3-compatible
store, so that a worker on another host needs nothing but the settings.

Code that needs a file by path (an image decoder, an OCR engine, PyTorch loading a checkpoint, a
zip reader) asks for a *local copy*: the file itself when the store is a local folder, else a copy
in FILE_CACHE_DIR, fetched once and again only when the stored file changed (a copy takes its
stored file's time; one of another size or time is fetched again).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import uuid
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

from django.conf import settings
from django.core.files import File
from django.core.files.storage import FileSystemStorage, Storage, storages
from django.core.signals import setting_changed
from django.utils.deconstruct import deconstructible
from django.utils.functional import LazyObject, empty

#: Files fetched or sent at once to or from a remote store (django-storages keeps a boto3
#: connection per thread).
TRANSFER_THREADS = 8


@deconstructible
class UploadStorage(FileSystemStorage):
    """The local uploads store: UPLOADS_ROOT (var/uploads by default), outside the media folder, so
    no URL reaches an upload: an official file holds every answer."""

    @property
    def base_location(self):
        return settings.UPLOADS_ROOT

    @property
    def location(self):
        return os.path.abspath(self.base_location)

    @property
    def base_url(self):
        return None


@deconstructible
class CheckpointStorage(UploadStorage):
    """The local checkpoints store: CHECKPOINT_DIR (var/checkpoints by default)."""

    @property
    def base_location(self):
        return settings.CHECKPOINT_DIR


class StoreAlias(LazyObject):
    """The store settings.STORAGES names `alias`, looked up when first used and again after the
    setting changes (tests point it at another store)."""

    def __init__(self, alias: str):
        super().__init__()
        self.__dict__["alias"] = alias

    def _setup(self):
        self._wrapped = storages[self.__dict__["alias"]]


media = StoreAlias("media")
uploads = StoreAlias("uploads")
checkpoints = StoreAlias("checkpoints")
#: Every store by name (as settings.STORAGES and the bucket's prefixes name them).
STORES = {"media": media, "uploads": uploads, "checkpoints": checkpoints}


def upload_storage() -> Storage:
    """The uploads store, for FileField(storage=...): a callable, so migrations name it, not a backend."""
    return uploads


def reset_stores(*, setting: str, **kwargs) -> None:
    if setting in {"STORAGES", "UPLOADS_ROOT", "CHECKPOINT_DIR", "MEDIA_ROOT"}:
        for store in (media, uploads, checkpoints):
            store._wrapped = empty


setting_changed.connect(reset_stores)


def resolved(store: Storage) -> Storage:
    """The backend behind a store alias (the store itself otherwise)."""
    if isinstance(store, LazyObject):
        if store._wrapped is empty:
            store._setup()
        return store._wrapped
    return store


def is_local(store: Storage) -> bool:
    """Whether the store is a folder of this machine (its files have paths)."""
    return isinstance(resolved(store), FileSystemStorage)


def alias_of(store: Storage) -> str:
    return store.__dict__.get("alias", "files") if isinstance(store, StoreAlias) else "files"


# --- local copies ---------------------------------------------------------------------------------


def cache_path(store: Storage, name: str) -> Path:
    return Path(settings.FILE_CACHE_DIR) / alias_of(store) / name


#: A file in each folder of the file cache whose time says when the folder was last read from
#: (`manage.py prune_caches --older-than` goes by it).
USED = ".used"


def mark_used(folder: Path) -> None:
    with contextlib.suppress(OSError):  # a cache that cannot be marked is still a cache
        (folder / USED).touch()


def stored_stat(store: Storage, name: str) -> tuple[int, float]:
    """The stored file's size and when it was last written (a POSIX time); FileNotFoundError."""
    bucket = getattr(store, "bucket", None)
    if bucket is None:
        return store.size(name), store.get_modified_time(name).timestamp()
    stored = bucket.Object(store._normalize_name(name))
    try:
        stored.load()
    except Exception as error:
        if _missing(error):
            raise FileNotFoundError(name) from None
        raise
    return stored.content_length, stored.last_modified.timestamp()


def is_copy(path: Path, size: int, modified: float) -> bool:
    """Whether `path` is a copy of a stored file of this size written at `modified`: copies take
    the stored file's time, so a file replaced by one of the same size is fetched again."""
    try:
        found = path.stat()
    except OSError:
        return False
    return found.st_size == size and abs(found.st_mtime - modified) < 0.001


def local_path(store: Storage, name: str, *, checked: bool = False) -> Path:
    """A path on this machine holding the stored file `name`; FileNotFoundError when the store has none.

    A local store's own file; else a copy in FILE_CACHE_DIR, fetched when missing (or, `checked`,
    when its size or time differs from the store's: for files replaced under their name, such as
    checkpoints; a dataset's media never is)."""
    if is_local(store):
        path = Path(store.path(name))
        if not path.is_file():
            raise FileNotFoundError(name)
        return path
    target = cache_path(store, name)
    if not checked:
        if not target.is_file():
            fetch(store, name, target)
    else:
        size, modified = stored_stat(store, name)
        if not is_copy(target, size, modified):
            fetch(store, name, target, modified)
    mark_used(target.parent)
    return target


def fetch(store: Storage, name: str, target: Path, modified: float | None = None) -> None:
    """Copy the stored file to `target`, atomically (a reader never sees half a file), with the
    stored file's time (`modified`, else asked of the store)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    draft = target.with_name(f".{target.name}.{uuid.uuid4().hex}.part")
    try:
        if modified is None:
            modified = stored_stat(store, name)[1]
        bucket = getattr(store, "bucket", None)
        if bucket is not None:
            bucket.download_file(store._normalize_name(name), str(draft))
        else:
            with store.open(name, "rb") as source, open(draft, "wb") as copy:
                shutil.copyfileobj(source, copy, 1 << 20)
        os.utime(draft, (modified, modified))
        os.replace(draft, target)
    except Exception as error:
        draft.unlink(missing_ok=True)
        if _missing(error):
            raise FileNotFoundError(name) from None
        raise


def _missing(error: Exception) -> bool:
    if isinstance(error, FileNotFoundError):
        return True
    response = getattr(error, "response", None) or {}
    return str(response.get("Error", {}).get("Code", "")) in {"404", "NoSuchKey", "NotFound"}


def listing(store: Storage, folder: str) -> dict[str, tuple[int, float]]:
    """The files directly in `folder` of the store, by name, with their sizes and times written
    (one listing, not one request per file, on a bucket)."""
    bucket = getattr(store, "bucket", None)
    if bucket is not None:
        prefix = store._normalize_name(folder).rstrip("/") + "/"
        found = {}
        for summary in bucket.objects.filter(Prefix=prefix):
            rest = summary.key[len(prefix) :]
            if rest and "/" not in rest:
                found[rest] = (summary.size, summary.last_modified.timestamp())
        return found
    try:
        _folders, names = store.listdir(folder)
    except FileNotFoundError:
        return {}
    return {name: stored_stat(store, f"{folder}/{name}") for name in names}


def walk(store: Storage) -> Iterator[tuple[str, int, float]]:
    """Every file of the store, at any depth, as (name, size, time written)."""
    bucket = getattr(store, "bucket", None)
    if bucket is not None:
        prefix = store._normalize_name("").rstrip("/")
        prefix = f"{prefix}/" if prefix else ""
        for summary in bucket.objects.filter(Prefix=prefix):
            yield summary.key[len(prefix) :], summary.size, summary.last_modified.timestamp()
        return
    root = Path(store.path(""))
    if not root.is_dir():
        return
    for directory, _folders, files in os.walk(root):
        for file_name in files:
            path = Path(directory) / file_name
            status = path.stat()
            yield path.relative_to(root).as_posix(), status.st_size, status.st_mtime


def local_folder(store: Storage, folder: str, names: Iterable[str] | None = None) -> Path:
    """A folder on this machine holding the stored files of `folder` (those of `names` only, when
    given): the store's own folder when it is local, else the cache's copy, with whatever is missing
    or changed (size or time written) fetched now, several files at a time."""
    if is_local(store):
        return Path(store.path(folder))
    target = cache_path(store, folder)
    stored = listing(store, folder)
    wanted = stored if names is None else {name: stored[name] for name in set(names) if name in stored}
    missing = [
        (name, modified)
        for name, (size, modified) in wanted.items()
        if not is_copy(target / name, size, modified)
    ]
    if missing:
        target.mkdir(parents=True, exist_ok=True)
        with ThreadPoolExecutor(TRANSFER_THREADS) as pool:
            list(
                pool.map(
                    lambda entry: fetch(store, f"{folder}/{entry[0]}", target / entry[0], entry[1]), missing
                )
            )
    if target.is_dir():
        mark_used(target)
    return target


@contextmanager
def local_copy(stored) -> Iterator[Path]:
    """A path to a FieldFile's contents for the time of the block: the file itself on a local
    store, else a temporary copy removed afterwards (an upload is read once)."""
    if is_local(stored.storage):
        yield Path(stored.path)
        return
    with tempfile.TemporaryDirectory(prefix="yardstick-fetch-", dir=_temp_root()) as folder:
        target = Path(folder) / Path(stored.name).name
        fetch(stored.storage, stored.name, target)
        yield target


def _temp_root() -> str:
    root = Path(settings.FILE_CACHE_DIR) / "tmp"
    root.mkdir(parents=True, exist_ok=True)
    return str(root)


# --- dataset media --------------------------------------------------------------------------------


def save_folder(store: Storage, files: dict[str, Path], folder: str, progress=None) -> None:
    """Put `files` (name -> path on this machine) into `folder` of the store under their names:
    hard links or copies on a local store, uploads (several at a time) to a remote one."""
    total = len(files)
    if is_local(store):
        target = Path(store.path(folder))
        target.mkdir(parents=True, exist_ok=True)
        for done, (name, path) in enumerate(files.items(), start=1):
            try:
                os.link(path, target / name)
            except OSError:
                shutil.copyfile(path, target / name)
            if progress is not None and (done % 200 == 0 or done == total):
                progress(done, total)
        return

    def send(item: tuple[str, Path]) -> None:
        name, path = item
        with open(path, "rb") as handle:
            saved = store.save(f"{folder}/{name}", File(handle, name=name))
        if saved != f"{folder}/{name}":
            raise RuntimeError(f"the store kept {name} as {saved}")

    with ThreadPoolExecutor(TRANSFER_THREADS) as pool:
        for done, _ in enumerate(pool.map(send, files.items()), start=1):
            if progress is not None and (done % 200 == 0 or done == total):
                progress(done, total)


def delete_folder(store: Storage, folder: str) -> None:
    """Remove `folder` and its files from the store (nothing there is not an error)."""
    if is_local(store):
        shutil.rmtree(store.path(folder), ignore_errors=True)
        return
    bucket = getattr(store, "bucket", None)
    if bucket is not None:
        bucket.objects.filter(Prefix=store._normalize_name(folder).rstrip("/") + "/").delete()
    else:
        for name in listing(store, folder):
            store.delete(f"{folder}/{name}")
    shutil.rmtree(cache_path(store, folder), ignore_errors=True)


def check_upload_size(upload) -> None:
    """Refuse an uploaded file larger than MAX_UPLOAD_BYTES (a form or serializer validator)."""
    from django.core.exceptions import ValidationError
    from django.utils.translation import gettext as _

    limit = settings.MAX_UPLOAD_BYTES
    if upload is not None and upload.size > limit:
        raise ValidationError(
            _(
                "the file is %(size)s MB, larger than the %(limit)s MB this server accepts "
                "(YARDSTICK_MAX_UPLOAD_MB)"
            )
            % {"size": f"{upload.size / 2**20:.1f}", "limit": f"{limit / 2**20:.0f}"}
        )


def files_removed_with_the_row(*fields: str):
    """A post_delete receiver that removes the files of `fields` once the row's deletion is
    committed: an upload waiting for a worker, deleted with its dataset, leaves nothing behind.
    Connect it with weak=False (it is a closure)."""
    from django.db import transaction

    def receiver(sender, instance, **kwargs):
        for name in fields:
            stored = getattr(instance, name, None)
            if stored and stored.name:
                transaction.on_commit(lambda storage=stored.storage, path=stored.name: storage.delete(path))

    return receiver
