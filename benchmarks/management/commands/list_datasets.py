"""python manage.py list_datasets [--json]"""

import json

from django.core.management.base import BaseCommand

from benchmarks.models import Dataset
from benchmarks.selectors import dataset_summary


class Command(BaseCommand):
    help = "List the datasets in the catalog: id, benchmark, name, split, version, item count."

    def add_arguments(self, parser):
        parser.add_argument("--json", action="store_true", help="print a JSON list")

    def handle(self, *args, **options):
        rows = [dataset_summary(dataset) for dataset in Dataset.objects.order_by("pk")]
        if options["json"]:
            self.stdout.write(json.dumps(rows, ensure_ascii=False))
            return
        if not rows:
            self.stdout.write("No datasets. Run `python manage.py load_demo` or `import_dataset`.")
            return
        header = ("id", "benchmark", "name", "split", "version", "items")
        table = [header] + [tuple(str(row[key]) for key in header) for row in rows]
        widths = [max(len(line[column]) for line in table) for column in range(len(header))]
        for line in table:
            self.stdout.write(
                "  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True)).rstrip()
            )
