"""What a look draws for an item, as recorded in item.json's `scene.look` (scenes/looks.py draws it).

Studio records nothing unless a render was redrawn (`StudioLook`); clevr and photoreal record their lights,
world, ground and object materials (`DrawnLook`), photoreal also its setting, its physical lens and its camera
pipeline after the sensor. Appearance only: no field here moves geometry, so masks and golds are the same in
every look. Re-exported by scenes/model.py, the one place callers import the model from.
"""

from __future__ import annotations

from typing import Annotated, Literal, Union

from pydantic import Field, PositiveFloat

from .model_base import ADDED, Light, Strict


class PartLook(Strict):
    """One accent part's material: built as the library material `material`, in its own colour `srgb`."""

    accent: str = Field(description="the accent material's name (natural_wood, steel, black_rubber)")
    material: str
    srgb: tuple[float, float, float]
    roughness: float = Field(ge=0, le=1)
    metallic: float = Field(ge=0, le=1)
    coat: float = Field(0.0, ge=0, le=1)
    params: dict[str, float] = Field(default_factory=dict)


class ObjectLook(Strict):
    """One object's material under a look: a named library material and the parameters drawn for it.

    `srgb` is the base colour actually used (the palette colour, or for clevr the same); the
    material never changes an object's named colour, only how light leaves it.
    """

    id: int = Field(ge=1, le=65535)
    material: str
    roughness: float = Field(ge=0, le=1)
    metallic: float = Field(ge=0, le=1)
    coat: float = Field(0.0, ge=0, le=1)
    params: dict[str, float] = Field(default_factory=dict)
    parts: Annotated[dict[str, PartLook], ADDED] = Field(
        default_factory=dict, description="photoreal's accent parts of a library object, by part name (a chair's "
        "wooden legs: scenes/materials.py ACCENT_MATERIALS), each in its own material and colour; the other parts "
        "take the object's; absent when none")


class GroundLook(Strict):
    """The stage's ground under a look: a procedural material, its colour and its texture scale in metres.

    The ground fades into the environment between `fade_start_m` and `fade_end_m` from
    `centre` (None: a ground without fade, e.g. clevr's grey plane).
    """

    material: str
    srgb: tuple[float, float, float]
    roughness: float = Field(ge=0, le=1)
    scale_m: float = Field(gt=0)
    centre: tuple[float, float] = (0.0, 0.0)
    fade_start_m: float | None = None
    fade_end_m: float | None = None
    params: dict[str, float] = Field(default_factory=dict)


class EnvironmentLook(Strict):
    """Image-based light: one of the HDRIs shipped with Blender (`name` = file stem), turned about +Z.

    `strength` is the world strength that gives the environment's upward irradiance the
    look's target (scenes/looks.py ENVIRONMENT_IRRADIANCE), times 2**`exposure_ev`.
    `white_balance` is the per-channel (linear RGB) gain the map's colour is multiplied by
    so an upward grey card renders neutral (scenes/looks.py ENVIRONMENT_WHITE_BALANCE); absent
    in items drawn before it existed, which render unbalanced as they did.
    """

    name: str
    rotation_deg: float
    strength: float = Field(ge=0)
    exposure_ev: float
    white_balance: Annotated[tuple[PositiveFloat, PositiveFloat, PositiveFloat] | None, ADDED] = Field(
        None, description="per-channel gain on the map's linear RGB (a grey card facing up renders neutral); "
        "absent: the map as shipped")


class SunLook(Strict):
    """An optional sun (distant) key light for crisp shadows: direction, irradiance in W/m2, angular size."""

    azimuth_deg: float
    elevation_deg: float
    strength: float = Field(ge=0)
    angle_deg: float = Field(ge=0)


class TableLook(Strict):
    """The tabletop setting's table: a slab whose top face is the plane z = 0 the objects stand on.

    `centre` and the setting's `toward` place it: `width` runs along the camera's right, `depth` along `toward`
    (scene units, like every length of a setting). The room's floor is at z = -`height`; `legs` stand under the
    corners. `top` is the top's procedural material (render/backends/blender_grounds.py builds it).
    """

    centre: tuple[float, float]
    width: float = Field(gt=0)
    depth: float = Field(gt=0)
    thickness: float = Field(gt=0)
    height: float = Field(gt=0)
    legs: bool = True
    top: GroundLook


class WindowLook(Strict):
    """An opening in the far wall that shows the environment outside, with an area light of `power_w` in it.

    `offset` is the opening's centre along the wall (along the camera's right, from the table's centre),
    `sill` its bottom edge above the floor; `share` is the part of the look's upward irradiance at the table's
    centre the window's light adds.
    """

    offset: float
    sill: float = Field(ge=0)
    width: float = Field(gt=0)
    height: float = Field(gt=0)
    share: float = Field(ge=0)
    power_w: float = Field(ge=0)


