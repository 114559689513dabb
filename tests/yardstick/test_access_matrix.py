"""Who may do what: every address of the app, every role, every method it takes (issue 25, finding 9).

One row per named address: how to build it for the site's objects, and who gets through with each
method (everyone else is refused: redirected to log in, 403 or 404). The test sends every request
as every person and compares; an address the app serves that has no row fails the test, so a new
view cannot arrive without saying who may use it. Requests that would change something run in a
transaction that is rolled back, so each row sees the same site.

The people: ada (admin), rita (a researcher who made every object here), rex (another researcher),
ann (annotator of the project and validator of the plan, holding a task in both), bob (annotator
of the project), ned (an annotator removed from the project), rev (reviewer), tess (the tester
invited to the test plan, in the middle of it), tom (a tester not invited), and anonymous visitors.

The rules the rows say: researchers read everything researchers read; only who made a thing (or an
admin) changes or deletes it; members work their project's queue, holders their own assignments,
reviewers their projects' pairs, testers their own sessions and trials.
"""

from __future__ import annotations

import copy
import inspect
import re
from urllib.parse import quote

import orjson
import pytest
from django.core.files.base import ContentFile
from django.db import transaction
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver
from rest_framework.authtoken.models import Token

from annotation import queue
from evaluation.models import ScoringJob
from evaluation.services import submit_predictions
from inference.services import start_run
from tests.factories import make_user
from tests.yardstick.hostile import build_site

pytestmark = pytest.mark.django_db

EVERYONE = {"anon", "ada", "rita", "rex", "ann", "bob", "ned", "rev", "tess", "tom"}
SIGNED_IN = EVERYONE - {"anon"}
RESEARCHERS = {"ada", "rita", "rex"}
OWNER = {"ada", "rita"}  # rita made every object of the site; ada is an admin

#: Addresses left out, with the test that covers them.
NOT_HERE = {
    None: "favicon.ico: a redirect to a static file",
    "media": "tests/yardstick/test_media.py: who sees each dataset file",
}


