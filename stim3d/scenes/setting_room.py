"""Photoreal's tabletop setting: a table in a room, the room's far side in the frame.

A finite table whose top is the plane z = 0 the objects already stand on, covering their
footprint with a drawn margin, its far edge as near the objects as that margin allows so it
shows in the frame wherever the camera sees past the objects; a top of varnished wooden
boards, a laminate or a stone (TABLE_TOPS); the room's floor at z = -table height
(photoreal's own drawn floor material, at room scale), a far wall (painted plaster, a
skirting board) drawn where the camera's top rows reach it, maybe a side wall, and maybe a
window in the far wall that shows the environment outside and adds an area light. The room
is sized in metres times `unit` scene units per metre: a counting family's 0.9-unit objects
become toys about 9 cm across (TOY_UNIT), so the table is 12-20 units wide and 7.2-7.8
units high. scenes/settings.py draws the kind; scenes/setting_stage.py turns the record into
geometry.
"""

from __future__ import annotations

import numpy as np

from .colors import linear_to_srgb, srgb_to_linear
from .look_basis import ENVIRONMENT_IRRADIANCE, TARGET_IRRADIANCE, scene_frame, texture_scale
from .materials import GroundMaterial
from .model import EnvironmentLook, GroundLook, RoomLook, Scene, SettingLook, TableLook, WindowLook, round6
from .setting_draw import border_rays, footprint, plane_hits, surface, uniform

