"""The interface speaks each signed-in person's chosen language (accounts.Preference), on any device.

Anonymous visitors get the browser's language when it is one of settings.LANGUAGES (Django's
LocaleMiddleware, which runs first); a signed-in person's own choice wins over it.
"""

from django.utils import translation


class UserLanguageMiddleware:
    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request):
        user = getattr(request, "user", None)
        if user is not None and user.is_authenticated:
            language = request.session.get("yardstick_language")
            if language is None:
                from accounts.models import Preference

                language = (
                    Preference.objects.filter(user=user).values_list("language", flat=True).first() or ""
                )
                request.session["yardstick_language"] = language
            if language:
                translation.activate(language)
                request.LANGUAGE_CODE = language
        response = self.get_response(request)
        if getattr(request, "LANGUAGE_CODE", None):
            response.headers.setdefault("Content-Language", request.LANGUAGE_CODE)
        return response
