"""AVA-3D orientation: which side of a toy car faces the camera, one of nine classes.

The scene model has one primitive per object, so the car is an *assembly*: parts
defined as data below (a body of three cubes, a cabin cube set back, a cone nose
and four cylinder wheels), each its own object labelled `part_of: toy_car` and
`part: <name>`. The cone nose marks the front, the cabin the top.

Classes are named by the side of the car that faces the camera, as in AVA-Bench's
orientation options: `front` (the nose points at the camera), `back`, `left` (its
left side faces the camera, so the nose points to the image's left), `right`,
the four diagonals `front left`, `front right`, `back left`, `back right`, and
`top` (seen from above). The car stands on the ground with a drawn heading; the
camera is put at the class's azimuth about the car, plus a yaw jitter of at most
`yaw_jitter` degrees (well inside the 22.5 degrees that separate neighbouring
classes), at an elevation (pitch) drawn from `elevation` (`top_elevation` for
top). Jitter, azimuth and elevation are recorded. The class is drawn uniformly
(or fixed by `answer`, which a batch schedules evenly).
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from pydantic import Field, model_validator

from ...camera import look_at
from ...colors import named
from ...model import Question, Scene, SceneObject, round6
from ...placement import InfeasibleError
from ...primitives import axis_angle_quat, quat_to_matrix, unit_dimensions
from ...visibility import measure
from ..base import Composed, Family, FamilyParams, Frame
from ..shared.stage import counting_lights
from .ava_common import options_text, pick

# Paper order of the options.
VIEWS: tuple[str, ...] = ("front", "front right", "right", "back right", "back", "back left", "left", "front left", "top")
# Camera azimuth about the car, degrees counter-clockwise from its front (seen from above).
AZIMUTH = {"front": 0.0, "front left": 45.0, "left": 90.0, "back left": 135.0, "back": 180.0,
           "back right": 225.0, "right": 270.0, "front right": 315.0}
QUESTION = "What is the orientation of the toy car in the image? Choose one from below: {options}."

# The toy car at unit scale, car frame: x forward, y to its left, z up (metres at scale 1).
# (part, shape, size, centre (x, y, z), rotation axis, rotation degrees, colour or None = body colour)
TOY_CAR: tuple[tuple[str, str, float, tuple[float, float, float], tuple[float, float, float], float, str | None], ...] = (
    ("body_rear", "cube", 0.6, (-0.6, 0.0, 0.55), (0.0, 0.0, 1.0), 0.0, None),
    ("body_middle", "cube", 0.6, (0.0, 0.0, 0.55), (0.0, 0.0, 1.0), 0.0, None),
    ("body_front", "cube", 0.6, (0.6, 0.0, 0.55), (0.0, 0.0, 1.0), 0.0, None),
    ("cabin", "cube", 0.45, (-0.35, 0.0, 1.075), (0.0, 0.0, 1.0), 0.0, "gray"),
    ("nose", "cone", 0.6, (1.2, 0.0, 0.55), (0.0, 1.0, 0.0), 90.0, "yellow"),
    ("wheel_front_left", "cylinder", 0.5, (0.6, 0.56, 0.25), (1.0, 0.0, 0.0), 90.0, "black"),
    ("wheel_front_right", "cylinder", 0.5, (0.6, -0.56, 0.25), (1.0, 0.0, 0.0), 90.0, "black"),
    ("wheel_rear_left", "cylinder", 0.5, (-0.6, 0.56, 0.25), (1.0, 0.0, 0.0), 90.0, "black"),
    ("wheel_rear_right", "cylinder", 0.5, (-0.6, -0.56, 0.25), (1.0, 0.0, 0.0), 90.0, "black"),
)
BODY_COLORS = ("red", "green", "blue", "orange", "purple")
CAR_CENTRE_Z = 0.65  # the camera aims here (unit scale)


class AvaOrientationParams(FamilyParams):
    answer: Literal["front", "front right", "right", "back right", "back", "back left", "left", "front left",
                    "top"] | None = Field(None, description="the class; None = drawn uniformly (a batch schedules it)")
    yaw_jitter: float = Field(12.0, ge=0.0, le=20.0, description="camera azimuth jitter, degrees either way")
    elevation: tuple[float, float] = Field((12.0, 30.0), description="camera pitch above the ground for the "
                                           "eight side classes, degrees")
    top_elevation: tuple[float, float] = Field((72.0, 84.0), description="camera pitch for top, degrees")
    scale: tuple[float, float] = Field((0.8, 1.2), description="car scale (length ~2.1 m at 1)")
    distance: float = Field(6.0, gt=1.0, le=30.0, description="camera distance at scale 1 (metres)")

    def answer_space(self) -> list[str]:
        return list(VIEWS)

    @model_validator(mode="after")
    def _ordered_pairs(self) -> AvaOrientationParams:
        for name in ("elevation", "top_elevation", "scale"):
            low, high = getattr(self, name)
            if not 0.0 < low <= high or (name != "scale" and high >= 90.0):
                raise ValueError(f"{name} {[low, high]}: give low <= high, above 0" +
                                 ("" if name == "scale" else " and below 90 degrees"))
        return self


def _quat_multiply(a, b) -> tuple[float, float, float, float]:
    w1, x1, y1, z1 = a
    w2, x2, y2, z2 = b
    return (w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2, w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
            w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2, w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2)


def toy_car(heading: float, scale: float, body_color: str) -> list[SceneObject]:
    """The car's parts in the world: heading in degrees counter-clockwise from +x, centred on the origin."""
    turn = axis_angle_quat((0.0, 0.0, 1.0), heading)
    rotation = quat_to_matrix(turn)
    objects = []
    for object_id, (part, shape, size, centre, axis, degrees, color) in enumerate(TOY_CAR, start=1):
        quat = tuple(round6(v) for v in _quat_multiply(turn, axis_angle_quat(axis, degrees)))
        location = rotation @ (np.asarray(centre) * scale)
        objects.append(SceneObject(
            id=object_id, shape=shape, size=round6(size * scale),
            dimensions=tuple(round6(d * size * scale) for d in unit_dimensions(shape)),
            location=tuple(round6(v) for v in location), rotation_quat=quat,
            color=named(color or body_color), attributes={"part_of": "toy_car", "part": part},
        ))
    return objects


