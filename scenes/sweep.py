"""Occlusion sweeps: one scene at graded visibility levels of one object, nothing else changing.

A sweep holds a scene fixed and moves one object, the *occluder*, along a
straight path on the ground in front of another, the *target*, so that the
target's ray-cast visibility takes each requested level (within `tolerance`,
0.01 by default). Only the occluder's location changes from level to level:
every other object, the camera, the lights, the stage and the questions are the
very same values (byte-identical in item.json).

The path (`OccluderPath`) starts where the occluder hides the most of the target
(straight in front of it, towards the camera, from `placement.occluder_path`,
refined to the offset of least visibility) and runs sideways; at `max_offset`
the occluder no longer covers the target. Visibility is sampled along the path,
and for each level the first crossing is bracketed and solved by bisection
(`placement.solve_occluder_offset`). A level that cannot be reached is returned
with the reason (`Unreachable`) and the other levels are still solved:
- `occluder_too_small`: even straight in front the occluder leaves more visible;
- `frame_edge`: the target is cut by the frame, so its visibility has a ceiling;
- `hidden_by_others`: other objects already hide part of the target;
- `pixel_quantisation`: visibility jumps over the level between two pixel columns
  (a small target in pixels); render larger;
- `occluder_leaves_frame`, `collision` (interpenetration, checked with the
  placement `Layout`), `hides_other` (another object would drop below its
  visibility floor): the solved position is not allowed.

`sweep_item` turns a sweep of an item's scene into one `Item` per level. The
gold answer is recomputed from each level's scene; the counting families count
every object whatever its visibility, so their answer does not change, and the
items say so (`difficulty.answer_depends_on_visibility: false`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from .camera import geometry
from .model import GroundTruth, Item, ObjectTruth, Question, Scene, SceneObject, round6
from .placement import Bounds, Layout, footprint_radius, mesh_distance, occluder_path, solve_occluder_offset
from .visibility import VisibilityCanvas, measure

TOLERANCE = 0.01
PATH_GAP = 0.1  # metres between the target's and the occluder's footprints
SCAN_STEPS = 40  # samples of the visibility profile along the path
AIM = 0.25  # solve to this share of the tolerance first
OCCLUDER_CANDIDATES = 3  # best-covering objects tried as occluder when none is given
TARGET_CANDIDATES = 4  # most central objects considered as target when none is given
COUNTING_FAMILIES = ("shape_count", "shape_color_count")


class SweepError(ValueError):
    """A sweep that cannot even start (unknown ids, nothing that could occlude, unsupported family)."""


@dataclass(frozen=True)
class OccluderPath:
    """A straight line on the ground: offset 0 hides the most, `max_offset` (metres) hides nothing."""

    start: tuple[float, float]
    direction: tuple[float, float]  # unit vector, sideways relative to the camera
    max_offset: float

    def point(self, offset: float) -> tuple[float, float]:
        return (
            round6(self.start[0] + offset * self.direction[0]),
            round6(self.start[1] + offset * self.direction[1]),
        )


@dataclass(frozen=True)
class Unreachable:
    """Why a level has no scene: a short `code` for machines and a one-line `detail` for people."""

    code: str
    detail: str


@dataclass(frozen=True)
class LevelResult:
    """One requested level: its scene and achieved visibility, or the reason it could not be reached."""

    requested: float
    scene: Scene | None = None
    offset: float | None = None
    achieved: float | None = None
    unreachable: Unreachable | None = None

    @property
    def reachable(self) -> bool:
        return self.scene is not None


@dataclass(frozen=True)
class Sweep:
    """The levels of one sweep, with the path and the sampled profile (offset, target visibility)."""

    target_id: int
    occluder_id: int
    path: OccluderPath
    levels: list[LevelResult]
    profile: list[tuple[float, float]] = field(default_factory=list)

    @property
    def reached(self) -> int:
        return sum(level.reachable for level in self.levels)


# -- choosing the target and the occluder ------------------------------------------------------------


def rank_targets(scene: Scene, subject: dict | None = None, rays_per_pixel: int = 1) -> list[int]:
    """Visible countable objects, those the question asks about first, each group nearest the image centre first.

    Hiding an object the question counts is what a sweep is for; when none
    matches (a gold answer of 0), every countable object is a candidate.
    Ties go to the lower id.
    """
    truths = {t.id: t for t in measure(scene, rays_per_pixel).truths}
    candidates = [o for o in scene.objects if o.countable and truths[o.id].centroid_px is not None]
    asked = [o for o in candidates if subject and _matches(o, subject)]
    pool = asked or candidates
    if not pool:
        raise SweepError("the scene has no visible countable object to sweep")
    cx, cy = scene.camera.width / 2.0, scene.camera.height / 2.0

    def distance(obj: SceneObject) -> tuple[float, int]:
        u, v = truths[obj.id].centroid_px  # type: ignore[misc]
        return (float(np.hypot(u - cx, v - cy)), obj.id)

    return [o.id for o in sorted(pool, key=distance)]


def rank_occluders(scene: Scene, target_id: int, rays_per_pixel: int = 1) -> list[tuple[float, int]]:
    """(target visibility, object id) for every other object put straight in front of the target, best cover first.

    Each object is tried once at the start of its path (ties to the lower id):
    the first ones are those tall and wide enough to cover the target.
    """
    target = scene.object(target_id)
    others = [o for o in scene.objects if o.id != target_id]
    if not others:
        raise SweepError("the scene has a single object: nothing can occlude it")
    canvas = VisibilityCanvas(scene.camera, rays_per_pixel)
    for obj in scene.objects:
        canvas.put(obj)
    layout = Layout(scene.camera, rays_per_pixel=rays_per_pixel)
    scores = []
    for candidate in others:
        start, _ = occluder_path(layout, target, candidate, PATH_GAP)
        trial = canvas.copy()
        trial.put(_moved(candidate, (float(start[0]), float(start[1]))))
        scores.append((trial.visibility()[target_id], candidate.id))
    return sorted(scores)


def choose_pair(
    scene: Scene, lowest_level: float, subject: dict | None = None, target_id: int | None = None,
    rays_per_pixel: int = 1, tolerance: float = TOLERANCE,
) -> tuple[int, list[int]]:
    """The target (given, or chosen) and the occluders to try for it, best cover first.

    Targets are taken in `rank_targets` order (at most TARGET_CANDIDATES); the
    first one that some object can hide down to `lowest_level` wins, else the one
    that can be hidden the most.
    """
    targets = [target_id] if target_id is not None else rank_targets(scene, subject, rays_per_pixel)[:TARGET_CANDIDATES]
    best: tuple[float, int, list[int]] | None = None
    for rank, target in enumerate(targets):
        scores = rank_occluders(scene, target, rays_per_pixel)
        occluders = [object_id for _, object_id in scores]
        if scores[0][0] <= lowest_level + tolerance:
            return target, occluders
        if best is None or scores[0][0] < best[0]:
            best = (scores[0][0], target, occluders)
    assert best is not None
    return best[1], best[2]


# -- solving one sweep ----------------------------------------------------------------------------


def _moved(obj: SceneObject, xy: tuple[float, float]) -> SceneObject:
    """The same object at another ground position (height, rotation and everything else unchanged)."""
    return obj.model_copy(update={"location": (round6(xy[0]), round6(xy[1]), obj.location[2])})


def _matches(obj: SceneObject, subject: dict) -> bool:
    return bool(subject) and all(
        (key != "shape" or obj.shape == value) and (key != "color" or obj.color.name == value)
        for key, value in subject.items()
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
        trial.put(_moved(self.occluder, xy))
        return trial.visibility()

    def blocker(self, xy: tuple[float, float], offset: float) -> Unreachable | None:
        """Why the occluder may not stand at `xy` (None when it may)."""
        moved = _moved(self.occluder, xy)
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
        "objects": [_moved(o, xy) if o.id == stage.occluder.id else o for o in stage.scene.objects]
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


# -- items ------------------------------------------------------------------------------------------


def level_item_id(source_id: str, level: float) -> str:
    """Item id of one level: the source id and the level in thousandths (0.4 -> '-vis0400')."""
    return f"{source_id}-vis{int(round(level * 1000)):04d}"


def sweep_id(source_id: str, target_id: int, occluder_id: int) -> str:
    return f"sweep-{source_id}-t{target_id}-o{occluder_id}"


def count_gold(scene: Scene, question: Question) -> int:
    """A counting question's answer from the scene alone: every countable match, whatever its visibility."""
    return sum(1 for o in scene.objects if o.countable and _matches(o, question.subject))


