"""A report's rows keep their names apart: a taken name is refused; rows are renamed and deleted
from the report page by who added them (or an admin), never a test plan's rows."""

import html

import orjson
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from benchmarks.services import import_dataset
from evaluation.models import Prediction, Submission
from evaluation.selectors import report_row_labels
from evaluation.services import SubmissionRefused, create_submission, score_submission, submit_predictions
from tests.benchmarks import builders
from tests.factories import make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def dataset():
    samples = [builders.trance_sample(idx) for idx in range(3)]
    return import_dataset(
        benchmark="trance", data=b"\n".join(orjson.dumps(sample) for sample in samples), name="demo"
    )


@pytest.fixture
def rita():
    return make_user("rita", "researcher")


def perfect(dataset) -> bytes:
    return orjson.dumps(
        {
            item.external_id: [
                {key: step[key] for key in ("obj_idx", "attr", "val")}
                for step in item.ground_truth["transformations"]
            ]
            for item in dataset.items.all()
        }
    )


def oracle(dataset, user, name="Oracle", setting="event"):
    return submit_predictions(
        dataset=dataset, name=name, data=perfect(dataset), setting=setting, created_by=user
    )


def report(client, dataset) -> str:
    return text(client.get(reverse("evaluation:report", args=[dataset.pk])))


def text(response) -> str:
    return html.unescape(response.content.decode())


def rename_url(submission) -> str:
    return reverse("evaluation:submission-rename", args=[submission.dataset_id, submission.pk])


def delete_url(submission) -> str:
    return reverse("evaluation:submission-delete", args=[submission.dataset_id, submission.pk])


# --- one name, one row ---------------------------------------------------------------------------


def test_a_second_submission_of_a_name_and_setting_is_refused_naming_the_field(dataset, rita):
    oracle(dataset, rita)
    with pytest.raises(SubmissionRefused) as refused:
        oracle(dataset, rita)
    assert refused.value.field == "name"
    assert str(refused.value) == (
        "TRANCE · demo already has a submission named 'Oracle' in the setting “Event”: choose another "
        "name, or rename or delete that one on the report page first"
    )
    assert Submission.objects.count() == 1 and Prediction.objects.count() == 3
    # The same model in another setting fills the other columns of its one row.
    oracle(dataset, rita, setting="view")
    assert report_row_labels(dataset) == ["Oracle"]
    # A test plan names its rows by its row label (which the plan keeps free): a tester starting a
    # test is never refused for a name.
    create_submission(dataset=dataset, name="Oracle", producer="human", origin="test_plan", setting="event")


def test_the_page_and_the_api_refuse_a_taken_name_under_the_name_field(client, dataset, rita):
    oracle(dataset, rita)
    client.force_login(rita)
    response = client.post(
        reverse("evaluation:report", args=[dataset.pk]),
        {
            "name": "Oracle",
            "producer": "model",
            "setting": "event",
            "variant": "official",
            "file": SimpleUploadedFile("answers.json", perfect(dataset)),
        },
    )
    assert response.status_code == 200
    assert response.context["form"].errors["name"] == [
        "TRANCE · demo already has a submission named 'Oracle' in the setting “Event”: choose another "
        "name, or rename or delete that one on the report page first"
    ]
    assert "already has a submission named" in text(response)
    api = APIClient()
    api.force_authenticate(rita)
    response = api.post(
        "/api/v1/submissions/",
        {
            "dataset": dataset.pk,
            "name": "Oracle",
            "setting": "event",
            "file": SimpleUploadedFile("a.json", b"{}"),
        },
        format="multipart",
    )
    assert (
        response.status_code == 400
        and "already has a submission named 'Oracle'" in response.json()["name"][0]
    )
    # A setting the benchmark lacks is refused under its field, saying what to choose instead.
    response = api.post(
        "/api/v1/submissions/",
        {
            "dataset": dataset.pk,
            "name": "New",
            "setting": "mono",
            "file": SimpleUploadedFile("a.json", b"{}"),
        },
        format="multipart",
    )
    assert response.status_code == 400
    assert response.json()["setting"] == [
        "TRANCE takes the setting “Basic” ('basic'), “Event” ('event') or “View” ('view'): "
        "choose one of them, not 'mono'"
    ]
    assert Submission.objects.count() == 1


# --- renaming ------------------------------------------------------------------------------------


