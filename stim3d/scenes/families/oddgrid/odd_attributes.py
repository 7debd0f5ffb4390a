"""How the odd cell of an odd-one-out grid differs, and how hard that makes the item.

The four attributes of OddGridBench (seed paper, test split) with their nominal
ranges, drawn per item:
- color: a CIEDE2000 difference (scenes/colors.py) in `delta_e_range`, reached
  along a random CIELAB direction from the base colour, inside the sRGB gamut;
- size: 85-95 % or 105-115 % of the base size;
- rotation: 5-25 degrees either way about an axis that breaks the primitive's
  symmetry (the tests of scenes/families/dysm/form_constancy.py: never a sphere, never
  a cylinder's, cone's or torus's own axis, not a cube symmetry);
- position: a shift of 5-12 % of the cell pitch in both directions, each sign drawn.

`difficulty_terms` turns what an item shows into one score in [0, 1] (higher is
harder) and an easy/medium/hard tier, from the three things the paper's
curriculum uses: grid size, number of differing attributes, and how large each
difference is relative to its range.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ...colors import delta_e2000, delta_e_srgb, srgb_to_lab
from ...model import round6

ATTRIBUTES = ("color", "size", "rotation", "position")
OBJECT = "object"  # the odd cell is another library object (cells of library objects only; never drawn by N-type)
NAMED = (*ATTRIBUTES, OBJECT)  # what odd_types may name
COMBINATIONS = {"2-type": 2, "3-type": 3, "4-type": 4}  # the paper's combination types: that many attributes, drawn
SIZE_STEP = (0.05, 0.15)  # |ratio - 1|
ROTATION_DEG = (5.0, 25.0)
SHIFT_SHARE = (0.05, 0.12)  # of the cell pitch, per direction
GRID_CELLS = (25, 81)  # the paper's grid sizes, 5x5 to 9x9: the grid term runs from 0 to 1 over them
TIER_BOUNDS = (0.48, 0.65)  # the terciles of the preset's scores (scenes/presets/oddgrid3d.yaml): about equal thirds
COLOR_ATTEMPTS = 400

_XYZ_TO_SRGB = np.linalg.inv(np.array(
    [[0.4124564, 0.3575761, 0.1804375], [0.2126729, 0.7151522, 0.0721750], [0.0193339, 0.1191920, 0.9503041]]
))
_D65 = np.array([0.95047, 1.0, 1.08883])


def parse_odd_types(value: str) -> tuple[str, ...] | int:
    """An attribute combination ("color", "size+rotation") as a tuple, or a combination size ("3-type" -> 3).

    ValueError names what is allowed.
    """
    if value in COMBINATIONS:
        return COMBINATIONS[value]
    names = tuple(value.split("+"))
    if not names or any(n not in NAMED for n in names) or len(set(names)) != len(names):
        raise ValueError(f"odd_types {value!r}: use one of {', '.join(NAMED + tuple(COMBINATIONS))} "
                         "or distinct attributes joined by '+' (color+size)")
    return tuple(sorted(names, key=NAMED.index))


def draw_attributes(odd_types: str, rng: np.random.Generator) -> tuple[str, ...]:
    """The attributes the odd cell differs in (always drawn, even when the item has no odd cell)."""
    parsed = parse_odd_types(odd_types)
    if isinstance(parsed, tuple):
        return parsed
    picks = sorted(int(i) for i in rng.choice(len(ATTRIBUTES), parsed, replace=False))
    return tuple(ATTRIBUTES[i] for i in picks)


def describe(attributes: tuple[str, ...]) -> str:
    """"color", "color and size", "color, size and rotation": the prompt's {odd_desc} ("object" reads "object type")."""
    words = [f"{a} type" if a == OBJECT else a for a in attributes]
    if len(words) == 1:
        return words[0]
    return ", ".join(words[:-1]) + " and " + words[-1]


# -- colour -----------------------------------------------------------------------------------------

def lab_to_srgb(lab: np.ndarray) -> np.ndarray:
    """Inverse of colors.srgb_to_lab (D65); values outside [0, 1] mean outside the sRGB gamut."""
    lab = np.asarray(lab, dtype=float)
    fy = (lab[..., 0] + 16.0) / 116.0
    f = np.stack([fy + lab[..., 1] / 500.0, fy, fy - lab[..., 2] / 200.0], axis=-1)
    eps, kappa = 216 / 24389, 24389 / 27
    xyz = np.where(f**3 > eps, f**3, (116.0 * f - 16.0) / kappa) * _D65
    linear = xyz @ _XYZ_TO_SRGB.T
    sign = np.sign(linear)
    linear = np.abs(linear)
    return sign * np.where(linear <= 0.0031308, linear * 12.92, 1.055 * linear ** (1 / 2.4) - 0.055)


