"""DYSM 3D letter discrimination: letters spelled by primitives in a 5x7 dot matrix.

The letters stand upright in a vertical plane facing the camera (the published
generator laid them flat on the ground, where perspective squashes them), read
left to right in the image, and float above the ground: the dots do not rest on
it, the lowest row hangs about one dot pitch above it. The camera looks at the
plane from above and up to 10 degrees to one side, and the whole frame shows
ground, never sky: the horizon appears at the camera's elevation above the optical
axis, so the elevation is drawn HORIZON_MARGIN_DEG to HORIZON_MARGIN_DEG +
ELEVATION_SPAN_DEG above half the vertical field of view (14.9-18.9 degrees in a 4:3
frame), and the ground plane is made large enough to hold where the frame's
corner rays meet it (tests/test_letters_ground.py checks the rendered top rows).
Each dot is a sphere, a cube (a face towards the camera) or a cylinder (its axis
towards the camera).

Parameters follow the paper: `dot_size` is the dot's half-extent in metres (the
published generator's radius), `spacing` the centre-to-centre distance of
neighbouring dots. The camera frames the letter string (its distance follows
from the string's extent), so what `dot_size` and `spacing` change in the image
is how much of the matrix the dots fill, and `n_letters` how small each letter
gets.

The answer is drawn first: `n_letters` characters drawn uniformly from the
charset (distinct unless `allow_repeats`); the scene realises them. Every dot is
checked in measured values: fully visible (visibility 1, no truncation) and at
least MIN_DOT_PX pixels large; a camera that fails is redrawn, and an item whose
dots are too small for the frame is reported infeasible.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from pydantic import Field, model_validator

from ...camera import geometry, look_at
from ...colors import COLOR_NAMES, named
from ...model import Camera, Question, Scene, SceneObject, Stage, round6
from ...placement import InfeasibleError
from ...primitives import axis_angle_quat, unit_dimensions
from ...visibility import VisibilityResult, measure
from ..base import Composed, Family, FamilyParams, Frame
from ..shared.font import CHARSETS, COLUMNS, ROWS, dots
from ..shared.stage import COUNTING_VIEW_DISTANCE, camera_distance, lights_around

QUESTION = "What {kind}(s) do the {plural} in this scene form? Read them from left to right."
KIND = {"letters": "letter", "digits": "digit", "alphanumeric": "letter or digit"}
PLURAL = {"sphere": "spheres", "cube": "cubes", "cylinder": "cylinders"}

GAP_COLUMNS = 2  # blank matrix columns between neighbouring letters
MIN_DOT_PX = 6.0  # every dot covers at least this many pixels
CAMERA_ATTEMPTS = 12
FOCAL_35MM = 70.0  # long enough that half the vertical field of view (10.9 degrees in 4:3) leaves room below the horizon
FILL_WIDTH, FILL_HEIGHT = 0.84, 0.6  # largest share of the frame the letter string may span
DOT_COLORS = tuple(c for c in COLOR_NAMES if c != "gray")  # gray would melt into the ground and sky
HORIZON_MARGIN_DEG = 4.0  # the frame's top edge looks at least this far below the horizon
ELEVATION_SPAN_DEG = 4.0  # elevations drawn over this range above the least one (above ~23 degrees dense cubes hide each other)
GROUND_MARGIN = 1.25  # the ground reaches this many times past the farthest corner ray's hit point
MIN_GROUND_SIZE = 400.0


class LettersParams(FamilyParams):
    primitive: Literal["sphere", "cube", "cylinder"] = Field("sphere", description="the shape every dot is made of")
    dot_size: float = Field(0.08, ge=0.02, le=0.3, description="dot half-extent in metres (sphere radius, half the cube edge)")
    spacing: float = Field(0.5, ge=0.1, le=1.5, description="centre-to-centre distance of neighbouring dots in metres")
    n_letters: int = Field(2, ge=1, le=5, description="characters in the string (N)")
    allow_repeats: bool = Field(False, description="a character may occur more than once in the string")
    charset: Literal["letters", "digits", "alphanumeric"] = Field("letters", description="A-Z, 0-9, or both")

    @model_validator(mode="after")
    def _dots_do_not_touch(self) -> LettersParams:
        if 2.0 * self.dot_size > 0.9 * self.spacing:
            raise ValueError(
                f"dots of dot_size {self.dot_size} (diameter {2 * self.dot_size:g}) touch at spacing {self.spacing}; "
                f"spacing must be at least {2 * self.dot_size / 0.9:.3f}"
            )
        return self


def draw_string(params: LettersParams, rng: np.random.Generator) -> str:
    """The gold answer: characters drawn uniformly from the charset, distinct unless repeats are allowed."""
    charset = CHARSETS[params.charset]
    picks = rng.choice(len(charset), params.n_letters, replace=params.allow_repeats)
    return "".join(charset[int(i)] for i in picks)


def _dot_rotation(primitive: str) -> tuple[float, float, float, float]:
    if primitive == "cylinder":  # the round face towards the camera (local Z -> world -Y)
        return tuple(round6(v) for v in axis_angle_quat((1.0, 0.0, 0.0), 90.0))  # type: ignore[return-value]
    return (1.0, 0.0, 0.0, 0.0)


def build_dots(text: str, params: LettersParams, color: str) -> tuple[list[SceneObject], np.ndarray, tuple[float, float]]:
    """The dots of `text` in the plane y = 0, centred on x = 0. Returns (dots, block centre, half extents)."""
    pitch, size = params.spacing, 2.0 * params.dot_size
    n_columns = len(text) * COLUMNS + (len(text) - 1) * GAP_COLUMNS
    bottom = 1.2 * pitch + params.dot_size  # centre height of the lowest row
    rotation = _dot_rotation(params.primitive)
    dimensions = tuple(round6(d * size) for d in unit_dimensions(params.primitive))
    objects: list[SceneObject] = []
    for index, char in enumerate(text):
        for row, column in dots(char):
            matrix_column = index * (COLUMNS + GAP_COLUMNS) + column - 1
            x = (matrix_column - (n_columns - 1) / 2.0) * pitch
            z = bottom + (ROWS - row) * pitch
            objects.append(
                SceneObject(
                    id=len(objects) + 1,
                    shape=params.primitive,
                    size=round6(size),
                    dimensions=dimensions,
                    location=(round6(x), 0.0, round6(z)),
                    rotation_quat=rotation,
                    color=named(color),
                    attributes={"letter": char, "letter_index": index + 1, "row": row, "col": column},
                )
            )
    centre = np.array([0.0, 0.0, bottom + (ROWS - 1) / 2.0 * pitch])
    half = ((n_columns - 1) / 2.0 * pitch + params.dot_size, (ROWS - 1) / 2.0 * pitch + params.dot_size)
    return objects, centre, half


def elevation_range(frame: Frame) -> tuple[float, float]:
    """Camera elevations (degrees) that keep the horizon above the frame: half the vertical field of view + margin."""
    fy = FOCAL_35MM / 36.0 * max(frame.width, frame.height)
    least = float(np.degrees(np.arctan(frame.height / 2.0 / fy))) + HORIZON_MARGIN_DEG
    return least, least + ELEVATION_SPAN_DEG


def ground_for(camera: Camera) -> Stage:
    """A ground plane that fills the frame: it reaches past where the frame's corner rays hit z = 0."""
    origins, directions = geometry(camera).rays(np.array([0.0, camera.width, 0.0, camera.width]),
                                                np.array([0.0, 0.0, camera.height, camera.height]))
    if not (directions[:, 2] < 0).all():
        raise InfeasibleError("horizon", "a corner of the frame looks above the horizon")
    hits = origins - directions * (origins[:, 2] / directions[:, 2])[:, None]
    reach = float(np.abs(hits[:, :2]).max())
    return Stage(ground_size=round6(max(MIN_GROUND_SIZE, 2.0 * GROUND_MARGIN * reach)))


