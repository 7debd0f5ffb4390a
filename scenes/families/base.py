"""What a task family is: a parameter model, a description, and `compose(params, rng, frame)`.

Ranges live in the pydantic Params model (`Field(ge=..., le=...)`), so config
validation, `stim3d families` and error messages all come from one place.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict

from ..model import Question, Scene
from ..visibility import VisibilityResult


class FamilyParams(BaseModel):
    """Base of every family's parameters: unknown keys are an error."""

    model_config = ConfigDict(extra="forbid")


@dataclass(frozen=True)
class Frame:
    """The image the scene is composed for (the camera is built for this size)."""

    width: int
    height: int
    rays_per_pixel: int = 1


@dataclass
class Composed:
    """What a family returns: the scene, its questions, and the measured ground truth."""

    scene: Scene
    questions: list[Question]
    truth: VisibilityResult
    difficulty: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Family:
    name: str
    description: str
    params_model: type[FamilyParams]
    compose: Callable[[Any, np.random.Generator, Frame], Composed]
    answer_types: tuple[str, ...]
