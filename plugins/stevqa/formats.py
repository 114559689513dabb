"""STE-VQA official files <-> catalog records (pure, no Django).

Two released layouts are read and written back unchanged:

* test ground truth: a JSON list of
  ``{"question_id": int, "question": str, "answer": str, "evidence": [8 coordinates]}``;
  one catalog item per question.
* training files: a JSON list of ``{"id", "image", "annotation": [{"question", "answer",
  "evidence"}, ...]}``; one catalog item per image, its QA pairs together.

Every QA pair gets a question id whatever the layout, so that predictions name it the same way:
in a test file it is the record's own ``question_id``; in a training file, which has none, the
pairs are numbered 0, 1, 2, ... in file order (the first image's pairs first), kept in the
item's payload as ``question_ids`` beside ``questions`` and left out again on export.

The evidence is a quadrilateral: eight coordinates x1, y1, ..., x4, y4, stored as strings in
the released files (numbers are accepted too and kept as they came). Answers and evidence are
ground truth; the question text and the image are what people are shown.

Optional, Yardstick's own: ``ocr_tokens``, the text OCR reads in the image, as
``[{"text": str, "quad": [8 coordinates]}, ...]`` (``manage.py stevqa_ocr`` writes it): on a test
record, or on a training record for all its pairs. The metric's OCR variants take an answer-only
prediction's evidence from it. It is ground truth, like every field not shown, and is checked at
import and written back on export.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from typing import Any

from benchmarks.records import (
    CatalogRecord,
    FormatError,
    ParsedFile,
    PreparedFile,
    RecordChecker,
    RecordError,
    indexed,
    load_json,
    parse_prepared,
    serialize_json_list,
    split_fields,
    type_name,
)

FILE_DESCRIPTION = "JSON list: test ground truth (question_id, question, answer, evidence) or training file (id, image, annotation)"

#: Language codes, as the released evaluator names them.
ENGLISH, CHINESE = "en", "ch"

#: The optional field holding the OCR tokens of a record's image (see the module docstring).
OCR_TOKENS = "ocr_tokens"

LAYOUT_TEST = "test"
LAYOUT_TRAIN = "train"


def is_chinese(text: str) -> bool:
    """The released evaluator's language rule: Chinese when any character is in U+4E00..U+9FA5."""
    return any("\u4e00" <= character <= "\u9fa5" for character in text)


def language(question: str) -> str:
    """CHINESE ("ch") when the question holds a character in U+4E00..U+9FA5, else ENGLISH ("en")."""
    return CHINESE if is_chinese(question) else ENGLISH


def quad_points(evidence: list[Any]) -> list[tuple[float, float]]:
    """A checked evidence list (8 numbers or numeric strings) as its four (x, y) corners."""
    values = [float(value) for value in evidence]
    return [(values[index], values[index + 1]) for index in range(0, 8, 2)]


def quad_problem(values: Any) -> tuple[str, str] | None:
    """Why `values` is not a quadrilateral of 8 numbers (or strings holding numbers), as (where
    inside it, such as "[2]" or "", and the message); None when it is one."""
    if not isinstance(values, list):
        return "", f"expected a list, got {type_name(values)}"
    if len(values) != 8:
        return "", f"a quadrilateral needs 8 numbers (x1, y1, ..., x4, y4), got {len(values)}"
    for index, value in enumerate(values):
        if isinstance(value, bool) or not isinstance(value, (int, float, str)):
            return f"[{index}]", f"expected a number, got {value!r}"
        try:
            number = float(value)
        except (ValueError, OverflowError):  # not a number, or an integer too large for a float
            number = math.nan
        if not math.isfinite(number):
            return f"[{index}]", f"expected a number, got {value!r}"
    return None


def check_evidence(checker: RecordChecker, record: Any, path: str = "") -> list[Any] | None:
    """Evidence must be a quadrilateral: a list of 8 numbers (or strings holding numbers)."""
    evidence = checker.get(record, "evidence", list, path)
    if evidence is None:
        return None
    problem = quad_problem(evidence)
    if problem is not None:
        name = f"{path}.evidence" if path else "evidence"
        checker.fail(f"{name}{problem[0]}", problem[1])
        return None
    return evidence


def ocr_tokens_problem(tokens: Any) -> tuple[str, str] | None:
    """Why `tokens` is not a list of OCR tokens ``{"text": str, "quad": [8 numbers]}``, as (where
    inside it, such as "[3].quad[2]", and the message); None when it is one. The first fault only:
    the tokens are machine-written, so one fault says the file is not what the tool wrote."""
    if not isinstance(tokens, list):
        return "", f"expected a list of tokens {{text, quad}}, got {type_name(tokens)}"
    for index, token in enumerate(tokens):
        if not isinstance(token, dict):
            return f"[{index}]", f"expected an object with text and quad, got {type_name(token)}"
        if not isinstance(token.get("text"), str):
            found = type_name(token["text"]) if "text" in token else "nothing"
            return f"[{index}].text", f"expected a string, got {found}"
        if "quad" not in token:
            return f"[{index}].quad", "missing field"
        problem = quad_problem(token["quad"])
        if problem is not None:
            return f"[{index}].quad{problem[0]}", problem[1]
    return None


