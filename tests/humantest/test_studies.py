"""Studies: participants arriving by an entry link, resuming, refused, consenting, finishing with
the platform's code, kept to their study; progress and payments (issue 26)."""

from __future__ import annotations

import csv
import io
from datetime import timedelta
from decimal import Decimal

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.utils import timezone

from humantest import answers, clock, payments, sessions, studies
from humantest.models import EntryLink, Participant, Payment, Study, TestPlan, TestSession, Trial
from tests.factories import make_user

pytestmark = pytest.mark.django_db
PROLIFIC = {"PROLIFIC_PID": "5f0a1b2c3d4e5f6a7b8c9d0e", "STUDY_ID": "study-1", "SESSION_ID": "attempt-1"}
COMPLETE = "https://app.prolific.com/submissions/complete?cc=C1A2B3"


@pytest.fixture
def plan(cric_files, db):
    from benchmarks.services import import_dataset

    cric = import_dataset(
        benchmark="cric",
        data=cric_files.questions.read_bytes(),
        name="cric",
        images_dir=cric_files.images_dir,
        scenes_data=cric_files.scene_graphs.read_bytes(),
    )
    rita = make_user("rita", "researcher")
    practice = cric.items.order_by("position").first().external_id
    plan = TestPlan.objects.create(
        name="Pilot", dataset=cric, items_per_tester=3, seed=2, practice_items=[practice], created_by=rita
    )
    studies.update_study(
        plan,
        consent_text="# Consent\n\nYou answer **three** questions. <script>alert(1)</script>",
        completion_code="C1A2B3",
        completion_url=COMPLETE,
        no_consent_code="NOCONS",
        no_consent_url="https://app.prolific.com/submissions/complete?cc=NOCONS",
        base_pay="1.50",
        bonus_per_correct="0.10",
        bonus_threshold=0.5,
        bonus_above="0.25",
        bonus_cap="0.40",
    )
    return plan


def link_of(plan, platform=EntryLink.Platform.PROLIFIC, **options) -> EntryLink:
    return studies.open_link(plan, platform, created_by=plan.created_by, **options)


def arrive(client: Client, link: EntryLink, query: dict):
    return client.get(f"/join/{link.token}/", query)


def right(trial) -> dict:
    """The right answer to a CRIC trial: the answer, and the object it is grounded on."""
    truth = trial.item.ground_truth
    return {"answer": truth["answer"], "object": (truth.get("target") or [None])[0]}


def answer_everything(participant: Participant) -> None:
    session = sessions.begin_test(TestSession.objects.get(pk=participant.session_id))
    while (trial := clock.serve_current_trial(session)[0]) is not None:
        answers.record_answer(trial.pk, participant.user, right(trial), {})


