"""python manage.py invite_testers <plan> <file.csv>: invite testers; new accounts get log-in links."""

import csv
import sys
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from humantest import invitations
from humantest.management.commands._plans import find_plan


class Command(BaseCommand):
    help = (
        "Invite the people a file names (usernames or e-mail addresses, one a line, or a CSV with a "
        "username or email column) to a test plan. Prints a CSV: username, email, whether the account "
        "is new, its one-time log-in link (new accounts)."
    )

    def add_arguments(self, parser):
        parser.add_argument("plan", help="the test plan's id, or its name when that is unique")
        parser.add_argument("file", type=Path, help="the list ('-' reads standard input)")
        parser.add_argument(
            "--site", default="http://127.0.0.1:8000", help="the address people reach the site at"
        )

    def handle(self, *args, **options):
        plan = find_plan(options["plan"])
        try:
            text = (
                sys.stdin.read()
                if str(options["file"]) == "-"
                else options["file"].read_text(encoding="utf-8")
            )
            made = invitations.invite(plan, text)
        except OSError as error:
            raise CommandError(str(error)) from None
        except invitations.InvitationRefused as error:
            raise CommandError(str(error)) from None
        writer = csv.writer(self.stdout, lineterminator="\n")
        writer.writerow(["username", "email", "new_account", "log_in_link"])
        for entry in made:
            link = options["site"].rstrip("/") + entry.link if entry.link else ""
            writer.writerow([entry.username, entry.email, "yes" if entry.new else "no", link])
