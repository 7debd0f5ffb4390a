"""Upward irradiance of each HDRI photoreal draws (Blender's and the vendored pmndrs maps): the tables
scenes/look_basis.py normalises exposure and white balance with.

For an equirectangular map with radiance L (linear Rec.709 RGB), the irradiance on an
upward-facing surface is E = integral over the upper hemisphere of L cos(theta) dw, per
channel (E_r, E_g, E_b) and for the luminance (E = 0.2126 E_r + 0.7152 E_g + 0.0722 E_b).
Turning the map about +Z does not change it, so one number per map normalises every
rotation (scenes/looks.py ENVIRONMENT_IRRADIANCE).

White balance, a photographer's grey card facing up: a grey surface reflects each channel
in proportion to E_c, so it renders neutral when channel c of the map is scaled by
g_c = E / E_c. The Rec.709 weights sum to 1, so the luminance of the balanced map's
irradiance is E again: exposure is unchanged (scenes/looks.py ENVIRONMENT_WHITE_BALANCE).

`python -m bench.looks_exposure` prints both tables and writes bench/results/looks_exposure.json.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .common import Run, parse_args

LUMA = np.array([0.2126, 0.7152, 0.0722])


def environment_maps() -> dict[str, Path]:
    """Every HDRI photoreal may draw, by the name a look records (Blender's and the vendored pmndrs maps)."""
    from stim3d.render.backends.blender_looks import environment_files

    return environment_files()


def upward_irradiance(path: Path) -> float:
    """E_up of one equirectangular EXR's luminance (row 0 = zenith), in the map's own units."""
    return float(LUMA @ upward_irradiance_rgb(path))


def white_balance(irradiance_rgb: np.ndarray) -> tuple[float, float, float]:
    """Per-channel gain making an upward grey card neutral with the luminance of its irradiance unchanged."""
    luminance = float(LUMA @ irradiance_rgb)
    r, g, b = (round(luminance / float(c), 4) for c in irradiance_rgb)
    return r, g, b


def upward_irradiance_rgb(path: Path) -> np.ndarray:
    """(E_r, E_g, E_b) on an upward surface of one equirectangular EXR (row 0 = zenith), in the map's units."""
    import OpenEXR

    with OpenEXR.File(str(path), separate_channels=True) as exr:
        channels = exr.parts[0].channels
        rgb = np.stack([np.asarray(channels[c].pixels, dtype=np.float64) for c in ("R", "G", "B")], axis=-1)
    height, width = rgb.shape[:2]
    elevation = (0.5 - (np.arange(height) + 0.5) / height) * np.pi  # +pi/2 at the top row
    upper = elevation > 0
    # solid angle of a pixel: cos(elevation) dphi dtheta; the cosine to the zenith is sin(elevation)
    weight = np.cos(elevation) * np.sin(elevation) * (2 * np.pi / width) * (np.pi / height)
    return (rgb[upper].sum(axis=1) * weight[upper][:, None]).sum(axis=0)


def main() -> None:
    args = parse_args(__doc__.splitlines()[0])
    run = Run("looks_exposure", args.quick, args.out, {"luminance": "Rec.709 (0.2126, 0.7152, 0.0722)"})
    rgb = {name: upward_irradiance_rgb(path) for name, path in environment_maps().items()}
    table = {name: round(float(LUMA @ value), 4) for name, value in rgb.items()}
    balance = {name: white_balance(value) for name, value in rgb.items()}
    for name, value in table.items():
        print(f"{name:10s} {value:8.4f}   rgb {np.round(rgb[name], 4)}   white balance {balance[name]}")
    run.finish({'upward_irradiance': table, 'upward_irradiance_rgb': {n: [round(float(c), 4) for c in v]
                                                                      for n, v in rgb.items()},
                'white_balance': balance, 'maps': sorted(table)})


if __name__ == "__main__":
    main()
