"""The annotation endpoints as users reach them: who may do what, what the JSON says, images."""

import json

import pytest

from annotation import queue
from annotation.models import QAPair
from tests.factories import make_user, post_json, take_task

pytestmark = pytest.mark.django_db


def test_only_the_holder_writes_an_assignment_and_sees_its_image(client, project, people):
    held = take_task(client, project, people["ann"])
    image = held.task.item.dataset.media_url(held.task.item.media["image"])
    assert client.get(image).status_code == 200
    client.force_login(people["bob"])
    for name in ("save", "heartbeat", "submit", "skip"):
        response = post_json(client, f"/annotate/assignments/{held.pk}/{name}/", {"version": 0, "draft": {}})
        assert response.status_code == 403, name
    assert client.get(image).status_code == 404  # bob holds another image, not this one
    tester = make_user("tess", "tester")
    client.force_login(tester)
    assert client.get(image).status_code == 404
    assert client.get(f"/annotate/projects/{project.pk}/work/").status_code == 404


def test_a_submit_refused_names_the_pair_and_field_in_the_users_language(client, project, people):
    held = take_task(client, project, people["ann"])
    pair = {"question": "这是银行吗？", "answer": "银行", "evidence": [10, 10, 60, 10, 60, 40, 10, 40]}
    response = post_json(
        client, f"/annotate/assignments/{held.pk}/submit/", {"version": held.version, "pairs": [pair]}
    )
    assert response.status_code == 400
    assert {"pair": 0, "field": "question", "code": "yes_no_question"}.items() <= response.json()["errors"][
        0
    ].items()
    client.post("/accounts/language/", {"language": "zh-hans", "next": "/"})
    response = post_json(
        client, f"/annotate/assignments/{held.pk}/submit/", {"version": held.version, "pairs": [pair]}
    )
    assert "是非题" in response.json()["errors"][0]["message"]


def test_a_stale_draft_gets_409_with_the_servers_version(client, project, people):
    held = take_task(client, project, people["ann"])
    url = f"/annotate/assignments/{held.pk}/save/"
    assert (
        post_json(client, url, {"version": 0, "draft": {"pairs": [{"question": "laptop"}]}}).json()["version"]
        == 1
    )
    stale = post_json(client, url, {"version": 0, "draft": {"pairs": [{"question": "phone"}]}})
    assert stale.status_code == 409 and stale.json()["error"] == "stale"
    assert stale.json()["server"]["draft"] == {"pairs": [{"question": "laptop"}]}


def test_a_submit_answers_with_the_next_task(client, project, people):
    held = take_task(client, project, people["ann"])
    qa = held.task.item.ground_truth["annotation"][0]
    pair = {
        "question": qa["question"],
        "answer": qa["answer"],
        "evidence": [float(v) for v in qa["evidence"]],
    }
    response = post_json(
        client, f"/annotate/assignments/{held.pk}/submit/", {"version": held.version, "pairs": [pair]}
    )
    assert response.status_code == 200
    following = response.json()["next"]
    assert following["assignment"] != held.pk and following["round"] == 1
    assert "ground_truth" not in json.dumps(following) and qa["answer"] not in json.dumps(following)


def test_ocr_warns_when_the_answer_is_not_the_text_in_the_quad_and_the_annotator_may_confirm(
    client, project, people, settings
):
    settings.ANNOTATION_OCR_BUDGET_S = 10  # a real read, with time to spare on a busy machine
    held = take_task(client, project, people["ann"])
    qa = held.task.item.ground_truth["annotation"][0]
    wrong = {"question": qa["question"], "answer": "ZZQX", "evidence": [float(v) for v in qa["evidence"]]}
    url = f"/annotate/assignments/{held.pk}/submit/"
    response = post_json(client, url, {"version": held.version, "pairs": [wrong]})
    assert response.status_code == 400
    (problem,) = response.json()["errors"]
    assert problem["code"] == "ocr_mismatch" and problem["confirmable"]
    assert not QAPair.objects.exists()
    response = post_json(client, url, {"version": held.version, "pairs": [{**wrong, "ocr_confirmed": True}]})
    assert response.status_code == 200
    stored = QAPair.objects.get()
    assert stored.ocr_confirmed and stored.ocr_similarity < 0.5 and stored.ocr_text
    # The true answer passes without a word.
    following = queue.claim(project, people["ann"])
    qa = following.task.item.ground_truth["annotation"][0]
    right = {
        "question": qa["question"],
        "answer": qa["answer"],
        "evidence": [float(v) for v in qa["evidence"]],
    }
    response = post_json(
        client,
        f"/annotate/assignments/{following.pk}/submit/",
        {"version": following.version, "pairs": [right]},
    )
    assert response.status_code == 200, response.content
    assert QAPair.objects.get(assignment=following).ocr_similarity >= 0.5


