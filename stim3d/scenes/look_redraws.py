"""What a look renders next when a rendered item fails a check: one redraw step per look.

render/batch/produce.py renders an item once, checks it (`check`: named colours,
scenes/look_colours.py; the family's own colour check, `Family.look_colour_check`; the
contrast floor, scenes/look_contrast.py) and, while an object fails, asks the look's
step (`redraw_for`) for the next item to render and whether that render replaces the
one it keeps. The loop is the same for every look; only the steps differ:

- a drawn look (clevr, photoreal) brackets before it moves the set: the same draw
  with its exposure corrected while the failing colours predict an exposure that
  passes, a fresh draw otherwise or when an object is under the contrast floor
  (scenes/look_colours.py `next_draw`), up to MAX_REDRAWS renders; the last one is kept.
- studio draws nothing, so it changes only what it owns: while an object is under the
  contrast floor its ground takes the next of STUDIO_REDRAW_GROUNDS' greys (the last
  kept); then, while a colour fails, the rig is re-exposed by the step that clears the
  named colours most and by the smallest step predicted to pass (at most two brackets,
  both measured on the render before them: bench/studio_brackets.py), each kept only if
  it fails fewer objects and puts none more under the floor.

`recorded` writes what happened into the kept item's look: how many renders came
after the first (kept or not: they are the item's cost) and the objects still failing.
Everything here is pure: the same failing render asks for the same next item.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from .families import FAMILIES
from .look_colours import (
    MAX_REDRAWS,
    MIN_CORRECTION_EV,
    Draw,
    colour_failures,
    exposure_correction,
    measured_colours,
    next_draw,
)
from .look_contrast import STUDIO_REDRAW_GROUNDS, contrast_failures, with_studio_ground
from .looks import with_look, with_studio_exposure
from .model import DrawnLook, Item, Look, LookName, StudioLook


@dataclass(frozen=True)
class Checked:
    """A rendered item's checks: the family's colour measures, and the sorted ids of the objects whose colour fails
    and of those under the contrast floor."""

    measured: dict[str, float]
    colour_failures: list[int]
    contrast_failures: list[int]

    @property
    def fails(self) -> bool:
        return bool(self.colour_failures or self.contrast_failures)


def check(finished: Item) -> Checked:
    """Every colour and contrast check on a rendered item (its ground truth holds measured colours and contrasts)."""
    failures = set(colour_failures(finished, measured_colours(finished)))
    measured: dict[str, float] = {}
    family = FAMILIES.get(finished.family)
    if family is not None and family.look_colour_check is not None:
        measured, failing = family.look_colour_check(finished)
        failures.update(failing)
    return Checked(measured, sorted(failures), contrast_failures(finished))


class Redraw(Protocol):
    """One look's redraw step: what to render after a failing render, and whether a new render is kept."""

    def next(self, item: Item, finished: Item, checked: Checked) -> Item | None:
        """The item to render next after `item` rendered as `finished` failed `checked`; None: stop."""

    def keeps(self, kept: Checked, candidate: Checked) -> bool:
        """Whether the render that checked `candidate` replaces the kept one that checked `kept`."""


@dataclass
class DrawnRedraw:
    """Clevr's and photoreal's step: the draw corrected, or a fresh one (scenes/look_colours.py `next_draw`)."""

    name: LookName
    renders: int = 0
    draw: Draw = field(default_factory=Draw)

    def next(self, item: Item, finished: Item, checked: Checked) -> Item | None:
        if self.renders >= MAX_REDRAWS:
            return None
        self.renders += 1
        # an object under the contrast floor needs another ground or material, which only a fresh draw gives
        step = None if checked.contrast_failures else exposure_correction(finished, measured_colours(finished))
        self.draw = next_draw(self.draw, step)
        return with_look(item, self.name, self.draw.index, self.draw.ev)

    def keeps(self, kept: Checked, candidate: Checked) -> bool:
        return True


@dataclass
class StudioRedraw:
    """Studio's step: the ground's grey for the contrast floor, then up to two re-exposures of the rig for colour."""

    grounds: int = 0
    base: Item | None = None  # the item before the first bracket: both brackets scale its rig
    steps: list[float] = field(default_factory=list)

    def next(self, item: Item, finished: Item, checked: Checked) -> Item | None:
        if checked.contrast_failures and self.base is None and self.grounds < len(STUDIO_REDRAW_GROUNDS):
            self.grounds += 1
            return with_studio_ground(item, self.grounds)
        if not checked.colour_failures:
            return None
        if self.base is None:
            self.base = item
            measured = measured_colours(finished)
            steps = (exposure_correction(finished, measured, least=least) for least in (False, True))
            self.steps = [s for s in dict.fromkeys(steps) if s is not None and abs(s) >= MIN_CORRECTION_EV]
        return with_studio_exposure(self.base, self.steps.pop(0)) if self.steps else None

    def keeps(self, kept: Checked, candidate: Checked) -> bool:
        if self.base is None:  # a ground's grey: kept, the next grey is drawn from it
            return True
        return (len(candidate.colour_failures) < len(kept.colour_failures)
                and len(candidate.contrast_failures) <= len(kept.contrast_failures))


def redraw_for(look: Look) -> Redraw:
    """The redraw step of an item's look."""
    if isinstance(look, StudioLook):
        return StudioRedraw()
    return DrawnRedraw(look.name)


def recorded(finished: Item, checked: Checked, redraws: int) -> Item:
    """`finished` with its look recording `redraws` and the objects still failing `checked` (a drawn look also the
    family's colour measures: studio leaves them out, so a studio item that rendered right keeps its bytes)."""
    look = finished.scene.look
    update: dict[str, object] = {"redraws": redraws, "colour_failures": checked.colour_failures,
                                 "contrast_failures": checked.contrast_failures}
    if isinstance(look, DrawnLook):
        update["measured"] = checked.measured
    return finished.model_copy(update={"scene": finished.scene.model_copy(update={"look": look.model_copy(update=update)})})
