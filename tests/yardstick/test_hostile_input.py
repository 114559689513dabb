"""Odd and hostile input: refused with the field named and nothing stored, or stored and shown as
written; never a 500, not at once and not later on somebody else's page (issue 25, findings 3-6
and 8). Each test failed before its fix."""

from __future__ import annotations

import io
import json

import pytest
from django.test import Client
from rest_framework.test import APIClient

from annotation.models import Assignment, QAPair
from benchmarks.models import Dataset
from evaluation.models import Submission
from humantest.models import Trial
from inference.models import ModelRun
from tests.factories import client_for, make_user
from tests.yardstick.hostile import body, build_site, token_for
from validation.models import Verdict

pytestmark = pytest.mark.django_db


@pytest.fixture
def site(tmp_path, settings):
    return build_site(tmp_path, settings)


def post(client: Client, url: str, value, raw: str | None = None):
    return client.post(url, raw if raw is not None else body(value), content_type="application/json")


def field_of(response) -> str:
    """The field a refusal names, whichever endpoint answered."""
    data = response.json()
    if "errors" in data:
        return data["errors"][0]["field"]
    if "field" in data:
        return data["field"]
    return next(iter(data))


# --- finding 3: a lone surrogate in any text --------------------------------------------------------


def test_a_lone_surrogate_is_refused_wherever_text_is_written_and_pages_stay_up(site):
    ann, rev, tess, rita = (site.people[name] for name in ("ann", "rev", "tess", "rita"))
    lone = "\ud800"
    annotator = client_for(ann)
    held = f"/annotate/assignments/{site.held.pk}"
    refused = [
        post(annotator, f"{held}/skip/", {"version": site.held.version, "reason": lone}),
        post(
            annotator,
            f"{held}/save/",
            {"version": site.held.version, "draft": {"pairs": [{"question": lone}]}},
        ),
    ]
    pair = {"question": f"what{lone}?", "answer": "x", "evidence": [10, 10, 60, 10, 60, 40, 10, 40]}
    refused.append(post(annotator, f"{held}/submit/", {"version": site.held.version, "pairs": [pair]}))
    verdict = f"/validate/assignments/{site.verdict_task.pk}"
    answers = {"answer_correct": False, "grounding_correct": True, "natural": 3, "wrong_step": None}
    refused += [
        post(annotator, f"{verdict}/submit/", {"version": 0, "answers": {**answers, "comment": lone}}),
        post(annotator, f"{verdict}/skip/", {"version": 0, "reason": lone}),
    ]
    reviewer = client_for(rev)
    review = f"/annotate/review/pairs/{site.pair.pk}/"
    refused += [
        post(reviewer, review, {"version": site.pair.version, "action": "reject", "reason": lone}),
        post(
            reviewer,
            review,
            {
                "version": site.pair.version,
                "action": "fix",
                "answer": lone,
                "question": "q?",
                "evidence": site.pair.evidence,
            },
        ),
    ]
    tester = client_for(tess)
    refused.append(
        post(tester, f"/test/trials/{site.trial.pk}/answer/", {"answer": {"answer": lone, "object": None}})
    )
    for response in refused:
        assert response.status_code == 400, response.content
        assert "surrogate" in json.dumps(response.json()), response.json()
    # Nothing was stored...
    site.held.refresh_from_db()
    assert (
        site.held.status == Assignment.Status.LEASED and site.held.draft == {} and site.held.skip_reason == ""
    )
    assert not Verdict.objects.exists()
    assert QAPair.objects.get(pk=site.pair.pk).review == QAPair.Review.PENDING
    assert Trial.objects.get(pk=site.trial.pk).status == Trial.Status.SERVED
    # ...and the pages and exports that showed stored answers answer everybody.
    researcher = client_for(rita)
    for url in (
        f"/test/plans/{site.test_plan.pk}/",
        f"/test/plans/{site.test_plan.pk}/trials.csv",
        f"/test/plans/{site.test_plan.pk}/trials.json",
        f"/validate/plans/{site.plan.pk}/",
        f"/validate/plans/{site.plan.pk}/export.csv",
    ):
        assert researcher.get(url).status_code == 200, url
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {token_for(rita)}")
    assert api.get(f"/api/v1/test-plans/{site.test_plan.pk}/trials/").status_code == 200


def test_nul_and_control_characters_are_refused_on_any_database(site):
    annotator = client_for(site.people["ann"])
    held = f"/annotate/assignments/{site.held.pk}"
    for text in ("a\x00b", "bell\x07"):
        response = post(annotator, f"{held}/skip/", {"version": site.held.version, "reason": text})
        assert response.status_code == 400 and field_of(response) == "reason", text
        response = post(annotator, f"{held}/save/", {"version": site.held.version, "draft": {"note": text}})
        assert response.status_code == 400 and field_of(response) == "draft.note", text
    site.held.refresh_from_db()
    assert site.held.version == 0 and site.held.status == Assignment.Status.LEASED


