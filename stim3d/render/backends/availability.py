"""Whether this Python can render: the light core (stim3d without extras) has no Blender.

Rendering needs Blender's Python module (the `blender` extra, Python 3.11; the command
to add it comes from stim3d/install_hint.py)
for Cycles and Workbench, and pyrender for the raster engine. A command that renders
asks here first, so a core install gets one line saying what to install instead of a
failure per item inside a worker process. `find_spec` looks without importing: bpy
takes seconds to load and pyrender sets up OpenGL on import.
"""

from __future__ import annotations

import importlib.util

from stim3d.errors import Stim3dError
from stim3d.install_hint import install_hint

ENGINE_MODULES = {"cycles": "bpy", "workbench": "bpy", "raster": "pyrender"}


class RendererMissing(Stim3dError, RuntimeError):
    """The module an engine renders with is not installed: one line naming it and the install command."""


def require_engine(engine: str) -> None:
    """Raise RendererMissing unless the module that renders with `engine` can be imported."""
    module = ENGINE_MODULES.get(engine, "bpy")
    if importlib.util.find_spec(module) is None:
        raise RendererMissing(f"rendering with {engine} needs {module}, which is not installed here "
                              f"(stim3d's light core): {install_hint('blender')} (Python 3.11)")
