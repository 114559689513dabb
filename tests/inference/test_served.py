"""Served models: a run sends Dot count's items to a small server the test starts (the OpenAI chat
protocol and Yardstick's own), through scripted faults (503, 429 with Retry-After, a timeout,
garbage text, a unit that always fails), and keeps every request and response for audit."""

import hashlib
import io
import json
from pathlib import Path

import pytest
from django.core.management import call_command
from PIL import Image
from rest_framework.test import APIClient

from benchmarks.services import import_dataset
from evaluation.models import Submission
from inference.models import ModelRun
from inference.served import (
    AUDIT_RESPONSE_BYTES,
    Endpoint,
    ServedOptions,
    Unparsed,
    response_for_audit,
    retry_after,
)
from inference.services import RunRefused, cancel_run, execute_run, start_run
from tests.dotcount.served import DotCountServed
from tests.factories import make_user
from tests.inference.conftest import COUNTS, write_dot_files
from tests.inference.served_server import GARBAGE, SERVICE_UNAVAILABLE, SLOW, TOO_MANY, DotServer

pytestmark = pytest.mark.django_db

KEY = "sk-test-3f9a1c"


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@pytest.fixture
def dots(dotcount, tmp_path):
    """Dot count's eight items, each image told apart by a light pixel of its own (which no dot
    counter sees), so that the server knows a chat request's unit by its image."""
    truth = write_dot_files(tmp_path / "dots")
    for index in range(len(COUNTS)):
        path = tmp_path / "dots" / "images" / f"dots{index}.png"
        with Image.open(path) as image:
            image.load()
            marked = image.copy()
        marked.putpixel((79 - index, 0), (220, 220, 220))
        marked.save(path)
    return import_dataset(
        benchmark="dotcount", data=truth.read_bytes(), name="dots", images_dir=tmp_path / "dots" / "images"
    )


@pytest.fixture
def server(dots, tmp_path, settings):
    """The server, knowing each dot image by its sha256; retries wait 10 ms at first, not 1 s."""
    settings.SERVED_BACKOFF_S = 0.01
    images = tmp_path / "dots" / "images"
    unit_of = {
        sha256((images / f"dots{index}.png").read_bytes()): f"d{index}" for index in range(len(COUNTS))
    }
    assert len(unit_of) == len(COUNTS)
    running = DotServer(unit_of)
    yield running
    running.close()


def chat_options(server, **more):
    return {"endpoint": f"{server.url}/v1", "protocol": "openai", "model": "dot-counter", **more}


def audit_lines(run: ModelRun) -> list[dict]:
    run.audit.open("rb")
    try:
        return [json.loads(line) for line in run.audit.read().decode().splitlines()]
    finally:
        run.audit.close()


