"""Photoreal's settings: where a scene is (issue 52, "Settings: the scene is somewhere").

`draw_setting` draws a `SettingLook` (scenes/model.py) for a photoreal look; the Blender
backend builds it (render/backends/blender_settings.py) instead of photoreal's endless
ground. Three kinds, the tabletop most often (SETTING_KINDS):

- `tabletop`: a finite table whose top is the plane z = 0 the objects already stand on,
  covering their footprint with a drawn margin, its far edge as near the objects as that
  margin allows so it shows in the frame wherever the camera sees past the objects; a top of
  varnished wooden boards, a laminate or a stone (TABLE_TOPS); the room's floor at
  z = -table height (photoreal's own drawn floor material, at room scale), a far wall
  (painted plaster, a skirting board) drawn where the camera's top rows reach it, maybe a side
  wall, and maybe a window in the far wall that shows the environment outside and adds an
  area light. The room is sized in metres times `unit` scene units per metre: a counting
  family's 0.9-unit objects become toys about 9 cm across (TOY_UNIT), so the table is 12-20
  units wide and 7.2-7.8 units high.
- `outdoor`: Blender's physical sky (Sky Texture, MULTIPLE_SCATTERING: Blender 5.0's
  successor of Nishita) instead of the HDRI, its sun where photoreal's drawn sun is (or a
  sun drawn here when photoreal drew none, then the sky alone lights the scene), its strength
  normalised to photoreal's upward irradiance by SKY_IRRADIANCE (bench/sky_irradiance.py),
  on a procedural paving, gravel or lawn; a paved or gravel patch under the objects is
  surrounded by lawn, so the frame's far side shows the garden beyond it.
- `dome`: Kubric's approach. The world is photoreal's HDRI as before; the ground's colour is
  the same map looked up by the direction from a dome centre `dome_height` above the scene's
  centre (about the camera's height, DOME_HEIGHT) to the ground point, so ground and
  background are one picture. The shipped HDRIs are 1024x512, a texel per 0.35 degrees: a
  320x240 frame of a counting family's 39-degree view gets about 110 texels across, so the
  projected ground is a soft photograph of the map's own ground (courtyard's paving, forest's
  path and fence, studio's dark floor), upsampled three times, with whatever lay on it (a dog,
  a kerb) flattened into it; where the frame shows the horizon (ava_orientation, letters)
  ground and sky meet as in the map. It helps most where depth of field or distance hides the
  blur; under a camera looking steeply down (the grids) it shows the blurred map below its
  horizon. The objects' shadows and reflections come from Cycles, the ground lit by the same light.

Own random stream: `SeedSequence(item entropy + [SETTING_TAG, attempt])`, separate from the
look's, so photoreal draws the same environment, sun, ground and materials for every seed
as it did before settings existed; a setting reads those draws (the exposure, the sun, the
floor material) but never draws from their stream.

Geometry stays the family's: nothing here moves an object or the camera, and no setting
object is ever between the camera and an object: the table's top is the plane the objects
stand on (its thickness is below it), the floor is below the table, and the walls stand
beyond every object as seen from the camera (the far wall past the table's far edge, a side
wall farther to the side than the camera and every object). tests/test_photoreal_settings.py
checks it with rays.

Which families show what (the camera and the objects' spread decide it; bench/settings_background.py
ray casts the top row, docs/looks.md "Settings" has the table): in a tabletop every family's
top row is the room past the table's far edge (floor, wall; letters and ava_orientation also
the window); outdoors the lawn around a patch or the hedge (nothing but the support where the
lawn itself is the support and no hedge was drawn); under a dome the map's ground beyond the
objects, up to its horizon for the lower cameras (letters, ava_orientation). The grids (OddGrid,
ROSE, spatial_grid: 47 degrees down) show the table top with its far edge and a band of floor
and wall; form_constancy's floating shapes, seen through a telephoto lens, the table's far
edge and the wall behind them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .camera import geometry
from .colors import linear_to_srgb, srgb_to_linear
from .look_basis import ENVIRONMENT_IRRADIANCE, TARGET_IRRADIANCE, scene_frame, texture_scale
from .materials import GroundMaterial
from .model import (
    EnvironmentLook,
    GroundLook,
    HedgeLook,
    RoomLook,
    Scene,
    SettingLook,
    SkyLook,
    SunLook,
    TableLook,
    WindowLook,
    round6,
)

SETTING_TAG = 0x100D  # marks the setting's own SeedSequence stream (item entropy + [SETTING_TAG, attempt])
SETTING_KINDS: dict[str, float] = {"tabletop": 0.5, "outdoor": 0.25, "dome": 0.25}  # the kind's probability

TOY_UNIT = 10.0  # scene units per metre of a room at texture_scale 1: a 0.9-unit object is a 9 cm toy
OUTDOOR_UNIT = 4.0  # outdoors: a 0.9-unit object is about 22 cm across (a ball, a box on a patio)
DOME_UNIT = 1.0  # the dome's scale: objects at their own size (only `unit` in the record)

TABLE_WIDTH_M = (1.2, 2.0)
TABLE_DEPTH_M = (0.7, 1.0)
TABLE_HEIGHT_M = (0.72, 0.78)
TABLE_THICKNESS_M = (0.025, 0.045)
TABLE_MARGIN_M = (0.04, 0.12)  # the top beyond the objects' footprint on the far side and at least on the others
# Table tops (render/backends/blender_grounds.py builds them): scale_m in metres (a board's width, a laminate's
# mottle, a stone's vein field).
TABLE_TOPS: dict[str, GroundMaterial] = {
    "wood_top": GroundMaterial(((0.62, 0.42, 0.25), (0.45, 0.29, 0.17), (0.76, 0.6, 0.42), (0.35, 0.22, 0.14)), 0.1,
                               (0.25, 0.45), ranges=(("plank_length", (12.0, 24.0)), ("stagger", (0.2, 0.6)))),
    "laminate": GroundMaterial(((0.9, 0.89, 0.86), (0.72, 0.73, 0.73), (0.3, 0.31, 0.32), (0.8, 0.74, 0.64)), 0.3,
                               (0.3, 0.5)),
    "marble": GroundMaterial(((0.88, 0.87, 0.85), (0.32, 0.32, 0.34)), 0.6, (0.12, 0.25)),
}
# Painted walls (sRGB): off-white, beige, sage, blue-grey, terracotta, in mid tones: the far wall faces the camera and
# gets the HDRI's horizon, brighter than an object's side, so a white wall clipped.
WALL_COLOURS = ((0.78, 0.77, 0.74), (0.74, 0.69, 0.6), (0.58, 0.64, 0.56), (0.6, 0.65, 0.7), (0.72, 0.55, 0.45))
WALL_SCALE_M = 0.5
# Irradiance of each shipped HDRI on a vertical surface facing azimuth 0, 15, ... 345 degrees in the map's own frame
# (luminance, the map's units; `python -m bench.wall_irradiance`, bench/results/wall_irradiance.json). The far wall
# faces the camera: a low sun in the map (sunrise: 6.5 on the wall, 1.7 upward) lit it up to four times brighter than
# the table and blew it out, so its paint is darkened to keep it under WALL_MAX_RADIANCE (recorded as the wall's
# srgb and params["tone"]); the sun lamp does not light the walls (render/backends/blender_settings.py).
WALL_IRRADIANCE: dict[str, tuple[float, ...]] = {
    "city": (4.3583, 3.7795, 3.0923, 2.347, 1.8308, 1.6436, 1.4821, 1.3341, 1.2488, 1.2286, 1.2302, 1.2348, 1.2551,
        1.3277, 1.4588, 1.6432, 2.1047, 2.8765, 3.5899, 4.1733, 4.6259, 4.9134, 4.9716, 4.7778),
    "courtyard": (4.8018, 5.1621, 5.1965, 4.9244, 4.4502, 3.8899, 3.2631, 2.6256, 2.0162, 1.5342, 1.3385, 1.4327,
        1.6337, 1.7628, 1.7976, 1.7575, 1.7312, 1.804, 1.9526, 2.1796, 2.4652, 2.8476, 3.4268, 4.1537),
    "forest": (3.7097, 3.1343, 2.441, 1.7333, 1.1852, 0.9801, 0.9049, 0.8889, 0.9109, 0.9838, 1.1106, 1.2883, 1.506,
        1.7492, 1.9688, 2.2061, 2.571, 3.1842, 3.7773, 4.2337, 4.5003, 4.5731, 4.4552, 4.1603),
    "interior": (4.5124, 4.3471, 4.0145, 3.6888, 3.2092, 2.7657, 2.7245, 2.6648, 2.6393, 2.5191, 2.2914, 1.9699,
        1.6348, 1.5818, 1.55, 1.6929, 1.8181, 2.0741, 2.7795, 3.4628, 4.1257, 4.5928, 4.811, 4.7637),
    "night": (0.4331, 0.5277, 0.6056, 0.6752, 0.7958, 0.8944, 0.9606, 0.9881, 0.999, 0.9615, 0.8811, 0.7839, 0.722,
        0.6494, 0.5517, 0.4495, 0.4137, 0.3818, 0.3525, 0.326, 0.328, 0.3273, 0.3269, 0.3475),
    "studio": (2.4467, 1.7853, 1.5506, 2.2283, 2.9571, 3.4879, 3.7842, 3.826, 3.6105, 3.1878, 2.9067, 2.4391, 1.8508,
        1.2996, 1.2083, 2.0527, 2.9602, 3.6695, 4.1318, 4.316, 4.2095, 3.855, 3.5966, 3.1047),
    "sunrise": (5.3716, 4.2694, 2.938, 1.4988, 0.578, 0.51, 0.4864, 0.4861, 0.4926, 0.5005, 0.505, 0.5042, 0.5032,
        0.5121, 0.5478, 0.6386, 1.3064, 2.7774, 4.1383, 5.2736, 6.0895, 6.5252, 6.547, 6.1519),
    "sunset": (2.6692, 2.3912, 2.0633, 1.7312, 1.4582, 1.2774, 1.1481, 1.0519, 0.9772, 0.9166, 0.8687, 0.8397, 0.834,
        0.8628, 0.9458, 1.1007, 1.3578, 1.7139, 2.0916, 2.4383, 2.7119, 2.8814, 2.9298, 2.8565),
}
WALL_MAX_RADIANCE = 0.6  # the wall's radiance at most this (linear; 1 is the display's white at photoreal's exposure)
WALL_GAP_M = (0.4, 1.5)  # floor between the table's far edge and the far wall
ROOM_HEIGHT_M = (2.5, 3.0)
ROOM_WIDTH_M = (3.5, 6.0)
WALL_SEEN = 0.85  # the far wall no farther than this share of where the top row's middle ray meets the floor
SIDE_WALL_PROBABILITY = 0.4
SIDE_GAP_M = (0.4, 1.2)  # floor between the table's side (or the camera) and a side wall
SKIRTING_M = 0.08
WINDOW_PROBABILITY = 0.6
WINDOW_SILL_M = (0.8, 1.0)
WINDOW_WIDTH_M = (0.8, 1.6)
WINDOW_HEIGHT_M = (1.0, 1.4)
WINDOW_SHARE = (0.15, 0.35)  # the window light's share of photoreal's upward irradiance at the table's centre (the
# environment and the sun give the rest: render/backends/blender_settings.py light_gain)

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
# The dome's centre above the scene's centre, a share of the camera's height: from about where the camera stands the
# projection shows the map's ground as the camera would see it (paving, a path, a fence at the edge of the frame);
# at a person's height (1.3-2 m) over 0.9 m objects the ground under a camera 5 m up was the map's horizon band
# stretched into streaks.
DOME_HEIGHT = (0.8, 1.1)
DOME_MAX_ALBEDO = 0.95  # the projected ground's base colour is clipped here (render/backends/blender_settings.py)


def setting_rng(entropy: list[int], attempt: int = 0) -> np.random.Generator:
    """The setting's own generator: separate from the item's geometry stream and from the look's."""
    return np.random.default_rng(np.random.SeedSequence([*entropy, SETTING_TAG, attempt]))


