"""What a sweep is: the occluder's path, each level's result or the reason it is unreachable."""

from __future__ import annotations

from dataclasses import dataclass, field

from stim3d.errors import Stim3dError

from ..model import Scene, SceneObject, round6

TOLERANCE = 0.01
PATH_GAP = 0.1  # metres between the target's and the occluder's footprints
SCAN_STEPS = 40  # samples of the visibility profile along the path
AIM = 0.25  # solve to this share of the tolerance first
OCCLUDER_CANDIDATES = 3  # best-covering objects tried as occluder when none is given
TARGET_CANDIDATES = 4  # most central objects considered as target when none is given


class SweepError(Stim3dError, ValueError):
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


def moved_to(obj: SceneObject, xy: tuple[float, float]) -> SceneObject:
    """The same object at another ground position (height, rotation and everything else unchanged)."""
    return obj.model_copy(update={"location": (round6(xy[0]), round6(xy[1]), obj.location[2])})


def matches_subject(obj: SceneObject, subject: dict) -> bool:
    return bool(subject) and all(
        (key != "shape" or obj.shape == value) and (key != "color" or obj.color.name == value)
        for key, value in subject.items()
    )
