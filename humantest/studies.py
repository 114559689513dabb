"""Studies: a test plan opened to participants who arrive by link from a crowd platform or a lab list.

A researcher opens a plan (`open_link`): a secret entry link per platform, revocable, with the
study's settings (`update_study`): consent text, opening and closing times, a participant cap,
the platform's completion, screen-out and no-consent codes with the addresses to send people
back to (always the researcher's own, never a domain written here), and the pay rule.

Arriving (`arrive`) with the platform's id creates that participant (an account of the
participant kind, tied to this plan: humantest/middleware.py keeps it there) and their session,
or resumes it. Platform ids are not secret (Prolific's PROLIFIC_PID is the same in every study a
person takes), so resuming needs what only the first arrival had: this browser's own log-in, the
attempt's id recorded at arrival (Prolific's SESSION_ID, MTurk's assignmentId), or the resume code
shown to the participant. One id never takes a plan twice; an id outside a lab list, a closed, not
yet open or full study are refused, and nothing is created then.

Consent (when the study has a text) comes before anything else and is recorded with its version
and the server's time; declining ends the session with the no-consent code. The completion code
is shown only by the session's page once every test trial is closed on the server, which is where
every answer is stored: no redirect can run ahead of the last save.
"""

from __future__ import annotations

import secrets
import statistics
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any
from urllib.parse import urlsplit

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import IntegrityError, transaction
from django.db.models import Count, Q
from django.utils import timezone
from django.utils.translation import gettext as _

from accounts import inputs
from accounts.roles import PARTICIPANT
from humantest.models import ConsentText, EntryLink, Participant, Study, TestPlan, TestSession
from humantest.sessions import start_session

Platform = EntryLink.Platform

#: The query parameters each platform passes: the participant's id, the attempt's, the study's.
PARAMETERS = {
    Platform.PROLIFIC: {"id": "PROLIFIC_PID", "attempt": "SESSION_ID", "study": "STUDY_ID"},
    Platform.MTURK: {
        "id": "workerId",
        "attempt": "assignmentId",
        "study": "hitId",
        "return_to": "turkSubmitTo",
    },
    Platform.LAB: {"id": "participant"},
}
#: MTurk's assignmentId while a worker previews a HIT: show the brief, start nothing.
MTURK_PREVIEW = "ASSIGNMENT_ID_NOT_AVAILABLE"
#: Where MTurk frames a HIT and takes its answers (`turkSubmitTo` must be one of them).
MTURK_ORIGINS = ("https://www.mturk.com", "https://workersandbox.mturk.com")
#: A participant's last sign of life is written at most this often (each page and answer is one).
SEEN_EVERY = timedelta(seconds=30)
#: The most lab ids one link admits.
LAB_IDS_LIMIT = 100_000


class StudyRefused(Exception):
    """An arrival or a change that cannot be taken; `code` says which kind, `message` what to do."""

    def __init__(self, code: str, message: str, field: str = "") -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.field = field


@dataclass(frozen=True)
class Arrival:
    """What an entry link's query says about who arrives."""

    external_id: str
    attempt_id: str = ""
    platform_study: str = ""
    return_to: str = ""
    preview: bool = False


# --- the researcher's side -----------------------------------------------------------------------


def study_for(plan: TestPlan) -> Study:
    return Study.objects.get_or_create(plan=plan)[0]


#: The settings `update_study` takes, with the check each gets.
TEXT_SETTINGS = ("completion_code", "screen_out_code", "no_consent_code")
URL_SETTINGS = ("completion_url", "screen_out_url", "no_consent_url")
MONEY_SETTINGS = ("base_pay", "bonus_per_correct", "bonus_above", "bonus_cap")
MAX_AMOUNT = Decimal("100000")
STOP_SETTINGS = ("stop_against", "stop_metric", "stop_width", "planned_participants")


