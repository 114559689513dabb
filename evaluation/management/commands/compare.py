"""python manage.py compare <dataset> <row A> <row B> [--metric M] [--resamples N] [--json]"""

import json

from django.core.management.base import BaseCommand, CommandError

from benchmarks.selectors import DatasetNotFound, find_dataset
from evaluation.comparison import ComparisonInputError
from evaluation.selectors import RowNotFound, compare_report_rows


class Command(BaseCommand):
    help = (
        "Compare two rows of a dataset's report (models, Human, testers) on the units both answered: "
        "the paired difference per column with a BCa bootstrap interval, and McNemar's exact test for "
        "right/wrong scores (Holm-adjusted over the table)."
    )

    def add_arguments(self, parser):
        parser.add_argument("dataset", help="the dataset's id, or its name when that is unique")
        parser.add_argument("row_a", help='a report row\'s label, e.g. "ResNet-50"')
        parser.add_argument("row_b", help='another row\'s label, e.g. "Human"')
        parser.add_argument("--metric", default=None, help='only the columns with this label, e.g. "Acc"')
        parser.add_argument(
            "--resamples", type=int, default=2000, help="bootstrap resamples (0: no interval)"
        )
        parser.add_argument(
            "--by", default=None, help="also compare within each value of a per-unit field (e.g. target_step)"
        )
        parser.add_argument("--json", action="store_true", help="print the comparison as JSON")

    def handle(self, *args, **options):
        try:
            dataset = find_dataset(options["dataset"])
            result = compare_report_rows(
                dataset,
                options["row_a"],
                options["row_b"],
                metric=options["metric"],
                by=options["by"],
                resamples=options["resamples"],
            )
        except (DatasetNotFound, RowNotFound, ComparisonInputError) as error:
            raise CommandError(str(error)) from None
        if options["metric"] and not result["columns"]:
            raise CommandError(f"{dataset.spec.title} reports have no column {options['metric']!r}")
        if options["json"]:
            self.stdout.write(json.dumps(result, ensure_ascii=False))
            return
        self.stdout.write(
            f"{dataset}: {result['a']} (A) against {result['b']} (B), on the units both answered"
        )
        for column in result["columns"]:
            name = " ".join(part for part in (column["group"], column["label"]) if part)
            if "skipped" in column:
                self.stdout.write(f"  {name}: {column['skipped']}")
                continue
            line = (
                f"  {name}: n={column['n']}  A {column['mean_a']:.4f}  B {column['mean_b']:.4f}  "
                f"A-B {column['difference']:+.4f}"
            )
            if column["low"] is not None:
                line += f" [{column['low']:+.4f}, {column['high']:+.4f}]"
            test = column.get("mcnemar")
            if test:
                line += (
                    f"  McNemar: {test['only_a_right']} units only A right, {test['only_b_right']} only B right, "
                    f"p={test['p_value']:.4g} (Holm {test['p_holm']:.4g})"
                )
            self.stdout.write(line)
            for stratum in column.get("strata", ()):
                low = (
                    f" [{stratum['low']:+.4f}, {stratum['high']:+.4f}]" if stratum["low"] is not None else ""
                )
                test = stratum.get("mcnemar")
                p = f"  p={test['p_value']:.4g} (Holm {test['p_holm']:.4g})" if test else ""
                self.stdout.write(
                    f"    {column['by']}={stratum['stratum']}: n={stratum['n']}  A-B {stratum['difference']:+.4f}{low}{p}"
                )
