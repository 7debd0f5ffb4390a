"""ROSE grids of library objects (the opt-in `objects` parameter) and the exception kind `object`.

With `objects` (library names, scenes/objects.yaml) the majority element is a composed
object drawn from the list instead of a primitive; a `color` or `size` exception then
differs from it as from a primitive. The exception kind `object` makes the exceptions
other objects of the list (each drawn, as a `shape` exception draws another primitive),
from the whole library when `objects` is not given. Rotation (tipping over) and finish
are defined for primitives only and are refused with `objects`.
"""

from __future__ import annotations

from ...colors import named
from ...model import SceneObject
from ...object_library import library, library_object, object_names

OBJECT_EXCEPTIONS = ("object", "color", "size")  # the exception kinds a grid of library objects can take


def library_pool(objects: list[str] | None, exception: str) -> list[str] | None:
    """The library objects the grid draws from; None for a grid of primitives."""
    if objects is not None:
        return list(objects)
    return list(object_names()) if exception == "object" else None


def check_objects(objects: list[str] | None, exception: str) -> None:
    """ValueError (one line) unless `objects` and `exception` fit together."""
    if objects is not None and exception not in OBJECT_EXCEPTIONS:
        raise ValueError(f"exception {exception!r} is defined for primitives only; with objects use one of "
                         f"{', '.join(OBJECT_EXCEPTIONS)}")
    if exception == "object" and objects is not None and len(objects) < 2:
        raise ValueError(f"exception 'object' needs two or more library objects (objects: {objects})")


def is_library(kind: str) -> bool:
    return kind in library()


def library_cell(object_id: int, x: float, y: float, element: dict, size: float, attributes: dict) -> SceneObject:
    """A cell's library object resting on the ground at (x, y), turned by the grid's yaw, longest extent `size`."""
    obj = library_object(object_id, element["shape"], size, x, y, element["yaw"], named(element["color"]), attributes)
    return obj if element["finish"] == "matte" else obj.model_copy(update={"finish": element["finish"]})