def _uniform(rng: np.random.Generator, bounds: tuple[float, float]) -> float:
    return round6(rng.uniform(*bounds))


def _choice(rng: np.random.Generator, weights: dict[str, float]) -> str:
    names = list(weights)
    p = np.array([weights[n] for n in names], dtype=float)
    return names[int(rng.choice(len(names), p=p / p.sum()))]


def _surface(rng: np.random.Generator, name: str, spec: GroundMaterial, unit: float,
             centre: tuple[float, float]) -> GroundLook:
    """A procedural surface of material `name` at `unit` scene units per metre, with its pattern's parameters."""
    params = {"seed": _uniform(rng, (0.0, 100.0)), **{k: _uniform(rng, bounds) for k, bounds in spec.ranges}}
    for k, values in spec.choices:
        params[k] = float(values[int(rng.integers(len(values)))])
    return GroundLook(material=name, srgb=spec.colors[int(rng.integers(len(spec.colors)))],
                      roughness=_uniform(rng, spec.roughness), scale_m=round6(spec.scale_m * unit), centre=centre,
                      params=params)


def _footprint(scene: Scene, centre: np.ndarray, right: np.ndarray, toward: np.ndarray) -> np.ndarray:
    """(min right, max right, min away, max away) of the objects' bounding spheres in the setting's axes
    (`away` = -toward: positive beyond the centre as the camera sees it)."""
    if not scene.objects:
        return np.zeros(4)
    locations = np.array([obj.location for obj in scene.objects], dtype=float) - centre
    radius = np.array([0.5 * float(np.linalg.norm(obj.dimensions)) for obj in scene.objects])
    across, away = locations @ right, -(locations @ toward)
    return np.array([(across - radius).min(), (across + radius).max(), (away - radius).min(), (away + radius).max()])