def test_a_chat_model_answers_through_faults_and_every_attempt_is_kept(dots, server, tmp_path, monkeypatch):
    monkeypatch.setenv("YARDSTICK_SERVED_KEY_DOTS", KEY)
    server.key = KEY  # the server refuses a request without it
    server.faults = {"d1": [SERVICE_UNAVAILABLE], "d2": [TOO_MANY], "d3": [SLOW], "d4": [GARBAGE]}
    server.slow_s = 2.5
    options = chat_options(
        server, api_key_env="YARDSTICK_SERVED_KEY_DOTS", concurrency=3, timeout_s=1, retries=2
    )
    run = execute_run(
        start_run(dataset=dots, baseline="served", batch_size=4, seed=3, options=options, enqueue=False)
    )
    assert run.status == "succeeded", run.error
    assert run.options == {**options, "max_tokens": 256}
    submission = run.submission
    assert submission.name == "dot-counter (served)"
    assert submission.summary["overall"]["Acc"] == 7 / 8  # d4's garbage is scored as wrong
    params = submission.parameters
    assert params["baseline"] == "served" and params["model_endpoint"] == f"{server.url}/v1"
    assert (params["model_protocol"], params["model_served_model"], params["model_server_model"]) == (
        "openai",
        "dot-counter",
        "dot-counter-1",
    )
    assert params["model_prompt_sha256"] == hashlib.sha256(DotCountServed.template.encode()).hexdigest()
    assert params["model_prompt"] == "tests.dotcount.served:DotCountServed"
    # 8 units, and one more attempt each for the 503, the 429 and the timeout.
    assert (params["model_requests"], params["model_retries"], params["model_unparsed"]) == (11, 3, 1)
    assert (
        params["model_unparsed_units"] == ["d4"]
        and params["model_api_key_env"] == "YARDSTICK_SERVED_KEY_DOTS"
    )
    assert all(request["authorization"] == f"Bearer {KEY}" for request in server.seen)

    text = (run.audit.open("rb").read()).decode()
    run.audit.close()
    assert KEY not in text and "base64" not in text and "Authorization" not in text
    lines = audit_lines(run)
    assert lines[0]["kind"] == "run" and lines[0]["options"]["api_key_env"] == "YARDSTICK_SERVED_KEY_DOTS"
    assert lines[-1] == {**lines[-1], "kind": "end", "requests": 11, "retries": 3, "unparsed": 1}
    requests = [line for line in lines if line["kind"] == "request"]
    assert len(requests) == 11

    def attempts(unit):
        return [(line["attempt"], line["status"]) for line in requests if line["units"] == [unit]]

    assert attempts("d0") == [(1, 200)]
    assert attempts("d1") == [(1, 503), (2, 200)]
    assert attempts("d2") == [(1, 429), (2, 200)]
    assert attempts("d3") == [(1, None), (2, 200)]
    by_unit = {(line["units"][0], line["attempt"]): line for line in requests}
    assert by_unit[("d1", 1)]["response"] == "busy, try again" and by_unit[("d1", 1)]["retry_in_s"] > 0
    assert by_unit[("d2", 1)]["retry_in_s"] == 0  # the server's Retry-After: 0
    assert "timed out after 1 s" in by_unit[("d3", 1)]["error"]
    first = by_unit[("d0", 1)]
    assert first["url"] == f"{server.url}/v1/chat/completions" and first["seconds"] >= 0
    image = (tmp_path / "dots" / "images" / "dots0.png").read_bytes()
    content = first["request"]["messages"][0]["content"]
    assert content == [
        {"type": "text", "text": "How many dots? Answer with a whole number only."},
        {
            "type": "image_url",
            "image_url": {"url": {"sha256": sha256(image), "bytes": len(image), "type": "image/png"}},
        },
    ]
    assert (first["request"]["model"], first["request"]["temperature"], first["request"]["max_tokens"]) == (
        "dot-counter",
        0,
        256,
    )
    assert json.loads(first["response"])["model"] == "dot-counter-1"
    answers = {line["units"][0]: line for line in lines if line["kind"] == "answer"}
    assert answers["d4"]["answer"] == {"id": "d4", "answer": ""} and answers["d4"]["unparsed"]
    assert answers["d0"]["answer"] == {"id": "d0", "answer": "1"} and "unparsed" not in answers["d0"]


def test_the_yardstick_protocol_sends_batches_concurrently_and_scores_the_answers(dots, server):
    options = {"endpoint": f"{server.url}/answer", "protocol": "yardstick", "concurrency": 2}
    seen = []
    run = execute_run(
        start_run(dataset=dots, baseline="served", batch_size=3, options=options, enqueue=False),
        progress=lambda current: seen.append(current.done),
    )
    assert run.status == "succeeded", run.error
    assert run.submission.summary["overall"]["Acc"] == 1.0
    assert run.submission.name == f"Served model ({server.url.removeprefix('http://')})"
    # Requests of the run's batch size, two at once: progress after each pair.
    assert sorted(server.units_seen()) == [["d0", "d1", "d2"], ["d3", "d4", "d5"], ["d6", "d7"]]
    assert seen[:2] == [6, 8]
    body = next(request["body"] for request in server.seen if request["units"][0] == "d0")
    assert (body["benchmark"], body["setting"]) == ("dotcount", "")
    item = body["items"][0]
    assert item["id"] == "d0" and item["payload"] == {
        "id": "d0",
        "image": "dots0.png",
        "question": "How many dots?",
    }
    assert item["images"]["image"].startswith("data:image/png;base64,")
    params = run.submission.parameters
    assert params["model_protocol"] == "yardstick" and params["model_requests"] == 3
    assert "model_prompt_sha256" not in params and "model_unparsed" not in params
    requests = [line for line in audit_lines(run) if line["kind"] == "request"]
    assert sorted(len(line["request"]["items"]) for line in requests) == [2, 3, 3]
    assert set(requests[0]["request"]["items"][0]["images"]["image"]) == {"sha256", "bytes", "type"}