def test_publishing_before_anything_is_accepted_says_so(client, project, people):
    client.force_login(people["res"])
    response = client.post(f"/annotate/projects/{project.pk}/publish/", follow=True)
    assert response.status_code == 200
    assert "Nothing was published" in response.content.decode()
    assert project.dataset.__class__.objects.filter(name=project.name).count() == 0


def test_the_statistics_plots_are_drawn_once_per_set_of_pairs(client, project, people, monkeypatch):
    from annotation.workflows import workflow_for

    workflow = workflow_for(project.dataset.benchmark)
    drawn = []
    draw = workflow.statistics_plot
    monkeypatch.setattr(
        workflow, "statistics_plot", lambda name, pairs: drawn.append(len(pairs)) or draw(name, pairs)
    )
    held = take_task(client, project, people["ann"])
    qa = held.task.item.ground_truth["annotation"][0]
    pair = {
        "question": qa["question"],
        "answer": qa["answer"],
        "evidence": [float(v) for v in qa["evidence"]],
    }
    url = f"/annotate/assignments/{held.pk}/submit/"
    assert post_json(client, url, {"version": held.version, "pairs": [pair]}).status_code == 200
    client.force_login(people["res"])
    plot = f"/annotate/projects/{project.pk}/plots/first-words.png"
    first, again = client.get(plot), client.get(plot)
    assert first.content[:4] == b"\x89PNG" and again.content == first.content
    assert drawn == [1]  # the second view read the kept picture
    # Another annotator's pairs make a new set: drawn again, with both.
    nxt = take_task(client, project, people["bob"])
    qa = nxt.task.item.ground_truth["annotation"][0]
    pair = {
        "question": qa["question"],
        "answer": qa["answer"],
        "evidence": [float(v) for v in qa["evidence"]],
    }
    assert (
        post_json(
            client, f"/annotate/assignments/{nxt.pk}/submit/", {"version": nxt.version, "pairs": [pair]}
        ).status_code
        == 200
    )
    client.force_login(people["res"])
    assert client.get(plot).status_code == 200 and drawn == [1, 2]
    assert client.get(f"/annotate/projects/{project.pk}/plots/nothing.png").status_code == 404


def test_a_review_says_what_it_did_and_a_reviewed_pair_shows_its_review(client, project, people):
    held = take_task(client, project, people["ann"])
    truth = held.task.item.ground_truth["annotation"]
    pairs = [
        {"question": qa["question"], "answer": qa["answer"], "evidence": [float(v) for v in qa["evidence"]]}
        for qa in truth[:2]
    ]
    url = f"/annotate/assignments/{held.pk}/submit/"
    assert post_json(client, url, {"version": held.version, "pairs": pairs}).status_code == 200
    first, second = QAPair.objects.filter(assignment=held).order_by("index")
    client.force_login(people["rev"])
    page = client.get(f"/annotate/review/pairs/{first.pk}/").content.decode()
    assert 'id="already-reviewed"' not in page
    reply = post_json(
        client, f"/annotate/review/pairs/{first.pk}/", {"version": first.version, "action": "accept"}
    )
    assert reply.json()["done"] == f"“{first.question}”: Accepted." and reply.json()["next"]
    # The next pair's page carries the confirmation; the accepted pair says it was reviewed, and by whom.
    assert f"“{first.question}”: Accepted." in client.get(reply.json()["next"]).content.decode()
    page = client.get(f"/annotate/review/pairs/{first.pk}/").content.decode()
    assert "Already reviewed: Accepted by rev" in page and "A new review replaces it." in page
    last = post_json(
        client,
        f"/annotate/review/pairs/{second.pk}/",
        {"version": second.version, "action": "reject", "reason": "the quad misses the sign"},
    ).json()
    assert last["next"] is None and last["done"] == f"“{second.question}”: Rejected."
    page = client.get(f"/annotate/review/pairs/{second.pk}/").content.decode()
    assert "Already reviewed: Rejected by rev" in page and "Reason: “the quad misses the sign”." in page


def test_the_start_page_shows_the_instructions_once_and_open(client, project, people):
    project.instructions = "Ask about the text on the signs: one question per sign."
    project.save()
    client.force_login(people["ann"])
    start = client.get(f"/annotate/projects/{project.pk}/work/").content.decode()
    assert start.count("one question per sign") == 1
    assert '<details class="card instructions" id="instructions" open>' in start
    # At work on a task they are folded away above it, still one click from the image.
    take_task(client, project, people["ann"])
    working = client.get(f"/annotate/projects/{project.pk}/work/").content.decode()
    assert working.count("one question per sign") == 1
    assert '<details class="card instructions" id="instructions">' in working
