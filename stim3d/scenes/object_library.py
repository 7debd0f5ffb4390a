"""The library of composed objects: `scenes/objects.yaml` read, checked and turned into object sources.

Objects are data, not code: each entry is a list of named primitive parts with their
poses in the entry's own frame, a canonical front (+Y; the entry says what lies there,
or that it is `symmetric` and has none a viewer could tell) and synonyms (the words an
open answer may use for it). `composed_source(name)` gives the `ObjectSource` that
scenes/meshes.py turns into triangles; `library_object` stands one on the ground.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from importlib import resources

import yaml
from pydantic import BaseModel, ConfigDict, Field, field_validator

from stim3d.errors import ConfigError

from .materials import ACCENT_MATERIALS, MADE_OF
from .meshes import resting_source_object
from .model import Color, ObjectPart, ObjectSource, PrimitiveShape, SceneObject, Vec3, round6
from .primitives import axis_angle_quat


def _one_of(value: str | None, known: Mapping[str, object], what: str) -> str | None:
    """`value` when None or a key of `known`; else ValueError (one line) listing the known names."""
    if value is not None and value not in known:
        raise ValueError(f"unknown {what} {value!r}; known: {', '.join(known)}")
    return value


class LibraryPart(BaseModel):
    """A part as written in objects.yaml (`turn` = axis x, y, z and degrees)."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=r"^[a-z][a-z0-9_]{0,39}$")
    shape: PrimitiveShape
    scale: Vec3 = (1.0, 1.0, 1.0)
    at: Vec3 = (0.0, 0.0, 0.0)
    turn: tuple[float, float, float, float] | None = None
    material: str | None = Field(None, description="an accent part's own material under photoreal "
                                 "(scenes/materials.py ACCENT_MATERIALS); None: the object's material and colour")

    @field_validator("material")
    @classmethod
    def _known_accent(cls, value: str | None) -> str | None:
        return _one_of(value, ACCENT_MATERIALS, "accent material")

    def part(self) -> ObjectPart:
        quat = (1.0, 0.0, 0.0, 0.0) if self.turn is None else axis_angle_quat(self.turn[:3], self.turn[3])
        w, x, y, z = (round6(v) for v in quat)
        return ObjectPart(name=self.name, shape=self.shape, scale=self.scale,
                          location=self.at, rotation_quat=(w, x, y, z))


class LibraryEntry(BaseModel):
    """One composed object of the library."""

    model_config = ConfigDict(extra="forbid")

    synonyms: list[str] = Field(min_length=1)
    front: str = Field(description="what lies on the +Y side, the object's canonical front")
    symmetric: bool = Field(False, description="no front a viewer could tell (orientation questions skip it)")
    parts: list[LibraryPart] = Field(min_length=1)
    made_of: str | None = Field(None, description="what photoreal makes the object of whatever its draw "
                                "(scenes/materials.py MADE_OF: a mug is glazed ceramic); None: the drawn material")
    defining: dict[str, list[str]] = Field(
        default_factory=dict, description="features without which the object reads as another thing (a mug without "
        "its handle is a can), each the parts that show it: a recognition item needs a visible pixel of one of them")

    @field_validator("made_of")
    @classmethod
    def _known_made_of(cls, value: str | None) -> str | None:
        return _one_of(value, MADE_OF, "made_of")

    def accents(self) -> dict[str, str]:
        """Accent material by part name, for the parts that have one."""
        return {part.name: part.material for part in self.parts if part.material is not None}


@cache
def library() -> dict[str, LibraryEntry]:
    """Every library entry by name (objects.yaml, checked once)."""
    text = resources.files("stim3d.scenes").joinpath("objects.yaml").read_text(encoding="utf-8")
    raw = yaml.safe_load(text)
    entries = {str(name): LibraryEntry.model_validate(entry) for name, entry in raw.items()}
    for name, entry in entries.items():
        names = [part.name for part in entry.parts]
        if len(set(names)) != len(names):
            raise ValueError(f"objects.yaml: {name} has two parts of the same name")
        unknown = [part for parts in entry.defining.values() for part in parts if part not in names] + \
            [feature for feature, parts in entry.defining.items() if not parts]
        if unknown:
            raise ValueError(f"objects.yaml: {name}'s defining features name no part or an unknown one: {unknown}")
    return entries


def object_names() -> tuple[str, ...]:
    return tuple(sorted(library()))


def entry(name: str) -> LibraryEntry:
    try:
        return library()[name]
    except KeyError:
        raise ConfigError(f"unknown library object {name!r}; known: {', '.join(object_names())}") from None


def composed_source(name: str) -> ObjectSource:
    """The source of library object `name` (its parts copied, so item.json alone says what was rendered)."""
    return ObjectSource(kind="composed", name=name, parts=[part.part() for part in entry(name).parts])


def library_object(object_id: int, name: str, size: float, x: float, y: float, yaw: float, color: Color,
                   attributes: dict | None = None) -> SceneObject:
    """Library object `name` resting on the ground at (x, y), its longest extent `size` metres, its front (+Y)
    turned by `yaw` degrees about +Z."""
    return resting_source_object(object_id, composed_source(name), size, x, y, yaw, color,
                                 {"object": name, **(attributes or {})})


IRREGULAR_PLURALS = {"snowman": "snowmen"}


def plural_of(name: str) -> str:
    """How a question names several of library object `name`: traffic_cone -> traffic cones, snowman -> snowmen."""
    words = name.replace("_", " ")
    return IRREGULAR_PLURALS.get(name, f"{words}s")


def checked_names(names: list[str] | None) -> list[str] | None:
    """`names` when each is a library object, listed once; else ValueError (one line) naming the allowed names.

    The one check of a family parameter that names library objects (ava_count, odd_grid, rose_grid), so a typo
    fails `stim3d validate` with the list to pick from.
    """
    if names is None:
        return None
    unknown = [n for n in names if n not in library()]
    if unknown or not names:
        what = f"{', '.join(map(repr, unknown))} {'is' if len(unknown) == 1 else 'are'} not" if unknown else "no name is"
        raise ValueError(f"{what} a library object; allowed: {', '.join(object_names())}")
    if len(set(names)) != len(names):
        raise ValueError(f"{names} names an object twice")
    return names


def synonyms_of(name: str) -> tuple[str, ...]:
    """The words that name library object `name` (its own name with spaces first)."""
    words = [name.replace("_", " "), *entry(name).synonyms]
    return tuple(dict.fromkeys(word.lower() for word in words))
