"""Photoreal's and clevr's material libraries: what an object or a ground may be made of, and its wear.

Each entry is a range of Principled BSDF parameters a look draws from (scenes/looks.py) and the
finish it may stand for (matte or glossy: a material never changes what a question can ask, so a
glossy object is always drawn a glossy material). render/backends/blender_looks.py and
blender_grounds.py build them. Photoreal's objects also carry micro-detail per material (`wear`):
rounded edges, roughness variation and a low bump for use, and a fine bump that tells how the
surface was made (a plastic's orange peel, felt's fibres, a painted board's grain), plus a cloth's
sheen. An item.json records every drawn value, so an older item renders as it did.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .model import ObjectLook, PartLook, round6


@dataclass(frozen=True)
class GroundMaterial:
    """A procedural ground: candidate colours (sRGB), texture scale in metres at scene scale 1, roughness range,
    and the pattern's own parameters: `ranges` drawn uniformly, `choices` drawn among their values."""

    colors: tuple[tuple[float, float, float], ...]
    scale_m: float
    roughness: tuple[float, float]
    ranges: tuple[tuple[str, tuple[float, float]], ...] = ()
    choices: tuple[tuple[str, tuple[float, ...]], ...] = ()


# Photoreal's grounds (render/backends/blender_grounds.py builds them). scale_m: a plank's width, a tile's side,
# the concrete's cloud size. Older items may name wood_planks, concrete, ceramic_tiles, fabric or asphalt, the
# grounds drawn before the second round; the backend still builds those.
GROUND_MATERIALS: dict[str, GroundMaterial] = {
    "planks": GroundMaterial(((0.55, 0.37, 0.22), (0.43, 0.28, 0.16), (0.68, 0.52, 0.36), (0.74, 0.6, 0.44)), 0.16,
                             (0.35, 0.55), ranges=(("plank_length", (5.0, 9.0)), ("stagger", (0.25, 0.6)))),
    "tiles": GroundMaterial(((0.86, 0.85, 0.81), (0.68, 0.7, 0.72), (0.58, 0.42, 0.33), (0.35, 0.37, 0.4)), 0.3,
                            (0.15, 0.3), ranges=(("grout_width", (0.03, 0.06)), ("grout_tone", (0.25, 0.7))),
                            choices=(("stagger", (0.0, 0.0, 0.5)),)),
    "aggregate_concrete": GroundMaterial(((0.62, 0.61, 0.58), (0.5, 0.5, 0.49), (0.7, 0.68, 0.64)), 0.6, (0.8, 0.95),
                                         ranges=(("stone_m", (0.03, 0.06)), ("aggregate", (0.4, 0.8)))),
    "marble": GroundMaterial(((0.88, 0.87, 0.85), (0.32, 0.32, 0.34)), 2.0, (0.15, 0.3)),
}
FADE = (0.45, 0.95)  # the ground fades into the environment between these shares of its half size


@dataclass(frozen=True)
class ObjectMaterial:
    """A library material: roughness and metallic ranges, clear coat, and the finish it can stand for."""

    roughness: tuple[float, float]
    metallic: float
    coat: float
    finishes: tuple[str, ...]
    rough: bool  # allowed for matte objects when the scene also holds glossy ones
    roughness_variation: float = 0.0  # photoreal's wear: +- this much roughness over the surface
    bump: float = 0.0  # photoreal's wear: the strength of a low-frequency bump
    # photoreal's base-layer Specular IOR Level (Blender's 0.5: F0 4 %); None: Blender's default (rubber 0.25)
    specular: float | None = None
    # photoreal's micro-detail: a fine bump (`detail` strength; features `detail_share` of the object's size,
    # a few pixels across at the families' sizes) that says how the surface was made: a plastic's orange peel,
    # felt's fibres, a painted board's grain under the paint; 0: a smooth glaze or metal
    detail: float = 0.0
    detail_share: float = 0.04
    sheen: float = 0.0  # a cloth's sheen at grazing angles (the Principled BSDF's Sheen Weight)
    pooled: bool = True  # drawn for any object; False: only for a library object made of it (MADE_OF)


