"""Writes to the catalog: importing official files, exporting them back, finishing import jobs.

An import is all-or-nothing. The file is parsed and checked completely (every bad record
listed), referenced images are looked up, and only then is anything written, inside one
transaction; if that fails, the files copied so far are removed again.
"""

from __future__ import annotations

import logging
import os
import tempfile
import zipfile
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import IO, BinaryIO

import orjson
from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from accounts.inputs import text_problem
from benchmarks import registry
from benchmarks.bulk import insert_rows
from benchmarks.models import Dataset, ImportJob, Item, Scene
from benchmarks.records import (
    NUL_MESSAGE,
    CatalogRecord,
    FormatError,
    RecordError,
    RecordErrors,
    SceneRecord,
    iter_converted,
    nul_fields,
    parse_prepared,
    paused_gc,
)
from benchmarks.storage import delete_folder, local_copy, media, save_folder
from jobs.models import ACTIVE
from jobs.services import beating, clear_progress, enqueue, report_progress, take

#: Called as progress(stage, done, total) while an import runs.
ProgressCallback = Callable[[str, int, int], None]

INSERT_BATCH = 5000
logger = logging.getLogger(__name__)


class ImportRefused(ValueError):
    """The import cannot start (a name already taken, a missing file); nothing was changed."""


def no_progress(stage: str, done: int, total: int) -> None:
    return None


@paused_gc()
def naming_problem(*, name: str, split: str, version: str) -> str | None:
    """What is wrong with a dataset's name, split or version (None when nothing is): each is one
    line of text (they name the dataset's files and downloads), the name is not empty."""
    if not isinstance(name, str) or not name.strip():
        return _("a dataset needs a name")
    for field, value, limit in (("name", name, 200), ("split", split, 50), ("version", version, 50)):
        if not isinstance(value, str):
            return _("%(field)s: expected text") % {"field": field}
        if len(value) > limit:
            return _("%(field)s: at most %(limit)s characters") % {"field": field, "limit": limit}
        if problem := text_problem(value, single_line=True):
            return _("%(field)s: %(problem)s") % {"field": field, "problem": problem}
    return None


def already_exists(*, benchmark: str, name: str, split: str, version: str) -> str:
    """Why a dataset cannot be imported under a name, split and version another one has."""
    return _(
        "a %(benchmark)s dataset named %(name)r (split %(split)s, version %(version)s) already exists"
    ) % {
        "benchmark": benchmark,
        "name": name,
        "split": split or "-",
        "version": version,
    }


def no_records(source: str) -> str:
    """Why an official file that holds nothing is not imported."""
    if source:
        return _("%(source)s holds no records") % {"source": source}
    return _("the file holds no records")