def _border_rays(scene: Scene, count: int = 24) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Rays through the frame's top row and its left and right edges (origins, directions), and the top row's."""
    cam = scene.camera
    geo = geometry(cam)
    xs = np.linspace(0.0, cam.width, count)
    ys = np.linspace(0.0, cam.height, count)
    border_x = np.concatenate([xs, np.zeros(count), np.full(count, float(cam.width))])
    border_y = np.concatenate([np.zeros(count), ys, ys])
    origins, directions = geo.rays(border_x, border_y)
    top_origins, top_directions = geo.rays(xs, np.zeros(count))
    return np.asarray(origins), directions, np.asarray(top_origins), top_directions


def _plane_hits(origins, directions, axis: np.ndarray, offset: float) -> np.ndarray:
    """Ray parameters where rays meet the plane {p : p . axis = offset} (inf where parallel or behind)."""
    facing = directions @ axis
    with np.errstate(divide="ignore", invalid="ignore"):
        t = (offset - origins @ axis) / facing
    return np.where((np.abs(facing) > 1e-9) & (t > 0), t, np.inf)


def _tabletop(scene: Scene, look_floor: GroundLook, environment: EnvironmentLook,
              rng: np.random.Generator) -> SettingLook:
    centre, _scale, right, toward = scene_frame(scene)
    unit = round6(TOY_UNIT * texture_scale(scene))
    away = -toward
    lo_r, hi_r, lo_a, hi_a = _footprint(scene, centre, right, toward)
    margin = _uniform(rng, TABLE_MARGIN_M) * unit
    width = max(_uniform(rng, TABLE_WIDTH_M) * unit, hi_r - lo_r + 2 * margin)
    depth = max(_uniform(rng, TABLE_DEPTH_M) * unit, hi_a - lo_a + 2 * margin)
    # The far edge `margin` past the farthest object; across, the spare width is split at random.
    slack = width - (hi_r - lo_r + 2 * margin)
    mid_r = (lo_r + hi_r) / 2 + rng.uniform(-0.5, 0.5) * slack
    mid_a = hi_a + margin - depth / 2
    table_centre = centre + mid_r * right + mid_a * away
    height = _uniform(rng, TABLE_HEIGHT_M) * unit
    thickness = _uniform(rng, TABLE_THICKNESS_M) * unit
    top_name = list(TABLE_TOPS)[int(rng.integers(len(TABLE_TOPS)))]
    here = (round6(table_centre[0]), round6(table_centre[1]))
    top = _surface(rng, top_name, TABLE_TOPS[top_name], unit, here)

    # The far wall: a drawn gap past the table's far edge, but near enough for the top row to see it above the floor.
    origins, directions, top_origins, top_directions = _border_rays(scene)
    vertical = np.array([0.0, 0.0, 1.0])
    table_3d = np.array([table_centre[0], table_centre[1], 0.0])
    floor_t = _plane_hits(top_origins, top_directions, vertical, -height)
    finite_t = np.where(np.isinf(floor_t), 0.0, floor_t)
    floor_away = np.where(np.isinf(floor_t), np.inf,
                          (top_origins + finite_t[:, None] * top_directions - table_3d) @ away)
    reach = float(np.median(floor_away))  # where the top row's middle meets the floor, from the table's centre
    gap = _uniform(rng, WALL_GAP_M) * unit
    wall_distance = depth / 2 + gap
    if np.isfinite(reach):
        wall_distance = min(wall_distance, max(depth / 2 + 0.1 * unit, WALL_SEEN * reach))
    # Its height and span: every border ray that meets the wall's plane above the floor meets the wall.
    wall_t = _plane_hits(origins, directions, away, float(table_3d @ away) + wall_distance)
    hits = origins + np.where(np.isinf(wall_t), 0, wall_t)[:, None] * directions
    seen = np.isfinite(wall_t) & (hits[:, 2] >= -height)
    across = (hits[seen] - table_3d) @ right
    room_height = _uniform(rng, ROOM_HEIGHT_M) * unit
    if seen.any():
        room_height = max(room_height, float(hits[seen, 2].max()) + height + 0.2 * unit)
    half = _uniform(rng, ROOM_WIDTH_M) * unit / 2
    span = [min(-half, float(across.min()) - 0.5 * unit) if seen.any() else -half,
            max(half, float(across.max()) + 0.5 * unit) if seen.any() else half]
    camera = np.asarray(scene.camera.location, dtype=float)
    camera_across = float((camera - table_3d) @ right)
    side_wall, side_end = None, 0.0
    if rng.random() < SIDE_WALL_PROBABILITY:
        sign = 1.0 if rng.random() < 0.5 else -1.0
        clear = max(width / 2, sign * camera_across)  # beyond the table's side and the camera: behind no object
        side_wall = sign * (clear + _uniform(rng, SIDE_GAP_M) * unit)
        span[0 if sign < 0 else 1] = side_wall
        side_end = float((camera - table_3d) @ toward)
        # As high as the border rays that meet it: a ray meets the side wall higher than it would the far wall.
        side_t = _plane_hits(origins, directions, right, float(table_3d @ right) + side_wall)
        side_hits = origins + np.where(np.isinf(side_t), 0, side_t)[:, None] * directions
        along = (side_hits - table_3d) @ away
        on_wall = np.isfinite(side_t) & (side_hits[:, 2] >= -height) & (along >= -side_end) & (along <= wall_distance)
        if on_wall.any():
            room_height = max(room_height, float(side_hits[on_wall, 2].max()) + height + 0.2 * unit)
    window = None
    if rng.random() < WINDOW_PROBABILITY:
        window_width = _uniform(rng, WINDOW_WIDTH_M) * unit
        window_height = _uniform(rng, WINDOW_HEIGHT_M) * unit
        sill = _uniform(rng, WINDOW_SILL_M) * unit
        visible = (float(across.min()), float(across.max())) if seen.any() else (-half, half)
        low, high = max(span[0] + 0.2 * unit, visible[0]), min(span[1] - 0.2 * unit, visible[1])
        low, high = low + window_width / 2, high - window_width / 2
        offset = float(rng.uniform(low, high)) if high > low else (low + high) / 2
        share = _uniform(rng, WINDOW_SHARE)
        # The area light faces the table's centre from the opening: irradiance E = P cos / (pi d^2) there.
        rise = -height + sill + window_height / 2
        distance = float(np.sqrt(offset**2 + wall_distance**2 + rise**2))
        cosine = max(0.2, rise / distance)
        irradiance = share * TARGET_IRRADIANCE * 2**environment.exposure_ev
        power = irradiance * np.pi * distance**2 / cosine
        window = WindowLook(offset=round6(offset), sill=round6(sill), width=round6(window_width),
                            height=round6(window_height), share=share, power_w=round6(power))
    wall_colour = WALL_COLOURS[int(rng.integers(len(WALL_COLOURS)))]
    wall_colour, tone = _wall_tone(wall_colour, environment, toward)
    wall = GroundLook(material="plaster", srgb=wall_colour, roughness=0.9, scale_m=round6(WALL_SCALE_M * unit),
                      centre=here, params={"seed": _uniform(rng, (0.0, 100.0)), "tone": tone})
    floor = look_floor.model_copy(update={"scale_m": round6(look_floor.scale_m * TOY_UNIT), "centre": here,
                                          "fade_start_m": None, "fade_end_m": None})
    room = RoomLook(floor=floor, wall=wall, wall_distance=round6(wall_distance), wall_height=round6(room_height),
                    wall_span=(round6(span[0]), round6(span[1])),
                    side_wall=None if side_wall is None else round6(side_wall), side_wall_end=round6(side_end),
                    skirting=round6(SKIRTING_M * unit), window=window)
    table = TableLook(centre=here, width=round6(width), depth=round6(depth), thickness=round6(thickness),
                      height=round6(height), legs=True, top=top)
    return SettingLook(kind="tabletop", unit=unit, centre=here, toward=(round6(toward[0]), round6(toward[1])),
                       table=table, room=room)


def wall_irradiance(environment: EnvironmentLook, normal: np.ndarray) -> float:
    """The environment's irradiance on a vertical surface facing the horizontal `normal` (world), at its strength."""
    table = WALL_IRRADIANCE.get(environment.name)
    if table is None:
        return environment.strength * ENVIRONMENT_IRRADIANCE.get(environment.name, 1.0)
    azimuth = (np.degrees(np.arctan2(normal[1], normal[0])) + environment.rotation_deg) % 360.0
    step = 360.0 / len(table)
    return environment.strength * float(np.interp(azimuth, np.arange(len(table) + 1) * step, [*table, table[0]]))


