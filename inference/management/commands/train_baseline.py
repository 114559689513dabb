"""python manage.py train_baseline <benchmark> --data DIR --out CKPT [--epochs E] [--device cpu|cuda]
[--batch-size N] [--seed S] [--encoder NAME] [--fusion NAME] [--resume CKPT] [--val DIR] [--workers K]"""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from benchmarks import registry
from inference.baselines import CPU, DEVICES, BaselineRefused, import_baseline


class Command(BaseCommand):
    help = (
        "Train a benchmark's learned baseline on a folder of generated data and write its checkpoint "
        "after every epoch. The benchmark's baseline does the work; this command only finds it."
    )

    def add_arguments(self, parser):
        parser.add_argument("benchmark", help="the benchmark's name")
        parser.add_argument(
            "--data", type=Path, required=True, help="training folder (from the benchmark's generator)"
        )
        parser.add_argument(
            "--out", type=Path, required=True, help="checkpoint file to write (replaced each epoch)"
        )
        parser.add_argument(
            "--val", type=Path, default=None, help="held-out folder: accuracy printed per epoch"
        )
        parser.add_argument("--epochs", type=int, default=10)
        parser.add_argument("--device", default=CPU, choices=DEVICES)
        parser.add_argument("--batch-size", type=int, default=32)
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--encoder", default=None, help="image encoder (the baseline's own names)")
        parser.add_argument(
            "--fusion", default=None, help="how the two images are combined (the baseline's own names)"
        )
        parser.add_argument("--resume", type=Path, default=None, help="checkpoint to continue training from")
        parser.add_argument("--workers", type=int, default=0, help="processes that decode images (default 0)")

    def handle(self, *args, **options):
        try:
            spec = registry.get(options["benchmark"])
        except registry.UnknownBenchmark as error:
            raise CommandError(str(error)) from None
        learned = [path for path in spec.baselines if import_baseline(path).learned]
        if not learned:
            raise CommandError(f"{spec.title} has no learned baseline to train")
        baseline = import_baseline(learned[0])(spec)
        if not callable(getattr(baseline, "train", None)):
            raise CommandError(f"{spec.title}'s {baseline.title} cannot be trained here")
        for name in ("data", "val"):
            folder = options[name]
            if folder is not None and not folder.is_dir():
                raise CommandError(f"--{name} {folder}: no such folder")
        if options["resume"] is not None and not options["resume"].is_file():
            raise CommandError(f"--resume {options['resume']}: no such file")
        for name in ("epochs", "batch_size"):
            if options[name] < 1:
                raise CommandError(f"--{name.replace('_', '-')} must be at least 1, got {options[name]}")
        config = {key: options[key] for key in ("encoder", "fusion") if options[key] is not None}
        try:
            trained = baseline.train(
                data=options["data"],
                out=options["out"],
                epochs=options["epochs"],
                device=options["device"],
                batch_size=options["batch_size"],
                seed=options["seed"],
                config=config,
                resume=options["resume"],
                val=options["val"],
                workers=options["workers"],
                log=self.stdout.write,
            )
        except (BaselineRefused, ValueError) as error:
            raise CommandError(str(error)) from None
        except OSError as error:
            raise CommandError(f"cannot write {options['out']}: {error.strerror or error}") from None
        self.stdout.write(
            f"{baseline.title}: {trained['epochs']} epochs on {trained['samples']} samples -> {options['out']}"
        )
