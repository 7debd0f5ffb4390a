"""Re-validate an edited scene: recompute visibility and gold answers, and name every broken constraint.

Pure functions of the scene model (no Blender): the add-on's Re-validate and
Save operators call `revalidate(original_item, edited_scene)` after reading the
Blender objects back (blender_addon/readback.py).

- Visibility: `scenes.visibility.measure`, the same ray cast every item's ground
  truth comes from.
- Gold answers: recomputed by the family's own rule, `Family.recount`, the same
  one an occlusion sweep uses (scenes/sweep/items.py). The counting families count
  every countable object matching the question's subject, a fully hidden one too
  (scenes/families/shared/counting.py `recount_subject`); the report names the
  objects hidden completely, and an object below min_visibility is a violated
  constraint. For a family without a rule the stored answer is kept and reported
  as not re-checked, never silently trusted.
- Constraints: min_visibility (every countable object), the least-visibility band
  (when the item met it), in frame (`scenes.placement.Layout.in_frame`), no
  interpenetration (`scenes.placement.mesh_distance` between every pair, plus a
  point-in-solid test because a surface distance cannot see one object sitting
  wholly inside another; and no object below the ground).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from itertools import combinations
from typing import Any

import numpy as np
import trimesh

from stim3d.scenes.families import FAMILIES
from stim3d.scenes.meshes import object_mesh, object_world_vertices
from stim3d.scenes.model import GroundTruth, Item, Scene, SceneObject, StudioLook
from stim3d.scenes.placement import Layout, mesh_distance
from stim3d.scenes.primitives import TORUS_TUBE, quat_to_matrix, unit_mesh
from stim3d.scenes.visibility import VisibilityResult, measure
from stim3d.scoring.answers import Gold

CONTACT_M = 1e-4  # mesh distance at or below which two objects interpenetrate (or touch)
BELOW_GROUND_M = 1e-3  # an object whose lowest point is deeper than this goes through the ground


@dataclass(frozen=True)
class Violation:
    constraint: str  # min_visibility | least_visibility_band | in_frame | no_interpenetration
    object_ids: tuple[int, ...]
    message: str


@dataclass(frozen=True)
class AnswerCheck:
    question_id: str
    text: str
    old_gold: Gold
    new_gold: Gold | None  # None: not recomputed (see `how`)
    how: str
    hidden: tuple[int, ...] = ()  # counted objects with no visible pixel: the answer holds, the picture hides them

    @property
    def changed(self) -> bool:
        return self.new_gold is not None and self.new_gold != self.old_gold


@dataclass
class Validation:
    item: Item  # the edited item: new scene, ground truth, recomputed golds, updated difficulty
    truth: VisibilityResult
    changes: list[str] = field(default_factory=list)
    answers: list[AnswerCheck] = field(default_factory=list)
    violations: list[Violation] = field(default_factory=list)

    def lines(self) -> list[tuple[str, str]]:
        """(level, text) pairs for the UI and reports; level is INFO, WARNING or ERROR."""
        out = [("INFO", change) for change in self.changes] or [("INFO", "no changes to the scene")]
        for answer in self.answers:
            if answer.new_gold is None:
                out.append(("WARNING", f"{answer.text} gold {answer.old_gold!r} {answer.how}"))
            elif answer.changed:
                out.append(("WARNING", f"{answer.text} gold {answer.old_gold!r} -> {answer.new_gold!r} ({answer.how})"))
            else:
                level = "WARNING" if answer.hidden else "INFO"
                out.append((level, f"{answer.text} gold {answer.new_gold!r} holds ({answer.how})"))
        out += [("ERROR", f"{v.constraint}: {v.message}") for v in self.violations]
        if not self.violations:
            out.append(("INFO", "every constraint holds"))
        return out


def _describe(obj: SceneObject) -> str:
    return f"{obj.id} ({obj.color.name} {obj.shape})"


# -- gold answers ------------------------------------------------------------------------------------

def check_answers(item: Item, scene: Scene, truth: VisibilityResult) -> list[AnswerCheck]:
    """Each question's gold recounted on `scene` by the family's rule (`Family.recount`), or why it was not."""
    family = FAMILIES.get(item.family)
    visible = {t.id: t.visible_px for t in truth.truths}
    checks = []
    for question in item.questions:
        recount = family.recount(question, scene) if family is not None and family.recount is not None else None
        hidden: tuple[int, ...] = ()
        if recount is None:
            new_gold, how = None, (f"not re-checked: family {item.family!r} has no recount rule for this question; "
                                   "check it by eye")
        else:
            hidden = tuple(i for i in recount.object_ids if visible.get(i, 0.0) <= 0.0)
            new_gold, how = recount.gold, f"recounted: objects {list(recount.object_ids)}"
            if hidden:
                how += f", hidden completely {list(hidden)} (counted: they are in the scene)"
        checks.append(AnswerCheck(question.question_id, question.text, question.gold, new_gold, how, hidden))
    return checks


# -- constraints -------------------------------------------------------------------------------------

def min_visibility_of(item: Item) -> float | None:
    value = item.params.get("min_visibility", item.difficulty.get("min_visibility"))
    return float(value) if isinstance(value, (int, float)) else None


@cache
def _face_planes(shape: str) -> tuple[np.ndarray, np.ndarray]:
    """Outward unit normals and offsets of a convex unit mesh's faces (degenerate faces dropped)."""
    mesh = unit_mesh(shape)
    v0, v1, v2 = (mesh.vertices[mesh.faces[:, k]] for k in range(3))
    normals = np.cross(v1 - v0, v2 - v0)
    lengths = np.linalg.norm(normals, axis=1)
    keep = lengths > 1e-12
    normals = normals[keep] / lengths[keep, None]
    return normals, np.einsum("ij,ij->i", normals, v0[keep])