def _wall_tone(srgb: tuple[float, float, float], environment: EnvironmentLook,
               normal: np.ndarray) -> tuple[tuple[float, float, float], float]:
    """The wall's paint, darkened (a factor on its linear colour, 1 or less) so that the environment's light on it
    leaves its radiance under WALL_MAX_RADIANCE: (sRGB colour, factor)."""
    linear = srgb_to_linear(srgb)
    radiance = float(np.dot(linear, (0.2126, 0.7152, 0.0722))) * wall_irradiance(environment, normal) / np.pi
    tone = round6(min(1.0, WALL_MAX_RADIANCE / radiance)) if radiance > 0 else 1.0
    darker = linear_to_srgb(np.asarray(linear) * tone)
    return (round6(darker[0]), round6(darker[1]), round6(darker[2])), tone


def _top_row_reach(scene: Scene, origin: np.ndarray, away: np.ndarray, floor: float) -> float:
    """Where the top row's middle ray meets the plane z = `floor`, as a distance from `origin` along `away`
    (inf when it looks above the horizon)."""
    _origins, _directions, top_origins, top_directions = _border_rays(scene)
    t = _plane_hits(top_origins, top_directions, np.array([0.0, 0.0, 1.0]), floor)
    finite = np.where(np.isinf(t), 0.0, t)
    reach = np.where(np.isinf(t), np.inf, (top_origins + finite[:, None] * top_directions - origin) @ away)
    return float(np.median(reach))


