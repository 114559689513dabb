"""The human baseline report (issue 27): the reporting checklist filled from what a plan recorded and
from its one-time form, its downloads (Markdown, LaTeX, JSON), the plan's pre-registration and
whether what ran matched it, and who may read, answer and record."""

import json
import re
import statistics
from collections import Counter

import pytest
from rest_framework.test import APIClient

from evaluation.comparison import paired_sample_size
from humantest import answers, checklist, clock, exclusions, qualification, sessions, studies
from humantest.models import Preregistration, ReportAnswers, Study, TestPlan, TestSession, Trial
from humantest.payments import rule_of
from tests.factories import logged_in, make_user, right_answer, wrong_answer

pytestmark = pytest.mark.django_db

CLIENT = {"shown_ms": 5.0, "submit_ms": 2000.0, "events": []}


def answer_open_trials(session, tester, right: bool) -> None:
    while True:
        trial, _ = clock.serve_current_trial(session)
        if trial is None:
            return
        answers.record_answer(trial.pk, tester, (right_answer if right else wrong_answer)(trial), CLIENT)


def practise(plan, tester, right: bool):
    session = sessions.start_practice(sessions.start_session(plan, tester))
    answer_open_trials(session, tester, right)
    qualification.settle(session)
    session.refresh_from_db()
    return session


def take_test(plan, tester, right: bool):
    session = sessions.begin_test(practise(plan, tester, right=True))
    answer_open_trials(session, tester, right)
    session.refresh_from_db()
    return session


def by_id(report) -> dict:
    return {entry["id"]: entry for section in report["sections"] for entry in section["items"]}


@pytest.fixture
def rita():
    return make_user("rita", "researcher")


@pytest.fixture
def plan(trance_dataset, rita):
    """A plan with practice (one right answer qualifies, one round), one catch trial per tester and a
    rule stated before data: one failed catch trial excludes a tester; a study with a pay rule."""
    ids = list(trance_dataset.items.order_by("position").values_list("external_id", flat=True))
    plan = TestPlan.objects.create(
        dataset=trance_dataset,
        name="Event baseline",
        setting="event",
        items_per_tester=3,
        seed=5,
        practice_items=[ids[0]],
        qualify_min_correct=1,
        qualify_rounds=1,
        catch_items=[ids[1]],
        catch_count=1,
        brief="Say what changed between the two pictures.",
        created_by=rita,
    )
    exclusions.save_rules(plan, {"catch_failures": 1}, user=rita)
    studies.update_study(
        plan,
        currency="GBP",
        base_pay="2.50",
        bonus_per_correct="0.10",
        bonus_threshold="0.8",
        bonus_above="1.00",
        bonus_cap="2.00",
    )
    return plan


@pytest.fixture
def ran(plan):
    """alice answers everything right, bob everything wrong (his catch trial too: excluded), carol
    fails the practice round (screened out, never measured)."""
    alice, bob, carol = (make_user(name, "tester") for name in ("alice", "bob", "carol"))
    plan.testers.add(alice, bob, carol)
    take_test(plan, alice, right=True)
    take_test(plan, bob, right=False)
    assert practise(plan, carol, right=False).status == TestSession.Status.SCREENED_OUT
    return plan


# --- the checklist's computed answers --------------------------------------------------------------


