"""The "Stim3D" tab of the 3D viewport sidebar (N): Generate, Inspect, Re-validate, Render and Save."""

from __future__ import annotations

from typing import Any

import bpy

from stim3d.scenes.families import FAMILIES

from .display import wrap_for_panel
from .params import field_specs
from .properties import params_attribute

LEVEL_ICONS = {"INFO": "INFO", "WARNING": "ERROR", "ERROR": "CANCEL"}


class _Stim3DPanel:
    bl_space_type = "VIEW_3D"
    bl_region_type = "UI"
    bl_category = "Stim3D"


class STIM3D_PT_main(_Stim3DPanel, bpy.types.Panel):
    bl_idname = "STIM3D_PT_main"
    bl_label = "Stim3D"

    def draw(self, context: Any) -> None:
        settings = context.scene.stim3d
        layout = self.layout
        layout.prop(settings, "family")
        family = FAMILIES.get(settings.family)
        if family is not None:
            box = layout.box()
            group = getattr(settings, params_attribute(settings.family))
            for spec in field_specs(family.params_model):
                box.prop(group, spec.name)
        row = layout.row(align=True)
        row.prop(settings, "seed")
        row = layout.row(align=True)
        row.prop(settings, "width")
        row.prop(settings, "height")
        layout.prop(settings, "clear_everything")
        layout.operator("stim3d.generate", icon="MESH_UVSPHERE")
        layout.operator("stim3d.open_item", icon="FILE_FOLDER")
        if settings.item_json:
            layout.label(text=f"Item: {settings.source_path or 'generated'}")


class STIM3D_UL_objects(bpy.types.UIList):
    bl_idname = "STIM3D_UL_objects"

    def draw_item(self, context: Any, layout: Any, data: Any, item: Any, icon: Any, active_data: Any, active_property: str, index: int = 0, flt_flag: int = 0) -> None:
        row = layout.row(align=True)
        row.alert = bool(item.flags)
        row.label(text=f"{item.object_id:>3} {item.color} {item.shape}")
        row.label(text=f"vis {item.visibility:.2f}  occ {item.occlusion:.2f}  trunc {item.truncation:.2f}")
        if item.flags:
            row.label(text=item.flags, icon="ERROR")


class STIM3D_PT_inspect(_Stim3DPanel, bpy.types.Panel):
    bl_idname = "STIM3D_PT_inspect"
    bl_label = "Inspect"
    bl_parent_id = "STIM3D_PT_main"

    def draw(self, context: Any) -> None:
        settings = context.scene.stim3d
        layout = self.layout
        layout.template_list("STIM3D_UL_objects", "", settings, "objects", settings, "object_index", rows=5)
        layout.prop(settings, "color_by_visibility", icon="HIDE_OFF")
        width = context.region.width if context.region else 300
        for question in settings.questions:
            box = layout.box()
            column = box.column(align=True)
            for line in wrap_for_panel(question.text, width, context.preferences.system.ui_scale):
                column.label(text=line)
            box.label(text=f"gold: {question.gold}" + (f"  ({question.check})" if question.check else ""))


class STIM3D_PT_validate(_Stim3DPanel, bpy.types.Panel):
    bl_idname = "STIM3D_PT_validate"
    bl_label = "Re-validate"
    bl_parent_id = "STIM3D_PT_main"

    def draw(self, context: Any) -> None:
        settings = context.scene.stim3d
        layout = self.layout
        layout.operator("stim3d.revalidate", icon="CHECKMARK")
        for line in settings.report:
            layout.label(text=line.text, icon=LEVEL_ICONS.get(line.level, "INFO"))


class STIM3D_PT_save(_Stim3DPanel, bpy.types.Panel):
    bl_idname = "STIM3D_PT_save"
    bl_label = "Render and Save"
    bl_parent_id = "STIM3D_PT_main"

    def draw(self, context: Any) -> None:
        settings = context.scene.stim3d
        layout = self.layout
        row = layout.row(align=True)
        row.prop(settings, "look")
        row.operator("stim3d.apply_look", icon="SHADING_RENDERED")
        layout.prop(settings, "engine")
        row = layout.row(align=True)
        row.prop(settings, "samples")
        row.prop(settings, "denoise")
        row = layout.row(align=True)
        row.prop(settings, "device")
        row.prop(settings, "depth")
        layout.prop(settings, "save_dir")
        layout.operator("stim3d.render_save", icon="RENDER_STILL")


CLASSES = (STIM3D_PT_main, STIM3D_UL_objects, STIM3D_PT_inspect, STIM3D_PT_validate, STIM3D_PT_save)
