"""What a patterned or lettered surface is: the vocabulary both the families and the renderer read.

The AVA-3D texture and text families (scenes/families/ava/ava_texture.py, ava_ocr.py)
put a *sign* in the scene: a `tile` primitive stood upright, its face the tile's
local x-y plane (x to the right, y up when seen from the front). What is on its face
is stored on the object's `attributes`, so item.json says exactly what was drawn and
no new model field is needed:

- a texture: `texture` (class name, one of TEXTURE_CLASSES), `texture_period_m` (the
  pattern's period on the face, metres), `texture_angle_deg` (the pattern's u axis,
  counter-clockwise from the face's x axis) and `texture_contrast` (how far the ink
  goes from the paper towards the object's palette colour, 0..1);
- a text: `text` (the string, upper-case letters and digits), `text_height_m` (cap
  height on the face, metres) and `text_contrast` (as above). It is set in the
  monospaced font that ships in scenes/fonts/, one line centred on the face; its
  character boxes on the face follow from the font's advance and cap height
  (`text_boxes`), which the family checks on the ray cast and a test on the mask.

The paper is PAPER_SRGB; the ink is `ink_srgb(palette colour, contrast)`. The Blender
backend builds the nodes (render/backends/blender_textures.py). `texture_ink` is the
same pattern in numpy, for every class whose pattern is arithmetic on the face
coordinates, so a test can compare rendered pixels with the class's own definition.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from PIL import ImageFont

from .fonts import FONT_PATH

TEXTURE_CLASSES: tuple[str, ...] = ("striped", "chequered", "polka-dotted", "grid", "zigzagged", "cracked")
"""DTD (Describable Textures Dataset) names; docs/ava.md says why these six and not the rest."""

PAPER_SRGB: tuple[float, float, float] = (0.92, 0.91, 0.88)
DOT_RADIUS = 0.3  # polka dots: radius in periods (a dot covers 28 % of its cell)
LINE_WIDTH = 0.2  # grid lines: width in periods
CRACK_WIDTH = 0.06  # cracked: half-width of a crack, in periods (distance to the Voronoi cell edge)
ZIGZAG_AMPLITUDE = 1.0  # zigzag: peak-to-trough shift of a stripe, in periods, over one period along u


def carries_print(attributes) -> bool:
    """Whether an object's face carries a texture or a text (then its pixels are paper and ink, not its colour)."""
    return "texture" in attributes or "text" in attributes


def ink_srgb(srgb, contrast: float) -> tuple[float, float, float]:
    """The ink: the paper moved `contrast` of the way to the palette colour."""
    paper = np.asarray(PAPER_SRGB, dtype=float)
    return tuple(float(round(v, 6)) for v in paper + contrast * (np.asarray(srgb, dtype=float) - paper))  # type: ignore[return-value]


def luminance(srgb) -> float:
    """Relative luminance (linear, Rec. 709 weights) of an sRGB colour."""
    c = np.asarray(srgb, dtype=float)
    linear = np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)
    return float(linear @ np.array([0.2126, 0.7152, 0.0722]))


def michelson(srgb_a, srgb_b) -> float:
    """Michelson contrast (La - Lb) / (La + Lb) of two colours' relative luminances, absolute value."""
    a, b = luminance(srgb_a), luminance(srgb_b)
    return float(round(abs(a - b) / (a + b), 6))


def face_uv(x: np.ndarray, y: np.ndarray, period: float, angle_deg: float) -> tuple[np.ndarray, np.ndarray]:
    """Face coordinates (metres) -> pattern coordinates in periods, the u axis turned by `angle_deg`."""
    a = np.radians(angle_deg)
    u = (x * np.cos(a) + y * np.sin(a)) / period
    v = (-x * np.sin(a) + y * np.cos(a)) / period
    return u, v


def texture_ink(name: str, u: np.ndarray, v: np.ndarray) -> np.ndarray | None:
    """Where the class puts ink at pattern coordinates (u, v) in periods; None for `cracked` (Blender's Voronoi)."""
    fu, fv = u - np.floor(u), v - np.floor(v)
    if name == "striped":
        return fu < 0.5
    if name == "chequered":
        return (np.floor(u) + np.floor(v)) % 2 == 1
    if name == "polka-dotted":
        return np.hypot(fu - 0.5, fv - 0.5) < DOT_RADIUS
    if name == "grid":
        return (fu < LINE_WIDTH) | (fv < LINE_WIDTH)
    if name == "zigzagged":
        s = v + ZIGZAG_AMPLITUDE * np.abs(2.0 * fu - 1.0)
        return s - np.floor(s) < 0.5
    if name == "cracked":
        return None
    raise ValueError(f"unknown texture {name!r}; known: {', '.join(TEXTURE_CLASSES)}")


EM_PROBE = 1000  # font size (pixels per em) at which the font's proportions are read


@lru_cache(maxsize=1)
def font_metrics() -> tuple[float, float, float, float]:
    """(advance, cap height, highest top, lowest bottom) of the shipped font, in ems (tops above the baseline)."""
    font = ImageFont.truetype(str(FONT_PATH), EM_PROBE)
    _, top, _, bottom = font.getbbox("ABCDEFGHJKLMNOPQRSTUVWXYZ0123456789", anchor="ls")
    cap = -font.getbbox("H", anchor="ls")[1]
    return font.getlength("M") / EM_PROBE, cap / EM_PROBE, -top / EM_PROBE, bottom / EM_PROBE


def text_width_m(text: str, height_m: float) -> float:
    """Width of a line of `text` at cap height `height_m` (monospaced: length times the advance)."""
    advance, cap, _, _ = font_metrics()
    return len(text) * advance / cap * height_m


def text_boxes(text: str, height_m: float) -> np.ndarray:
    """Each character's box on the face (x0, y0, x1, y1) in metres, y up, the line centred on the face's centre.

    A box spans the character's advance and, vertically, from the font's lowest descent to
    its highest top (Q's tail, O's overshoot), so every stroke of the character is inside it;
    the cap height is centred on y = 0.
    """
    advance, cap, top, bottom = font_metrics()
    em = height_m / cap
    left = -text_width_m(text, height_m) / 2
    x0 = left + np.arange(len(text)) * advance * em
    baseline = -height_m / 2
    return np.stack([x0, np.full(len(text), baseline - bottom * em), x0 + advance * em,
                     np.full(len(text), baseline + top * em)], axis=1)
