"""The scene and item model: what a stimulus is, independent of any renderer.

Everything a user or another tool reads about an item lives here as pydantic v2
models. `Item.model_dump_json()` is the exact content of `item.json`; the key
names listed in docs/architecture.md ("Contracts") are a contract and must not change without a
`SCHEMA_VERSION` bump. Floats are rounded when a family builds the scene (see
`round6`) so that JSON round-trips exactly and byte-for-byte determinism does not
depend on the last bits of a trigonometric function.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Literal, Union

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PositiveFloat,
    SerializerFunctionWrapHandler,
    model_serializer,
    model_validator,
)

from stim3d.errors import MissingObject
from stim3d.scenes.names import ItemId, SplitName
from stim3d.scoring.answers import AnswerType, Gold

SCHEMA_VERSION = "1.0"

Shape = Literal["sphere", "cube", "cone", "cylinder", "torus", "tile", "composed", "mesh"]
# The primitives families draw objects from; "tile" (a thin square slab) is a marker, e.g. a cue under grid cells.
# "composed" and "mesh" are not primitives: their geometry is the object's `source` (docs/objects.md).
SHAPES: tuple[Shape, ...] = ("sphere", "cube", "cone", "cylinder", "torus")
PrimitiveShape = Literal["sphere", "cube", "cone", "cylinder", "torus", "tile"]
Finish = Literal["matte", "glossy"]
LookName = Literal["studio", "clevr", "photoreal", "photoreal_raw"]
# The appearances an item can be rendered in (scenes/looks.py draws them, docs/looks.md shows them). photoreal_raw is
# photoreal's very draw without the camera pipeline after the sensor: the realism ladder's rung between the two.
LOOK_NAMES: tuple[LookName, ...] = ("studio", "clevr", "photoreal", "photoreal_raw")
# The realism ladder, least to most photographic: one scene in each rung (`stim3d sweep look`, docs/looks.md).
LADDER: tuple[LookName, ...] = ("clevr", "studio", "photoreal_raw", "photoreal")

Vec3 = tuple[float, float, float]
Quat = tuple[float, float, float, float]  # (w, x, y, z), Blender's order
Box = tuple[int, int, int, int]  # x0, y0, x1, y1 in pixels; x1, y1 exclusive

IDENTITY_QUAT: Quat = (1.0, 0.0, 0.0, 0.0)


def round6(value: float) -> float:
    """Round to 6 decimals (micrometres for lengths): stable JSON, no noise bits."""
    return float(round(float(value), 6))


@dataclass(frozen=True)
class AddedIn:
    """Field metadata (`Annotated[T, AddedIn("0.2.0.dev0")]`): the stim3d version that added the field.

    The one rule for fields added after files existed: while such a field holds its
    default it is left out of the JSON (`leave_out_added_defaults`), so an item.json, a
    config's content hash or a resume key made before the field existed keeps its bytes
    (tests/test_golden.py and tests/test_fixture_resume.py hold them). A field given a
    non-default value is written as usual.
    """

    version: str


ADDED = AddedIn("0.2.0.dev0")  # looks, interchange, normals, a look's measures: all joined in the 0.2.0 series


def leave_out_added_defaults(model: BaseModel, data: dict[str, Any]) -> dict[str, Any]:
    """`data` (the model's serialised fields) without the `AddedIn` fields that hold their default."""
    for name, field in type(model).model_fields.items():
        if name in data and any(isinstance(m, AddedIn) for m in field.metadata) \
                and getattr(model, name) == field.get_default(call_default_factory=True):
            del data[name]
    return data


class Strict(BaseModel):
    """Base for all models: unknown keys are an error, so typos in files surface; `AddedIn` fields at their
    default are left out of the JSON."""

    model_config = ConfigDict(extra="forbid", frozen=False)

    @model_serializer(mode="wrap")
    def _leave_out_added_defaults(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        return leave_out_added_defaults(self, handler(self))


class Color(Strict):
    """A named colour. `srgb` is the nominal display value in [0, 1]; Blender gets it linearised."""

    name: str
    srgb: tuple[float, float, float]


class ObjectPart(Strict):
    """One named primitive part of a composed object, in the library entry's own frame (any unit, Z up).

    The part's mesh is the primitive's unit mesh scaled per axis by `scale`, turned by
    `rotation_quat` and moved to `location`; the whole object is then centred and scaled
    so that its longest extent is the object's `size` (scenes/meshes.py).
    """

    name: str = Field(min_length=1, max_length=40)
    shape: PrimitiveShape
    scale: Vec3 = (1.0, 1.0, 1.0)
    location: Vec3 = (0.0, 0.0, 0.0)
    rotation_quat: Quat = IDENTITY_QUAT


class ObjectSource(Strict):
    """Where a non-primitive object's triangles come from (docs/objects.md).

    `composed`: a library entry (`name`, scenes/object_library.py) and its parts, copied into item.json so the
    item alone says what was rendered. `mesh`: a file read with trimesh; `path` is the resolved file, `sha256`
    its content hash (a changed file changes item.json, hence every key made from it), `units` and `up` how the
    file was read, `faces` its triangle count.
    """

    kind: Literal["composed", "mesh"]
    name: str = Field(min_length=1, max_length=80)
    parts: list[ObjectPart] = Field(default_factory=list)
    path: str | None = None
    sha256: str | None = Field(None, pattern=r"^[0-9a-f]{64}$")
    units: Literal["m", "cm", "mm", "in", "ft"] | None = None
    up: Literal["z", "y"] | None = None
    faces: int | None = Field(None, ge=1)


class SceneObject(Strict):
    """One object: a primitive, or a composed or mesh object whose geometry is `source`.

    `size` is the primitive's characteristic extent in metres (see
    `scenes.primitives.unit_dimensions` for what it means per shape);
    `dimensions` are the bounding-box extents before rotation; `location` is the
    bounding-box centre in world coordinates. `attributes` holds family-specific
    labels (a dot's letter, row and column; a group; a rotation axis) that
    questions and tests read back.
    """

    id: int = Field(ge=1, le=65535)
    shape: Shape
    size: float = Field(gt=0)
    dimensions: Vec3
    location: Vec3
    rotation_quat: Quat = IDENTITY_QUAT
    color: Color
    finish: Finish = "matte"
    countable: bool = True
    attributes: dict[str, Union[str, int, float, bool]] = Field(default_factory=dict)
    source: Annotated[ObjectSource | None, ADDED] = Field(
        None, description="geometry of a composed or mesh object (shape 'composed' or 'mesh'); absent for primitives")

    @model_validator(mode="after")
    def _source_matches_shape(self) -> SceneObject:
        wanted = self.shape if self.shape in ("composed", "mesh") else None
        have = self.source.kind if self.source is not None else None
        if wanted != have:
            raise ValueError(f"object {self.id}: shape {self.shape!r} needs "
                             + (f"a source of kind {wanted!r}" if wanted else "no source") + f" (got {have!r})")
        return self


class Camera(Strict):
    """Pinhole camera. Pose in Blender's convention (looks down local -Z, +Y up)."""

    width: int = Field(ge=8, le=8192)
    height: int = Field(ge=8, le=8192)
    fx: float = Field(gt=0)
    fy: float = Field(gt=0)
    cx: float
    cy: float
    location: Vec3
    rotation_quat: Quat


class Light(Strict):
    """A square area light; it emits along its local -Z axis, as in Blender."""

    kind: Literal["area"] = "area"
    location: Vec3
    rotation_quat: Quat
    size: float = Field(gt=0)
    power_w: float = Field(ge=0)
    color_srgb: tuple[float, float, float] = (1.0, 1.0, 1.0)


class Stage(Strict):
    """Procedural surroundings: a ground plane at z = 0 and a uniform world light."""

    ground_srgb: tuple[float, float, float] = (0.62, 0.62, 0.6)
    ground_size: float = Field(40.0, gt=0)
    world_srgb: tuple[float, float, float] = (1.0, 1.0, 1.0)
    world_strength: float = Field(0.3, ge=0)


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
    set, a JPEG round trip at that quality.
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
    material over its palette colour. Geometry, camera and ground truth never change.
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


class Scene(Strict):
    camera: Camera
    lights: list[Light]
    stage: Stage = Field(default_factory=Stage)
    objects: list[SceneObject]
    look: Annotated[Look, ADDED] = Field(default_factory=StudioLook,
                                        description="the look; absent for studio at its defaults (scenes/looks.py)")

    def object(self, object_id: int) -> SceneObject:
        for obj in self.objects:
            if obj.id == object_id:
                return obj
        raise MissingObject("scene", object_id)



class Question(Strict):
    """A question with its gold answer. `subject` names what is asked about (shape, colour, ...)."""

    question_id: str
    text: str
    answer_type: AnswerType
    gold: Gold
    subject: dict[str, Union[str, int, float]] = Field(default_factory=dict)


class ObjectTruth(Strict):
    """Measured ground truth of one object in the rendered view (see scenes/visibility.py)."""

    id: int
    visible_px: float
    amodal_px: float
    visibility: float
    occlusion: float
    truncation: float
    bbox_visible: Box | None
    bbox_amodal: Box | None
    centroid_px: tuple[float, float] | None
    depth_min: float | None
    depth_centroid: float | None
    measured_srgb: tuple[float, float, float] | None = None
    contrast_de: Annotated[float | None, ADDED] = Field(
        None, description="CIEDE2000 between the median colour of the object's visible pixels and of a 2-pixel ring "
        "outside its silhouette in the rendered image (scenes/look_contrast.py); absent before rendering and for "
        "objects too small to judge")


class CameraMatrices(Strict):
    """The camera as matrices other tools read (scenes/interchange.py states the conventions)."""

    K: tuple[Vec3, Vec3, Vec3] = Field(description="intrinsics: pixels from camera coordinates (OpenCV axes)")
    camera_to_world_blender: list[list[float]] = Field(description="4x4; camera looks down -Z, +Y up (Blender)")
    camera_to_world_opencv: list[list[float]] = Field(description="4x4; camera looks down +Z, +Y down (OpenCV)")


class Box3D(Strict):
    """An object's oriented 3D bounding box in world coordinates (metres, Z up)."""

    id: int
    center: Vec3
    size: Vec3 = Field(description="extents along the box's own axes (the object's dimensions)")
    rotation_quat: Quat
    corners: list[Vec3] = Field(description="8 corners: x, y, z signs (-,-,-), (-,-,+), (-,+,-) ... (+,+,+)")


class GroundTruth(Strict):
    objects: list[ObjectTruth]
    rays_per_pixel: int = 1
    # Added when an item is rendered (scenes/interchange.py); absent from composed item.json, whose bytes are pinned.
    camera_matrices: Annotated[CameraMatrices | None, ADDED] = None
    boxes_3d: Annotated[list[Box3D] | None, ADDED] = None

    def of(self, object_id: int) -> ObjectTruth:
        for truth in self.objects:
            if truth.id == object_id:
                return truth
        raise MissingObject("ground truth", object_id)


class Provenance(Strict):
    """Where an item came from and which code made it. Deterministic on purpose: timings go to timing.json.

    The git commit is not here but in batch.json and summary.json (render/provenance.py
    says why): item.json is the same for a checkout and an install of the same release.
    `samples` and `denoise` are what the engine really used: None for Workbench and
    raster, which take no samples and have no denoiser.
    """

    stim3d_version: str
    generator_revision: int | None = Field(
        None, description="the family's generator revision (Family.revision); None for an item made before revisions"
    )
    blender_version: str | None = None
    library_versions: dict[str, str | None] = Field(
        default_factory=dict, description="installed versions of bpy, numpy, trimesh and embreex"
    )
    engine: str
    samples: int | None
    device: str
    denoise: bool | None
    denoise_quality: str | None = Field(None, description="OIDN quality when Cycles denoised; None otherwise")
    light_tree: bool | None = Field(None, description="Cycles' light tree; None for engines without one")
    adaptive_sampling: bool | None = Field(None, description="Cycles' adaptive sampling; None for other engines")
    mask_source: Literal["renderer", "raycast"] = "raycast"
    mask_agreement: float | None = Field(
        None, description="share of pixels where the renderer's object-index pass equals the ray-cast instance map"
    )
    item_key: str | None = Field(None, description="hash of what determines this item's files; a rerun skips an item whose key matches")
    edited_by_hand: bool = False


class Item(Strict):
    """Everything about one stimulus; serialised as item.json."""

    schema_version: str = SCHEMA_VERSION
    item_id: ItemId
    family: str
    params: dict[str, Any]
    seed: int
    seed_entropy: list[int]
    split: SplitName = "test"
    scene: Scene
    ground_truth: GroundTruth
    questions: list[Question]
    difficulty: dict[str, Union[str, int, float, bool, None]] = Field(default_factory=dict)
    provenance: Provenance | None = None

    def to_json(self) -> str:
        """The exact bytes of item.json (indented, stable key order, trailing newline)."""
        return self.model_dump_json(indent=2) + "\n"
