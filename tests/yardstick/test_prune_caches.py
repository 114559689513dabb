"""manage.py prune_caches: a host's file and inputs caches emptied of what no longer has a use
(deleted datasets, checkpoints gone from the store, interrupted writes) and, with --older-than, of
what was not read for that long; what is still used stays."""

import io
import os
import time

import pytest
from django.core.management import call_command

from benchmarks.storage import checkpoints, local_folder, local_path, media

pytestmark = pytest.mark.django_db

DAYS_AGO_40 = time.time() - 40 * 86400
DAYS_AGO_2 = time.time() - 2 * 86400


def write(path, data: bytes = b"x", when: float | None = None):
    """A file (or, with data None, a folder) at `path`, last changed at `when`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if data is None:
        path.mkdir()
    else:
        path.write_bytes(data)
    if when is not None:
        os.utime(path, (when, when))
    return path


def prune(*args) -> str:
    out = io.StringIO()
    call_command("prune_caches", *args, stdout=out)
    return out.getvalue()


def test_prune_caches_removes_what_has_no_use_and_with_older_than_what_was_not_read(
    object_store, trance_dataset, settings, tmp_path
):
    settings.INFERENCE_CACHE_DIR = tmp_path / "inference-cache"  # this test's own
    root = settings.FILE_CACHE_DIR
    images = local_folder(media, trance_dataset.media_folder)  # a worker's copies of a live dataset
    deleted = write(root / "media" / "datasets" / "99999" / "img.png", b"x" * 1000).parent
    object_store.client().put_object(Bucket=object_store.bucket, Key="checkpoints/kept.pt", Body=b"weights")
    kept = local_path(checkpoints, "kept.pt", checked=True)
    gone_from_store = write(root / "checkpoints" / "gone.pt", b"old weights")
    old_part = write(root / "media" / "datasets" / ".x.png.0.part", b"half", DAYS_AGO_2)
    fresh_part = write(images / ".y.png.1.part", b"being written")
    old_tmp = write(root / "tmp" / "yardstick-fetch-old", None, DAYS_AGO_2)
    fresh_tmp = write(root / "tmp" / "yardstick-fetch-now", None)
    inputs = settings.INFERENCE_CACHE_DIR
    stale = write(inputs / "a.imgcache", b"a", DAYS_AGO_40)
    recent = write(inputs / "b.imgcache", b"b")
    leftover = write(inputs / "c.imgcache.1.tmp", b"c", DAYS_AGO_2)

    said = prune()
    assert "removed " + str(deleted) + " (its dataset was deleted)" in said
    gone = [deleted, gone_from_store, old_part, old_tmp, leftover]
    assert [path for path in gone if path.exists()] == []
    still = [images / "img_000000-init.C.png", kept, fresh_part, fresh_tmp, stale, recent]
    assert [path for path in still if not path.exists()] == []

    # Not read for 40 days: the dataset's copies and one inputs cache file; a dry run says so first.
    os.utime(images / ".used", (DAYS_AGO_40, DAYS_AGO_40))
    said = prune("--older-than", "30", "--dry-run")
    assert f"would remove {images} (not read since the time asked)" in said
    assert f"would remove {stale} (not read since the time asked)" in said
    assert images.exists() and stale.exists()
    assert "2 removed, would free" in said
    prune("--older-than", "30")
    assert not images.exists() and not stale.exists()
    assert recent.exists() and kept.exists()  # read today
    # What went is fetched again when needed.
    assert (local_folder(media, trance_dataset.media_folder) / "img_000000-init.C.png").is_file()


def test_prune_caches_on_an_empty_host_and_a_negative_age(settings, tmp_path):
    settings.INFERENCE_CACHE_DIR = tmp_path / "inference-cache"
    assert prune().strip() == "0 removed, freed 0.0 MB"
    with pytest.raises(Exception, match="--older-than: expected a number of days of at least 0"):
        prune("--older-than", "-1")
