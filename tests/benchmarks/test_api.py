"""The HTTP API under /api/v1/: token auth for scripts, imports as jobs, items, exports."""

import orjson
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from benchmarks.models import Dataset
from tests.benchmarks import builders
from tests.factories import PASSWORD, make_user

# Imports are queued on commit, so these tests commit for real.
pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def researcher_api():
    user = make_user("api-researcher", "researcher")
    client = APIClient()
    token = client.post("/api/v1/auth/token/", {"username": user.username, "password": PASSWORD}).json()[
        "token"
    ]
    assert Token.objects.get(user=user).key == token
    client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    return client


def upload(name: str, content: bytes) -> SimpleUploadedFile:
    return SimpleUploadedFile(name, content, content_type="application/json")


def test_a_script_imports_lists_reads_and_exports_with_a_token(researcher_api):
    questions, scenes = builders.cric_questions(), builders.cric_scenes()
    response = researcher_api.post(
        "/api/v1/imports/",
        {
            "benchmark": "cric",
            "name": "api-cric",
            "split": "val",
            "upload": upload("val_questions.json", orjson.dumps(questions)),
            "scenes_upload": upload("scene_graphs.json", orjson.dumps(scenes)),
        },
        format="multipart",
    )
    assert response.status_code == 201, response.content
    job = researcher_api.get(f"/api/v1/imports/{response.json()['id']}/").json()
    assert job["status"] == "succeeded"
    assert job["progress"]["done"] == job["progress"]["total"] == 3

    datasets = researcher_api.get("/api/v1/datasets/").json()["results"]
    assert [(d["benchmark"], d["name"], d["item_count"]) for d in datasets] == [("cric", "api-cric", 3)]
    items = researcher_api.get(f"/api/v1/datasets/{job['dataset']}/items/").json()["results"]
    assert items[0]["ground_truth"]["answer"] == "cutting"
    assert items[0]["scene"] == "3"

    exported = researcher_api.get(f"/api/v1/datasets/{job['dataset']}/export/")
    assert orjson.loads(b"".join(exported.streaming_content)) == questions


def test_a_bad_file_fails_the_job_with_every_bad_record_and_loads_nothing(researcher_api):
    records = builders.stevqa_questions()
    records[1]["evidence"] = records[1]["evidence"][:6]
    del records[2]["question"]
    response = researcher_api.post(
        "/api/v1/imports/",
        {"benchmark": "stevqa", "name": "bad", "upload": upload("gt.json", orjson.dumps(records))},
        format="multipart",
    )
    job = researcher_api.get(f"/api/v1/imports/{response.json()['id']}/").json()
    assert job["status"] == "failed"
    assert job["errors"] == [
        "record 1: evidence: a quadrilateral needs 8 numbers (x1, y1, ..., x4, y4), got 6",
        "record 2: question: missing field",
    ]
    assert Dataset.objects.count() == 0


def test_a_taken_name_is_a_400_naming_the_field(researcher_api):
    data = orjson.dumps(builders.stevqa_questions())
    first = {"benchmark": "stevqa", "name": "twice", "upload": upload("gt.json", data)}
    assert researcher_api.post("/api/v1/imports/", first, format="multipart").status_code == 201
    second = {"benchmark": "stevqa", "name": "twice", "upload": upload("gt.json", data)}
    response = researcher_api.post("/api/v1/imports/", second, format="multipart")
    assert response.status_code == 400
    assert "already exists" in response.json()["name"][0]


def test_missing_fields_are_400_with_field_errors(researcher_api):
    response = researcher_api.post("/api/v1/imports/", {"benchmark": "nope"}, format="multipart")
    assert response.status_code == 400
    assert set(response.json()) >= {"benchmark", "name", "upload"}


def test_testers_cannot_use_the_catalog_api():
    client = APIClient()
    client.force_authenticate(make_user("t", "tester"))
    assert client.get("/api/v1/datasets/").status_code == 403
    assert client.post("/api/v1/imports/", {}, format="multipart").status_code == 403
    anonymous = APIClient()
    assert anonymous.get("/api/v1/datasets/").status_code in (401, 403)


def test_the_schema_generates_without_warnings(tmp_path):
    from django.core.management import call_command

    target = tmp_path / "schema.yml"
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(target))
    text = target.read_text()
    assert "/api/v1/imports/{id}/" in text and "/api/v1/test-plans/{id}/results/" in text


def test_schema_and_docs_are_served_to_signed_in_users(client):
    assert client.get("/api/schema/").status_code in (401, 403)
    client.force_login(make_user("r", "researcher"))
    schema = client.get("/api/schema/")
    assert schema.status_code == 200
    assert b"/api/v1/imports/" in schema.content
    docs = client.get("/api/docs/")
    assert docs.status_code == 200
    assert b"swagger" in docs.content.lower()


def test_an_unexpected_error_fails_the_job_instead_of_leaving_it_running(researcher_api, monkeypatch):
    from benchmarks import services

    def broken(*args, **kwargs):
        raise KeyError("bug")

    monkeypatch.setattr(services, "import_dataset", broken)
    data = orjson.dumps(builders.stevqa_questions())
    response = researcher_api.post(
        "/api/v1/imports/",
        {"benchmark": "stevqa", "name": "n", "upload": upload("gt.json", data)},
        format="multipart",
    )
    job = researcher_api.get(f"/api/v1/imports/{response.json()['id']}/").json()
    assert job["status"] == "failed"
    assert job["errors"] == ["internal error: KeyError('bug')"]
