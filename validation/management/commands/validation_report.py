"""python manage.py validation_report <plan> [--json]: a validation plan's estimates, as on its page."""

import json

from django.core.management.base import BaseCommand, CommandError

from validation import selectors
from validation.checks import check_for
from validation.models import Plan


class Command(BaseCommand):
    help = (
        "Print a validation plan's error-rate estimates (overall, per criterion, per stratum), the "
        "validators' agreement, the failing steps and templates, and the items every validator rejected."
    )

    def add_arguments(self, parser):
        parser.add_argument("plan", help="the plan's id or exact name")
        parser.add_argument(
            "--json", action="store_true", help="print everything as JSON, with the plan's parameters"
        )
        parser.add_argument(
            "--resamples", type=int, default=1000, help="bootstrap resamples for agreement intervals"
        )
        parser.add_argument("--seed", type=int, default=0, help="seed of the bootstrap")

    def handle(self, *args, **options):
        plan = find_plan(options["plan"])
        report = selectors.report(plan, resamples=options["resamples"], seed=options["seed"])
        if options["json"]:
            self.stdout.write(
                json.dumps(
                    {"parameters": selectors.parameters(plan), "draw": plan.draw, "report": report.as_dict()},
                    indent=2,
                    ensure_ascii=False,
                )
            )
            return
        labels = {
            criterion.name: criterion.label for criterion in check_for(plan.dataset.benchmark).criteria()
        }
        write = self.stdout.write
        write(
            f"{plan.name} on {plan.dataset}: {report.sample_size} of {report.population_size} items sampled "
            f"({plan.allocation} allocation, seed {plan.seed}), {report.judged} checked"
        )
        if report.error is None:
            write("nothing checked yet")
            return
        write(
            f"item error rate {interval(report.error)} (stratified, standard error "
            f"{report.error['standard_error']:.4f}; pooled {report.error['pooled_value']:.4f})"
        )
        for name, estimate in report.criteria.items():
            if estimate:
                write(f"  {labels.get(name, name)}: {interval(estimate)}")
        write("by stratum:")
        for stratum in report.strata:
            rate = (
                "–"
                if stratum["error_rate"] is None
                else (f"{stratum['error_rate']:.4f} [{stratum['low']:.4f}, {stratum['high']:.4f}]")
            )
            write(
                f"  {stratum['stratum']}: {stratum['errors']}/{stratum['judged']} of {stratum['population_size']} -> {rate}"
            )
        if report.agreement:
            write("agreement:")
            for row in report.agreement:
                value = "undefined" if row["value"] is None else f"{row['value']:.3f}"
                if row["low"] is not None:
                    value += f" [{row['low']:.3f}, {row['high']:.3f}]"
                write(f"  {row['question']} {row['statistic']}: {value} ({row['items']} items)")
        if report.failing_steps:
            write(
                "failing steps: "
                + ", ".join(f"{row['step']} ({row['count']})" for row in report.failing_steps)
            )
        if report.rejected_by_all:
            write("rejected by every validator: " + ", ".join(row["item"] for row in report.rejected_by_all))


def interval(estimate: dict) -> str:
    return f"{estimate['value']:.4f} [{estimate['low']:.4f}, {estimate['high']:.4f}]"


def find_plan(key: str) -> Plan:
    plans = Plan.objects.filter(pk=int(key)) if key.isdigit() else Plan.objects.filter(name=key)
    plan = plans.select_related("dataset").first()
    if plan is None:
        raise CommandError(f"no validation plan {key!r} (give its id or its exact name)")
    return plan
