"""Who may read which file: uploads never, dataset media by permission or by the trial in front of you.

Findings 1, 2, 3 and 9 of the security review (issue 10); each test failed before its fix.
"""

import io
import json
import zipfile
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.test import APIClient

from benchmarks.models import ImportJob
from humantest import answers, clock, sessions
from humantest.models import TestPlan
from tests.benchmarks import builders
from tests.factories import make_user

pytestmark = pytest.mark.django_db


def researcher_api():
    api = APIClient()
    api.force_authenticate(make_user("rita", "researcher"))
    return api


def upload_import(api, name="val_questions.json", data=None, **files):
    data = data if data is not None else json.dumps(builders.stevqa_questions()).encode()
    return api.post(
        "/api/v1/imports/",
        {"benchmark": "stevqa", "name": name, "upload": SimpleUploadedFile(name, data), **files},
        format="multipart",
    )


def run_import(api, capture, **arguments) -> dict:
    """Start an import and let the worker (eager in tests) run it; the job as the API shows it after."""
    with capture(execute=True):
        response = upload_import(api, **arguments)
    assert response.status_code == 201, response.content
    return api.get(f"/api/v1/imports/{response.json()['id']}/").json()


def files_under(folder: Path) -> list[Path]:
    return [path for path in Path(folder).rglob("*") if path.is_file()] if Path(folder).exists() else []


def test_uploaded_files_are_never_served_and_are_removed_when_the_job_ends(
    settings, client, monkeypatch, django_capture_on_commit_callbacks
):
    api = researcher_api()
    # While the job waits for a worker, its file sits outside the media folder.
    monkeypatch.setattr("benchmarks.tasks.run_import.apply_async", lambda args, **options: None)
    response = upload_import(api)
    assert response.status_code == 201, response.content
    job = ImportJob.objects.get(pk=response.json()["id"])
    assert Path(job.upload.path).is_relative_to(settings.UPLOADS_ROOT)
    assert files_under(settings.MEDIA_ROOT) == []
    client.force_login(make_user("tess", "tester"))
    for user in ("tess", "rita"):
        client.force_login(make_user(user + "2", "tester" if user == "tess" else "researcher"))
        assert client.get(f"/media/{job.upload.name}").status_code == 404
        assert client.get("/media/imports/").status_code == 404
    monkeypatch.undo()

    # A job that succeeds, and one that fails, leave no upload behind.
    assert run_import(api, django_capture_on_commit_callbacks, name="good.json")["status"] == "succeeded"
    failed = run_import(api, django_capture_on_commit_callbacks, name="broken.json", data=b"[{}]")
    assert failed["status"] == "failed" and failed["errors"]
    from benchmarks.services import run_import_job

    run_import_job(job)
    assert files_under(settings.UPLOADS_ROOT) == []
    assert all(not job.upload for job in ImportJob.objects.all())


@pytest.fixture
def view_trial(trance_dataset):
    """A tester in the middle of a TRANCE View trial, and another tester who was invited elsewhere."""
    tess = make_user("tess", "tester")
    plan = TestPlan.objects.create(
        name="View", dataset=trance_dataset, setting="view", items_per_tester=2, seed=4
    )
    plan.testers.add(tess)
    session = sessions.begin_test(sessions.start_session(plan, tess))
    trial, _ = clock.serve_current_trial(session)
    return tess, trial


