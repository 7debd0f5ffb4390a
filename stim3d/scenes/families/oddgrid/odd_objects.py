"""OddGrid cells of library objects (the opt-in `objects` parameter) and the odd type `object`.

With `objects` (library names, scenes/objects.yaml) every cell holds one composed object
drawn from the list instead of a primitive; colour, size, rotation and position oddities
apply to it as to a primitive (scenes/families/oddgrid/odd_layout.py `place_library`,
`symmetry_shape`). The odd type `object` makes the odd cell another object of the list,
so it needs two names at least. Both are drawn after the rest of the plan
(odd_grid.py `draw_plan`), so an item's gold, grid and magnitudes are those of the same
seed without `objects`: the answer positions keep their balance.
"""

from __future__ import annotations

import numpy as np

from ...object_library import plural_of
from .odd_attributes import OBJECT, OddSpec


def check_objects(objects: list[str] | None, shape: str, parsed: tuple[str, ...] | int) -> None:
    """ValueError (one line) unless `objects` and the odd types fit together."""
    wants_object = isinstance(parsed, tuple) and OBJECT in parsed
    if objects is not None and shape != "random":
        raise ValueError(f"shape {shape!r} and objects both name the cells' object: give one of them")
    if wants_object and (objects is None or len(objects) < 2):
        raise ValueError("odd type 'object' needs objects: two or more library names (the cells' and the odd one's)")


def draw_objects(objects: list[str] | None, spec: OddSpec, shape: str, rng: np.random.Generator) -> str:
    """The cells' kind: `shape` without `objects`; else a library object drawn from them (and, for the odd type
    `object`, the odd cell's, another one, set on `spec`)."""
    if objects is None:
        return shape
    name = objects[int(rng.integers(len(objects)))]
    if OBJECT in spec.attributes:
        others = [n for n in objects if n != name]
        spec.odd_object = others[int(rng.integers(len(others)))]
        spec.recorded["odd_object"] = spec.odd_object
    return name


def nouns(name: str, attributes: tuple[str, ...]) -> tuple[str, str]:
    """What the prompt calls a cell and the cells: "mug", "mugs"; "object", "objects" when the odd one is another."""
    if OBJECT in attributes:
        return "object", "objects"
    return name.replace("_", " "), plural_of(name)


def object_terms(name: str, spec: OddSpec) -> dict[str, str]:
    """The subject's and difficulty's record of the library objects: the cells' and (when present) the odd one's."""
    odd = {"odd_object": spec.odd_object} if spec.odd_object and spec.present else {}
    return {"object": name, **odd}
