"""Comparing two report rows on the units both answered: the command, and its refusals."""

import io
import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from evaluation.services import submit_predictions

pytestmark = pytest.mark.django_db


@pytest.fixture
def two_rows(trance_dataset, trance_files):
    """An oracle answering every sample right, and a model that gets the first four right."""
    samples = [json.loads(line) for line in (trance_files / "data.jsonl").read_text().splitlines()]
    oracle = {
        str(s["idx"]): [{k: step[k] for k in ("obj_idx", "attr", "val")} for step in s["transformations"]]
        for s in samples
    }
    weak = {key: steps if int(key) < 4 else [] for key, steps in oracle.items()}
    for name, answers in (("Oracle", oracle), ("Weak", weak)):
        submit_predictions(
            dataset=trance_dataset, name=name, setting="event", data=json.dumps(answers).encode()
        )
    return trance_dataset


def test_the_command_gives_the_paired_difference_and_mcnemar_per_column(two_rows):
    out = io.StringIO()
    call_command("compare", str(two_rows.pk), "Oracle", "Weak", "--metric", "Acc", "--json", stdout=out)
    result = json.loads(out.getvalue())
    event = next(column for column in result["columns"] if column["group"] == "Event")
    assert (event["n"], event["mean_a"], event["mean_b"]) == (12, 1.0, pytest.approx(4 / 12))
    assert (
        event["difference"] == pytest.approx(8 / 12)
        and 0 < event["low"] <= event["difference"] <= event["high"]
    )
    test = event["mcnemar"]
    assert (test["only_a_right"], test["only_b_right"], test["both_right"]) == (8, 0, 4)
    assert test["p_value"] == pytest.approx(2 * 0.5**8)
    basic = next(column for column in result["columns"] if column["group"] == "Basic")
    assert basic["skipped"] == "one of the rows has no answers in this setting"
    out = io.StringIO()
    call_command("compare", "TRANCE test sample", "Weak", "Oracle", "--metric", "Acc", stdout=out)
    assert "Event Acc: n=12" in out.getvalue() and "A-B -0.6667" in out.getvalue()


def test_a_row_that_is_not_there_is_refused_naming_the_rows(two_rows):
    with pytest.raises(CommandError, match="has no report row 'Human' \\(rows: 'Oracle', 'Weak'\\)"):
        call_command("compare", str(two_rows.pk), "Oracle", "Human")
    with pytest.raises(CommandError, match="choose two different rows"):
        call_command("compare", str(two_rows.pk), "Oracle", "Oracle")
    with pytest.raises(CommandError, match="have no column 'F1'"):
        call_command("compare", str(two_rows.pk), "Oracle", "Weak", "--metric", "F1")


def test_the_compare_page_shows_the_paired_table_and_refuses_an_unknown_row(two_rows, client):
    from tests.factories import make_user

    client.force_login(make_user("rita", "researcher"))
    report = client.get(f"/datasets/{two_rows.pk}/report/").content.decode()
    assert f'href="/datasets/{two_rows.pk}/report/compare/"' in report
    page = client.get(
        f"/datasets/{two_rows.pk}/report/compare/", {"a": "Oracle", "b": "Weak"}
    ).content.decode()
    assert 'id="comparison"' in page and "Event Acc" in page and "+0.667" in page
    assert "0.0078 (0.0" in page  # McNemar on 8 discordant units: 2 * 0.5**8, then Holm over the table
    page = client.get(
        f"/datasets/{two_rows.pk}/report/compare/", {"a": "Oracle", "b": "Nobody"}
    ).content.decode()
    assert "has no report row &#x27;Nobody&#x27;" in page
    client.force_login(make_user("tess", "tester"))
    assert client.get(f"/datasets/{two_rows.pk}/report/compare/").status_code == 403


