"""Files in an object store (YARDSTICK_S3_BUCKET): dataset media, uploads, prediction files and
checkpoints through the storage API, against a real S3-compatible server (tests/s3.py).

Each test keeps the app's files in a fresh bucket (the `object_store` fixture) and looks in the
bucket behind the app's back: nothing may land in the local folders a second host would not see.
"""

import hashlib
import io
import json
import shutil
import time
import urllib.parse
import urllib.request
import zipfile
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from rest_framework.test import APIClient

from annotation.services import image_file
from benchmarks.models import Dataset
from benchmarks.storage import local_folder, media
from inference.models import ModelRun
from inference.selectors import checkpoint_files
from inference.services import execute_run, start_run
from tests.factories import make_user

pytestmark = pytest.mark.django_db

IMAGE = "img_000000-init.C.png"


def keys(store, prefix: str = "") -> list[str]:
    listed = store.client().list_objects_v2(Bucket=store.bucket, Prefix=prefix)
    return sorted(entry["Key"] for entry in listed.get("Contents", []))


def files_under(folder) -> list[Path]:
    """The files under `folder`, without the cache's own marks (`.used`: when a folder was read)."""
    if not Path(folder).exists():
        return []
    return [path for path in Path(folder).rglob("*") if path.is_file() and path.name != ".used"]


@pytest.fixture
def stored_dataset(object_store, trance_dataset):
    """The TRANCE test sample, imported while the app keeps its files in the bucket."""
    return trance_dataset


def test_an_import_puts_its_images_in_the_bucket_and_leaves_no_upload(
    object_store, trance_files, settings, django_capture_on_commit_callbacks
):
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as bundle:
        for path in sorted(trance_files.glob("*.png")):
            bundle.write(path, path.name)
    api = APIClient()
    api.force_authenticate(make_user("rita", "researcher"))
    with django_capture_on_commit_callbacks(execute=True):
        response = api.post(
            "/api/v1/imports/",
            {
                "benchmark": "trance",
                "name": "stored",
                "upload": SimpleUploadedFile("data.jsonl", (trance_files / "data.jsonl").read_bytes()),
                "images_upload": SimpleUploadedFile("renders.zip", archive.getvalue()),
            },
            format="multipart",
        )
    assert response.status_code == 201, response.content
    job = api.get(f"/api/v1/imports/{response.json()['id']}/").json()
    assert job["status"] == "succeeded", job
    dataset = Dataset.objects.get(pk=job["dataset"])
    expected = sorted(f"media/datasets/{dataset.pk}/{path.name}" for path in trance_files.glob("*.png"))
    assert keys(object_store, "media/") == expected
    assert keys(object_store, "uploads/") == []  # the import's three files, removed when it ended
    # Nothing on this host's disk: a worker elsewhere would not have seen it.
    assert files_under(settings.MEDIA_ROOT) == [] and files_under(settings.UPLOADS_ROOT) == []
    stored = object_store.client().get_object(Bucket=object_store.bucket, Key=expected[0])["Body"].read()
    assert stored == (trance_files / Path(expected[0]).name).read_bytes()


def test_media_from_the_bucket_is_streamed_only_to_those_who_may_see_it(
    object_store, stored_dataset, trance_files, client
):
    url = f"/media/datasets/{stored_dataset.pk}/{IMAGE}"
    client.force_login(make_user("rita", "researcher"))
    response = client.get(url)
    assert response.status_code == 200 and response["Content-Type"] == "image/png"
    assert b"".join(response.streaming_content) == (trance_files / IMAGE).read_bytes()
    assert response["Content-Length"] == str((trance_files / IMAGE).stat().st_size)
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["Content-Security-Policy"].startswith("sandbox")
    assert client.get(f"/media/datasets/{stored_dataset.pk}/absent.png").status_code == 404
    client.force_login(make_user("tom", "tester"))  # no trial of his shows it
    assert client.get(url).status_code == 404