def test_answers_the_benchmark_refuses_fail_the_run_naming_the_units(dots, server):
    server.table = {"d1": 7}  # a number, not the text Dot count's answers are
    options = {"endpoint": f"{server.url}/answer", "protocol": "yardstick"}
    run = execute_run(
        start_run(dataset=dots, baseline="served", batch_size=4, options=options, enqueue=False)
    )
    assert run.status == "failed" and "answers in the wrong shape" in run.error
    assert not Submission.objects.exists()


def test_a_unit_that_keeps_failing_fails_the_run_cleanly_and_its_attempts_are_kept(dots, server):
    server.broken = {"d5"}
    options = chat_options(server, retries=2, concurrency=2)
    run = execute_run(
        start_run(dataset=dots, baseline="served", batch_size=4, options=options, enqueue=False)
    )
    assert (run.status, run.done) == ("failed", 4)  # the first batch answered, the second failed
    assert "unit d5: no answer from" in run.error and "after 3 attempts" in run.error
    assert "status 500: boom: the model crashed" in run.error
    assert run.submission is None and not Submission.objects.exists()
    run.refresh_from_db()
    assert run.audit.name.endswith(".jsonl")
    requests = [line for line in audit_lines(run) if line["kind"] == "request"]
    assert [line["attempt"] for line in requests if line["units"] == ["d5"]] == [1, 2, 3]
    assert run.parameters["retries"] == 2 and run.parameters["requests"] >= 7


def test_a_refusal_is_not_retried_and_a_missing_key_variable_fails_the_run(dots, server, monkeypatch):
    server.key = KEY
    monkeypatch.setenv("YARDSTICK_SERVED_KEY_DOTS", "sk-wrong")
    options = chat_options(server, api_key_env="YARDSTICK_SERVED_KEY_DOTS", concurrency=1)
    run = execute_run(
        start_run(dataset=dots, baseline="served", batch_size=4, options=options, enqueue=False)
    )
    assert run.status == "failed" and "unit d0:" in run.error and "answered 401 (not retried)" in run.error
    assert len(server.seen) == 1 and "sk-wrong" not in json.dumps(audit_lines(run))
    monkeypatch.delenv("YARDSTICK_SERVED_KEY_DOTS")
    run = execute_run(start_run(dataset=dots, baseline="served", options=options, enqueue=False))
    assert (
        run.status == "failed"
        and "the environment variable YARDSTICK_SERVED_KEY_DOTS is not set" in run.error
    )
    assert len(server.seen) == 1 and not Submission.objects.exists()


def test_a_cancel_stops_the_requests_at_the_next_batch(dots, server):
    run = start_run(
        dataset=dots, baseline="served", batch_size=2, options=chat_options(server), enqueue=False
    )

    def cancel_after_first_batch(current):
        if current.done == 2 and current.status == "running":
            cancel_run(current)

    run = execute_run(run, progress=cancel_after_first_batch)
    assert (run.status, run.done) == ("cancelled", 2)
    assert sorted(server.units_seen()) == [["d0"], ["d1"]]
    assert (
        run.submission is None and len([line for line in audit_lines(run) if line["kind"] == "request"]) == 2
    )


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({}, "endpoint: expected the server's URL"),
        ({"endpoint": "ftp://example.org/v1", "model": "m"}, "endpoint: expected an http or https URL"),
        ({"endpoint": "http://rita:pw@example.org/v1", "model": "m"}, "endpoint: no user name or password"),
        ({"endpoint": "https://example.org/v1?api_key=abc", "model": "m"}, "endpoint: no credentials in the URL"),
        ({"endpoint": "http://example.org/v1"}, "model: the openai protocol needs the model's name"),
        ({"endpoint": "http://example.org/", "protocol": "grpc"}, "protocol: expected one of yardstick, openai"),
        ({"endpoint": "http://example.org/v1", "model": "m", "api_key_env": KEY}, "api_key_env: expected the NAME"),
        # Any other variable of the worker (its secret key, its database password) is not a key to send.
        ({"endpoint": "http://example.org/v1", "model": "m", "api_key_env": "DJANGO_SECRET_KEY"}, "api_key_env: expected the NAME"),
        ({"endpoint": "http://example.org/v1", "model": "m", "api_key_env": "DATABASE_URL"}, "starting with YARDSTICK_SERVED_KEY_"),
        ({"endpoint": "http://example.org/v1", "model": "m", "concurrency": 33}, "concurrency: expected a whole number from 1 to 32"),
        ({"endpoint": "http://example.org/v1", "model": "m", "concurrency": True}, "concurrency: expected a whole number"),
        ({"endpoint": "http://example.org/v1", "model": "m", "timeout_s": 0}, "timeout_s: expected a number of seconds from 0.1 to 600"),
        ({"endpoint": "http://example.org/v1", "model": "m", "retries": 11}, "retries: expected a whole number from 0 to 10"),
        ({"endpoint": "http://example.org/v1", "model": "m", "max_tokens": 0}, "max_tokens: expected a whole number from 1 to 32768"),
        ({"endpoint": "http://example.org/v1", "model": "m", "temperature": 1}, "options: unknown option 'temperature'"),
    ],
)  # fmt: skip
def test_bad_options_are_refused_naming_the_option_and_nothing_is_created(dots, options, message):
    with pytest.raises(RunRefused, match=message.replace("(", r"\(").replace("?", r"\?")):
        start_run(dataset=dots, baseline="served", options=options, enqueue=False)
    with pytest.raises(RunRefused, match="options: only a served model takes options"):
        start_run(dataset=dots, baseline="blobs", options={"endpoint": "http://example.org"}, enqueue=False)
    assert not ModelRun.objects.exists()