def sky_irradiance(elevation_deg: float) -> float:
    """The sky's upward irradiance at strength 1, interpolated in SKY_IRRADIANCE."""
    keys = sorted(SKY_IRRADIANCE)
    return float(np.interp(elevation_deg, keys, [SKY_IRRADIANCE[k] for k in keys]))


def _outdoor(scene: Scene, environment: EnvironmentLook, sun: SunLook | None,
             rng: np.random.Generator) -> SettingLook:
    centre, _scale, right, toward = scene_frame(scene)
    unit = round6(OUTDOOR_UNIT * texture_scale(scene))
    here = (round6(centre[0]), round6(centre[1]))
    target = TARGET_IRRADIANCE * 2**environment.exposure_ev
    if sun is not None:  # the sky's sun where photoreal's sun lamp is; the sky gives the rest of the light
        azimuth, elevation = sun.azimuth_deg, sun.elevation_deg
        sun_share = sun.strength * float(np.sin(np.radians(elevation))) / target
    else:
        azimuth, elevation, sun_share = _uniform(rng, (0.0, 360.0)), _uniform(rng, SUN_ELEVATION_DEG), 0.0
    balance = tuple(round6(g**SKY_BALANCE) for g in SKY_WHITE_BALANCE)
    sky = SkyLook(sun_azimuth_deg=azimuth, sun_elevation_deg=elevation,
                  strength=round6(max(0.0, 1.0 - sun_share) * target / sky_irradiance(elevation)),
                  white_balance=balance, air_density=1.0, aerosol_density=1.0, ozone_density=1.0)
    name = _choice(rng, OUTDOOR_PROBABILITY)
    ground = _surface(rng, name, OUTDOOR_GROUNDS[name], unit, here)
    surround, patch = None, None
    if name != "grass":  # a patio or a gravel path in a lawn
        surround = _surface(rng, "grass", OUTDOOR_GROUNDS["grass"], unit, here)
        lo_r, hi_r, lo_a, hi_a = _footprint(scene, centre, right, toward)
        margin = _uniform(rng, PATCH_MARGIN_M) * unit
        patch = (round6(2 * max(abs(lo_r), abs(hi_r)) + 2 * margin), round6(2 * max(abs(lo_a), abs(hi_a)) + 2 * margin))
    hedge = None
    if rng.random() < HEDGE_PROBABILITY:
        _lo_r, _hi_r, _lo_a, hi_a = _footprint(scene, centre, right, toward)
        near = max(hi_a, patch[1] / 2 if patch is not None else hi_a) + _uniform(rng, HEDGE_GAP_M) * unit
        reach = _top_row_reach(scene, np.array([centre[0], centre[1], 0.0]), -toward, 0.0)
        distance = min(near, max(hi_a + 0.2 * unit, HEDGE_SEEN * reach)) if np.isfinite(reach) else near
        camera = np.asarray(scene.camera.location, dtype=float)
        half = 3.0 * (float(np.linalg.norm(camera - centre)) + distance)
        hedge = HedgeLook(distance=round6(distance), height=round6(_uniform(rng, HEDGE_HEIGHT_M) * unit),
                          thickness=round6(_uniform(rng, HEDGE_THICKNESS_M) * unit), span=(round6(-half), round6(half)),
                          surface=_surface(rng, "hedge", HEDGE, unit, here))
    return SettingLook(kind="outdoor", unit=unit, centre=here, toward=(round6(toward[0]), round6(toward[1])),
                       sky=sky, ground=ground, surround=surround, patch=patch, hedge=hedge)


