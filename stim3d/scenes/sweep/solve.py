"""Solving one sweep: the occluder's offset along its path for each visibility level (bisection on ray casts)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..camera import geometry
from ..model import ObjectTruth, Scene, SceneObject, round6
from ..placement import Bounds, Layout, footprint_radius, mesh_distance, occluder_path, solve_occluder_offset
from ..visibility import measure
from .model import (
    AIM,
    PATH_GAP,
    SCAN_STEPS,
    TOLERANCE,
    LevelResult,
    OccluderPath,
    Sweep,
    SweepError,
    Unreachable,
    moved_to,
)


@dataclass
class SweepStage:
    """The fixed part of a sweep: every object but the occluder, in a Layout for collision checks."""

    scene: Scene
    target: SceneObject
    occluder: SceneObject
    layout: Layout
    floors: dict[int, float]  # visibility floor of every non-target object
    truth: ObjectTruth  # the target's ground truth in the source scene (amodal_px, truncation)

    def visibility_at(self, xy: tuple[float, float]) -> dict[int, float]:
        """Every object's visibility with the occluder at ground point `xy` (one cast of the occluder)."""
        trial = self.layout.canvas.copy()
        trial.put(moved_to(self.occluder, xy))
        return trial.visibility()

    def blocker(self, xy: tuple[float, float], offset: float) -> Unreachable | None:
        """Why the occluder may not stand at `xy` (None when it may)."""
        moved = moved_to(self.occluder, xy)
        where = f"at offset {offset:.3f} m"
        if not self.layout.in_frame(moved):
            return Unreachable("occluder_leaves_frame", f"{where} the occluder would leave the frame")
        if not self.layout.clear_of_others(moved):
            clearance = self.layout.clearance
            touched = [o.id for o in self.layout.objects.values() if mesh_distance(moved, o, clearance) < clearance]
            return Unreachable(
                "collision",
                f"{where} the occluder would come within {clearance} m of object "
                f"{', '.join(map(str, touched))} (interpenetration)",
            )
        visibility = self.visibility_at(xy)
        for object_id, floor in sorted(self.floors.items()):
            if visibility[object_id] < floor:
                return Unreachable(
                    "hides_other",
                    f"{where} object {object_id} would drop to visibility {visibility[object_id]:.3f}, "
                    f"below its floor {floor:.3f}",
                )
        return None


def sweep_stage(scene: Scene, target_id: int, occluder_id: int, others_floor: float, rays_per_pixel: int) -> SweepStage:
    """Check the ids and set up the fixed objects; `others_floor` as in `sweep_scene`."""
    if target_id == occluder_id:
        raise SweepError(f"target and occluder are the same object ({target_id})")
    ids = [o.id for o in scene.objects]
    for role, object_id in (("target", target_id), ("occluder", occluder_id)):
        if object_id not in ids:
            raise SweepError(f"{role} id {object_id} is not in the scene (object ids: {', '.join(map(str, ids))})")
    layout = Layout(scene.camera, rays_per_pixel=rays_per_pixel)
    clearance, margin = layout.clearance, layout.frame_margin_px
    # The fixed objects are taken as they are (touching or cut by the frame included);
    # only the occluder's new positions are held to the placement constraints.
    layout.clearance, layout.frame_margin_px = 0.0, -float("inf")
    for obj in scene.objects:
        if obj.id != occluder_id and not layout.try_put(obj, Bounds()):
            raise SweepError(f"object {obj.id} of the scene is (partly) behind the camera")
    layout.clearance, layout.frame_margin_px = clearance, margin
    source = measure(scene, rays_per_pixel)
    visibility = source.visibility()
    floors = {o.id: min(others_floor, visibility[o.id]) for o in scene.objects if o.id != target_id}
    truth = next(t for t in source.truths if t.id == target_id)
    return SweepStage(scene, scene.object(target_id), scene.object(occluder_id), layout, floors, truth)


def candidate_paths(stage: SweepStage, gap: float = PATH_GAP) -> list[OccluderPath]:
    """Both sideways paths from the most hiding point in front of the target (towards the image centre first)."""
    start, sideways = occluder_path(stage.layout, stage.target, stage.occluder, gap)
    reach = footprint_radius(stage.target) + footprint_radius(stage.occluder)
    span = 2.0 * reach + gap
    # Refine the start to where the target is least visible: for a shape whose
    # silhouette is not symmetric about the view plane it is not exactly at offset 0.
    offsets = np.linspace(-reach, reach, SCAN_STEPS + 1)
    visibility = [stage.visibility_at(_point(start, sideways, t))[stage.target.id] for t in offsets]
    least = min(visibility)
    best = min((abs(t), t) for t, v in zip(offsets, visibility) if v == least)[1]
    origin = start + best * sideways
    ends = np.array([[*(origin + sideways), 0.0], [*(origin - sideways), 0.0]])
    u_ends = geometry(stage.scene.camera).project(ends)[0]
    off_centre = np.abs(u_ends - stage.scene.camera.cx)
    toward_centre = 1.0 if off_centre[0] <= off_centre[1] else -1.0
    return [
        OccluderPath((float(origin[0]), float(origin[1])), (float(d[0]), float(d[1])), round6(span))
        for d in (toward_centre * sideways, -toward_centre * sideways)
    ]


def _point(start: np.ndarray, direction: np.ndarray, offset: float) -> tuple[float, float]:
    x, y = start + offset * direction
    return (round6(x), round6(y))


