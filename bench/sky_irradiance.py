"""Upward irradiance and grey-card white balance of Blender's physical sky (Sky Texture, MULTIPLE_SCATTERING, no
sun disc, strength 1) at the sun elevations the outdoor setting draws: the table scenes/setting_outdoor.py normalises the
sky's strength and colour with (SKY_IRRADIANCE), as scenes/looks.py does for the HDRIs.

Each elevation's sky is rendered by Cycles as a 256x128 equirectangular panorama (EXR, linear), integrated over the
upper hemisphere exactly like bench/looks_exposure.py integrates an HDRI. It also checks the sky's sun azimuth
convention: the brightest pixel of a sky whose sun is at sun_rotation = phi is printed with its azimuth.

`python -m bench.sky_irradiance` prints the table and writes bench/results/sky_irradiance.json.
"""

from __future__ import annotations

import math
import tempfile
from pathlib import Path

import numpy as np

from .common import Run, parse_args
from .looks_exposure import LUMA, upward_irradiance_rgb, white_balance

ELEVATIONS = (10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0)


def render_sky(elevation_deg: float, rotation_deg: float, path: Path, disc: bool = False) -> None:
    import bpy

    bpy.ops.wm.read_factory_settings(use_empty=True)
    scene = bpy.context.scene
    world = bpy.data.worlds.new("sky")
    scene.world = world
    tree = world.node_tree
    sky = tree.nodes.new("ShaderNodeTexSky")
    sky.sky_type = "MULTIPLE_SCATTERING"
    sky.sun_disc = disc
    sky.sun_elevation = math.radians(elevation_deg)
    sky.sun_rotation = math.radians(rotation_deg)
    background = next(n for n in tree.nodes if n.bl_idname == "ShaderNodeBackground")
    tree.links.new(sky.outputs["Color"], background.inputs["Color"])
    camera = bpy.data.cameras.new("pano")
    camera.type = "PANO"
    camera.panorama_type = "EQUIRECTANGULAR"
    obj = bpy.data.objects.new("pano", camera)
    obj.rotation_euler = (math.pi / 2, 0.0, -math.pi / 2)  # looks along +X, +Z up: longitude 0 is +X
    scene.collection.objects.link(obj)
    scene.camera = obj
    scene.render.engine = "CYCLES"
    scene.cycles.samples = 4
    scene.cycles.device = "CPU"
    scene.render.threads_mode = "FIXED"
    scene.render.threads = 1
    scene.render.resolution_x, scene.render.resolution_y = 256, 128
    scene.render.image_settings.file_format = "OPEN_EXR"
    scene.render.image_settings.color_depth = "32"
    scene.render.filepath = str(path)
    scene.view_settings.view_transform = "Standard"
    bpy.ops.render.render(write_still=True)


def main() -> None:
    args = parse_args(__doc__.splitlines()[0])
    run = Run("sky_irradiance", args.quick, args.out, {"sky": "MULTIPLE_SCATTERING, no sun disc, strength 1"})
    table, balance = {}, {}
    with tempfile.TemporaryDirectory() as folder:
        for elevation in ELEVATIONS:
            path = Path(folder) / f"sky_{elevation:.0f}.exr"
            render_sky(elevation, 0.0, path)
            rgb = upward_irradiance_rgb(path)
            table[elevation] = round(float(LUMA @ rgb), 4)
            balance[elevation] = white_balance(rgb)
            print(f"elevation {elevation:4.0f}: E {table[elevation]:8.4f} rgb {np.round(rgb, 4)} "
                  f"white balance {balance[elevation]}")
        import OpenEXR

        path = Path(folder) / "disc.exr"
        render_sky(30.0, 90.0, path, disc=True)
        with OpenEXR.File(str(path), separate_channels=True) as exr:
            luminance = np.asarray(exr.parts[0].channels["G"].pixels, dtype=np.float64)
        row, col = np.unravel_index(int(np.argmax(luminance)), luminance.shape)
        height, width = luminance.shape
        print(f"sun_rotation 90: brightest pixel at elevation {90 - (row + 0.5) * 180 / height:.1f}, "
              f"column {col} of {width}")
    run.finish({"upward_irradiance": {str(k): v for k, v in table.items()},
                "white_balance": {str(k): v for k, v in balance.items()},
                "disc_check": {"row": int(row), "col": int(col), "width": int(width), "height": int(height)}})


if __name__ == "__main__":
    main()
