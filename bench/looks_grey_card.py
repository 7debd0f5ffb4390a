"""A grey card per environment map, rendered: how bright each HDRI makes the sides of matte grey objects.

photoreal normalises each map by its analytic upward irradiance (bench/looks_exposure.py),
but the camera mostly sees objects' sides, and how much light the sides get relative to
the top depends on where a map's light comes from (a low sun on the horizon lights sides
more than an overcast sky). The analytic side-to-top ratio of the maps did not predict the
lightness of rendered colours (bench/results/looks_NOTES.md "Chroma"), so this measures it on renders.

Each base scene is a shape_count item composed in photoreal at `--size`; its objects are
turned into spheres of the palette's 0.5 grey at the same places and sizes (rubber, matte
base specular, no wear), its ground kept as drawn, with no sun. Under each of the 8 maps
(ENVIRONMENTS) at `--rotations` turns about +Z, with the map's strength and white balance
as photoreal sets them at exposure 0 (TARGET_IRRADIANCE / ENVIRONMENT_IRRADIANCE), it
renders through the real Blender backend (render/backends/blender.py render_scene) and
takes the median linear luminance (Rec.709, from the sRGB image) of the spheres' visible
pixels (the object-index pass). A map's level is the geometric mean over scenes and
rotations; its gain is the level of all maps (geometric mean) over its own, so the gains'
geometric mean is 1 and the overall exposure the last change chose stays. The spread over
rotations is recorded too: how much turning one map moves its spheres' luminance.

Applied as a per-map factor on the environment's strength, the gains did not improve the
colour check (bench/results/looks_colours_grey_card_after.json; bench/results/looks_NOTES.md "Grey card
per map"), so photoreal does not use them: the table is in bench/results/looks_grey_card.json only.

    python -m bench.looks_grey_card [--quick] [--size 128x96] [--samples 8] [--rotations 4] [--scenes 2]
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from stim3d.scenes.colors import PALETTE, srgb_to_linear
from stim3d.scenes.looks import ENVIRONMENT_IRRADIANCE, ENVIRONMENT_WHITE_BALANCE, ENVIRONMENTS, TARGET_IRRADIANCE
from stim3d.scenes.materials import MATTE_SPECULAR
from stim3d.scenes.model import Color, DrawnLook, EnvironmentLook, Item, ObjectLook, Scene

from .common import Run, parse_args, print_table, progress

LUMA = np.array([0.2126, 0.7152, 0.0722])
GREY = "gray"


def _args(parser) -> None:
    parser.add_argument("--size", default="128x96")
    parser.add_argument("--samples", type=int, default=8)
    parser.add_argument("--rotations", type=int, default=4, help="turns of each map about +Z, evenly spaced")
    parser.add_argument("--scenes", type=int, default=2, help="base scenes (shape_count items, seed 26)")


def base_items(count: int, width: int, height: int) -> list[Item]:
    """`count` shape_count items composed in photoreal (their stage, camera and drawn ground)."""
    from stim3d.scenes.families.base import Frame
    from stim3d.scenes.items import make_item
    from stim3d.scenes.placement import InfeasibleError

    items: list[Item] = []
    for index in range(4 * count):  # bounded: a few infeasible compositions are skipped
        if len(items) == count:
            break
        try:
            items.append(make_item("shape_count", {}, [26, 0, index], f"grey-card-{index:05d}",
                                   Frame(width, height), look="photoreal"))
        except InfeasibleError:
            continue
    return items


def grey_card_scene(scene: Scene, environment: str, rotation_deg: float) -> Scene:
    """`scene` with grey matte spheres for its objects, lit by `environment` alone as photoreal lights it."""
    assert isinstance(scene.look, DrawnLook)
    grey = Color(name=GREY, srgb=PALETTE[GREY])
    objects = [obj.model_copy(update={"shape": "sphere", "dimensions": (obj.size,) * 3, "color": grey,
                                      "finish": "matte", "source": None, "attributes": {}})
               for obj in scene.objects]
    looks = [ObjectLook(id=obj.id, material="rubber", roughness=0.8, metallic=0.0, coat=0.0,
                        params={"specular": MATTE_SPECULAR}) for obj in scene.objects]
    light = EnvironmentLook(name=environment, rotation_deg=rotation_deg, exposure_ev=0.0,
                            strength=TARGET_IRRADIANCE / ENVIRONMENT_IRRADIANCE[environment],
                            white_balance=ENVIRONMENT_WHITE_BALANCE[environment])
    look = scene.look.model_copy(update={"environment": light, "sun": None, "objects": looks})
    return scene.model_copy(update={"objects": objects, "look": look})


def sphere_luminance(scene: Scene, samples: int, workdir: Path) -> float:
    """Median linear luminance of the spheres' visible pixels in a Cycles render of `scene`."""
    from stim3d.render.backends import blender
    from stim3d.render.settings import RenderSettings

    settings = RenderSettings(width=scene.camera.width, height=scene.camera.height, samples=samples)
    output = blender.render_scene(scene, settings, 0, workdir)
    assert output.instance_map is not None
    pixels = output.image[output.instance_map > 0].astype(np.float64) / 255.0
    return float(np.median(srgb_to_linear(pixels) @ LUMA))


def side_gains(levels: dict[str, float]) -> dict[str, float]:
    """Per map, the gain bringing its grey spheres to the geometric mean of all maps' levels."""
    mean = float(np.exp(np.mean(np.log(list(levels.values())))))
    return {name: round(mean / level, 4) for name, level in levels.items()}


def main() -> None:
    args = parse_args(__doc__.splitlines()[0], _args)
    width, height = (int(v) for v in args.size.split("x"))
    rotations = 1 if args.quick else args.rotations
    items = base_items(1 if args.quick else args.scenes, width, height)
    run = Run("looks_grey_card", args.quick, args.out, {
        "engine": "cycles", "width": width, "height": height, "samples": args.samples, "rotations": rotations,
        "scenes": [i.item_id for i in items], "objects": "grey 0.5 rubber spheres, no sun, exposure 0",
        "luminance": "median Rec.709 linear luminance of the spheres' visible pixels"})
    measured: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory() as scratch:
        for name in ENVIRONMENTS:
            for item in items:
                for k in range(rotations):
                    scene = grey_card_scene(item.scene, name, 360.0 * k / rotations)
                    measured.setdefault(name, []).append(round(sphere_luminance(scene, args.samples, Path(scratch)), 5))
            progress(f"{name}: {measured[name]}")
    levels = {name: float(np.exp(np.mean(np.log(values)))) for name, values in measured.items()}
    gains = side_gains(levels)
    print_table("grey spheres per map (linear luminance)", ["map", "level", "min", "max", "gain"],
                [[n, round(levels[n], 4), min(v), max(v), gains[n]] for n, v in measured.items()])
    spread = {n: round(max(v) / min(v), 2) for n, v in measured.items()}
    figures: dict[str, Any] = {"level": {n: round(v, 5) for n, v in levels.items()}, "renders": measured,
                               "side_gain": gains, "max_over_min": spread}
    run.finish(figures)


if __name__ == "__main__":
    main()
