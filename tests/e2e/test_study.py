"""A study in the browser: a Prolific participant arrives by the link, consents, practises, takes the
test and lands on the completion URL with the code; the same id resumes, another browser without
the attempt's id or code is refused; an MTurk preview shows the brief only; declining consent
returns the no-consent code (issue 26). Prolific's pages are stood in for by routes of the test
browser: nothing leaves the machine."""

import pytest
from playwright.sync_api import expect

from benchmarks.services import import_dataset
from humantest import studies
from humantest.models import EntryLink, Participant, TestPlan, TestSession, Trial
from tests.e2e.conftest import CHROMIUM_FLAGS, for_docs  # noqa: F401
from tests.factories import make_user

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

COMPLETE = "https://app.prolific.com/submissions/complete?cc=C0MPL3"
NO_CONSENT = "https://app.prolific.com/submissions/complete?cc=N0C0NS"
READY = "() => document.body.dataset.trialReady === '1'"


@pytest.fixture
def study(tmp_path):
    from plugins.cric.demo import generate_demo

    files = generate_demo(tmp_path / "cric", images=2, seed=5)
    cric = import_dataset(
        benchmark="cric",
        data=files.questions.read_bytes(),
        name="cric",
        images_dir=files.images_dir,
        scenes_data=files.scene_graphs.read_bytes(),
    )
    rita = make_user("rita", "researcher")
    practice = cric.items.order_by("position").first().external_id
    plan = TestPlan.objects.create(
        name="Everyday scenes",
        dataset=cric,
        items_per_tester=2,
        seed=1,
        practice_items=[practice],
        created_by=rita,
    )
    studies.update_study(
        plan,
        consent_text="# Taking part\n\nYou answer **two** questions about photos. You may stop at any time.",
        completion_code="C0MPL3",
        completion_url=COMPLETE,
        no_consent_code="N0C0NS",
        no_consent_url=NO_CONSENT,
    )
    return plan


def stand_in_for_prolific(page) -> list[str]:
    """Prolific's pages, answered by the test browser; the addresses it was sent to."""
    visited: list[str] = []

    def answer(route):
        visited.append(route.request.url)
        route.fulfill(
            status=200, content_type="text/html", body="<title>Prolific</title><h1>Submission received</h1>"
        )

    page.route("https://app.prolific.com/**", answer)
    return visited


def answer_shown_trial(page) -> None:
    """Answer the trial on screen (its first suggested answer, or 'yes'; no object), see the result."""
    page.wait_for_function(READY)
    page.fill("#answer-text", "yes")
    page.click("#no-object")
    page.click("#submit")
    expect(page.locator("#result")).to_be_visible()
    page.click("#next")