TOY_UNIT = 10.0  # scene units per metre of a room at texture_scale 1: a 0.9-unit object is a 9 cm toy
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
    "pmndrs_apartment": (2.7989, 2.1806, 1.6343, 1.2635, 1.0902, 1.0786, 1.1011, 1.1417, 1.1881, 1.2408, 1.3056,
        1.4051, 1.5807, 1.8414, 2.1971, 2.69, 3.2832, 3.8886, 4.3367, 4.5823, 4.5993, 4.3901, 3.9784, 3.4191),
    "pmndrs_bridge": (0.9904, 0.8414, 0.663, 0.4979, 0.6278, 0.7618, 0.8813, 0.974, 1.0316, 1.0416, 1.0037, 0.9235,
        0.8096, 0.6685, 0.51, 0.375, 0.5435, 0.7218, 0.8884, 1.0276, 1.1281, 1.1745, 1.1638, 1.1),
    "pmndrs_city": (1.3758, 1.5235, 1.6474, 1.7831, 1.9235, 2.0168, 2.0504, 2.0512, 1.9889, 1.8998, 1.8181, 1.7517,
        1.6791, 1.5703, 1.4346, 1.3251, 1.2516, 1.1768, 1.0994, 1.0542, 1.0136, 1.0129, 1.0799, 1.2125),
    "pmndrs_dawn": (4.6523, 3.8115, 2.9361, 2.2127, 1.7355, 1.4752, 1.3638, 1.3204, 1.308, 1.3092, 1.3192, 1.341,
        1.3802, 1.4637, 1.6726, 2.1197, 2.8193, 3.6619, 4.5044, 5.2009, 5.664, 5.8437, 5.7233, 5.3145),
    "pmndrs_esplanade": (1.0724, 1.1135, 1.2302, 1.3535, 1.4496, 1.5749, 1.6589, 1.6894, 1.6683, 1.6107, 1.5333,
        1.4464, 1.3683, 1.2668, 1.2304, 1.2006, 1.154, 1.1568, 1.1467, 1.118, 1.0768, 1.0393, 1.0209, 1.028),
    "pmndrs_forest": (2.033, 1.9283, 1.7637, 1.5692, 1.3814, 1.1781, 1.0001, 0.876, 0.7919, 0.7381, 0.701, 0.6969,
        0.7014, 0.7242, 0.7691, 0.8518, 0.99, 1.1396, 1.317, 1.5267, 1.7322, 1.9037, 2.0126, 2.0651),
    "pmndrs_hall": (2.7713, 2.5658, 2.3431, 2.2142, 2.2297, 2.3035, 2.3642, 2.441, 2.4711, 2.4992, 2.4184, 2.3419,
        2.1948, 2.0638, 1.9499, 1.9566, 2.1251, 2.3592, 2.5763, 2.7951, 2.943, 3.0568, 3.0237, 2.9536),
    "pmndrs_lab": (3.8249, 3.7657, 3.4856, 3.0525, 2.496, 1.8728, 1.4148, 1.0156, 0.6861, 0.601, 0.5766, 0.5839,
        0.579, 0.5635, 0.5453, 0.5745, 0.6492, 0.783, 1.1563, 1.606, 2.0852, 2.7134, 3.2584, 3.6523),
    "pmndrs_lobby": (3.0975, 3.24, 3.2978, 3.266, 3.2215, 3.2161, 3.1364, 2.9862, 2.8187, 2.6823, 2.6111, 2.5751,
        2.5381, 2.4956, 2.4192, 2.3131, 2.2591, 2.3099, 2.3481, 2.3695, 2.4157, 2.5204, 2.7014, 2.9114),
    "pmndrs_night": (0.2612, 0.3043, 0.3424, 0.3712, 0.3916, 0.4071, 0.4196, 0.4272, 0.4276, 0.4191, 0.4035, 0.384,
        0.3594, 0.3304, 0.2946, 0.2528, 0.2106, 0.1759, 0.1538, 0.145, 0.1483, 0.1616, 0.1855, 0.2203),
    "pmndrs_park": (1.4701, 1.2536, 1.0056, 0.7575, 0.5965, 0.5597, 0.5561, 0.5704, 0.5924, 0.6137, 0.6292, 0.637,
        0.6399, 0.6443, 0.6588, 0.6966, 0.8259, 1.0636, 1.3002, 1.5039, 1.6519, 1.7268, 1.7202, 1.6315),
    "pmndrs_sky": (4.0121, 3.3412, 2.5156, 1.5976, 0.9011, 0.8135, 0.7527, 0.7066, 0.6678, 0.6382, 0.6185, 0.6072,
        0.613, 0.6455, 0.707, 0.7993, 1.1675, 2.1266, 3.0229, 3.7791, 4.3333, 4.6469, 4.6972, 4.4779),
    "pmndrs_studio": (3.0585, 3.1796, 5.923, 9.2221, 12.1151, 14.1949, 15.3165, 15.4026, 14.4476, 12.5175, 9.7468,
        6.3345, 2.5203, 0.2052, 0.7151, 2.1355, 3.6328, 4.895, 5.8327, 6.3813, 6.5035, 6.192, 5.471, 4.3998),
    "pmndrs_sunrise": (1.8475, 1.5242, 1.1588, 0.8069, 0.5785, 0.5105, 0.487, 0.4867, 0.4932, 0.501, 0.5055, 0.5048,
        0.5038, 0.5127, 0.5484, 0.6393, 0.865, 1.2316, 1.5935, 1.9033, 2.1233, 2.2336, 2.2224, 2.089),
    "pmndrs_sunset": (2.2632, 1.9318, 1.5802, 1.2587, 1.0217, 0.8925, 0.8383, 0.8392, 0.8757, 0.9211, 0.9634,
        0.9991, 1.033, 1.0758, 1.1569, 1.2968, 1.5186, 1.8143, 2.1223, 2.3979, 2.6028, 2.6989, 2.6709, 2.5197),
    "pmndrs_venice": (2.9004, 2.8915, 2.7948, 2.6139, 2.3675, 2.0874, 1.813, 1.5831, 1.4436, 1.408, 1.4369, 1.507,
        1.6004, 1.6959, 1.785, 1.8588, 1.9184, 1.975, 2.045, 2.1437, 2.2946, 2.4913, 2.6788, 2.8227),
    "pmndrs_warehouse": (3.3844, 2.9601, 2.6145, 2.3067, 2.0434, 1.8922, 1.7755, 1.7637, 1.8553, 1.9499, 1.974,
        1.9342, 1.9042, 1.8597, 1.9688, 2.1598, 2.4052, 2.7381, 3.0478, 3.3758, 3.6973, 3.8962, 3.892, 3.6932),
    "pmndrs_workshop": (4.5078, 3.7452, 2.8746, 2.0949, 1.7016, 1.6261, 1.6662, 1.7517, 1.8112, 1.8176, 1.8244,
        1.8008, 1.7111, 1.5784, 1.4854, 1.5781, 2.0923, 2.8978, 3.7321, 4.471, 4.9987, 5.256, 5.2794, 5.0369),
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