def test_a_prolific_participant_consents_takes_the_test_and_returns_with_the_code(plan, client):
    link = link_of(plan)
    response = arrive(client, link, PROLIFIC)
    participant = Participant.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/test/sessions/{participant.session_id}/"
    assert participant.external_id == PROLIFIC["PROLIFIC_PID"] and participant.attempt_id == "attempt-1"
    assert participant.platform_study == "study-1" and participant.status == Participant.Status.ARRIVED
    # Consent comes first; its Markdown is shown without raw HTML; nothing starts before it.
    page = client.get(response["Location"])
    text = page.content.decode()
    assert 'id="consent"' in text and "<strong>three</strong>" in text and "<script>alert" not in text
    assert client.post(f"/test/sessions/{participant.session_id}/begin/").status_code == 302
    assert TestSession.objects.get(pk=participant.session_id).status == TestSession.Status.BRIEF
    client.post(f"/test/sessions/{participant.session_id}/consent/", {"action": "accept", "version": 1})
    session = TestSession.objects.get(pk=participant.session_id)
    assert session.consented_at is not None and session.consent_version == 1
    participant.refresh_from_db()
    assert participant.status == Participant.Status.CONSENTED
    brief = client.get(f"/test/sessions/{session.pk}/").content.decode()
    assert participant.resume_code in brief and 'id="practice"' in brief
    # Practise, then the test; the code appears only once every answer is stored.
    client.post(f"/test/sessions/{session.pk}/practice/")
    trial_page = client.get(f"/test/sessions/{session.pk}/").content.decode()
    assert "C1A2B3" not in trial_page
    client.post(f"/test/sessions/{session.pk}/begin/")
    served = []
    while True:
        session.refresh_from_db()
        trial = clock.serve_current_trial(session)[0]
        if trial is None:
            break
        assert "C1A2B3" not in client.get(f"/test/sessions/{session.pk}/").content.decode()
        served.append(trial.pk)
        response = client.post(
            f"/test/trials/{trial.pk}/answer/",
            {"answer": right(trial)},
            content_type="application/json",
        )
        assert response.status_code == 200
    ended = client.get(f"/test/sessions/{session.pk}/")
    text = ended.content.decode()
    assert 'data-kind="completed"' in text and "C1A2B3" in text
    assert f"url={COMPLETE.replace('&', '&amp;')}" in text and f'href="{COMPLETE}"' in text
    participant.refresh_from_db()
    assert participant.status == Participant.Status.FINISHED and participant.code_shown_at is not None
    assert Trial.objects.filter(session=session, phase="test", status="answered").count() == len(served) == 3
    # Arriving again is the same study, ended: never a second one.
    again = arrive(client, link, PROLIFIC)
    assert again["Location"] == f"/test/sessions/{session.pk}/"
    assert Participant.objects.count() == 1 and TestSession.objects.count() == 1


def test_the_same_id_resumes_in_its_browser_with_its_attempt_or_its_code_and_nowhere_else(plan):
    link = link_of(plan)
    first = Client()
    arrive(first, link, PROLIFIC)
    participant = Participant.objects.get()
    assert arrive(first, link, PROLIFIC)["Location"] == f"/test/sessions/{participant.session_id}/"
    # Another browser with the attempt's SESSION_ID (Prolific gives it again): the same session.
    second = Client()
    assert arrive(second, link, PROLIFIC)["Location"] == f"/test/sessions/{participant.session_id}/"
    # Another browser with only the (public) participant id: refused, asked for the resume code.
    stranger = Client()
    refused = arrive(stranger, link, {**PROLIFIC, "SESSION_ID": "guessed"})
    assert refused.status_code == 403 and 'id="join-resume"' in refused.content.decode()
    assert stranger.get(f"/test/sessions/{participant.session_id}/").status_code == 302  # not logged in
    wrong = stranger.post(
        f"/join/{link.token}/?{'&'.join(f'{k}={v}' for k, v in {**PROLIFIC, 'SESSION_ID': 'x'}.items())}",
        {"resume_code": "WRONG123"},
    )
    assert wrong.status_code == 403 and 'id="resume-wrong"' in wrong.content.decode()
    query = "&".join(f"{k}={v}" for k, v in {**PROLIFIC, "SESSION_ID": "x"}.items())
    resumed = stranger.post(f"/join/{link.token}/?{query}", {"resume_code": participant.resume_code.lower()})
    assert resumed["Location"] == f"/test/sessions/{participant.session_id}/"
    assert (
        Participant.objects.count() == 1
        and get_user_model().objects.filter(groups__name="participant").count() == 1
    )


@pytest.mark.parametrize(
    ("change", "query", "code"),
    [
        ({"closes_at": timezone.now() - timedelta(minutes=1)}, PROLIFIC, "closed"),
        ({"opens_at": timezone.now() + timedelta(hours=1)}, PROLIFIC, "not_open"),
        ({}, {"STUDY_ID": "s"}, "missing_id"),
    ],
)
def test_a_closed_not_yet_open_or_idless_arrival_is_refused_and_creates_nothing(
    plan, client, change, query, code
):
    if change:
        studies.update_study(plan, **change)
    link = link_of(plan)
    users = get_user_model().objects.count()
    response = arrive(client, link, query)
    assert response.status_code in (400, 403) and f'data-code="{code}"' in response.content.decode()
    assert not Participant.objects.exists() and not TestSession.objects.exists()
    assert get_user_model().objects.count() == users


