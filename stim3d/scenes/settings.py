"""Photoreal's settings: where a scene is, a visible background and a support surface that belongs to it.

`draw_setting` draws a `SettingLook` (scenes/model.py) for a photoreal look; the Blender
backend builds it (render/backends/blender_settings.py) instead of photoreal's endless
ground. Three kinds, the tabletop most often (SETTING_KINDS):

- `tabletop` (scenes/setting_room.py): a table in a room; the table's top is the plane the
  objects stand on, the room's far wall, maybe a side wall and a window, in the frame;
- `outdoor` (scenes/setting_outdoor.py): Blender's physical sky over a paving, gravel or lawn
  and a hedge beyond;
- `dome`: Kubric's approach, under Blender's own HDRIs only (`kinds_for`). The world is
  photoreal's HDRI as before; the ground's colour is the same map looked up by the direction from a dome centre `dome_height` above the scene's
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
checks it with rays against the stage (scenes/setting_stage.py).

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

import numpy as np

from .look_basis import PMNDRS_PREFIX, TARGET_IRRADIANCE, scene_frame, texture_scale
from .model import EnvironmentLook, GroundLook, Scene, SettingLook, SunLook, round6
from .setting_draw import choice, uniform
from .setting_outdoor import draw_outdoor
from .setting_room import draw_tabletop

SETTING_TAG = 0x100D  # marks the setting's own SeedSequence stream (item entropy + [SETTING_TAG, attempt])
SETTING_KINDS: dict[str, float] = {"tabletop": 0.5, "outdoor": 0.25, "dome": 0.25}  # the kind's probability
DOME_UNIT = 1.0  # the dome's scale: objects at their own size (only `unit` in the record)
# The dome's centre above the scene's centre, a share of the camera's height: from about where the camera stands the
# projection shows the map's ground as the camera would see it (paving, a path, a fence at the edge of the frame);
# at a person's height (1.3-2 m) over 0.9 m objects the ground under a camera 5 m up was the map's horizon band
# stretched into streaks.
DOME_HEIGHT = (0.8, 1.1)
DOME_MAX_ALBEDO = 0.95  # the projected ground's base colour is clipped here (render/backends/blender_settings.py)


def setting_rng(entropy: list[int], attempt: int = 0) -> np.random.Generator:
    """The setting's own generator: separate from the item's geometry stream and from the look's."""
    return np.random.default_rng(np.random.SeedSequence([*entropy, SETTING_TAG, attempt]))


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
                       dome_height=round6(uniform(rng, DOME_HEIGHT) * camera_height), dome_gain=round6(gain))


def kinds_for(environment: EnvironmentLook) -> dict[str, float]:
    """The kinds a setting may be under `environment`, with their weights. A pmndrs map (512x256) is never a dome:
    there it would be the frame's background and ground, blurred three times more than Blender's 1024x512 maps;
    a room shows it only through a window, out of focus, and outdoors Blender's physical sky replaces it."""
    if environment.name.startswith(PMNDRS_PREFIX):
        return {kind: weight for kind, weight in SETTING_KINDS.items() if kind != "dome"}
    return SETTING_KINDS


def draw_setting(scene: Scene, environment: EnvironmentLook, sun: SunLook | None, floor: GroundLook,
                 entropy: list[int], attempt: int = 0) -> SettingLook:
    """Photoreal's setting for `scene`, from the setting's own stream; `environment`, `sun` and `floor` are what
    photoreal drew (the exposure the setting's lights match, the sky's sun, the room's floor). A pure function."""
    rng = setting_rng(entropy, attempt)
    kind = choice(rng, kinds_for(environment))
    if kind == "tabletop":
        return draw_tabletop(scene, floor, environment, rng)
    if kind == "outdoor":
        return draw_outdoor(scene, environment, sun, rng)
    return _dome(scene, environment, rng)