def rows(site) -> dict[tuple[str, str], tuple[str, set[str]]]:
    """(address name, method) -> (the address, who gets through)."""
    d, item = site.cric.pk, site.cric.items.first().pk
    p, plan, test_plan = site.project.pk, site.plan.pk, site.test_plan.pk
    held, verdict, trial = site.held.pk, site.verdict_task.pk, site.trial.pk
    session = site.trial.session_id
    sub, run, job, scoring = site.submission.pk, site.run.pk, site.job.pk, site.scoring.pk
    return {
        ("home", "GET"): ("/", SIGNED_IN),
        ("login", "GET"): ("/accounts/login/", EVERYONE),
        ("javascript-catalog", "GET"): ("/jsi18n/", EVERYONE),
        ("logout", "POST"): ("/accounts/logout/", EVERYONE),
        ("choose-language", "POST"): ("/accounts/language/", EVERYONE),
        ("password_change", "GET"): ("/accounts/password_change/", SIGNED_IN),
        ("password_change_done", "GET"): ("/accounts/password_change/done/", SIGNED_IN),
        ("password_reset", "GET"): ("/accounts/password_reset/", EVERYONE),
        ("password_reset_done", "GET"): ("/accounts/password_reset/done/", EVERYONE),
        ("password_reset_confirm", "GET"): ("/accounts/reset/MQ/set-password/", EVERYONE),
        ("password_reset_complete", "GET"): ("/accounts/reset/done/", EVERYONE),
        # The catalog: researchers; an import job is its maker's (and an admin's).
        ("benchmarks:dataset-list", "GET"): ("/datasets/", RESEARCHERS),
        ("benchmarks:import", "GET"): ("/datasets/import/", RESEARCHERS),
        ("benchmarks:import", "POST"): ("/datasets/import/", RESEARCHERS),
        ("benchmarks:import-job", "GET"): (f"/datasets/import/{job}/", OWNER),
        ("benchmarks:dataset-detail", "GET"): (f"/datasets/{d}/", RESEARCHERS),
        ("benchmarks:dataset-export", "GET"): (f"/datasets/{d}/export/", RESEARCHERS),
        ("benchmarks:item-detail", "GET"): (f"/datasets/{d}/items/{item}/", RESEARCHERS),
        # Reports: every researcher reads them; a submission is renamed or deleted by its maker.
        ("evaluation:report", "GET"): (f"/datasets/{d}/report/", RESEARCHERS),
        ("evaluation:report", "POST"): (f"/datasets/{d}/report/", RESEARCHERS),
        ("evaluation:report-compare", "GET"): (f"/datasets/{d}/report/compare/", RESEARCHERS),
        ("evaluation:report-compare-export", "GET"): (
            f"/datasets/{d}/report/compare.csv?a=Mine&b=Other",
            RESEARCHERS,
        ),
        ("evaluation:report-overlap", "GET"): (
            f"/datasets/{d}/report/compare/overlap/?a=Mine&b=Other&column={quote(site.column)}",
            RESEARCHERS,
        ),
        ("evaluation:report-pairwise", "GET"): (f"/datasets/{d}/report/pairwise/", RESEARCHERS),
        ("evaluation:report-scoring", "GET"): (f"/datasets/{d}/report/scoring/", RESEARCHERS),
        ("evaluation:report-pairwise-export", "GET"): (f"/datasets/{d}/report/pairwise.csv", RESEARCHERS),
        ("evaluation:report-export", "GET"): (f"/datasets/{d}/report.csv", RESEARCHERS),
        ("evaluation:submission-rename", "GET"): (f"/datasets/{d}/report/submissions/{sub}/rename/", OWNER),
        ("evaluation:submission-rename", "POST"): (f"/datasets/{d}/report/submissions/{sub}/rename/", OWNER),
        ("evaluation:submission-delete", "GET"): (f"/datasets/{d}/report/submissions/{sub}/delete/", OWNER),
        ("evaluation:submission-delete", "POST"): (f"/datasets/{d}/report/submissions/{sub}/delete/", OWNER),
        # Human tests: testers their own sessions; researchers read plans; the maker deletes one.
        ("humantest:my-tests", "GET"): ("/test/", SIGNED_IN),
        ("humantest:history", "GET"): ("/test/history/", SIGNED_IN),
        ("humantest:plan-list", "GET"): ("/test/plans/", RESEARCHERS),
        ("humantest:plan-new", "GET"): ("/test/plans/new/", RESEARCHERS),
        ("humantest:plan-new", "POST"): ("/test/plans/new/", RESEARCHERS),
        ("humantest:plan-results", "GET"): (f"/test/plans/{test_plan}/", RESEARCHERS),
        ("humantest:plan-delete", "GET"): (f"/test/plans/{test_plan}/delete/", OWNER),
        ("humantest:plan-delete", "POST"): (f"/test/plans/{test_plan}/delete/", OWNER),
        ("humantest:plan-export", "GET"): (f"/test/plans/{test_plan}/trials.csv", RESEARCHERS),
        ("humantest:start", "POST"): (f"/test/plans/{test_plan}/start/", {"tess"}),
        ("humantest:study", "GET"): (f"/test/plans/{test_plan}/study/", RESEARCHERS),
        ("humantest:study", "POST"): (f"/test/plans/{test_plan}/study/", OWNER),
        ("humantest:payment-export", "GET"): (
            f"/test/plans/{test_plan}/payments/1.prolific.csv",
            RESEARCHERS,
        ),
        ("humantest:quality", "GET"): (f"/test/plans/{test_plan}/quality/", RESEARCHERS),
        ("humantest:quality", "POST"): (f"/test/plans/{test_plan}/quality/", OWNER),
        ("humantest:quality-export", "GET"): (f"/test/plans/{test_plan}/quality/testers.csv", RESEARCHERS),
        ("humantest:quality-plot", "GET"): (f"/test/plans/{test_plan}/quality/plot.svg", RESEARCHERS),
        ("humantest:report", "GET"): (f"/test/plans/{test_plan}/report/", RESEARCHERS),
        ("humantest:report", "POST"): (f"/test/plans/{test_plan}/report/", OWNER),
        ("humantest:report-export", "GET"): (f"/test/plans/{test_plan}/report.tex", RESEARCHERS),
        ("humantest:preregistration", "POST"): (f"/test/plans/{test_plan}/preregistration/", OWNER),
        ("humantest:preregistration-export", "GET"): (
            f"/test/plans/{test_plan}/preregistration.md",
            RESEARCHERS,
        ),
        ("humantest:testers", "GET"): (f"/test/plans/{test_plan}/testers/", RESEARCHERS),
        ("humantest:testers", "POST"): (f"/test/plans/{test_plan}/testers/", OWNER),
        ("humantest:consent", "POST"): (f"/test/sessions/{session}/consent/", {"tess"}),
        # Anyone may arrive by a study's link (it logs them in as a participant of that study).
        ("join", "GET"): (f"/join/{site.link.token}/?PROLIFIC_PID=pid&SESSION_ID=s1", EVERYONE),
        ("join", "POST"): (f"/join/{site.link.token}/?PROLIFIC_PID=pid&SESSION_ID=s1", EVERYONE),
        ("welcome", "GET"): ("/accounts/welcome/MQ/set-password/", EVERYONE),
        ("humantest:session", "GET"): (f"/test/sessions/{session}/", {"tess"}),
        ("humantest:practice", "POST"): (f"/test/sessions/{session}/practice/", {"tess"}),
        ("humantest:begin", "POST"): (f"/test/sessions/{session}/begin/", {"tess"}),
        ("humantest:pause", "POST"): (f"/test/sessions/{session}/pause/", {"tess"}),
        ("humantest:resume", "POST"): (f"/test/sessions/{session}/resume/", {"tess"}),
        ("humantest:answer", "POST"): (f"/test/trials/{trial}/answer/", {"tess"}),
        ("humantest:timeout", "POST"): (f"/test/trials/{trial}/timeout/", {"tess"}),
        # Annotation: members work the queue, the holder writes their assignment, reviewers review.
        ("annotation:my-work", "GET"): ("/annotate/", SIGNED_IN),
        ("annotation:project-list", "GET"): ("/annotate/projects/", RESEARCHERS),
        ("annotation:project-new", "GET"): ("/annotate/projects/new/", RESEARCHERS),
        ("annotation:project-new", "POST"): ("/annotate/projects/new/", RESEARCHERS),
        ("annotation:project", "GET"): (f"/annotate/projects/{p}/", RESEARCHERS),
        ("annotation:project-plot", "GET"): (f"/annotate/projects/{p}/plots/lengths.png", RESEARCHERS),
        ("annotation:project-export", "GET"): (f"/annotate/projects/{p}/export/train/", RESEARCHERS),
        ("annotation:project-publish", "POST"): (f"/annotate/projects/{p}/publish/", OWNER),
        ("annotation:work", "GET"): (f"/annotate/projects/{p}/work/", {"ann", "bob"}),
        ("annotation:next", "POST"): (f"/annotate/projects/{p}/next/", {"ann", "bob"}),
        ("annotation:review-next", "GET"): (f"/annotate/projects/{p}/review/", {"rev"}),
        ("annotation:save", "POST"): (f"/annotate/assignments/{held}/save/", {"ann"}),
        ("annotation:heartbeat", "POST"): (f"/annotate/assignments/{held}/heartbeat/", {"ann"}),
        ("annotation:submit", "POST"): (f"/annotate/assignments/{held}/submit/", {"ann"}),
        ("annotation:skip", "POST"): (f"/annotate/assignments/{held}/skip/", {"ann"}),
        ("annotation:review-pair", "GET"): (f"/annotate/review/pairs/{site.pair.pk}/", {"rev"}),
        ("annotation:review-pair", "POST"): (f"/annotate/review/pairs/{site.pair.pk}/", {"rev"}),
        # Validation: the same queue; the plan's maker marks items on the dataset.
        ("validation:my-plans", "GET"): ("/validate/", SIGNED_IN),
        ("validation:plan-list", "GET"): ("/validate/plans/", RESEARCHERS),
        ("validation:plan-new", "GET"): ("/validate/plans/new/", RESEARCHERS),
        ("validation:plan-new", "POST"): ("/validate/plans/new/", RESEARCHERS),
        ("validation:plan", "GET"): (f"/validate/plans/{plan}/", RESEARCHERS),
        ("validation:plan-plot", "GET"): (f"/validate/plans/{plan}/error-rates.png", RESEARCHERS),
        ("validation:plan-export", "GET"): (f"/validate/plans/{plan}/export.csv", RESEARCHERS),
        ("validation:plan-mark", "POST"): (f"/validate/plans/{plan}/mark/", OWNER),
        ("validation:work", "GET"): (f"/validate/plans/{plan}/work/", {"ann"}),
        ("validation:next", "POST"): (f"/validate/plans/{plan}/next/", {"ann"}),
        ("validation:save", "POST"): (f"/validate/assignments/{verdict}/save/", {"ann"}),
        ("validation:heartbeat", "POST"): (f"/validate/assignments/{verdict}/heartbeat/", {"ann"}),
        ("validation:submit", "POST"): (f"/validate/assignments/{verdict}/submit/", {"ann"}),
        ("validation:skip", "POST"): (f"/validate/assignments/{verdict}/skip/", {"ann"}),
        # Model runs: researchers read and start them; the maker cancels one.
        ("inference:run-list", "GET"): ("/models/", RESEARCHERS),
        ("inference:run-new", "GET"): ("/models/new/", RESEARCHERS),
        ("inference:run-new", "POST"): ("/models/new/", RESEARCHERS),
        ("inference:run", "GET"): (f"/models/{run}/", RESEARCHERS),
        ("inference:run-cancel", "POST"): (f"/models/{run}/cancel/", OWNER),
        ("inference:run-audit", "GET"): (f"/models/{run}/requests.jsonl", RESEARCHERS),
        # Health checks: for load balancers and monitoring, no log-in, nothing secret in them.
        ("health-live", "GET"): ("/health/live", EVERYONE),
        ("health-ready", "GET"): ("/health/ready", EVERYONE),
        ("health-workers", "GET"): ("/health/workers", EVERYONE),
        # From the machine itself (the test client's address) without a token; else 403 (test_metrics).
        ("metrics", "GET"): ("/metrics", EVERYONE),
        # The API keeps the same rules.
        ("api-root", "GET"): ("/api/v1/", SIGNED_IN),
        ("api-token", "POST"): ("/api/v1/auth/token/", EVERYONE),
        ("api-schema", "GET"): ("/api/schema/", SIGNED_IN),
        ("api-docs", "GET"): ("/api/docs/", SIGNED_IN),
        ("dataset-report", "GET"): (f"/api/v1/datasets/{d}/report/", RESEARCHERS),
        ("dataset-compare", "GET"): (f"/api/v1/datasets/{d}/compare/?a=Mine&b=Other", RESEARCHERS),
        ("dataset-pairwise", "GET"): (f"/api/v1/datasets/{d}/pairwise/", RESEARCHERS),
        ("dataset-list", "GET"): ("/api/v1/datasets/", RESEARCHERS),
        ("dataset-detail", "GET"): (f"/api/v1/datasets/{d}/", RESEARCHERS),
        ("dataset-export", "GET"): (f"/api/v1/datasets/{d}/export/", RESEARCHERS),
        ("dataset-items", "GET"): (f"/api/v1/datasets/{d}/items/", RESEARCHERS),
        ("importjob-list", "GET"): ("/api/v1/imports/", RESEARCHERS),
        ("importjob-list", "POST"): ("/api/v1/imports/", RESEARCHERS),
        ("importjob-detail", "GET"): (f"/api/v1/imports/{job}/", OWNER),
        ("submission-list", "GET"): ("/api/v1/submissions/", RESEARCHERS),
        ("scoringjob-list", "GET"): ("/api/v1/scoring-jobs/", RESEARCHERS),
        ("scoringjob-detail", "GET"): (f"/api/v1/scoring-jobs/{scoring}/", OWNER),
        ("submission-list", "POST"): ("/api/v1/submissions/", RESEARCHERS),
        ("submission-detail", "GET"): (f"/api/v1/submissions/{sub}/", RESEARCHERS),
        ("submission-detail", "DELETE"): (f"/api/v1/submissions/{sub}/", OWNER),
        ("testplan-list", "GET"): ("/api/v1/test-plans/", RESEARCHERS),
        ("testplan-list", "POST"): ("/api/v1/test-plans/", RESEARCHERS),
        ("testplan-detail", "GET"): (f"/api/v1/test-plans/{test_plan}/", RESEARCHERS),
        ("testplan-results", "GET"): (f"/api/v1/test-plans/{test_plan}/results/", RESEARCHERS),
        ("testplan-trials", "GET"): (f"/api/v1/test-plans/{test_plan}/trials/", RESEARCHERS),
        ("testplan-report", "GET"): (f"/api/v1/test-plans/{test_plan}/report/", RESEARCHERS),
        ("testplan-exclusions", "GET"): (f"/api/v1/test-plans/{test_plan}/exclusions/", RESEARCHERS),
        ("testplan-exclusions", "PUT"): (f"/api/v1/test-plans/{test_plan}/exclusions/", OWNER),
        ("testplan-study", "GET"): (f"/api/v1/test-plans/{test_plan}/study/", RESEARCHERS),
        ("testplan-study", "PATCH"): (f"/api/v1/test-plans/{test_plan}/study/", OWNER),
        ("testplan-links", "GET"): (f"/api/v1/test-plans/{test_plan}/links/", RESEARCHERS),
        ("testplan-links", "POST"): (f"/api/v1/test-plans/{test_plan}/links/", OWNER),
        ("testplan-revoke-link", "POST"): (
            f"/api/v1/test-plans/{test_plan}/links/{site.link.pk}/revoke/",
            OWNER,
        ),
        ("testplan-participants", "GET"): (f"/api/v1/test-plans/{test_plan}/participants/", RESEARCHERS),
        ("testplan-payments", "GET"): (f"/api/v1/test-plans/{test_plan}/payments/", RESEARCHERS),
        ("testplan-payments", "POST"): (f"/api/v1/test-plans/{test_plan}/payments/", OWNER),
        ("testplan-payment-file", "GET"): (
            f"/api/v1/test-plans/{test_plan}/payments/1/prolific/",
            RESEARCHERS,
        ),
        ("testplan-testers", "POST"): (f"/api/v1/test-plans/{test_plan}/testers/", OWNER),
        ("modelrun-list", "GET"): ("/api/v1/model-runs/", RESEARCHERS),
        ("modelrun-list", "POST"): ("/api/v1/model-runs/", RESEARCHERS),
        ("modelrun-detail", "GET"): (f"/api/v1/model-runs/{run}/", RESEARCHERS),
        ("modelrun-cancel", "POST"): (f"/api/v1/model-runs/{run}/cancel/", OWNER),
        ("modelrun-audit", "GET"): (f"/api/v1/model-runs/{run}/audit/", RESEARCHERS),
    }