# --- finding 4: $…$ in a name or question -----------------------------------------------------------


def test_dollar_signs_in_names_and_questions_are_drawn_as_written(site, django_capture_on_commit_callbacks):
    """matplotlib read "$...$" as mathtext: a row named "$\\frac{1$" or a question beginning so
    made the report's plots and the project's plots fail for everybody."""
    from annotation import services as annotation_services
    from evaluation.services import submit_predictions

    rita = site.people["rita"]
    answers = json.dumps(
        [{"question_id": item.external_id, "answer": "no", "object": None} for item in site.cric.items.all()]
    ).encode()
    for name in ("$\\frac{1$", "$x", "cost $5 or $6"):
        submit_predictions(dataset=site.cric, name=name, data=answers, created_by=rita)
    researcher = client_for(rita)
    page = researcher.get(f"/datasets/{site.cric.pk}/report/")
    assert page.status_code == 200
    assert page.content.decode().count("<svg") >= 1  # the breakdown plots are drawn
    assert "$\\frac{1$" in page.content.decode()  # the legend says it as typed
    # An annotator's question beginning with dollars breaks neither the project's plots nor its page.
    held = site.held
    annotation_services.submit(
        held,
        site.people["ann"],
        version=held.version,
        pairs=[
            {
                "question": "$\\frac{1$ what is it?",
                "answer": "x",
                "evidence": [10, 10, 60, 10, 60, 40, 10, 40],
            }
        ],
        check_evidence=False,
    )
    for plot in ("first-words", "lengths"):
        response = researcher.get(f"/annotate/projects/{site.project.pk}/plots/{plot}.png")
        assert response.status_code == 200 and response.content[:4] == b"\x89PNG", plot
    # A test plan's row label with dollars draws in the report too.
    site.test_plan.row_label = "$\\sqrt{$"
    site.test_plan.save()
    from humantest import answers

    with django_capture_on_commit_callbacks(execute=True):
        answers.record_answer(site.trial.pk, site.people["tess"], {"answer": "yes", "object": None}, {})
    assert researcher.get(f"/datasets/{site.cric.pk}/report/").status_code == 200


# --- finding 5: a line break in a name --------------------------------------------------------------


def test_a_name_with_a_line_break_is_refused_and_one_stored_earlier_downloads_fine(site):
    researcher = client_for(site.people["rita"])
    # Made before names were checked (written straight to the database): its downloads still work.
    legacy = Dataset.objects.get(pk=site.cric.pk)
    Dataset.objects.filter(pk=legacy.pk).update(name="two\r\nlines\x07 \u2028name")
    for url in (
        f"/datasets/{legacy.pk}/export/",
        f"/datasets/{legacy.pk}/report.csv",
        f"/datasets/{legacy.pk}/report.tex",
    ):
        response = researcher.get(url)
        assert response.status_code == 200, url
        header = response["Content-Disposition"]
        assert header.startswith("attachment;") and "\n" not in header and "\r" not in header
    # A project named so before the check publishes no dataset named so: it says why.
    from annotation.models import Project

    Project.objects.filter(pk=site.project.pk).update(name="Signs\r\nv2")
    response = researcher.post(f"/annotate/projects/{site.project.pk}/publish/", follow=True)
    assert response.status_code == 200
    assert Dataset.objects.filter(name__contains="\n").count() == 1  # only the legacy one
    # New names with a line break are refused on every form and in the API, naming the field.
    assert (
        "one line"
        in researcher.post(
            "/annotate/projects/new/",
            {"name": "a\nb", "dataset": site.signs.pk, "annotators": [site.people["ann"].pk]},
        ).content.decode()
    )
    upload = io.BytesIO(b"[]")
    upload.name = "p.json"
    response = researcher.post(
        f"/datasets/{site.cric.pk}/report/",
        {"name": "Model\r\nX", "producer": "model", "variant": "official", "file": upload},
    )
    assert response.status_code == 200 and "one line" in response.content.decode()
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {token_for(site.people['rita'])}")
    response = api.post(
        "/api/v1/test-plans/",
        {"name": "Plan\nB", "dataset": site.cric.pk, "items_per_tester": 1, "testers": []},
        format="json",
    )
    assert response.status_code == 400 and "name" in response.json()
    assert not Submission.objects.filter(name__contains="\n").exists()


# --- finding 6: NaN, deep JSON, integers past 64 bits -----------------------------------------------


