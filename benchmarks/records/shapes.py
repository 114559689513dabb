"""What a format module reads an official file into: `CatalogRecord` items, `SceneRecord`
scenes, and the whole file with its dataset-level facts (`ParsedFile`, `ParsedScenes`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, TypeVar


@dataclass(slots=True)
class CatalogRecord:
    """One item as the catalog stores it.

    `payload` is what annotators and testers may see; `ground_truth` never leaves the server
    before an answer is final. `media` maps a role ("image", "init.Camera_Center") to a file
    name as the official record references it. `scene` names the shared scene (an image with its
    scene graph) that several items can point at, as the questions about one image do.
    """

    external_id: str
    payload: dict[str, Any]
    ground_truth: dict[str, Any]
    media: dict[str, str] = field(default_factory=dict)
    scene: str | None = None


@dataclass(slots=True)
class SceneRecord:
    """A scene shared by several items: its external id, its data and its image file name."""

    external_id: str
    data: dict[str, Any]
    image: str | None = None


#: Items and scenes both go through convert_records: all it needs is their external id.
Converted = TypeVar("Converted", CatalogRecord, SceneRecord)


@dataclass(slots=True)
class ParsedFile:
    """A whole official file: dataset-level facts needed to write it back, and its records."""

    meta: dict[str, Any]
    records: list[CatalogRecord]


@dataclass(slots=True)
class ParsedScenes:
    meta: dict[str, Any]
    scenes: list[SceneRecord]