def served_names() -> set[str | None]:
    """Every named address the app serves (the admin's own aside: it is staff-only as a whole)."""

    def walk(patterns, namespace=None):
        for pattern in patterns:
            if isinstance(pattern, URLResolver):
                if pattern.namespace == "admin":
                    continue
                yield from walk(pattern.url_patterns, pattern.namespace or namespace)
            elif isinstance(pattern, URLPattern):
                yield f"{namespace}:{pattern.name}" if namespace and pattern.name else pattern.name

    return set(walk(get_resolver().url_patterns))


@pytest.fixture
def site(tmp_path, settings, trance_dataset):
    site = build_site(tmp_path, settings)
    rita = site.people["rita"]
    site.people["ned"] = make_user("ned", "annotator")
    site.project.annotators.add(site.people["ned"])
    queue.claim(site.project, site.people["ned"])
    site.project.annotators.remove(site.people["ned"])
    site.people["tom"] = make_user("tom", "tester")
    answers = orjson.dumps(
        [{"question_id": item.external_id, "answer": "no", "object": None} for item in site.cric.items.all()]
    )
    site.submission = submit_predictions(dataset=site.cric, name="Mine", data=answers, created_by=rita)
    submit_predictions(dataset=site.cric, name="Other", data=answers, created_by=site.people["rex"])
    site.column = next(
        f"{c.group} {c.label}".strip() for c in site.cric.spec.report_columns() if c.item_key and c.proportion
    )
    site.run = start_run(dataset=trance_dataset, baseline="random", setting="event", user=rita, enqueue=False)
    site.run.audit.save("requests.jsonl", ContentFile(b'{"kind": "run"}\n'))  # as a served run keeps
    from benchmarks.models import ImportJob

    site.job = ImportJob.objects.create(benchmark="cric", name="upload", created_by=rita, upload="x.json")
    site.scoring = ScoringJob.objects.create(dataset=site.cric, name="waiting", created_by=rita)
    from humantest import studies
    from humantest.models import PaymentBatch

    site.link = studies.open_link(site.test_plan, "prolific", created_by=rita)
    PaymentBatch.objects.create(plan=site.test_plan, number=1)
    return site


