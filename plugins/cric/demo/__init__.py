"""Synthetic sample data for the CRIC benchmark.

CRIC (Compositional Reasoning on vIsion and Commonsense) asks questions that need both the
picture and everyday knowledge: "What object in the image can be used for cutting food?" is
answered by finding the knife, which takes knowing that knives cut food.  Every question comes
with a functional program (Find, Relate, Find KG, ...) that lists the objects each step yields,
the objects that ground the answer (``target``), the scene-graph facts and knowledge triplets it
relies on (``sub_graph``), and, for "no" answers to yes/no questions, the part that fails
(``wrong_part``).

The real data set (Visual Genome photos plus ConceptNet) cannot ship with the app, so this
package builds a small world of its own, one module per concern: about twenty-five
everyday object categories, each with a drawable shape and a set of possible attributes, and a
commonsense knowledge graph about them (`knowledge`); the layout of simple indoor and outdoor
scenes, with Visual Genome-style scene graphs derived from the geometry (`layout`); their
drawing (`painting`); and questions of all five CRIC types (`questions`).  A tiny program
executor (`programs.execute_program`) fills in every step's output; the tests run the same
executor, so the recorded programs and the scene graphs cannot drift apart.  This package
holds the generator, `generate_demo`, and re-exports what other modules use.

The package is deliberately free of Django so it can run in scripts and tests.
"""

from __future__ import annotations

import dataclasses
import json
import pathlib
import random

from plugins.cric.demo.knowledge import (
    ATTRIBUTE_KINDS,
    CATEGORIES,
    COLOR,
    COLORS,
    KNOWLEDGE_PHRASES,
    SCENE_KINDS,
    knowledge_graph,
)
from plugins.cric.demo.layout import (
    IMAGE_HEIGHT,
    IMAGE_WIDTH,
    MAX_OBJECTS,
    MIN_OBJECTS,
    PREDICATES,
    Box,
    compose_scene,
    scene_graph_record,
    spatial_predicates,
)
from plugins.cric.demo.painting import BACKDROP_COLORS, render_backdrop, render_scene
from plugins.cric.demo.programs import ProgramExecutor, derive_answer, execute_program
from plugins.cric.demo.questions import ask_questions

__all__ = [
    "ATTRIBUTE_KINDS",
    "BACKDROP_COLORS",
    "CATEGORIES",
    "COLOR",
    "COLORS",
    "IMAGES_FOLDER_NAME",
    "IMAGE_HEIGHT",
    "IMAGE_WIDTH",
    "KNOWLEDGE_FILE_NAME",
    "KNOWLEDGE_PHRASES",
    "MAX_OBJECTS",
    "MIN_OBJECTS",
    "PREDICATES",
    "QUESTIONS_FILE_NAME",
    "SCENE_GRAPHS_FILE_NAME",
    "SCENE_KINDS",
    "Box",
    "CricDemoFiles",
    "ProgramExecutor",
    "derive_answer",
    "execute_program",
    "generate_demo",
    "knowledge_graph",
    "render_backdrop",
    "spatial_predicates",
]

QUESTIONS_FILE_NAME = "cric_questions.json"
SCENE_GRAPHS_FILE_NAME = "cric_scene_graphs.json"
KNOWLEDGE_FILE_NAME = "cric_knowledge.json"
IMAGES_FOLDER_NAME = "images"


@dataclasses.dataclass(frozen=True)
class CricDemoFiles:
    """Where `generate_demo` wrote the data set: the three official-style JSON files and the
    folder of ``<image_id>.png`` images."""

    questions: pathlib.Path
    scene_graphs: pathlib.Path
    knowledge: pathlib.Path
    images_dir: pathlib.Path


def generate_demo(out_dir: pathlib.Path, *, images: int = 30, seed: int = 0) -> CricDemoFiles:
    """Writes a small CRIC-style data set into out_dir and returns where its files are.

    For every image ``<image_id>.png`` goes into out_dir/images/, its Visual Genome-style scene
    graph into cric_scene_graphs.json and its questions (usually six or seven, covering all five
    CRIC types) into cric_questions.json; cric_knowledge.json holds the knowledge graph the
    questions use.  Image ids run from 1 to `images`.  Images left over from an earlier, larger
    run in the same folder are not removed.

    Each image gets its own random stream drawn from `seed`, so the same seed always gives
    byte-identical files and no global random state is touched.
    """
    if images < 0:
        raise ValueError(f"images must not be negative, got {images}")
    out_dir = pathlib.Path(out_dir)
    images_dir = out_dir / IMAGES_FOLDER_NAME
    images_dir.mkdir(parents=True, exist_ok=True)
    knowledge = [{"triplet": list(triplet)} for triplet in knowledge_graph()]

    seeds = random.Random(seed)
    scene_graphs = []
    questions = []
    for image_id in range(1, images + 1):
        rng = random.Random(seeds.getrandbits(64))
        scene = compose_scene(rng, image_id)
        labels: list = []
        render_scene(scene, labels).save(images_dir / f"{image_id}.png", format="PNG")
        scene_graph = scene_graph_record(scene)
        # Where the picture has its painted names: the trial's numbers keep clear of them.
        scene_graph["text_regions"] = [[box.x, box.y, box.w, box.h] for box in labels]
        scene_graphs.append(scene_graph)
        questions.extend(ask_questions(rng, scene_graph, knowledge))

    files = CricDemoFiles(
        questions=out_dir / QUESTIONS_FILE_NAME,
        scene_graphs=out_dir / SCENE_GRAPHS_FILE_NAME,
        knowledge=out_dir / KNOWLEDGE_FILE_NAME,
        images_dir=images_dir,
    )
    for path, document in (
        (files.questions, questions),
        (files.scene_graphs, scene_graphs),
        (files.knowledge, knowledge),
    ):
        path.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    return files