def test_the_form_shows_the_served_fields_and_the_run_page_links_its_requests(
    dots, server, client, django_capture_on_commit_callbacks
):
    rita = make_user("rita", "researcher")
    client.force_login(rita)
    page = client.get("/models/new/").content.decode()
    assert 'value="dotcount:served"' in page and 'data-served="1"' in page and "(served model)" in page
    for field in (
        "endpoint",
        "protocol",
        "served_model",
        "api_key_env",
        "concurrency",
        "timeout_s",
        "retries",
    ):
        assert f'id="field-{field}" data-served-field' in page
    assert 'id="field-checkpoint" data-served-field' not in page
    refused = client.post(
        "/models/new/",
        {
            "dataset": dots.pk,
            "baseline": "dotcount:served",
            "device": "auto",
            "seed": 0,
            "endpoint": server.url,
        },
    )
    assert "model: the openai protocol needs" in refused.content.decode() and not ModelRun.objects.exists()
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            "/models/new/",
            {
                "dataset": dots.pk,
                "baseline": "dotcount:served",
                "device": "auto",
                "seed": 0,
                "endpoint": f"{server.url}/v1",
                "protocol": "openai",
                "served_model": "dot-counter",
                "concurrency": 2,
                "timeout_s": 5,
            },
        )
    run = ModelRun.objects.get()
    assert response.status_code == 302 and run.status == "succeeded", run.error
    assert (
        run.options["model"] == "dot-counter"
        and run.options["concurrency"] == 2
        and run.options["retries"] == 3
    )
    shown = client.get(f"/models/{run.pk}/").content.decode()
    assert "Requests and responses (JSON lines)" in shown and f"/models/{run.pk}/requests.jsonl" in shown
    assert f"{server.url}/v1" in shown and "prompt_sha256" in shown
    audit = client.get(f"/models/{run.pk}/requests.jsonl")
    assert audit.status_code == 200 and audit["Content-Type"] == "application/x-ndjson"
    assert "attachment" in audit["Content-Disposition"] and audit["X-Content-Type-Options"] == "nosniff"
    assert b'"kind": "request"' in b"".join(audit.streaming_content)
    client.force_login(make_user("tess", "tester"))
    assert client.get(f"/models/{run.pk}/requests.jsonl").status_code == 403
    client.force_login(make_user("rex", "researcher"))  # whoever may see the run may read its requests
    assert client.get(f"/models/{run.pk}/requests.jsonl").status_code == 200
    quiet = start_run(dataset=dots, baseline="guess", enqueue=False)
    client.force_login(rita)
    assert client.get(f"/models/{quiet.pk}/requests.jsonl").status_code == 404


