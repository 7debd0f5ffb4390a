"""The add-on's operators: thin wrappers that read the panel, call the plain functions, report.

Every user mistake (bad parameters, a bad item.json, an edit the model cannot
describe, a failed render) ends as one `self.report({'ERROR'}, ...)` line and
CANCELLED; nothing raises into Blender's UI as a traceback.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import bpy
from bpy.props import StringProperty
from pydantic import ValidationError

from stim3d.blender_addon.readback import ReadbackError, read_scene
from stim3d.render.batch.folder import DEPTH, IMAGE, ITEM_JSON
from stim3d.scenes.families import FAMILIES
from stim3d.scenes.model import StudioLook
from stim3d.scenes.placement import InfeasibleError

from . import display, jobs, session
from .params import ParamsError, field_specs, params_from_values
from .properties import group_values, params_attribute, set_group_values
from .validation import Validation, revalidate

IMAGE_NAME = "stim3d_render"


def _settings(context: Any) -> Any:
    return context.scene.stim3d


def _batch_folder(item_json: Path) -> Path | None:
    """OUT for OUT/items/<item_id>/item.json, else None."""
    return item_json.parent.parent.parent if item_json.parent.parent.name == "items" else None


class STIM3D_OT_generate(bpy.types.Operator):
    """Compose an item of the chosen family with these parameters and seed, and build its scene"""

    bl_idname = "stim3d.generate"
    bl_label = "Generate"
    bl_options = {"REGISTER", "UNDO"}

    def execute(self, context: Any) -> set[str]:
        settings = _settings(context)
        family = FAMILIES[settings.family]
        specs = field_specs(family.params_model)
        try:
            values = group_values(getattr(settings, params_attribute(settings.family)), specs)
            params = params_from_values(family.params_model, values, settings.family)
            item = session.generate_item(settings.family, params, settings.seed, settings.width, settings.height)
        except (ParamsError, InfeasibleError) as exc:
            self.report({"ERROR"}, str(exc))
            return {"CANCELLED"}
        session.show_item(context.scene, item, settings.clear_everything)
        display.store_item(settings, item)
        settings.look = "studio"  # a generated item starts in studio; Apply Look changes it
        golds = "; ".join(f"{q.text} -> {q.gold}" for q in item.questions)
        self.report({"INFO"}, f"generated {item.item_id}: {len(item.scene.objects)} objects; {golds}")
        return {"FINISHED"}


class STIM3D_OT_open_item(bpy.types.Operator):
    """Rebuild the exact scene of an item.json from any batch"""

    bl_idname = "stim3d.open_item"
    bl_label = "Open Item"
    bl_options = {"REGISTER", "UNDO"}

    filepath: StringProperty(name="item.json", subtype="FILE_PATH")
    filter_glob: StringProperty(default="*.json", options={"HIDDEN"})

    def invoke(self, context: Any, event: Any) -> set[str]:
        context.window_manager.fileselect_add(self)
        return {"RUNNING_MODAL"}

    def execute(self, context: Any) -> set[str]:
        settings = _settings(context)
        path = Path(bpy.path.abspath(self.filepath))
        try:
            item = session.read_item_file(path)  # every check before the scene is touched
        except session.ItemFileError as exc:
            self.report({"ERROR"}, str(exc))
            return {"CANCELLED"}
        session.show_item(context.scene, item, settings.clear_everything)
        display.store_item(settings, item, str(path))
        if item.family in FAMILIES:  # the panel shows the item's family and parameters
            settings.family = item.family
            specs = field_specs(FAMILIES[item.family].params_model)
            set_group_values(getattr(settings, params_attribute(item.family)), specs, item.params)
        if item.provenance is not None:
            if item.provenance.engine in ("cycles", "workbench"):
                settings.engine = item.provenance.engine
            if item.provenance.samples is not None:  # None: Workbench/raster, which take no samples
                settings.samples = item.provenance.samples
            if item.provenance.denoise is not None:
                settings.denoise = item.provenance.denoise
            settings.device = item.provenance.device if item.provenance.device in ("cpu", "gpu") else "cpu"
        settings.depth = (path.parent / DEPTH).is_file()
        settings.look = item.scene.look.name
        if (out := _batch_folder(path)) is not None:
            settings.save_dir = str(out)
        self.report({"INFO"}, f"opened {item.item_id} ({item.family}, {len(item.scene.objects)} objects)")
        return {"FINISHED"}


def _revalidate(operator: Any, context: Any) -> Validation | None:
    """Read the Blender objects back, re-validate against the item, update the panel. None (reported) on failure."""
    settings = _settings(context)
    original = display.current_item(settings)
    if original is None:
        operator.report({"ERROR"}, "no stim3d item in this scene: Generate or Open Item first")
        return None
    base = display.latest_item(settings) or original
    context.view_layer.update()  # matrix_world of objects the user just changed
    try:
        readback = read_scene(
            context.scene.objects, base.scene, context.scene.camera, reserved_ids=[o.id for o in original.scene.objects]
        )
    except ReadbackError as exc:
        operator.report({"ERROR"}, f"cannot read the scene back: {exc}")
        return None
    validation = revalidate(original, readback.scene, readback.sources)
    session.sync_objects(validation.item, readback.names)
    settings.edited_json = validation.item.to_json()
    display.fill_rows(settings, validation.item, validation)
    display.add_report_lines(settings, "INFO", readback.notes)
    if readback.ignored:
        display.add_report_lines(settings, "INFO", [f"ignored (not stim3d primitives): {', '.join(readback.ignored)}"])
    if settings.color_by_visibility:
        display.apply_visibility_colors(context.scene, validation.item)
    return validation


class STIM3D_OT_revalidate(bpy.types.Operator):
    """Read the edited objects back, recompute visibility and gold answers, and list violated constraints"""

    bl_idname = "stim3d.revalidate"
    bl_label = "Re-validate"
    bl_options = {"REGISTER", "UNDO"}

    def execute(self, context: Any) -> set[str]:
        validation = _revalidate(self, context)
        if validation is None:
            return {"CANCELLED"}
        changed = [a for a in validation.answers if a.changed]
        summary = f"{len(validation.changes)} change(s); " + (
            "; ".join(f"{a.text} {a.old_gold} -> {a.new_gold}" for a in changed) if changed else "gold answers hold"
        )
        unchecked = [a for a in validation.answers if a.new_gold is None]
        if unchecked:
            summary += f"; {len(unchecked)} answer(s) not re-checked"
        if validation.violations:
            for violation in validation.violations:
                self.report({"WARNING"}, f"{violation.constraint}: {violation.message}")
            self.report({"WARNING"}, f"{summary}; {len(validation.violations)} violated constraint(s)")
        else:
            self.report({"INFO"}, f"{summary}; every constraint holds")
        return {"FINISHED"}


class STIM3D_OT_apply_look(bpy.types.Operator):
    """Redraw the open item (with its edits) in the chosen look and rebuild its scene; Render and Save renders it"""

    bl_idname = "stim3d.apply_look"
    bl_label = "Apply Look"
    bl_options = {"REGISTER", "UNDO"}

    def execute(self, context: Any) -> set[str]:
        settings = _settings(context)
        validation = _revalidate(self, context)  # keeps the edits made since the last Re-validate
        if validation is None:
            return {"CANCELLED"}
        looked = session.in_look(validation.item, settings.look)
        session.show_item(context.scene, looked, settings.clear_everything)
        settings.edited_json = looked.to_json()
        if settings.color_by_visibility:
            display.apply_visibility_colors(context.scene, looked)
        look = looked.scene.look
        drawn = "" if isinstance(look, StudioLook) else (
            f": {', '.join(sorted({m.material for m in look.objects}))}"
            + (f" under {look.environment.name}" if look.environment is not None else "")
            + (f" on {look.ground.material}" if look.ground.material != "plain" else ""))
        self.report({"INFO"}, f"{looked.item_id} in {settings.look}{drawn}; Render and Save renders it")
        return {"FINISHED"}


class STIM3D_OT_render_save(bpy.types.Operator):
    """Render the edited item with its settings and save it as a new item folder (image, mask, item.json, records)"""

    bl_idname = "stim3d.render_save"
    bl_label = "Render and Save"

    _job: Any = None
    _timer: Any = None

    def _start(self, context: Any) -> bool:
        settings = _settings(context)
        if not settings.save_dir:
            self.report({"ERROR"}, "choose a folder in 'Save to' first")
            return False
        validation = _revalidate(self, context)
        if validation is None:
            return False
        out = Path(bpy.path.abspath(settings.save_dir))
        edited = session.in_look(validation.item, validation.item.scene.look.name)  # a duplicate gets its look material
        item = jobs.renamed(edited, jobs.edited_item_id(edited.item_id, out))
        try:
            render = session.render_settings(item, settings.engine, settings.samples, settings.denoise,
                                             settings.device, settings.depth)
        except ValidationError as exc:
            error = exc.errors()[0]
            self.report({"ERROR"}, f"render settings: {'.'.join(map(str, error['loc']))}: {error['msg']}")
            return False
        self._job = jobs.start_render_job(item, render, out, bpy.app.binary_path)
        return True

    def _finish(self, context: Any) -> set[str]:
        try:
            folder, records = self._job.outcome()
            saved = session.read_item_file(folder / ITEM_JSON)
        except (jobs.RenderJobError, session.ItemFileError) as exc:
            self.report({"ERROR"}, str(exc))
            return {"CANCELLED"}
        settings = _settings(context)
        display.store_item(settings, saved, str(folder / ITEM_JSON))
        image = bpy.data.images.get(IMAGE_NAME)
        if image is not None:
            bpy.data.images.remove(image)
        bpy.data.images.load(str(folder / IMAGE)).name = IMAGE_NAME
        self.report({"INFO"}, f"saved {folder} (image in Blender as '{IMAGE_NAME}'; {records} records in records.jsonl)")
        return {"FINISHED"}

    def execute(self, context: Any) -> set[str]:
        if not self._start(context):
            return {"CANCELLED"}
        self._job.process.wait()  # scripts and background mode: block until the child is done
        return self._finish(context)

    def invoke(self, context: Any, event: Any) -> set[str]:
        if not self._start(context):
            return {"CANCELLED"}
        self._timer = context.window_manager.event_timer_add(0.5, window=context.window)
        context.window_manager.modal_handler_add(self)
        self.report({"INFO"}, "rendering in the background...")
        return {"RUNNING_MODAL"}

    def modal(self, context: Any, event: Any) -> set[str]:
        if event.type == "ESC":
            self._job.cancel()
            context.window_manager.event_timer_remove(self._timer)
            self.report({"WARNING"}, "render cancelled")
            return {"CANCELLED"}
        if event.type != "TIMER" or self._job.running():
            return {"PASS_THROUGH"}
        context.window_manager.event_timer_remove(self._timer)
        return self._finish(context)


CLASSES = (STIM3D_OT_generate, STIM3D_OT_open_item, STIM3D_OT_revalidate, STIM3D_OT_apply_look, STIM3D_OT_render_save)
