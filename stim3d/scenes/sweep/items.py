"""A solved sweep as items: one `Item` per reachable level, everything but the occluder byte-identical."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from stim3d.scoring.answers import Gold

from ..families import FAMILIES, Family
from ..model import GroundTruth, Item, Question, Scene
from ..visibility import measure
from .added import sweep_with_added_occluder
from .choose import choose_pair, rank_targets
from .model import OCCLUDER_CANDIDATES, TARGET_CANDIDATES, TOLERANCE, LevelResult, Sweep, SweepError
from .solve import sweep_scene


def level_item_id(source_id: str, level: float) -> str:
    """Item id of one level: the source id and the level in thousandths (0.4 -> '-vis0400')."""
    return f"{source_id}-vis{int(round(level * 1000)):04d}"


def sweep_id(source_id: str, target_id: int, occluder_id: int) -> str:
    return f"sweep-{source_id}-t{target_id}-o{occluder_id}"


def sweepable() -> list[str]:
    """Families a sweep can take: those with a recount rule (`Family.recount`) for their golds."""
    return sorted(name for name, family in FAMILIES.items() if family.recount is not None)


def level_gold(family: Family, scene: Scene, question: Question) -> Gold:
    """A question's gold on a level's scene, by the family's own rule (the one the add-on's Re-validate uses)."""
    recount = family.recount(question, scene) if family.recount is not None else None
    if recount is None:
        raise SweepError(f"family {family.name!r} has no recount rule for question {question.question_id}")
    return recount.gold


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
    occluder_id: int | Literal["add"] | None = None,
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
    `occluder_id="add"`: the sweep adds its own occluder, a panel that can hide the
    target completely (scenes/sweep/added.py), so every level in [0, 1] lies on its path.
    """
    if item.family not in sweepable():
        raise SweepError(f"family {item.family!r} cannot be swept yet; supported: {', '.join(sweepable())}")
    levels = list(levels)
    ids = [level_item_id(item.item_id, level) for level in levels]
    if len(set(ids)) != len(ids):
        raise SweepError("visibility levels must differ by at least 0.001")
    if occluder_id == "add":
        return sweep_item_with_added_occluder(item, levels, target_id, tolerance, progress)
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
    family = FAMILIES[source.family]
    for q in source.questions:
        gold = level_gold(family, scene, q)
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
        "count_protocol": "every object counts, whatever its visibility",  # the family's recount rule
    }
    return source.model_copy(update={
        "item_id": new_id,
        "scene": scene,
        "ground_truth": GroundTruth(objects=truth.truths, rays_per_pixel=source.ground_truth.rays_per_pixel),
        "questions": questions,
        "difficulty": difficulty,
        "provenance": None,
    })


def sweep_item_with_added_occluder(item: Item, levels: Sequence[float], target_id: int | None = None,
                                   tolerance: float = TOLERANCE,
                                   progress: Callable[[str], None] | None = None) -> ItemSweep:
    """`sweep_item` with `--occluder add`: the item's scene plus a panel, swept; one Item per reachable level.

    The target is the one given, else the first of `rank_targets` (at most
    TARGET_CANDIDATES tried) whose sweep reaches the most levels. The level items
    keep the panel (ground truth, mask id) and say so in `difficulty.sweep_occluder_added`.
    """
    rays = item.ground_truth.rays_per_pixel
    subject = item.questions[0].subject if item.questions else None
    targets = [target_id] if target_id is not None else rank_targets(item.scene, subject, rays)[:TARGET_CANDIDATES]
    floor = float(item.params.get("min_visibility", 0.0))
    best: tuple[Scene, Sweep] | None = None
    failure = ""
    for target in targets:
        if progress:
            progress(f"solving: target object {target}, an added panel as occluder")
        try:
            scene, sweep = sweep_with_added_occluder(item.scene, target, levels, tolerance=tolerance,
                                                     others_floor=floor, rays_per_pixel=rays)
        except SweepError as exc:
            failure = str(exc)
            continue
        if best is None or sweep.reached > best[1].reached:
            best = (scene, sweep)
        if best[1].reached == len(levels):
            break
    if best is None:
        raise SweepError(failure)
    scene, sweep = best
    source = item.model_copy(update={"scene": scene})
    name = sweep_id(item.item_id, sweep.target_id, sweep.occluder_id)
    built = []
    for result, level in zip(sweep.levels, levels):
        level_item = _level_item(source, result, level_item_id(item.item_id, level), name, sweep) \
            if result.reachable else None
        if level_item is not None:
            level_item = level_item.model_copy(update={"difficulty": {**level_item.difficulty,
                                                                     "sweep_occluder_added": True}})
        built.append(level_item)
    return ItemSweep(item.item_id, name, sweep, built)