def test_a_prolific_participant_takes_the_study_and_lands_on_the_completion_url(
    study, browser, live_server, screenshot
):
    link = studies.open_link(study, "prolific", created_by=study.created_by)
    query = "PROLIFIC_PID=60aa11bb22cc33dd44ee55ff&STUDY_ID=st1&SESSION_ID=se1"
    context = browser.new_context(base_url=live_server.url)
    page = context.new_page()
    page.set_default_timeout(15000)
    visited = stand_in_for_prolific(page)
    page.goto(f"/join/{link.token}/?{query}")
    expect(page.locator("#consent h1")).to_have_text("Taking part")
    expect(page.locator("#consent strong")).to_have_text("two")
    for_docs(screenshot_of(page, screenshot, "study-consent"))
    page.click("#consent-accept")
    code = page.locator("#resume-code").inner_text()
    assert code == Participant.objects.get().resume_code
    page.click("#practice")
    answer_shown_trial(page)
    expect(page.locator("#begin")).to_be_visible()  # practice done
    page.click("#begin")
    for _ in range(2):
        assert "C0MPL3" not in page.content()  # no code while a trial is open
        answer_shown_trial(page)
    expect(page.locator("#completion-code")).to_have_text("C0MPL3")
    session = TestSession.objects.get()
    assert Trial.objects.filter(session=session, phase="test", status="answered").count() == 2
    for_docs(screenshot_of(page, screenshot, "study-completed"))
    page.wait_for_url(COMPLETE, timeout=15000)  # the page sends them back by itself
    assert visited == [COMPLETE]
    assert Participant.objects.get().status == Participant.Status.FINISHED

    # Later, the same link in the same browser: the same (finished) study, not a new one.
    page.goto(f"{live_server.url}/join/{link.token}/?{query}")
    expect(page.locator("#completion-code")).to_have_text("C0MPL3")
    assert TestSession.objects.count() == 1
    context.close()

    # Another browser with the same (public) participant id but another attempt: refused...
    other = browser.new_context(base_url=live_server.url)
    stranger = other.new_page()
    stranger.goto(f"/join/{link.token}/?PROLIFIC_PID=60aa11bb22cc33dd44ee55ff&STUDY_ID=st1&SESSION_ID=forged")
    expect(stranger.locator("#join-resume")).to_be_visible()
    stranger.fill("#resume-code", "NOTRIGHT")
    stranger.click("#join-resume button[type=submit]")
    expect(stranger.locator("#resume-wrong")).to_be_visible()
    assert "C0MPL3" not in stranger.content()
    # ...unless it shows the resume code the participant was given.
    stranger.fill("#resume-code", code)
    stranger.click("#join-resume button[type=submit]")
    expect(stranger.locator("#completion-code")).to_have_text("C0MPL3")
    assert Participant.objects.count() == 1
    other.close()

    # The researcher follows it on the plan's Participants page.
    from tests.e2e.conftest import log_in
    from tests.factories import PASSWORD

    researcher = browser.new_context(base_url=live_server.url, viewport={"width": 1280, "height": 900})
    desk = researcher.new_page()
    log_in(desk, "rita", PASSWORD)
    desk.wait_for_url(lambda url: "/accounts/login/" not in url)
    desk.clock.install()
    desk.goto(f"/test/plans/{study.pk}/study/")
    expect(desk.locator("#count-finished")).to_have_text("1")
    expect(desk.locator("#link-prolific")).to_contain_text(f"/join/{link.token}/?PROLIFIC_PID=")
    for_docs(screenshot_of(desk, screenshot, "study-participants"))
    # Someone else arrives meanwhile: the page's counts follow without a reload.
    newcomer = browser.new_context(base_url=live_server.url)
    newcomer.new_page().goto(f"/join/{link.token}/?PROLIFIC_PID=another&STUDY_ID=st1&SESSION_ID=n1")
    newcomer.close()
    expect(desk.locator("#count-arrived")).to_have_text("1")
    desk.clock.fast_forward(16000)
    expect(desk.locator("#count-arrived")).to_have_text("2")
    researcher.close()


def screenshot_of(page, screenshot, name):
    """A screenshot of this page (the fixture's page is another one)."""
    from tests.e2e.conftest import SCREENSHOTS

    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path


def test_an_mturk_preview_shows_the_brief_only(study, page):
    link = studies.open_link(study, EntryLink.Platform.MTURK, created_by=study.created_by)
    page.goto(f"/join/{link.token}/?assignmentId={studies.MTURK_PREVIEW}&hitId=H1")
    expect(page.locator("#preview-note")).to_be_visible()
    expect(page.locator("#open-study")).to_have_count(0)
    expect(page.locator("#consent")).to_have_count(0)
    assert not Participant.objects.exists() and not TestSession.objects.exists()


def test_declining_consent_returns_the_no_consent_code(study, page):
    link = studies.open_link(study, "prolific", created_by=study.created_by)
    visited = stand_in_for_prolific(page)
    page.goto(f"/join/{link.token}/?PROLIFIC_PID=decliner&STUDY_ID=st1&SESSION_ID=d1")
    page.click("#consent-decline")
    expect(page.locator("#completion-code")).to_have_text("N0C0NS")
    expect(page.locator("#ending")).to_have_attribute("data-kind", "no_consent")
    page.wait_for_url(NO_CONSENT, timeout=15000)
    assert visited == [NO_CONSENT]
    assert Participant.objects.get().status == Participant.Status.DECLINED
    assert not Trial.objects.filter(status__in=("served", "answered")).exists()