def through(response) -> bool:
    """Whether a request got past the checks of who may make it (its input may still be refused)."""
    if response.status_code in (401, 403, 404):
        return False
    location = response.get("Location", "")
    return not (response.status_code == 302 and location.startswith("/accounts/login/?next="))


def test_every_address_has_a_row():
    """A view nobody said the rules of fails here (add its row to `rows` above)."""
    written = set(re.findall(r'\("([^"]+)", "(?:GET|POST|PUT|PATCH|DELETE)"\): \(', inspect.getsource(rows)))
    missing = sorted(str(name) for name in served_names() if name not in NOT_HERE and name not in written)
    assert missing == [], f"addresses with no access row: {missing}"


def test_each_role_reaches_what_its_row_says_and_nothing_else(site, settings):
    settings.PASSWORD_RESET_BY_EMAIL = True  # the reset pages exist (without mail they are a 404 for all)
    clients = {"anon": Client()}
    for name, person in site.people.items():
        client = Client()
        client.force_login(person)
        clients[name] = client
    tokens = {name: Token.objects.get_or_create(user=person)[0].key for name, person in site.people.items()}
    wrong = []
    for (name, method), (url, allowed) in rows(site).items():
        for who, client in clients.items():
            cookies = copy.deepcopy(client.cookies)  # a log-out or a language choice is undone too
            headers = {}
            if url.startswith("/api/v1/") and who != "anon" and method != "GET":
                headers["HTTP_AUTHORIZATION"] = f"Token {tokens[who]}"
            with transaction.atomic():
                if method == "GET":
                    response = client.get(url, **headers)
                elif method == "DELETE":
                    response = client.delete(url, **headers)
                elif method == "PATCH":
                    response = client.patch(url, "{}", content_type="application/json", **headers)
                elif method == "PUT":
                    response = client.put(url, "{}", content_type="application/json", **headers)
                else:
                    response = client.post(url, {}, **headers)
                transaction.set_rollback(True)
            client.cookies = cookies
            if response.status_code >= 500:
                wrong.append(f"{method} {url} as {who}: {response.status_code}")
            elif through(response) != (who in allowed):
                wrong.append(
                    f"{method} {url} ({name}) as {who}: {response.status_code}, "
                    f"expected {'through' if who in allowed else 'refused'}"
                )
    assert wrong == [], "\n".join(wrong)


