"""GPU check: TranceNet trained for a fixed number of steps on CUDA, its speed and peak GPU memory.

Usage:  .venv/bin/python -m perf.gpu_check [--samples 1024] [--epochs 4] [--batch-size 64]
        [--encoder resnet18] [--out perf/results/gpu_check.md]

Run by scripts/gpu-check.sh on a machine with an NVIDIA GPU (with the CUDA build of the pinned
PyTorch). It renders `--samples` TRANCE samples (every CPU core), trains the TVR paper's
ResNet-18-concat TranceNet on them for `--epochs` epochs (steps = epochs x samples / batch size),
and writes the device, the training samples per second, the loss per epoch and the peak GPU memory
(torch.cuda.max_memory_allocated) to `--out`. It refuses to run without a CUDA GPU: the CPU
figures in perf/results/inference_throughput.md stand until it has run.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=1024)
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--encoder", default="resnet18", choices=["cnn", "resnet18"])
    parser.add_argument("--out", type=Path, default=ROOT / "perf" / "results" / "gpu_check.md")
    args = parser.parse_args()

    import torch

    if not torch.cuda.is_available():
        sys.exit("gpu_check: torch sees no CUDA GPU here (a CUDA build of torch and a GPU are needed)")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "yardstick.settings")
    from plugins.trance.baselines import TranceNetBaseline
    from plugins.trance.generator import generate
    from plugins.trance.spec import SPEC

    device_name = torch.cuda.get_device_name(0)
    lines_out: list[str] = []
    with tempfile.TemporaryDirectory(prefix="yardstick-gpu-check-") as workdir:
        data = Path(workdir) / "samples"
        started = time.perf_counter()
        generate(data, count=args.samples, seed=1, workers=os.cpu_count() or 1)
        render_seconds = time.perf_counter() - started
        log: list[str] = []
        torch.cuda.reset_peak_memory_stats()
        started = time.perf_counter()
        trained = TranceNetBaseline(SPEC).train(
            data=data,
            out=Path(workdir) / "gpu.pt",
            epochs=args.epochs,
            batch_size=args.batch_size,
            seed=1,
            config={"encoder": args.encoder},
            device="cuda",
            workers=min(8, os.cpu_count() or 1),
            log=log.append,
        )
        torch.cuda.synchronize()
        train_seconds = time.perf_counter() - started
        peak = torch.cuda.max_memory_allocated() / 2**20
    steps = args.epochs * -(-args.samples // args.batch_size)
    lines_out += [
        "# GPU check: TranceNet training on CUDA",
        "",
        f"Run {time.strftime('%Y-%m-%d %H:%M:%S')}. Command: `.venv/bin/python -m perf.gpu_check "
        f"--samples {args.samples} --epochs {args.epochs} --batch-size {args.batch_size} --encoder {args.encoder}`.",
        f"Device: {device_name}; torch {torch.__version__}, CUDA {torch.version.cuda}; "
        f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}.",
        "",
        f"{args.samples} samples rendered in {render_seconds:.1f} s; {args.encoder}-concat TranceNet "
        f"trained for {args.epochs} epochs ({steps} steps of {args.batch_size}) in {train_seconds:.1f} s: "
        f"{args.epochs * args.samples / train_seconds:.0f} samples/s including data loading; "
        f"peak GPU memory {peak:.0f} MiB.",
        "",
        "| epoch | loss |",
        "|---|---|",
        *(f"| {line['epoch']} | {line['loss']} |" for line in trained["history"]),
        "",
    ]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(lines_out))
    print("\n".join(lines_out))


if __name__ == "__main__":
    main()