def _dome(scene: Scene, environment: EnvironmentLook, rng: np.random.Generator) -> SettingLook:
    centre, _scale, _right, toward = scene_frame(scene)
    unit = round6(DOME_UNIT * texture_scale(scene))
    camera_height = max(float(scene.camera.location[2]), 0.5 * unit)
    target = TARGET_IRRADIANCE * 2**environment.exposure_ev
    # A diffuse ground of albedo a under the (white-balanced, hence neutral) upward irradiance E reflects a E / pi;
    # the background there shows strength x map: a = pi x strength x map / E makes them the same picture.
    gain = np.pi * environment.strength / target
    return SettingLook(kind="dome", unit=unit, centre=(round6(centre[0]), round6(centre[1])),
                       toward=(round6(toward[0]), round6(toward[1])),
                       dome_height=round6(_uniform(rng, DOME_HEIGHT) * camera_height), dome_gain=round6(gain))


def draw_setting(scene: Scene, environment: EnvironmentLook, sun: SunLook | None, floor: GroundLook,
                 entropy: list[int], attempt: int = 0) -> SettingLook:
    """Photoreal's setting for `scene`, from the setting's own stream; `environment`, `sun` and `floor` are what
    photoreal drew (the exposure the setting's lights match, the sky's sun, the room's floor). A pure function."""
    rng = setting_rng(entropy, attempt)
    kind = _choice(rng, SETTING_KINDS)
    if kind == "tabletop":
        return _tabletop(scene, floor, environment, rng)
    if kind == "outdoor":
        return _outdoor(scene, environment, sun, rng)
    return _dome(scene, environment, rng)