@dataclass(frozen=True)
class ItemSweep:
    """A sweep of one item: the solved sweep and one Item per reachable level (None where unreachable)."""

    source_id: str
    sweep_id: str
    sweep: Sweep
    items: list[Item | None]


# Keys of a counting family's difficulty that describe the source scene's measured state, not this level's.
_SOURCE_MEASURED = ("least_visibility", "band_met", "min_visibility")


def sweep_item(
    item: Item,
    levels: Sequence[float],
    target_id: int | None = None,
    occluder_id: int | None = None,
    tolerance: float = TOLERANCE,
    progress: Callable[[str], None] | None = None,
) -> ItemSweep:
    """Sweep an item's scene and build one Item per reachable level.

    Target and occluder are chosen when not given: the target by `choose_pair`
    (an object the question asks about, central, that some object can hide down
    to the lowest level), the occluder as whichever of its `OCCLUDER_CANDIDATES`
    best-covering objects reaches the most levels. No other object may drop below the item's
    `min_visibility` (the protocol it was made under). Raises SweepError for a
    family whose gold answer this module cannot recompute from the scene.
    """
    if item.family not in COUNTING_FAMILIES:
        raise SweepError(f"family {item.family!r} cannot be swept yet; supported: {', '.join(COUNTING_FAMILIES)}")
    levels = list(levels)
    ids = [level_item_id(item.item_id, level) for level in levels]
    if len(set(ids)) != len(ids):
        raise SweepError("visibility levels must differ by at least 0.001")
    rays = item.ground_truth.rays_per_pixel
    subject = item.questions[0].subject if item.questions else None
    if occluder_id is not None:
        target = target_id if target_id is not None else rank_targets(item.scene, subject, rays)[0]
        occluders = [occluder_id]
    else:
        target, ranked = choose_pair(item.scene, min(levels), subject, target_id, rays, tolerance)
        occluders = ranked[:OCCLUDER_CANDIDATES]
    floor = float(item.params.get("min_visibility", 0.0))
    sweep: Sweep | None = None
    for occluder in occluders:
        if progress:
            progress(f"solving: target object {target}, occluder object {occluder}")
        trial = sweep_scene(item.scene, target, occluder, levels, tolerance=tolerance, others_floor=floor,
                            rays_per_pixel=rays)
        if sweep is None or trial.reached > sweep.reached:
            sweep = trial
        if sweep.reached == len(levels):
            break
    assert sweep is not None
    name = sweep_id(item.item_id, target, sweep.occluder_id)
    built = [
        _level_item(item, result, new_id, name, sweep) if result.reachable else None
        for result, new_id in zip(sweep.levels, ids)
    ]
    return ItemSweep(item.item_id, name, sweep, built)