def test_the_computed_answers_equal_the_plans_facts(ran):
    plan = ran
    report = checklist.build_report(plan)
    items = by_id(report)
    assert list(items) == list(checklist.ITEMS)  # every item, in the checklist's order
    assert [section["id"] for section in report["sections"]] == ["0", "1", "2", "3", "4", "5"]
    assert all(entry["answer"] in checklist.CHOICES for entry in items.values())
    assert all(entry["source"] in checklist.SOURCES for entry in items.values())

    # What the database holds, counted independently of the builder.
    started = plan.sessions.exclude(started_at=None)
    alice = started.get(tester__username="alice")
    kept_trials = Trial.objects.filter(session=alice, phase=Trial.Phase.TEST)
    per_unit = Counter((trial.item_id, trial.part) for trial in kept_trials)

    assert items["1.1"]["value"] == started.count() == 2
    assert "1 kept" in items["1.1"]["detail"] and "1 excluded" in items["1.1"]["detail"]
    assert "1 screened out" in items["1.1"]["detail"]
    assert items["1.2"]["value"] == len(per_unit) == 3
    assert items["1.3"]["value"] == pytest.approx(statistics.mean(per_unit.values()))
    assert items["1.4"]["value"] == plan.items_per_tester == kept_trials.count()
    assert items["1.2.1"]["value"] == "simple random" and "seed 5" in items["1.2.1"]["detail"]
    assert items["3.1"]["value"] == plan.items_per_tester + plan.catch_count
    assert items["3.1.1"]["answer"] == "Yes"
    assert items["0.8"]["value"] == plan.dataset.item_count

    # Quality control: the qualification screened carol out, the catch rule excluded bob.
    assert items["2.3"]["answer"] == "Yes" and items["2.3.2"]["value"] == 1
    assert "1 of 3 who practised" in items["2.3.2"]["detail"]
    assert items["3.2.2"]["value"] == pytest.approx(0.5)
    assert "1 of 2 measured testers excluded" in items["3.2.2"]["detail"]
    assert "failed catch trials: 1" in items["3.2.2"]["detail"]
    assert "before the first tester started" in items["3.2"]["detail"]
    facts = report["facts"]
    assert facts["exclusions"]["rate"] == exclusions.plan_quality(plan)["current"]["exclusion_rate"]
    assert facts["baseliners"] == {
        **facts["baseliners"],
        "measured": 2,
        "kept": 1,
        "excluded": 1,
        "screened_out": 1,
    }

    # Pay: the study's rule, in words.
    rule_text = checklist.pay_rule_text(rule_of(Study.objects.get(plan=plan)))
    assert rule_text == (
        "GBP 2.50 base pay for finishing the study; bonus GBP 0.10 per correct test trial plus GBP 1.00 "
        "at an accuracy of at least 80%, capped at GBP 2.00"
    )
    assert items["2.7.2"]["answer"] == "Yes" and items["2.7.2"]["detail"] == rule_text
    assert items["2.7.1"]["value"] == "GBP 2.50"
    assert items["2.6"]["answer"] == "Yes" and "1 item" in items["2.6"]["detail"]

    # Analysis: as the comparison does it, and the same metric code.
    assert "McNemar" in items["4.1.1"]["detail"] and "Holm" in items["4.1.1"]["detail"]
    assert "bootstrap" in items["4.1.1"]["detail"]
    assert "Wilson" in items["4.2"]["detail"]
    assert all(items[number]["answer"] == "Yes" for number in ("4.3", "4.4", "4.5"))
    assert items["4.6"]["answer"] == "Yes"  # with and without the exclusion: both accuracies given
    assert "accuracy with the exclusions 1.000" in items["4.6"]["detail"]


def test_the_minimum_detectable_effect_inverts_the_sample_size_formula(ran):
    report = checklist.build_report(ran)
    mde = report["facts"]["mde"]
    assert mde["units"] == 3 and mde["power"] == 0.8 and mde["alpha"] == 0.05
    if mde["gap"] is not None:
        assert paired_sample_size(mde["accuracy"], mde["model_accuracy"]) <= mde["units"]
    for units, accuracy in ((400, 0.8), (1000, 0.6), (60, 0.9)):
        found = checklist.minimum_detectable_effect(units, accuracy)
        gap = found["gap"]
        assert paired_sample_size(accuracy, found["model_accuracy"]) <= units
        smaller = round(gap - 0.001, 3)
        for model in (accuracy - smaller, accuracy + smaller):
            if 0 <= model <= 1:
                assert paired_sample_size(accuracy, model) > units  # no smaller gap is detectable
    assert checklist.minimum_detectable_effect(0, None)["gap"] is None


