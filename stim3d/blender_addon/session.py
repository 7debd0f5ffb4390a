"""What the add-on's operators do to Blender data, as plain functions (no UI, no context).

Scenes are built by `render.backends.blender_scene.build`, the function the batch driver
renders with: one code path. The add-on only adds what an interactive session
needs around it: clearing what it built before, tagging what it built (so the
next Generate removes exactly that), reading an item.json with every check done
before the scene is touched, and keeping the Blender objects' ids and names in
step with an edited item.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import bpy
from pydantic import ValidationError

from stim3d.blender_addon.readback import ROLE_KEY
from stim3d.errors import Stim3dError
from stim3d.render.backends import blender_scene
from stim3d.render.settings import RenderSettings
from stim3d.scenes.camera import blender_lens
from stim3d.scenes.families.base import Frame
from stim3d.scenes.items import make_item
from stim3d.scenes.looks import with_look
from stim3d.scenes.model import SCHEMA_VERSION, Item, LookName, StudioLook

BUILT_KEY = "stim3d_built"  # custom property on every object (and the world) the add-on built


class ItemFileError(Stim3dError, ValueError):
    """An item.json that cannot be opened: one line naming the file and what is wrong."""


def _error_location(error: Mapping[str, Any]) -> str:
    return ".".join(str(part) for part in error["loc"]) or "item"


def read_item_file(path: str | Path) -> Item:
    """Read and fully check an item.json; raises ItemFileError, never anything else for a bad file."""
    path = Path(path)
    if not path.exists():
        raise ItemFileError(f"{path}: no such file")
    if not path.is_file():
        raise ItemFileError(f"{path}: not a file (choose the item.json inside an item folder)")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ItemFileError(f"{path}: cannot be read as text ({exc.__class__.__name__})") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ItemFileError(f"{path}: not JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})") from None
    if not isinstance(data, dict) or "scene" not in data or "schema_version" not in data:
        raise ItemFileError(
            f"{path}: not a stim3d item.json (it has no 'schema_version' and 'scene'; "
            "a batch keeps them in OUT/items/<item_id>/item.json)"
        )
    version = str(data["schema_version"])
    if version.split(".")[0] != SCHEMA_VERSION.split(".")[0]:
        raise ItemFileError(f"{path}: item schema version {version}; this add-on reads {SCHEMA_VERSION.split('.')[0]}.x")
    try:
        item = Item.model_validate(data)
    except ValidationError as exc:
        error = exc.errors()[0]
        shown = "" if isinstance(error.get("input"), (dict, list)) else f" = {error.get('input')!r}"
        more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
        raise ItemFileError(f"{path}: not a valid stim3d item: {_error_location(error)}{shown}: {error['msg']}{more}") from None
    check_buildable(item, str(path))
    return item


def check_buildable(item: Item, source: str = "item") -> None:
    """What pydantic cannot see but building needs: unique ids, matching ground truth, square pixels."""
    ids = [o.id for o in item.scene.objects]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise ItemFileError(f"{source}: scene.objects repeats ids {duplicates}")
    truth_ids = sorted(t.id for t in item.ground_truth.objects)
    if truth_ids != sorted(ids):
        raise ItemFileError(f"{source}: ground_truth.objects has ids {truth_ids} but scene.objects has {sorted(ids)}")
    try:
        blender_lens(item.scene.camera)
    except ValueError as exc:
        raise ItemFileError(f"{source}: scene.camera: {exc}") from None


def generate_item(family: str, params: dict[str, Any], seed: int, width: int, height: int) -> Item:
    """The item a batch with seed `seed` makes as item 0 of a one-task config with these params.

    Raises scenes.placement.InfeasibleError when the constraints cannot be met.
    """
    return make_item(family, params, [seed, 0, 0], f"{family}-seed{seed}", Frame(width, height))


def render_settings(item: Item, engine: str, samples: int, denoise: bool, device: str, depth: bool) -> RenderSettings:
    """The settings to render `item` at its own size and ray density, in its look."""
    camera = item.scene.camera
    return RenderSettings(
        engine=engine, width=camera.width, height=camera.height, samples=samples, denoise=denoise,
        device=device, depth=depth, rays_per_pixel=item.ground_truth.rays_per_pixel, look=item.scene.look.name,
    )


def in_look(item: Item, name: LookName) -> Item:
    """`item` in look `name`, drawn from the item's own seed as a batch draws it (scenes/looks.py): the same item
    in the same look always gets the same environment and materials. Also redraws the current look when an
    edit added objects the look has no material for (a duplicate), so every object can be built; a look kept
    as it is (a batch item's, perhaps redrawn for colour) is not drawn again."""
    look = item.scene.look
    if name == look.name and (isinstance(look, StudioLook)
                              or {m.id for m in look.objects} == {o.id for o in item.scene.objects}):
        return item
    return with_look(item, name)


# -- building --------------------------------------------------------------------------------------

def _remove_unused(datablocks: list[Any]) -> None:
    collections = {
        bpy.types.Mesh: bpy.data.meshes, bpy.types.Material: bpy.data.materials,
        bpy.types.Camera: bpy.data.cameras, bpy.types.Light: bpy.data.lights, bpy.types.World: bpy.data.worlds,
    }
    unique = {block.as_pointer(): block for block in datablocks}  # shared data appears once
    for block in unique.values():
        for kind, collection in collections.items():
            if isinstance(block, kind) and block.users == 0:
                collection.remove(block)


def clear_scene(scene_bpy: Any, everything: bool) -> None:
    """Remove what the add-on built in this scene (every object of the scene when `everything`)."""
    doomed = [obj for obj in scene_bpy.objects if everything or obj.get(BUILT_KEY)]
    data = [obj.data for obj in doomed if obj.data is not None]
    materials = [slot.material for obj in doomed for slot in obj.material_slots if slot.material is not None]
    for obj in doomed:
        bpy.data.objects.remove(obj, do_unlink=True)
    old_world = scene_bpy.world if scene_bpy.world is not None and scene_bpy.world.get(BUILT_KEY) else None
    _remove_unused(data)
    _remove_unused(materials)
    if old_world is not None:
        scene_bpy.world = None
        _remove_unused([old_world])


def _role(obj: Any) -> str:
    if obj.type == "CAMERA":
        return "camera"
    if obj.type == "LIGHT":
        return "light"
    return "object" if obj.pass_index > 0 else "ground"


def show_item(scene_bpy: Any, item: Item, clear_everything: bool) -> list[Any]:
    """Replace the scene's stim3d content by `item`'s scene (built by render.backends.blender_scene.build).

    Checks that the item can be built before removing anything. Returns the new objects.
    """
    check_buildable(item, item.item_id)
    clear_scene(scene_bpy, clear_everything)
    before = set(bpy.data.objects)
    blender_scene.build(scene_bpy, item.scene)
    built = [obj for obj in bpy.data.objects if obj not in before]
    for obj in built:
        obj[BUILT_KEY] = 1
        obj[ROLE_KEY] = _role(obj)
    if scene_bpy.world is not None:
        scene_bpy.world[BUILT_KEY] = 1
    return built


def stim3d_objects(scene_bpy: Any) -> dict[int, Any]:
    """The scene's primitives by id (pass index); the first by name when several share one."""
    found: dict[int, Any] = {}
    for obj in sorted(scene_bpy.objects, key=lambda o: o.name):
        if obj.type == "MESH" and obj.pass_index > 0:
            found.setdefault(obj.pass_index, obj)
    return found


def sync_objects(item: Item, names: dict[int, str]) -> None:
    """Give the Blender objects read back as `item`'s objects their ids (pass index) and names.

    After an edit, a duplicate gets its new id and `NNN_shape_colour` name, so the
    viewport, the object list and the mask agree. Renames go through temporary
    names so that two objects can swap names.
    """
    objects = {object_id: bpy.data.objects[name] for object_id, name in names.items() if name in bpy.data.objects}
    for object_id, obj in objects.items():
        obj.name = f"stim3d_tmp_{object_id}"
    for obj_model in item.scene.objects:
        obj = objects.get(obj_model.id)
        if obj is not None:
            obj.pass_index = obj_model.id
            obj.name = blender_scene.object_name(obj_model)
            obj[BUILT_KEY] = 1
            obj[ROLE_KEY] = "object"
