#!/usr/bin/env bash
# The GPU checks of the inference work, in one go, on a machine with an NVIDIA GPU:
#   1. the inference tests that need CUDA (pytest -m cuda: TranceNet's answers on CUDA against the
#      CPU's, training steps on CUDA);
#   2. TranceNet (ResNet-18, concat) trained for a fixed number of steps: samples/s, peak GPU memory
#      (perf.gpu_check -> perf/results/gpu_check.md);
#   3. inference throughput on CUDA, the pipeline against the raw forward pass, with and without the
#      decoded-inputs cache (perf.inference_throughput --device cuda -> perf/results/inference_throughput_cuda.md).
# Needs the project's environment with a CUDA build of the pinned torch (PYTHON=... to choose the
# interpreter; default .venv/bin/python). Writes a log of everything to perf/results/gpu_check.log.
# Exit status: 2 without a GPU, else the number of steps that failed.
set -uo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-.venv/bin/python}
RESULTS=perf/results
LOG=$RESULTS/gpu_check.log
mkdir -p "$RESULTS"
if ! "$PYTHON" -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)'; then
  echo "gpu-check: torch sees no CUDA GPU here: nothing was checked" >&2
  exit 2
fi
export PYTHONUNBUFFERED=1 DJANGO_SETTINGS_MODULE=yardstick.settings
exec > >(tee "$LOG") 2>&1
failed=0
date -u
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv 2>/dev/null || true
echo "== 1. tests on CUDA"
"$PYTHON" -m pytest -q -p no:cacheprovider -m cuda plugins tests/inference || failed=$((failed + 1))
echo "== 2. training for a fixed number of steps"
"$PYTHON" -m perf.gpu_check --out "$RESULTS/gpu_check.md" || failed=$((failed + 1))
echo "== 3. inference throughput on CUDA"
"$PYTHON" -m perf.inference_throughput --device cuda --workers 0 4 8 --out "$RESULTS/inference_throughput_cuda.md" \
  || failed=$((failed + 1))
echo "== done: $failed step(s) failed"
exit "$failed"