def test_dataset_media_goes_to_those_who_may_see_it_and_to_a_tester_only_the_trials_files(client, view_trial):
    tess, trial = view_trial
    dataset = trial.item.dataset
    media = trial.item.media
    shown = media["fin." + trial.context["camera"]]
    hidden = [media[f"fin.{camera}"] for camera in ("Camera_Left", "Camera_Center", "Camera_Right")]
    hidden.remove(shown)
    other_item = dataset.items.exclude(pk=trial.item_id).first().media["init.Camera_Center"]

    def status(user, name):
        client.force_login(user)
        return client.get(f"/media/datasets/{dataset.pk}/{name}").status_code

    assert status(tess, media["init.Camera_Center"]) == 200
    assert status(tess, shown) == 200
    # The cameras the View setting hides, and the items not in front of the tester, are not found.
    assert [status(tess, name) for name in hidden] == [404, 404]
    assert status(tess, other_item) == 404
    assert status(make_user("tom", "tester"), shown) == 404
    assert status(make_user("ann", "annotator"), shown) == 404
    assert status(make_user("rita", "researcher"), other_item) == 200
    client.logout()
    assert client.get(f"/media/datasets/{dataset.pk}/{shown}").status_code == 302  # to the log-in page
    # Once answered, the trial's files stay readable for its result panel; the next trial's are served.
    steps = [
        {k: s[k] for k in ("obj_idx", "attr", "val")} for s in trial.item.ground_truth["transformations"]
    ]
    answers.record_answer(trial.pk, tess, {"steps": steps}, {})
    assert status(tess, shown) == 200


def test_files_are_sent_as_images_or_as_downloads_never_as_pages(client, settings, trance_dataset):
    folder = Path(settings.MEDIA_ROOT) / trance_dataset.media_folder
    (folder / "page.html").write_text("<script>alert(document.cookie)</script>")
    (folder / "drawing.svg").write_text(
        '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'
    )
    client.force_login(make_user("rita", "researcher"))
    image = client.get(f"/media/datasets/{trance_dataset.pk}/img_000000-init.C.png")
    assert image["Content-Type"] == "image/png" and image["Content-Disposition"].startswith("inline")
    for name in ("page.html", "drawing.svg"):
        response = client.get(f"/media/datasets/{trance_dataset.pk}/{name}")
        assert response.status_code == 200
        assert response["Content-Type"] == "application/octet-stream"
        assert response["Content-Disposition"].startswith("attachment")
        assert response["X-Content-Type-Options"] == "nosniff"
        assert response["Content-Security-Policy"].startswith("sandbox")
    assert client.get(f"/media/datasets/{trance_dataset.pk}/../../secret_key").status_code == 404


def test_a_front_server_can_send_the_bytes_while_the_app_decides(client, settings, trance_dataset):
    settings.MEDIA_ACCEL_REDIRECT = "/protected-media/"
    client.force_login(make_user("rita", "researcher"))
    response = client.get(f"/media/datasets/{trance_dataset.pk}/img_000000-init.C.png")
    assert (
        response["X-Accel-Redirect"] == f"/protected-media/datasets/{trance_dataset.pk}/img_000000-init.C.png"
    )
    assert response.content == b""
    client.force_login(make_user("tom", "tester"))
    assert client.get(f"/media/datasets/{trance_dataset.pk}/img_000000-init.C.png").status_code == 404


def test_uploads_over_the_size_limit_are_refused(settings):
    settings.MAX_UPLOAD_BYTES = 1024
    response = upload_import(researcher_api(), data=b"[" + b" " * 2048 + b"]")
    assert response.status_code == 400 and "larger than" in response.json()["upload"][0]
    assert not ImportJob.objects.exists()


def test_a_zip_that_unpacks_past_the_limit_is_refused_and_leaves_nothing(
    settings, django_capture_on_commit_callbacks
):
    settings.MAX_UNPACKED_IMAGES_BYTES = 10 * 1024 * 1024
    bomb = io.BytesIO()
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("img_1.jpg", b"\0" * (40 * 1024 * 1024))
    assert len(bomb.getvalue()) < 100_000  # 40 MB in under 100 KB
    records = [{"id": 1, "image": "img_1.jpg", "annotation": []}]
    job = run_import(
        researcher_api(),
        django_capture_on_commit_callbacks,
        data=json.dumps(records).encode(),
        images_upload=SimpleUploadedFile("images.zip", bomb.getvalue()),
    )
    assert job["status"] == "failed" and "unpack to more than 10 MB" in job["errors"][0]
    assert "/tmp" not in json.dumps(job["errors"])
    assert files_under(settings.UPLOADS_ROOT) == [] and files_under(settings.MEDIA_ROOT) == []
