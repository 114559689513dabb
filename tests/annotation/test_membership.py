"""Who works a project's queue, at every step (issue 25, findings 1, 2 and the work page's GET).

Each test failed before its fix: a person removed from a project kept saving, heart-beating,
submitting and being handed new tasks; a first-round submit attached its pairs to any pair of
any project; opening the work page leased a returned task again. (Validation plans on the same
queue: tests/validation/test_membership.py.)
"""

import pytest

from annotation import queue, services
from annotation.models import Assignment, QAPair
from tests.annotation.conftest import blank_dataset
from tests.factories import make_user, post_json, take_task

pytestmark = pytest.mark.django_db

EVIDENCE = [10, 10, 60, 10, 60, 40, 10, 40]


def right_pairs(held: Assignment) -> list[dict]:
    qa = held.task.item.ground_truth["annotation"][0]
    return [
        {"question": qa["question"], "answer": qa["answer"], "evidence": [float(v) for v in qa["evidence"]]}
    ]


def test_a_person_removed_from_a_project_can_no_longer_save_beat_submit_skip_or_take_work(
    client, project, people
):
    held = take_task(client, project, people["ann"])
    url = f"/annotate/assignments/{held.pk}"
    assert post_json(client, f"{url}/save/", {"version": 0, "draft": {"pairs": []}}).status_code == 200
    project.annotators.remove(people["ann"])

    saved = post_json(client, f"{url}/save/", {"version": 1, "draft": {"pairs": [{"question": "later"}]}})
    assert saved.status_code == 403 and saved.json()["error"] == "not_member"
    assert post_json(client, f"{url}/heartbeat/", {}).json()["error"] == "not_member"
    submitted = post_json(client, f"{url}/submit/", {"version": 1, "pairs": right_pairs(held)})
    assert submitted.status_code == 403 and submitted.json()["error"] == "not_member"
    assert post_json(client, f"{url}/skip/", {"version": 1, "reason": "blurred"}).status_code == 403
    assert client.post(f"/annotate/projects/{project.pk}/next/").status_code == 404
    assert client.get(f"/annotate/projects/{project.pk}/work/").status_code == 404
    with pytest.raises(queue.NotMember):
        queue.claim(project, people["ann"])
    # Nothing of theirs was stored after the removal; the draft saved before it is kept, and the
    # task is free again at once (the removal ended the lease), for a member to take.
    held.refresh_from_db()
    assert held.status == Assignment.Status.EXPIRED and held.draft == {"pairs": []} and held.version == 1
    assert not QAPair.objects.exists()
    assert Assignment.objects.filter(annotator=people["ann"]).count() == 1
    image = held.task.item.dataset.media_url(held.task.item.media["image"])
    assert client.get(image).status_code == 404  # no image of the project reaches them either


def test_a_skip_or_submit_hands_no_new_task_to_someone_removed_meanwhile(client, project, people):
    held = take_task(client, project, people["bob"])
    other = queue.claim(project, people["ann"])
    # ann is removed while bob works: bob's next task still comes; ann's skip gives her none.
    project.annotators.remove(people["ann"])
    response = post_json(
        client, f"/annotate/assignments/{held.pk}/skip/", {"version": held.version, "reason": "dark"}
    )
    assert response.status_code == 200 and response.json()["next"] is not None
    client.force_login(people["ann"])
    response = post_json(
        client, f"/annotate/assignments/{other.pk}/skip/", {"version": other.version, "reason": "x"}
    )
    assert response.status_code == 403
    assert Assignment.objects.filter(annotator=people["ann"], status=Assignment.Status.LEASED).count() == 0


def test_a_first_round_pair_cannot_claim_to_answer_another_projects_pair(
    client, project, people, tmp_path, settings
):
    # A pair of another project (B), which A's annotator must not reach.
    other_dataset = blank_dataset(tmp_path / "b", 2, name="other")
    stranger = make_user("sid", "annotator")
    other = services.create_project(
        dataset=other_dataset, name="B", overlap=0, annotators=[stranger], pairs_per_item=1
    )
    foreign = queue.claim(other, stranger)
    services.submit(
        foreign, stranger, version=foreign.version, pairs=right_pairs(foreign), check_evidence=False
    )
    target = QAPair.objects.get(assignment=foreign)

    held = take_task(client, project, people["ann"])
    assert held.round == 1
    url = f"/annotate/assignments/{held.pk}/submit/"
    for source in (target.pk, 10**30, 2**63, -1, "1", True):
        pairs = [{**right_pairs(held)[0], "source": source}]
        response = post_json(client, url, {"version": held.version, "pairs": pairs})
        assert response.status_code == 400, source
        assert response.json()["errors"][0]["field"].endswith("source"), source
    assert not target.second_opinions.exists()
    assert not QAPair.objects.filter(assignment=held).exists()


def test_opening_the_work_page_does_not_lease_a_returned_task_again(client, project, people):
    held = take_task(client, project, people["ann"])
    post_json(
        client,
        f"/annotate/assignments/{held.pk}/submit/",
        {"version": held.version, "pairs": right_pairs(held)},
    )
    # Her next task is given back so that she holds nothing; then a reviewer returns the first one.
    following = Assignment.objects.filter(annotator=people["ann"], status=Assignment.Status.LEASED).first()
    if following is not None:
        queue.skip(following, people["ann"], following.version, "not now")
    pair = QAPair.objects.get(assignment=held)
    services.review(pair, people["rev"], version=pair.version, action="reject", reason="the quad is off")
    held.refresh_from_db()
    assert held.status == Assignment.Status.RETURNED

    page = client.get(f"/annotate/projects/{project.pk}/work/")
    assert page.status_code == 200 and "the quad is off" in page.content.decode()
    assert 'id="returned-waiting"' in page.content.decode()
    held.refresh_from_db()
    assert held.status == Assignment.Status.RETURNED  # a GET changed nothing
    # Taking it back is a POST, and then the page shows the task to work on.
    assert client.post(f"/annotate/projects/{project.pk}/next/").status_code == 302
    held.refresh_from_db()
    assert held.status == Assignment.Status.LEASED
    assert 'id="task-data"' in client.get(f"/annotate/projects/{project.pk}/work/").content.decode()
