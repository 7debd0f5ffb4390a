"""OddGrid cells of library objects (the opt-in `objects` parameter) and the odd type `object`.

With `objects` (library names, scenes/objects.yaml) every cell holds one composed object
drawn from the list instead of a primitive; colour, size, rotation and position oddities
apply to it as to a primitive (scenes/families/oddgrid/odd_layout.py `place_library`,
`symmetry_shape`). The odd type `object` makes the odd cell another object of the list,
so it needs two names at least. Both are drawn after the rest of the plan
(odd_grid.py `draw_plan`), so an item's gold, grid and magnitudes are those of the same
seed without `objects`: the answer positions keep their balance.

Every cell's object has the same longest extent, but two library objects of one extent
cover very different areas in the image (a house three to five times a lamp's), so an odd object
drawn at the cells' size differed from its row by more than 25 % in area in most items: a
size cue beside the kind. Unless size is itself an odd attribute, `matched_to_row` scales
the odd object until its projected (amodal, ray-cast) area is its row's median.
"""

from __future__ import annotations

import numpy as np

from ...camera import geometry
from ...model import Camera, SceneObject, round6
from ...object_library import plural_of
from ...primitives import quat_to_matrix
from ...visibility import cast_object
from .odd_attributes import OBJECT, OddSpec
from .odd_layout import Plane, kind_of, place_object

MATCH_STEPS = 4  # rescalings at most: area goes nearly as size squared, so two or three reach the tolerance
MATCH_TOLERANCE = 0.03  # the projected area within 3 % of the row's median


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


def matched_to_row(odd: SceneObject, objects: list[SceneObject], plane: Plane, camera: Camera,
                   rays: int) -> SceneObject:
    """The odd object rescaled (same place, turn and colour) towards the median projected amodal area of the other
    objects in its row: until within MATCH_TOLERANCE, at most MATCH_STEPS times; its attributes record the factor
    as `size_match`.

    The row, because on the ground a row shares its depth (on the board its height): it is what a viewer compares
    the odd cell with, as the size oddity's `area_ratio_row` is (odd_contrast.py)."""
    cam = geometry(camera)
    row = int(odd.attributes["row"])
    areas = [len(cast_object(o, cam, rays).gx) for o in objects
             if o.id != odd.id and int(o.attributes["row"]) == row]
    target = float(np.median(areas))
    base_size, size, matched = odd.size, odd.size, odd
    for _ in range(MATCH_STEPS):
        area = len(cast_object(matched, cam, rays).gx)
        if area == 0 or abs(area / target - 1.0) <= MATCH_TOLERANCE:
            break
        size *= float(np.sqrt(target / area))
        matched = place_object(odd.id, kind_of(odd), size, np.asarray(odd.location), quat_to_matrix(odd.rotation_quat),
                               odd.color, plane, odd.attributes)
    return matched.model_copy(update={"attributes": {**matched.attributes,
                                                     "size_match": round6(matched.size / base_size)}})
