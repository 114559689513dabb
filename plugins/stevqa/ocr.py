"""The OCR engine that reads STE-VQA's scene text (pure, no Django).

RapidOCR: PaddleOCR's PP-OCRv4 Chinese + English text detection and recognition models in ONNX,
shipped inside the `rapidocr-onnxruntime` wheel (nothing is downloaded) and run on the CPU. Two
parts of Yardstick read scene text with it, each keeping its own engine: the annotation check of
an answer against its evidence (plugins.stevqa.evidence) and the OCR baselines (plugins.stevqa.baselines).
This module holds what they share: how an engine is built.
"""

from __future__ import annotations

from typing import Any

#: ONNX Runtime threads per model: one, so that a worker process takes one core per call.
THREADS = 1
#: The text detector shrinks an input whose longer side exceeds this many pixels, and never
#: enlarges one: the engine's default ("min", 736) blows a one-line crop up to 736 pixels high
#: and takes over a second per call.
DETECTION_LIMIT = 960


def new_engine(*, threads: int = THREADS) -> Any:
    """A new RapidOCR engine (loading the models takes about half a second).

    A call on the engine is thread-safe as long as no per-call options that change its detector's
    settings are passed; `use_det`, `use_cls` and `use_rec` are safe.
    """
    from rapidocr_onnxruntime import RapidOCR

    return RapidOCR(
        intra_op_num_threads=threads,
        inter_op_num_threads=threads,
        det_limit_type="max",
        det_limit_side_len=DETECTION_LIMIT,
    )
