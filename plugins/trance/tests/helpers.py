"""Builders and fakes shared by TRANCE's tests and the apps' (pure Python, no Django)."""

FINAL_CAMERAS = ("Camera_Left", "Camera_Center", "Camera_Right")


def fake_pixel_counter(objects, camera):
    """Nothing is occluded: every drawn object has 1000 pixels (generating needs no renderer)."""
    return [1000] * len(objects)


def thing(x, y, size="small", color="gray", material="rubber", shape="cube"):
    return {"color": color, "material": material, "shape": shape, "size": size, "position": [x, y]}


def scene(*subjects):
    """`subjects` first, then small gray objects parked along x = -40 (invisible) to make ten.

    Parked objects stand 8 apart at y = -36, -28, ...: 8 >= 2 + 2 + 1, no overlap among them.
    """
    parked = [thing(-40, -36 + 8 * number) for number in range(10 - len(subjects))]
    return [*subjects, *parked]


def move(obj_idx, direction, steps):
    return {"obj_idx": obj_idx, "attr": "position", "val": [direction, steps]}


def change(obj_idx, attr, value):
    return {"obj_idx": obj_idx, "attr": attr, "val": value}


def sample(idx, initial, steps, options=None):
    """A sample in the official format; its final state is the true steps applied in order."""
    from plugins.trance.simulator import apply_steps

    final = apply_steps(initial, steps).objects
    transformations = []
    for number, step in enumerate(steps):
        transformation = {**step, "options": (options or {}).get(number, [step["val"]])}
        if step["attr"] == "position":
            transformation["type"] = "inner"
        transformations.append(transformation)
    return {
        "idx": idx,
        "states": [
            {"objects": initial, "images": {"Camera_Center": f"img_{idx:06d}-init.C.png"}},
            {
                "objects": final,
                "images": {camera: f"img_{idx:06d}-fin.{camera[7]}.png" for camera in FINAL_CAMERAS},
            },
        ],
        "transformations": transformations,
    }
