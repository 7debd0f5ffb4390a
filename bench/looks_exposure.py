"""Upward irradiance of each HDRI shipped with Blender: the table scenes/looks.py normalises exposure with.

For an equirectangular map with radiance L (linear Rec.709 luminance), the irradiance on
an upward-facing surface is E = integral over the upper hemisphere of L cos(theta) dw.
Turning the map about +Z does not change E, so one number per map normalises every
rotation. `python -m bench.looks_exposure` prints the table that
scenes/looks.py ENVIRONMENT_IRRADIANCE holds and writes bench/results/looks_exposure.json.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .common import Run, parse_args

LUMA = np.array([0.2126, 0.7152, 0.0722])


def environment_folder() -> Path:
    import bpy

    return Path(bpy.utils.system_resource("DATAFILES", path="studiolights/world"))


def upward_irradiance(path: Path) -> float:
    """E_up of one equirectangular EXR (row 0 = zenith), in the map's own units."""
    import OpenEXR

    with OpenEXR.File(str(path), separate_channels=True) as exr:
        channels = exr.parts[0].channels
        rgb = np.stack([np.asarray(channels[c].pixels, dtype=np.float64) for c in ("R", "G", "B")], axis=-1)
    height, width = rgb.shape[:2]
    luminance = rgb @ LUMA
    elevation = (0.5 - (np.arange(height) + 0.5) / height) * np.pi  # +pi/2 at the top row
    upper = elevation > 0
    # solid angle of a pixel: cos(elevation) dphi dtheta; the cosine to the zenith is sin(elevation)
    weight = np.cos(elevation) * np.sin(elevation) * (2 * np.pi / width) * (np.pi / height)
    return float((luminance[upper].sum(axis=1) * weight[upper]).sum())


def main() -> None:
    args = parse_args(__doc__.splitlines()[0])
    run = Run("looks_exposure", args.quick, args.out, {"luminance": "Rec.709 (0.2126, 0.7152, 0.0722)"})
    folder = environment_folder()
    table = {path.stem: round(upward_irradiance(path), 4) for path in sorted(folder.glob("*.exr"))}
    for name, value in table.items():
        print(f"{name:10s} {value:8.4f}")
    run.finish({'upward_irradiance': table, 'maps': sorted(table)})


if __name__ == "__main__":
    main()
