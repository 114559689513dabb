"""python manage.py rescore [<dataset>] [--benchmark B] [--json]"""

import json
import time

from django.core.management.base import BaseCommand, CommandError

from benchmarks import registry
from benchmarks.selectors import DatasetNotFound, find_dataset
from evaluation.models import Submission
from evaluation.services import rescore


class Command(BaseCommand):
    help = (
        "Score stored submissions again with the metric code as it is now (after an upgrade that "
        "changed a metric: a new variant, renamed summary keys). Answers are not touched; each "
        "submission gets a new scoring time, so cached comparisons are computed again."
    )

    def add_arguments(self, parser):
        parser.add_argument("dataset", nargs="?", help="one dataset (its id, or its name when unique)")
        parser.add_argument("--benchmark", help="every dataset of this benchmark")
        parser.add_argument("--json", action="store_true", help="print what was rescored as JSON")

    def handle(self, *args, **options):
        submissions = Submission.objects.exclude(scored_at=None).select_related("dataset").order_by("pk")
        if options["dataset"]:
            try:
                submissions = submissions.filter(dataset=find_dataset(options["dataset"]))
            except DatasetNotFound as error:
                raise CommandError(str(error)) from None
        elif options["benchmark"]:
            try:
                spec = registry.get(options["benchmark"])
            except registry.UnknownBenchmark as error:
                raise CommandError(str(error)) from None
            submissions = submissions.filter(dataset__benchmark=spec.name)
        else:
            raise CommandError("name a dataset, or --benchmark B")
        done = []
        for submission in submissions:
            started = time.perf_counter()
            try:
                rescore(submission)
            except ValueError as error:
                raise CommandError(f"submission {submission.pk} ({submission.name}): {error}") from None
            done.append(
                {
                    "submission": submission.pk,
                    "dataset": submission.dataset_id,
                    "name": submission.name,
                    "origin": submission.origin,
                    "seconds": round(time.perf_counter() - started, 2),
                }
            )
            if not options["json"]:
                self.stdout.write(
                    f"{submission.dataset}: {submission.name} rescored in {done[-1]['seconds']} s"
                )
        if options["json"]:
            self.stdout.write(json.dumps(done, indent=2))
        elif not done:
            self.stdout.write("no scored submission to rescore")
