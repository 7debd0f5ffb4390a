"""What CLEVR's question engine reads beside the scenes: `metadata.json` (`--metadata_file`) and `synonyms.json`.

CLEVR's `question_generation/generate_questions.py` draws every template parameter
from `metadata["types"][<Size|Color|Material|Shape|Relation>]` and runs the programs
through `metadata["functions"]`; it refuses any `dataset` other than "CLEVR-v1.0"
(that string names the engine's schema, not the images). CLEVR's own file lists
cube/sphere/cylinder, eight colours and rubber/metal only, so a stim3d scene (a
torus, an orange object, a ceramic material) needs this file in its place.

`types` here lists every value stim3d can write (all shapes, the whole palette,
small/large, CLEVR's rubber/metal and the photoreal look's materials) plus any other
value met in the exported scenes (an OddGrid label's colour, say), so each scene
attribute is one the engine knows. `functions` is CLEVR-v1.0's function list, the
same entries in the same order as its metadata.json (checked against it at commit
f0ce2c81750bfae09b5bf94d009f42e055f2cb3a of facebookresearch/clevr-dataset-gen).

`synonyms.json` keeps CLEVR's entries and adds one for every other value: the word
the question text uses. CLEVR's templates make plurals by appending "s" ("<S>s"),
so a torus reads "ring" ("rings"), and a material such as `brushed_metal` reads
"brushed metal".
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from stim3d.scenes.colors import COLOR_NAMES
from stim3d.scenes.materials import CLEVR_MATERIALS, OBJECT_MATERIALS
from stim3d.scenes.model import Shape
from stim3d.scenes.object_library import object_names, synonyms_of

DATASET = "CLEVR-v1.0"  # generate_questions.py asserts this value
SIZES = ("small", "large")
RELATIONS = ("left", "right", "behind", "front")
FINISH_MATERIALS = {"matte": "rubber", "glossy": "metal"}  # studio: a finish stands for CLEVR's material
ATTRIBUTES = ("Size", "Color", "Material", "Shape")  # CLEVR's order of a composite filter's side inputs
# Every primitive shape, markers (tile) included; a composed or mesh object is written as its kind (its library name
# or file stem, which the scenes met add), never as the placeholder shapes `composed` and `mesh`.
SHAPES: tuple[str, ...] = tuple(s for s in Shape.__args__ if s not in ("composed", "mesh"))  # type: ignore[attr-defined]

CLEVR_SYNONYMS: dict[str, list[str]] = {  # CLEVR's synonyms.json at the commit above, verbatim
    "thing": ["thing", "object"], "sphere": ["sphere", "ball"], "cube": ["cube", "block"],
    "large": ["large", "big"], "small": ["small", "tiny"], "metal": ["metallic", "metal", "shiny"],
    "rubber": ["rubber", "matte"], "left": ["left of", "to the left of", "on the left side of"],
    "right": ["right of", "to the right of", "on the right side of"], "behind": ["behind"],
    "front": ["in front of"], "above": ["above"], "below": ["below"],
}
WORDS = {"torus": ["ring"]}  # "<S>s" must read as a plural


def _fn(name: str, inputs: list[str], output: str, terminal: bool, side: list[str] | None = None,
        **extra: Any) -> dict[str, Any]:
    entry: dict[str, Any] = {"name": name, "inputs": inputs}
    if side is not None:
        entry["side_inputs"] = side
    return {**entry, "output": output, "terminal": terminal, **extra}


def functions() -> list[dict[str, Any]]:
    """CLEVR-v1.0's function list (names, inputs, side inputs, outputs, terminal flags), in its order."""
    names = {"Shape": "shape", "Color": "color", "Size": "size", "Material": "material"}
    out = [_fn("scene", [], "ObjectSet", False)]
    out += [_fn(f"filter_{names[t]}", ["ObjectSet"], "ObjectSet", False, [t]) for t in ("Color", "Shape", "Size", "Material")]
    out += [_fn("unique", ["ObjectSet"], "Object", False, properties=[]),
            _fn("relate", ["Object"], "ObjectSet", False, ["Relation"]),
            _fn("union", ["ObjectSet", "ObjectSet"], "ObjectSet", False),
            _fn("intersect", ["ObjectSet", "ObjectSet"], "ObjectSet", False),
            _fn("count", ["ObjectSet"], "Integer", True)]
    out += [_fn(f"query_{names[t]}", ["Object"], t, True) for t in ("Shape", "Color", "Size", "Material")]
    out += [_fn("exist", ["ObjectSet"], "Bool", True)]
    out += [_fn(f"equal_{names[t]}", [t, t], "Bool", True) for t in ("Color", "Shape")]
    out += [_fn(name, ["Integer", "Integer"], "Bool", True) for name in ("equal_integer", "less_than", "greater_than")]
    out += [_fn(f"equal_{names[t]}", [t, t], "Bool", True) for t in ("Size", "Material")]
    out += [_fn("equal_object", ["Object", "Object"], "Bool", True)]
    out += [_fn(f"same_{names[t]}", ["Object"], "ObjectSet", False) for t in ("Size", "Color", "Material", "Shape")]
    attrs = list(ATTRIBUTES)
    out += [_fn(name, ["ObjectSet"], output, terminal, attrs, template_only=True) for name, output, terminal in (
        ("filter", "ObjectSet", False), ("filter_unique", "Object", False), ("filter_count", "Integer", True),
        ("filter_exist", "Bool", True))]
    out += [_fn(name, ["Object"], output, False, ["Relation", *attrs], template_only=True) for name, output in (
        ("relate_filter", "ObjectSet"), ("relate_filter_unique", "Object"), ("relate_filter_count", "Integer"),
        ("relate_filter_exist", "Bool"))]  # CLEVR marks the last two non-terminal too
    return out


def _values(known: Iterable[str], met: Iterable[str]) -> list[str]:
    return list(dict.fromkeys([*known, *sorted(set(met))]))


def metadata(objects: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """The metadata file for scenes holding `objects` (CLEVR scene objects: shape, color, material, size)."""
    objects = list(objects)
    materials = [*FINISH_MATERIALS.values(), *CLEVR_MATERIALS, *OBJECT_MATERIALS]
    return {
        "dataset": DATASET,
        "generator": "stim3d export clevr",
        "types": {
            "Object": None, "ObjectSet": None, "Integer": None, "Bool": None,
            "Shape": _values(SHAPES, (o["shape"] for o in objects)),
            "Color": _values(COLOR_NAMES, (o["color"] for o in objects)),
            "Relation": list(RELATIONS),
            "Size": _values(SIZES, (o["size"] for o in objects)),
            "Material": _values(materials, (o["material"] for o in objects)),
        },
        "functions": functions(),
    }


def _library_words(name: str) -> list[str]:
    """A composed library object's synonyms (scenes/objects.yaml) that read as singular: the templates add "s"."""
    return [w for w in synonyms_of(name) if not w.endswith("s")] if name in object_names() else []


def synonyms(types: dict[str, Any]) -> dict[str, list[str]]:
    """CLEVR's synonyms plus the words for every value in `types` that CLEVR's file does not cover."""
    words = dict(CLEVR_SYNONYMS)
    for name in ("Shape", "Color", "Size", "Material", "Relation"):
        for value in types[name]:
            words.setdefault(value, WORDS.get(value) or _library_words(value) or [value.replace("_", " ")])
    return words