def test_a_full_study_a_revoked_link_and_an_id_off_the_lab_list_are_refused(plan):
    studies.update_study(plan, participant_cap=1)
    link = link_of(plan)
    assert arrive(Client(), link, PROLIFIC).status_code == 302
    full = arrive(Client(), link, {**PROLIFIC, "PROLIFIC_PID": "another", "SESSION_ID": "a2"})
    assert full.status_code == 403 and 'data-code="full"' in full.content.decode()
    studies.revoke_link(link)
    assert arrive(Client(), link, PROLIFIC).status_code == 404
    lab = link_of(plan, EntryLink.Platform.LAB, lab_ids="P001\nP002")
    studies.update_study(plan, participant_cap=None)
    unknown = arrive(Client(), lab, {"participant": "P999"})
    assert unknown.status_code == 403 and 'data-code="unknown_id"' in unknown.content.decode()
    assert arrive(Client(), lab, {"participant": "P002"}).status_code == 302
    assert sorted(Participant.objects.values_list("external_id", flat=True)) == [
        PROLIFIC["PROLIFIC_PID"],
        "P002",
    ]


def test_a_participant_who_returns_the_study_frees_the_place_and_may_come_back_if_one_is_left(plan):
    studies.update_study(plan, participant_cap=1, idle_limit_s=60)
    link = link_of(plan)
    browser = Client()
    arrive(browser, link, PROLIFIC)
    Participant.objects.update(last_seen_at=timezone.now() - timedelta(minutes=5))
    assert studies.progress(plan)["returned"] == 1
    assert arrive(Client(), link, {**PROLIFIC, "PROLIFIC_PID": "next", "SESSION_ID": "n"}).status_code == 302
    # The first one comes back: the only place is taken now.
    back = arrive(browser, link, PROLIFIC)
    assert back.status_code == 403 and 'data-code="full"' in back.content.decode()


def test_declining_consent_ends_the_study_with_the_no_consent_code(plan, client):
    link = link_of(plan)
    arrive(client, link, PROLIFIC)
    participant = Participant.objects.get()
    client.post(f"/test/sessions/{participant.session_id}/consent/", {"action": "decline"})
    page = client.get(f"/test/sessions/{participant.session_id}/").content.decode()
    assert 'data-kind="no_consent"' in page and "NOCONS" in page
    participant.refresh_from_db()
    assert participant.status == Participant.Status.DECLINED
    client.post(f"/test/sessions/{participant.session_id}/begin/")
    assert not Trial.objects.filter(session_id=participant.session_id, status="served").exists()
    assert TestSession.objects.get().status == TestSession.Status.BRIEF


def test_a_consent_text_changed_while_it_was_read_is_shown_again(plan, client):
    link = link_of(plan)
    arrive(client, link, PROLIFIC)
    participant = Participant.objects.get()
    studies.update_study(plan, consent_text="A new text.")
    client.post(f"/test/sessions/{participant.session_id}/consent/", {"action": "accept", "version": 1})
    assert TestSession.objects.get().consented_at is None
    page = client.get(f"/test/sessions/{participant.session_id}/").content.decode()
    assert "A new text." in page and 'data-version="2"' in page
    assert [text.version for text in Study.objects.get(plan=plan).consent_texts.all()] == [1, 2]


