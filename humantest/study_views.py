"""Pages of studies: participants arriving by an entry link, consenting, finishing; the researcher's
page where a plan is opened to participants, followed and paid (humantest/studies.py holds the rules).
"""

from __future__ import annotations

import csv
import io
import re
from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import permission_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.dateparse import parse_datetime
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods, require_POST

from accounts import inputs
from accounts.permissions import may_change, ownership_problem
from evaluation.models import Submission
from humantest import invitations, payments, selectors, studies
from humantest.models import EntryLink, Participant, PaymentBatch, TestPlan
from humantest.trials import trial_for

#: The session key that marks a browser as a participant's (humantest/middleware.py reads it).
PARTICIPANT_KEY = "yardstick_participant"


def allow_mturk_frame(response):
    """Let MTurk frame this page (a HIT's ExternalQuestion shows it): for this response only."""
    response._csp_replace = {"frame-ancestors": list(studies.MTURK_ORIGINS)}
    response.xframe_options_exempt = True
    return response


def join_refused(request, link: EntryLink | None, refusal: studies.StudyRefused, status: int):
    return render(request, "humantest/join_refused.html", {"link": link, "refusal": refusal}, status=status)


@require_http_methods(["GET", "POST"])
def join(request, token: str):
    """Arriving by an entry link: a new participant's session, or the one it resumes."""
    link = EntryLink.objects.select_related("plan__dataset").filter(token=token).first()
    if link is None or link.revoked_at is not None:
        refusal = studies.StudyRefused(
            "revoked", _("This study link is not (or no longer) in use: ask for the current one.")
        )
        return join_refused(request, None, refusal, 404)
    try:
        arrival = studies.read_arrival(link, request.GET)
    except studies.StudyRefused as refusal:
        return join_refused(request, link, refusal, 400)
    plan = link.plan
    if arrival.preview or (link.platform == EntryLink.Platform.MTURK and request.GET.get("open") != "1"):
        # MTurk frames the HIT: the brief there, the study itself in a tab of its own (a framed page
        # of another site gets no cookies, so a session could not be kept in it).
        start = f"{request.path}?{urlencode({**request.GET.dict(), 'open': '1'})}"
        context = {"plan": plan, "link": link, "preview": arrival.preview, "start": start}
        context["brief_template"] = trial_for(plan.dataset.benchmark).brief_template
        return allow_mturk_frame(render(request, "humantest/join_landing.html", context))
    user = request.user if request.user.is_authenticated else None
    code = request.POST.get("resume_code", "") if request.method == "POST" else ""
    try:
        participant = studies.arrive(link, arrival, user=user, resume_code=code)
    except studies.StudyRefused as refusal:
        if refusal.code == "taken":
            context = {"link": link, "refusal": refusal, "tried": bool(code)}
            return render(request, "humantest/join_resume.html", context, status=403)
        return join_refused(request, link, refusal, 403)
    if user is None or user.pk != participant.user_id:
        login(request, participant.user, backend="django.contrib.auth.backends.ModelBackend")
    request.session[PARTICIPANT_KEY] = participant.pk
    return redirect("humantest:session", pk=participant.session_id)


def participant_of(request, session) -> Participant | None:
    """The participant a session belongs to (None for an invited tester's)."""
    return Participant.objects.filter(session=session).select_related("plan").first()


@require_POST
def consent(request, pk: int):
    """Accept (with the version read) or decline the study's consent text."""
    from humantest.views import own_session

    session = own_session(request, pk)
    if request.POST.get("action") == "decline":
        studies.decline_consent(session)
    else:
        try:
            version = inputs.object_id(request.POST.get("version"), "version")
            if version is None:
                raise inputs.InputRefused("version", _("say which consent text you read"))
            studies.give_consent(session, version)
        except (inputs.InputRefused, studies.StudyRefused) as problem:
            messages.error(request, problem.message)
    return redirect("humantest:session", pk=session.pk)