def update_study(plan: TestPlan, **changes: Any) -> Study:
    """Change a study's settings; StudyRefused names the first bad one (nothing is changed then).

    A new consent text gets the next version (and is kept as it was shown); participants who
    consented keep the version they accepted.
    """
    study = study_for(plan)
    unknown = set(changes) - {
        "consent_text", "opens_at", "closes_at", "participant_cap", "idle_limit_s", "currency",
        "bonus_threshold", *TEXT_SETTINGS, *URL_SETTINGS, *MONEY_SETTINGS, *STOP_SETTINGS,
    }  # fmt: skip
    if unknown:
        raise StudyRefused(
            "field",
            _("not a study setting: %(names)s") % {"names": ", ".join(sorted(unknown))},
            sorted(unknown)[0],
        )
    clean: dict[str, Any] = {}
    try:
        for name, value in changes.items():
            if name == "consent_text":
                clean[name] = inputs.text(value, name, max_length=50_000)
            elif name in TEXT_SETTINGS:
                clean[name] = inputs.name(value, name, max_length=64, required=False)
            elif name in URL_SETTINGS:
                clean[name] = platform_url(value, name)
            elif name in MONEY_SETTINGS:
                clean[name] = amount(value, name, allow_none=name == "bonus_cap")
            elif name == "currency":
                clean[name] = currency(value)
            elif name == "bonus_threshold":
                clean[name] = share(value, name)
            elif name == "participant_cap":
                clean[name] = (
                    None if value in (None, "") else inputs.integer(value, name, minimum=1, maximum=10**7)
                )
            elif name == "stop_against":
                clean[name] = model_row(plan, value)
            elif name == "stop_metric":
                clean[name] = watched_metric(plan, value)
            elif name == "stop_width":
                clean[name] = None if value in (None, "") else width(value, name)
            elif name == "planned_participants":
                clean[name] = (
                    None if value in (None, "") else inputs.integer(value, name, minimum=1, maximum=10**7)
                )
            elif name == "idle_limit_s":
                clean[name] = inputs.integer(value, name, minimum=60, maximum=30 * 24 * 3600)
            else:  # opens_at, closes_at
                if value is not None and not isinstance(value, datetime):
                    raise inputs.InputRefused(name, _("expected a date and time"))
                clean[name] = value
    except inputs.InputRefused as error:
        raise StudyRefused("field", error.message, error.field) from None
    opens = clean.get("opens_at", study.opens_at)
    closes = clean.get("closes_at", study.closes_at)
    if opens is not None and closes is not None and closes <= opens:
        raise StudyRefused("field", _("the study must close after it opens"), "closes_at")
    with transaction.atomic():
        study = Study.objects.select_for_update().get(pk=study.pk)
        new_consent = "consent_text" in clean and clean["consent_text"] != study.consent_text
        if any(name in clean and clean[name] != getattr(study, name) for name in STOP_SETTINGS):
            # New stopping rules: the study takes people again until they are met (the worker checks).
            study.stopped_at, study.stopped_because = None, ""
            study.precision_width, study.precision_note, study.precision_at = None, "", None
        for name, value in clean.items():
            setattr(study, name, value)
        if new_consent:
            study.consent_version += 1
            ConsentText.objects.create(study=study, version=study.consent_version, text=study.consent_text)
        study.save()
    return study


def model_row(plan: TestPlan, value: Any) -> str:
    """A model's row label in the plan's dataset report (empty: none watched)."""
    from evaluation.models import Submission

    text = inputs.name(value, "stop_against", max_length=200, required=False)
    if (
        text
        and not Submission.objects.filter(
            dataset=plan.dataset, producer=Submission.Producer.MODEL, name=text
        ).exists()
    ):
        raise inputs.InputRefused(
            "stop_against",
            _("no model row %(row)r in %(dataset)s's report: name one of its models")
            % {"row": text, "dataset": plan.dataset},
        )
    return text


def watched_metric(plan: TestPlan, value: Any) -> str:
    """A column of the plan's report that pairs units (empty: the benchmark's headline)."""
    text = inputs.name(value, "stop_metric", max_length=32, required=False)
    labels = {
        column.label
        for column in plan.dataset.spec.report_columns()
        if column.item_key is not None and column.setting == plan.setting
    }
    if text and text not in labels:
        raise inputs.InputRefused(
            "stop_metric",
            _("expected one of %(labels)s (this setting's paired columns)")
            % {"labels": ", ".join(sorted(labels))},
        )
    return text


#: The widest interval a study may wait for, in the metric's own units (distances are not shares).
MAX_WIDTH = 1_000_000.0