def test_the_human_row_pairs_with_a_model_by_the_units_its_testers_answered(
    two_rows, django_capture_on_commit_callbacks
):
    """Testers' rows are scored per trial; they pair with the model by unit, several testers on a
    unit counting once, and only the units a tester answered count."""
    from humantest.models import TestPlan, Trial
    from tests.factories import make_user
    from tests.yardstick.test_crawl import answer_all

    testers = [make_user(name, "tester") for name in ("tess", "tom")]
    with django_capture_on_commit_callbacks(execute=True):
        plan = TestPlan.objects.create(
            name="Event", dataset=two_rows, setting="event", items_per_tester=6, seed=2
        )
        plan.testers.add(*testers)
        for tester in testers:
            answer_all(plan, tester)
    answered = set(
        Trial.objects.filter(session__plan=plan, phase="test").values_list("item__external_id", flat=True)
    )
    assert len(answered) < 12  # the two testers shared some items and missed others
    out = io.StringIO()
    call_command("compare", str(two_rows.pk), "Weak", "Human", "--metric", "Acc", "--json", stdout=out)
    event = next(column for column in json.loads(out.getvalue())["columns"] if column["group"] == "Event")
    assert event["n"] == len(answered) and event["mean_b"] == 1.0
    assert event["mean_a"] == pytest.approx(len([idx for idx in answered if int(idx) < 4]) / len(answered))


def test_the_comparison_is_exported_and_served_by_the_api(two_rows, client):
    from rest_framework.test import APIClient

    from tests.factories import make_user

    researcher = make_user("rita", "researcher")
    client.force_login(researcher)
    query = {"a": "Oracle", "b": "Weak"}
    csv_text = client.get(f"/datasets/{two_rows.pk}/report/compare.csv", query).content.decode()
    assert csv_text.startswith("# Oracle (A) against Weak (B)")
    event_acc = next(line for line in csv_text.splitlines() if line.startswith("Event,Acc,event,,12,"))
    assert ",McNemar exact,8,0," in event_acc
    latex = client.get(f"/datasets/{two_rows.pk}/report/compare.tex", query).content.decode()
    assert "\\toprule" in latex and "Event Acc & 12 & 1.000 & 0.333 & +0.667 [" in latex
    assert client.get(f"/datasets/{two_rows.pk}/report/compare.xml", query).status_code == 404
    api = APIClient()
    api.force_authenticate(researcher)
    data = api.get(f"/api/v1/datasets/{two_rows.pk}/compare/", {**query, "metric": "Acc"}).json()
    assert [column["group"] for column in data["columns"]] == ["Basic", "Event", "View"]
    refused = api.get(f"/api/v1/datasets/{two_rows.pk}/compare/", {"a": "Oracle", "b": "Nobody"})
    assert refused.status_code == 400 and "has no report row 'Nobody'" in refused.json()["detail"]


def test_the_plan_page_ranks_items_by_difficulty_and_flags_the_ones_every_tester_failed(
    trance_dataset, client, django_capture_on_commit_callbacks
):
    from humantest import answers, clock, sessions
    from humantest.models import TestPlan
    from tests.factories import make_user

    testers = [make_user(name, "tester") for name in ("tess", "tom")]
    with django_capture_on_commit_callbacks(execute=True):
        plan = TestPlan.objects.create(
            name="All", dataset=trance_dataset, setting="event", items_per_tester=12, seed=1
        )
        plan.testers.add(*testers)
        for tester in testers:
            session = sessions.begin_test(sessions.start_session(plan, tester))
            while (trial := clock.serve_current_trial(session)[0]) is not None:
                truth = trial.item.ground_truth["transformations"]
                steps = [{k: s[k] for k in ("obj_idx", "attr", "val")} for s in truth]
                wrong = trial.item.external_id == "0"  # both testers miss sample 0
                if wrong:  # a step on another object than the first one changed
                    steps = [{"obj_idx": (steps[0]["obj_idx"] + 1) % 10, "attr": "color", "val": "gray"}]
                answers.record_answer(trial.pk, tester, {"steps": steps}, {})
    client.force_login(make_user("rita", "researcher"))
    page = client.get(f"/test/plans/{plan.pk}/").content.decode()
    table = page[page.index('id="difficulty"') :]
    flagged = table[: table.index("every tester failed")]
    assert flagged.count('class="all-failed"') == 1 and ">0</a>" in flagged
    assert table.index("every tester failed") < table.index('<td class="num">1.00</td>')
    # TRANCE declares no validation check: the page says so instead of offering a plan.
    assert 'id="no-validation"' in page and 'id="validate-flagged"' not in page