def letters_camera(frame: Frame, centre: np.ndarray, half: tuple[float, float], rng: np.random.Generator) -> Camera:
    """A view of the letter plane from above (horizon out of frame) and a little to one side, framing the string."""
    elevation = np.radians(rng.uniform(*elevation_range(frame)))
    azimuth = np.radians(rng.uniform(-10.0, 10.0))
    fx = FOCAL_35MM / 36.0 * max(frame.width, frame.height)
    distance = max(fx * half[0] / (FILL_WIDTH / 2 * frame.width), fx * half[1] / (FILL_HEIGHT / 2 * frame.height))
    direction = np.array([np.sin(azimuth) * np.cos(elevation), -np.cos(azimuth) * np.cos(elevation), np.sin(elevation)])
    return look_at(centre + distance * direction, centre, frame.width, frame.height, focal_35mm=FOCAL_35MM)


def _check_dots(truth: VisibilityResult) -> str | None:
    """The constraint a dot breaks (None when every dot is whole, in frame and large enough)."""
    if min(t.amodal_px for t in truth.truths) < MIN_DOT_PX:
        return "dot_pixels"
    if any(t.visibility < 1.0 or t.truncation > 0.0 for t in truth.truths):
        return "full_visibility"
    return None


def compose(params: LettersParams, rng: np.random.Generator, frame: Frame) -> Composed:
    text = draw_string(params, rng)
    color = DOT_COLORS[int(rng.integers(len(DOT_COLORS)))]
    objects, centre, half = build_dots(text, params, color)
    broken: str | None = "placement"
    for _ in range(CAMERA_ATTEMPTS):
        camera = letters_camera(frame, centre, half, rng)
        lights = lights_around(centre, scale=camera_distance(camera, centre) / COUNTING_VIEW_DISTANCE)
        scene = Scene(camera=camera, lights=lights, stage=ground_for(camera), objects=objects)
        truth = measure(scene, frame.rays_per_pixel)
        broken = _check_dots(truth)
        if broken is None:
            break
        if broken == "dot_pixels":
            smallest = min(t.amodal_px for t in truth.truths)
            raise InfeasibleError(
                "dot_pixels",
                f"the smallest dot covers {smallest:g} px (< {MIN_DOT_PX:g}) at {frame.width}x{frame.height}; "
                "use a larger image, a larger dot_size or fewer letters",
            )
    else:
        raise InfeasibleError(str(broken), f"no camera among {CAMERA_ATTEMPTS} saw every dot of {text!r} whole and in frame")
    question = Question(
        question_id="q0",
        text=QUESTION.format(kind=KIND[params.charset], plural=PLURAL[params.primitive]),
        answer_type="letters",
        gold=text,
        subject={"primitive": params.primitive, "n_letters": params.n_letters},
    )
    distance = camera_distance(camera, centre)
    difficulty = {
        "primitive": params.primitive,
        "dot_size": params.dot_size,
        "spacing": params.spacing,
        "n_letters": params.n_letters,
        "charset": params.charset,
        "fill_ratio": round6(2.0 * params.dot_size / params.spacing),
        "dot_pitch_px": round6(camera.fx * params.spacing / distance),
        "smallest_dot_px": min(t.visible_px for t in truth.truths),
        "n_dots": len(objects),
    }
    return Composed(scene=scene, questions=[question], truth=truth, difficulty=difficulty)


def letter_figure(obj: SceneObject) -> str | None:
    """The letter a dot spells ("letter 2": the string's second), None for an object that spells none (an
    occluder a sweep added): the contrast floor judges a letter's dots together (Family.figure_of)."""
    index = obj.attributes.get("letter_index")
    return None if index is None else f"letter {index}"


FAMILY = Family(
    name="letters",
    description="Read 1-5 letters (or digits) spelled by spheres, cubes or cylinders on a 5x7 dot matrix that "
    "stands upright facing the camera (DYSM 3D letter discrimination); every dot fully visible; "
    "the answer is the string in image order.",
    params_model=LettersParams,
    compose=compose,
    answer_types=("letters",),
    revision=2,
    figure_of=letter_figure,
)
