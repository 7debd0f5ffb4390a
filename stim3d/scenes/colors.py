"""Named colours, sRGB <-> linear, and colour difference (CIEDE2000).

Colours are defined in display sRGB because that is what a person (and a model)
sees in the PNG; Blender receives the linearised value and renders with the
"Standard" view transform, so an unshaded diffuse surface maps back to roughly
its nominal value. Every colour difference in this project is CIEDE2000 on
CIELAB (D65), and says so where it is recorded.
"""

from __future__ import annotations

import numpy as np

from .model import Color

PALETTE: dict[str, tuple[float, float, float]] = {
    "red": (0.80, 0.08, 0.08),
    "green": (0.10, 0.62, 0.16),
    "blue": (0.10, 0.26, 0.86),
    "orange": (1.00, 0.50, 0.02),
    "purple": (0.50, 0.14, 0.72),
    "black": (0.04, 0.04, 0.04),
    "gray": (0.50, 0.50, 0.50),
    "yellow": (0.96, 0.86, 0.08),
}
COLOR_NAMES: tuple[str, ...] = tuple(PALETTE)


def named(name: str) -> Color:
    try:
        return Color(name=name, srgb=PALETTE[name])
    except KeyError:
        raise ValueError(f"unknown colour {name!r}; allowed: {', '.join(PALETTE)}") from None


def srgb_to_linear(srgb) -> np.ndarray:
    c = np.asarray(srgb, dtype=float)
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


def linear_to_srgb(linear) -> np.ndarray:
    c = np.clip(np.asarray(linear, dtype=float), 0.0, None)
    return np.where(c <= 0.0031308, c * 12.92, 1.055 * c ** (1 / 2.4) - 0.055)


_SRGB_TO_XYZ = np.array(
    [[0.4124564, 0.3575761, 0.1804375], [0.2126729, 0.7151522, 0.0721750], [0.0193339, 0.1191920, 0.9503041]]
)
_D65 = np.array([0.95047, 1.0, 1.08883])


def srgb_to_lab(srgb) -> np.ndarray:
    """CIELAB (D65) of sRGB values in [0, 1]; works on (..., 3) arrays."""
    xyz = srgb_to_linear(srgb) @ _SRGB_TO_XYZ.T / _D65
    eps, kappa = 216 / 24389, 24389 / 27
    f = np.where(xyz > eps, np.cbrt(xyz), (kappa * xyz + 16) / 116)
    return np.stack([116 * f[..., 1] - 16, 500 * (f[..., 0] - f[..., 1]), 200 * (f[..., 1] - f[..., 2])], axis=-1)


def delta_e2000(lab1, lab2) -> np.ndarray:
    """CIEDE2000 colour difference (Sharma, Wu and Dalal 2005), broadcasting over (..., 3)."""
    lab1, lab2 = np.asarray(lab1, dtype=float), np.asarray(lab2, dtype=float)
    l1, a1, b1 = lab1[..., 0], lab1[..., 1], lab1[..., 2]
    l2, a2, b2 = lab2[..., 0], lab2[..., 1], lab2[..., 2]
    c_bar = (np.hypot(a1, b1) + np.hypot(a2, b2)) / 2
    g = 0.5 * (1 - np.sqrt(c_bar**7 / (c_bar**7 + 25.0**7)))
    a1p, a2p = (1 + g) * a1, (1 + g) * a2
    c1p, c2p = np.hypot(a1p, b1), np.hypot(a2p, b2)
    h1p = np.degrees(np.arctan2(b1, a1p)) % 360
    h2p = np.degrees(np.arctan2(b2, a2p)) % 360
    dlp, dcp = l2 - l1, c2p - c1p
    dh = h2p - h1p
    dh = np.where(dh > 180, dh - 360, np.where(dh < -180, dh + 360, dh))
    dh = np.where(c1p * c2p == 0, 0.0, dh)
    dhp = 2 * np.sqrt(c1p * c2p) * np.sin(np.radians(dh) / 2)
    lbp, cbp = (l1 + l2) / 2, (c1p + c2p) / 2
    hsum = h1p + h2p
    hbp = np.where(
        c1p * c2p == 0,
        hsum,
        np.where(np.abs(h1p - h2p) <= 180, hsum / 2, np.where(hsum < 360, (hsum + 360) / 2, (hsum - 360) / 2)),
    )
    t = (
        1
        - 0.17 * np.cos(np.radians(hbp - 30))
        + 0.24 * np.cos(np.radians(2 * hbp))
        + 0.32 * np.cos(np.radians(3 * hbp + 6))
        - 0.20 * np.cos(np.radians(4 * hbp - 63))
    )
    d_theta = 30 * np.exp(-(((hbp - 275) / 25) ** 2))
    rc = 2 * np.sqrt(cbp**7 / (cbp**7 + 25.0**7))
    sl = 1 + 0.015 * (lbp - 50) ** 2 / np.sqrt(20 + (lbp - 50) ** 2)
    sc = 1 + 0.045 * cbp
    sh = 1 + 0.015 * cbp * t
    rt = -np.sin(np.radians(2 * d_theta)) * rc
    return np.sqrt(
        (dlp / sl) ** 2 + (dcp / sc) ** 2 + (dhp / sh) ** 2 + rt * (dcp / sc) * (dhp / sh)
    )


def delta_e_srgb(srgb1, srgb2) -> np.ndarray:
    return delta_e2000(srgb_to_lab(srgb1), srgb_to_lab(srgb2))


def nearest_palette_color(srgb) -> str:
    """The palette name nearest to `srgb` under CIEDE2000."""
    names = list(PALETTE)
    distances = delta_e_srgb(np.asarray(srgb, dtype=float)[None, :], np.array([PALETTE[n] for n in names]))
    return names[int(np.argmin(distances))]