def test_answers_from_the_form_appear_and_unanswered_ones_say_unknown(ran, rita, client):
    logged_in(client, rita)
    page = client.get(f"/test/plans/{ran.pk}/report/")
    assert page.status_code == 200
    html = page.content.decode()
    for name in checklist.FORM_FIELDS:
        assert f'name="{name}"' in html, name  # every question is on the form
    before = by_id(page.context["report"])
    assert before["1.9"]["answer"] == "Unknown/Unreported" and before["1.9"]["source"] == "form"
    assert before["0.1"]["answer"] == "Unknown/Unreported"

    response = client.post(
        f"/test/plans/{ran.pk}/report/",
        {
            "updated_at": "",
            "paper_title": "People versus models on TRANCE",
            "paper_year": "2026",
            "ethics_review": "Yes",
            "ethics_detail": "IRB-2025-17 (exempt)",
            "authors_as_baseliners": "No",
            "population": "Adults fluent in English",
            "population_factors": ["Language", "Age"],
            "preregistration_link": "https://osf.io/abcd1/",
            "code_link": "https://github.com/example/analysis",
        },
    )
    assert response.status_code == 302
    stored = ReportAnswers.objects.get(plan=ran)
    assert stored.updated_by == rita and stored.answers["paper_year"] == 2026

    items = by_id(checklist.build_report(ran))
    assert items["0.1"]["value"] == "People versus models on TRANCE" and items["0.1"]["source"] == "form"
    assert items["0.3"]["value"] == 2026
    assert items["1.9"]["answer"] == "Yes" and items["1.9"]["detail"] == "IRB-2025-17 (exempt)"
    assert items["2.4"]["answer"] == "No"
    assert items["2.1"]["answer"] == "Yes" and items["2.1"]["detail"] == "Adults fluent in English"
    assert items["2.1.1"]["value"] == "Language, Age"
    assert items["1.10"]["value"] == "https://osf.io/abcd1/"
    assert items["5.4"]["value"] == "https://github.com/example/analysis"
    for number in ("0.2", "0.4", "1.6", "1.8", "2.5", "3.6", "5.1.1", "5.2", "5.3"):
        assert items[number]["answer"] == "Unknown/Unreported", number
        assert items[number]["source"] == "form"


# --- downloads -------------------------------------------------------------------------------------


def test_the_downloads_have_their_type_name_and_content(ran, rita, client):
    logged_in(client, rita)
    page = client.get(f"/test/plans/{ran.pk}/report/").content.decode()
    for anchor in ('id="report"', 'id="download-markdown"', 'id="download-latex"', 'id="download-json"',
                   'id="preregister"'):  # fmt: skip
        assert anchor in page
    expected = {
        "md": "text/markdown; charset=utf-8",
        "tex": "application/x-tex; charset=utf-8",
        "json": "application/json; charset=utf-8",
    }
    for fmt, content_type in expected.items():
        response = client.get(f"/test/plans/{ran.pk}/report.{fmt}")
        assert response.status_code == 200
        assert response["Content-Type"] == content_type
        assert (
            response["Content-Disposition"]
            == f'attachment; filename="plan-{ran.pk}-human-baseline-report.{fmt}"'
        )
        assert f'href="/test/plans/{ran.pk}/report.{fmt}"' in page
    markdown = client.get(f"/test/plans/{ran.pk}/report.md").content.decode()
    assert markdown.startswith("# Human baseline report: Event baseline")
    assert "## 1. Baseline design and implementation" in markdown
    assert re.search(r"^\| 1\.1 \| Number of baseliners \| 2 \|", markdown, re.M)
    data = json.loads(client.get(f"/test/plans/{ran.pk}/report.json").content)
    assert by_id(data)["1.4"]["value"] == 3 and data["plan"]["id"] == ran.pk
    latex = client.get(f"/test/plans/{ran.pk}/report.tex").content.decode()
    assert latex.count("\\begin{longtable}") == latex.count("\\end{longtable}") == 6
    assert "\\section*{Human baseline report: Event baseline}" in latex
    for fmt, content_type in (("md", expected["md"]), ("json", expected["json"])):
        response = client.get(f"/test/plans/{ran.pk}/preregistration.{fmt}")
        assert response.status_code == 200 and response["Content-Type"] == content_type
        assert (
            response["Content-Disposition"] == f'attachment; filename="plan-{ran.pk}-preregistration.{fmt}"'
        )
    design = json.loads(client.get(f"/test/plans/{ran.pk}/preregistration.json").content)
    assert (
        design["design"]["items_per_tester"] == 3
        and design["design"]["exclusion_rules"]["catch_failures"] == 1
    )
    assert "accuracy" not in json.dumps(design["design"]).lower().replace("accuracy difference", "")
    assert client.get(f"/test/plans/{ran.pk}/report.pdf").status_code == 404