def width(value: Any, field: str) -> float:
    """An interval's width in the watched metric's units: above 0, finite."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise inputs.InputRefused(field, _("expected a width above 0, such as 0.1"))
    try:
        number = float(value)
    except ValueError:
        raise inputs.InputRefused(field, _("expected a width above 0, such as 0.1")) from None
    if not (0 < number <= MAX_WIDTH):
        raise inputs.InputRefused(field, _("expected a width above 0, such as 0.1"))
    return number


def platform_url(value: Any, field: str) -> str:
    """A return address the researcher pasted from the platform: https (or http), one line."""
    text = inputs.name(value, field, max_length=500, required=False)
    if text and (urlsplit(text).scheme not in ("https", "http") or not urlsplit(text).netloc):
        raise inputs.InputRefused(field, _("paste the whole address the platform gives, https://..."))
    return text


def amount(value: Any, field: str, *, allow_none: bool = False) -> Decimal | None:
    if value in (None, "") and allow_none:
        return None
    try:
        number = Decimal(str(value))
    except ArithmeticError:
        raise inputs.InputRefused(field, _("expected an amount such as 1.50")) from None
    if (
        not number.is_finite()
        or number < 0
        or number > MAX_AMOUNT
        or number != number.quantize(Decimal("0.01"))
    ):
        raise inputs.InputRefused(field, _("expected an amount from 0 to 100000, to the cent"))
    return number.quantize(Decimal("0.01"))


def share(value: Any, field: str) -> float | None:
    if value in (None, ""):
        return None
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise inputs.InputRefused(field, _("expected a share from 0 to 1"))
    try:
        number = float(value)
    except ValueError:
        raise inputs.InputRefused(field, _("expected a share from 0 to 1")) from None
    if not 0 <= number <= 1:
        raise inputs.InputRefused(field, _("expected a share from 0 to 1"))
    return number


def currency(value: Any) -> str:
    text = inputs.name(value, "currency", max_length=3)
    if not (len(text) == 3 and text.isascii() and text.isalpha()):
        raise inputs.InputRefused("currency", _("a three-letter currency code, such as GBP or USD"))
    return text.upper()


def open_link(plan: TestPlan, platform: str, *, created_by=None, lab_ids: Any = ()) -> EntryLink:
    """A new entry link for `platform`; the platform's earlier link is revoked (people who arrived
    by it go on, nobody new arrives by it)."""
    if platform not in Platform.values:
        raise StudyRefused(
            "field", _("choose one of %(platforms)s") % {"platforms": ", ".join(Platform.values)}, "platform"
        )
    ids = lab_list(lab_ids) if platform == Platform.LAB else []
    if platform == Platform.LAB and not ids:
        raise StudyRefused("field", _("a lab link needs the list of participant ids it admits"), "lab_ids")
    study_for(plan)
    with transaction.atomic():
        now = timezone.now()
        EntryLink.objects.filter(plan=plan, platform=platform, revoked_at__isnull=True).update(revoked_at=now)
        return EntryLink.objects.create(
            plan=plan, platform=platform, token=secrets.token_urlsafe(24), lab_ids=ids, created_by=created_by
        )


def lab_list(raw: Any) -> list[str]:
    """Participant ids pasted or uploaded: one a line (or comma separated), each one line of text."""
    if isinstance(raw, str):
        raw = raw.replace(",", "\n").splitlines()
    if not isinstance(raw, list | tuple):
        raise StudyRefused("field", _("expected a list of participant ids"), "lab_ids")
    ids: list[str] = []
    try:
        for index, value in enumerate(raw):
            text = inputs.name(value, f"lab_ids[{index}]", max_length=200, required=False)
            if text:
                ids.append(text)
    except inputs.InputRefused as error:
        raise StudyRefused("field", error.message, error.field) from None
    if len(ids) > LAB_IDS_LIMIT:
        raise StudyRefused(
            "field", _("at most %(limit)s ids a link") % {"limit": f"{LAB_IDS_LIMIT:,}"}, "lab_ids"
        )
    return list(dict.fromkeys(ids))


def revoke_link(link: EntryLink) -> EntryLink:
    if link.revoked_at is None:
        link.revoked_at = timezone.now()
        link.save(update_fields=["revoked_at"])
    return link


def active_link(plan: TestPlan, platform: str) -> EntryLink | None:
    return EntryLink.objects.filter(plan=plan, platform=platform, revoked_at__isnull=True).first()


# --- arriving --------------------------------------------------------------------------------------


def read_arrival(link: EntryLink, query: Any) -> Arrival:
    """Who arrives, from the link's query string; StudyRefused (code "missing_id") without an id."""
    names = PARAMETERS[link.platform]
    values = {}
    try:
        for role, parameter in names.items():
            values[role] = inputs.name(query.get(parameter, ""), parameter, max_length=200, required=False)
    except inputs.InputRefused as error:
        raise StudyRefused("missing_id", f"{error.field}: {error.message}", error.field) from None
    preview = link.platform == Platform.MTURK and values.get("attempt") == MTURK_PREVIEW
    if not values["id"] and not preview:
        where = {
            Platform.PROLIFIC: "Prolific",
            Platform.MTURK: "Mechanical Turk",
            Platform.LAB: _("the link your lab gave you"),
        }[link.platform]
        raise StudyRefused(
            "missing_id",
            _("Open this study from %(where)s: the address it gives you says who you are.")
            % {"where": where},
            names["id"],
        )
    return_to = values.get("return_to", "")
    if return_to and return_to.rstrip("/") not in MTURK_ORIGINS:
        return_to = ""  # only MTurk's own addresses take a HIT's answer
    return Arrival(
        external_id=values["id"],
        attempt_id="" if preview else values.get("attempt", ""),
        platform_study=values.get("study", ""),
        return_to=return_to.rstrip("/"),
        preview=preview,
    )


