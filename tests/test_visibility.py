"""Visibility on cases whose answer is known without the code under test."""

from __future__ import annotations

import numpy as np
import pytest

from stim3d.scenes.camera import geometry, look_at
from stim3d.scenes.visibility import VisibilityCanvas, measure

from .helpers import obj, scene


def test_object_alone_is_fully_visible():
    truth = measure(scene([obj(1, "torus", 1.0, 0.3, 0.2)])).truths[0]
    assert truth.visibility == 1.0 and truth.occlusion == 0.0 and truth.truncation == 0.0
    assert truth.visible_px == truth.amodal_px > 100


def test_sphere_half_out_of_frame_is_half_truncated():
    cam = look_at((0.0, -8.0, 5.0), (0.0, 0.0, 0.3), 160, 120)
    geo = geometry(cam)
    origin, direction = geo.rays(np.array([0.0]), np.array([60.0]))  # left frame edge, mid height
    centre = origin[0] + 9.0 * direction[0]
    truth = measure(scene([obj(1, "sphere", 0.8, *centre)], camera=cam)).truths[0]
    assert truth.truncation == pytest.approx(0.5, abs=0.04)
    assert truth.occlusion == 0.0
    assert truth.visibility == pytest.approx(1 - truth.truncation, abs=1e-6)
    assert truth.bbox_amodal[0] < 0 <= truth.bbox_visible[0]


def test_sphere_exactly_behind_a_larger_one_is_hidden():
    cam = look_at((0.0, -8.0, 5.0), (0.0, 0.0, 0.3), 160, 120)
    geo = geometry(cam)
    origin, direction = geo.rays(np.array([80.0]), np.array([60.0]))
    far = origin[0] + 10.0 * direction[0]
    near = origin[0] + 7.0 * direction[0]
    result = measure(scene([obj(1, "sphere", 0.5, *far), obj(2, "sphere", 1.2, *near)], camera=cam))
    hidden, front = result.truths
    assert hidden.visibility == 0.0 and hidden.visible_px == 0 and hidden.amodal_px > 0
    assert hidden.occlusion == 1.0 and hidden.bbox_visible is None
    assert front.visibility == 1.0


def test_partial_overlap_matches_hand_computed_fraction():
    """A sphere on the optical axis, partly behind a cube's vertical edge: a circle cut by a line."""
    width, height = 320, 240
    cam = look_at((0.0, 0.0, 2.0), (0.0, 10.0, 2.0), width, height)
    radius, distance = 1.0, 12.0
    edge_x, back_depth = 0.2, 6.5  # the cube's left face is the plane x = edge_x; its back edge is nearest the axis
    sphere_obj = obj(1, "sphere", 2 * radius, 0.0, distance, z=2.0)
    cube_obj = obj(2, "cube", 3.0, edge_x + 1.5, back_depth - 1.5, z=2.0)
    truth = measure(scene([sphere_obj, cube_obj], camera=cam), rays_per_pixel=2).truths[0]

    rho = cam.fx * np.tan(np.arcsin(radius / distance))  # image radius of the sphere's silhouette
    a = cam.fx * edge_x / back_depth  # image offset of the occluding edge from the circle's centre
    visible_area = rho**2 * np.arccos(-a / rho) + a * np.sqrt(rho**2 - a**2)  # circle part left of the edge
    expected = visible_area / (np.pi * rho**2)
    assert 0.55 < expected < 0.75
    assert truth.visibility == pytest.approx(expected, abs=0.02)


def test_canvas_is_order_independent_and_updates_on_move():
    objects = [obj(i + 1, shape, 0.9, x, y) for i, (shape, x, y) in enumerate(
        [("cube", 0.0, 0.0), ("sphere", 0.2, -1.2), ("cone", -0.4, 1.0), ("cylinder", 0.9, 0.9)])]
    forward = VisibilityCanvas(scene(objects).camera)
    backward = VisibilityCanvas(scene(objects).camera)
    for o in objects:
        forward.put(o)
    for o in reversed(objects):
        backward.put(o)
    assert forward.visibility() == backward.visibility()
    assert np.array_equal(forward.result().instance_map, backward.result().instance_map)
    assert forward.visibility()[1] < 1.0  # the sphere in front hides part of the cube

    moved = objects[1].model_copy(update={"location": (3.0, -1.2, objects[1].location[2])})
    forward.put(moved)
    fresh = measure(scene([objects[0], moved, *objects[2:]]))
    assert forward.result().visibility() == fresh.visibility()


def test_missing_embree_is_a_clear_error_not_a_slow_fallback(monkeypatch):
    import trimesh

    from stim3d.scenes.visibility import RayBackendMissing

    monkeypatch.setattr(trimesh.ray, "has_embree", False)
    with pytest.raises(RayBackendMissing, match="embreex"):
        measure(scene([obj(1, "cube", 1.0, 0.0, 0.0)]))
