"""The top-down diagram testers see: same orientation as the Center camera, every object drawn."""

import xml.etree.ElementTree as ElementTree

from plugins.trance.diagram import scene_diagram_svg
from tests.benchmarks import builders

SVG = "{http://www.w3.org/2000/svg}"


def drawn_objects(svg: str) -> dict[int, ElementTree.Element]:
    root = ElementTree.fromstring(svg)
    return {
        int(group.get("data-index")): group
        for group in root.iter(f"{SVG}g")
        if group.get("class") == "object"
    }


def centre(group: ElementTree.Element) -> tuple[float, float]:
    shape = group.find(f"{SVG}circle") if group.find(f"{SVG}circle") is not None else None
    if shape is not None and shape.get("class") != "highlight":
        return float(shape.get("cx")), float(shape.get("cy"))
    rect = group.find(f"{SVG}rect")
    return float(rect.get("x")) + float(rect.get("width")) / 2, float(rect.get("y")) + float(
        rect.get("height")
    ) / 2


def test_every_object_is_drawn_with_its_index_and_description():
    objects = builders.trance_objects()
    groups = drawn_objects(scene_diagram_svg(objects))
    assert sorted(groups) == list(range(10))
    for index, group in groups.items():
        assert group.find(f"{SVG}text").text == str(index)
        obj = objects[index]
        assert (
            obj["color"] in group.find(f"{SVG}title").text and obj["shape"] in group.find(f"{SVG}title").text
        )


def test_orientation_matches_the_center_camera():
    """+x (toward the camera, 'behind') is down the diagram; +y is to the right."""
    objects = builders.trance_objects()
    objects[0]["position"], objects[1]["position"] = [-30, 0], [30, 0]  # 1 is nearer the camera
    objects[2]["position"], objects[3]["position"] = [0, -30], [0, 30]  # 3 is to the right
    groups = drawn_objects(scene_diagram_svg(objects))
    assert centre(groups[1])[1] > centre(groups[0])[1]
    assert centre(groups[3])[0] > centre(groups[2])[0]
    assert centre(groups[1]) == (0.0, 30.0)


def test_shapes_and_materials_are_told_apart_and_the_highlight_is_drawn():
    objects = builders.trance_objects()
    svg = scene_diagram_svg(objects, highlight=4)
    groups = drawn_objects(svg)
    for index, obj in enumerate(objects):
        group = groups[index]
        if obj["shape"] == "cube":
            assert group.find(f"{SVG}rect") is not None
        circles = [c for c in group.findall(f"{SVG}circle") if c.get("class") != "highlight"]
        assert len(circles) == {"cube": 0, "sphere": 1, "cylinder": 2}[obj["shape"]]
    assert groups[4].find(f"{SVG}circle[@class='highlight']") is not None
    assert sum(1 for g in groups.values() if g.find(f"{SVG}circle[@class='highlight']") is not None) == 1
    glass = next(i for i, o in enumerate(objects) if o["material"] == "glass")
    body = (
        groups[glass].find(f"{SVG}rect")
        if objects[glass]["shape"] == "cube"
        else groups[glass].find(f"{SVG}circle")
    )
    assert float(body.get("fill-opacity")) < 1


def test_each_direction_is_written_on_its_side_behind_toward_the_camera():
    """TRANCE's "behind" is +x, toward the camera: the diagram writes it below the plane, beside
    the camera, and "front" above; "left" and "right" where the camera sees them."""
    root = ElementTree.fromstring(scene_diagram_svg(builders.trance_objects()))
    labels = {
        text.get("data-direction"): text
        for text in root.iter(f"{SVG}text")
        if text.get("class") == "direction"
    }
    assert set(labels) == {"front", "behind", "left", "right"}
    camera = next(group for group in root.iter(f"{SVG}g") if group.get("class") == "camera")
    camera_y = float(camera.find(f"{SVG}text").get("y"))
    assert float(labels["behind"].get("y")) == camera_y > 40  # below the plane, with the camera
    assert float(labels["front"].get("y")) < -40  # above it, away from the camera
    assert float(labels["left"].get("x")) < 0 < float(labels["right"].get("x"))
    assert labels["behind"].text.startswith("↓") and labels["front"].text.startswith("↑")


def test_the_diagram_speaks_the_words_it_is_given():
    words = {"front": "前", "behind": "后", "left": "左", "right": "右", "camera": "相机", "title": "俯视图"}
    svg = scene_diagram_svg(builders.trance_objects(), words=words)
    assert "↓ 后" in svg and "↑ 前" in svg and ">相机<" in svg and "<title>俯视图</title>" in svg
    assert "behind" not in svg.replace('data-direction="behind"', "")