def test_an_mturk_preview_shows_the_brief_only_and_the_hit_is_submitted_to_mturk(plan, client):
    link = link_of(plan, EntryLink.Platform.MTURK)
    preview = arrive(client, link, {"assignmentId": studies.MTURK_PREVIEW, "hitId": "H1"})
    assert preview.status_code == 200 and 'id="preview-note"' in preview.content.decode()
    assert (
        "frame-ancestors https://www.mturk.com https://workersandbox.mturk.com"
        in preview["Content-Security-Policy"]
    )
    assert "X-Frame-Options" not in preview
    assert not Participant.objects.exists()
    query = {
        "workerId": "W1",
        "assignmentId": "A1",
        "hitId": "H1",
        "turkSubmitTo": "https://workersandbox.mturk.com",
    }
    landing = arrive(client, link, query)
    assert 'id="open-study"' in landing.content.decode() and not Participant.objects.exists()
    opened = arrive(client, link, {**query, "open": "1"})
    assert opened.status_code == 302 and opened.get("X-Frame-Options") == "DENY"
    participant = Participant.objects.get()
    assert participant.return_to == "https://workersandbox.mturk.com"
    client.post(f"/test/sessions/{participant.session_id}/consent/", {"action": "accept", "version": 1})
    session = TestSession.objects.get()
    sessions_begin = client.post(f"/test/sessions/{session.pk}/begin/")
    assert sessions_begin.status_code == 302
    answer_everything(participant)
    ended = client.get(f"/test/sessions/{session.pk}/")
    text = ended.content.decode()
    assert 'action="https://workersandbox.mturk.com/mturk/externalSubmit"' in text
    assert 'name="assignmentId" value="A1"' in text and 'value="C1A2B3"' in text
    assert "form-action 'self' https://workersandbox.mturk.com" in ended["Content-Security-Policy"]


def test_a_forged_turk_submit_address_is_not_taken(plan, client):
    link = link_of(plan, EntryLink.Platform.MTURK)
    query = {
        "workerId": "W2",
        "assignmentId": "A2",
        "hitId": "H1",
        "turkSubmitTo": "https://evil.example",
        "open": "1",
    }
    arrive(client, link, query)
    assert Participant.objects.get().return_to == ""


def test_a_participant_opens_their_study_and_nothing_else(plan, client):
    link = link_of(plan)
    arrive(client, link, PROLIFIC)
    participant = Participant.objects.get()
    home = f"/test/sessions/{participant.session_id}/"
    for url in (
        "/",
        "/datasets/",
        "/test/",
        "/test/history/",
        "/annotate/",
        "/api/v1/",
        "/admin/",
        "/models/",
    ):
        response = client.get(url)
        assert response.status_code == 302 and response["Location"] == home, url
    assert client.post("/test/plans/new/", {}).status_code == 403
    assert client.post("/accounts/logout/").status_code == 302
    assert client.get("/datasets/").status_code == 302  # logged out now: the usual log-in redirect
    assert "/accounts/login/" in client.get("/datasets/")["Location"]


