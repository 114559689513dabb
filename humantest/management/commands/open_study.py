"""python manage.py open_study <plan> --platform prolific|mturk|lab [settings...]: open a plan to participants."""

import json
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.urls import reverse

from humantest import studies
from humantest.management.commands._plans import find_plan


class Command(BaseCommand):
    help = (
        "Open a test plan to participants: a new entry link for the platform (its earlier link is "
        "revoked) and, if given, the study's settings. Prints the link to paste into the platform."
    )

    def add_arguments(self, parser):
        parser.add_argument("plan", help="the test plan's id, or its name when that is unique")
        parser.add_argument("--platform", required=True, choices=["prolific", "mturk", "lab"])
        parser.add_argument("--lab-ids", type=Path, help="a lab link's participant ids, one a line")
        parser.add_argument("--consent", type=Path, help="the consent text, a Markdown file")
        parser.add_argument("--cap", type=int, help="at most this many participants")
        parser.add_argument("--completion-code")
        parser.add_argument("--completion-url", help="the whole address the platform gives")
        parser.add_argument("--screen-out-code")
        parser.add_argument("--screen-out-url")
        parser.add_argument("--no-consent-code")
        parser.add_argument("--no-consent-url")
        parser.add_argument("--currency")
        parser.add_argument("--base-pay")
        parser.add_argument("--bonus-per-correct")
        parser.add_argument("--bonus-threshold", type=float)
        parser.add_argument("--bonus-above")
        parser.add_argument("--bonus-cap")
        parser.add_argument(
            "--site", default="http://127.0.0.1:8000", help="the address people reach the site at"
        )
        parser.add_argument("--json", action="store_true", help="print the link and the settings as JSON")

    def handle(self, *args, **options):
        plan = find_plan(options["plan"])
        changes = {
            name: options[name]
            for name in (
                "completion_code",
                "completion_url",
                "screen_out_code",
                "screen_out_url",
                "no_consent_code",
                "no_consent_url",
                "currency",
                "base_pay",
                "bonus_per_correct",
                "bonus_threshold",
                "bonus_above",
                "bonus_cap",
            )  # fmt: skip
            if options[name] is not None
        }
        if options["cap"] is not None:
            changes["participant_cap"] = options["cap"]
        try:
            if options["consent"] is not None:
                changes["consent_text"] = options["consent"].read_text(encoding="utf-8")
            lab_ids = options["lab_ids"].read_text(encoding="utf-8") if options["lab_ids"] else ()
            study = studies.update_study(plan, **changes)
            link = studies.open_link(plan, options["platform"], lab_ids=lab_ids)
        except OSError as error:
            raise CommandError(str(error)) from None
        except studies.StudyRefused as error:
            raise CommandError(f"{error.field or error.code}: {error.message}") from None
        url = options["site"].rstrip("/") + reverse("join", args=[link.token])
        from humantest.study_views import template_query

        pasted = url + template_query(link)
        if options["json"]:
            self.stdout.write(
                json.dumps(
                    {
                        "plan": plan.pk,
                        "platform": link.platform,
                        "url": pasted,
                        "consent_version": study.consent_version,
                        "participant_cap": study.participant_cap,
                    }
                )
            )
            return
        self.stdout.write(f"{plan.name}: {link.get_platform_display()} link open")
        self.stdout.write(pasted)
        if not settings.ALLOWED_HOSTS or options["site"].startswith("http://127.0.0.1"):
            self.stdout.write("(give --site the address participants reach this server at)")