def test_nan_and_infinity_in_drafts_are_refused_naming_the_field(site):
    annotator = client_for(site.people["ann"])
    for raw in (
        '{"version": 0, "draft": {"zoom": NaN}}',
        '{"version": 0, "draft": {"zoom": Infinity}}',
        '{"version": 0, "draft": {"zoom": 1e999}}',
    ):
        response = post(annotator, f"/annotate/assignments/{site.held.pk}/save/", None, raw=raw)
        assert response.status_code == 400, raw
        response = post(
            annotator,
            f"/validate/assignments/{site.verdict_task.pk}/save/",
            None,
            raw=raw.replace("draft", "answers"),
        )
        assert response.status_code == 400, raw
    site.held.refresh_from_db()
    site.verdict_task.refresh_from_db()
    assert site.held.version == 0 and site.verdict_task.version == 0


@pytest.mark.parametrize(
    "url",
    [
        "/api/v1/auth/token/",
        "/api/v1/test-plans/",
        "/api/v1/model-runs/",
        "/api/v1/submissions/",
        "/api/v1/imports/",
    ],
)
def test_deeply_nested_json_is_a_400_on_every_api_post(site, url):
    deep = "[" * 5000 + "]" * 5000
    api = APIClient()
    if url != "/api/v1/auth/token/":
        api.credentials(HTTP_AUTHORIZATION=f"Token {token_for(site.people['rita'])}")
    response = api.post(url, deep, content_type="application/json")
    assert response.status_code == 400 and "nested" in json.dumps(response.json())
    response = api.post(url, '{"a": ' * 20 + "1" + "}" * 20, content_type="application/json")
    assert response.status_code == 400


def test_integers_past_the_database_range_are_refused_on_forms_and_in_the_api(site, trance_dataset):
    rita = site.people["rita"]
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {token_for(rita)}")
    for seed in (2**64, 2**63, 2**31, -(2**63) - 1):
        response = api.post(
            "/api/v1/model-runs/",
            {"dataset": trance_dataset.pk, "baseline": "random", "seed": seed},
            format="json",
        )
        assert response.status_code == 400 and "seed" in response.json(), seed
    researcher = client_for(rita)
    response = researcher.post(
        "/models/new/",
        {
            "dataset": trance_dataset.pk,
            "baseline": "trance:random",
            "device": "auto",
            "batch_size": 8,
            "seed": 2**70,
        },
    )
    assert response.status_code == 200 and "seed" in response.context["form"].errors
    assert not ModelRun.objects.exists()
    # Item ids of a validation plan over chosen items: huge ones are named, not a crash.
    response = researcher.post(
        "/validate/plans/new/",
        {
            "name": "Chosen",
            "dataset": site.cric.pk,
            "items": f"{2**64},{10**40}",
            "allocation": "proportional",
            "confidence": 0.95,
            "seed": 0,
            "overlap": 0,
            "validators_per_overlap": 2,
            "lease_seconds": 600,
            "validators": [site.people["ann"].pk],
        },
    )
    assert response.status_code == 200 and "items" in response.context["form"].errors


# --- finding 8: limits ------------------------------------------------------------------------------


def test_a_tester_cannot_store_an_answer_of_megabytes(site):
    tester = client_for(site.people["tess"])
    url = f"/test/trials/{site.trial.pk}/answer/"
    huge = {"answer": {"answer": "x" * 5_000_000, "object": None}}
    response = post(tester, url, huge)
    assert response.status_code == 400 and field_of(response) == "body"
    # Under the body's limit, but more than an answer can be: refused as an answer.
    response = post(tester, url, {"answer": {"answer": "x" * 40_000, "object": None}})
    assert response.status_code == 400 and field_of(response) == "answer"
    assert Trial.objects.get(pk=site.trial.pk).status == Trial.Status.SERVED


def test_one_person_has_a_few_model_runs_queued_at_once(site, trance_dataset, settings):
    settings.MODEL_RUNS_PER_PERSON = 4
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {token_for(site.people['rita'])}")
    codes = [
        api.post("/api/v1/model-runs/", {"dataset": trance_dataset.pk, "baseline": "random"}, format="json")
        for _ in range(6)
    ]
    assert [response.status_code for response in codes] == [201] * 4 + [400] * 2
    assert "wait for one to finish" in json.dumps(codes[-1].json())
    assert ModelRun.objects.filter(created_by=site.people["rita"]).count() == 4
    # Another researcher is not held up by it; a cancelled run frees a place.
    other = APIClient()
    other.credentials(HTTP_AUTHORIZATION=f"Token {token_for(site.people['rex'])}")
    assert (
        other.post(
            "/api/v1/model-runs/", {"dataset": trance_dataset.pk, "baseline": "random"}, format="json"
        ).status_code
        == 201
    )
    first = ModelRun.objects.filter(created_by=site.people["rita"]).first()
    assert api.post(f"/api/v1/model-runs/{first.pk}/cancel/").status_code == 200
    assert (
        api.post(
            "/api/v1/model-runs/", {"dataset": trance_dataset.pk, "baseline": "random"}, format="json"
        ).status_code
        == 201
    )


