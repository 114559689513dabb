"""Every page, as every role, after a scripted mix of actions and hostile input: no 500 anywhere.

The actions leave the odd but legal states a real site has: datasets of every benchmark with and
without images, an empty dataset, model and human submissions, a deleted submission, plans with
no tester yet, with testers who share no item, half done, paused, finished, a plan whose pooled
row was deleted, succeeded and failed imports; then every hostile string (tests/yardstick/hostile.py)
typed into every form and JSON endpoint by each role, and names with line breaks stored before
names were checked. Then each role starts at the home page and follows
every link (pages, exports, the browsable API, images), as far as they lead.
"""

import re
from collections import Counter, deque
from urllib.parse import urljoin, urlsplit

import orjson
import pytest
from django.core.files.base import ContentFile
from django.test import Client

from annotation import queue as annotation_queue
from annotation import services as annotation_services
from annotation.models import Project, QAPair
from benchmarks.models import Dataset, ImportJob
from benchmarks.services import import_dataset, run_import_job
from evaluation.models import Submission
from evaluation.services import delete_submissions, submit_predictions
from humantest import answers, clock, sessions
from humantest.models import TestPlan
from inference import services as inference_services
from tests.benchmarks import builders
from tests.factories import make_user
from tests.yardstick import hostile
from validation import services as validation_services
from validation.models import Plan

pytestmark = pytest.mark.django_db

LINK = re.compile(r"""(?:href|src)="([^"#]*)""")
#: Links followed per shape of address (ids folded: "/datasets/#/items/#/"), and pages per role at
#: most: every kind of page is visited, not every item of every dataset.
VARIANTS_PER_SHAPE = 8
PAGES_PER_ROLE = 600
NUMBER = re.compile(r"\d+")
NEVER = ("/accounts/logout/", "/admin/logout/", "/static/", "/api/docs/")


def answer_all(plan, tester, *, stop_after=None, pause=False):
    session = sessions.begin_test(sessions.start_session(plan, tester))
    answered = 0
    while (trial := clock.serve_current_trial(session)[0]) is not None and answered != stop_after:
        truth = trial.item.ground_truth
        if plan.dataset.benchmark == "trance":
            answer = {
                "steps": [{k: s[k] for k in ("obj_idx", "attr", "val")} for s in truth["transformations"]]
            }
        elif plan.dataset.benchmark == "stevqa":
            answer = {"answer": "x", "evidence": [0, 0, 9, 0, 9, 9, 0, 9]}
        elif plan.dataset.benchmark == "cric":
            answer = {"answer": truth["answer"], "object": None}
        else:
            answer = {"objects": truth["program"][-1]["_output"]}
        answers.record_answer(trial.pk, tester, answer, {})
        answered += 1
    if pause:
        sessions.pause(session)
    return session