def open_problem(study: Study, now: datetime) -> StudyRefused | None:
    """Why the study takes nobody new now (None when it does)."""
    if study.opens_at is not None and now < study.opens_at:
        return StudyRefused("not_open", _("This study has not opened yet."))
    if study.closes_at is not None and now >= study.closes_at:
        return StudyRefused("closed", _("This study has closed: it takes nobody new."))
    if study.stopped_at is not None:
        return StudyRefused("full", _("This study has all the participants it needs: it takes nobody new."))
    return None


def taking(plan: TestPlan) -> int:
    """How many places are taken: every participant who has not returned the study."""
    return Participant.objects.filter(plan=plan).exclude(status=Participant.Status.RETURNED).count()


def arrive(link: EntryLink, arrival: Arrival, *, user=None, resume_code: str = "") -> Participant:
    """The participant this arrival is: a new one (with their account and session) or the one it
    resumes. StudyRefused (nothing created) when the link is revoked, the study is not open, full,
    or the id is not on the lab list, or the id has begun from elsewhere and this arrival cannot
    show it is the same attempt (code "taken": ask for the resume code)."""
    if link.revoked_at is not None:
        raise StudyRefused("revoked", _("This study link is no longer in use: ask for the current one."))
    if arrival.preview:
        raise StudyRefused("preview", _("A preview: accept the HIT to begin."))
    plan = link.plan
    existing = Participant.objects.filter(
        plan=plan, platform=link.platform, external_id=arrival.external_id
    ).first()
    if existing is not None:
        return resume(existing, arrival, user=user, resume_code=resume_code)
    if link.platform == Platform.LAB and arrival.external_id not in set(link.lab_ids):
        raise StudyRefused(
            "unknown_id",
            _("This participant id is not on the study's list: check it, or ask the study's team."),
        )
    now = timezone.now()
    with transaction.atomic():
        # One arrival at a time counts the places: the study's row is the lock (on SQLite the
        # IMMEDIATE transaction already is).
        study = Study.objects.select_for_update().get(plan=plan)
        if problem := open_problem(study, now):
            raise problem
        if study.participant_cap is not None and taking(plan) >= study.participant_cap:
            raise StudyRefused("full", _("This study is full: it has all the participants it needs."))
        try:
            with transaction.atomic():
                participant = create_participant(link, arrival, now)
        except IntegrityError:  # the same id arrived a moment ago (two tabs): that one stands
            participant = None
    if participant is None:
        existing = Participant.objects.get(plan=plan, platform=link.platform, external_id=arrival.external_id)
        return resume(existing, arrival, user=user, resume_code=resume_code)
    return participant


def create_participant(link: EntryLink, arrival: Arrival, now: datetime) -> Participant:
    account = get_user_model().objects.create_user(
        username=f"participant-{secrets.token_hex(8)}", first_name=arrival.external_id[:150]
    )
    account.groups.add(Group.objects.get_or_create(name=PARTICIPANT)[0])
    participant = Participant.objects.create(
        plan=link.plan,
        link=link,
        platform=link.platform,
        external_id=arrival.external_id,
        attempt_id=arrival.attempt_id,
        platform_study=arrival.platform_study,
        return_to=arrival.return_to,
        resume_code=resume_code_text(),
        user=account,
        arrived_at=now,
        last_seen_at=now,
    )
    participant.session = start_session(link.plan, account)
    participant.save(update_fields=["session"])
    return participant


