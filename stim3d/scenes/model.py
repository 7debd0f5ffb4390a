"""The scene and item model: what a stimulus is, independent of any renderer.

Everything a user or another tool reads about an item lives here as pydantic v2
models. `Item.model_dump_json()` is the exact content of `item.json`; the key
names listed in docs/architecture.md ("Contracts") are a contract and must not change without a
`SCHEMA_VERSION` bump. Floats are rounded when a family builds the scene (see
`round6`) so that JSON round-trips exactly and byte-for-byte determinism does not
depend on the last bits of a trigonometric function.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union

from pydantic import Field, model_validator

from stim3d.errors import MissingObject
from stim3d.scenes.names import ItemId, SplitName
from stim3d.scoring.answers import AnswerType, Gold

from .look_model import (
    DrawnLook,
    EnvironmentLook,
    GroundLook,
    HedgeLook,
    LensLook,
    Look,
    ObjectLook,
    PartLook,
    PipelineLook,
    RoomLook,
    SettingLook,
    SkyLook,
    StudioLook,
    SunLook,
    TableLook,
    WindowLook,
)
from .model_base import (
    ADDED,
    IDENTITY_QUAT,
    LADDER,
    LOOK_NAMES,
    SHAPES,
    AddedIn,
    Box,
    Finish,
    Light,
    LookName,
    PrimitiveShape,
    Quat,
    Shape,
    Strict,
    Vec3,
    leave_out_added_defaults,
    round6,
)

# The model in one import: the ground floor's types and rules and the look models are re-exported.
__all__ = ["ADDED", "IDENTITY_QUAT", "LADDER", "LOOK_NAMES", "SCHEMA_VERSION", "SHAPES", "AddedIn", "Box", "Box3D",
           "Camera", "CameraMatrices", "Color", "DrawnLook", "EnvironmentLook", "Finish", "GroundLook", "GroundTruth",
           "HedgeLook", "Item", "LensLook", "Light", "Look", "LookName", "ObjectLook", "ObjectPart", "ObjectSource", "PartLook",
           "ObjectTruth", "PipelineLook", "PrimitiveShape", "Provenance", "Quat", "Question", "RoomLook", "Scene",
           "SceneObject", "SettingLook", "Shape", "SkyLook", "Stage", "Strict", "StudioLook", "SunLook", "TableLook",
           "Vec3", "WindowLook", "leave_out_added_defaults", "round6"]

SCHEMA_VERSION = "1.0"

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


class Stage(Strict):
    """Procedural surroundings: a ground plane at z = 0 and a uniform world light."""

    ground_srgb: tuple[float, float, float] = (0.62, 0.62, 0.6)
    ground_size: float = Field(40.0, gt=0)
    world_srgb: tuple[float, float, float] = (1.0, 1.0, 1.0)
    world_strength: float = Field(0.3, ge=0)


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
    part_px: Annotated[dict[str, float] | None, ADDED] = Field(
        None, description="visible pixels of each named part of a composed object (rays whose first hit is that "
        "part), where a family requires its defining parts seen (ava_object's target); absent otherwise")


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