def test_rows_are_compared_within_each_stratum_and_every_test_joins_the_holm_family(two_rows, client):
    out = io.StringIO()
    call_command(
        "compare",
        str(two_rows.pk),
        "Oracle",
        "Weak",
        "--metric",
        "Acc",
        "--by",
        "target_step",
        "--json",
        stdout=out,
    )
    event = next(column for column in json.loads(out.getvalue())["columns"] if column["group"] == "Event")
    lengths = {str(stratum["stratum"]): stratum for stratum in event["strata"]}
    assert sum(stratum["n"] for stratum in lengths.values()) == event["n"] == 12
    assert set(lengths) <= {"1", "2", "3", "4"} and len(lengths) > 1
    family = event["mcnemar"]["family"]
    assert family == 1 + sum("mcnemar" in stratum for stratum in lengths.values())
    with pytest.raises(
        CommandError, match="TRANCE rows are compared within camera, target_step, not 'colour'"
    ):
        call_command("compare", str(two_rows.pk), "Oracle", "Weak", "--by", "colour")
    from tests.factories import make_user

    client.force_login(make_user("rita", "researcher"))
    page = client.get(
        f"/datasets/{two_rows.pk}/report/compare/", {"a": "Oracle", "b": "Weak", "by": "target_step"}
    )
    assert page.content.decode().count('class="stratum') >= 2 * len(lengths)
    csv_text = client.get(
        f"/datasets/{two_rows.pk}/report/compare.csv", {"a": "Oracle", "b": "Weak", "by": "target_step"}
    )
    assert (
        "Event,Acc,event,target_step=1," in csv_text.content.decode()
        or "target_step=2" in csv_text.content.decode()
    )


def test_every_pair_of_rows_is_compared_once_and_kept_until_a_submission_changes(two_rows, client):
    from evaluation.selectors import cached_pairwise, pairwise_report
    from tests.factories import make_user

    assert cached_pairwise(two_rows) is None
    first = pairwise_report(two_rows)
    assert cached_pairwise(two_rows) == first
    event = next(pair for pair in first["pairs"] if pair["group"] == "Event")
    assert (event["a"], event["b"], event["n"], event["mcnemar"]["only_a_right"]) == ("Oracle", "Weak", 12, 8)
    submit_predictions(dataset=two_rows, name="Empty", setting="event", data=b"{}")
    assert cached_pairwise(two_rows) is None  # a new submission: computed again
    again = pairwise_report(two_rows)
    assert sorted((pair["a"], pair["b"]) for pair in again["pairs"] if pair["group"] == "Event") == [
        ("Empty", "Oracle"), ("Empty", "Weak"), ("Oracle", "Weak"),
    ]  # fmt: skip
    assert all(pair["mcnemar"]["family"] == 3 for pair in again["pairs"] if "mcnemar" in pair)
    client.force_login(make_user("rita", "researcher"))
    page = client.get(f"/datasets/{two_rows.pk}/report/").content.decode()
    table = page[page.index('id="pairwise"') :]
    assert "kept until a submission of this dataset changes" in table
    assert table.index("Empty") < table.index("Oracle")  # rows in the report's order
    assert f"/datasets/{two_rows.pk}/report/compare/?a=Empty&amp;b=Oracle" in table