def draw_tabletop(scene: Scene, look_floor: GroundLook, environment: EnvironmentLook,
              rng: np.random.Generator) -> SettingLook:
    centre, _scale, right, toward = scene_frame(scene)
    unit = round6(TOY_UNIT * texture_scale(scene))
    away = -toward
    lo_r, hi_r, lo_a, hi_a = footprint(scene, centre, right, toward)
    margin = uniform(rng, TABLE_MARGIN_M) * unit
    width = max(uniform(rng, TABLE_WIDTH_M) * unit, hi_r - lo_r + 2 * margin)
    depth = max(uniform(rng, TABLE_DEPTH_M) * unit, hi_a - lo_a + 2 * margin)
    # The far edge `margin` past the farthest object; across, the spare width is split at random.
    slack = width - (hi_r - lo_r + 2 * margin)
    mid_r = (lo_r + hi_r) / 2 + rng.uniform(-0.5, 0.5) * slack
    mid_a = hi_a + margin - depth / 2
    table_centre = centre + mid_r * right + mid_a * away
    height = uniform(rng, TABLE_HEIGHT_M) * unit
    thickness = uniform(rng, TABLE_THICKNESS_M) * unit
    top_name = list(TABLE_TOPS)[int(rng.integers(len(TABLE_TOPS)))]
    here = (round6(table_centre[0]), round6(table_centre[1]))
    top = surface(rng, top_name, TABLE_TOPS[top_name], unit, here)

    # The far wall: a drawn gap past the table's far edge, but near enough for the top row to see it above the floor.
    origins, directions, top_origins, top_directions = border_rays(scene)
    vertical = np.array([0.0, 0.0, 1.0])
    table_3d = np.array([table_centre[0], table_centre[1], 0.0])
    floor_t = plane_hits(top_origins, top_directions, vertical, -height)
    finite_t = np.where(np.isinf(floor_t), 0.0, floor_t)
    floor_away = np.where(np.isinf(floor_t), np.inf,
                          (top_origins + finite_t[:, None] * top_directions - table_3d) @ away)
    reach = float(np.median(floor_away))  # where the top row's middle meets the floor, from the table's centre
    gap = uniform(rng, WALL_GAP_M) * unit
    wall_distance = depth / 2 + gap
    if np.isfinite(reach):
        wall_distance = min(wall_distance, max(depth / 2 + 0.1 * unit, WALL_SEEN * reach))
    # Its height and span: every border ray that meets the wall's plane above the floor meets the wall.
    wall_t = plane_hits(origins, directions, away, float(table_3d @ away) + wall_distance)
    hits = origins + np.where(np.isinf(wall_t), 0, wall_t)[:, None] * directions
    seen = np.isfinite(wall_t) & (hits[:, 2] >= -height)
    across = (hits[seen] - table_3d) @ right
    room_height = uniform(rng, ROOM_HEIGHT_M) * unit
    if seen.any():
        room_height = max(room_height, float(hits[seen, 2].max()) + height + 0.2 * unit)
    half = uniform(rng, ROOM_WIDTH_M) * unit / 2
    span = [min(-half, float(across.min()) - 0.5 * unit) if seen.any() else -half,
            max(half, float(across.max()) + 0.5 * unit) if seen.any() else half]
    camera = np.asarray(scene.camera.location, dtype=float)
    camera_across = float((camera - table_3d) @ right)
    side_wall, side_end = None, 0.0
    if rng.random() < SIDE_WALL_PROBABILITY:
        sign = 1.0 if rng.random() < 0.5 else -1.0
        clear = max(width / 2, sign * camera_across)  # beyond the table's side and the camera: behind no object
        side_wall = sign * (clear + uniform(rng, SIDE_GAP_M) * unit)
        span[0 if sign < 0 else 1] = side_wall
        side_end = float((camera - table_3d) @ toward)
        # As high as the border rays that meet it: a ray meets the side wall higher than it would the far wall.
        side_t = plane_hits(origins, directions, right, float(table_3d @ right) + side_wall)
        side_hits = origins + np.where(np.isinf(side_t), 0, side_t)[:, None] * directions
        along = (side_hits - table_3d) @ away
        on_wall = np.isfinite(side_t) & (side_hits[:, 2] >= -height) & (along >= -side_end) & (along <= wall_distance)
        if on_wall.any():
            room_height = max(room_height, float(side_hits[on_wall, 2].max()) + height + 0.2 * unit)
    window = None
    if rng.random() < WINDOW_PROBABILITY:
        window_width = uniform(rng, WINDOW_WIDTH_M) * unit
        window_height = uniform(rng, WINDOW_HEIGHT_M) * unit
        sill = uniform(rng, WINDOW_SILL_M) * unit
        visible = (float(across.min()), float(across.max())) if seen.any() else (-half, half)
        low, high = max(span[0] + 0.2 * unit, visible[0]), min(span[1] - 0.2 * unit, visible[1])
        low, high = low + window_width / 2, high - window_width / 2
        offset = float(rng.uniform(low, high)) if high > low else (low + high) / 2
        share = uniform(rng, WINDOW_SHARE)
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
                      centre=here, params={"seed": uniform(rng, (0.0, 100.0)), "tone": tone})
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
