"""stim3d's Blender extension: generate, open, inspect, edit, re-validate, render and save items.

Everything Blender-specific is imported inside `register()`, so the add-on's
plain modules (params, validation, visibility_colors, jobs) import and test
without Blender. The scene is built by the batch driver's own code
(render.backends.blender_scene.build) and rendered by it (render.batch.composed and render.batch.produce,
in a child process): one code path. See docs/addon.md.
"""

from __future__ import annotations


def register() -> None:
    import bpy

    from . import operators, panels, properties

    properties.register()
    for cls in (*operators.CLASSES, *panels.CLASSES):
        bpy.utils.register_class(cls)


def unregister() -> None:
    import bpy

    from . import operators, panels, properties

    for cls in reversed((*operators.CLASSES, *panels.CLASSES)):
        bpy.utils.unregister_class(cls)
    properties.unregister()