def _rises(profile: list[tuple[float, float]], level: float) -> list[int]:
    """Indices i where the sampled visibility rises across `level` between samples i - 1 and i."""
    return [i for i in range(1, len(profile)) if profile[i - 1][1] < level < profile[i][1]]


def _crossing(
    stage: SweepStage, path: OccluderPath, level: float, profile: list[tuple[float, float]], tolerance: float
) -> tuple[float, float] | None:
    """(offset, visibility) where the target's visibility first comes within `tolerance` of `level`.

    Either a sample itself, or a rise across the level between two samples,
    solved by bisection; None when pixel steps jump over the window everywhere.
    """
    target_id = stage.target.id
    rises = set(_rises(profile, level))
    for i, (offset, value) in enumerate(profile):
        if abs(value - level) <= tolerance:
            return offset, value
        if i in rises:
            low = profile[i - 1][0]

            def visibility_from_low(step: float, low: float = low) -> float:
                return stage.visibility_at(path.point(low + step))[target_id]

            solved = solve_occluder_offset(visibility_from_low, level, offset - low, tolerance)
            if solved is not None:
                return low + solved[0], solved[1]
    return None


def _solve_level(
    stage: SweepStage, path: OccluderPath, level: float, profile: list[tuple[float, float]], tolerance: float
) -> LevelResult:
    target_id = stage.target.id
    lowest, highest = min(v for _, v in profile), max(v for _, v in profile)
    if level < lowest - tolerance:
        return LevelResult(level, unreachable=Unreachable(
            "occluder_too_small",
            f"object {stage.occluder.id} hides at most {1 - lowest:.3f} of object {target_id}: "
            f"its visibility cannot go below {lowest:.3f}",
        ))
    if level > highest + tolerance:
        truncation = stage.truth.truncation  # the frame's share does not depend on other objects
        code = "frame_edge" if truncation > 0 else "hidden_by_others"
        why = f"the frame edge cuts {truncation:.3f} of it" if truncation > 0 else "other objects hide part of it"
        return LevelResult(level, unreachable=Unreachable(code, f"object {target_id} is at most {highest:.3f} visible ({why})"))
    # Aim well inside the tolerance (a level of 1.0 then really means unhidden); accept the
    # full tolerance only where pixel steps leave nothing closer.
    solved = _crossing(stage, path, level, profile, AIM * tolerance) or _crossing(stage, path, level, profile, tolerance)
    if solved is None:
        rises = _rises(profile, level)
        if not rises:  # only possible on a path whose visibility falls back through the level
            return LevelResult(level, unreachable=Unreachable(
                "pixel_quantisation", f"visibility of object {target_id} never rises through {level} along the path"))
        below, above = _jump(stage, path, profile[rises[0] - 1][0], profile[rises[0]][0], level)
        return LevelResult(level, unreachable=Unreachable(
            "pixel_quantisation",
            f"visibility of object {target_id} jumps from {below:.3f} to {above:.3f} across {level} "
            f"(it covers only {stage.truth.amodal_px:.0f} px): render larger",
        ))
    offset, value = solved
    xy = path.point(offset)
    blocked = stage.blocker(xy, offset)
    if blocked is not None:
        return LevelResult(level, unreachable=blocked)
    scene = stage.scene.model_copy(update={
        "objects": [moved_to(o, xy) if o.id == stage.occluder.id else o for o in stage.scene.objects]
    })
    return LevelResult(level, scene=scene, offset=round6(offset), achieved=round6(value))


def _jump(stage: SweepStage, path: OccluderPath, low: float, high: float, level: float) -> tuple[float, float]:
    """The two visibility values on either side of the step that skips `level` (for the message)."""
    target_id = stage.target.id
    for _ in range(60):
        mid = 0.5 * (low + high)
        if stage.visibility_at(path.point(mid))[target_id] < level:
            low = mid
        else:
            high = mid
    return (stage.visibility_at(path.point(low))[target_id], stage.visibility_at(path.point(high))[target_id])


def solve_sweep(
    stage: SweepStage, path: OccluderPath, levels: Sequence[float], tolerance: float = TOLERANCE
) -> Sweep:
    """Solve every level along one given path."""
    offsets = np.linspace(0.0, path.max_offset, SCAN_STEPS + 1)
    profile = [(round6(t), stage.visibility_at(path.point(float(t)))[stage.target.id]) for t in offsets]
    results = [_solve_level(stage, path, float(level), profile, tolerance) for level in levels]
    return Sweep(stage.target.id, stage.occluder.id, path, results, profile)


def sweep_scene(
    scene: Scene,
    target_id: int,
    occluder_id: int,
    levels: Sequence[float],
    *,
    path: OccluderPath | None = None,
    tolerance: float = TOLERANCE,
    others_floor: float = 0.0,
    rays_per_pixel: int = 1,
) -> Sweep:
    """The scene at each visibility level of `target_id`, moving only `occluder_id`.

    With no `path`, both sideways directions are solved and the one that
    reaches more levels is kept (ties: the one towards the image centre).
    `others_floor`: no other object may drop below this visibility (or below
    its visibility in `scene`, if that is already lower).
    """
    for level in levels:
        if not 0.0 <= level <= 1.0:
            raise SweepError(f"visibility level {level} is outside [0, 1]")
    stage = sweep_stage(scene, target_id, occluder_id, others_floor, rays_per_pixel)
    paths = [path] if path is not None else candidate_paths(stage)
    best: Sweep | None = None
    for candidate in paths:
        sweep = solve_sweep(stage, candidate, levels, tolerance)
        if best is None or sweep.reached > best.reached:
            best = sweep
        if best.reached == len(levels):
            break
    return best  # type: ignore[return-value]