def contains_point(obj: SceneObject, point: Any) -> bool:
    """Whether `point` (world) lies inside `obj`'s solid: its mesh for convex shapes, the tube for a torus; for a
    composed or mesh object (scenes/meshes.py), its closed mesh by ray parity (an open mesh encloses nothing, so
    only the surface-distance test sees it)."""
    local = quat_to_matrix(obj.rotation_quat).T @ (np.asarray(point, dtype=float) - np.asarray(obj.location)) / obj.size
    if obj.source is not None:
        mesh = object_mesh(obj)
        solid = trimesh.Trimesh(mesh.vertices, mesh.faces, process=False)
        return bool(solid.is_watertight and solid.contains(local[None, :])[0])
    if obj.shape == "torus":
        return bool((np.hypot(local[0], local[1]) - (0.5 - TORUS_TUBE)) ** 2 + local[2] ** 2 <= TORUS_TUBE**2)
    normals, offsets = _face_planes(obj.shape)
    return bool(np.all(normals @ local <= offsets + 1e-9))


def interpenetrate(a: SceneObject, b: SceneObject) -> bool:
    """Surfaces touching or crossing (FCL mesh distance), or one object sitting inside the other."""
    return (
        mesh_distance(a, b, CONTACT_M) <= CONTACT_M
        or contains_point(a, b.location)
        or contains_point(b, a.location)
    )


def check_constraints(item: Item, scene: Scene, truth: VisibilityResult) -> list[Violation]:
    """Every constraint of `item` that `scene` breaks, one Violation per object or pair."""
    violations: list[Violation] = []
    visibility = truth.visibility()
    countable = [o for o in scene.objects if o.countable]
    floor = min_visibility_of(item)
    if floor is not None:
        for obj in countable:
            if visibility[obj.id] < floor - 1e-9:
                violations.append(Violation(
                    "min_visibility", (obj.id,),
                    f"object {_describe(obj)} is {visibility[obj.id]:.3f} visible, below min_visibility {floor}",
                ))
    band = item.params.get("band")
    if floor is not None and isinstance(band, (int, float)) and item.difficulty.get("band_met") is True and countable:
        least = min(countable, key=lambda o: visibility[o.id])
        if visibility[least.id] > floor + band + 1e-9:
            violations.append(Violation(
                "least_visibility_band", (least.id,),
                f"the least visible object, {_describe(least)}, is {visibility[least.id]:.3f} visible, above the band "
                f"[{floor}, {round(floor + band, 6)}] the item promised",
            ))
    layout = Layout(scene.camera, rays_per_pixel=item.ground_truth.rays_per_pixel)
    for obj in scene.objects:
        if not layout.in_frame(obj):
            violations.append(Violation("in_frame", (obj.id,), f"object {_describe(obj)} is not entirely inside the frame"))
    for obj in scene.objects:
        lowest = float(object_world_vertices(obj)[:, 2].min())
        if lowest < -BELOW_GROUND_M:
            violations.append(Violation(
                "no_interpenetration", (obj.id,), f"object {_describe(obj)} goes {-lowest:.3f} m into the ground"
            ))
    for a, b in combinations(scene.objects, 2):
        if interpenetrate(a, b):
            violations.append(Violation(
                "no_interpenetration", (a.id, b.id), f"objects {_describe(a)} and {_describe(b)} interpenetrate"
            ))
    return violations


