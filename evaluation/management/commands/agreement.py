"""python manage.py agreement <dataset> [--json]: agreement between the people who answered a dataset."""

import json

from django.core.management.base import BaseCommand, CommandError

from benchmarks.selectors import DatasetNotFound, find_dataset
from evaluation.agreement import AgreementInputError
from evaluation.agreement_reports import dataset_agreement


class Command(BaseCommand):
    help = (
        "Agreement between the human and annotator submissions of a dataset: percent agreement, "
        "Krippendorff's alpha, Fleiss' kappa, and where answers hold text or regions, text similarity "
        "and region IoU, "
        "each with a bootstrap 95% interval and the number of items behind it."
    )

    def add_arguments(self, parser):
        parser.add_argument("dataset", help="the dataset's id, or its name when that is unique")
        parser.add_argument(
            "--resamples", type=int, default=1000, help="bootstrap resamples (0: no intervals)"
        )
        parser.add_argument("--json", action="store_true", help="print the result as JSON")

    def handle(self, *args, **options):
        try:
            dataset = find_dataset(options["dataset"])
        except DatasetNotFound as error:
            raise CommandError(str(error)) from None
        if options["resamples"] < 0:
            raise CommandError("--resamples must be 0 or more")
        try:
            result = dataset_agreement(dataset, resamples=options["resamples"])
        except AgreementInputError as error:
            raise CommandError(f"{dataset}: {error}") from None
        if options["json"]:
            self.stdout.write(
                json.dumps({k: v for k, v in result.items() if k != "text"}, ensure_ascii=False)
            )
            return
        self.stdout.write(
            f"{dataset}: {len(result['raters'])} raters, {result['items_rated']} items answered"
        )
        for line in result["text"]:
            self.stdout.write(f"  {line}")
