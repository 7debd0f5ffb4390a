"""DYSM 3D form constancy: are the shapes of the right group oriented like those of the left group?

Two groups of the same 1..4 shapes (same sizes, colours and arrangement) float
side by side, one on the image's left and one on its right; they do not rest on
the ground. The answer is drawn first, yes and no with probability 1/2 (or fixed
by `answer`, so that a preset's grid over both gives exactly equal shares):
- "yes": the right group is an exact translated copy of the left group;
- "no", `rotation: objects`: every non-sphere shape of the right group is turned
  by theta about its own centre, about an axis that breaks its symmetry: any axis
  for a cube (checked against all 24 of the cube's symmetries), an axis
  perpendicular to the shape's own axis for a cylinder, cone or torus; a sphere
  is never turned (no turn of a sphere shows);
- "no", `rotation: group`: the right group turns rigidly by theta about its
  centre, about an axis at least MIN_AXIS_ANGLE_DEG away from every cylinder's,
  cone's or torus's own axis.

What a turn looks like depends on the axis: a cylinder seen end-on and tilted by
5 degrees hardly changes. So orientations are drawn with every own axis at least
MIN_VIEW_ANGLE_DEG away from the line of sight, and among AXIS_CANDIDATES
symmetry-breaking axes the one whose turn changes the silhouette most is used
(for a group, the one whose least-changed shape changes most). The change is
measured by ray casting: the share of the shape's silhouette pixels that differ
after the turn, recorded as `silhouette_change`. Theta stays exactly the
parameter; only the axis is chosen. Turns are chosen for "yes" items too, and not
applied, so that `least_silhouette_change` in `difficulty` says how visible the
turn is (or would be) without revealing the answer. A group holds at most one sphere, and never
only a sphere.

Perspective must not fake a difference: the camera sits on the symmetry plane
between the groups, so far away that it sees them from directions at most
`max_view_angle_deg` apart (1 degree by default, a fifth of the smallest theta in
the paper), with the focal length that frames them; the lights are far away too,
so both groups are lit from almost the same direction. No shape hides another
and none is cut by the frame (measured: visibility 1, truncation 0).

Every object records in `attributes`: its group ("left"/"right"), slot, the id of
its counterpart in the other group, and `rotation_deg` (its orientation relative
to its counterpart: 0 or theta) with the world axis `axis_x, axis_y, axis_z` and
`silhouette_change` when it is turned. World orientations are each object's
`rotation_quat`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
from pydantic import Field, field_validator

from ...camera import CameraGeometry, geometry, look_at
from ...colors import COLOR_NAMES, named
from ...model import SHAPES, Camera, Question, Scene, SceneObject, round6
from ...placement import InfeasibleError
from ...primitives import axis_angle_quat, quat_to_matrix, unit_dimensions
from ...visibility import cast_object, measure
from ..base import Composed, Family, FamilyParams, Frame
from ..shared.rotation import (
    AXISYMMETRIC,
    axis_angle_to,
    breaks_symmetry,
    object_axis,
    random_rotation,
    random_unit,
    rounded_quat,
)
from ..shared.stage import lights_around

QUESTION = "Do all the shapes in the left group and right group have the same orientations?"

MIN_AXIS_ANGLE_DEG = 60.0  # group mode: rotation axis vs any shape's own axis
MIN_VIEW_ANGLE_DEG = 30.0  # a shape's own axis vs the line of sight
AXIS_CANDIDATES = 8
SLOT_PITCH = 2.0  # metres between shapes of a group: more than two bounding spheres of the largest shape
SIZE_RANGE = (0.8, 1.0)
BOUNDING_RADIUS = SIZE_RANGE[1] * np.sqrt(3.0) / 2.0  # of the largest cube, the widest shape
GROUP_GAP = 1.8  # metres between the two groups' bounding spheres
FILL = 0.9  # share of the frame's width the two groups span
LIGHT_SCALE = 20.0  # lights ~170 m away: both groups lit from directions ~2 degrees apart
COLORS = tuple(c for c in COLOR_NAMES if c != "gray")  # gray would melt into the ground
ATTEMPTS = 20
# Slot offsets in units of SLOT_PITCH, in the plane facing the camera (right, up).
SLOTS: dict[int, tuple[tuple[float, float], ...]] = {
    1: ((0.0, 0.0),),
    2: ((-0.5, 0.0), (0.5, 0.0)),
    3: ((-0.5, -0.29), (0.5, -0.29), (0.0, 0.58)),
    4: ((-0.5, -0.5), (0.5, -0.5), (-0.5, 0.5), (0.5, 0.5)),
}


class FormConstancyParams(FamilyParams):
    n_shapes: int = Field(2, ge=1, le=4, description="shapes per group")
    theta_deg: float = Field(10.0, ge=1.0, le=45.0, description="rotation of the right group's shapes when the answer is no (theta_r)")
    rotation: Literal["objects", "group"] = Field(
        "objects", description="objects: each right-hand shape turns about its own centre; group: the right group turns rigidly"
    )
    answer: Literal["random", "yes", "no"] = Field(
        "random", description="random: yes or no with probability 1/2; yes/no fix it (a grid over both balances a batch exactly)"
    )
    max_view_angle_deg: float = Field(
        1.0, ge=0.5, le=10.0, description="largest angle between the camera's lines of sight to the two groups"
    )

    def answer_space(self) -> list[str] | None:
        """yes and no when the answer is random (a batch then schedules them evenly); None when fixed."""
        return ["yes", "no"] if self.answer == "random" else None

    @field_validator("answer", mode="before")
    @classmethod
    def _yaml_booleans(cls, value):
        """YAML 1.1 reads a bare yes/no as a boolean; take it as the word the user wrote."""
        return {True: "yes", False: "no"}.get(value, value) if isinstance(value, bool) else value


# -- drawing ----------------------------------------------------------------------------------------

def base_rotation(shape: str, line_of_sight: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A random orientation whose own axis (if any) is at least MIN_VIEW_ANGLE_DEG off the line of sight."""
    while True:
        rotation = random_rotation(rng)
        if shape not in AXISYMMETRIC or axis_angle_to(rotation[:, 2], line_of_sight) >= MIN_VIEW_ANGLE_DEG:
            return rotation


