"""manage.py rescore: stored submissions scored again with the metric code as it is now."""

import io
import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from evaluation.models import Submission
from evaluation.services import submit_predictions

pytestmark = pytest.mark.django_db


def test_a_summary_from_an_older_metric_is_replaced_and_testers_rows_are_scored_from_their_trials(
    trance_dataset, trance_files, django_capture_on_commit_callbacks
):
    from humantest.models import TestPlan
    from tests.factories import make_user
    from tests.yardstick.test_crawl import answer_all

    samples = [json.loads(line) for line in (trance_files / "data.jsonl").read_text().splitlines()]
    oracle = {
        str(s["idx"]): [{k: step[k] for k in ("obj_idx", "attr", "val")} for step in s["transformations"]]
        for s in samples
    }
    model = submit_predictions(
        dataset=trance_dataset, name="Oracle", setting="event", data=json.dumps(oracle).encode()
    )
    tester = make_user("tess", "tester")
    with django_capture_on_commit_callbacks(execute=True):
        plan = TestPlan.objects.create(name="P", dataset=trance_dataset, setting="event", items_per_tester=3)
        plan.testers.add(tester)
        answer_all(plan, tester)
    plan.refresh_from_db()
    rows = [model, plan.pooled_submission, plan.sessions.get().submission]
    # As an older metric version would have left them: other keys, an older scoring time.
    before = {}
    for submission in rows:
        submission.refresh_from_db()
        before[submission.pk] = (submission.summary, submission.scored_at)
        Submission.objects.filter(pk=submission.pk).update(summary={"metric_version": "0", "old_key": 1})
    out = io.StringIO()
    call_command("rescore", "--benchmark", "trance", "--json", stdout=out)
    done = {row["submission"]: row["origin"] for row in json.loads(out.getvalue())}
    assert done == {
        model.pk: "upload",
        plan.pooled_submission_id: "test_plan",
        plan.sessions.get().submission_id: "test_session",
    }
    for submission in rows:
        submission.refresh_from_db()
        summary, scored_at = before[submission.pk]
        assert submission.summary == summary and "old_key" not in submission.summary
        assert submission.scored_at > scored_at  # cached comparisons are computed again


def test_rescore_names_what_it_cannot_find(db):
    with pytest.raises(CommandError, match="name a dataset, or --benchmark B"):
        call_command("rescore")
    with pytest.raises(CommandError, match="nothing"):
        call_command("rescore", "--benchmark", "nothing")
