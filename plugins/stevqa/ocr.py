"""The OCR engine that reads STE-VQA's scene text (pure, no Django).

RapidOCR: PaddleOCR's PP-OCRv4 Chinese + English text detection and recognition models in ONNX,
shipped inside the `rapidocr-onnxruntime` wheel (nothing is downloaded) and run on the CPU. Two
parts of Yardstick read scene text with it, each keeping its own engine: the annotation check of
an answer against its evidence (plugins.stevqa.evidence) and the OCR baselines (plugins.stevqa.baselines).
This module holds what they share: how an engine is built.

It also writes a ground-truth file's OCR tokens (`attach_tokens`, run by ``manage.py stevqa_ocr``):
the scoring path has no images (a dataset's units reach the metric as official records), so the
metric's OCR variants read each question's tokens from its record's ``ocr_tokens`` instead of
running OCR while scoring.
"""

from __future__ import annotations

from collections.abc import Callable
from string import Formatter
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


#: A reader for `attach_tokens`: an image's name -> its tokens ``{"text", "quad"}``, or None when
#: there is no such image.
TokenReader = Callable[[str], list[dict[str, Any]] | None]


def check_image_pattern(pattern: str) -> None:
    """An image-name pattern may name no field but {question_id} (a ValueError says so)."""
    try:
        fields = {name for _, name, _, _ in Formatter().parse(pattern) if name is not None}
    except ValueError as error:
        raise ValueError(f"image pattern {pattern!r}: {error}") from None
    others = sorted(f"{{{name}}}" for name in fields - {"question_id"})
    if others:
        raise ValueError(f"image pattern {pattern!r} may only name {{question_id}}, not {', '.join(others)}")


def record_image(record: dict[str, Any], image_pattern: str = "") -> str | None:
    """The image a ground-truth record's questions are about: its "image" (training files), else
    `image_pattern` filled with its question_id (test files name no image); None without either."""
    image = record.get("image")
    if isinstance(image, str) and image:
        return image
    if image_pattern and "question_id" in record:
        return image_pattern.format(question_id=record["question_id"])
    return None


def attach_tokens(
    document: list[Any],
    read: TokenReader,
    *,
    image_pattern: str = "",
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, int]:
    """Give every record of a ground-truth document (a checked STE-VQA file, either layout) the OCR
    tokens of its image as ``ocr_tokens``, in place; returns how many records got tokens
    ("read", "tokens" in all) and how many did not ("no_image": the record names none;
    "missing": no such image). A record that gets none keeps what it had: the metric then says OCR
    is unavailable for its questions. Each image is read once.
    """
    counts = {"records": len(document), "read": 0, "tokens": 0, "no_image": 0, "missing": 0}
    known: dict[str, list[dict[str, Any]] | None] = {}
    for done, record in enumerate(document, start=1):
        image = record_image(record, image_pattern)
        if image is None:
            counts["no_image"] += 1
        else:
            if image not in known:
                known[image] = read(image)
            tokens = known[image]
            if tokens is None:
                counts["missing"] += 1
            else:
                record["ocr_tokens"] = tokens
                counts["read"] += 1
                counts["tokens"] += len(tokens)
        if progress is not None:
            progress(done, len(document))
    return counts