def draw_shapes(n: int, rng: np.random.Generator) -> list[str]:
    """n shapes drawn uniformly, redrawn while more than one (or all) are spheres: a sphere shows no turn."""
    while True:
        shapes: list[str] = [SHAPES[int(i)] for i in rng.integers(len(SHAPES), size=n)]
        spheres = shapes.count("sphere")
        if spheres <= 1 and spheres < n:
            return shapes


# -- the scene --------------------------------------------------------------------------------------

@dataclass
class Member:
    """One shape of the left group and how its right-hand counterpart is turned."""

    shape: str
    size: float
    color: str
    base: np.ndarray  # world orientation in the left group
    offset: np.ndarray  # position relative to the group centre
    axis: np.ndarray | None = None
    change: float | None = None  # silhouette_change of the turn


def _object(object_id: int, member: Member, location: np.ndarray, rotation: np.ndarray, attributes: dict) -> SceneObject:
    return SceneObject(
        id=object_id,
        shape=member.shape,
        size=round6(member.size),
        dimensions=tuple(round6(d * member.size) for d in unit_dimensions(member.shape)),
        location=tuple(round6(v) for v in location),
        rotation_quat=rounded_quat(rotation),
        color=named(member.color),
        attributes=attributes,
    )


def silhouette_change(member: Member, location: np.ndarray, axis: np.ndarray, theta: float, cam: CameraGeometry, rays: int) -> float:
    """Share of the shape's silhouette pixels (at `location`) that differ after turning it by theta about `axis`."""
    before = _object(1, member, location, member.base, {})
    after = _object(1, member, location, quat_to_matrix(axis_angle_quat(axis, theta)) @ member.base, {})
    a, b = cast_object(before, cam, rays), cast_object(after, cam, rays)
    pixels_a, pixels_b = set(zip(a.gx.tolist(), a.gy.tolist())), set(zip(b.gx.tolist(), b.gy.tolist()))
    return len(pixels_a ^ pixels_b) / max(len(pixels_a), 1)


def group_half_width(n: int) -> float:
    return max(abs(a) for a, _ in SLOTS[n]) * SLOT_PITCH + BOUNDING_RADIUS


def form_camera(frame: Frame, target: np.ndarray, offset: float, half_width: float, elevation_deg: float, max_view_angle_deg: float) -> Camera:
    """Camera on the plane x = 0, so far that the groups at x = -+offset are seen max_view_angle_deg apart."""
    distance = offset / np.tan(np.radians(max_view_angle_deg) / 2.0)
    elevation = np.radians(elevation_deg)
    location = target + distance * np.array([0.0, -np.cos(elevation), np.sin(elevation)])
    fx = FILL / 2.0 * frame.width * distance / half_width
    return look_at(location, target, frame.width, frame.height, focal_35mm=fx * 36.0 / max(frame.width, frame.height))


def choose_turns(members: list[Member], params: FormConstancyParams, centre: np.ndarray, cam: CameraGeometry,
                 rng: np.random.Generator, rays: int) -> bool:
    """Set each member's turn axis (see the module docstring). False if no group axis breaks every symmetry."""
    theta = params.theta_deg
    turned = [m for m in members if m.shape != "sphere"]
    if params.rotation == "objects":
        for m in turned:
            candidates = [object_axis(m.shape, m.base, rng) for _ in range(AXIS_CANDIDATES)]
            changes = [silhouette_change(m, centre + m.offset, a, theta, cam, rays) for a in candidates]
            best = int(np.argmax(changes))
            m.axis, m.change = candidates[best], changes[best]
        return True
    valid = []
    for _ in range(200):
        axis = random_unit(rng)
        if all(breaks_symmetry(m.shape, m.base, axis, theta, MIN_AXIS_ANGLE_DEG) for m in turned):
            valid.append(axis)
            if len(valid) == AXIS_CANDIDATES:
                break
    if not valid:
        return False
    per_axis = [[silhouette_change(m, centre + m.offset, axis, theta, cam, rays) for m in turned] for axis in valid]
    best = int(np.argmax([min(c) for c in per_axis]))
    for m in members:
        m.axis = valid[best]
    for m, change in zip(turned, per_axis[best]):
        m.change = change
    return True