# -- the stage's geometry (render/backends/blender_settings.py builds it; tests ray cast it) -------------------

LEG_M = 0.05  # a table leg's side (metres of the setting)
LEG_INSET_M = 0.04
FRAME_M = 0.06  # a window frame's face width
FRAME_DEPTH_M = 0.12
SKIRTING_DEPTH_M = 0.015
GROUND_EXTENT = 30.0  # the outdoor and dome grounds reach this many times the camera's distance (within clip)
# A box's faces as vertex-index quads, outward, vertices numbered by bits (x, y, z).
_BOX_FACES = ((0, 2, 3, 1), (4, 5, 7, 6), (0, 1, 5, 4), (2, 6, 7, 3), (0, 4, 6, 2), (1, 3, 7, 5))

Span = tuple[float, float]


@dataclass(frozen=True)
class StagePart:
    """One object of a setting's stage: quads in the setting's frame (x along the camera's right, y away from the
    camera, z up, from `SettingLook.centre`), the surface it wears and whether it casts shadows."""

    name: str
    vertices: np.ndarray  # (n, 3)
    quads: np.ndarray  # (m, 4) vertex indices, counter-clockwise seen from outside
    surface: str  # "table_top", "table_legs", "floor", "wall", "trim", "ground", "hedge"
    shadows: bool = True


def _box_part(name: str, boxes: list[tuple[Span, Span, Span]], surface: str, shadows: bool = True) -> StagePart:
    vertices: list[tuple[float, float, float]] = []
    quads: list[tuple[int, ...]] = []
    for xs, ys, zs in boxes:
        base = len(vertices)
        vertices += [(xs[i & 1], ys[(i >> 1) & 1], zs[(i >> 2) & 1]) for i in range(8)]
        quads += [tuple(base + v for v in face) for face in _BOX_FACES]
    return StagePart(name, np.asarray(vertices, float), np.asarray(quads, np.int64), surface, shadows)


def _quads_part(name: str, corners: list[list[tuple[float, float, float]]], surface: str,
                shadows: bool = True) -> StagePart:
    vertices = [v for quad in corners for v in quad]
    quads = np.arange(len(vertices), dtype=np.int64).reshape(-1, 4)
    return StagePart(name, np.asarray(vertices, float), quads, surface, shadows)


def setting_axes(setting: SettingLook) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(origin, right, away) of the setting's frame in world coordinates."""
    toward = np.array([setting.toward[0], setting.toward[1], 0.0])
    return np.array([setting.centre[0], setting.centre[1], 0.0]), np.array([-toward[1], toward[0], 0.0]), -toward


def to_world(setting: SettingLook, points: np.ndarray) -> np.ndarray:
    """Points of the setting's frame in world coordinates."""
    origin, right, away = setting_axes(setting)
    points = np.asarray(points, float)
    return origin + points[:, :1] * right + points[:, 1:2] * away + points[:, 2:3] * np.array([0.0, 0.0, 1.0])


def window_opening(setting: SettingLook) -> tuple[Span, Span] | None:
    """The window's opening in the far wall: (x span, z span) in the setting's frame; None without a window."""
    room = setting.room
    if room is None or room.window is None or setting.table is None:
        return None
    window, floor = room.window, -setting.table.height
    return ((window.offset - window.width / 2, window.offset + window.width / 2),
            (floor + window.sill, floor + window.sill + window.height))


