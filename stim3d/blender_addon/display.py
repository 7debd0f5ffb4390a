"""What the panels show: the current item kept in `scene.stim3d`, its rows, and the visibility colours.

Kept apart from the operators so that every operator fills the Inspect panel
the same way, and the colour toggle can be redrawn after a re-validation.
"""

from __future__ import annotations

import textwrap
from typing import Any

from stim3d.scenes.model import Item
from stim3d.scoring.answers import answer_text

from .session import stim3d_objects
from .validation import Validation, min_visibility_of
from .visibility_colors import visibility_rgba

CHAR_WIDTH_PX = 7.0  # a typical character of Blender's UI font at scale 1
PANEL_PADDING_PX = 40.0  # box margins and the sidebar's scroll bar


def wrap_for_panel(text: str, region_width_px: float, ui_scale: float = 1.0) -> list[str]:
    """`text` as lines that fit a sidebar region this wide: a label does not wrap, it is cut off."""
    chars = int(max(region_width_px - PANEL_PADDING_PX, 0.0) / (CHAR_WIDTH_PX * max(ui_scale, 0.1)))
    return textwrap.wrap(text, width=max(chars, 12)) or [""]


def current_item(settings: Any) -> Item | None:
    """The item as generated or opened (None before the first Generate/Open)."""
    return Item.model_validate_json(settings.item_json) if settings.item_json else None


def latest_item(settings: Any) -> Item | None:
    """The last re-validated edit, or the item itself when there is none."""
    if settings.edited_json:
        return Item.model_validate_json(settings.edited_json)
    return current_item(settings)


def store_item(settings: Any, item: Item, source_path: str = "") -> None:
    settings.item_json = item.to_json()
    settings.edited_json = ""
    settings.source_path = source_path
    fill_rows(settings, item, None)


def fill_rows(settings: Any, item: Item, validation: Validation | None) -> None:
    """Object, question and report rows for `item` (and what a re-validation found)."""
    flags: dict[int, list[str]] = {}
    for violation in validation.violations if validation else []:
        for object_id in violation.object_ids:
            flags.setdefault(object_id, []).append(violation.constraint)
    truths = {t.id: t for t in item.ground_truth.objects}
    settings.objects.clear()
    for obj in item.scene.objects:
        row = settings.objects.add()
        truth = truths.get(obj.id)
        row.object_id, row.shape, row.color = obj.id, obj.shape, obj.color.name
        if truth is not None:
            row.visibility, row.occlusion, row.truncation = truth.visibility, truth.occlusion, truth.truncation
        row.flags = ", ".join(sorted(set(flags.get(obj.id, []))))
    checks = {a.question_id: a for a in validation.answers} if validation else {}
    settings.questions.clear()
    for question in item.questions:
        row = settings.questions.add()
        row.text, row.gold = question.text, answer_text(question.answer_type, question.gold)
        check = checks.get(question.question_id)
        if check is not None:
            if check.new_gold is None:
                row.check = "not re-checked"
            elif check.changed:
                row.check = f"was {check.old_gold}"
            else:
                row.check = "holds" + (f", hidden completely: {', '.join(map(str, check.hidden))}" if check.hidden else "")
    settings.report.clear()
    for level, text in validation.lines() if validation else []:
        row = settings.report.add()
        row.level, row.text = level, text


def add_report_lines(settings: Any, level: str, lines: list[str]) -> None:
    for text in lines:
        row = settings.report.add()
        row.level, row.text = level, text


def apply_visibility_colors(scene_bpy: Any, item: Item) -> None:
    """Set each primitive's object colour from `item`'s measured visibility (materials stay as they are)."""
    visibility = {t.id: t.visibility for t in item.ground_truth.objects}
    floor = min_visibility_of(item)
    for obj in scene_bpy.objects:
        if obj.type == "MESH" and obj.pass_index > 0:
            obj.color = visibility_rgba(visibility.get(obj.pass_index), floor)


def _view3d_shadings(context: Any) -> list[Any]:
    screen = getattr(context, "screen", None)
    if screen is None:
        return []
    return [space.shading for area in screen.areas if area.type == "VIEW_3D" for space in area.spaces if space.type == "VIEW_3D"]


def show_visibility_colors(context: Any, on: bool) -> None:
    """Toggle the viewport between visibility colours (Solid, colour by Object) and the true material colours."""
    item = latest_item(context.scene.stim3d)
    if on and item is not None:
        apply_visibility_colors(context.scene, item)
    for shading in _view3d_shadings(context):
        if on:
            shading.type = "SOLID"
            shading.color_type = "OBJECT"
        else:
            shading.color_type = "MATERIAL"


def select_object(context: Any, object_id: int) -> None:
    """Make the primitive with this id the selected, active object (clicking a row in the list)."""
    obj = stim3d_objects(context.scene).get(object_id)
    view_layer = getattr(context, "view_layer", None)
    if obj is None or view_layer is None:
        return
    for other in context.scene.objects:
        other.select_set(False)
    obj.select_set(True)
    view_layer.objects.active = obj
