"""Tests aimed at single-line bugs an engineer could plausibly make in the ground-truth and resume code.

Each test names the mutation it catches. They were written because a mutation run
(one-line changes to placement, the font, the resume check, the centroid and the
ray box) left these survivors in the rest of the suite. All but the resume test run
without Blender in well under a second each.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import trimesh

from stim3d.scenes.camera import geometry, look_at
from stim3d.scenes.families.shared.font import GLYPHS
from stim3d.scenes.model import SHAPES
from stim3d.scenes.placement import Bounds, Layout
from stim3d.scenes.primitives import axis_angle_quat, unit_mesh, world_vertices
from stim3d.scenes.visibility import VisibilityCanvas, cast_object
from tests.batch_support import stim3d
from tests.helpers import obj, resting, scene

# -- placement: the visibility floor is inclusive ------------------------------------------------------
# Mutation caught: `if vis < b.floor` -> `if vis <= b.floor` in Layout.try_put (and `>` -> `>=` for the ceiling).


def test_fully_visible_object_meets_a_floor_of_one():
    layout = Layout(scene([]).camera)
    assert layout.try_put(obj(1, "cube", 1.0, 0.0, 0.0), Bounds(floor=1.0))
    assert layout.visibility() == {1: 1.0}


def test_floor_and_ceiling_equal_to_the_measured_visibility_are_met():
    camera = scene([]).camera
    target, occluder = obj(1, "sphere", 1.2, 0.0, 1.0), obj(2, "cube", 1.0, 0.4, -0.3)
    probe = VisibilityCanvas(camera)
    probe.put(target)
    probe.put(occluder)
    measured = probe.visibility()[1]
    assert 0.0 < measured < 1.0, "the occluder must hide part of the target for this test to mean anything"

    layout = Layout(camera)
    assert layout.try_put(target, Bounds())
    layout.bounds[1] = Bounds(floor=measured, ceiling=measured)  # exactly what the occluder leaves
    assert layout.try_put(occluder, Bounds())
    assert layout.visibility()[1] == measured

    stricter = Layout(camera)
    assert stricter.try_put(target, Bounds())
    stricter.bounds[1] = Bounds(floor=np.nextafter(measured, 2.0))  # one ulp above: must be refused
    assert not stricter.try_put(occluder, Bounds())
    assert stricter.rejections["min_visibility"] == 1


# -- font: an independent table --------------------------------------------------------------------------
# Mutation caught: one row of one glyph mirrored (or any dot moved) in scenes/families/shared/font.py.
# The classic 5x7 character set (HD44780 ROM), written as five-bit row values, top row first,
# bit 4 = the leftmost column. Typed from the display controller's character table, not from font.py.
REFERENCE_5X7 = {
    "A": (0x0E, 0x11, 0x11, 0x1F, 0x11, 0x11, 0x11), "B": (0x1E, 0x11, 0x11, 0x1E, 0x11, 0x11, 0x1E),
    "C": (0x0E, 0x11, 0x10, 0x10, 0x10, 0x11, 0x0E), "D": (0x1C, 0x12, 0x11, 0x11, 0x11, 0x12, 0x1C),
    "E": (0x1F, 0x10, 0x10, 0x1E, 0x10, 0x10, 0x1F), "F": (0x1F, 0x10, 0x10, 0x1E, 0x10, 0x10, 0x10),
    "G": (0x0E, 0x11, 0x10, 0x17, 0x11, 0x11, 0x0F), "H": (0x11, 0x11, 0x11, 0x1F, 0x11, 0x11, 0x11),
    "I": (0x0E, 0x04, 0x04, 0x04, 0x04, 0x04, 0x0E), "J": (0x07, 0x02, 0x02, 0x02, 0x02, 0x12, 0x0C),
    "K": (0x11, 0x12, 0x14, 0x18, 0x14, 0x12, 0x11), "L": (0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x1F),
    "M": (0x11, 0x1B, 0x15, 0x15, 0x11, 0x11, 0x11), "N": (0x11, 0x11, 0x19, 0x15, 0x13, 0x11, 0x11),
    "O": (0x0E, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0E), "P": (0x1E, 0x11, 0x11, 0x1E, 0x10, 0x10, 0x10),
    "Q": (0x0E, 0x11, 0x11, 0x11, 0x15, 0x12, 0x0D), "R": (0x1E, 0x11, 0x11, 0x1E, 0x14, 0x12, 0x11),
    "S": (0x0F, 0x10, 0x10, 0x0E, 0x01, 0x01, 0x1E), "T": (0x1F, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04),
    "U": (0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0E), "V": (0x11, 0x11, 0x11, 0x11, 0x11, 0x0A, 0x04),
    "W": (0x11, 0x11, 0x11, 0x15, 0x15, 0x15, 0x0A), "X": (0x11, 0x11, 0x0A, 0x04, 0x0A, 0x11, 0x11),
    "Y": (0x11, 0x11, 0x0A, 0x04, 0x04, 0x04, 0x04), "Z": (0x1F, 0x01, 0x02, 0x04, 0x08, 0x10, 0x1F),
    "0": (0x0E, 0x11, 0x13, 0x15, 0x19, 0x11, 0x0E), "1": (0x04, 0x0C, 0x04, 0x04, 0x04, 0x04, 0x0E),
    "2": (0x0E, 0x11, 0x01, 0x02, 0x04, 0x08, 0x1F), "3": (0x1F, 0x02, 0x04, 0x02, 0x01, 0x11, 0x0E),
    "4": (0x02, 0x06, 0x0A, 0x12, 0x1F, 0x02, 0x02), "5": (0x1F, 0x10, 0x1E, 0x01, 0x01, 0x11, 0x0E),
    "6": (0x06, 0x08, 0x10, 0x1E, 0x11, 0x11, 0x0E), "7": (0x1F, 0x01, 0x02, 0x04, 0x08, 0x08, 0x08),
    "8": (0x0E, 0x11, 0x11, 0x0E, 0x11, 0x11, 0x0E), "9": (0x0E, 0x11, 0x11, 0x0F, 0x01, 0x02, 0x0C),
}


def _bits(row: str) -> int:
    return int(row.replace("#", "1").replace(".", "0"), 2)


@pytest.mark.parametrize("char", sorted(REFERENCE_5X7))
def test_font_matches_the_reference_table(char):
    assert set(GLYPHS) == set(REFERENCE_5X7)
    assert tuple(_bits(row) for row in GLYPHS[char]) == REFERENCE_5X7[char], f"glyph {char!r} differs"


@pytest.mark.parametrize("char", "AHIMOTUVWXY8")
def test_symmetric_glyphs_are_mirror_symmetric(char):
    assert all(row == row[::-1] for row in GLYPHS[char]), f"glyph {char!r} has a row that is not symmetric"


# -- centroid: pixel centres are at +0.5 -------------------------------------------------------------------
# Mutation caught: `centroid_px` without its +0.5 pixel-centre offset (a half-pixel shift in x and y).


@pytest.mark.parametrize("rays_per_pixel", [1, 2])
def test_centroid_of_a_sphere_on_the_optical_axis_is_the_principal_point(rays_per_pixel):
    centre = (0.0, 0.0, 0.6)
    camera = look_at((0.0, -6.0, 4.0), centre, 64, 48)
    sphere = obj(1, "sphere", 1.2, *centre)
    u, v, _ = geometry(camera).project(np.asarray([centre]))
    assert abs(u[0] - 32.0) < 1e-3 and abs(v[0] - 24.0) < 1e-3  # the centre projects to the principal point
    canvas = VisibilityCanvas(camera, rays_per_pixel)
    canvas.put(sphere)
    cx, cy = canvas.result().truths[0].centroid_px
    # On the axis the sphere's silhouette is a circle centred on that point (to the mesh's faceting).
    assert abs(cx - u[0]) < 0.1 and abs(cy - v[0]) < 0.1, (cx, cy)


# -- the ray box: every pixel the object covers is cast ---------------------------------------------------
# Mutation caught: the projected box one row or column short (floor/ceil or range ends off by one) in cast_object.


def _every_pixel(o, camera, s: int, margin: int = 8) -> dict[tuple[int, int], float]:
    """Cast a ray through every sub-pixel of the frame (and a margin around it) against `o` alone."""
    cam = geometry(camera)
    gx, gy = np.meshgrid(np.arange(-margin * s, (camera.width + margin) * s),
                         np.arange(-margin * s, (camera.height + margin) * s))
    gx, gy = gx.ravel(), gy.ravel()
    origins, directions = cam.rays((gx + 0.5) / s, (gy + 0.5) / s)
    vertices = world_vertices(o.shape, o.size, o.location, o.rotation_quat)
    mesh = trimesh.Trimesh(vertices, unit_mesh(o.shape).faces, process=False)
    locations, index, _ = mesh.ray.intersects_location(origins, directions, multiple_hits=False)
    distance = np.einsum("ij,ij->i", locations - origins[index], directions[index])
    return {(int(x), int(y)): float(d) for x, y, d in zip(gx[index], gy[index], distance)}


@pytest.mark.parametrize("rays_per_pixel", [1, 2])
def test_cast_object_hits_exactly_the_pixels_an_exhaustive_cast_hits(rays_per_pixel):
    camera = look_at((0.0, -7.0, 4.5), (0.0, 0.0, 0.4), 48, 36)
    rng = np.random.default_rng(3)
    objects = [resting(i + 1, shape, "red", float(rng.uniform(-2.5, 2.5)), float(rng.uniform(-1.5, 2.5)),
                       size=float(rng.uniform(0.5, 1.3)), rotation=axis_angle_quat((0, 0, 1), float(rng.uniform(0, 90))))
               for i, shape in enumerate(SHAPES * 3)]
    cam = geometry(camera)
    for o in objects:
        cast = cast_object(o, cam, rays_per_pixel)
        expected = _every_pixel(o, camera, rays_per_pixel)
        got = dict(zip(zip(cast.gx.tolist(), cast.gy.tolist()), cast.distance.tolist()))
        inside = {k: v for k, v in got.items() if k in expected or _in_grid(k, camera, rays_per_pixel)}
        assert set(inside) == set(expected), f"{o.shape} #{o.id}: {len(set(expected) - set(inside))} pixels missed"
        assert all(abs(inside[k] - expected[k]) < 1e-9 for k in expected)


def _in_grid(key: tuple[int, int], camera, s: int, margin: int = 8) -> bool:
    x, y = key
    return -margin * s <= x < (camera.width + margin) * s and -margin * s <= y < (camera.height + margin) * s


# -- resume: a stored key that does not match is re-rendered ----------------------------------------------
# Mutation caught: the driver skipping a complete item folder without comparing its item_key.

CONFIG = """\
seed: 3
render: {engine: workbench, width: 64, height: 48}
tasks:
  - family: shape_count
    count: 2
    params: {n_shape_types: 2, max_instances: 2}
"""


@pytest.mark.bpy
def test_resume_rerenders_an_item_whose_stored_key_does_not_match(tmp_path):
    config = tmp_path / "batch.yaml"
    config.write_text(CONFIG)
    out = tmp_path / "out"
    assert stim3d("render", str(config), "--out", str(out), "--quiet").returncode == 0
    path = out / "items" / "shape_count-t0-00001" / "item.json"
    item = json.loads(path.read_text())
    right_key = item["provenance"]["item_key"]
    item["provenance"]["item_key"] = "0" * 16  # as if made from other settings or other code
    path.write_text(json.dumps(item))

    rerun = stim3d("render", str(config), "--out", str(out), "--quiet")  # the same config
    assert rerun.returncode == 0, rerun.stderr
    assert "rendered: 1" in rerun.stdout and "skipped (already done): 1" in rerun.stdout, rerun.stdout
    assert json.loads(path.read_text())["provenance"]["item_key"] == right_key
