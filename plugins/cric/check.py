"""CRIC validation: is the generated question's answer right, its grounding right, its program right?

Validators see the image with every object's box, the question and its answer, the grounding
objects highlighted, the program step by step (each step's output objects drawn when the step is
selected) and the knowledge triplets the question used. Strata: question type, number of program
steps, yes/no answers against the rest, and image group.
"""

from __future__ import annotations

import hashlib
from typing import Any

from django.db.models.fields.json import KT, KeyTransform
from django.db.models.functions import Lower
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from plugins.cric.formats import object_box
from validation.checks import Check, JSONArrayLength, Question, Stratifier

#: Images are spread over this many groups, by a hash of their id, for the "image group" strata.
IMAGE_GROUPS = 8


def image_group(image_id: Any) -> str:
    digest = hashlib.sha256(str(image_id).encode()).digest()
    return f"image group {int.from_bytes(digest[:4], 'big') % IMAGE_GROUPS + 1}"


def step_label(step: dict[str, Any]) -> str:
    inputs = ", ".join(str(value) for value in step.get("text_input") or [])
    return f"{step.get('function', '?')}({inputs})"


class CricCheck(Check):
    instructions = gettext_lazy(
        "Check a generated question against its image: is the answer right, are the highlighted "
        "objects the ones it is about, does each program step do what it says?"
    )
    stratifiers = (
        Stratifier(
            "question_type",
            gettext_lazy("Question type"),
            lambda: {"question_type": KT("payload__question_type")},
            lambda row: str(row["question_type"]),
        ),
        Stratifier(
            "steps",
            gettext_lazy("Number of program steps"),
            lambda: {"steps": JSONArrayLength(KeyTransform("program", "ground_truth"))},
            lambda row: f"{row['steps']} steps",
        ),
        Stratifier(
            "answer",
            gettext_lazy("Yes/no answer or other"),
            lambda: {"answer": Lower(KT("ground_truth__answer"))},
            lambda row: "yes/no" if row["answer"] in ("yes", "no") else "other answer",
        ),
        Stratifier(
            "image_group",
            gettext_lazy("Image group"),
            lambda: {"image_id": KT("payload__image_id")},
            lambda row: image_group(row["image_id"]),
            help=f"images split into {IMAGE_GROUPS} groups by a hash of their id",
        ),
    )
    questions = (
        Question("answer_correct", gettext_lazy("Is the answer correct?"), "yesno", fails_on_no=True),
        Question(
            "grounding_correct",
            gettext_lazy("Are the highlighted objects the ones the question is about?"),
            "yesno",
            fails_on_no=True,
        ),
        Question(
            "natural",
            gettext_lazy("Is the question grammatical and natural?"),
            "scale",
            help=gettext_lazy("1: not at all, 5: fully"),
        ),
        Question(
            "wrong_step",
            gettext_lazy("Which program step is wrong, if any?"),
            "step",
            help=gettext_lazy("select a step to see its output objects"),
        ),
        Question("comment", gettext_lazy("Comment"), "text", required=False),
    )

    def sampleable(self, items):
        return items.filter(scene__isnull=False).exclude(scene__image="")

    def view(self, item) -> dict[str, Any]:
        scene = item.scene.data if item.scene_id else {}
        truth = item.ground_truth
        names = {obj["object_id"]: (obj.get("names") or ["object"])[0] for obj in scene.get("objects", [])}
        knowledge = [
            " ".join(str(part) for part in entry.get("triplet", []))
            for entry in (truth.get("sub_graph") or {}).get("knowledge_items") or []
            if isinstance(entry, dict)
        ]
        return {
            "image": item.dataset.media_url(item.scene.image) if item.scene_id else "",
            "width": scene.get("width"),
            "height": scene.get("height"),
            "facts": [
                {"label": _("Question"), "text": item.payload.get("question", ""), "main": True},
                {"label": _("Answer"), "text": str(truth.get("answer", "")), "main": True},
                {"label": _("Question type"), "text": item.payload.get("question_type", "")},
                *({"label": _("Knowledge used"), "text": triplet} for triplet in knowledge),
            ],
            "objects": [
                {"id": obj["object_id"], "box": object_box(obj), "name": names[obj["object_id"]]}
                for obj in scene.get("objects", [])
            ],
            "marked": [value for value in truth.get("target") or [] if value in names],
            "marked_label": _("grounding objects"),
            "steps": [
                {
                    "label": step_label(step),
                    "output": [value for value in step.get("output") or [] if value in names],
                }
                for step in truth.get("program") or []
            ],
        }

    def steps(self, item) -> list[str]:
        return [step_label(step) for step in item.ground_truth.get("program") or []]

    def step_kind(self, item, index: int) -> str:
        """What the report counts failing steps by: the step's function."""
        program = item.ground_truth.get("program") or []
        return str(program[index].get("function", "?")) if 0 <= index < len(program) else "?"

    def template_of(self, item) -> str:
        functions = " → ".join(str(step.get("function")) for step in item.ground_truth.get("program") or [])
        return f"{item.payload.get('question_type', '?')}: {functions}"
