"""The queue: leases, expiry without anyone's help, overlap, skipping, returned work, stale drafts."""

from datetime import timedelta

import pytest
from django.utils import timezone

from annotation import queue
from annotation.models import Assignment, Project, Task
from tests.annotation.conftest import blank_dataset
from tests.factories import make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def small(tmp_path):
    dataset = blank_dataset(tmp_path, 3)
    project = Project.objects.create(name="q", dataset=dataset, lease_seconds=60)
    items = list(dataset.items.order_by("position"))
    Task.objects.bulk_create(
        [
            Task(project=project, item=item, position=i, opinions=2 if i == 0 else 1)
            for i, item in enumerate(items)
        ]
    )
    people = [make_user(name, "annotator") for name in ("a1", "a2", "a3", "a4")]
    project.annotators.set(people)
    return project, people


def test_each_person_gets_a_different_task_and_the_same_one_back_while_holding_it(small):
    project, (a1, a2, a3, a4) = small
    first, second, third = (queue.claim(project, person) for person in (a1, a2, a3))
    assert len({first.task_id, second.task_id, third.task_id}) == 3
    assert queue.claim(project, a1).pk == first.pk  # asking again gives back the task in hand
    assert queue.claim(project, a4) is None  # every first round is held; no second opinion is due yet


def test_a_second_opinion_comes_only_after_the_first_is_submitted_and_never_to_the_same_person(small):
    project, (a1, a2, a3, a4) = small
    held = queue.claim(project, a1)
    assert held.task.position == 0 and held.round == 1
    queue.close(held, a1, held.version, status=Assignment.Status.SUBMITTED, submitted_at=timezone.now())
    queue.submitted(held, first_time=True)
    after = queue.claim(project, a1)
    assert after.task.position == 1  # not the second opinion on their own image
    second = queue.claim(project, a2)
    assert (second.task.position, second.round) == (0, 2)
    assert queue.claim(project, a3).task.position == 2
    assert queue.claim(project, a4) is None  # overlap 2 on task 0 is reached: nobody else gets it


def test_an_expired_lease_goes_back_to_the_pool_by_itself_and_its_holder_can_no_longer_write(small):
    project, (a1, a2, *_) = small
    held = queue.claim(project, a1)
    Assignment.objects.filter(pk=held.pk).update(lease_expires_at=timezone.now() - timedelta(seconds=1))
    with pytest.raises(queue.LeaseLost):
        queue.heartbeat(held, a1)
    with pytest.raises(queue.LeaseLost):
        queue.save_draft(held, a1, held.version, {"pairs": []})
    taken = queue.claim(project, a2)
    assert taken.task_id == held.task_id  # the first free task again, now a2's
    held.refresh_from_db()
    assert held.status == Assignment.Status.EXPIRED


def test_heartbeats_and_saves_keep_the_lease(small):
    project, (a1, *_) = small
    held = queue.claim(project, a1)
    Assignment.objects.filter(pk=held.pk).update(lease_expires_at=timezone.now() + timedelta(seconds=2))
    until = queue.heartbeat(held, a1)
    assert until > timezone.now() + timedelta(seconds=55)
    version, until = queue.save_draft(held, a1, held.version, {"pairs": [{"question": "q"}]})
    assert version == held.version + 1


def test_a_stale_draft_is_refused_with_what_the_server_holds(small):
    project, (a1, *_) = small
    held = queue.claim(project, a1)
    queue.save_draft(held, a1, 0, {"pairs": [{"question": "from the laptop"}]})
    with pytest.raises(queue.Stale) as refused:
        queue.save_draft(held, a1, 0, {"pairs": [{"question": "from the phone"}]})
    assert refused.value.server == {"version": 1, "draft": {"pairs": [{"question": "from the laptop"}]}}
    held.refresh_from_db()
    assert held.draft["pairs"][0]["question"] == "from the laptop"


def test_another_persons_assignment_cannot_be_written(small):
    project, (a1, a2, *_) = small
    held = queue.claim(project, a1)
    with pytest.raises(queue.LeaseLost):
        queue.save_draft(held, a2, held.version, {"pairs": []})


def test_a_skipped_task_goes_to_someone_else_never_back(small):
    project, (a1, a2, *_) = small
    held = queue.claim(project, a1)
    queue.skip(held, a1, held.version, "blurred")
    assert queue.claim(project, a1).task_id != held.task_id
    assert queue.claim(project, a2).task_id == held.task_id


def test_returning_after_an_expired_lease_brings_the_draft_back(small):
    project, (a1, *_) = small
    held = queue.claim(project, a1)
    queue.save_draft(held, a1, held.version, {"pairs": [{"question": "half written"}]})
    Assignment.objects.filter(pk=held.pk).update(lease_expires_at=timezone.now() - timedelta(seconds=1))
    again = queue.claim(project, a1)
    assert again.pk != held.pk and again.task_id == held.task_id
    assert again.draft == {"pairs": [{"question": "half written"}]}


def test_returned_work_whose_lease_lapses_stays_with_its_annotator(small):
    project, (a1, a2, *_) = small
    held = queue.claim(project, a1)
    queue.close(held, a1, held.version, status=Assignment.Status.SUBMITTED, submitted_at=timezone.now())
    Assignment.objects.filter(pk=held.pk).update(status=Assignment.Status.RETURNED)
    back = queue.claim(project, a1)
    assert back.pk == held.pk and back.status == Assignment.Status.LEASED
    Assignment.objects.filter(pk=held.pk).update(lease_expires_at=timezone.now() - timedelta(seconds=1))
    queue.expire_leases(project)
    held.refresh_from_db()
    assert held.status == Assignment.Status.RETURNED
    assert queue.claim(project, a2).task_id != held.task_id