def stage_parts(setting: SettingLook, camera_location) -> list[StagePart]:
    """The stage's objects: a tabletop's table, legs, floor, walls and trims, or the outdoor and dome's ground."""
    origin, _right, away = setting_axes(setting)
    camera = np.asarray(camera_location, dtype=float)
    behind = float((camera - origin) @ -away)  # the camera's distance in front of the centre
    if setting.kind != "tabletop":
        extent = GROUND_EXTENT * max(1.0, float(np.linalg.norm(camera - origin)))
        ground = [_quads_part("ground", [[(-extent, -extent, 0.0), (extent, -extent, 0.0), (extent, extent, 0.0),
                                          (-extent, extent, 0.0)]], "ground")]
        if setting.hedge is None:
            return ground
        hedge = setting.hedge
        return [*ground, _box_part("hedge", [(hedge.span, (hedge.distance, hedge.distance + hedge.thickness),
                                              (0.0, hedge.height))], "hedge", shadows=False)]
    table, room = setting.table, setting.room
    assert table is not None and room is not None
    unit = setting.unit
    w, d, t, h = table.width / 2, table.depth / 2, table.thickness, table.height
    parts = [_box_part("ground", [((-w, w), (-d, d), (-t, 0.0))], "table_top")]
    if table.legs:
        leg, inset = LEG_M * unit, LEG_INSET_M * unit
        leg_x = [(-(w - inset), -(w - inset) + leg), (w - inset - leg, w - inset)]
        leg_y = [(-(d - inset), -(d - inset) + leg), (d - inset - leg, d - inset)]
        parts.append(_box_part("table_legs", [(x, y, (-h, -t)) for x in leg_x for y in leg_y], "table_legs"))
    span0, span1 = room.wall_span
    far, z0 = room.wall_distance, -h
    z1 = z0 + room.wall_height
    reach = behind + far  # the floor runs from the wall to this far past the camera
    if room.side_wall is None:
        floor_x = (span0 - reach, span1 + reach)
    else:
        floor_x = (min(span0, room.side_wall) - 0.1 * unit, max(span1, room.side_wall) + 0.1 * unit)
    parts.append(_quads_part("room_floor", [[(floor_x[0], -reach, z0), (floor_x[1], -reach, z0),
                                             (floor_x[1], far + 0.1 * unit, z0), (floor_x[0], far + 0.1 * unit, z0)]],
                             "floor"))
    rects: list[tuple[Span, Span]] = [((span0, span1), (z0, z1))]
    opening = window_opening(setting)
    if opening is not None:
        wx, wz = opening
        rects = [((span0, span1), (z0, wz[0])), ((span0, span1), (wz[1], z1)),
                 ((span0, wx[0]), (wz[0], wz[1])), ((wx[1], span1), (wz[0], wz[1]))]
    # Facing the camera (-y): corners counter-clockwise seen from it.
    parts.append(_quads_part("room_wall", [[(x0, far, za), (x1, far, za), (x1, far, zb), (x0, far, zb)]
                                           for (x0, x1), (za, zb) in rects], "wall", shadows=False))
    if room.side_wall is not None:
        s = room.side_wall
        corners = [(s, -room.side_wall_end, z0), (s, -room.side_wall_end, z1), (s, far, z1), (s, far, z0)]
        parts.append(_quads_part("room_side_wall", [corners if s > 0 else corners[::-1]], "wall", shadows=False))
    trims: list[tuple[Span, Span, Span]] = []
    if room.skirting > 0:
        trims.append(((span0, span1), (far - SKIRTING_DEPTH_M * unit, far), (z0, z0 + room.skirting)))
    if opening is not None:
        (wx0, wx1), (wz0, wz1) = opening
        f, depth = FRAME_M * unit, FRAME_DEPTH_M * unit
        across = (far - depth / 2, far + depth / 2)
        trims += [((wx0 - f, wx1 + f), across, (wz0 - f, wz0)), ((wx0 - f, wx1 + f), across, (wz1, wz1 + f)),
                  ((wx0 - f, wx0), across, (wz0, wz1)), ((wx1, wx1 + f), across, (wz0, wz1)),
                  ((wx0 - f, wx1 + f), (across[0] - depth / 2, across[0]), (wz0 - f, wz0))]  # the sill
    if trims:
        parts.append(_box_part("room_trim", trims, "trim", shadows=False))
    return parts


def window_light_location(setting: SettingLook) -> np.ndarray | None:
    """Where the window's area light sits (world coordinates): in the opening, just inside the room."""
    opening = window_opening(setting)
    if opening is None or setting.room is None:
        return None
    (wx0, wx1), (wz0, wz1) = opening
    local = np.array([[(wx0 + wx1) / 2, setting.room.wall_distance - 0.01 * (wz1 - wz0), (wz0 + wz1) / 2]])
    return to_world(setting, local)[0]