@pytest.fixture
def busy_site(trance_dataset, tmp_path, django_capture_on_commit_callbacks, settings):
    from plugins.cric.demo import generate_demo as cric_samples
    from plugins.stevqa.demo import generate_demo as stevqa_samples

    admin = make_user("ada", "admin")
    admin.is_superuser = admin.is_staff = True
    admin.save()
    researcher = make_user("rita", "researcher")
    annotator = make_user("ann", "annotator")
    second = make_user("ann2", "annotator")
    reviewer = make_user("rev", "reviewer")
    testers = [make_user(name, "tester") for name in ("tess", "tom", "tia")]

    path = stevqa_samples(tmp_path / "stevqa", count=3, seed=1)
    signs = import_dataset(
        benchmark="stevqa",
        data=path.read_bytes(),
        name="signs",
        split="train",
        images_dir=tmp_path / "stevqa" / "images",
    )
    questions = import_dataset(
        benchmark="stevqa", data=orjson.dumps(builders.stevqa_questions()), name="gt", split="test"
    )
    files = cric_samples(tmp_path / "cric", images=2, seed=2)
    cric = import_dataset(
        benchmark="cric",
        data=files.questions.read_bytes(),
        name="cric",
        images_dir=files.images_dir,
        scenes_data=files.scene_graphs.read_bytes(),
    )
    clevrref = import_dataset(
        benchmark="clevrref",
        data=orjson.dumps(builders.clevrref_document()),
        name="refs",
        scenes_data=orjson.dumps(builders.clevrref_scenes()),
    )
    empty = Dataset.objects.create(benchmark="cric", name="empty", created_by=researcher)

    with django_capture_on_commit_callbacks(execute=True):
        submit_predictions(
            dataset=trance_dataset, name="model", data=b"{}", setting="event", created_by=researcher
        )
        submit_predictions(dataset=questions, name="reader", data=b"[]", created_by=researcher)
        gone = submit_predictions(dataset=cric, name="deleted model", data=b"[]", created_by=researcher)
        delete_submissions(ids=[gone.pk])

        view = TestPlan.objects.create(
            name="View",
            dataset=trance_dataset,
            setting="view",
            items_per_tester=3,
            seed=1,
            created_by=researcher,
        )
        view.testers.add(*testers)
        answer_all(view, testers[0])
        answer_all(view, testers[1], stop_after=1, pause=True)
        nobody = TestPlan.objects.create(
            name="Nobody yet", dataset=cric, items_per_tester=2, created_by=researcher
        )
        nobody.testers.add(testers[2])
        street = TestPlan.objects.create(
            name="Signs", dataset=signs, items_per_tester=1, seed=3, created_by=researcher
        )
        street.testers.add(*testers[:2])
        answer_all(street, testers[0])
        answer_all(street, testers[1])
        pooled_gone = TestPlan.objects.create(
            name="Pool deleted", dataset=cric, items_per_tester=1, row_label="P", created_by=researcher
        )
        pooled_gone.testers.add(testers[0])
        answer_all(pooled_gone, testers[0])
        pooled_gone.refresh_from_db()
        delete_submissions(ids=[pooled_gone.pooled_submission_id])

    for name, data in (("good", orjson.dumps(builders.stevqa_questions())), ("bad", b"[{}]")):
        job = ImportJob.objects.create(
            benchmark="stevqa",
            name=name,
            created_by=researcher,
            upload=ContentFile(data, name=f"{name}.json"),
        )
        run_import_job(job)
    ImportJob.objects.create(
        benchmark="cric", name="waiting", created_by=researcher, upload=ContentFile(b"[]", name="w.json")
    )
    # Annotation: a pair accepted, one rejected (its task back with ann), one waiting for review,
    # a second opinion given, a task in hand; and a project nobody has started.
    project = annotation_services.create_project(
        dataset=signs,
        name="Signs",
        overlap=1.0,
        annotators=[annotator, second],
        reviewers=[reviewer],
        created_by=researcher,
    )
    annotation_services.create_project(
        dataset=signs, name="Untouched", overlap=0, annotators=[second], created_by=researcher
    )
    settings_ocr = {"check_evidence": False}
    for person in (annotator, second, annotator):
        held = annotation_queue.claim(project, person)
        pairs = (
            [
                {"source": p.pk, "question": p.question, "answer": p.answer, "evidence": p.evidence}
                for p in annotation_services.first_round_pairs(held.task)
            ]
            if held.round > 1
            else [
                {
                    "question": qa["question"],
                    "answer": qa["answer"],
                    "evidence": [float(v) for v in qa["evidence"]],
                }
                for qa in held.task.item.ground_truth["annotation"]
            ]
        )
        annotation_services.submit(held, person, version=held.version, pairs=pairs, **settings_ocr)
    pairs = list(QAPair.objects.filter(assignment__annotator=annotator, assignment__round=1).order_by("pk"))
    annotation_services.review(pairs[0], reviewer, version=pairs[0].version, action="accept")
    annotation_services.review(
        pairs[-1], reviewer, version=pairs[-1].version, action="reject", reason="blurred"
    )
    annotation_queue.claim(project, second)
    # Validation: a plan on the CRIC data with an item found faulty by both validators, one in hand.
    plan = validation_services.create_plan(
        dataset=cric,
        name="Check",
        strata=["question_type"],
        sample_size=4,
        overlap=0.5,
        validators=[reviewer, annotator],
        created_by=researcher,
    )
    for person in (annotator, reviewer, reviewer):
        held = annotation_queue.claim(plan.project, person)
        answers = {"answer_correct": False, "grounding_correct": True, "natural": 3, "wrong_step": 0}
        validation_services.submit_verdict(held, person, version=held.version, answers=answers)
    annotation_queue.claim(plan.project, annotator)
    # Model runs: one finished (a model row of the TRANCE report), one failed, one still queued.
    inference_services.execute_run(
        inference_services.start_run(
            dataset=trance_dataset, baseline="random", setting="event", enqueue=False, user=researcher
        )
    )
    failed = inference_services.start_run(
        dataset=trance_dataset, baseline="symbolic", setting="event", enqueue=False, user=researcher
    )
    inference_services.finish(failed, "failed", error="CUDA out of memory")
    inference_services.start_run(
        dataset=trance_dataset, baseline="trancenet", setting="view", enqueue=False, user=researcher
    )
    # Hostile text typed into every form and JSON endpoint by each role (issue 25): what the input
    # gate lets through is stored, for every page below to show; nothing is a 500 on the way in.
    answers = TestPlan.objects.create(
        name="Typed answers", dataset=cric, items_per_tester=3, created_by=researcher
    )
    answers.testers.add(testers[2])
    with django_capture_on_commit_callbacks(execute=True):
        answered = hostile.scatter(
            researcher=researcher,
            annotator=annotator,
            reviewer=reviewer,
            validator=reviewer,
            tester=testers[2],
            signs=signs,
            cric=cric,
            validation_plan=plan,
            test_plan=answers,
            settings=settings,
        )
    assert answered.get("5xx", 0) == 0 and answered["4xx"] > 20, answered
    # What the gate let through is stored as typed: names, questions, comments, answers.
    assert Submission.objects.filter(name="<script>alert(1)</script>").exists()
    assert TestPlan.objects.filter(name="$\\frac{1").exists()
    assert TestPlan.objects.filter(brief="{{ request.user }} {% debug %}").exists()
    assert QAPair.objects.filter(question="what is $x$?").exists()
    assert Project.objects.filter(name="'; DROP TABLE benchmarks_dataset; --").exists()
    assert not Project.objects.filter(name__contains="\u202e").exists()  # it would turn the page around it
    assert Plan.objects.filter(name="𝔘𝔫𝔦𝔠𝔬𝔡𝔢 😀 中文问题？").exists()
    # And names with line breaks stored before names were checked, for their pages and downloads.
    Dataset.objects.filter(pk=empty.pk).update(name="legacy\r\nname", split="a\nb")
    Project.objects.filter(name="Untouched").update(name="Untouched\r\nproject")
    TestPlan.objects.filter(pk=pooled_gone.pk).update(name="Pool\r\ndeleted", row_label="P\nQ")
    Plan.objects.filter(name="%s%n%x").update(name="Typed\r\nplan")
    Submission.objects.filter(name="reader").update(name="reader\r\nrow")
    return {"refs": clevrref, "project": project, "waiting": pairs[1] if len(pairs) > 2 else pairs[0]}