def import_dataset(
    *,
    benchmark: str,
    data: bytes | IO[bytes],
    name: str,
    split: str = "",
    version: str = "1",
    source: str = "",
    images_dir: Path | None = None,
    images_label: str = "",
    scenes_data: bytes | None = None,
    scenes_source: str = "",
    created_by=None,
    progress: ProgressCallback = no_progress,
) -> Dataset:
    """Load one official file (and optionally its scenes and images) as a new Dataset.

    Raises FormatError listing every bad record, or ImportRefused; in both cases nothing changed.
    `images_label` names the images in messages (default: the folder's path).

    `data` is the file's bytes or an open binary file (seekable). From a file, a format that can
    (`prepare_stream`: a JSON list, or JSON Lines) is read one record at a time while
    the rows are written, so memory holds a record and a batch of rows, not the document
    (perf/results/, the import benchmark); with scenes or images every record is needed first, and the
    file is read whole.
    """
    spec = registry.get(benchmark)
    benchmark, module = spec.name, spec.formats
    if problem := naming_problem(name=name, split=split, version=version):
        raise ImportRefused(problem)
    if Dataset.objects.filter(benchmark=benchmark, name=name, split=split, version=version).exists():
        raise ImportRefused(already_exists(benchmark=benchmark, name=name, split=split, version=version))
    if images_dir is not None and not Path(images_dir).is_dir():
        raise ImportRefused(_("images folder %(folder)s does not exist") % {"folder": images_dir})
    if scenes_data is not None and not spec.has_scenes:
        raise ImportRefused(_("%(benchmark)s has no separate scenes file") % {"benchmark": spec.title})

    progress("checking records", 0, 0)
    stream = None if isinstance(data, bytes | bytearray | memoryview) else data
    if (
        stream is not None
        and scenes_data is None
        and images_dir is None
        and hasattr(module, "prepare_stream")
    ):
        prepared = module.prepare_stream(stream, source=source)
        total = 0  # counted as the records are written
        progress = streamed_progress(progress, stream)
    else:
        prepared = module.prepare(stream.read() if stream is not None else data, source=source)
        total = len(prepared.labelled)
        if not total:
            raise ImportRefused(no_records(source))
    errors = RecordErrors()
    scenes_meta: dict = {}
    scenes: list[SceneRecord] = []
    files: dict[str, Path] = {}
    records: Iterable[CatalogRecord]
    if scenes_data is None and images_dir is None:
        # Nothing needs the whole list before writing: records are checked as they are written,
        # so checking and the database's work overlap; any bad record rolls everything back.
        records = iter_converted(prepared.labelled, prepared.convert, errors, id_field=prepared.id_field)
    else:
        records = parse_prepared(prepared, source=source).records
        if scenes_data is not None:
            parsed_scenes = module.parse_scenes(scenes_data, source=scenes_source)
            scenes_meta, scenes = parsed_scenes.meta, parsed_scenes.scenes
            scene_errors = module.check_against_scenes(records, scenes)
            if scene_errors:
                raise FormatError(scene_errors, source=source)
        if images_dir is not None:
            files = locate_media(Path(images_dir), records, scenes, source=source, label=images_label)

    dataset = Dataset(
        benchmark=benchmark,
        name=name,
        split=split,
        version=version,
        source=source,
        meta=prepared.meta,
        scenes_meta=scenes_meta,
        has_media=bool(files),
        item_count=total,
        unit_count=total,
        created_by=created_by,
    )
    folder: str | None = None
    try:
        # Collection paused while the records stream through: each full collection would walk
        # every object the process holds, hundreds of times over a 500,000-record file.
        with paused_gc(), transaction.atomic():
            dataset.save()
            if files:
                folder = dataset.media_folder
                # A folder of this id can only be a leftover of an import that died mid-way.
                delete_folder(media, folder)
                save_folder(media, files, folder, lambda done, total: progress("copying images", done, total))
            scene_ids = save_scenes(dataset, scenes)
            count, units = save_items(
                dataset,
                records,
                scene_ids,
                unit_count=spec.unit_count,
                errors=errors,
                total=total,
                progress=progress,
            )
            if errors:
                raise FormatError(errors, source=source)
            if not count:
                raise ImportRefused(no_records(source))
            if (count, units) != (dataset.item_count, dataset.unit_count):
                dataset.item_count, dataset.unit_count = count, units
                dataset.save(update_fields=["item_count", "unit_count"])
    except BaseException:
        if folder is not None:
            delete_folder(media, folder)
        raise
    progress("done", dataset.item_count, dataset.item_count)
    return dataset