class RoomLook(Strict):
    """The tabletop setting's room: a floor, a far wall (and maybe one side wall), never between the camera and
    an object (scenes/settings.py draws them behind the objects as seen from the camera).

    The far wall is the plane `wall_distance` from the table's centre along -`toward`, spanning `wall_span` along
    the camera's right (from the table's centre) and `wall_height` above the floor; `side_wall` is the signed
    position of a side wall along the right (None: no side wall), running from the far wall to `side_wall_end`
    (along `toward`, from the table's centre).
    """

    floor: GroundLook
    wall: GroundLook
    wall_distance: float = Field(gt=0)
    wall_height: float = Field(gt=0)
    wall_span: tuple[float, float]
    side_wall: float | None = None
    side_wall_end: float = 0.0
    skirting: float = Field(0.0, ge=0, description="height of the skirting board at the walls' foot; 0: none")
    window: WindowLook | None = None


class HedgeLook(Strict):
    """The outdoor setting's hedge: a box `thickness` deep and `height` tall standing on the ground `distance` from
    the setting's centre along -`toward` (beyond every object as the camera sees it), spanning `span` along the
    camera's right; `surface` is its leafy material."""

    distance: float = Field(gt=0)
    height: float = Field(gt=0)
    thickness: float = Field(gt=0)
    span: tuple[float, float]
    surface: GroundLook


class SkyLook(Strict):
    """Blender's physical sky (Sky Texture, MULTIPLE_SCATTERING, no sun disc: the look's sun lamp is the sun) with
    its sun at (`sun_azimuth_deg`, `sun_elevation_deg`), at `strength` (exposure-normalised like an HDRI), times the
    per-channel `white_balance` that makes an upward grey card neutral."""

    sun_azimuth_deg: float
    sun_elevation_deg: float
    strength: float = Field(ge=0)
    white_balance: tuple[PositiveFloat, PositiveFloat, PositiveFloat]
    air_density: float = Field(ge=0)
    aerosol_density: float = Field(ge=0)
    ozone_density: float = Field(ge=0)


class SettingLook(Strict):
    """Where a photoreal scene is (scenes/settings.py draws it, render/backends/blender_settings.py builds it).

    - `tabletop`: `table` stands in `room`; light from the look's environment and sun, plus the room's window.
    - `outdoor`: `sky` lights the scene and fills the background instead of the environment's HDRI; the objects
      stand on `ground` (paving, gravel or grass), with `surround` (a lawn) beyond a patch `patch` across
      (width, depth) around `centre` when there is one, and maybe a `hedge` on the far side.
    - `dome`: the environment's HDRI is the world and the ground's colour is looked up in it by the direction from
      a dome centre `dome_height` above `centre` (Kubric's projection), scaled by `dome_gain`.

    `unit` is how many scene units make a metre of the setting (a table's height, a window's size): objects
    stay as the family made them, so a counting scene's 0.9-unit objects become toys on a table. `toward` is
    the camera's horizontal direction from the scene's centre: the setting's axes.
    """

    kind: Literal["tabletop", "outdoor", "dome"]
    unit: float = Field(gt=0)
    centre: tuple[float, float]
    toward: tuple[float, float]
    table: TableLook | None = None
    room: RoomLook | None = None
    sky: SkyLook | None = None
    ground: GroundLook | None = None
    surround: GroundLook | None = None
    patch: tuple[float, float] | None = None
    hedge: HedgeLook | None = None
    dome_height: float | None = Field(None, gt=0)
    dome_gain: float | None = Field(None, gt=0)


class StudioLook(Strict):
    """Studio: the family's own rig (`Scene.lights`) and grey stage (`Scene.stage`); nothing is drawn.

    The default look, left out of item.json while it holds its defaults, so a studio
    item that rendered right the first time keeps the bytes it had before looks existed.
    When a render failed a check, studio changes only what it owns and records it here,
    as the drawn looks do: a lighter or darker ground grey for the contrast floor
    (`ground_redraws`, scenes/look_contrast.py `with_studio_ground`; the grey itself is
    `Scene.stage.ground_srgb`) and a re-exposure of the rig for colour
    (`exposure_correction_ev`, already applied to `Scene.lights` and the stage's world,
    scenes/looks.py `with_studio_exposure`). `redraws` counts every render after the
    first, kept or not (they are the item's cost).
    """

    name: Literal["studio"] = "studio"
    redraws: int = Field(0, ge=0)
    ground_redraws: int = Field(0, ge=0, description="which of the contrast floor's ground greys the stage took")
    exposure_correction_ev: float = Field(0.0, description="stops the kept render's rig and world were scaled by")
    colour_failures: list[int] = Field(
        default_factory=list, description="objects whose named colour still failed the check after the last redraw")
    contrast_failures: list[int] = Field(
        default_factory=list, description="objects still under the contrast floor after the last redraw")