def test_payments_follow_the_rule_and_nobody_is_paid_twice(plan):
    link = link_of(plan)
    people = []
    for index in range(3):
        browser = Client()
        arrive(browser, link, {"PROLIFIC_PID": f"P{index}", "SESSION_ID": f"S{index}", "STUDY_ID": "s"})
        person = Participant.objects.get(external_id=f"P{index}")
        studies.give_consent(person.session, 1)
        people.append(person)
    answer_everything(people[0])  # every answer right: 3 of 3
    session = sessions.begin_test(people[1].session)
    for position, trial in enumerate(iter(lambda: clock.serve_current_trial(session)[0], None)):
        answer = right(trial) if position == 0 else {"answer": "surely wrong", "object": None}
        answers.record_answer(trial.pk, people[1].user, answer, {})
    study = Study.objects.get(plan=plan)
    assert payments.bonus_for(3, 3, study) == Decimal("0.40")  # 0.30 + 0.25, capped at 0.40
    assert payments.bonus_for(1, 3, study) == Decimal("0.10")  # below the threshold
    first = payments.new_batch(plan, created_by=plan.created_by)
    assert first.number == 1 and first.payments.count() == 2
    assert payments.new_batch(plan) is None  # nobody new: no empty batch
    answer_everything(people[2])
    second = payments.new_batch(plan)
    assert second.number == 2 and [p.participant.external_id for p in second.payments.all()] == ["P2"]
    assert Payment.objects.count() == 3
    assert payments.batch_csv(first, "prolific") == "P0,0.40\nP1,0.10\n"
    assert payments.batch_csv(first, "prolific") == payments.batch_csv(first, "prolific")
    rows = list(csv.DictReader(io.StringIO(payments.batch_csv(first, "full"))))
    assert [
        (row["participant_id"], row["base"], row["bonus"], row["total"], row["correct"]) for row in rows
    ] == [
        ("P0", "1.50", "0.40", "1.90", "3"),
        ("P1", "1.50", "0.10", "1.60", "1"),
    ]
    researcher = Client()
    researcher.force_login(plan.created_by)
    download = researcher.get(f"/test/plans/{plan.pk}/payments/1.prolific.csv")
    assert download.status_code == 200 and download.content.decode() == "P0,0.40\nP1,0.10\n"
    assert 'filename="plan-' in download["Content-Disposition"]
    # The plan's results and trials name participants by their platform id, not their account.
    trials = list(
        csv.DictReader(io.StringIO(researcher.get(f"/test/plans/{plan.pk}/trials.csv").content.decode()))
    )
    assert {(row["tester"], row["platform"]) for row in trials} == {
        ("P0", "prolific"),
        ("P1", "prolific"),
        ("P2", "prolific"),
    }
    assert "P0" in researcher.get(f"/test/plans/{plan.pk}/").content.decode()


def test_mturk_bonuses_name_the_worker_and_the_assignment(plan, client):
    link = link_of(plan, EntryLink.Platform.MTURK)
    query = {
        "workerId": "W9",
        "assignmentId": "A9",
        "hitId": "H",
        "turkSubmitTo": "https://www.mturk.com",
        "open": "1",
    }
    arrive(client, link, query)
    person = Participant.objects.get()
    studies.give_consent(person.session, 1)
    answer_everything(person)
    batch = payments.new_batch(plan)
    assert payments.batch_csv(batch, "mturk").splitlines() == [
        "WorkerId,AssignmentId,BonusAmount,Reason",
        "W9,A9,0.40,3 of 3 correct in Pilot",
    ]


def test_the_study_page_opens_links_saves_settings_and_shows_progress_to_its_owner(plan):
    researcher = Client()
    researcher.force_login(plan.created_by)
    page = researcher.get(f"/test/plans/{plan.pk}/study/")
    assert page.status_code == 200 and "No open link" in page.content.decode()
    researcher.post(f"/test/plans/{plan.pk}/study/", {"action": "open", "platform": "prolific"})
    link = EntryLink.objects.get()
    page = researcher.get(f"/test/plans/{plan.pk}/study/").content.decode()
    assert f"/join/{link.token}/?PROLIFIC_PID={{{{%PROLIFIC_PID%}}}}" in page
    refused = researcher.post(
        f"/test/plans/{plan.pk}/study/", {"action": "settings", "completion_url": "javascript:alert(1)"}
    )
    assert refused.status_code == 400 and "completion_url" in refused.content.decode()
    saved = researcher.post(
        f"/test/plans/{plan.pk}/study/", {"action": "settings", "participant_cap": "40", "currency": "usd"}
    )
    assert saved.status_code == 302
    study = Study.objects.get(plan=plan)
    assert study.participant_cap == 40 and study.currency == "USD"
    # Another researcher reads it, and changes nothing.
    other = Client()
    other.force_login(make_user("rex", "researcher"))
    assert other.get(f"/test/plans/{plan.pk}/study/").status_code == 200
    assert (
        other.post(
            f"/test/plans/{plan.pk}/study/", {"action": "open", "platform": "lab", "lab_ids": "x"}
        ).status_code
        == 403
    )
    assert EntryLink.objects.count() == 1