def resume_code_text() -> str:
    """Eight letters and digits a person can copy by hand (no 0/O, 1/I/L)."""
    alphabet = "23456789ABCDEFGHJKMNPQRSTUVWXYZ"
    return "".join(secrets.choice(alphabet) for _index in range(8))


def resume(participant: Participant, arrival: Arrival, *, user=None, resume_code: str = "") -> Participant:
    """The participant, if this arrival shows it is their attempt; StudyRefused("taken") if not."""
    same_browser = user is not None and getattr(user, "pk", None) == participant.user_id
    same_attempt = bool(arrival.attempt_id) and secrets.compare_digest(
        arrival.attempt_id, participant.attempt_id
    )
    code = (resume_code or "").strip().upper()
    same_code = bool(code) and secrets.compare_digest(code, participant.resume_code)
    if not (same_browser or same_attempt or same_code):
        raise StudyRefused(
            "taken",
            _(
                "This participant id has already begun this study from another browser. To go on here, "
                "enter the resume code you were shown when you began."
            ),
        )
    if participant.status == Participant.Status.RETURNED:
        with transaction.atomic():
            study = Study.objects.select_for_update().get(plan=participant.plan)
            if study.participant_cap is not None and taking(participant.plan) >= study.participant_cap:
                raise StudyRefused("full", _("This study is full: your place was given to someone else."))
            participant.status = (
                Participant.Status.CONSENTED
                if participant.session.consented_at
                else Participant.Status.ARRIVED
            )
            participant.returned_at = None
            participant.save(update_fields=["status", "returned_at"])
    seen(participant, force=True)
    return participant


def seen(participant: Participant, *, force: bool = False) -> None:
    """Note a sign of life (a page, an answer), at most every SEEN_EVERY."""
    now = timezone.now()
    if force or now - participant.last_seen_at >= SEEN_EVERY:
        Participant.objects.filter(pk=participant.pk).update(last_seen_at=now)
        participant.last_seen_at = now


# --- consent, finishing, returning -------------------------------------------------------------------


def needs_consent(session: TestSession) -> bool:
    """Whether the session must be consented to before anything else (a study with a text)."""
    study = Study.objects.filter(plan_id=session.plan_id).only("consent_version").first()
    return (
        bool(study and study.consent_version) and session.consented_at is None and session.declined_at is None
    )


def consent_html(study: Study) -> str:
    """The consent text as HTML: Markdown without raw HTML, so nothing in it can run or restyle."""
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark", {"html": False}).enable("table").render(study.consent_text)


def give_consent(session: TestSession, version: Any) -> TestSession:
    """Record the consent to `version` of the text, at the server's time. StudyRefused when that is
    not the text in force (it changed while the page was open: the page shows the new one)."""
    study = Study.objects.get(plan_id=session.plan_id)
    if version != study.consent_version:
        raise StudyRefused(
            "stale", _("The consent text was changed while you read it: please read it again.")
        )
    now = timezone.now()
    updated = TestSession.objects.filter(
        pk=session.pk, consented_at__isnull=True, declined_at__isnull=True
    ).update(consented_at=now, consent_version=version)
    session.refresh_from_db(fields=["consented_at", "consent_version", "declined_at"])
    if updated:
        Participant.objects.filter(session=session, status=Participant.Status.ARRIVED).update(
            status=Participant.Status.CONSENTED
        )
    return session


def decline_consent(session: TestSession) -> TestSession:
    """The person does not consent: nothing more is asked of them, nothing of theirs is measured."""
    now = timezone.now()
    TestSession.objects.filter(pk=session.pk, consented_at__isnull=True, declined_at__isnull=True).update(
        declined_at=now
    )
    session.refresh_from_db(fields=["consented_at", "declined_at"])
    Participant.objects.filter(session=session).exclude(status=Participant.Status.FINISHED).update(
        status=Participant.Status.DECLINED, finished_at=now
    )
    return session


def finished(session: TestSession) -> None:
    """The session's test is over (every test trial closed, every answer stored)."""
    Participant.objects.filter(session=session).exclude(
        status__in=(Participant.Status.FINISHED, Participant.Status.SCREENED_OUT, Participant.Status.DECLINED)
    ).update(
        status=Participant.Status.FINISHED,
        finished_at=session.finished_at or timezone.now(),
        returned_at=None,
    )