def test_signed_delivery_redirects_to_a_short_lived_address_of_the_store(
    object_store, stored_dataset, trance_files, client, settings
):
    settings.MEDIA_DELIVERY = "signed"
    settings.SIGNED_URL_SECONDS = 120
    client.force_login(make_user("rita", "researcher"))
    response = client.get(f"/media/datasets/{stored_dataset.pk}/{IMAGE}")
    assert response.status_code == 302 and response["Cache-Control"] == "private, no-store"
    address = response["Location"]
    assert address.startswith(f"{object_store.endpoint}/{object_store.bucket}/media/datasets/")
    query = urllib.parse.parse_qs(urllib.parse.urlsplit(address).query)
    assert query["X-Amz-Expires"] == ["120"] and query["X-Amz-Signature"][0]
    assert query["response-content-type"] == ["image/png"]
    with urllib.request.urlopen(address, timeout=10) as sent:
        assert sent.read() == (trance_files / IMAGE).read_bytes()
        assert sent.headers["Content-Type"] == "image/png"
    # The check comes first: no address for someone who may not see the file, none for a missing one.
    assert client.get(f"/media/datasets/{stored_dataset.pk}/absent.png").status_code == 404
    client.force_login(make_user("tom", "tester"))
    assert client.get(f"/media/datasets/{stored_dataset.pk}/{IMAGE}").status_code == 404


def test_a_model_run_reads_images_fetched_from_the_bucket_and_keeps_its_predictions_there(
    object_store, stored_dataset, settings
):
    run = execute_run(start_run(dataset=stored_dataset, baseline="trancenet", setting="event", enqueue=False))
    assert run.status == "succeeded", run.error
    assert run.submission.summary["n"] == 12
    # The worker's copies are in its cache folder, nowhere else on the machine.
    cached = files_under(Path(settings.FILE_CACHE_DIR) / "media" / stored_dataset.media_folder)
    assert len(cached) == stored_dataset.items.count() * 4
    assert files_under(settings.MEDIA_ROOT) == []
    assert keys(object_store, "uploads/model-runs/") == [f"uploads/{run.predictions.name}"]
    assert json.loads(run.predictions.read())  # read back from the bucket


def test_a_worker_fetches_only_what_its_cache_lacks_or_holds_at_another_size(
    object_store, stored_dataset, settings, monkeypatch
):
    from benchmarks import storage

    folder = local_folder(media, stored_dataset.media_folder)
    copy = folder / IMAGE
    original = copy.read_bytes()
    copy.write_bytes(b"damaged")  # a copy cut short
    (folder / "img_000001-init.C.png").unlink()
    fetched = []
    fetch = storage.fetch
    monkeypatch.setattr(
        storage, "fetch", lambda store, name, *rest: fetched.append(name) or fetch(store, name, *rest)
    )
    again = local_folder(media, stored_dataset.media_folder)
    assert again == folder and copy.read_bytes() == original
    assert (folder / "img_000001-init.C.png").is_file()
    # Only those two were fetched again; the others' copies were kept.
    assert sorted(Path(name).name for name in fetched) == sorted([IMAGE, "img_000001-init.C.png"])
    assert len(files_under(folder)) == 48 and (folder / ".used").is_file()
    assert not [path for path in folder.iterdir() if path.name.endswith(".part")]


def test_a_stored_checkpoint_is_offered_fetched_by_the_worker_and_checked(
    object_store, stored_dataset, settings, tmp_path, django_capture_on_commit_callbacks
):
    from inference.baselines import load_baseline

    shipped = load_baseline(stored_dataset.spec, "trancenet").resolved_checkpoint(None)
    mine = tmp_path / "mine.pt"
    shutil.copyfile(shipped, mine)
    out = io.StringIO()
    call_command("store_checkpoint", str(mine), stdout=out)
    assert keys(object_store, "checkpoints/") == ["checkpoints/mine.pt"]
    assert checkpoint_files() == {"mine.pt": "stored:mine.pt"}
    # Offered on the run form and by the API under its name; the run names it as stored.
    client = APIClient()
    client.force_authenticate(make_user("rita", "researcher"))
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            "/api/v1/model-runs/",
            {
                "dataset": stored_dataset.pk,
                "baseline": "trancenet",
                "setting": "event",
                "checkpoint": "mine.pt",
            },
            format="json",
        )
    assert response.status_code == 201, response.content
    run = ModelRun.objects.get(pk=response.json()["id"])
    assert run.checkpoint == "stored:mine.pt" and run.checkpoint_name == "mine.pt"
    assert run.checkpoint_sha256 == hashlib.sha256(mine.read_bytes()).hexdigest()
    assert run.status == "succeeded", run.error  # the eager worker fetched it into its cache
    assert (Path(settings.FILE_CACHE_DIR) / "checkpoints" / "mine.pt").read_bytes() == mine.read_bytes()
    assert files_under(settings.CHECKPOINT_DIR) == []

    # A checkpoint replaced under the same name after a run was started fails that run, naming why.
    queued = start_run(
        dataset=stored_dataset,
        baseline="trancenet",
        setting="event",
        checkpoint="stored:mine.pt",
        enqueue=False,
    )
    torch = pytest.importorskip("torch")
    state = torch.load(mine, weights_only=False)
    state["epoch"] = state.get("epoch", 0) + 1
    torch.save(state, tmp_path / "mine.pt")
    call_command("store_checkpoint", str(tmp_path / "mine.pt"), stdout=io.StringIO())
    failed = execute_run(queued)
    assert failed.status == "failed" and "mine.pt changed since the run was started" in failed.error


