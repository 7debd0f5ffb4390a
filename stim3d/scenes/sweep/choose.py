"""Choosing the target and the occluder of a sweep when the user names neither."""

from __future__ import annotations

import numpy as np

from ..model import Scene, SceneObject
from ..placement import Layout, occluder_path
from ..visibility import VisibilityCanvas, measure
from .model import PATH_GAP, TARGET_CANDIDATES, TOLERANCE, SweepError, matches_subject, moved_to


def rank_targets(scene: Scene, subject: dict | None = None, rays_per_pixel: int = 1) -> list[int]:
    """Visible countable objects, those the question asks about first, each group nearest the image centre first.

    Hiding an object the question counts is what a sweep is for; when none
    matches (a gold answer of 0), every countable object is a candidate.
    Ties go to the lower id.
    """
    truths = {t.id: t for t in measure(scene, rays_per_pixel).truths}
    candidates = [o for o in scene.objects if o.countable and truths[o.id].centroid_px is not None]
    asked = [o for o in candidates if subject and matches_subject(o, subject)]
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
        trial.put(moved_to(candidate, (float(start[0]), float(start[1]))))
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
    for target in targets:
        scores = rank_occluders(scene, target, rays_per_pixel)
        occluders = [object_id for _, object_id in scores]
        if scores[0][0] <= lowest_level + tolerance:
            return target, occluders
        if best is None or scores[0][0] < best[0]:
            best = (scores[0][0], target, occluders)
    assert best is not None
    return best[1], best[2]