def test_the_run_form_shows_checkpoint_names_not_the_servers_paths(site, trance_dataset, settings, tmp_path):
    folder = tmp_path / "secret-checkpoints"
    folder.mkdir()
    (folder / "mine.pt").write_bytes(b"not a real checkpoint")
    settings.CHECKPOINT_DIR = folder
    page = client_for(site.people["rita"]).get(f"/models/new/?dataset={trance_dataset.pk}").content.decode()
    assert "mine.pt" in page and str(folder) not in page


def test_a_stranger_cannot_use_a_json_endpoint_to_learn_anything(site):
    """Refusals of the input gate are the endpoint's usual shape: a tester posting to an annotator's
    assignment is refused for who they are before their body is read."""
    stranger = client_for(make_user("tom", "tester"))
    response = post(stranger, f"/annotate/assignments/{site.held.pk}/save/", None, raw="[" * 5000)
    assert response.status_code == 403


def test_text_stored_with_a_lone_surrogate_before_the_gate_is_repaired_by_the_migration(site):
    """Only SQLite could hold one (PostgreSQL's jsonb refuses it): the migration's repair makes the
    pages that showed it answer again, keeping the rest of the text."""
    from django.db import connection

    from accounts.inputs import repair_stored_text

    if connection.vendor != "sqlite":
        pytest.skip("PostgreSQL never stored a lone surrogate: jsonb refuses it")
    Trial.objects.filter(pk=site.trial.pk).update(
        status=Trial.Status.ANSWERED, answer={"answer": "caf\udce9 😀", "object": None}
    )
    researcher = client_for(site.people["rita"])
    researcher.raise_request_exception = False
    assert researcher.get(f"/test/plans/{site.test_plan.pk}/trials.csv").status_code == 500
    assert repair_stored_text(Trial, ["answer", "client"], connection) == 1
    assert Trial.objects.get(pk=site.trial.pk).answer == {"answer": "caf\ufffd 😀", "object": None}
    response = researcher.get(f"/test/plans/{site.test_plan.pk}/trials.csv")
    assert response.status_code == 200 and "caf\ufffd 😀" in response.content.decode()
    assert repair_stored_text(Trial, ["answer", "client"], connection) == 0  # the emoji's pair stays


def test_one_person_has_a_few_imports_and_scoring_jobs_waiting_at_once(site, settings):
    from benchmarks.models import ImportJob
    from evaluation.models import ScoringJob

    settings.JOBS_PER_PERSON = 2
    rita = site.people["rita"]
    for index in range(2):
        ImportJob.objects.create(benchmark="cric", name=f"waiting {index}", created_by=rita, upload="w.json")
        ScoringJob.objects.create(dataset=site.cric, name=f"waiting {index}", created_by=rita)
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {token_for(rita)}")
    upload = io.BytesIO(b"[]")
    upload.name = "questions.json"
    response = api.post("/api/v1/imports/", {"benchmark": "cric", "name": "third", "upload": upload})
    assert response.status_code == 400 and "wait for one to finish" in json.dumps(response.json())
    assert not ImportJob.objects.filter(name="third").exists()
    settings.SCORE_IN_REQUEST_UNITS = 0  # every upload goes to a worker
    upload = io.BytesIO(b"[]")
    upload.name = "predictions.json"
    response = client_for(rita).post(
        f"/datasets/{site.cric.pk}/report/",
        {"name": "third", "producer": "model", "variant": "official", "file": upload},
    )
    assert response.status_code == 200 and "wait for one to finish" in response.content.decode()
    assert not Submission.objects.filter(name="third").exists()
    # Another researcher's uploads wait in the same queue, but not behind this limit.
    upload = io.BytesIO(b"[]")
    upload.name = "questions.json"
    other = APIClient()
    other.credentials(HTTP_AUTHORIZATION=f"Token {token_for(site.people['rex'])}")
    assert (
        other.post("/api/v1/imports/", {"benchmark": "cric", "name": "rex's", "upload": upload}).status_code
        == 201
    )


def test_a_prediction_file_whose_text_holds_nul_is_refused_naming_the_answer(site):
    """PostgreSQL refused the file at its first NUL (a 500); SQLite stored it. Now both name it."""
    question = site.cric.items.order_by("position").first().external_id
    rows = [{"question_id": question, "answer": "a\u0000b", "object": None}]
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {token_for(site.people['rita'])}")
    upload = io.BytesIO(json.dumps(rows).encode())
    upload.name = "predictions.json"
    response = api.post("/api/v1/submissions/", {"dataset": site.cric.pk, "name": "with NUL", "file": upload})
    assert response.status_code == 400
    assert f"the answer for {question}: answer: holds a NUL character" in json.dumps(response.json())
    assert not Submission.objects.filter(name="with NUL").exists()
