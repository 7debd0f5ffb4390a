"""Helpers several families share, each module with its own generator revision.

No family imports another family's module, and no benchmark's folder (dysm/, oddgrid/,
rose/, ava/) imports another's (tests/test_family_imports.py): what two families both
use lives here, so a family's bytes change only when its own module (and its own
helpers) or a shared module it imports changes. Which shared modules a
family uses is read from its imports (`uses.py`), never declared.

- `stage.py`: the counting camera and lights, lights scaled to any scene, a resting object;
- `answers.py`: a fixed answer checked against the answer space, an answer drawn uniformly;
- `counting.py`: the counting layout (visibility floor and band) and the recount rule;
- `rotation.py`: shape symmetries, uniform random rotations, symmetry-breaking axes;
- `grid_layout.py`: cell centres, a camera that frames a grid, the image-order check (DYSM, OddGrid, ROSE grids);
- `font.py`: a 5x7 dot-matrix font, as data (DYSM letters, OddGrid's row and column labels);
- `uses.py`: which modules a family's module imports (for the key and the import rule).

Each module's `REVISION` is bumped like a family's (tests/test_golden.py pins every
family that uses it). A shared module starts at revision 1, the state in which it
was split out of the families with byte-identical output, and the resume key lists a
shared module from revision 2 on (`shared_revisions`), so batch folders made before
the split still resume without re-rendering, while a later change to a shared module
re-renders exactly the families that use it.
"""

from __future__ import annotations

from collections.abc import Iterable

from . import answers, counting, font, grid_layout, rotation, stage
from .uses import shared_modules

REVISIONS: dict[str, int] = {
    "answers": answers.REVISION, "counting": counting.REVISION, "font": font.REVISION, "grid_layout": grid_layout.REVISION,
    "rotation": rotation.REVISION, "stage": stage.REVISION,
}
BASELINE = 1  # the revision each module was split out at (byte-identical to before)


def shared_revisions(modules: Iterable[str]) -> dict[str, int]:
    """The revisions of the named shared modules that moved past BASELINE (what a resume key must include)."""
    return {name: REVISIONS[name] for name in sorted(set(modules)) if REVISIONS.get(name, BASELINE) > BASELINE}


__all__ = ["BASELINE", "REVISIONS", "shared_modules", "shared_revisions"]
