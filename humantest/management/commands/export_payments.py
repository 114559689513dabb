"""python manage.py export_payments <plan> [--format prolific|mturk|full] [--batch N]: pay participants."""

from django.core.management.base import BaseCommand, CommandError

from humantest import payments
from humantest.management.commands._plans import find_plan


class Command(BaseCommand):
    help = (
        "Write a batch of a plan's payments: by default a new batch of every finished participant not "
        "paid yet (each participant is in one batch only), or --batch N again. --format prolific "
        "(participant_id,amount: Prolific's bulk bonus), mturk (WorkerId,AssignmentId,BonusAmount,Reason) "
        "or full (everything, with time and status)."
    )

    def add_arguments(self, parser):
        parser.add_argument("plan", help="the test plan's id, or its name when that is unique")
        parser.add_argument("--format", default="full", choices=payments.FORMATS)
        parser.add_argument("--batch", type=int, help="write this earlier batch again instead of making one")

    def handle(self, *args, **options):
        plan = find_plan(options["plan"])
        if options["batch"] is not None:
            batch = plan.payment_batches.filter(number=options["batch"]).first()
            if batch is None:
                raise CommandError(f"{plan.name} has no payment batch {options['batch']}")
        else:
            if not hasattr(plan, "study"):
                raise CommandError(f"{plan.name} is not open to participants (manage.py open_study)")
            batch = payments.new_batch(plan)
            if batch is None:
                raise CommandError(
                    f"{plan.name}: nobody is waiting to be paid (every finished participant is in a batch)"
                )
            self.stderr.write(f"batch {batch.number}: {batch.payments.count()} participants")
        self.stdout.write(payments.batch_csv(batch, options["format"]), ending="")
