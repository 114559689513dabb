"""A participant's account opens its own study and nothing else.

Participants arrive by a study's entry link (humantest/studies.py) and are logged in without a
password, to an account of the participant kind tied to one plan. Whatever address such a
browser asks for, it gets its study's pages (its session, its trials, their images), the entry
link, the language menu, the scripts' words (jsi18n) and log-out; anything else sends it back to
its study (a GET) or is refused (any other method). The browser is known by a mark in its
session, set at arrival, so that nobody else's requests pay for a lookup.
"""

from __future__ import annotations

import re

from django.http import HttpResponseForbidden
from django.shortcuts import redirect

from humantest.study_views import PARTICIPANT_KEY

#: What a participant's browser may ask for (each view still checks that it is theirs).
ALLOWED = re.compile(
    r"^/(?:join/[^/]+/|test/sessions/\d+/(?:consent/|practice/|begin/|pause/|resume/)?|"
    r"test/trials/\d+/(?:answer|timeout)/|media/.+|static/.+|favicon\.ico|"
    r"accounts/logout/|accounts/language/|jsi18n/)$"
)


class ParticipantConfinement:
    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request):
        session = getattr(request, "session", None)
        if session is not None and session.get(PARTICIPANT_KEY) and not ALLOWED.match(request.path_info):
            user = getattr(request, "user", None)
            if user is None or not user.is_authenticated or not hasattr(user, "participant"):
                session.pop(PARTICIPANT_KEY, None)  # logged out, or another account since
                return self.get_response(request)
            if request.method in ("GET", "HEAD"):
                return redirect("humantest:session", pk=user.participant.session_id)
            return HttpResponseForbidden("A study's participant may only take part in their study.")
        return self.get_response(request)