# -- what changed ------------------------------------------------------------------------------------

def _angle_degrees(q1: Any, q2: Any) -> float:
    dot = abs(float(np.dot(np.asarray(q1) / np.linalg.norm(q1), np.asarray(q2) / np.linalg.norm(q2))))
    return float(np.degrees(2.0 * np.arccos(min(1.0, dot))))


def describe_changes(old: Scene, new: Scene, sources: dict[int, int | None] | None = None) -> list[str]:
    """One line per change between two scenes, in object-id order."""
    before = {o.id: o for o in old.objects}
    after = {o.id: o for o in new.objects}
    lines = []
    for object_id in sorted(before.keys() | after.keys()):
        a, b = before.get(object_id), after.get(object_id)
        if b is None:
            lines.append(f"deleted {_describe(a)}")  # type: ignore[arg-type]
            continue
        if a is None:
            source = (sources or {}).get(object_id)
            lines.append(f"added {_describe(b)}" + (f": a copy of {source}" if source and source != object_id else ""))
            continue
        if a.shape != b.shape:
            lines.append(f"object {object_id}: shape {a.shape} -> {b.shape}")
        moved = float(np.linalg.norm(np.subtract(a.location, b.location)))
        if moved > 1e-6:
            lines.append(f"moved {_describe(b)} by {moved:.3f} m")
        turned = _angle_degrees(a.rotation_quat, b.rotation_quat)
        if turned > 1e-3:
            lines.append(f"rotated {_describe(b)} by {turned:.1f} degrees")
        if a.size != b.size:
            lines.append(f"resized {_describe(b)}: size {a.size} -> {b.size}")
        if a.color.name != b.color.name:
            lines.append(f"recoloured object {object_id}: {a.color.name} -> {b.color.name}")
        if a.finish != b.finish:
            lines.append(f"object {object_id}: finish {a.finish} -> {b.finish}")
    return lines


# -- all together ------------------------------------------------------------------------------------

def _difficulty(item: Item, truth: VisibilityResult, violations: list[Violation]) -> dict[str, Any]:
    """The item's difficulty with the measured keys it has brought up to date."""
    difficulty = dict(item.difficulty)
    least = min((t.visibility for t in truth.truths), default=None)
    if "n_objects" in difficulty:
        difficulty["n_objects"] = len(truth.truths)
    if "least_visibility" in difficulty:
        difficulty["least_visibility"] = least
    floor, band = min_visibility_of(item), item.params.get("band")
    if "band_met" in difficulty and floor is not None and isinstance(band, (int, float)) and least is not None:
        difficulty["band_met"] = bool(floor - 1e-9 <= least <= floor + band + 1e-9)
    if violations:
        difficulty["violated_constraints"] = ",".join(sorted({v.constraint for v in violations}))
    return difficulty


def _with_look(difficulty: dict[str, Any], scene: Scene) -> dict[str, Any]:
    """`difficulty.look` names the edited scene's look (the add-on's Apply Look may have changed it), none in studio."""
    kept = {k: v for k, v in difficulty.items() if k != "look"}
    return kept if isinstance(scene.look, StudioLook) else {**kept, "look": scene.look.name}


def revalidate(original: Item, scene: Scene, sources: dict[int, int | None] | None = None) -> Validation:
    """Measure `scene` (an edit of `original.scene`), recompute the golds, list changes and violations. The composed
    objects whose parts the original recorded (`part_px`) record them again, so an untouched item is unchanged."""
    composed = {o.id for o in scene.objects if o.source is not None and o.source.kind == "composed"}
    parts = {t.id for t in original.ground_truth.objects if t.part_px is not None} & composed
    truth = measure(scene, original.ground_truth.rays_per_pixel, parts)
    answers = check_answers(original, scene, truth)
    violations = check_constraints(original, scene, truth)
    golds = {a.question_id: a.new_gold for a in answers if a.new_gold is not None}
    questions = [q.model_copy(update={"gold": golds.get(q.question_id, q.gold)}) for q in original.questions]
    edited = original.model_copy(update={
        "scene": scene,
        "ground_truth": GroundTruth(objects=truth.truths, rays_per_pixel=original.ground_truth.rays_per_pixel),
        "questions": questions,
        "difficulty": _with_look(_difficulty(original, truth, violations), scene),
    })
    return Validation(
        item=edited,
        truth=truth,
        changes=describe_changes(original.scene, scene, sources),
        answers=answers,
        violations=violations,
    )