class PipelineLook(Strict):
    """Photoreal's camera after the sensor (render/camera_pipeline.py), applied to the linear render; no step moves
    a pixel's geometry, so masks, boxes and golds are studio's.

    In the order a camera applies them: lateral chromatic aberration (red and blue scaled about the image centre
    by +-`aberration_px` at the corners, under a pixel), vignetting (the corners darkened by `vignetting`, a share),
    veiling glare (`flare` times the frame's mean added to every pixel, which lifts the blacks as a lens does),
    sensor noise at `iso` (signal-dependent, seeded by `seed`; None: none), the tone curve (linear up to `knee`,
    then a hue-preserving shoulder that reaches `peak`, the display's white level, at `white` times the
    exposure's white: highlights roll off instead of clipping), the sRGB encoding and, when `jpeg_quality` is
    set, a JPEG round trip at that quality with `jpeg_subsampling` chroma (4:4:4 full chroma, as a camera's finest
    JPEG writes it; 4:2:0, an older item's, halves the chroma both ways and its ringing clipped a channel along
    the edges of saturated objects on a bright table).
    """

    aberration_px: float = Field(ge=0, le=1)
    vignetting: float = Field(ge=0, lt=1)
    flare: float = Field(ge=0, le=0.05)
    iso: int | None = Field(None, ge=50, le=12800)
    seed: int = Field(ge=0)
    knee: float = Field(gt=0, lt=1)
    white: float = Field(gt=1)
    peak: float = Field(gt=0, le=1)
    jpeg_quality: int | None = Field(None, ge=50, le=100)
    jpeg_subsampling: Annotated[Literal["4:2:0", "4:4:4"], ADDED] = "4:2:0"


class LensLook(Strict):
    """Photoreal's physical camera (scenes/lens.py): the sensor width and focal length that give the family's
    pinhole field of view, the f-number, the focus distance along the view axis (scene metres), the miniature's
    scale (physical metres per scene metre) and the largest circle of confusion of any object vertex in pixels
    (under one by construction: every object is sharp, the setting behind them is not)."""

    sensor_mm: float = Field(gt=0)
    focal_mm: float = Field(gt=0)
    f_number: float = Field(gt=0)
    focus_m: float = Field(gt=0)
    scale: float = Field(gt=0)
    coc_px: float = Field(ge=0)


class DrawnLook(Strict):
    """Everything clevr or photoreal drew for an item (scenes/looks.py).

    Appearance only: under a look, `lights` replaces the scene's lights, `ground` and
    `environment` replace the stage's colours, and each object gets `objects[id]`'s
    material over its palette colour; photoreal's `setting` (scenes/settings.py) then puts
    the scene somewhere: its stage replaces the endless ground (a tabletop's floor wears
    `ground`), and outdoors its sky replaces `environment`'s map. Geometry, camera and
    ground truth never change.
    `redraws` counts how often the item was rendered again because a named colour was no
    longer the nearest palette colour in the rendered image (scenes/look_colours.py) or an
    object stood out from its surroundings by less than the contrast floor (scenes/look_contrast.py);
    a redraw renders the same draw with its exposure corrected or a fresh draw
    (scenes/look_colours.py `next_draw`). `exposure_correction_ev` is the kept draw's correction,
    already applied to the strengths recorded here.
    """

    name: Literal["clevr", "photoreal", "photoreal_raw"]
    lights: list[Light] = Field(default_factory=list)
    environment: EnvironmentLook | None = None
    sun: SunLook | None = None
    ground: GroundLook
    objects: list[ObjectLook]
    redraws: int = Field(0, ge=0)
    colour_failures: list[int] = Field(
        default_factory=list, description="objects whose named colour still failed the check after the last redraw")
    measured: Annotated[dict[str, float], ADDED] = Field(
        default_factory=dict, description="the family's own colour measures in the rendered image under this look "
        "(Family.look_colour_check; odd_grid: measured_delta_e, neighbour_delta_e, delta_e_margin); absent when none")
    contrast_failures: Annotated[list[int], ADDED] = Field(
        default_factory=list, description="objects still standing out from their surroundings by less than the "
        "contrast floor after the last redraw (scenes/look_contrast.py); absent when none")
    world_strength: Annotated[float | None, ADDED] = Field(
        None, ge=0, description="clevr under an exposure correction: the stage's world strength scaled with the "
        "lights; absent: the stage's own")
    exposure_correction_ev: Annotated[float, ADDED] = Field(
        0.0, description="stops this draw's lights were scaled by because the objects failing the colour check were "
        "measured too bright or too dark (scenes/look_colours.py next_draw); absent when 0")
    setting: Annotated[SettingLook | None, ADDED] = Field(
        None, description="photoreal's setting: a tabletop in a room, outdoors under a physical sky, or an HDRI dome "
        "projected onto the ground (scenes/settings.py); absent for clevr and for photoreal items drawn before it")
    lens: Annotated[LensLook | None, ADDED] = Field(
        None, description="photoreal's physical camera for depth of field; absent: a pinhole (clevr, older items)")
    pipeline: Annotated[PipelineLook | None, ADDED] = Field(
        None, description="photoreal's camera after the sensor (tone curve, glare, noise, vignetting, aberration, "
        "JPEG); absent: the render as Blender's Standard view transform shows it (clevr, photoreal_raw, older items)")

    def of(self, object_id: int) -> ObjectLook:
        for material in self.objects:
            if material.id == object_id:
                return material
        raise KeyError(f"look has no material for object {object_id}")


Look = Annotated[Union[StudioLook, DrawnLook], Field(discriminator="name")]
"""The look an item is rendered in (scenes/looks.py): studio, or a drawn clevr or photoreal look."""
