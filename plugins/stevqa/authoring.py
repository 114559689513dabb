"""STE-VQA authoring: question-answer pairs about the text in an image, each with its evidence quad.

What the generic queue and pages need from the benchmark: which file is the image, the rules a
submission must pass (rules.py), the OCR check of an answer against its evidence
(evidence.py), and how accepted pairs become the benchmark's own training-layout records, so
an annotation project's output imports, exports, scores and tests like any released file.
"""

from __future__ import annotations

from typing import Any

from benchmarks.spec import BenchmarkSpec
from plugins.stevqa import rules
from plugins.stevqa.formats import language


class SteVqaAuthoring:
    image_role = "image"

    def __init__(self, spec: BenchmarkSpec) -> None:
        self.spec = spec

    def annotatable(self, items):
        """The items that can be annotated: those with an image."""
        return items.filter(media__has_key=self.image_role)

    def language(self, text: str) -> str:
        return language(text)

    #: code -> the English message template of each Problem the rules and the OCR check report.
    messages = rules.MESSAGES

    def ocr_problem(self, pair: int, recognised: str):
        """The confirmable Problem of an answer far from the text read inside its evidence."""
        return rules.ocr_mismatch(pair, recognised)

    def check(self, pairs: list[dict[str, Any]], *, width: int, height: int, fixed_questions: bool):
        return rules.check_pairs(pairs, width=width, height=height, fixed_questions=fixed_questions)

    def read_evidence(self, image_path, evidence: list[float], answer: str):
        from plugins.stevqa import evidence as checker  # loads the OCR models on first use

        return checker.check_answer(image_path, evidence, answer)

    def ocr_threshold(self) -> float:
        from plugins.stevqa import evidence as checker

        return checker.THRESHOLD

    def statistics_plot(self, name: str, pairs) -> bytes | None:
        """A PNG of the written pairs as the STE-VQA paper plots its data (questions by their first
        words; question and answer lengths per language); None for a name it does not draw."""
        from plugins.stevqa import textstats

        draw = {"first-words": textstats.first_words_plot, "lengths": textstats.length_histograms_plot}.get(
            name
        )
        return None if draw is None else draw(textstats.statistics(pairs))

    def demo_pairs(self, item) -> list[dict[str, Any]]:
        """The item's own released pairs as an annotator would submit them (for demo work)."""
        return [
            {
                "question": qa["question"],
                "answer": qa["answer"],
                "evidence": [float(v) for v in qa["evidence"]],
            }
            for qa in item.ground_truth.get("annotation", [])
        ]

    def record(self, external_id: str, image: str, pairs: list[dict[str, Any]]) -> dict[str, Any]:
        """One image's accepted pairs as a training-layout record; coordinates as strings, as released."""
        return {
            "id": external_id,
            "image": image,
            "annotation": [
                {
                    "question": pair["question"],
                    "answer": pair["answer"],
                    "evidence": [format_coordinate(value) for value in pair["evidence"]],
                }
                for pair in pairs
            ],
        }


def format_coordinate(value: float) -> str:
    value = round(float(value), 1)
    return str(int(value)) if value == int(value) else str(value)