def crawl(client: Client) -> tuple[dict[str, int], list[str]]:
    """Follow every link from the home page; the status of each page, and the 5xx ones."""
    statuses: dict[str, int] = {}
    variants: Counter[str] = Counter()
    queue = deque(
        [
            "/",
            "/api/v1/",
            "/test/",
            "/test/history/",
            "/datasets/",
            "/test/plans/",
            "/annotate/",
            "/annotate/projects/",
            "/validate/",
            "/validate/plans/",
            "/models/",
            "/api/schema/",
            "/admin/",
        ]
    )
    while queue and len(statuses) < PAGES_PER_ROLE:
        url = queue.popleft()
        if url in statuses:
            continue
        response = client.get(url)
        statuses[url] = response.status_code
        content_type = response.get("Content-Type", "")
        if response.status_code != 200 or not content_type.startswith("text/html"):
            continue
        for link in LINK.findall(response.content.decode()):
            target = urljoin(url, link.replace("&amp;", "&"))
            parts = urlsplit(target)
            if parts.netloc not in ("", "testserver") or parts.path.startswith(NEVER):
                continue
            target = parts.path + (f"?{parts.query}" if parts.query else "")
            if target in statuses:
                continue
            shape = NUMBER.sub("#", parts.path)
            variants[shape] += 1
            if variants[shape] <= VARIANTS_PER_SHAPE:
                queue.append(target)
    return statuses, [f"{url} {status}" for url, status in statuses.items() if status >= 500]