def check_ocr_tokens(checker: RecordChecker, record: dict[str, Any], path: str = "") -> None:
    """The optional OCR tokens of a record (absent or null: no OCR for its image)."""
    tokens = record.get(OCR_TOKENS)
    if tokens is None:
        return
    problem = ocr_tokens_problem(tokens)
    if problem is not None:
        name = f"{path}.{OCR_TOKENS}" if path else OCR_TOKENS
        checker.fail(f"{name}{problem[0]}", problem[1])


def check_qa(checker: RecordChecker, record: Any, path: str = "") -> None:
    if not checker.is_object(record, path or "record"):
        return
    checker.get(record, "question", str, path)
    checker.get(record, "answer", str, path)
    check_evidence(checker, record, path)


def question_record_to_catalog(raw: Any, checker: RecordChecker) -> CatalogRecord | None:
    if not checker.is_object(raw):
        return None
    before = len(checker.errors)
    question_id = checker.get(raw, "question_id", int)
    check_qa(checker, raw)
    check_ocr_tokens(checker, raw)
    if len(checker.errors) > before:
        return None
    payload, hidden = split_fields(raw, ("question_id", "question"))
    return CatalogRecord(external_id=str(question_id), payload=payload, ground_truth=hidden)


def image_record_to_catalog(raw: Any, checker: RecordChecker, first_question_id: int) -> CatalogRecord | None:
    """An image with its QA pairs, numbered from `first_question_id` on."""
    if not checker.is_object(raw):
        return None
    before = len(checker.errors)
    image_id = checker.get(raw, "id", (int, str))
    image = checker.get(raw, "image", str)
    annotation = checker.get(raw, "annotation", list)
    for index, qa in enumerate(annotation or []):
        check_qa(checker, qa, f"annotation[{index}]")
    check_ocr_tokens(checker, raw)
    if len(checker.errors) > before:
        return None
    payload, hidden = split_fields(raw, ("id", "image"))
    payload["questions"] = [qa.get("question") for qa in annotation]
    payload["question_ids"] = list(range(first_question_id, first_question_id + len(annotation)))
    return CatalogRecord(
        external_id=str(image_id), payload=payload, ground_truth=hidden, media={"image": image}
    )


def numbered_images(document: list[Any]) -> list[tuple[str, Any]]:
    """Label each training record, paired with the question id its first QA pair gets.

    Ids follow file order, counting the pairs of every record (a bad one included), so that a
    pair's id depends only on its place in the file.
    """
    labelled = []
    next_id = 0
    for index, raw in enumerate(document):
        labelled.append((f"record {index}", (raw, next_id)))
        annotation = raw.get("annotation") if isinstance(raw, dict) else None
        next_id += len(annotation) if isinstance(annotation, list) else 0
    return labelled


def numbered_image_to_catalog(numbered: tuple[Any, int], checker: RecordChecker) -> CatalogRecord | None:
    raw, first_question_id = numbered
    return image_record_to_catalog(raw, checker, first_question_id)


def question_records(payload: dict[str, Any], ground_truth: dict[str, Any]) -> list[dict[str, Any]]:
    """The item's QA pairs as test-layout records (question_id, question, answer, evidence).

    A test-layout item is one such record already; a training-layout item gives one per pair,
    with the question ids given at import, each carrying its image's ``ocr_tokens`` when the
    item has them.
    """
    if "annotation" not in ground_truth:
        return [to_official(payload, ground_truth)]
    tokens = ground_truth.get(OCR_TOKENS)
    return [
        {
            "question_id": question_id,
            "question": qa["question"],
            "answer": qa["answer"],
            "evidence": qa["evidence"],
            **({OCR_TOKENS: tokens} if tokens is not None else {}),
        }
        for question_id, qa in zip(payload["question_ids"], ground_truth["annotation"], strict=True)
    ]


def detect_layout(records: list[Any]) -> str:
    """Training files group QA pairs under "annotation"; test files have one question each."""
    first = next((record for record in records if isinstance(record, dict)), {})
    return LAYOUT_TRAIN if "annotation" in first else LAYOUT_TEST


def prepare(data: bytes, *, source: str = "") -> PreparedFile:
    document = load_json(data, source=source)
    if not isinstance(document, list):
        raise FormatError(
            [RecordError("file", "top level", "expected a JSON list of STE-VQA records")], source=source
        )
    if detect_layout(document) == LAYOUT_TRAIN:
        return PreparedFile(
            meta={"layout": LAYOUT_TRAIN},
            labelled=numbered_images(document),
            convert=numbered_image_to_catalog,
            id_field="id",
        )
    return PreparedFile(
        meta={"layout": LAYOUT_TEST},
        labelled=indexed(document),
        convert=question_record_to_catalog,
        id_field="question_id",
    )


def parse(data: bytes, *, source: str = "") -> ParsedFile:
    return parse_prepared(prepare(data, source=source), source=source)


def to_official(payload: dict[str, Any], ground_truth: dict[str, Any]) -> dict[str, Any]:
    record = {key: value for key, value in payload.items() if key not in ("questions", "question_ids")}
    record.update(ground_truth)
    return record


def serialize(meta: dict[str, Any], records: Iterable[dict[str, Any]]) -> Iterator[bytes]:
    """The official file: a JSON list in either layout (the records carry their own shape)."""
    return serialize_json_list(records)