def test_store_checkpoint_refuses_names_the_form_could_not_offer(object_store, tmp_path):
    from django.core.management.base import CommandError

    weights = tmp_path / "weights.bin"
    weights.write_bytes(b"x")
    with pytest.raises(CommandError, match="ending in .pt"):
        call_command("store_checkpoint", str(weights))
    with pytest.raises(CommandError, match="no such file"):
        call_command("store_checkpoint", str(tmp_path / "absent.pt"))
    assert keys(object_store, "checkpoints/") == []


def test_deleting_a_dataset_removes_its_images_from_the_bucket(
    object_store, stored_dataset, django_capture_on_commit_callbacks
):
    prefix = f"media/datasets/{stored_dataset.pk}/"
    assert len(keys(object_store, prefix)) == 48
    with django_capture_on_commit_callbacks(execute=True):
        stored_dataset.delete()
    assert keys(object_store, prefix) == []


def test_an_annotator_s_image_is_read_from_the_bucket(object_store, stored_dataset, trance_files):
    item = stored_dataset.items.first()
    path = image_file(item, "init.Camera_Center")
    assert (
        path is not None
        and path.read_bytes() == (trance_files / item.media["init.Camera_Center"]).read_bytes()
    )
    shutil.rmtree(path.parent)
    object_store.client().delete_object(
        Bucket=object_store.bucket,
        Key=f"media/{stored_dataset.media_folder}/{item.media['init.Camera_Center']}",
    )
    assert image_file(item, "init.Camera_Center") is None  # missing in the store: no image, no error


def test_ready_tries_the_bucket_and_names_the_storage_when_it_is_gone(object_store, client, settings):
    assert client.get("/health/ready").status_code == 200
    assert keys(object_store, "uploads/health/") == []  # its probe file removed
    gone = {**settings.STORAGES}
    gone["uploads"] = {**gone["uploads"], "OPTIONS": {**gone["uploads"]["OPTIONS"], "bucket_name": "absent"}}
    settings.STORAGES = gone
    answer = client.get("/health/ready")
    assert answer.status_code == 503 and answer.json()["checks"]["storage"]["ok"] is False


def test_a_prediction_file_scored_by_a_worker_waits_in_the_bucket_and_goes_when_scored(
    object_store, stored_dataset, settings, django_capture_on_commit_callbacks
):
    settings.SCORE_IN_REQUEST_UNITS = 1  # every upload of more than one unit goes to a worker
    answers = {
        item.external_id: [
            {key: step[key] for key in ("obj_idx", "attr", "val")}
            for step in item.ground_truth["transformations"]
        ]
        for item in stored_dataset.items.all()
    }
    api = APIClient()
    api.force_authenticate(make_user("rita", "researcher"))
    with django_capture_on_commit_callbacks() as queued:
        response = api.post(
            "/api/v1/submissions/",
            {
                "dataset": stored_dataset.pk,
                "name": "perfect",
                "setting": "event",
                "file": SimpleUploadedFile("perfect.json", json.dumps(answers).encode()),
            },
            format="multipart",
        )
    assert response.status_code == 202, response.content
    assert [key.split("/")[1] for key in keys(object_store, "uploads/")] == ["submissions"]
    for callback in queued:
        callback()  # the worker reads the file from the bucket
    job = api.get(response.json()["url"]).json()
    assert job["status"] == "succeeded", job
    assert api.get(f"/api/v1/submissions/{job['submission']}/").json()["summary"]["Acc"] == 1.0
    assert keys(object_store, "uploads/") == [] and files_under(settings.UPLOADS_ROOT) == []