def _level_item(source: Item, result: LevelResult, new_id: str, name: str, sweep: Sweep) -> Item:
    scene = result.scene
    assert scene is not None
    truth = measure(scene, source.ground_truth.rays_per_pixel)
    questions = []
    for q in source.questions:
        gold = count_gold(scene, q)
        if gold != q.gold:
            raise SweepError(f"item {source.item_id}: question {q.question_id} has gold {q.gold} but its scene holds {gold}")
        suffix = q.question_id.removeprefix(f"{source.item_id}-")
        questions.append(q.model_copy(update={"question_id": f"{new_id}-{suffix}", "gold": gold}))
    kept = {k: v for k, v in source.difficulty.items() if k not in _SOURCE_MEASURED}
    difficulty = {
        **kept,
        "source_item_id": source.item_id,
        "source_min_visibility": source.params.get("min_visibility"),
        "sweep_id": name,
        "sweep_target_id": sweep.target_id,
        "sweep_occluder_id": sweep.occluder_id,
        "sweep_level": result.requested,
        "sweep_offset_m": result.offset,
        "target_visibility": truth.visibility()[sweep.target_id],
        "least_visibility": min(t.visibility for t in truth.truths),
        "answer_depends_on_visibility": False,
        "count_protocol": "every object counts, whatever its visibility",
    }
    return source.model_copy(update={
        "item_id": new_id,
        "scene": scene,
        "ground_truth": GroundTruth(objects=truth.truths, rays_per_pixel=source.ground_truth.rays_per_pixel),
        "questions": questions,
        "difficulty": difficulty,
        "provenance": None,
    })