def test_the_owner_renames_a_row_from_the_report_page_and_a_taken_name_is_refused(client, dataset, rita):
    first = oracle(dataset, rita)
    oracle(dataset, rita, name="Weak")
    client.force_login(rita)
    page = report(client, dataset)
    assert page.count('class="rename-link"') == 2 and page.count('class="delete-link"') == 2
    assert rename_url(first) in page and delete_url(first) in page

    form = client.get(rename_url(first))
    assert form.status_code == 200 and 'value="Oracle"' in text(form)
    refused = client.post(rename_url(first), {"name": "Weak"})
    assert refused.status_code == 200
    assert "already has a submission named 'Weak'" in refused.context["form"].errors["name"][0]
    first.refresh_from_db()
    assert first.name == "Oracle"

    done = client.post(rename_url(first), {"name": "Oracle v2"}, follow=True)
    assert done.redirect_chain[-1][0] == reverse("evaluation:report", args=[dataset.pk])
    assert "'Oracle' is now called 'Oracle v2'." in text(done)
    assert report_row_labels(dataset) == ["Oracle v2", "Weak"]
    assert "<th>Oracle v2</th>" in text(done)


# --- deleting ------------------------------------------------------------------------------------


def test_deleting_asks_first_says_what_goes_with_it_and_then_deletes(client, dataset, rita):
    submission = oracle(dataset, rita)
    client.force_login(rita)
    confirm = client.get(delete_url(submission))
    assert confirm.status_code == 200
    page = text(confirm)
    assert "Delete Oracle?" in page
    assert "its 3 per-unit scores and the 3 answers they were computed from" in page
    assert 'method="post"' in page and "csrfmiddlewaretoken" in page
    assert Submission.objects.filter(pk=submission.pk).exists()  # asking deletes nothing

    done = client.post(delete_url(submission), follow=True)
    assert "'Oracle' and its answers and scores were deleted." in text(done)
    assert not Submission.objects.exists() and not Prediction.objects.exists()
    assert report_row_labels(dataset) == []


def test_a_model_runs_row_says_the_run_stays(client, dataset, rita):
    submission = submit_predictions(
        dataset=dataset,
        name="Random",
        data=b"{}",
        setting="event",
        origin=Submission.Origin.MODEL_RUN,
        parameters={"model_run": 41},
        created_by=rita,
    )
    client.force_login(rita)
    page = text(client.get(delete_url(submission)))
    assert "Model run 41</a> that made it stays, with its prediction file" in page
    assert "the 0 answers" in page


def test_changes_are_post_only_with_a_csrf_token(dataset, rita):
    submission = oracle(dataset, rita)
    client = Client(enforce_csrf_checks=True)
    client.force_login(rita)
    assert client.post(delete_url(submission)).status_code == 403
    assert client.post(rename_url(submission), {"name": "x"}).status_code == 403
    submission.refresh_from_db()
    assert submission.name == "Oracle"


# --- who may ------------------------------------------------------------------------------------


def test_testers_get_403_and_other_researchers_are_told_who_can(client, dataset, rita):
    assert rita.has_perm("evaluation.change_submission") and rita.has_perm("evaluation.delete_submission")
    submission = oracle(dataset, rita)
    client.force_login(make_user("tom", "tester"))
    for url in (rename_url(submission), delete_url(submission)):
        assert client.get(url).status_code == 403
        assert client.post(url, {"name": "x"}).status_code == 403

    client.force_login(make_user("ron", "researcher"))
    page = report(client, dataset)
    assert "Oracle" in page and 'class="delete-link"' not in page and 'class="rename-link"' not in page
    refused = client.post(delete_url(submission))
    assert refused.status_code == 403
    assert "only the researcher who added 'Oracle' (rita), or an admin, can rename or delete it" in (
        text(refused)
    )
    assert client.post(rename_url(submission), {"name": "Mine"}).status_code == 403
    submission.refresh_from_db()
    assert submission.name == "Oracle"

    admin = make_user("ada", "admin")
    client.force_login(admin)
    assert 'class="delete-link"' in report(client, dataset)
    assert client.post(delete_url(submission)).status_code == 302
    assert not Submission.objects.exists()


def test_a_test_plans_row_is_deleted_with_the_plan_not_from_the_report(client, dataset, rita):
    pooled = create_submission(
        dataset=dataset,
        name="Human",
        producer="human",
        origin=Submission.Origin.TEST_PLAN,
        setting="event",
        parameters={"plan": 7},
        created_by=rita,
    )
    score_submission(pooled)  # a scored row, with no answers yet
    client.force_login(rita)
    page = report(client, dataset)
    assert reverse("humantest:plan-results", args=[7]) in page
    assert "deleted with the plan" in page and delete_url(pooled) not in page
    refused = client.post(delete_url(pooled))
    assert refused.status_code == 403
    assert "'Human' is the testers' results of test plan 7: it is deleted with the plan" in text(refused)
    assert client.post(rename_url(pooled), {"name": "People"}).status_code == 403
    assert Submission.objects.filter(pk=pooled.pk, name="Human").exists()
