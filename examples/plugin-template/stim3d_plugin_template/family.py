"""A third party's family: N red spheres in a row; how many spheres?

Everything a family needs, in one module: a parameter model (ranges, defaults and
descriptions in one place), `compose(params, rng, frame)` and `FAMILY`.
"""

from __future__ import annotations

from pydantic import Field

from stim3d.scenes.camera import look_at
from stim3d.scenes.colors import named
from stim3d.scenes.families.base import Composed, Family, FamilyParams, Frame
from stim3d.scenes.families.shared.stage import counting_lights
from stim3d.scenes.model import Question, Scene, SceneObject
from stim3d.scenes.placement import InfeasibleError
from stim3d.scenes.primitives import unit_dimensions
from stim3d.scenes.visibility import measure

SPACING_M = 1.2  # centre to centre
SIZE_M = 0.5


class Params(FamilyParams):
    """Unknown keys are an error; ranges live in the fields, so `stim3d validate` checks them."""

    max_n: int = Field(4, ge=1, le=4, description="most spheres in a row")
    answer: int | None = Field(None, ge=1, le=4, description="the gold count; None = drawn (a batch balances it)")

    def answer_space(self) -> list[int]:
        """The counts this cell can realise: a batch schedules them evenly over its items (scenes/balance.py)."""
        return list(range(1, self.max_n + 1))


def compose(params: Params, rng, frame: Frame) -> Composed:
    """The scene for `frame`; randomness only from `rng`, so one seed gives one item.json byte for byte."""
    n = params.answer if params.answer is not None else int(rng.integers(1, params.max_n + 1))
    if n > params.max_n:
        # Two arguments: the constraint's name and what went wrong (a batch reports it and goes on).
        raise InfeasibleError("max_n", f"answer {n} is more than max_n {params.max_n}")
    dims = tuple(SIZE_M * d for d in unit_dimensions("sphere"))
    objects = [SceneObject(id=i + 1, shape="sphere", size=SIZE_M, dimensions=dims, color=named("red"),
                           location=(SPACING_M * i - SPACING_M / 2 * (n - 1), 0.0, SIZE_M / 2)) for i in range(n)]
    camera = look_at((0.0, -6.0, 2.5), (0.0, 0.0, SIZE_M / 2), frame.width, frame.height)
    scene = Scene(camera=camera, lights=counting_lights(), objects=objects)
    question = Question(question_id="q0", text="How many spheres are there?", answer_type="integer", gold=n)
    return Composed(scene, [question], measure(scene, frame.rays_per_pixel), difficulty={"n": n})


# revision: raise it whenever the output for the same params and seed changes (it is part of the resume key).
FAMILY = Family("tiny_row", "N red spheres in a row (a template plug-in)", Params, compose, ("integer",), revision=1)
