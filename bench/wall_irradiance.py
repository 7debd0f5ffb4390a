"""Irradiance of each HDRI photoreal draws on a vertical surface, by the azimuth the surface faces: the table
scenes/setting_room.py keeps a tabletop's far wall from blowing out with (WALL_IRRADIANCE).

A wall facing the horizontal unit normal n = (cos psi, sin psi, 0) in the map's own frame receives
E(psi) = integral over {d . n > 0} of L(d) (d . n) dw (luminance, the map's units), L looked up as Blender's
Environment Texture does (u = 0.5 - atan2(d_y, d_x) / 2 pi, v = elevation / pi + 0.5). A world turned by
`rotation_deg` about +Z (scenes/looks.py) looks the map up at Rz(rotation) d, so a wall whose normal has azimuth
phi in the world sees E(phi + rotation). Sunrise's and sunset's suns stand near the horizon: a wall facing them
receives three to four times its upward irradiance, and a far wall lit so blew out.

`python -m bench.wall_irradiance` prints the table (24 azimuths, 15 degrees apart) and writes
bench/results/wall_irradiance.json.
"""

from __future__ import annotations

import numpy as np

from .common import Run, parse_args
from .looks_exposure import LUMA, environment_maps

AZIMUTHS = 24


def read_map(path) -> np.ndarray:
    import OpenEXR

    with OpenEXR.File(str(path), separate_channels=True) as exr:
        channels = exr.parts[0].channels
        return np.stack([np.asarray(channels[c].pixels, dtype=np.float64) for c in ("R", "G", "B")], axis=-1)


def wall_irradiance(rgb: np.ndarray, azimuths: int = AZIMUTHS) -> list[float]:
    height, width = rgb.shape[:2]
    luminance = rgb @ LUMA
    elevation = (0.5 - (np.arange(height) + 0.5) / height) * np.pi  # row 0 = zenith
    u = (np.arange(width) + 0.5) / width
    azimuth = (0.5 - u) * 2 * np.pi  # Cycles: u = 0.5 - atan2(d_y, d_x) / 2 pi
    dx, dy = np.cos(azimuth), np.sin(azimuth)
    cos_e = np.cos(elevation)[:, None]
    solid = cos_e * (2 * np.pi / width) * (np.pi / height)
    out = []
    for k in range(azimuths):
        psi = 2 * np.pi * k / azimuths
        facing = cos_e * (dx[None, :] * np.cos(psi) + dy[None, :] * np.sin(psi))
        out.append(round(float((luminance * np.clip(facing, 0, None) * solid).sum()), 4))
    return out


def main() -> None:
    args = parse_args(__doc__.splitlines()[0])
    run = Run("wall_irradiance", args.quick, args.out, {"azimuths": AZIMUTHS})
    table = {name: wall_irradiance(read_map(path)) for name, path in environment_maps().items()}
    for name, values in table.items():
        print(f"{name:10s} min {min(values):7.3f} max {max(values):7.3f}  {values}")
    run.finish({"wall_irradiance": table})


if __name__ == "__main__":
    main()