def test_copy_store_mirrors_the_bucket_into_a_folder_and_restores_it_into_another(
    object_store, stored_dataset, settings, tmp_path
):
    mirror = tmp_path / "mirror"
    out = io.StringIO()
    call_command("copy_store", "export", str(mirror), stdout=out)
    assert "media: 48 fetched, 0 unchanged, 0 removed" in out.getvalue()
    copied = sorted(path.relative_to(mirror).as_posix() for path in files_under(mirror))
    assert copied == [key for key in keys(object_store)]  # media/datasets/<id>/<file> either way
    # Again: only what changed moves (one file gone from the bucket, one copy damaged).
    first = f"media/{stored_dataset.media_folder}/{IMAGE}"
    object_store.client().delete_object(Bucket=object_store.bucket, Key=first)
    (mirror / f"media/{stored_dataset.media_folder}/img_000001-init.C.png").write_bytes(b"cut")
    out = io.StringIO()
    call_command("copy_store", "export", str(mirror), "--store", "media", stdout=out)
    assert out.getvalue().strip() == f"media: 1 fetched, 46 unchanged, 1 removed -> {mirror / 'media'}"
    # Restored into an empty bucket, the site reads the same files.
    object_store.client().put_object(Bucket=object_store.bucket, Key=first, Body=b"")
    settings.STORAGES = {
        alias: (
            {**entry, "OPTIONS": {**entry["OPTIONS"], "bucket_name": object_store.new_bucket()}}
            if "OPTIONS" in entry
            else entry
        )
        for alias, entry in settings.STORAGES.items()
    }
    call_command("copy_store", "import", str(mirror), stdout=io.StringIO())
    restored = local_folder(media, stored_dataset.media_folder)
    assert sorted(path.name for path in files_under(restored)) == sorted(
        path.name for path in (mirror / "media" / stored_dataset.media_folder).iterdir()
    )
    with pytest.raises(Exception, match="no store nothing"):
        call_command("copy_store", "export", str(mirror), "--store", "nothing")


def test_backup_sh_keeps_a_dated_copy_of_the_bucket_beside_the_database(s3_server, tmp_path):
    import sqlite3
    import sys

    from tests.yardstick.test_deploy_files import copied, run_backup

    bucket = s3_server.new_bucket()
    s3_server.client().put_object(Bucket=bucket, Key="media/datasets/1/a.png", Body=b"\x89PNG picture")
    s3_server.client().put_object(Bucket=bucket, Key="checkpoints/mine.pt", Body=b"weights")
    (tmp_path / "var").mkdir()
    sqlite3.connect(tmp_path / "var" / "yardstick.sqlite3").close()
    env = {
        "YARDSTICK_VAR_DIR": str(tmp_path / "var"),
        "YARDSTICK_PYTHON": sys.executable,
        **s3_server.settings_for(bucket),
    }
    first = run_backup(env, tmp_path / "backups")
    assert copied(first, "media", "datasets/1/a.png").read_bytes() == b"\x89PNG picture"
    assert copied(first, "checkpoints", "mine.pt").read_bytes() == b"weights"
    manifest = (first / "MANIFEST").read_text()
    assert f"store s3://{bucket}/" in manifest and "media: 1 fetched" in manifest
    time.sleep(1.1)  # one backup per second at most: its name is the time
    second = run_backup(env, tmp_path / "backups")
    assert "media: 0 fetched, 1 unchanged" in (second / "MANIFEST").read_text()
    picture = copied(second, "media", "datasets/1/a.png")
    if picture.name == "a.png":  # rsync: one file for the mirror and both backups (hard links)
        assert picture.stat().st_nlink == 3
        mirrored = tmp_path / "backups" / "store-mirror" / "media" / "datasets" / "1" / "a.png"
        assert mirrored.stat().st_ino == picture.stat().st_ino


def test_a_stored_file_replaced_by_one_of_the_same_size_is_fetched_again(object_store, tmp_path):
    from benchmarks.storage import checkpoints, local_path

    client = object_store.client()
    client.put_object(Bucket=object_store.bucket, Key="checkpoints/retrained.pt", Body=b"first weights")
    assert local_path(checkpoints, "retrained.pt", checked=True).read_bytes() == b"first weights"
    mirror = tmp_path / "mirror"
    call_command("copy_store", "export", str(mirror), "--store", "checkpoints", stdout=io.StringIO())
    time.sleep(1.1)  # the store keeps times to the second
    client.put_object(Bucket=object_store.bucket, Key="checkpoints/retrained.pt", Body=b"other weights")
    assert local_path(checkpoints, "retrained.pt", checked=True).read_bytes() == b"other weights"
    out = io.StringIO()
    call_command("copy_store", "export", str(mirror), "--store", "checkpoints", stdout=out)
    assert "checkpoints: 1 fetched, 0 unchanged" in out.getvalue()
    assert (mirror / "checkpoints" / "retrained.pt").read_bytes() == b"other weights"
    with pytest.raises(Exception, match="no such folder, or this user"):
        call_command("copy_store", "import", str(tmp_path / "absent"), stdout=io.StringIO())