def test_the_api_and_the_command_line_take_the_same_options(dots, server, django_capture_on_commit_callbacks):
    api = APIClient()
    api.force_authenticate(make_user("rita", "researcher"))
    refused = api.post(
        "/api/v1/model-runs/",
        {
            "dataset": dots.pk,
            "baseline": "served",
            "options": {"endpoint": server.url, "protocol": "yardstick", "retries": 99},
        },
        format="json",
    )
    assert refused.status_code == 400 and refused.json()["detail"].startswith("retries: expected")
    refused = api.post(
        "/api/v1/model-runs/", {"dataset": dots.pk, "baseline": "served", "options": ["x"]}, format="json"
    )
    assert refused.status_code == 400 and "options" in refused.json()
    options = {"endpoint": f"{server.url}/answer", "protocol": "yardstick"}
    with django_capture_on_commit_callbacks(execute=True):
        created = api.post(
            "/api/v1/model-runs/",
            {"dataset": dots.pk, "baseline": "served", "options": options},
            format="json",
        )
    assert created.status_code == 201, created.json()
    assert created.json()["options"]["protocol"] == "yardstick" and created.json()["audit"] is None
    run = api.get(f"/api/v1/model-runs/{created.json()['id']}/").json()
    assert run["status"] == "succeeded" and run["audit"].endswith(f"/api/v1/model-runs/{run['id']}/audit/")
    audit = api.get(run["audit"])
    assert audit.status_code == 200 and b'"kind": "end"' in b"".join(audit.streaming_content)

    out = io.StringIO()
    call_command(
        "run_baseline", "served", str(dots.pk), "--endpoint", f"{server.url}/v1", "--protocol", "openai",
        "--served-model", "dot-counter", "--concurrency", "2", "--timeout", "5", "--retries", "1", "--json",
        stdout=out,
    )  # fmt: skip
    result = json.loads(out.getvalue())
    assert result["status"] == "succeeded" and result["summary"]["overall"]["Acc"] == 1.0
    assert ModelRun.objects.get(pk=result["run"]).options["retries"] == 1


def test_a_format_s_settings_bound_the_chat_protocol_only(trance_dataset):
    chat = {"endpoint": "http://example.org/v1", "model": "m"}
    with pytest.raises(RunRefused, match="setting: m \\(served\\) answers the setting Basic, Event only"):
        start_run(dataset=trance_dataset, baseline="served", setting="view", options=chat, enqueue=False)
    # The yardstick protocol's server sees every render: it may answer View.
    run = start_run(
        dataset=trance_dataset,
        baseline="served",
        setting="view",
        options={"endpoint": "http://example.org/answer", "protocol": "yardstick"},
        enqueue=False,
    )
    assert run.options["protocol"] == "yardstick"


def test_a_question_about_a_scene_s_photo_is_sent_with_that_photo(cric_files):
    from benchmarks.services import import_dataset
    from inference.services import dataset_units

    dataset = import_dataset(
        benchmark="cric",
        data=cric_files.questions.read_bytes(),
        name="cric served",
        split="val",
        images_dir=cric_files.images_dir,
        scenes_data=cric_files.scene_graphs.read_bytes(),
        scenes_source=cric_files.scene_graphs.name,
    )
    units = dataset_units(dataset)
    assert units and all(set(unit.images) == {"image"} for unit in units)
    scene_images = dict(dataset.scenes.values_list("pk", "image"))
    item = dataset.items.get(external_id=units[0].id)
    assert units[0].images["image"].endswith("/" + scene_images[item.scene_id])
    assert all(Path(unit.images["image"]).is_file() for unit in units)


# --- the pure pieces -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "answer"),
    [
        ("3", "3"),
        ("I can see 3 dots in the image.", "3"),
        ("Let me count them: 1, 2, 3, 4.\n**Answer:** 4", "4"),
        ("```\n2\n```", "2"),
    ],
)
def test_dot_count_s_parser_reads_the_count_through_the_chatter(text, answer):
    from inference.plugins import ModelInput

    assert DotCountServed().parse(text, ModelInput("d0", "")) == {"id": "d0", "answer": answer}


@pytest.mark.parametrize("text", ["", "I cannot tell.", "many dots"])
def test_dot_count_s_parser_refuses_garbage(text):
    from inference.plugins import ModelInput

    with pytest.raises(Unparsed):
        DotCountServed().parse(text, ModelInput("d0", ""))


def test_retry_after_is_read_in_seconds_and_capped():
    assert retry_after("0", 60) == 0 and retry_after("2.5", 60) == 2.5 and retry_after("3600", 60) == 60
    assert retry_after(None, 60) is None and retry_after("Wed, 21 Oct 2026 07:28:00 GMT", 60) is None
    assert retry_after("-1", 60) is None


