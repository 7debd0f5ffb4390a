"""An occluder the sweep adds itself (`--occluder add`): an upright panel sized from the target's silhouette.

Why: a sweep that can only move the scene's own objects is limited by them (a
sphere hides at most 0.69 of a torus from the counting camera), so low levels are
often unreachable. The added occluder is a square panel (a `tile` stood upright,
its face towards the camera), grown until, straight in front of the target, it
hides the target completely: every level in [0, 1] lies on its path. It is part
of the scene and of the ground truth like any object (measured visibility, mask
id), but `countable: false` and `attributes.role = "sweep_occluder"`: no counting
question counts it, and as a tile it is none of the five shapes a question asks
about.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..camera import geometry
from ..colors import named
from ..model import Scene, SceneObject, round6
from ..placement import Layout, occluder_path
from ..primitives import axis_angle_quat, unit_dimensions, world_vertices
from ..visibility import VisibilityCanvas
from .model import PATH_GAP, TOLERANCE, Sweep, SweepError, moved_to
from .solve import candidate_paths, solve_sweep, sweep_stage

ROLE = "sweep_occluder"
PANEL_COLOR = "gray"
GROWTH = 1.25  # the panel grows by this factor until it hides the whole target
MAX_GROWTH_STEPS = 12
MIN_DEPTH = 1.0  # metres: the panel stays this far in front of the camera
MAX_SPAN = 3.0  # the panel's image spans at most this many frame widths
GAPS = (PATH_GAP, 0.6, 1.5)  # metres between target and panel footprints tried: nearer first, farther avoids crowds


def _quat_multiply(a, b) -> tuple[float, float, float, float]:
    w1, x1, y1, z1 = a
    w2, x2, y2, z2 = b
    return (w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2, w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
            w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2, w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2)


def panel(object_id: int, edge: float, facing_xy: np.ndarray, xy: tuple[float, float]) -> SceneObject:
    """An upright square panel of `edge` metres at ground point `xy`, its face towards `facing_xy` (horizontal)."""
    stand = axis_angle_quat((1.0, 0.0, 0.0), 90.0)  # the slab's normal (local Z) -> world -Y
    yaw = float(np.degrees(np.arctan2(facing_xy[1], facing_xy[0]))) + 90.0  # -Y -> facing
    rotation = tuple(round6(v) for v in _quat_multiply(axis_angle_quat((0.0, 0.0, 1.0), yaw), stand))
    return SceneObject(
        id=object_id, shape="tile", size=round6(edge),
        dimensions=tuple(round6(d * edge) for d in unit_dimensions("tile")),
        location=(round6(xy[0]), round6(xy[1]), round6(edge / 2.0)), rotation_quat=rotation,
        color=named(PANEL_COLOR), countable=False, attributes={"role": ROLE},
    )


def with_added_occluder(scene: Scene, target_id: int, rays_per_pixel: int = 1,
                        gap: float = PATH_GAP) -> tuple[Scene, int]:
    """The scene with a panel that can hide `target_id` completely from `gap` metres in front of it, and its id.

    The panel is placed out of the way (one path length to the side of the target);
    the sweep then slides it along its path in front of the target.
    """
    target = scene.object(target_id)
    new_id = max(o.id for o in scene.objects) + 1
    cam_xy = np.asarray(scene.camera.location[:2], dtype=float)
    facing = cam_xy - np.asarray(target.location[:2], dtype=float)
    facing /= np.linalg.norm(facing)
    canvas = VisibilityCanvas(scene.camera, rays_per_pixel)
    for obj in scene.objects:
        canvas.put(obj)
    layout = Layout(scene.camera, rays_per_pixel=rays_per_pixel)
    cam = geometry(scene.camera)
    edge = float(max(target.dimensions))
    for _ in range(MAX_GROWTH_STEPS):
        probe = panel(new_id, edge, facing, (0.0, 0.0))
        start, sideways = occluder_path(layout, target, probe, gap)
        placed = moved_to(probe, (float(start[0]), float(start[1])))
        u, v, depth = cam.project(world_vertices("tile", edge, placed.location, placed.rotation_quat))
        if depth.min() < MIN_DEPTH or max(u.max() - u.min(), v.max() - v.min()) > MAX_SPAN * max(cam.camera.width,
                                                                                                 cam.camera.height):
            break  # the panel would reach the camera or dwarf the frame: no panel from here hides the target
        trial = canvas.copy()
        trial.put(placed)
        if trial.visibility()[target_id] == 0.0:
            aside = start + sideways * (2.0 * (edge + float(max(target.dimensions))) + gap)
            placed = moved_to(probe, (float(aside[0]), float(aside[1])))
            return scene.model_copy(update={"objects": [*scene.objects, placed]}), new_id
        edge *= GROWTH
    raise SweepError(f"no panel up to {edge:.2f} m across, {gap} m in front of object {target_id}, hides it completely")


def sweep_with_added_occluder(
    scene: Scene, target_id: int, levels: Sequence[float], *, tolerance: float = TOLERANCE,
    others_floor: float = 0.0, rays_per_pixel: int = 1,
) -> tuple[Scene, Sweep]:
    """Add a panel (`with_added_occluder`) and solve the sweep; returns (the scene with the panel, the sweep).

    Paths start at GAPS in front of the target (the panel sized for each) and run to
    either side; the one reaching the most levels wins (ties: the nearer, smaller
    panel). The panel itself has no visibility floor and may be cut by the frame (it
    is not counted); every other object keeps `others_floor` as in `sweep_scene`.
    """
    for level in levels:
        if not 0.0 <= level <= 1.0:
            raise SweepError(f"visibility level {level} is outside [0, 1]")
    best: tuple[Scene, Sweep] | None = None
    failure = ""
    for gap in GAPS:
        try:
            with_panel, panel_id = with_added_occluder(scene, target_id, rays_per_pixel, gap)
        except SweepError as exc:  # from this far out no panel covers the target: try the next gap
            failure = str(exc)
            continue
        stage = sweep_stage(with_panel, target_id, panel_id, others_floor, rays_per_pixel)
        stage.floors.pop(panel_id, None)
        stage.layout.frame_margin_px = -float("inf")  # a panel cut by the frame is still a wall
        for path in candidate_paths(stage, gap):
            sweep = solve_sweep(stage, path, levels, tolerance)
            if best is None or sweep.reached > best[1].reached:
                best = (with_panel, sweep)
            if best[1].reached == len(levels):
                return best
    if best is None:
        raise SweepError(failure)
    return best