def build_objects(members: list[Member], centres: dict[str, np.ndarray], params: FormConstancyParams, turn: bool) -> list[SceneObject]:
    """Left group as drawn; right group a translated copy, with each member's turn applied when `turn`."""
    objects: list[SceneObject] = []
    n = len(members)
    for group in ("left", "right"):
        for slot, m in enumerate(members, start=1):
            rotation, offset = m.base, m.offset
            attributes: dict[str, str | int | float] = {
                "group": group, "slot": slot, "counterpart": slot + n if group == "left" else slot, "rotation_deg": 0.0,
            }
            if group == "right" and turn and m.axis is not None:
                matrix = quat_to_matrix(axis_angle_quat(m.axis, params.theta_deg))
                rotation = matrix @ m.base
                if params.rotation == "group":
                    offset = matrix @ m.offset
                axis = [round6(v) for v in m.axis]
                attributes.update(rotation_deg=params.theta_deg, axis_x=axis[0], axis_y=axis[1], axis_z=axis[2])
                if m.change is not None:
                    attributes["silhouette_change"] = round6(m.change)
            objects.append(_object(len(objects) + 1, m, centres[group] + offset, rotation, attributes))
    return objects


def compose(params: FormConstancyParams, rng: np.random.Generator, frame: Frame) -> Composed:
    gold = params.answer if params.answer != "random" else ("yes" if rng.random() < 0.5 else "no")
    n = params.n_shapes
    half_width = group_half_width(n)
    offset = half_width + GROUP_GAP / 2.0
    height = max(abs(b) for _, b in SLOTS[n]) * SLOT_PITCH + BOUNDING_RADIUS + 0.5
    centres = {"left": np.array([-offset, 0.0, height]), "right": np.array([offset, 0.0, height])}
    target = np.array([0.0, 0.0, height])
    for _ in range(ATTEMPTS):
        elevation = float(rng.uniform(20.0, 35.0))
        camera = form_camera(frame, target, offset, offset + half_width, elevation, params.max_view_angle_deg)
        cam = geometry(camera)
        right = np.array([1.0, 0.0, 0.0])
        up = np.array([0.0, np.sin(np.radians(elevation)), np.cos(np.radians(elevation))])  # the camera's up
        members = [
            Member(shape=shape, size=float(rng.uniform(*SIZE_RANGE)), color=COLORS[int(rng.integers(len(COLORS)))],
                   base=base_rotation(shape, cam.forward, rng), offset=SLOT_PITCH * (a * right + b * up))
            for shape, (a, b) in zip(draw_shapes(n, rng), SLOTS[n])
        ]
        # Turns are chosen for "yes" items too (and not applied), so difficulty does not reveal the answer.
        if not choose_turns(members, params, centres["right"], cam, rng, frame.rays_per_pixel):
            continue
        objects = build_objects(members, centres, params, turn=gold == "no")
        scene = Scene(camera=camera, lights=lights_around(target, LIGHT_SCALE), objects=objects)
        truth = measure(scene, frame.rays_per_pixel)
        if all(t.visibility == 1.0 and t.truncation == 0.0 for t in truth.truths):
            break
    else:
        raise InfeasibleError("full_visibility", f"no layout among {ATTEMPTS} showed all {2 * n} shapes whole")
    rays = [centres[g] - np.asarray(camera.location) for g in ("left", "right")]
    view_angle = np.degrees(np.arccos(rays[0] @ rays[1] / np.linalg.norm(rays[0]) / np.linalg.norm(rays[1])))
    changes = [m.change for m in members if m.change is not None]
    question = Question(question_id="q0", text=QUESTION, answer_type="yes_no", gold=gold, subject={"rotation": params.rotation})
    difficulty = {
        "n_shapes": n,
        "theta_deg": params.theta_deg,
        "rotation": params.rotation,
        "shapes": ",".join(m.shape for m in members),
        "view_angle_deg": round6(view_angle),
        "smallest_shape_px": min(t.visible_px for t in truth.truths),
        "least_silhouette_change": round6(min(changes)),
    }
    return Composed(scene=scene, questions=[question], truth=truth, difficulty=difficulty)


FAMILY = Family(
    name="form_constancy",
    description="Two groups of the same 1-4 shapes, left and right: are the right group's shapes oriented like the "
    "left group's, or turned by theta (each shape about a symmetry-breaking axis, or the group rigidly)? "
    "(DYSM 3D form constancy); yes and no in equal shares; a distant camera keeps perspective from faking a turn.",
    params_model=FormConstancyParams,
    compose=compose,
    answer_types=("yes_no",),
)
