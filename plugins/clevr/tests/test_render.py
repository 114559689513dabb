"""The numpy CLEVR renderer and its cameras (no Django, no shared data needed)."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from plugins.clevr.camera import CAMERA_CENTER, CAMERA_LEFT, CAMERA_RIGHT, Camera, fitted_camera
from plugins.clevr.render import (
    bounding_boxes,
    object_mask,
    render,
    render_ids,
    save_png,
    visible_pixel_counts,
)
from plugins.clevr.world import RADII, SceneObject

SMALL = fitted_camera("Camera_Center", 160, 120)


def thing(shape="sphere", size="large", color="gray", material="rubber", x=0.0, y=0.0, rotation=0.0):
    return SceneObject(
        shape=shape, radius=RADII[size], color=color, material=material, x=x, y=y, rotation=rotation
    )


def in_frame(camera: Camera, point) -> bool:
    x, y, depth = camera.project(np.array([point], dtype=float))[0]
    return depth > 0 and 0 <= x < camera.width and 0 <= y < camera.height


# --- cameras -----------------------------------------------------------------------------------


@pytest.mark.parametrize("camera", [CAMERA_CENTER, CAMERA_LEFT, CAMERA_RIGHT])
def test_a_point_on_the_optical_axis_projects_to_the_image_centre(camera):
    x, y, depth = camera.project(np.array([camera.look_at]))[0]
    assert (x, y) == pytest.approx((camera.width / 2, camera.height / 2), abs=1e-9)
    assert depth == pytest.approx(np.linalg.norm(np.subtract(camera.look_at, camera.position)))


def test_pixel_centre_rays_project_back_to_their_pixels():
    camera = fitted_camera("Camera_Left", 40, 30)
    directions = camera.rays()
    points = np.asarray(camera.position) + 50.0 * directions.reshape(-1, 3)
    projected = camera.project(points)
    rows, columns = np.divmod(np.arange(40 * 30), 40)
    assert np.allclose(projected[:, 0], columns + 0.5) and np.allclose(projected[:, 1], rows + 0.5)
    assert directions.shape == (30, 40, 3) and np.allclose(np.linalg.norm(directions, axis=2), 1.0)
    assert camera.rays(supersample=3).shape == (90, 120, 3)


@pytest.mark.parametrize("camera", [CAMERA_CENTER, CAMERA_LEFT, CAMERA_RIGHT])
def test_the_visible_area_is_in_frame(camera):
    for corner in [(20, 20, 0), (20, -20, 0), (-20, 20, 0), (-20, -20, 0)]:
        assert in_frame(camera, corner)


def test_positions_near_the_center_camera_are_out_of_frame():
    assert not in_frame(CAMERA_CENTER, (40, 40, 0)) and not in_frame(CAMERA_CENTER, (40, 40, 12))
    assert not in_frame(CAMERA_CENTER, (37, -40, 0))  # the sample's hidden yellow sphere


def test_plus_x_points_down_the_center_image_and_plus_y_to_its_right():
    near, far, right, left = CAMERA_CENTER.project(
        np.array([(10, 0, 0), (-10, 0, 0), (0, 10, 0), (0, -10, 0)], float)
    )
    assert near[1] > far[1] and right[0] > left[0]


def test_the_center_camera_puts_the_visible_area_where_the_released_render_shows_it():
    """Corners read off the released init.C render (enlarged), in 320x240 pixels; see camera.py."""
    corners = np.array([(20, -20, 0), (20, 20, 0), (-20, -20, 0)], float)
    seen = np.array([(36.0, 181.0), (277.5, 189.0), (82.5, 76.0)])
    assert np.abs(CAMERA_CENTER.project(corners)[:, :2] - seen).max() < 5.0


def test_left_and_right_cameras_look_from_either_side():
    assert CAMERA_LEFT.position[1] < 0 < CAMERA_RIGHT.position[1]
    with pytest.raises(ValueError):
        fitted_camera("Camera_Top")


def test_another_size_keeps_the_field_of_view():
    wide = fitted_camera("Camera_Center", 480, 320)
    assert (wide.width, wide.height, wide.vertical_fov) == (480, 320, CAMERA_CENTER.vertical_fov)
    assert wide.project(np.array([wide.look_at]))[0][:2] == pytest.approx((240, 160))


# --- the id buffer ------------------------------------------------------------------------------


def test_a_sphere_at_the_origin_is_a_round_blob_where_project_says():
    sizes = {}
    for size in ("small", "medium", "large"):
        ids = render_ids([thing(size=size)], SMALL)
        rows, columns = np.nonzero(ids == 0)
        sizes[size] = rows.size
        centre = SMALL.project(np.array([(0.0, 0.0, RADII[size])]))[0]
        assert abs(columns.mean() + 0.5 - centre[0]) < 1.0 and abs(rows.mean() + 0.5 - centre[1]) < 1.0
        width, height = np.ptp(columns) + 1, np.ptp(rows) + 1
        assert abs(width - height) <= max(2, 0.15 * width)  # nearly round at this distance
        assert rows.size / (width * height) == pytest.approx(np.pi / 4, abs=0.12)
        assert set(np.unique(ids)) == {-1, 0}
    assert sizes["small"] < sizes["medium"] < sizes["large"]


def test_an_object_behind_another_loses_pixels():
    behind = thing("cylinder", "large", "green", x=-14.0, y=0.0)
    front = thing("cube", "large", "red", x=0.0, y=0.0, rotation=20)
    alone = visible_pixel_counts(render_ids([behind], SMALL), 1)[0]
    together = visible_pixel_counts(render_ids([behind, front], SMALL), 2)
    assert 0 < together[0] < alone and together[1] > 0
    # Swapping their places in the list changes nothing but the ids.
    swapped = render_ids([front, behind], SMALL)
    assert np.array_equal(visible_pixel_counts(swapped, 2), together[::-1])


def test_bounding_boxes_and_masks_match_the_id_buffer():
    objects = [
        thing("cube", "medium", x=5, y=-10, rotation=30),
        thing("cylinder", "small", x=-10, y=10),
        thing(x=40, y=40),
    ]
    ids = render_ids(objects, SMALL)
    boxes = bounding_boxes(ids, len(objects))
    for index in range(2):
        rows, columns = np.nonzero(object_mask(ids, index))
        assert boxes[index] == (columns.min(), rows.min(), np.ptp(columns) + 1, np.ptp(rows) + 1)
    assert boxes[2] is None and visible_pixel_counts(ids, 3)[2] == 0
    assert visible_pixel_counts(ids, 3)[:2].tolist() == [object_mask(ids, i).sum() for i in range(2)]


def test_objects_outside_the_visible_area_are_hidden_as_in_the_released_renders():
    """The sample's blue sphere at (-38, 25) is in the Center camera's frame but not in its render."""
    sphere = thing(color="blue", x=-38, y=25)
    assert in_frame(SMALL, (-38, 25, 6))
    assert (render_ids([sphere], SMALL) == -1).all()
    assert (render_ids([sphere], SMALL, hide_outside_visible_area=False) == 0).sum() > 20


# --- images -------------------------------------------------------------------------------------

SCENE = [
    thing("cube", "large", "red", "rubber", x=8, y=-10, rotation=15),
    thing("cube", "large", "red", "glass", x=8, y=10, rotation=15),
    thing("cylinder", "medium", "blue", "metal", x=-10, y=0),
    thing("sphere", "small", "yellow", "rubber", x=-15, y=15),
    thing("sphere", "large", "purple", "metal", x=35, y=-35),  # hidden
]


@pytest.fixture(scope="module")
def rendered():
    return render(SCENE, SMALL)


def test_render_ids_equals_the_ids_of_a_full_render(rendered):
    assert rendered.object_ids.dtype == np.int16 and rendered.object_ids.shape == (120, 160)
    assert np.array_equal(render_ids(SCENE, SMALL), rendered.object_ids)
    assert np.array_equal(render(SCENE, SMALL, supersample=1).object_ids, rendered.object_ids)


def test_rendering_is_deterministic(rendered):
    again = render(SCENE, SMALL)
    assert again.image.tobytes() == rendered.image.tobytes()
    assert again.object_ids.tobytes() == rendered.object_ids.tobytes()


def test_the_image_looks_like_a_clevr_scene(rendered):
    image = rendered.image.astype(int)
    assert rendered.image.dtype == np.uint8 and image.shape == (120, 160, 3)
    ground = image[rendered.object_ids == -1]
    assert np.percentile(ground.max(axis=1) - ground.min(axis=1), 90) <= 10  # grey
    assert 80 < np.median(ground) < 200
    red_rubber = image[object_mask(rendered.object_ids, 0)].mean(axis=0)
    assert red_rubber[0] > red_rubber[1] + 40 and red_rubber[0] > red_rubber[2] + 40
    red_glass = image[object_mask(rendered.object_ids, 1)].mean(axis=0)
    assert np.abs(red_glass - red_rubber).sum() > 40
    blue_metal = image[object_mask(rendered.object_ids, 2)].mean(axis=0)
    assert blue_metal[2] > blue_metal[0] + 30


def test_the_floor_darkens_towards_the_horizon_and_shows_the_outline():
    plain = render([], SMALL, draw_visible_area=False).image.astype(int)
    outlined = render([], SMALL).image.astype(int)
    assert plain[5].mean() < plain[110].mean() - 20
    corner = SMALL.project(np.array([(20.0, 0.0, 0.0)]))[0]  # middle of the near edge
    row, column = int(corner[1]), int(corner[0])
    window = (slice(row - 1, row + 2), column)
    assert (outlined[window] - plain[window]).max() >= 3


def test_shadows_darken_the_floor_beside_an_object():
    empty = render([], SMALL).image.astype(int)
    with_cylinder = render([thing("cylinder", "large", x=0, y=0)], SMALL)
    changed = (with_cylinder.object_ids == -1) & (
        with_cylinder.image.astype(int).sum(axis=2) < empty.sum(axis=2) - 15
    )
    assert changed.sum() > 30


def test_save_png_round_trips(tmp_path, rendered):
    path = tmp_path / "scene.png"
    save_png(rendered.image, path)
    assert np.array_equal(np.asarray(Image.open(path).convert("RGB")), rendered.image)


def test_unknown_values_are_refused():
    with pytest.raises(ValueError):
        render_ids([thing(shape="cone")], SMALL)
    with pytest.raises(ValueError):
        render([thing()], SMALL, supersample=0)