def streamed_progress(progress: ProgressCallback, stream: IO[bytes]) -> ProgressCallback:
    """Progress of a file read as it is written: megabytes read of the file's size, since the
    number of records is known only at the end."""
    start = stream.tell()
    size = stream.seek(0, 2) - start
    stream.seek(start)
    megabyte = 1 << 20

    def report(stage: str, done: int, total: int) -> None:
        if stage == "saving items":
            read = stream.tell() - start if not stream.closed else size
            progress("saving items (MB read)", read // megabyte, max(size // megabyte, 1))
        else:
            progress(stage, done, total)

    return report


def locate_media(
    images_dir: Path, records: list[CatalogRecord], scenes: list[SceneRecord], *, source: str, label: str = ""
) -> dict[str, Path]:
    """Map each referenced file to a file in `images_dir`; report every missing one.

    Official files reference images by bare name or by a path from the authors' machines
    ("/src/assets/img_000000-fin.L.png"), so a file is looked up by its base name, and a scene's
    image also under another extension (scene graphs may name images by id alone). The
    dataset's media folder is flat: keys of the result are base names.
    """
    where = label or str(images_dir)
    available = {entry.name: Path(entry.path) for entry in os.scandir(images_dir) if entry.is_file()}
    by_stem: dict[str, str] = {}
    for file_name in sorted(available):
        by_stem.setdefault(Path(file_name).stem, file_name)
    found: dict[str, Path] = {}
    errors = RecordErrors()
    for record in records:
        for role, reference in record.media.items():
            base = media_name(reference)
            if base in available:
                found[base] = available[base]
            else:
                errors.append(
                    RecordError(
                        f"item {record.external_id}", role, f"file {reference!r} not found in {where}"
                    )
                )
    for scene in scenes:
        if not scene.image:
            continue
        base = media_name(scene.image)
        base = base if base in available else by_stem.get(Path(base).stem)
        if base is None:
            errors.append(
                RecordError(
                    f"scene {scene.external_id}", "image", f"file {scene.image!r} not found in {where}"
                )
            )
        else:
            scene.image = base
            found[base] = available[base]
    if errors:
        raise FormatError(errors, source=source)
    return found


def media_name(reference: str) -> str:
    """The name under which a referenced file is kept in the dataset's flat media folder."""
    return Path(reference).name


def nul_errors(where: str, record: CatalogRecord | SceneRecord) -> list[RecordError]:
    parts = (
        {"payload": record.payload, "ground_truth": record.ground_truth}
        if isinstance(record, CatalogRecord)
        else {"data": record.data}
    )
    return [
        RecordError(where, field.split(".", 1)[-1], NUL_MESSAGE)
        for name, value in parts.items()
        for field in nul_fields(value, name)
    ] or [RecordError(where, "media", NUL_MESSAGE)]


def save_scenes(dataset: Dataset, scenes: list[SceneRecord]) -> dict[str, int]:
    if not scenes:
        return {}
    faults = [
        error
        for scene in scenes
        if b"\\u0000" in orjson.dumps(scene.data)
        for error in nul_errors(f"scene {scene.external_id}", scene)
    ]
    if faults:
        raise FormatError(faults)
    rows = (
        (dataset.pk, position, scene.external_id, orjson.dumps(scene.data).decode(), scene.image or "")
        for position, scene in enumerate(scenes)
    )
    insert_rows(Scene, ("dataset_id", "position", "external_id", "data", "image"), rows)
    return dict(Scene.objects.filter(dataset=dataset).values_list("external_id", "pk"))


def save_items(
    dataset: Dataset,
    records: Iterable[CatalogRecord],
    scene_ids: dict[str, int],
    *,
    unit_count: Callable[[dict], int],
    errors: list[RecordError],
    total: int,
    progress: ProgressCallback,
) -> tuple[int, int]:
    """Insert the items as one stream of rows, reporting progress as they go; returns how many
    records were read and how many scoring units they hold (`unit_count` of each payload).

    Once `errors` holds anything (records still being checked as they stream), no more rows
    are written, but the remaining records are still read so that every fault gets listed.
    """
    columns = ("dataset_id", "position", "external_id", "payload", "ground_truth", "media", "scene_id")
    dumps = orjson.dumps
    dataset_id = dataset.pk
    units = count = 0

    def rows():
        nonlocal units, count
        for position, record in enumerate(records):
            count = position + 1
            if position % INSERT_BATCH == 0:
                progress("saving items", position, total)
            payload, truth, media = (
                dumps(part) for part in (record.payload, record.ground_truth, record.media)
            )
            if b"\\u0000" in payload or b"\\u0000" in truth or b"\\u0000" in media:
                # orjson writes NUL as an escape: one search of the bytes made anyway finds it.
                errors.extend(nul_errors(f"item {record.external_id}", record))
            if errors:
                continue
            units += unit_count(record.payload)
            yield (
                dataset_id,
                position,
                record.external_id,
                payload.decode(),
                truth.decode(),
                media.decode(),
                scene_ids.get(record.scene) if record.scene is not None else None,
            )

    insert_rows(Item, columns, rows())
    progress("saving items", count, count)
    return count, units


def export_chunks(dataset: Dataset) -> Iterator[bytes]:
    """The dataset as its benchmark's official file, in chunks (for files and HTTP responses)."""
    module = dataset.spec.formats
    rows = dataset.items.order_by("position").values_list("payload", "ground_truth").iterator(chunk_size=2000)
    records = (module.to_official(payload, ground_truth) for payload, ground_truth in rows)
    return module.serialize(dataset.meta, records)


def export_scene_chunks(dataset: Dataset) -> Iterator[bytes]:
    spec = dataset.spec
    if not spec.has_scenes:
        raise ImportRefused(_("%(benchmark)s has no separate scenes file") % {"benchmark": spec.title})
    scenes = dataset.scenes.order_by("position").values_list("data", flat=True).iterator(chunk_size=2000)
    return spec.formats.serialize_scenes(dataset.scenes_meta, scenes)


def write_chunks(chunks: Iterator[bytes], stream: BinaryIO) -> None:
    for chunk in chunks:
        stream.write(chunk)


def export_dataset(*, dataset: Dataset, path: Path, scenes_path: Path | None = None) -> None:
    """Write the official file (and the scenes file) atomically: a half-written file never appears."""
    targets = [(path, export_chunks(dataset))]
    if scenes_path is not None:
        targets.append((scenes_path, export_scene_chunks(dataset)))
    for target, chunks in targets:
        target = Path(target)
        handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.")
        try:
            with os.fdopen(handle, "wb") as stream:
                write_chunks(chunks, stream)
            os.replace(temporary, target)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise


def extract_images(archive: Path, folder: Path, *, limit: int) -> Path:
    """Unpack an uploaded zip of images flat into `folder`; at most `limit` bytes in all.

    Paths that climb out are flattened to their base name, hidden and empty names are skipped,
    and the bytes written are counted as they are written (a zip's own sizes can lie), so that a
    small archive that would unpack to gigabytes is refused as soon as it passes the limit.
    """
    written = 0
    try:
        with zipfile.ZipFile(archive) as bundle:
            declared = sum(member.file_size for member in bundle.infolist())
            if declared > limit:
                raise ImportRefused(too_large(declared, limit))
            for member in bundle.infolist():
                if member.is_dir():
                    continue
                name = Path(member.filename).name
                if not name or name.startswith("."):
                    continue
                with bundle.open(member) as source, open(folder / name, "wb") as target:
                    while chunk := source.read(1 << 20):
                        written += len(chunk)
                        if written > limit:
                            raise ImportRefused(too_large(written, limit))
                        target.write(chunk)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, EOFError) as error:
        raise ImportRefused(f"the images upload is not a zip archive this server can read: {error}") from None
    return folder