def ended_page(request, session, participant: Participant | None, *, declined: bool = False):
    """The end of a participant's study: the code, and the way back to their platform (the
    researcher's own address, or MTurk's externalSubmit for a HIT). Reached only when the server
    has closed every trial: every answer is stored before the code is shown."""
    if participant is not None:
        participant.refresh_from_db()  # the last answer may have finished the study a moment ago
    ending = studies.ending(participant) if participant is not None else None
    context = {
        "session": session,
        "plan": session.plan,
        "participant": participant,
        "ending": ending,
        "declined": declined,
    }
    if participant is not None and session.status == session.Status.FINISHED:
        context["result"] = selectors.tester_result(
            request.user.username,
            list(session.trials.filter(phase="test")),
            trial_for(session.plan.dataset.benchmark),
        )
    response = render(request, "humantest/ended.html", context)
    if ending is not None and ending.return_to:
        origin = ending.return_to.split("/mturk/", 1)[0]
        response._csp_update = {"form-action": [origin]}
    return response


# --- the researcher's page ---------------------------------------------------------------------------


def researcher_plan(request, pk: int) -> TestPlan:
    return get_object_or_404(selectors.plans_for_researcher(request.user), pk=pk)


def owned_plan(request, pk: int) -> TestPlan:
    plan = researcher_plan(request, pk)
    if problem := ownership_problem(request.user, plan, f"test plan “{plan.name}”"):
        raise PermissionDenied(problem)
    return plan


WHOLE = re.compile(r"[0-9]{1,9}")

SETTINGS_FIELDS = (
    "consent_text", "opens_at", "closes_at", "participant_cap", "idle_limit_s", "completion_code",
    "completion_url", "screen_out_code", "screen_out_url", "no_consent_code", "no_consent_url",
    "currency", "base_pay", "bonus_per_correct", "bonus_threshold", "bonus_above", "bonus_cap",
    "stop_against", "stop_metric", "stop_width", "planned_participants",
)  # fmt: skip


def settings_from(post) -> dict:
    changes = {}
    for name in SETTINGS_FIELDS:
        if name not in post:
            continue
        value = post.get(name, "")
        if name in ("opens_at", "closes_at"):
            value = parse_when(value, name)
        elif name in ("participant_cap", "idle_limit_s", "planned_participants"):
            # Digits become a number (a bad one is refused by the study's rules, naming the field).
            text = value.strip()
            value = (
                None
                if text == "" and name != "idle_limit_s"
                else int(text)
                if WHOLE.fullmatch(text)
                else text
            )
        changes[name] = value
    return changes


def parse_when(value: str, field: str):
    if not value.strip():
        return None
    try:
        when = parse_datetime(value.strip())
    except ValueError:
        when = None
    if when is None:
        raise studies.StudyRefused(
            "field",
            _("expected a date and time such as %(example)s") % {"example": "2026-12-01T09:00"},
            field,
        )
    from django.utils import timezone

    return when if timezone.is_aware(when) else timezone.make_aware(when)


@permission_required("humantest.view_testplan", raise_exception=True)
@require_http_methods(["GET", "POST"])
def study_page(request, pk: int):
    """Open a plan to participants: its links, settings, progress and payments."""
    plan = researcher_plan(request, pk)
    study = studies.study_for(plan)
    problem = None
    if request.method == "POST":
        owned_plan(request, pk)
        action = request.POST.get("action", "")
        try:
            if action == "settings":
                studies.update_study(plan, **settings_from(request.POST))
                messages.success(request, _("Study settings saved."))
            elif action == "open":
                link = studies.open_link(
                    plan,
                    request.POST.get("platform", ""),
                    created_by=request.user,
                    lab_ids=request.POST.get("lab_ids", ""),
                )
                messages.success(
                    request, _("A new %(platform)s link is open.") % {"platform": link.get_platform_display()}
                )
            elif action == "revoke":
                link = get_object_or_404(
                    EntryLink, plan=plan, pk=inputs.object_id(request.POST.get("link"), "link") or 0
                )
                studies.revoke_link(link)
                messages.success(
                    request,
                    _("The %(platform)s link is revoked: nobody new arrives by it.")
                    % {"platform": link.get_platform_display()},
                )
            elif action == "pay":
                batch = payments.new_batch(plan, created_by=request.user)
                if batch is None:
                    messages.info(
                        request,
                        _("Nobody is waiting to be paid: every finished participant is in a batch already."),
                    )
                else:
                    messages.success(
                        request,
                        _("Batch %(number)s: %(count)s participants, ready to download.")
                        % {"number": batch.number, "count": batch.payments.count()},
                    )
            else:
                raise studies.StudyRefused("field", _("no such action"), "action")
        except (studies.StudyRefused, inputs.InputRefused) as error:
            problem = {"field": error.field, "message": error.message}
        else:
            return redirect("humantest:study", pk=plan.pk)
        study.refresh_from_db()
    links = [
        {
            "link": link,
            "url": request.build_absolute_uri(reverse("join", args=[link.token])) + template_query(link),
        }
        for link in plan.entry_links.filter(revoked_at__isnull=True)
    ]
    context = {
        "plan": plan,
        "study": study,
        "links": links,
        "platforms": EntryLink.Platform.choices,
        "progress": studies.progress(plan),
        "participants": plan.participants.select_related("session").order_by("-arrived_at")[:200],
        "batches": plan.payment_batches.all(),
        "waiting_payment": payments.waiting(plan).count(),
        "may_change": may_change(request.user, plan),
        "problem": problem,
        "values": request.POST if problem else None,
        "headline": trial_for(plan.dataset.benchmark).headline[0],
        "model_rows": sorted(
            set(
                Submission.objects.filter(
                    dataset=plan.dataset, producer=Submission.Producer.MODEL
                ).values_list("name", flat=True)
            )
        ),
    }
    return render(request, "humantest/study.html", context, status=400 if problem else 200)


