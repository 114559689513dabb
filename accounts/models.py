"""What each person chooses for themselves: for now, the language of the interface."""

from django.conf import settings
from django.db import models


class Preference(models.Model):
    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="preference")
    language = models.CharField(max_length=16, choices=settings.LANGUAGES, default=settings.LANGUAGE_CODE)

    def __str__(self) -> str:
        return f"{self.user}: {self.language}"