def too_large(size: int, limit: int) -> str:
    return (
        f"the images unpack to more than {limit // (1024 * 1024)} MB (at least {size // (1024 * 1024)} MB): "
        "split the dataset, or ask an admin to raise YARDSTICK_MAX_IMAGES_MB"
    )


def run_import_job(job: ImportJob) -> ImportJob:
    """Carry out a queued web/API import, recording progress and the outcome on the job."""

    def report(stage: str, done: int, total: int) -> None:
        report_progress(job, stage, done, total)

    if not take(job, stage="reading file"):  # a second delivery of the same job, or one declared lost
        return job
    workdir = ""
    try:
        with beating(job), tempfile.TemporaryDirectory(prefix="yardstick-import-") as workdir:
            images_dir = None
            if job.images_upload:
                with local_copy(job.images_upload) as archive:
                    images_dir = extract_images(
                        archive, Path(workdir), limit=settings.MAX_UNPACKED_IMAGES_BYTES
                    )
            scenes_data = job.scenes_upload.read() if job.scenes_upload else None
            # A file on this machine, however the uploads are stored: the reader streams and seeks.
            with local_copy(job.upload) as path, path.open("rb") as upload:
                dataset = import_dataset(
                    benchmark=job.benchmark,
                    data=upload,
                    name=job.name,
                    split=job.split,
                    version=job.version,
                    source=Path(job.upload.name).name,
                    images_dir=images_dir,
                    images_label="the uploaded images",
                    scenes_data=scenes_data,
                    scenes_source=Path(job.scenes_upload.name).name if job.scenes_upload else "",
                    created_by=job.created_by,
                    progress=report,
                )
    except FormatError as error:
        finish_job(job, status=ImportJob.Status.FAILED, errors=error.summary())
    except (ImportRefused, ValueError, OSError) as error:
        # The server's own folders are nobody else's business.
        message = str(error).replace(workdir, "the uploaded images") if workdir else str(error)
        finish_job(
            job,
            status=ImportJob.Status.FAILED,
            errors=[message.replace(str(settings.UPLOADS_ROOT), "uploads")],
        )
    except Exception as error:
        # A job must never stay "running" for ever: record the failure, keep the traceback in
        # the worker's log for whoever fixes the bug.
        logger.exception("import job %s failed unexpectedly", job.pk)
        finish_job(job, status=ImportJob.Status.FAILED, errors=[f"internal error: {error!r}"])
    else:
        finish_job(job, status=ImportJob.Status.SUCCEEDED, dataset=dataset)
    job.refresh_from_db()
    return job