def test_testers_are_invited_by_a_list_new_ones_log_in_once_by_their_link_and_can_be_removed(plan):
    researcher = Client()
    researcher.force_login(plan.created_by)
    old = make_user("olga", "tester")
    refused = researcher.post(
        f"/test/plans/{plan.pk}/testers/", {"people": "ok@example.org\nnot an address@\n"}
    )
    assert refused.status_code == 400 and "line 2" in refused.content.decode()
    assert not plan.testers.exists() and not get_user_model().objects.filter(email="ok@example.org").exists()
    upload = io.BytesIO(b"email\nAnna@Example.org\nben@example.org\n")
    upload.name = "people.csv"
    response = researcher.post(f"/test/plans/{plan.pk}/testers/", {"people": "olga\nnewbie", "file": upload})
    assert response.status_code == 200
    assert sorted(plan.testers.values_list("username", flat=True)) == ["anna", "ben", "newbie", "olga"]
    anna = get_user_model().objects.get(email="anna@example.org")
    assert anna.groups.filter(name="tester").exists() and not anna.has_usable_password()
    page = response.content.decode()
    links = [
        line.split('<code class="name">')[1].split("</code>")[0]
        for line in page.splitlines()
        if "/accounts/welcome/" in line
    ]
    assert len(links) == 3  # the three new accounts; olga signs in as usual
    # A new tester's link lets them choose a password once, and signs them in.
    newcomer = Client()
    link = next(link for link in links if f"/{anna.pk}/".encode() and "welcome" in link)
    first = newcomer.get(link, follow=True)
    assert first.status_code == 200 and 'id="welcome"' in first.content.decode()
    form_url = first.redirect_chain[-1][0] if first.redirect_chain else link
    done = newcomer.post(
        form_url, {"new_password1": "a-long-new-password-7", "new_password2": "a-long-new-password-7"}
    )
    assert done.status_code == 302
    assert newcomer.get("/test/").status_code == 200
    used = Client().get(link, follow=True)
    assert "This link is used up" in used.content.decode()
    # Removed while the plan runs: their session no longer opens.
    session = sessions.start_session(plan, old)
    olga = Client()
    olga.force_login(old)
    assert olga.get(f"/test/sessions/{session.pk}/").status_code == 200
    researcher.post(f"/test/plans/{plan.pk}/testers/", {"action": "remove", "tester": ["olga"]})
    assert not plan.testers.filter(username="olga").exists()
    assert olga.get(f"/test/sessions/{session.pk}/").status_code == 403
    assert TestSession.objects.filter(pk=session.pk).exists()  # what she did is kept


