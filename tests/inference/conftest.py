"""Model runs on the plug-in benchmark Dot count: real images, a real baseline, the whole path."""

import json
from pathlib import Path

import pytest
from PIL import Image, ImageDraw

from benchmarks import registry
from tests.dotcount.spec import SPEC

COUNTS = [1, 2, 3, 2, 4, 3, 1, 4]


@pytest.fixture
def dotcount():
    registry.register(SPEC)
    yield SPEC
    registry.unregister(SPEC.name)


def write_dot_files(folder: Path) -> Path:
    """Eight images with 1 to 4 dots and their official file."""
    images = folder / "images"
    images.mkdir(parents=True, exist_ok=True)
    records = []
    for index, count in enumerate(COUNTS):
        image = Image.new("RGB", (80, 40), "white")
        draw = ImageDraw.Draw(image)
        for dot in range(count):
            draw.ellipse((5 + 18 * dot, 15, 15 + 18 * dot, 25), fill="black")
        image.save(images / f"dots{index}.png")
        records.append(
            {
                "id": f"d{index}",
                "image": f"dots{index}.png",
                "question": "How many dots?",
                "answer": str(count),
            }
        )
    truth = folder / "dots.json"
    truth.write_text(json.dumps(records))
    return truth


@pytest.fixture
def dots(dotcount, tmp_path):
    from benchmarks.services import import_dataset

    truth = write_dot_files(tmp_path / "dots")
    return import_dataset(
        benchmark="dotcount", data=truth.read_bytes(), name="dots", images_dir=tmp_path / "dots" / "images"
    )


def pip_install_copy(package: Path, tmp_path_factory) -> Path:
    """`package` installed by pip into a folder of its own, as a researcher's `pip install` would,
    built from a copy so that the source folder gets no build leftovers; the folder is returned."""
    import shutil
    import subprocess
    import sys

    source = tmp_path_factory.mktemp(f"{package.name}-source") / package.name
    shutil.copytree(package, source, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    site = tmp_path_factory.mktemp(f"{package.name}-site")
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
         "--target", str(site), str(source)],
        check=True,
        capture_output=True,
    )  # fmt: skip
    return site
