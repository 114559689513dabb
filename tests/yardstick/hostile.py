"""What hostile input tests share: the strings an attacker or a careless user types, and a small
site where every kind of JSON endpoint has something to write to (issue 25)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from django.test import Client
from rest_framework.authtoken.models import Token

from accounts.inputs import without_lone_surrogates
from annotation import queue
from annotation import services as annotation_services
from annotation.models import Assignment, QAPair
from benchmarks.services import import_dataset
from humantest import clock, sessions
from humantest.models import TestPlan, Trial
from tests.annotation.conftest import blank_dataset
from tests.factories import client_for, make_user
from validation import services as validation_services

#: Text that broke pages, plots, headers or the database, or that a page must show as written.
HOSTILE = [
    "\ud800",  # a lone surrogate: not Unicode (sent as the JSON escape \ud800)
    "end\udfff",
    "nul\x00inside",
    "bell\x07",
    "$x$",
    "$\\frac{1",
    "$",
    "line\r\nbreak",
    "tab\there",
    "<script>alert(1)</script>",
    "\"'><img src=x onerror=alert(1)>",
    "{{ request.user }} {% debug %}",
    "\u202eRTL override",
    "𝔘𝔫𝔦𝔠𝔬𝔡𝔢 😀 中文问题？",
    "x" * 5000,
    "'; DROP TABLE benchmarks_dataset; --",
    "../../etc/passwd",
    "%s%n%x",
]
#: The strings that are fine to store (the rest are refused by the input gate, naming the field).
STORABLE = [text for text in HOSTILE if text.isprintable() and len(text) < 1000 and "\ud800" not in text]


def body(value: Any) -> str:
    """JSON as an attacker sends it: NaN and Infinity as written, lone surrogates escaped."""
    return json.dumps(value, allow_nan=True, ensure_ascii=True)


def raw_form(text: str) -> str:
    """A form field's value as a browser sends it: a form cannot carry a lone surrogate (it sends
    U+FFFD instead; only a JSON body can, as an escape), which the test client would refuse."""
    return without_lone_surrogates(text)


def token_for(user) -> str:
    return Token.objects.get_or_create(user=user)[0].key


@dataclass
class Site:
    people: dict[str, Any]
    signs: Any
    cric: Any
    project: Any
    held: Assignment  # ann's leased annotation task
    pair: QAPair  # bob's pair, waiting for rev's review
    plan: Any  # a validation plan
    verdict_task: Assignment  # ann's leased validation task
    test_plan: TestPlan
    trial: Trial  # tess's served trial


def build_site(folder, settings) -> Site:
    """Every role, with work in hand on every queue: the targets of hostile bodies."""
    from plugins.cric.demo import generate_demo

    settings.ANNOTATION_OCR_BUDGET_S = 0
    settings.ANNOTATION_EXPIRY_EVERY_S = 0
    people = {
        "ada": make_user("ada", "admin"),
        "rita": make_user("rita", "researcher"),
        "rex": make_user("rex", "researcher"),
        "ann": make_user("ann", "annotator"),
        "bob": make_user("bob", "annotator"),
        "rev": make_user("rev", "reviewer"),
        "tess": make_user("tess", "tester"),
    }
    people["ada"].is_superuser = people["ada"].is_staff = True
    people["ada"].save()
    signs = blank_dataset(folder / "signs", 4, name="signs")
    files = generate_demo(folder / "cric", images=2, seed=2)
    cric = import_dataset(
        benchmark="cric",
        data=files.questions.read_bytes(),
        name="cric",
        images_dir=files.images_dir,
        scenes_data=files.scene_graphs.read_bytes(),
    )
    project = annotation_services.create_project(
        dataset=signs,
        name="Signs",
        overlap=0,
        pairs_per_item=1,
        annotators=[people["ann"], people["bob"]],
        reviewers=[people["rev"]],
        created_by=people["rita"],
    )
    first = queue.claim(project, people["bob"])
    annotation_services.submit(
        first,
        people["bob"],
        version=first.version,
        pairs=[
            {"question": "what does it say?", "answer": "x", "evidence": [10, 10, 60, 10, 60, 40, 10, 40]}
        ],
        check_evidence=False,
    )
    held = queue.claim(project, people["ann"])
    plan = validation_services.create_plan(
        dataset=cric,
        name="Check",
        sample_size=3,
        overlap=0,
        validators=[people["ann"]],
        created_by=people["rita"],
    )
    verdict_task = queue.claim(plan.project, people["ann"])
    test_plan = TestPlan.objects.create(
        name="People", dataset=cric, items_per_tester=3, seed=1, created_by=people["rita"]
    )
    test_plan.testers.add(people["tess"])
    session = sessions.begin_test(sessions.start_session(test_plan, people["tess"]))
    trial, _ = clock.serve_current_trial(session)
    # Its workers are running: one beat per queue (so /health/workers answers 200 here).
    from django.utils import timezone

    from jobs.services import record_worker_beat

    record_worker_beat(
        "celery@site", [queue.name for queue in settings.CELERY_TASK_QUEUES], 1, timezone.now()
    )
    return Site(
        people=people,
        signs=signs,
        cric=cric,
        project=project,
        held=held,
        pair=QAPair.objects.get(assignment=first),
        plan=plan,
        verdict_task=verdict_task,
        test_plan=test_plan,
        trial=trial,
    )


def scatter(
    *,
    researcher,
    annotator,
    reviewer,
    validator,
    tester,
    signs,
    cric,
    validation_plan,
    test_plan,
    settings,
) -> dict[str, int]:
    """Type every hostile string into every text field, through the pages and the API as each role
    would: what the input gate lets through is stored, to be shown by every page afterwards.

    `test_plan` is a CRIC plan `tester` is invited to and has not started; `validator` validates
    `validation_plan`; `annotator` and `reviewer` get a project of their own on `signs`.
    Returns how many of the requests were answered 2xx, 4xx and 5xx."""
    from collections import Counter

    from annotation import services as annotation_services

    settings.ANNOTATION_OCR_BUDGET_S = 0
    answered: Counter[str] = Counter()

    def count(response) -> None:
        answered[f"{response.status_code // 100}xx"] += 1

    def post_json(client: Client, url: str, value: Any) -> Any:
        response = client.post(url, body(value), content_type="application/json")
        count(response)
        return response

    rita, ann, rev, val, tess = (
        client_for(person) for person in (researcher, annotator, reviewer, validator, tester)
    )
    api = Client(HTTP_AUTHORIZATION=f"Token {token_for(researcher)}")
    from evaluation.services import submit_predictions

    renamed = submit_predictions(dataset=cric, name="to be renamed", data=b"[]", created_by=researcher)
    for text in HOSTILE:
        short = raw_form(text[:150])
        long = raw_form(text)
        # Researchers: a report row (and a new name for one), a test plan, an annotation project,
        # a validation plan.
        count(
            rita.post(f"/datasets/{cric.pk}/report/submissions/{renamed.pk}/rename/", {"name": f"↻ {short}"})
        )
        upload = __import__("io").BytesIO(b"[]")
        upload.name = "predictions.json"
        count(
            rita.post(
                f"/datasets/{cric.pk}/report/",
                {"name": short, "producer": "model", "variant": "official", "file": upload},
            )
        )
        count(
            api.post(
                "/api/v1/test-plans/",
                body(
                    {
                        "name": text[:150],
                        "dataset": cric.pk,
                        "items_per_tester": 1,
                        "row_label": text[:90],
                        "brief": text,
                        "guidance": text,
                        "testers": [],
                    }
                ),
                content_type="application/json",
            )
        )
        count(
            rita.post(
                "/annotate/projects/new/",
                {
                    "name": short,
                    "dataset": signs.pk,
                    "instructions": long,
                    "pairs_per_item": 1,
                    "overlap": 0,
                    "lease_seconds": 600,
                    "seed": 0,
                    "annotators": [annotator.pk],
                },
            )
        )
        count(
            rita.post(
                "/validate/plans/new/",
                {
                    "name": short,
                    "dataset": cric.pk,
                    "instructions": long,
                    "sample_size": 1,
                    "allocation": "proportional",
                    "confidence": 0.95,
                    "seed": 0,
                    "overlap": 0,
                    "validators_per_overlap": 2,
                    "lease_seconds": 600,
                    "validators": [validator.pk],
                },
            )
        )
    # An annotator writes each string as a question and an answer, and skips with it as the reason;
    # a reviewer rejects and fixes with it.
    project = annotation_services.create_project(
        dataset=signs,
        name="Hostile",
        overlap=0,
        pairs_per_item=1,
        annotators=[annotator],
        reviewers=[reviewer],
    )
    evidence = [10, 10, 60, 10, 60, 40, 10, 40]
    for text in HOSTILE:
        count(ann.post(f"/annotate/projects/{project.pk}/next/"))
        held = Assignment.objects.filter(
            task__project=project, annotator=annotator, status=Assignment.Status.LEASED
        ).first()
        if held is None:
            break
        url = f"/annotate/assignments/{held.pk}"
        post_json(
            ann,
            f"{url}/save/",
            {"version": held.version, "draft": {"pairs": [{"question": text, "answer": text}]}},
        )
        held.refresh_from_db()
        pair = {"question": f"what is {text}?", "answer": f"{text} sign", "evidence": evidence}
        if post_json(ann, f"{url}/submit/", {"version": held.version, "pairs": [pair]}).status_code != 200:
            post_json(ann, f"{url}/skip/", {"version": held.version, "reason": text})
    for text, written in zip(HOSTILE, QAPair.objects.filter(assignment__task__project=project), strict=False):
        post_json(
            rev,
            f"/annotate/review/pairs/{written.pk}/",
            {
                "version": written.version,
                "action": "fix",
                "question": f"which {text}?",
                "answer": "fixed",
                "evidence": evidence,
                "reason": text,
            },
        )
        written.refresh_from_db()
        post_json(
            rev,
            f"/annotate/review/pairs/{written.pk}/",
            {"version": written.version, "action": "reject", "reason": text},
        )
    # A validator comments and skips with each string; a tester answers with it.
    for text in HOSTILE:
        count(val.post(f"/validate/plans/{validation_plan.pk}/next/"))
        held = Assignment.objects.filter(
            task__project=validation_plan.project, annotator=validator, status=Assignment.Status.LEASED
        ).first()
        if held is None:
            break
        answers = {
            "answer_correct": False,
            "grounding_correct": True,
            "natural": 2,
            "wrong_step": None,
            "comment": text,
        }
        if (
            post_json(
                val, f"/validate/assignments/{held.pk}/submit/", {"version": held.version, "answers": answers}
            ).status_code
            != 200
        ):
            post_json(
                val, f"/validate/assignments/{held.pk}/skip/", {"version": held.version, "reason": text}
            )
    count(tess.post(f"/test/plans/{test_plan.pk}/start/"))
    count(tess.post(f"/test/sessions/{test_plan.sessions.get(tester=tester).pk}/begin/"))
    for text in HOSTILE:
        trial, _ = clock.serve_current_trial(test_plan.sessions.get(tester=tester))
        if trial is None:
            break
        post_json(
            tess,
            f"/test/trials/{trial.pk}/answer/",
            {"answer": {"answer": text, "object": None}, "client": {"shown_ms": 5}},
        )
    # Participants arrive by the plan's Prolific link with every string as their id, and the study's
    # settings are typed with each of them too (what the gate takes is shown on the study page).
    study_page = f"/test/plans/{test_plan.pk}/study/"
    count(rita.post(study_page, {"action": "open", "platform": "prolific"}))
    for text in HOSTILE:
        count(
            rita.post(
                study_page,
                {
                    "action": "settings",
                    "consent_text": raw_form(text),
                    "completion_code": raw_form(text[:60]),
                },
            )
        )
        count(rita.post(study_page, {"action": "settings", "completion_url": raw_form(text)}))
        count(
            rita.post(
                study_page,
                {"action": "settings", "stop_against": raw_form(text), "stop_metric": raw_form(text[:30])},
            )
        )
        count(rita.post(study_page, {"action": "settings", "stop_width": raw_form(text[:20])}))
        count(
            rita.post(
                f"/test/plans/{test_plan.pk}/quality/",
                {"catch_failures": raw_form(text[:20]), "min_median_s": raw_form(text[:20])},
            )
        )
    count(
        rita.post(
            study_page,
            {
                "action": "settings",
                "consent_text": "# Agree?\n\n<script>alert(1)</script> [x](javascript:alert(1))",
            },
        )
    )
    # Rules the quality page keeps (and shows) beside the hostile ones it refused.
    count(rita.post(f"/test/plans/{test_plan.pk}/quality/", {"catch_failures": "1", "min_median_s": "0.5"}))
    link = test_plan.entry_links.get(revoked_at__isnull=True)
    for text in HOSTILE:
        count(Client().get(f"/join/{link.token}/", {"PROLIFIC_PID": raw_form(text), "SESSION_ID": "s"}))
    count(
        rita.post(
            f"/test/plans/{test_plan.pk}/testers/", {"people": "\n".join(raw_form(text) for text in HOSTILE)}
        )
    )
    return dict(answered)