def finish_job(job: ImportJob, *, status: str, errors: list[str] | None = None, dataset=None) -> None:
    """Record how the job ended, and remove its uploaded files: their answers are in the dataset
    now, or nowhere (a failed import loads nothing)."""
    last = clear_progress(job)
    for upload in (job.upload, job.scenes_upload, job.images_upload):
        if upload:
            upload.delete(save=False)
    ImportJob.objects.filter(pk=job.pk).update(
        upload="",
        scenes_upload="",
        images_upload="",
        status=status,
        errors=errors or [],
        dataset=dataset,
        stage="",
        done=last.get("done", 0),
        total=last.get("total", 0),
        finished_at=timezone.now(),
    )


def import_lost(job: ImportJob, seconds: int) -> None:
    """End an import whose worker stopped beating (the reaper's handler). It ran in one
    transaction, so nothing of it was loaded; its uploads are removed like any ended job's."""
    finish_job(
        job,
        status=ImportJob.Status.FAILED,
        errors=[
            f"the worker running this import stopped (no sign of life for {seconds} s); nothing was "
            "loaded: start the import again"
        ],
    )


def start_import_job(
    *,
    user,
    benchmark: str,
    name: str,
    split: str = "",
    version: str = "1",
    upload,
    scenes_upload=None,
    images_upload=None,
) -> ImportJob:
    """Queue an import for a worker; refuse at once what would fail anyway (a name taken)."""
    spec = registry.get(benchmark)
    benchmark = spec.name
    if problem := naming_problem(name=name, split=split, version=version):
        raise ImportRefused(problem)
    waiting = ImportJob.objects.filter(created_by=user, status__in=ACTIVE).count()
    if 0 < settings.JOBS_PER_PERSON <= waiting:
        raise ImportRefused(
            _(
                "you have %(waiting)s imports waiting or running, the most one person may have at once "
                "(%(most)s): wait for one to finish"
            )
            % {"waiting": waiting, "most": settings.JOBS_PER_PERSON}
        )
    if scenes_upload is not None and not spec.has_scenes:
        raise ImportRefused(_("%(benchmark)s has no separate scenes file") % {"benchmark": spec.title})
    if Dataset.objects.filter(benchmark=benchmark, name=name, split=split, version=version).exists():
        raise ImportRefused(already_exists(benchmark=benchmark, name=name, split=split, version=version))
    job = ImportJob.objects.create(
        created_by=user,
        benchmark=benchmark,
        name=name,
        split=split,
        version=version,
        upload=upload,
        scenes_upload=scenes_upload or "",
        images_upload=images_upload or "",
    )
    enqueue("benchmarks.run_import", job.pk)
    return job