def compose(params: AvaOrientationParams, rng: np.random.Generator, frame: Frame) -> Composed:
    view = params.answer or str(pick(rng, VIEWS))
    heading = float(rng.uniform(0.0, 360.0))
    scale = float(rng.uniform(*params.scale))
    body_color = str(pick(rng, BODY_COLORS))
    jitter = float(rng.uniform(-params.yaw_jitter, params.yaw_jitter))
    if view == "top":
        azimuth = float(rng.uniform(0.0, 360.0))
        elevation = float(rng.uniform(*params.top_elevation))
    else:
        azimuth = AZIMUTH[view] + jitter
        elevation = float(rng.uniform(*params.elevation))
    objects = toy_car(heading, scale, body_color)
    target = np.array([0.0, 0.0, CAR_CENTRE_Z * scale])
    world_azimuth, pitch = np.radians(heading + azimuth), np.radians(elevation)
    direction = np.array([np.cos(pitch) * np.cos(world_azimuth), np.cos(pitch) * np.sin(world_azimuth), np.sin(pitch)])
    distance = params.distance * scale
    for _ in range(12):  # back off until the whole car is in the frame
        camera = look_at(tuple(target + distance * direction), tuple(target), frame.width, frame.height, focal_35mm=38.0)
        scene = Scene(camera=camera, lights=counting_lights(), objects=objects)
        truth = measure(scene, frame.rays_per_pixel)
        if all(t.truncation == 0.0 for t in truth.truths):
            break
        distance *= 1.15
    else:
        raise InfeasibleError("in_frame", "the toy car does not fit the frame")
    question = Question(
        question_id="q0",
        text=QUESTION.format(options=options_text(VIEWS)),
        answer_type="choice",
        gold=view,
        subject={"object": "toy car", "options": "|".join(VIEWS), "ability": "orientation"},
    )
    difficulty = {"ability": "orientation", "view": view, "heading_deg": round6(heading),
                  "camera_azimuth_deg": round6(azimuth % 360.0), "yaw_jitter_deg": round6(jitter if view != "top" else 0.0),
                  "pitch_deg": round6(elevation), "camera_distance": round6(distance), "car_scale": round6(scale),
                  "n_objects": len(objects)}
    return Composed(scene=scene, questions=[question], truth=truth, difficulty=difficulty)


def car_figure(obj: SceneObject) -> str | None:
    """The car a part belongs to (`part_of`), None for anything else: the contrast floor judges the car against what
    it stands on as one figure (Family.figure_of). Part by part, a body cube's ring is mostly its neighbouring cubes
    of the same colour, so the floor failed every draw of a car whose side shows two body cubes."""
    figure = obj.attributes.get("part_of")
    return None if figure is None else str(figure)


FAMILY = Family(
    name="ava_orientation",
    per_object_materials=True,
    description="AVA-3D orientation: a toy car assembled from primitives seen from one of nine sides (front, back, "
    "left, right, top and the four diagonals), yaw/pitch jitter recorded; classes balanced.",
    params_model=AvaOrientationParams,
    compose=compose,
    answer_types=("choice",),
    revision=2,  # 2: difficulty key scale -> car_scale (a key named like a parameter split the summary's grid cells)
    figure_of=car_figure,
)
