"""Render the released TRANCE sample with our renderer and compare it with the real renders.

Usage (from the repository root):  .venv/bin/python plugins/trance/make_renders.py

Reads ../shared/data/trance_example (the released sample: example.json and its four
160x120 renders) and writes, in docs/renders/, ours-init.C.png, ours-fin.L.png,
ours-fin.C.png, ours-fin.R.png (320x240) and comparison.png (rows: the four views; left: the
real render upscaled to 320x240, right: ours). The real renders are only read, never copied.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from PIL import Image, ImageDraw

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from plugins.clevr.camera import fitted_camera  # noqa: E402
from plugins.clevr.render import render, save_png  # noqa: E402
from plugins.clevr.world import RADII, SceneObject  # noqa: E402

SAMPLE = ROOT.parent / "shared" / "data" / "trance_example"
OUTPUT = ROOT / "docs" / "renders"
VIEWS = (  # (file suffix, state index, camera)
    ("init.C", 0, "Camera_Center"),
    ("fin.L", 1, "Camera_Left"),
    ("fin.C", 1, "Camera_Center"),
    ("fin.R", 1, "Camera_Right"),
)
#: The sample's JSON does not record rotations; those of the two visible cubes (objects 2 and 4)
#: were estimated from the four renders together with the cameras (degrees about z).
CUBE_ROTATIONS = {2: 49.4, 4: 43.0}


def scene(state: dict) -> list[SceneObject]:
    return [
        SceneObject(
            shape=item["shape"],
            radius=RADII[item["size"]],
            color=item["color"],
            material=item["material"],
            x=item["position"][0],
            y=item["position"][1],
            rotation=CUBE_ROTATIONS.get(index, 0.0),
        )
        for index, item in enumerate(state["objects"])
    ]


def main() -> int:
    example = SAMPLE / "example.json"
    if not example.is_file():
        print(f"The released TRANCE sample is not there: {example} not found.", file=sys.stderr)
        print("It lives in ../shared/data/trance_example beside the repository.", file=sys.stderr)
        return 1
    states = json.loads(example.read_text())["states"]
    width, height = 320, 240
    comparison = Image.new("RGB", (2 * width + 12, 4 * height + 3 * 6 + 24), (255, 255, 255))
    draw = ImageDraw.Draw(comparison)
    draw.text((width // 2 - 40, 6), "TRANCE (Blender)", fill=(0, 0, 0))
    draw.text((width + 12 + width // 2 - 40, 6), "ours (numpy)", fill=(0, 0, 0))
    for row, (suffix, state_index, camera_name) in enumerate(VIEWS):
        started = time.perf_counter()
        result = render(scene(states[state_index]), fitted_camera(camera_name, width, height))
        elapsed = time.perf_counter() - started
        ours = OUTPUT / f"ours-{suffix}.png"
        save_png(result.image, ours)
        real = (
            Image.open(SAMPLE / f"img_000000-{suffix}.png")
            .convert("RGB")
            .resize((width, height), Image.BICUBIC)
        )
        top = 24 + row * (height + 6)
        comparison.paste(real, (0, top))
        comparison.paste(Image.open(ours), (width + 12, top))
        print(f"{ours.relative_to(ROOT)}  ({elapsed * 1000:.0f} ms)")
    comparison.save(OUTPUT / "comparison.png")
    print(f"{(OUTPUT / 'comparison.png').relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
