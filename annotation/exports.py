"""An annotation project's output as files: the benchmark's training and test layouts, ICDAR text boxes.

What is exported is the accepted work (every pair of an image accepted or fixed), the same that
publishing turns into a dataset; the training layout is the file the importer reads back.
"""

from __future__ import annotations

import io
import json
import zipfile

from annotation.services import published_records
from annotation.workflows import workflow_for

LAYOUTS = ("train", "test", "icdar")


class UnknownLayout(LookupError):
    pass


def export(project, layout: str) -> tuple[str, str, bytes]:
    """(file name, content type, bytes) of the project's accepted work in `layout`."""
    if layout not in LAYOUTS:
        raise UnknownLayout(layout)
    workflow = workflow_for(project.dataset.benchmark)
    records, _answers, _left_out = published_records(project, workflow)
    stem = f"annotation-{project.pk}"
    if layout == "train":
        return f"{stem}-train.json", "application/json", dumps(records)
    if layout == "test":
        rows, question_id = [], 0
        for record in records:
            for pair in record["annotation"]:
                rows.append({"question_id": question_id, **pair})
                question_id += 1
        return f"{stem}-test.json", "application/json", dumps(rows)
    return f"{stem}-icdar.zip", "application/zip", icdar_zip(records)


def dumps(value) -> bytes:
    return json.dumps(value, ensure_ascii=False, indent=1).encode()


def icdar_zip(records: list[dict]) -> bytes:
    """One gt_<image stem>.txt per image, a line per box: x1,y1,x2,y2,x3,y3,x4,y4,transcription
    (the ICDAR 2015 text localisation ground truth layout, UTF-8), the answer as the transcription."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for record in records:
            stem = record["image"].rsplit("/", 1)[-1].rsplit(".", 1)[0]
            lines = [
                ",".join(str(round(float(value))) for value in pair["evidence"])
                + ","
                + pair["answer"].replace("\n", " ")
                for pair in record["annotation"]
            ]
            archive.writestr(f"gt_{stem}.txt", "\n".join(lines) + "\n")
    return buffer.getvalue()