def test_the_report_page_asks_a_worker_for_every_pair_and_shows_the_table_once_it_is_there(
    two_rows, client, monkeypatch
):
    """Without a worker running tasks in-process, the report page does not compute the pairs in the
    request: it queues one computation (not one per view) and says so; the fragment it polls
    answers 202 until the worker is done, then the table."""
    from evaluation import tasks
    from tests.factories import make_user

    queued = []
    monkeypatch.setattr(tasks.compute_pairwise, "delay", lambda *args: queued.append(args))
    client.force_login(make_user("rita", "researcher"))
    for _ in range(2):
        page = client.get(f"/datasets/{two_rows.pk}/report/").content.decode()
        assert 'data-state="computing"' in page and 'id="pairwise"' not in page
        assert "evaluation/pairwise.js" in page
    assert len(queued) == 1
    fragment = client.get(f"/datasets/{two_rows.pk}/report/pairwise/")
    assert fragment.status_code == 202 and len(queued) == 1
    tasks.compute_pairwise(*queued[0])  # the worker runs it
    fragment = client.get(f"/datasets/{two_rows.pk}/report/pairwise/")
    assert fragment.status_code == 200 and 'id="pairwise"' in fragment.content.decode()
    assert "evaluation/pairwise.js" not in client.get(f"/datasets/{two_rows.pk}/report/").content.decode()
    client.force_login(make_user("tess", "tester"))
    assert client.get(f"/datasets/{two_rows.pk}/report/pairwise/").status_code == 403


def test_the_overlap_list_names_the_units_only_one_row_missed_with_both_answers(two_rows, client):
    from tests.factories import make_user

    client.force_login(make_user("rita", "researcher"))
    url = f"/datasets/{two_rows.pk}/report/compare/overlap/"
    query = {"a": "Oracle", "b": "Weak", "column": "Event Acc"}
    page = client.get(url, {**query, "kind": "only_b_wrong"}).content.decode()
    assert page.count("card overlap-unit") == 8  # samples 4..11: the weak row answered nothing
    assert "<strong>only Weak misses (8)</strong>" in page and "both right (4)" in page  # rows by name
    # The oracle's steps in words beside the weak row's empty answer; no raw JSON.
    assert "position →" in page or ": color →" in page or ": size →" in page
    assert "<li>no steps</li>" in page and "obj_idx" not in page
    both_right = client.get(url, {**query, "kind": "both_right"}).content.decode()
    assert both_right.count("card overlap-unit") == 4
    assert client.get(url, {**query, "column": "Event AD"}).status_code == 404  # not right/wrong
    assert client.get(url, {**query, "kind": "nobody"}).status_code == 404


def test_every_pair_is_exported_and_served_by_the_api_once_a_worker_has_it(two_rows, client, monkeypatch):
    from rest_framework.test import APIClient

    from evaluation import tasks
    from tests.factories import make_user

    queued = []
    monkeypatch.setattr(tasks.compute_pairwise, "delay", lambda *args: queued.append(args))
    researcher = make_user("rita", "researcher")
    client.force_login(researcher)
    api = APIClient()
    api.force_authenticate(researcher)
    waiting = client.get(f"/datasets/{two_rows.pk}/report/pairwise.csv")
    assert waiting.status_code == 202 and "ask again" in waiting.content.decode()
    assert api.get(f"/api/v1/datasets/{two_rows.pk}/pairwise/").json() == {"status": "computing"}
    assert len(queued) == 1
    tasks.compute_pairwise(*queued[0])
    csv_text = client.get(f"/datasets/{two_rows.pk}/report/pairwise.csv").content.decode()
    event = next(
        line for line in csv_text.splitlines() if line.startswith("Oracle,Weak,Event,Acc,event,,12,")
    )
    assert ",McNemar exact,8,0," in event
    latex = client.get(f"/datasets/{two_rows.pk}/report/pairwise.tex").content.decode()
    assert "Event Acc & Oracle & Weak & 12 & +0.667 [" in latex
    data = api.get(f"/api/v1/datasets/{two_rows.pk}/pairwise/").json()
    assert data["status"] == "ready" and data["resamples"] == 1000
    assert {(pair["a"], pair["b"], pair["group"]) for pair in data["pairs"] if "n" in pair} == {
        ("Oracle", "Weak", "Event")
    }