# The matte materials' base-layer specular (issue 44): a bright environment reflected off every surface, most at
# grazing angles, adds white that lifts the dark channels of a saturated colour (chroma -23 CIELAB at Blender's 0.5).
# 0.1 (F0 0.8 %) keeps a faint sheen and, with the exposure above, takes the median chroma loss of 24 first draws
# from -23 to -8 (0: -7; bench/results/looks_NOTES.md "Chroma"). The glossy materials keep theirs: their finish is
# the visible gloss.
MATTE_SPECULAR = 0.1
OBJECT_MATERIALS: dict[str, ObjectMaterial] = {
    "plastic": ObjectMaterial((0.35, 0.5), 0.0, 0.0, ("matte",), True, 0.08, 0.15, specular=MATTE_SPECULAR,
                              detail=0.06, detail_share=0.03),
    "rubber": ObjectMaterial((0.75, 0.9), 0.0, 0.0, ("matte",), True, 0.08, 0.25, specular=MATTE_SPECULAR),
    "brushed_metal": ObjectMaterial((0.4, 0.55), 0.75, 0.0, ("matte",), False, 0.1, 0.15, specular=MATTE_SPECULAR),
    "varnished_wood": ObjectMaterial((0.35, 0.5), 0.0, 0.5, ("matte",), False, 0.08, 0.15, specular=MATTE_SPECULAR),
    "painted_metal": ObjectMaterial((0.3, 0.4), 0.0, 1.0, ("glossy",), False, 0.05, 0.1),
    "ceramic": ObjectMaterial((0.05, 0.12), 0.0, 0.6, ("glossy",), False, 0.03, 0.08),
    "glossy_plastic": ObjectMaterial((0.12, 0.22), 0.0, 0.6, ("glossy",), False, 0.04, 0.05, detail=0.08,
                                     detail_share=0.03),
    "felt": ObjectMaterial((0.9, 1.0), 0.0, 0.0, ("matte",), True, 0.05, 0.1, specular=0.05, detail=0.3,
                           detail_share=0.03, sheen=0.3),
    "painted_wood": ObjectMaterial((0.45, 0.6), 0.0, 0.2, ("matte",), False, 0.06, 0.1, specular=MATTE_SPECULAR,
                                   detail=0.2, detail_share=0.05),
    # a satin glaze: a matte-finish mug is still ceramic (MADE_OF), never drawn for other objects
    "matte_glaze": ObjectMaterial((0.5, 0.65), 0.0, 0.0, ("matte",), True, 0.05, 0.05, specular=MATTE_SPECULAR,
                                  detail=0.03, detail_share=0.02, pooled=False),
}
# What a library object is made of whatever the draw (objects.yaml `made_of`): its material for each finish. A mug
# is glazed ceramic, glossy or satin; the glaze takes the palette colour like any object material.
MADE_OF: dict[str, dict[str, str]] = {"glazed_ceramic": {"glossy": "ceramic", "matte": "matte_glaze"}}


@dataclass(frozen=True)
class AccentMaterial:
    """A library part's own material (objects.yaml `material:` on a part): a chair's wooden legs, a lamp's steel pole.

    Its colour is its own, drawn from `colors`, never the palette colour: the object's named colour is its other
    parts', and the accents are small parts, so the colour check's median over the object's pixels (scenes/
    look_colours.py) still measures the painted parts. Built as the OBJECT_MATERIALS entry `material` (its grain,
    anisotropy or rubber specular, its micro-detail) with `roughness` drawn here.
    """

    material: str
    colors: tuple[tuple[float, float, float], ...]
    roughness: tuple[float, float]


ACCENT_MATERIALS: dict[str, AccentMaterial] = {
    "natural_wood": AccentMaterial("varnished_wood", ((0.55, 0.37, 0.22), (0.43, 0.28, 0.16), (0.66, 0.5, 0.34)),
                                   (0.35, 0.5)),
    "steel": AccentMaterial("brushed_metal", ((0.72, 0.72, 0.74), (0.6, 0.61, 0.63)), (0.25, 0.4)),
    "black_rubber": AccentMaterial("rubber", ((0.04, 0.04, 0.04), (0.07, 0.07, 0.07)), (0.75, 0.9)),
}
BEVEL_SHARE = 0.03  # photoreal's rounded-edge shading: the Bevel node's radius as a share of the object's size
# clevr's metal is a metallic paint (issue 44): a bare metal shows its colour only as bright as what it mirrors, and
# clevr's room (a 0.3 white world, a mid-grey floor) mirrors at about a third of the palette's brightness: orange,
# yellow, grey and blue metals then read as other names whatever the exposure (an orange metal cone measured
# (0.64, 0.30, 0.01), nearer red, while the rubber beside it was right). A coloured base, 30 % metallic, under a clear
# coat reads its colour (that cone: margin -8 to +21 CIEDE2000) and stays shiny, as photoreal's and studio's glossy
# finishes do. Recorded per object (ObjectLook.metallic, .coat), so an older item.json renders its bare metal.
CLEVR_MATERIALS: dict[str, ObjectMaterial] = {
    "rubber": ObjectMaterial((0.9, 0.9), 0.0, 0.0, ("matte",), True),
    "metal": ObjectMaterial((0.2, 0.2), 0.3, 1.0, ("glossy",), False),
}


def wear(look: ObjectLook | PartLook, size: float, rng: np.random.Generator) -> dict[str, float]:
    """Photoreal's rounded edges and worn surface for one object or accent part (render/backends/blender_looks.py
    imperfections); `size` is the whole object's, so a part's bevel and grain match its object's."""
    material = OBJECT_MATERIALS[look.material]
    params = {"bevel_m": round6(BEVEL_SHARE * size), "roughness_variation": material.roughness_variation,
              "bump": material.bump, "seed": round6(rng.uniform(0.0, 100.0))}
    if material.specular is not None:  # absent in older item.json (Blender's default specular)
        params["specular"] = material.specular
    if material.detail:  # absent in item.json drawn before micro-detail: the surface renders as it did
        params.update(detail=material.detail, detail_m=round6(material.detail_share * size))
    if material.sheen:
        params["sheen"] = material.sheen
    return params