def template_query(link: EntryLink) -> str:
    """The query string the platform fills in, as the researcher pastes it there."""
    if link.platform == EntryLink.Platform.PROLIFIC:
        return "?PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}"
    if link.platform == EntryLink.Platform.LAB:
        return "?participant=<id>"
    return ""  # MTurk appends workerId, assignmentId, hitId and turkSubmitTo itself


@permission_required("humantest.view_testplan", raise_exception=True)
def payment_export(request, pk: int, number: int, fmt: str):
    """A batch of payments in a platform's bulk-bonus format, or the full table."""
    plan = researcher_plan(request, pk)
    batch = get_object_or_404(PaymentBatch, plan=plan, number=number)
    if fmt not in payments.FORMATS:
        raise Http404("no such format")
    response = HttpResponse(payments.batch_csv(batch, fmt), content_type="text/csv; charset=utf-8")
    return inputs.attachment(response, f"plan-{plan.pk}-payments-{batch.number}-{fmt}.csv")


@permission_required("humantest.view_testplan", raise_exception=True)
@require_http_methods(["GET", "POST"])
def testers_page(request, pk: int):
    """Invite testers by a pasted list or CSV (accounts made with one-time log-in links), add and
    remove testers of a running plan."""
    plan = researcher_plan(request, pk)
    made: list[invitations.Invited] = []
    problem = ""
    if request.method == "POST":
        owned_plan(request, pk)
        try:
            if request.POST.get("action") == "remove":
                removed = invitations.remove_testers(plan, request.POST.getlist("tester"))
                messages.success(
                    request,
                    _("%(count)s tester(s) removed: they can no longer open this test.") % {"count": removed},
                )
                return redirect("humantest:testers", pk=plan.pk)
            upload = request.FILES.get("file")
            uploaded = upload.read(2_000_001).decode("utf-8", "replace") if upload is not None else ""
            made = invitations.invite(plan, request.POST.get("people", ""), uploaded, invited_by=request.user)
        except invitations.InvitationRefused as error:
            problem = str(error)
    if request.POST.get("format") == "csv" and made:
        buffer = io.StringIO()
        writer = csv.writer(buffer)
        writer.writerow(["username", "email", "new_account", "log_in_link"])
        for entry in made:
            writer.writerow(
                [
                    entry.username,
                    entry.email,
                    "yes" if entry.new else "no",
                    request.build_absolute_uri(entry.link) if entry.link else "",
                ]
            )
        return inputs.attachment(
            HttpResponse(buffer.getvalue(), content_type="text/csv; charset=utf-8"),
            f"plan-{plan.pk}-invitations.csv",
        )
    context = {
        "plan": plan,
        "made": [(entry, request.build_absolute_uri(entry.link) if entry.link else "") for entry in made],
        "problem": problem,
        "testers": plan.testers.order_by("username"),
        "may_change": may_change(request.user, plan),
    }
    return render(request, "humantest/testers.html", context, status=400 if problem else 200)
