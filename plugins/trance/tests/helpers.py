"""Builders and fakes shared by TRANCE's tests and the apps' (pure Python, no Django)."""


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