def test_a_study_is_run_over_the_api(plan, client):
    from rest_framework.test import APIClient

    api = APIClient()
    api.force_authenticate(plan.created_by)
    base = f"/api/v1/test-plans/{plan.pk}"
    refused = api.patch(f"{base}/study/", {"completion_url": "ftp://x", "participant_cap": 0}, format="json")
    assert refused.status_code == 400 and "participant_cap" in refused.json()
    settings = api.patch(
        f"{base}/study/", {"participant_cap": 5, "completion_code": "API123"}, format="json"
    ).json()
    assert (
        settings["participant_cap"] == 5
        and settings["completion_code"] == "API123"
        and settings["consent_version"] == 1
    )
    links = api.post(f"{base}/links/", {"platform": "prolific"}, format="json").json()
    assert len(links) == 1 and links[0]["url"].endswith(f"/join/{EntryLink.objects.get().token}/")
    assert api.post(f"{base}/links/", {"platform": "lab"}, format="json").status_code == 400  # needs its ids
    arrive(client, EntryLink.objects.get(), PROLIFIC)
    person = Participant.objects.get()
    studies.give_consent(person.session, 1)
    answer_everything(person)
    shown = api.get(f"{base}/participants/").json()
    assert shown["progress"]["finished"] == 1 and shown["progress"]["places_left"] == 4
    assert (
        shown["participants"][0]["participant_id"] == PROLIFIC["PROLIFIC_PID"]
        and shown["participants"][0]["status"] == "finished"
    )
    batches = api.post(f"{base}/payments/").json()
    assert [batch["participants"] for batch in batches] == [1]
    assert api.post(f"{base}/payments/").json() == batches  # nobody new: no second batch
    file = api.get(f"{base}/payments/1/prolific/")
    assert file.status_code == 200 and file.content.decode() == f"{PROLIFIC['PROLIFIC_PID']},0.40\n"
    invited = api.post(f"{base}/testers/", {"add": ["zoe@example.org"], "remove": []}, format="json").json()
    assert invited["testers"] == ["zoe"] and "/accounts/welcome/" in invited["invited"][0]["log_in_link"]
    assert api.post(f"{base}/testers/", {"remove": ["zoe"]}, format="json").json()["testers"] == []
    revoked = api.post(f"{base}/links/{links[0]['id']}/revoke/").json()
    assert revoked == [] and EntryLink.objects.get().revoked_at is not None
    # Another researcher reads, and is refused every change.
    other = APIClient()
    other.force_authenticate(make_user("rex", "researcher"))
    assert other.get(f"{base}/participants/").status_code == 200
    assert other.patch(f"{base}/study/", {"participant_cap": 9}, format="json").status_code == 403
    assert other.post(f"{base}/payments/").status_code == 403


def test_the_commands_open_a_study_invite_testers_and_write_payments(plan, client, tmp_path):
    import json

    from django.core.management import CommandError, call_command

    consent = tmp_path / "consent.md"
    consent.write_text("# Consent\n\nYes?", encoding="utf-8")
    out = io.StringIO()
    call_command("open_study", str(plan.pk), "--platform", "prolific", "--consent", str(consent), "--cap", "20",
                 "--site", "https://study.example.org", "--json", stdout=out)  # fmt: skip
    opened = json.loads(out.getvalue())
    link = EntryLink.objects.get()
    assert opened["url"] == (
        f"https://study.example.org/join/{link.token}/?PROLIFIC_PID={{{{%PROLIFIC_PID%}}}}"
        "&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}"
    )
    assert opened["consent_version"] == 2 and opened["participant_cap"] == 20
    with pytest.raises(CommandError, match="completion_url"):
        call_command("open_study", "Pilot", "--platform", "prolific", "--completion-url", "nope")
    people = tmp_path / "people.csv"
    people.write_text("email\nkim@example.org\n", encoding="utf-8")
    out = io.StringIO()
    call_command("invite_testers", "Pilot", str(people), "--site", "https://study.example.org", stdout=out)
    rows = list(csv.DictReader(io.StringIO(out.getvalue())))
    assert rows[0]["username"] == "kim" and rows[0]["log_in_link"].startswith(
        "https://study.example.org/accounts/welcome/"
    )
    with pytest.raises(CommandError, match="nobody is waiting"):
        call_command("export_payments", "Pilot")
    arrive(client, link, PROLIFIC)
    person = Participant.objects.get()
    studies.give_consent(person.session, 2)
    answer_everything(person)
    out = io.StringIO()
    call_command("export_payments", "Pilot", "--format", "prolific", stdout=out, stderr=io.StringIO())
    assert out.getvalue() == f"{PROLIFIC['PROLIFIC_PID']},0.40\n"
    again = io.StringIO()
    call_command("export_payments", "Pilot", "--format", "prolific", "--batch", "1", stdout=again)
    assert again.getvalue() == out.getvalue()