def odd_color(base_srgb: tuple[float, float, float], delta_e: float, rng: np.random.Generator) -> tuple[tuple[float, float, float], float]:
    """An sRGB colour at CIEDE2000 `delta_e` from the base, along a random Lab direction, in gamut.

    Returns (srgb rounded as item.json stores it, the CIEDE2000 difference of the stored values).
    """
    base_lab = srgb_to_lab(np.asarray(base_srgb))
    for _ in range(COLOR_ATTEMPTS):
        direction = rng.normal(size=3)
        direction /= np.linalg.norm(direction)
        low, high = 0.0, 4.0 * delta_e + 10.0
        for _ in range(50):  # CIEDE2000 grows along the ray over this short stretch: bisect for the distance
            mid = 0.5 * (low + high)
            if float(delta_e2000(base_lab, base_lab + mid * direction)) < delta_e:
                low = mid
            else:
                high = mid
        srgb = lab_to_srgb(base_lab + high * direction)
        if np.all((srgb >= 0.0) & (srgb <= 1.0)):
            stored = tuple(round6(c) for c in srgb)
            return stored, float(delta_e_srgb(np.asarray(base_srgb), np.asarray(stored)))  # type: ignore[return-value]
    raise ValueError(f"no colour at dE {delta_e:g} from {base_srgb} inside the sRGB gamut")


# -- the odd cell's nominal differences --------------------------------------------------------------

@dataclass
class OddSpec:
    """The odd cell and its nominal differences from the base (only the drawn attributes are set)."""

    row: int
    col: int
    attributes: tuple[str, ...]
    present: bool
    delta_e_target: float | None = None
    size_ratio: float | None = None
    rotation_deg: float | None = None
    shift_share: tuple[float, float] | None = None  # (across columns, across rows), signed
    odd_object: str | None = None  # the odd cell's library object (odd type "object")
    recorded: dict[str, float | str | bool] = field(default_factory=dict)


def draw_magnitudes(spec: OddSpec, delta_e_range: tuple[float, float], rng: np.random.Generator) -> None:
    """Nominal magnitudes of every attribute (all drawn, in a fixed order, so variants stay paired)."""
    delta_e = float(rng.uniform(*delta_e_range))
    size = float(rng.uniform(*SIZE_STEP)) * (1.0 if rng.random() < 0.5 else -1.0)
    angle = float(rng.uniform(*ROTATION_DEG)) * (1.0 if rng.random() < 0.5 else -1.0)
    shift = rng.uniform(*SHIFT_SHARE, size=2) * np.where(rng.random(2) < 0.5, 1.0, -1.0)
    if "color" in spec.attributes:
        spec.delta_e_target = delta_e
    if "size" in spec.attributes:
        spec.size_ratio = round6(1.0 + size)
    if "rotation" in spec.attributes:
        spec.rotation_deg = round6(angle)
    if "position" in spec.attributes:
        spec.shift_share = (round6(shift[0]), round6(shift[1]))


def normalised_magnitudes(recorded: dict, delta_e_range: tuple[float, float]) -> dict[str, float]:
    """Each applied difference as a share of its range: 0 the smallest allowed, 1 the largest."""
    def share(value: float, low: float, high: float) -> float:
        return float(np.clip((value - low) / (high - low), 0.0, 1.0)) if high > low else 1.0

    found = {}
    if "delta_e" in recorded:
        found["color"] = share(recorded["delta_e"], *delta_e_range)
    if "size_ratio" in recorded:
        found["size"] = share(abs(recorded["size_ratio"] - 1.0), *SIZE_STEP)
    if "rotation_deg" in recorded:
        found["rotation"] = share(abs(recorded["rotation_deg"]), *ROTATION_DEG)
    if "shift_share_x" in recorded:
        found["position"] = share(max(abs(recorded["shift_share_x"]), abs(recorded["shift_share_y"])), *SHIFT_SHARE)
    if "odd_object" in recorded:
        found[OBJECT] = 1.0  # another object altogether: the whole of what the attribute can differ by
    return found


def grid_band(cells: int) -> str:
    """OddGridBench's grid-size bands: small <= 44 cells, medium 45-64, large 65-81 (xlarge beyond)."""
    return "small" if cells <= 44 else "medium" if cells <= 64 else "large" if cells <= 81 else "xlarge"


def difficulty_terms(rows: int, cols: int, magnitudes: dict[str, float]) -> dict[str, float | str]:
    """Score in [0, 1] (higher is harder), tier and discrepancy level.

    score = mean of (grid term, attribute term, magnitude term): grid term 0 at 25
    cells and 1 at 81 (clipped); attribute term (4 - n) / 3 for n differing
    attributes (one attribute is the hardest; 0 from four on, which only the odd type
    `object` joined to three others can pass, a swapped object counting as a full-size
    difference); magnitude term 1 - mean normalised magnitude. An item with no odd cell has attribute and magnitude terms 1: deciding
    that nothing differs needs every cell checked.
    """
    cells = rows * cols
    grid = float(np.clip((cells - GRID_CELLS[0]) / (GRID_CELLS[1] - GRID_CELLS[0]), 0.0, 1.0))
    if magnitudes:
        attribute, magnitude = max(4 - len(magnitudes), 0) / 3.0, 1.0 - float(np.mean(list(magnitudes.values())))
        mean = 1.0 - magnitude
        level = "low" if mean < 1 / 3 else "medium" if mean < 2 / 3 else "high"
    else:
        attribute, magnitude, level = 1.0, 1.0, "none"
    score = (grid + attribute + magnitude) / 3.0
    tier = "easy" if score < TIER_BOUNDS[0] else "medium" if score < TIER_BOUNDS[1] else "hard"
    return {"difficulty_score": round6(score), "tier": tier, "discrepancy": level,
            "magnitude": round6(1.0 - magnitude)}