def test_strata_with_too_few_units_say_so_instead_of_a_point_interval(two_rows, client):
    """Within each transformation length the rows share fewer than 10 units: the page says "too
    few units to compare" and shows no interval, never "[+1.000, +1.000]" and "excludes 0"."""
    from tests.factories import make_user

    client.force_login(make_user("rita", "researcher"))
    page = client.get(
        f"/datasets/{two_rows.pk}/report/compare/", {"a": "Oracle", "b": "Weak", "by": "target_step"}
    ).content.decode()
    assert page.count("too few units to compare (fewer than 10): no interval") >= 2
    assert "[+1.000, +1.000]" not in page
    assert 'class="stratum excludes-zero"' not in page


def test_a_failed_table_of_every_pair_is_a_409_with_a_short_message_not_a_500(two_rows, client, monkeypatch):
    """The worker's computation failed: the export and the API say so with 409 and a sentence,
    without the computation's error text; nothing answers 500."""
    from rest_framework.test import APIClient

    from evaluation import reports
    from tests.factories import make_user

    def broken(*args, **kwargs):
        raise RuntimeError("internal detail /srv/secret/path")

    monkeypatch.setattr(reports, "pairwise_comparisons", broken)
    rita = make_user("rita", "researcher")
    client.force_login(rita)
    page = client.get(f"/datasets/{two_rows.pk}/report/pairwise/")  # the worker runs it in-process
    assert page.status_code in (200, 202)
    for extension in ("csv", "json", "tex"):
        export = client.get(f"/datasets/{two_rows.pk}/report/pairwise.{extension}")
        assert export.status_code == 409, extension
        assert (
            "could not be computed" in export.content.decode()
            and "/srv/secret" not in export.content.decode()
        )
    api = APIClient()
    api.force_authenticate(rita)
    answer = api.get(f"/api/v1/datasets/{two_rows.pk}/pairwise/")
    assert answer.status_code == 409 and answer.json()["status"] == "failed"
    assert "/srv/secret" not in answer.content.decode()


def test_the_first_comparison_of_two_rows_is_a_workers_and_the_page_api_and_export_wait_for_it(
    two_rows, client, monkeypatch
):
    from rest_framework.test import APIClient

    from evaluation import tasks
    from tests.factories import make_user

    researcher = make_user("rita", "researcher")
    client.force_login(researcher)
    queued = []
    monkeypatch.setattr(tasks.compute_comparison, "delay", lambda *args: queued.append(args))
    query = {"a": "Oracle", "b": "Weak"}
    page = client.get(f"/datasets/{two_rows.pk}/report/compare/", query).content.decode()
    assert (
        'data-state="computing"' in page
        and "Being computed by a worker" in page
        and "evaluation/compare.js" in page
    )
    assert 'id="comparison"' not in page
    api = APIClient()
    api.force_authenticate(researcher)
    waiting = api.get(f"/api/v1/datasets/{two_rows.pk}/compare/", query)
    assert (waiting.status_code, waiting.json()) == (202, {"status": "computing"})
    export = client.get(f"/datasets/{two_rows.pk}/report/compare.csv", query)
    assert export.status_code == 202 and "being computed by a worker" in export.content.decode()
    assert len(queued) == 1  # asked once, however many pages wait for it
    tasks.compute_comparison(*queued[0])
    page = client.get(f"/datasets/{two_rows.pk}/report/compare/", query).content.decode()
    assert 'data-state="ready"' in page and 'id="comparison"' in page and "evaluation/compare.js" not in page
    assert api.get(f"/api/v1/datasets/{two_rows.pk}/compare/", query).status_code == 200
    # Rows that cannot be compared: the worker keeps why, and the page says it instead of waiting.
    unknown = {"a": "Oracle", "b": "Nobody"}
    client.get(f"/datasets/{two_rows.pk}/report/compare/", unknown)
    tasks.compute_comparison(*queued[-1])
    page = client.get(f"/datasets/{two_rows.pk}/report/compare/", unknown).content.decode()
    assert "has no report row" in page and 'data-state="ready"' in page
