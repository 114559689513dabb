"""Inviting testers without the admin: a pasted list or a CSV of usernames or e-mail addresses.

Each entry names an account: an existing one (found by username, or by e-mail address) is given
the tester role and invited; a new one is made with the tester role, no password and a one-time
log-in link (the welcome page: the link works until a password is chosen, for
settings.PASSWORD_RESET_TIMEOUT). Testers can be added and removed while a plan runs; a removed
tester keeps what they answered but can no longer open the test.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.contrib.auth.tokens import default_token_generator
from django.contrib.auth.validators import UnicodeUsernameValidator
from django.core.exceptions import ValidationError
from django.core.validators import validate_email
from django.db import transaction
from django.urls import reverse
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode
from django.utils.translation import gettext as _

from accounts import inputs
from accounts.roles import PARTICIPANT, TESTER
from humantest.models import TestPlan

#: The most people one invitation takes.
INVITE_LIMIT = 5000


class InvitationRefused(ValueError):
    """A list that cannot be taken: says which line and why. Nothing is made or changed."""


@dataclass(frozen=True)
class Invited:
    username: str
    email: str
    new: bool
    link: str  # the one-time log-in link (a path), for accounts without a password


def entries(text: str, where: str | None = None) -> list[tuple[str, str]]:
    """(where, username or e-mail) from pasted lines or a CSV (first column, or the column named
    username or email; a header line is recognised and skipped); `where` names the lines, with
    %(number)s for the line's number ("line %(number)s" when None)."""
    if where is None:
        where = _("line %(number)s")
    if len(text) > 2_000_000:
        raise InvitationRefused(_("the list is larger than 2 MB"))
    rows = list(csv.reader(io.StringIO(text.replace("\t", ","))))
    column = 0
    found: list[tuple[str, str]] = []
    for number, row in enumerate(rows, start=1):
        cells = [cell.strip() for cell in row]
        if not any(cells):
            continue
        if number == 1 and any(cell.lower() in ("username", "email", "e-mail") for cell in cells):
            column = next(
                i for i, cell in enumerate(cells) if cell.lower() in ("username", "email", "e-mail")
            )
            continue
        value = cells[column] if column < len(cells) else ""
        if value:
            found.append((where % {"number": number}, value))
    if len(found) > INVITE_LIMIT:
        raise InvitationRefused(_("at most %(limit)s people an invitation") % {"limit": INVITE_LIMIT})
    return found


def invite(plan: TestPlan, *texts: str, invited_by=None) -> list[Invited]:
    """Invite everybody the lists name to `plan` (a pasted list, a CSV file: each read on its own);
    InvitationRefused names the first bad line."""
    users = get_user_model().objects
    checked: list[tuple[str, str]] = []  # (username, email)
    names = (_("line %(number)s"), _("file, line %(number)s"))
    found = [
        entry for index, text in enumerate(texts) if text for entry in entries(text, names[min(index, 1)])
    ]
    if len(found) > INVITE_LIMIT:
        raise InvitationRefused(_("at most %(limit)s people an invitation") % {"limit": INVITE_LIMIT})
    for where, value in found:
        try:
            value = inputs.name(value, where, max_length=254)
        except inputs.InputRefused as error:
            raise InvitationRefused(f"{where}: {error.message}") from None
        if "@" in value:
            try:
                validate_email(value)
            except ValidationError:
                raise InvitationRefused(
                    _("%(where)s: %(value)r is not an e-mail address") % {"where": where, "value": value}
                ) from None
            checked.append(("", value.lower()))
        else:
            try:
                UnicodeUsernameValidator()(value)
            except ValidationError:
                raise InvitationRefused(
                    _("%(where)s: %(value)r is not a username (letters, digits and @.+-_ only)")
                    % {"where": where, "value": value}
                ) from None
            if len(value) > 150:
                raise InvitationRefused(
                    _("%(where)s: a username has at most 150 characters") % {"where": where}
                )
            checked.append((value, ""))
    if not checked:
        raise InvitationRefused(_("the list names nobody: one username or e-mail address a line"))
    tester_group = Group.objects.get_or_create(name=TESTER)[0]
    made: list[Invited] = []
    with transaction.atomic():
        for username, email in dict.fromkeys(checked):
            user = (
                users.filter(username=username).first()
                if username
                else users.filter(email__iexact=email).order_by("pk").first()
            )
            new = user is None
            if new:
                user = users.create_user(username=username or free_username(email), email=email)
            elif user.groups.filter(name=PARTICIPANT).exists():
                raise InvitationRefused(
                    _("%(username)s is a study participant's account, not a tester's")
                    % {"username": user.username}
                )
            user.groups.add(tester_group)
            plan.testers.add(user)
            link = "" if user.has_usable_password() else welcome_link(user)
            made.append(Invited(username=user.username, email=user.email, new=new, link=link))
    return made


def free_username(email: str) -> str:
    """A username for a new account from its e-mail address's local part, made unique."""
    stem = re.sub(r"[^\w.@+-]", "", email.split("@", 1)[0])[:140] or "tester"
    users = get_user_model().objects
    candidate, number = stem, 1
    while users.filter(username=candidate).exists():
        number += 1
        candidate = f"{stem}{number}"
    return candidate


def welcome_link(user) -> str:
    """The one-time log-in link of an account without a password: it chooses one, then logs in."""
    return reverse(
        "welcome",
        args=[urlsafe_base64_encode(force_bytes(user.pk)), default_token_generator.make_token(user)],
    )


def remove_testers(plan: TestPlan, usernames: list[str]) -> int:
    """Take testers off a plan: they can no longer open it (what they answered is kept)."""
    people = list(plan.testers.filter(username__in=usernames))
    plan.testers.remove(*people)
    return len(people)
