"""Log-in related pages: password reset only where mail is set up, a throttled API token endpoint."""

from __future__ import annotations

from functools import wraps

from django.conf import settings
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST
from rest_framework.authtoken.views import ObtainAuthToken
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.throttling import ScopedRateThrottle

from accounts.parsers import GatedJSONParser


def when_mail_is_set_up(view):
    """Password reset sends mail: without a mail server (EMAIL_HOST) it says so instead of
    pretending to send a link that never leaves the server."""

    @wraps(view)
    def wrapped(request, *args, **kwargs):
        if not settings.PASSWORD_RESET_BY_EMAIL:
            return render(request, "registration/password_reset_unavailable.html", status=404)
        return view(request, *args, **kwargs)

    return wrapped


class ThrottledAuthToken(ObtainAuthToken):
    """POST username and password for an API token; a few tries a minute per client (429 after).

    Failed tries also count towards the log-in lockout (django-axes), as the form's do.
    """

    throttle_classes = [ScopedRateThrottle]
    throttle_scope = "login"
    parser_classes = (FormParser, MultiPartParser, GatedJSONParser)


def login_context(request) -> dict:
    """Template context: whether the log-in page may offer a password reset by mail."""
    return {"password_reset_by_email": settings.PASSWORD_RESET_BY_EMAIL}


@require_POST
def choose_language(request):
    """Keep the interface language and go back where the person was (a same-site `next` only).

    A signed-in person's choice is their preference (any device they sign in on); an anonymous
    visitor's, like the log-in page's, is Django's language cookie (LocaleMiddleware reads it). The
    cookie is set for signed-in people too, so the log-in page after logging out keeps the language.
    """
    from django.utils.http import url_has_allowed_host_and_scheme

    from accounts.models import Preference

    language = request.POST.get("language", "")
    chosen = language in dict(settings.LANGUAGES)
    if chosen and request.user.is_authenticated:
        Preference.objects.update_or_create(user=request.user, defaults={"language": language})
        request.session["yardstick_language"] = language
    target = request.POST.get("next") or "/"
    if not url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        target = "/"
    response = redirect(target)
    if chosen:
        response.set_cookie(
            settings.LANGUAGE_COOKIE_NAME,
            language,
            max_age=settings.LANGUAGE_COOKIE_AGE,
            path=settings.LANGUAGE_COOKIE_PATH,
            domain=settings.LANGUAGE_COOKIE_DOMAIN,
            secure=settings.LANGUAGE_COOKIE_SECURE,
            httponly=settings.LANGUAGE_COOKIE_HTTPONLY,
            samesite=settings.LANGUAGE_COOKIE_SAMESITE,
        )
    return response