ROLES = [None, "ada", "rita", "ann", "ann2", "rev", "tess", "tom", "tia"]


def test_no_page_fails_for_any_role(busy_site):
    from django.contrib.auth import get_user_model

    reached: dict[str | None, dict[str, int]] = {}
    failures = []
    for role in ROLES:
        client = Client()
        if role is not None:
            client.force_login(get_user_model().objects.get(username=role))
        statuses, failed = crawl(client)
        reached[role] = statuses
        failures += [f"{role or 'anonymous'}: {failure}" for failure in failed]
    # A study's participant, arrived by its link (with a hostile id): every address sends them back
    # to their own study, which answers.
    from humantest.models import Participant

    arrived = Participant.objects.filter(external_id="<script>alert(1)</script>").get()
    client = Client()
    link = arrived.link
    assert (
        client.get(
            f"/join/{link.token}/", {"PROLIFIC_PID": arrived.external_id, "SESSION_ID": "s"}
        ).status_code
        == 302
    )
    statuses, failed = crawl(client)
    failures += [f"participant: {failure}" for failure in failed]
    own = f"/test/sessions/{arrived.session_id}/"
    assert all(status in (200, 302) for status in statuses.values()), statuses
    assert client.get("/datasets/")["Location"] == own and client.get(own).status_code == 200
    assert failures == [], failures
    assert all(len(reached[role]) > 5 for role in ROLES if role), {
        role: len(pages) for role, pages in reached.items()
    }
    # The researcher reached every kind of page: items, reports, exports, plans, jobs, images.
    researcher = " ".join(reached["rita"])
    for part in ("/items/", "/report/", "report.csv", "trials.csv", "/test/plans/", "/import/", "/media/"):
        assert part in researcher, part
    # And a submission's rename and delete pages: asking (GET) changes nothing.
    for action in ("rename", "delete"):
        assert any(
            "/report/submissions/" in url and url.endswith(f"/{action}/") and status == 200
            for url, status in reached["rita"].items()
        ), action
    admin_pages = [url for url in reached["ada"] if url.startswith("/admin/")]
    assert any(
        url.startswith("/admin/benchmarks/importjob/") and url.endswith("/change/") for url in admin_pages
    )
    assert any(url.startswith("/admin/humantest/trial/") for url in admin_pages)
    # Testers reached their sessions; nobody else's pages answered them with more than a refusal.
    assert any(url.startswith("/test/sessions/") for url in reached["tess"])
    # Annotators reached their work, the researcher the projects' pages, plots and exports.
    assert any(url.endswith("/work/") and reached["ann"][url] == 200 for url in reached["ann"])
    assert any(url.endswith("/work/") and reached["ann2"][url] == 200 for url in reached["ann2"])
    for part in ("/annotate/projects/", "/plots/first-words.png", "/export/icdar/"):
        assert part in researcher, part
    assert any(url.startswith("/admin/annotation/qapair/") for url in admin_pages)
    # Validators reached their verdict page; the researcher the plan's report, plot and exports.
    assert any(url.startswith("/validate/plans/") and url.endswith("/work/") for url in reached["rev"])
    for part in ("/validate/plans/new/", "/error-rates.png", "/export.csv", "/export.json"):
        assert part in researcher, part
    # The researcher reached the model runs, each run's page and the form; nobody else did.
    assert sum(url.startswith("/models/") and status == 200 for url, status in reached["rita"].items()) >= 4
    assert not any(
        url.startswith("/models/") and status == 200
        for role in ROLES
        if role not in ("rita", "ada")
        for url, status in reached[role].items()
    )
    # The review page answers its reviewer, and nobody else.
    waiting = f"/annotate/review/pairs/{busy_site['waiting'].pk}/"
    for name, status in (("rev", 200), ("ann", 403), ("ann2", 403), ("tess", 403), ("rita", 403)):
        client = Client()
        client.force_login(get_user_model().objects.get(username=name))
        assert client.get(waiting).status_code == status, name
    assert all(status in (200, 302, 403, 404, 405) for role in ROLES for status in reached[role].values())