def test_latex_escapes_every_special_character(ran):
    hostile = "A&B_C%D$E#F{G}H~I^J\\K"
    TestPlan.objects.filter(pk=ran.pk).update(name=f"Plan {hostile}")
    ran.refresh_from_db()
    ReportAnswers.objects.create(
        plan=ran, answers={"paper_title": hostile, "population": "line one\nline two"}
    )
    latex = checklist.as_latex(checklist.build_report(ran))
    escaped = r"A\&B\_C\%D\$E\#F\{G\}H\textasciitilde{}I\textasciicircum{}J\textbackslash{}K"
    assert f"\\section*{{Human baseline report: Plan {escaped}}}" in latex
    assert f"Paper title & {escaped} & " in latex
    assert r"line one \newline line two" in latex
    # Outside of commands, no special character is left raw in any table row.
    for line in latex.splitlines():
        if line.startswith(("%", "\\textbf")) or not line.endswith("\\\\"):
            continue
        body = re.sub(r"\\[A-Za-z]+(\{\})?|\\[&%$#_{}]|\\\\|\$\\[a-z]+\$", "", line)
        assert not re.search(r"[%$#_{}~^\\]", body.replace(" & ", " ")), line
    assert checklist.latex_escape("x → y ≥ 2") == r"x $\rightarrow$ y $\geq$ 2"


# --- the pre-registration ----------------------------------------------------------------------------


def test_a_preregistration_before_data_then_a_changed_design_is_reported_as_differing(plan, rita, client):
    logged_in(client, rita)
    response = client.post(f"/test/plans/{plan.pk}/preregistration/")
    assert response.status_code == 302 and response["Location"].endswith("#preregistration")
    registered = Preregistration.objects.get(plan=plan)
    assert registered.created_by == rita and registered.design["items_per_tester"] == 3
    assert "accuracy" not in registered.design

    report = checklist.build_report(plan)
    assert report["preregistration"]["matched"] is True and report["preregistration"]["summary"] == "matched"
    assert by_id(report)["1.10"]["answer"] == "Yes" and "matched" in by_id(report)["1.10"]["detail"]

    alice = make_user("alice", "tester")
    plan.testers.add(alice)
    take_test(plan, alice, right=True)  # the first tester starts after the registration
    TestPlan.objects.filter(pk=plan.pk).update(items_per_tester=5)
    plan.refresh_from_db()
    exclusions.save_rules(plan, {"catch_failures": 2}, user=rita)  # a new version, after data

    prereg = checklist.build_report(plan)["preregistration"]
    assert prereg["before_data"] is True and prereg["matched"] is False
    texts = [difference["text"] for difference in prereg["differences"]]
    assert "items_per_tester 3 → 5" in texts
    assert "exclusion_rules.catch_failures 1 → 2" in texts
    assert prereg["summary"] == "differs: " + "; ".join(texts)
    page = client.get(f"/test/plans/{plan.pk}/report/").content.decode()
    assert "items_per_tester 3 → 5" in page and "differs" in page


def test_a_preregistration_recorded_after_data_says_so(ran, rita, client):
    logged_in(client, rita)
    assert client.post(f"/test/plans/{ran.pk}/preregistration/").status_code == 302
    prereg = checklist.build_report(ran)["preregistration"]
    assert prereg["before_data"] is False and prereg["matched"] is True
    item = by_id(checklist.build_report(ran))["1.10"]
    assert item["answer"] == "Partial" and "after the first tester started" in item["detail"]


# --- who may read and change -------------------------------------------------------------------------


def test_only_the_plans_maker_saves_the_form_or_records_a_preregistration(ran, client):
    rex = make_user("rex", "researcher")
    tess = make_user("tess", "tester")
    logged_in(client, rex)
    page = client.get(f"/test/plans/{ran.pk}/report/")
    assert page.status_code == 200 and page.context["may_change"] is False
    html = page.content.decode()
    assert 'id="save-answers"' not in html and 'id="preregister"' not in html and "disabled" in html
    assert client.post(f"/test/plans/{ran.pk}/report/", {"paper_title": "Mine"}).status_code == 403
    assert client.post(f"/test/plans/{ran.pk}/preregistration/").status_code == 403
    assert not ReportAnswers.objects.filter(plan=ran).exists()
    assert not Preregistration.objects.filter(plan=ran).exists()
    assert client.get(f"/test/plans/{ran.pk}/report.md").status_code == 200  # reading is for researchers

    client.logout()
    logged_in(client, tess)
    for url in (f"/test/plans/{ran.pk}/report/", f"/test/plans/{ran.pk}/report.json",
                f"/test/plans/{ran.pk}/preregistration.md"):  # fmt: skip
        assert client.get(url).status_code in (403, 404), url
    assert client.post(f"/test/plans/{ran.pk}/report/", {"paper_title": "x"}).status_code in (403, 404)
    assert client.post(f"/test/plans/{ran.pk}/preregistration/").status_code in (403, 404)
    assert not ReportAnswers.objects.filter(plan=ran).exists()

    admin = make_user("ada", "admin")
    client.logout()
    logged_in(client, admin)
    assert client.post(f"/test/plans/{ran.pk}/report/", {"paper_venue": "ICML"}).status_code == 302