def test_backoff_grows_with_a_jitter_drawn_from_the_seed(tmp_path):
    def waits(seed):
        endpoint = Endpoint(
            ServedOptions(endpoint="http://127.0.0.1:9"), audit=None, seed=seed, backoff_s=1.0
        )
        try:
            return [endpoint.backoff("unit d1", attempt) for attempt in (1, 2, 3)]
        finally:
            endpoint.close()

    first = waits(1)
    assert first == waits(1) and first != waits(2)
    assert 1 <= first[0] <= 1.5 and 2 <= first[1] <= 3 and 4 <= first[2] <= 6


def test_a_long_response_is_cut_in_the_audit_and_says_so():
    assert response_for_audit("short") == {"response": "short"}
    cut = response_for_audit("é" * AUDIT_RESPONSE_BYTES)
    assert cut["response_truncated"] and cut["response_bytes"] == 2 * AUDIT_RESPONSE_BYTES
    assert len(cut["response"].encode()) <= AUDIT_RESPONSE_BYTES


# --- the hosts a run may reach -------------------------------------------------------------------


@pytest.mark.parametrize(
    "host, allowed, addresses, refused",
    [
        ("169.254.169.254", [], [], "link-local"),  # a cloud machine's metadata service
        ("[fe80::1]", [], [], "link-local"),
        ("metadata.internal", [], ["169.254.169.254"], "link-local"),  # by name, the same place
        ("gpu-box.lab.example.org", ["*.lab.example.org"], ["169.254.169.254"], "link-local"),
        ("127.0.0.1", [], [], ""),
        ("gpu-box", [], ["10.1.2.3"], ""),
        ("gpu-box.lab.example.org", ["*.lab.example.org"], ["10.1.2.3"], ""),
        ("lab.example.org.evil.com", ["*.lab.example.org"], ["203.0.113.5"], "not among"),
        ("gpu-box", ["gpu-box", "10.0.0.0/8"], [], ""),
        ("GPU-BOX.", ["gpu-box"], [], ""),
        ("other-box", ["gpu-box"], ["192.168.1.9"], "not among"),
        ("other-box", ["gpu-box", "10.0.0.0/8"], ["10.9.9.9"], ""),  # every address in a network
        ("other-box", ["10.0.0.0/8"], ["10.9.9.9", "203.0.113.5"], "not among"),
        ("10.2.3.4", ["10.0.0.0/8"], [], ""),
        ("127.0.0.1", ["gpu-box"], [], "not among"),  # an address only by a network
    ],
)
def test_host_problem_keeps_runs_to_the_hosts_the_site_allows(host, allowed, addresses, refused):
    from inference.served import host_problem

    problem = host_problem(host, allowed, addresses)
    assert (refused in problem) if refused else problem == "", problem


def test_an_endpoint_the_site_does_not_allow_is_refused_at_start_and_on_the_worker(
    dots, settings, monkeypatch
):
    dataset = dots
    with pytest.raises(RunRefused, match=r"endpoint: 169\.254\.169\.254 is .*link-local"):
        start_run(
            dataset=dataset,
            baseline="served",
            options={"endpoint": "http://169.254.169.254/latest", "protocol": "yardstick"},
            enqueue=False,
        )
    settings.SERVED_ALLOWED_HOSTS = ["gpu-box.lab.example.org"]
    with pytest.raises(RunRefused, match="127.0.0.1 is not among the hosts .*YARDSTICK_SERVED_ALLOWED_HOSTS"):
        start_run(
            dataset=dataset,
            baseline="served",
            options={"endpoint": "http://127.0.0.1:9/", "protocol": "yardstick"},
            enqueue=False,
        )
    assert not ModelRun.objects.exists()
    # An allowed name that resolves, on the worker, to a metadata address: the run fails, nothing sent.
    run = start_run(
        dataset=dataset,
        baseline="served",
        options={"endpoint": "http://gpu-box.lab.example.org:8000/", "protocol": "yardstick"},
        enqueue=False,
    )
    monkeypatch.setattr(
        "inference.served.socket.getaddrinfo",
        lambda *args, **kwargs: [(2, 1, 6, "", ("169.254.169.254", 8000))],
    )
    run = execute_run(run)
    assert (
        run.status == "failed"
        and "gpu-box.lab.example.org resolves to 169.254.169.254, a link-local" in run.error
    )
    assert run.done == 0
