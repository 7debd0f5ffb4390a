"""The geometry of a drawn setting's stage: the table, the room's floor and walls, the window, the grounds.

`stage_parts` turns a `SettingLook` record into quads in the setting's frame; the Blender backend
builds them (render/backends/blender_settings.py), and the tests and bench/settings_background.py
ray cast them (no setting object stands between the camera and an object).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .model import SettingLook

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
    camera, z up, from `SettingLook.centre`) and the surface it wears."""

    name: str
    vertices: np.ndarray  # (n, 3)
    quads: np.ndarray  # (m, 4) vertex indices, counter-clockwise seen from outside
    surface: str  # "table_top", "table_legs", "floor", "wall", "trim", "ground", "hedge"


def _box_part(name: str, boxes: list[tuple[Span, Span, Span]], surface: str) -> StagePart:
    vertices: list[tuple[float, float, float]] = []
    quads: list[tuple[int, ...]] = []
    for xs, ys, zs in boxes:
        base = len(vertices)
        vertices += [(xs[i & 1], ys[(i >> 1) & 1], zs[(i >> 2) & 1]) for i in range(8)]
        quads += [tuple(base + v for v in face) for face in _BOX_FACES]
    return StagePart(name, np.asarray(vertices, float), np.asarray(quads, np.int64), surface)


def _quads_part(name: str, corners: list[list[tuple[float, float, float]]], surface: str) -> StagePart:
    vertices = [v for quad in corners for v in quad]
    quads = np.arange(len(vertices), dtype=np.int64).reshape(-1, 4)
    return StagePart(name, np.asarray(vertices, float), quads, surface)


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
                                              (0.0, hedge.height))], "hedge")]
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
                                           for (x0, x1), (za, zb) in rects], "wall"))
    if room.side_wall is not None:
        s = room.side_wall
        corners = [(s, -room.side_wall_end, z0), (s, -room.side_wall_end, z1), (s, far, z1), (s, far, z0)]
        parts.append(_quads_part("room_side_wall", [corners if s > 0 else corners[::-1]], "wall"))
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
        parts.append(_box_part("room_trim", trims, "trim"))
    return parts


def window_light_location(setting: SettingLook) -> np.ndarray | None:
    """Where the window's area light sits (world coordinates): in the opening, just inside the room."""
    opening = window_opening(setting)
    if opening is None or setting.room is None:
        return None
    (wx0, wx1), (wz0, wz1) = opening
    local = np.array([[(wx0 + wx1) / 2, setting.room.wall_distance - 0.01 * (wz1 - wz0), (wz0 + wz1) / 2]])
    return to_world(setting, local)[0]