def screen_out(participant: Participant) -> Participant:
    """End a participant's study with the screen-out code (they do not qualify)."""
    Participant.objects.filter(pk=participant.pk).exclude(status=Participant.Status.FINISHED).update(
        status=Participant.Status.SCREENED_OUT, finished_at=timezone.now()
    )
    participant.refresh_from_db()
    return participant


def return_idle(plan: TestPlan, now: datetime | None = None) -> int:
    """Participants silent for longer than the study's idle limit have returned it: their places
    are free for others (should they come back, they go on if a place is left)."""
    study = Study.objects.filter(plan=plan).first()
    if study is None:
        return 0
    now = now or timezone.now()
    return (
        Participant.objects.filter(
            plan=plan,
            status__in=(Participant.Status.ARRIVED, Participant.Status.CONSENTED),
            last_seen_at__lt=now - timedelta(seconds=study.idle_limit_s),
        )
        .filter(Q(session__isnull=True) | ~Q(session__status=TestSession.Status.FINISHED))
        .update(status=Participant.Status.RETURNED, returned_at=now)
    )


@dataclass(frozen=True)
class Ending:
    """How a participant's study ends: what to show and where to send them."""

    kind: str  # "completed", "screened_out", "no_consent"
    code: str
    url: str
    return_to: str  # MTurk: the HIT's externalSubmit address
    attempt_id: str


def ending(participant: Participant) -> Ending | None:
    """The code and return address for a participant whose study has ended; None while it runs."""
    study = Study.objects.get(plan_id=participant.plan_id)
    kind = {
        Participant.Status.FINISHED: "completed",
        Participant.Status.SCREENED_OUT: "screened_out",
        Participant.Status.DECLINED: "no_consent",
    }.get(participant.status)
    if kind is None:
        return None
    code, url = {
        "completed": (study.completion_code, study.completion_url),
        "screened_out": (study.screen_out_code, study.screen_out_url),
        "no_consent": (study.no_consent_code, study.no_consent_url),
    }[kind]
    if participant.code_shown_at is None:
        Participant.objects.filter(pk=participant.pk, code_shown_at__isnull=True).update(
            code_shown_at=timezone.now()
        )
    return_to = (
        f"{participant.return_to}/mturk/externalSubmit"
        if participant.platform == Platform.MTURK and participant.return_to
        else ""
    )
    return Ending(kind=kind, code=code, url=url, return_to=return_to, attempt_id=participant.attempt_id)


# --- progress ----------------------------------------------------------------------------------------


def progress(plan: TestPlan) -> dict[str, Any]:
    """Where the plan's participants are: arrivals, consented, practising, running, finished,
    screened out, declined, returned; the median minutes of those who finished."""
    return_idle(plan)
    participants = Participant.objects.filter(plan=plan)
    counts = dict(participants.values_list("status").annotate(n=Count("pk")).values_list("status", "n"))
    by_session = dict(
        participants.exclude(status__in=(Participant.Status.FINISHED, Participant.Status.RETURNED))
        .values_list("session__status")
        .annotate(n=Count("pk"))
        .values_list("session__status", "n")
    )
    durations = [
        (finished_at - arrived_at).total_seconds() / 60
        for arrived_at, finished_at in participants.filter(status=Participant.Status.FINISHED).values_list(
            "arrived_at", "finished_at"
        )
        if finished_at
    ]
    study = Study.objects.filter(plan=plan).first()
    return {
        "arrived": sum(counts.values()),
        "consented": participants.filter(session__consented_at__isnull=False).count(),
        "in_practice": by_session.get(TestSession.Status.PRACTICE, 0),
        "running": by_session.get(TestSession.Status.RUNNING, 0)
        + by_session.get(TestSession.Status.PAUSED, 0),
        "finished": counts.get(Participant.Status.FINISHED, 0),
        "screened_out": counts.get(Participant.Status.SCREENED_OUT, 0),
        "declined": counts.get(Participant.Status.DECLINED, 0),
        "returned": counts.get(Participant.Status.RETURNED, 0),
        "places_left": None
        if study is None or study.participant_cap is None
        else max(study.participant_cap - taking(plan), 0),
        "median_minutes": round(statistics.median(durations), 1) if durations else None,
    }
