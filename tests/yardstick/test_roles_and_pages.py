"""Roles decide what each person can open; the home page sends each role to its work."""

import orjson
import pytest
from django.contrib.auth.models import Group
from django.urls import reverse

from accounts.roles import ROLES, sync_roles
from benchmarks.services import import_dataset
from tests.benchmarks import builders
from tests.factories import PASSWORD, make_user

pytestmark = pytest.mark.django_db

RESEARCHER_PAGES = ["benchmarks:dataset-list", "benchmarks:import"]


def test_every_role_exists_as_a_group_with_its_permissions():
    sync_roles()
    assert set(Group.objects.values_list("name", flat=True)) >= set(ROLES)
    researcher = Group.objects.get(name="researcher").permissions.values_list("codename", flat=True)
    assert {"import_dataset", "export_dataset", "add_dataset", "view_item"} <= set(researcher)
    for role in ("annotator", "reviewer", "tester"):
        assert not Group.objects.get(name=role).permissions.exists()


def test_anonymous_visitors_are_sent_to_log_in(client):
    response = client.get(reverse("home"))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))


def test_login_logout_and_password_change(client):
    make_user("rita", "researcher")
    response = client.post(reverse("login"), {"username": "rita", "password": PASSWORD}, follow=True)
    assert response.redirect_chain[-1][0] == reverse("home")
    assert b"Import a dataset" in response.content

    response = client.post(
        reverse("password_change"),
        {
            "old_password": PASSWORD,
            "new_password1": "another-long-secret-9",
            "new_password2": "another-long-secret-9",
        },
        follow=True,
    )
    assert b"Password changed" in response.content
    client.post(reverse("logout"))
    assert client.get(reverse("home")).status_code == 302
    assert client.login(username="rita", password="another-long-secret-9")


@pytest.mark.parametrize(
    ("role", "section", "absent"),
    [
        ("researcher", b'id="research"', b'id="testing"'),
        ("tester", b'id="testing"', b'id="research"'),
        ("annotator", b'id="annotation"', b'id="research"'),
        ("reviewer", b'id="annotation"', b'id="testing"'),
    ],
)
def test_home_shows_each_role_its_own_work(client, role, section, absent):
    client.force_login(make_user(f"{role}1", role))
    content = client.get(reverse("home")).content
    assert section in content
    assert absent not in content


@pytest.mark.parametrize("role", ["tester", "annotator", "reviewer"])
def test_people_without_research_rights_get_403_on_catalog_pages(client, role):
    dataset = import_dataset(benchmark="stevqa", data=orjson.dumps(builders.stevqa_questions()), name="d")
    client.force_login(make_user(f"{role}2", role))
    for name in RESEARCHER_PAGES:
        assert client.get(reverse(name)).status_code == 403
    assert client.get(reverse("benchmarks:dataset-detail", args=[dataset.pk])).status_code == 403
    assert client.get(reverse("benchmarks:dataset-export", args=[dataset.pk])).status_code == 403
    assert client.get(reverse("api-schema")).status_code == 200  # the schema itself is public knowledge
    assert client.get("/api/v1/datasets/").status_code == 403


def test_researcher_browses_a_dataset_and_its_items(client):
    dataset = import_dataset(benchmark="stevqa", data=orjson.dumps(builders.stevqa_questions()), name="gt")
    client.force_login(make_user("rob", "researcher"))
    listing = client.get(reverse("benchmarks:dataset-list")).content.decode()
    assert "gt" in listing and "STE-VQA" in listing
    detail = client.get(reverse("benchmarks:dataset-detail", args=[dataset.pk])).content.decode()
    assert "这家店的名字是什么?" in detail
    item = dataset.items.get(external_id="1")
    page = client.get(reverse("benchmarks:item-detail", args=[dataset.pk, item.pk])).content.decode()
    assert "華為專賣店" in page  # the researcher sees the ground truth


def test_researcher_downloads_the_official_file(client):
    records = builders.stevqa_questions()
    dataset = import_dataset(benchmark="stevqa", data=orjson.dumps(records), name="gt", split="test")
    client.force_login(make_user("rob", "researcher"))
    response = client.get(reverse("benchmarks:dataset-export", args=[dataset.pk]))
    assert response.status_code == 200
    assert 'filename="stevqa-gt-test-v1.json"' in response["Content-Disposition"]
    assert orjson.loads(b"".join(response.streaming_content)) == records


def test_a_trance_item_page_shows_the_diagram_and_the_steps(client):
    data = b"\n".join(orjson.dumps(builders.trance_sample(idx)) for idx in range(2))
    dataset = import_dataset(benchmark="trance", data=data, name="trance")
    client.force_login(make_user("rob", "researcher"))
    item = dataset.items.get(external_id="1")
    page = client.get(reverse("benchmarks:item-detail", args=[dataset.pk, item.pk])).content.decode()
    assert page.count('class="object"') == 10
    assert "object 2: color → cyan" in page
    assert "object 2: position → behind 2 (inner)" in page
