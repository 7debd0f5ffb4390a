"""Photoreal's outdoor setting: Blender's physical sky over a paving, gravel or lawn, a hedge beyond.

Blender's physical sky (Sky Texture, MULTIPLE_SCATTERING: Blender 5.0's successor of
Nishita) instead of the HDRI, its sun where photoreal's drawn sun is (or a sun drawn here
when photoreal drew none, then the sky alone lights the scene), its strength normalised to
photoreal's upward irradiance by SKY_IRRADIANCE (bench/sky_irradiance.py), on a procedural
paving, gravel or lawn; a paved or gravel patch under the objects is surrounded by lawn, so
the frame's far side shows the garden beyond it, and a hedge stands where the top rows of a
camera looking down reach it. scenes/settings.py draws the kind.
"""

from __future__ import annotations

import numpy as np

from .look_basis import TARGET_IRRADIANCE, scene_frame, texture_scale
from .materials import GroundMaterial
from .model import EnvironmentLook, HedgeLook, Scene, SettingLook, SkyLook, SunLook, round6
from .setting_draw import choice, footprint, surface, top_row_reach, uniform

OUTDOOR_UNIT = 4.0  # outdoors: a 0.9-unit object is about 22 cm across (a ball, a box on a patio)
# Outdoors (scenes use OUTDOOR_UNIT): the support under the objects, the lawn around a paved or gravel patch.
OUTDOOR_GROUNDS: dict[str, GroundMaterial] = {
    "paving": GroundMaterial(((0.72, 0.66, 0.56), (0.6, 0.6, 0.58), (0.62, 0.4, 0.32), (0.5, 0.5, 0.52)), 0.4,
                             (0.6, 0.85), ranges=(("joint_width", (0.015, 0.04)), ("grout_tone", (0.25, 0.5))),
                             choices=(("stagger", (0.0, 0.5)),)),
    "gravel": GroundMaterial(((0.62, 0.6, 0.56), (0.7, 0.64, 0.54), (0.48, 0.47, 0.46)), 0.035, (0.8, 0.95)),
    "grass": GroundMaterial(((0.28, 0.45, 0.12), (0.34, 0.5, 0.16), (0.24, 0.38, 0.1)), 0.05, (0.7, 0.9)),
}
# A hedge beyond the objects (its leaves `scale_m` across), where the top rows of a camera looking down reach it.
HEDGE = GroundMaterial(((0.16, 0.3, 0.1), (0.2, 0.32, 0.12), (0.13, 0.26, 0.11)), 0.04, (0.55, 0.75))
HEDGE_PROBABILITY = 0.7
HEDGE_GAP_M = (0.3, 1.5)  # lawn between the patch (or the objects) and the hedge
# The hedge no farther than this share of the top row's reach over the ground: at WALL_SEEN (0.85) a counting
# frame showed only its foot in the top ten rows.
HEDGE_SEEN = 0.6
HEDGE_HEIGHT_M = (0.8, 1.6)
HEDGE_THICKNESS_M = (0.5, 0.9)
OUTDOOR_PROBABILITY = {"paving": 0.4, "gravel": 0.3, "grass": 0.3}
PATCH_MARGIN_M = (0.3, 1.0)
SUN_ELEVATION_DEG = (25.0, 60.0)  # the sky's sun when photoreal drew none (the sky alone lights the scene)
# Upward irradiance (luminance) and grey-card white balance of the MULTIPLE_SCATTERING sky at strength 1 without its
# sun disc, by sun elevation (degrees): `python -m bench.sky_irradiance` (bench/results/sky_irradiance.json).
SKY_IRRADIANCE: dict[float, float] = {10.0: 7.0878, 20.0: 9.7751, 30.0: 11.3796, 40.0: 12.5724, 50.0: 13.5107,
                                      60.0: 14.2356, 70.0: 14.7575}
SKY_WHITE_BALANCE = (1.66, 0.965, 0.552)  # measured 1.55-1.68, 0.965, 0.59-0.54 over 10-70 degrees
# The sky's white balance is applied partly (gain ** SKY_BALANCE): a photographer balances for the light, the sun's
# and the sky's together, and the sky in the frame stays blue.
SKY_BALANCE = 0.6


def sky_irradiance(elevation_deg: float) -> float:
    """The sky's upward irradiance at strength 1, interpolated in SKY_IRRADIANCE."""
    keys = sorted(SKY_IRRADIANCE)
    return float(np.interp(elevation_deg, keys, [SKY_IRRADIANCE[k] for k in keys]))


def draw_outdoor(scene: Scene, environment: EnvironmentLook, sun: SunLook | None,
             rng: np.random.Generator) -> SettingLook:
    centre, _scale, right, toward = scene_frame(scene)
    unit = round6(OUTDOOR_UNIT * texture_scale(scene))
    here = (round6(centre[0]), round6(centre[1]))
    target = TARGET_IRRADIANCE * 2**environment.exposure_ev
    if sun is not None:  # the sky's sun where photoreal's sun lamp is; the sky gives the rest of the light
        azimuth, elevation = sun.azimuth_deg, sun.elevation_deg
        sun_share = sun.strength * float(np.sin(np.radians(elevation))) / target
    else:
        azimuth, elevation, sun_share = uniform(rng, (0.0, 360.0)), uniform(rng, SUN_ELEVATION_DEG), 0.0
    balance = tuple(round6(g**SKY_BALANCE) for g in SKY_WHITE_BALANCE)
    sky = SkyLook(sun_azimuth_deg=azimuth, sun_elevation_deg=elevation,
                  strength=round6(max(0.0, 1.0 - sun_share) * target / sky_irradiance(elevation)),
                  white_balance=balance, air_density=1.0, aerosol_density=1.0, ozone_density=1.0)
    name = choice(rng, OUTDOOR_PROBABILITY)
    ground = surface(rng, name, OUTDOOR_GROUNDS[name], unit, here)
    surround, patch = None, None
    if name != "grass":  # a patio or a gravel path in a lawn
        surround = surface(rng, "grass", OUTDOOR_GROUNDS["grass"], unit, here)
        lo_r, hi_r, lo_a, hi_a = footprint(scene, centre, right, toward)
        margin = uniform(rng, PATCH_MARGIN_M) * unit
        patch = (round6(2 * max(abs(lo_r), abs(hi_r)) + 2 * margin), round6(2 * max(abs(lo_a), abs(hi_a)) + 2 * margin))
    hedge = None
    if rng.random() < HEDGE_PROBABILITY:
        _lo_r, _hi_r, _lo_a, hi_a = footprint(scene, centre, right, toward)
        near = max(hi_a, patch[1] / 2 if patch is not None else hi_a) + uniform(rng, HEDGE_GAP_M) * unit
        reach = top_row_reach(scene, np.array([centre[0], centre[1], 0.0]), -toward, 0.0)
        distance = min(near, max(hi_a + 0.2 * unit, HEDGE_SEEN * reach)) if np.isfinite(reach) else near
        camera = np.asarray(scene.camera.location, dtype=float)
        half = 3.0 * (float(np.linalg.norm(camera - centre)) + distance)
        hedge = HedgeLook(distance=round6(distance), height=round6(uniform(rng, HEDGE_HEIGHT_M) * unit),
                          thickness=round6(uniform(rng, HEDGE_THICKNESS_M) * unit), span=(round6(-half), round6(half)),
                          surface=surface(rng, "hedge", HEDGE, unit, here))
    return SettingLook(kind="outdoor", unit=unit, centre=here, toward=(round6(toward[0]), round6(toward[1])),
                       sky=sky, ground=ground, surround=surround, patch=patch, hedge=hedge)
