"""Durations as people read them: a timedelta in whole minutes (the log-in lockout's wait)."""

from datetime import timedelta

from django import template

register = template.Library()


@register.filter
def minutes(value) -> int:
    """Whole minutes of a timedelta, at least 1 (0 for anything else)."""
    if not isinstance(value, timedelta):
        return 0
    return max(1, round(value.total_seconds() / 60))