#: Query parameters the pages read (and some they do not), each given what broke a page before.
QUERY_NAMES = (
    "a", "b", "by", "metric", "column", "kind", "page", "dataset", "from", "name", "items",
    "source", "human", "model", "alpha", "power", "per_tester", "next",
)  # fmt: skip
QUERY_VALUES = ("abc", "\x00", "9" * 30, "²", "1e999", "1,2,x", "9" * 5000)


def test_no_address_fails_on_hostile_query_parameters(site):
    """Every page and API address, given every parameter the pages read with each odd value, as
    the people who may open it: an answer, never a 500."""
    who = {name: Client(raise_request_exception=False) for name in ("rita", "ann", "tess")}
    for name, client in who.items():
        client.force_login(site.people[name])
    failures = []
    for (name, method), (url, allowed) in rows(site).items():
        if method != "GET":
            continue
        base = url.split("?")[0]
        for person, client in who.items():
            if person not in allowed and person != "rita":
                continue
            # All the parameters at once, and the API's format alone (an unknown one is a 404 first).
            queries = [{key: value for key in QUERY_NAMES} for value in QUERY_VALUES]
            if base.startswith("/api/"):
                queries += [{"format": value} for value in QUERY_VALUES]
            for query in queries:
                response = client.get(base, query)
                if response.status_code >= 500:
                    failures.append(f"{name} as {person} with {str(query)[:60]}: {response.status_code}")
    assert failures == [], "\n".join(failures)