def test_the_api_gives_the_report_to_researchers(ran, rita):
    api = APIClient()
    api.force_authenticate(rita)
    response = api.get(f"/api/v1/test-plans/{ran.pk}/report/")
    assert response.status_code == 200
    assert by_id(response.json())["1.1"]["value"] == 2
    tester = APIClient()
    tester.force_authenticate(make_user("tess", "tester"))
    assert tester.get(f"/api/v1/test-plans/{ran.pk}/report/").status_code == 403


# --- hostile and stale input --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("paper_title", "Two\nlines"),
        ("paper_venue", "tab\there"),
        ("ethics_detail", "IRB\r\n12"),
        ("population", "nul \x00 inside"),
        ("paper_link", "javascript:alert(1)"),
        ("code_link", "data:text/html,<script>alert(1)</script>"),
        ("materials_link", "https://example.org/\nx"),
        ("paper_year", "20x6"),
        ("ethics_review", "Maybe"),
    ],
)
def test_hostile_form_input_is_refused_naming_the_field_and_changes_nothing(ran, rita, client, field, value):
    logged_in(client, rita)
    assert client.post(f"/test/plans/{ran.pk}/report/", {"paper_venue": "ICML"}).status_code == 302
    before = ReportAnswers.objects.get(plan=ran)
    response = client.post(
        f"/test/plans/{ran.pk}/report/",
        {"updated_at": before.updated_at.isoformat(), "paper_venue": "NeurIPS", field: value},
    )
    assert response.status_code == 400
    problems = response.context["problems"]
    assert [problem["field"] for problem in problems] == [field]
    assert f'data-field="{field}"' in response.content.decode()
    after = ReportAnswers.objects.get(plan=ran)
    assert (
        after.answers == before.answers == {"paper_venue": "ICML"} and after.updated_at == before.updated_at
    )


def test_a_save_from_a_page_older_than_the_stored_answers_is_refused(ran, rita, client):
    logged_in(client, rita)
    opened = client.get(f"/test/plans/{ran.pk}/report/").context["form"].initial["updated_at"]
    assert opened == ""
    assert (
        client.post(
            f"/test/plans/{ran.pk}/report/", {"updated_at": opened, "paper_venue": "ICML"}
        ).status_code
        == 302
    )
    saved = ReportAnswers.objects.get(plan=ran)
    # A second page opened before that save sends the old value: refused, nothing changes.
    response = client.post(f"/test/plans/{ran.pk}/report/", {"updated_at": opened, "paper_venue": "NeurIPS"})
    assert response.status_code == 409
    assert "after this page was opened" in response.content.decode()
    assert ReportAnswers.objects.get(plan=ran).answers == {"paper_venue": "ICML"}
    # From a page opened after it: saved.
    fresh = client.get(f"/test/plans/{ran.pk}/report/").context["form"].initial["updated_at"]
    assert fresh == saved.updated_at.isoformat()
    assert (
        client.post(
            f"/test/plans/{ran.pk}/report/", {"updated_at": fresh, "paper_venue": "NeurIPS"}
        ).status_code
        == 302
    )
    assert ReportAnswers.objects.get(plan=ran).answers == {"paper_venue": "NeurIPS"}


def test_a_plan_without_data_study_or_rules_says_what_is_unknown(trance_dataset, rita):
    plan = TestPlan.objects.create(dataset=trance_dataset, name="Empty", setting="event", created_by=rita)
    report = checklist.build_report(plan)
    items = by_id(report)
    assert items["1.1"]["answer"] == "Unknown/Unreported" and items["1.1"]["value"] == 0
    assert items["2.7"]["answer"] == "Unknown/Unreported" and "no study" in items["2.7"]["detail"]
    assert items["3.2"]["answer"] == "No" and items["3.2.2"]["answer"] == "N/A"
    assert items["1.8.1"]["answer"] == "Unknown/Unreported"
    assert items["2.6"]["answer"] == "No"
    assert report["preregistration"]["recorded"] == []
    json.loads(checklist.as_json(report))  # plain JSON, nothing left for a default to guess
    assert checklist.as_markdown(report).count("| # | Item | Answer | Detail | Source |") == 6
