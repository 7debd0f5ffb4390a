"""stim3d: photorealistic 3D stimuli with exact ground truth for visual-perception benchmarks.

The public API is the handful of calls below; the `stim3d` command is a thin layer
over the same functions (docs/api.md).

>>> import stim3d
>>> sorted(stim3d.families())[:2]
['form_constancy', 'letters']
>>> item = stim3d.compose("shape_count", {"n_shape_types": 2, "min_visibility": 0.8}, seed=7, width=64, height=48)
>>> item.questions[0].answer_type
'integer'

Everything else lives in the sub-packages, named for their concern:
`stim3d.scenes` (scene model, families, visibility; never imports bpy),
`stim3d.render` (turning items into files: backends, batch driver, views, exports, sweeps),
`stim3d.scoring` (the hand-off record contract and the reference scoring core), and the
layer users meet above them: `stim3d.cli` (the command) and `stim3d.eval` (models in the loop).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from stim3d.version import __version__

if TYPE_CHECKING:
    from stim3d.api import Batch, compose, families, load_batch, render_batch, render_items
    from stim3d.errors import Stim3dError
    from stim3d.eval import evaluate
    from stim3d.export.common import ExportError
    from stim3d.render.backends.availability import RendererMissing
    from stim3d.render.batch.config import ConfigError
    from stim3d.scenes.families import FamilyError
    from stim3d.scenes.placement import InfeasibleError
    from stim3d.scoring.records import RecordVersionError

# The error types a caller catches, re-exported so `except stim3d.ConfigError` works (each is loaded on use);
# `stim3d.Stim3dError` is the base of every user-facing one (stim3d/errors.py).
ERRORS = {
    "ConfigError": "stim3d.render.batch.config",
    "ExportError": "stim3d.export.common",
    "FamilyError": "stim3d.scenes.families",
    "InfeasibleError": "stim3d.scenes.placement",
    "RecordVersionError": "stim3d.scoring.records",
    "RendererMissing": "stim3d.render.backends.availability",
    "Stim3dError": "stim3d.errors",
}
API = ["Batch", "compose", "families", "load_batch", "render_batch", "render_items"]
__all__ = ["Batch", "ConfigError", "ExportError", "FamilyError", "InfeasibleError", "RecordVersionError",
           "RendererMissing", "Stim3dError", "__version__", "compose", "evaluate", "families", "load_batch", "render_batch", "render_items"]


def __getattr__(name: str) -> Any:
    # The API is loaded on first use, so `import stim3d.scoring` (which needs none of it) stays light.
    import importlib

    if name in API:
        return getattr(importlib.import_module("stim3d.api"), name)
    if name == "evaluate":  # models in the loop live in stim3d/eval/ (docs/eval.md)
        return importlib.import_module("stim3d.eval").evaluate
    if name in ERRORS:
        return getattr(importlib.import_module(ERRORS[name]), name)
    raise AttributeError(f"module 'stim3d' has no attribute {name!r}")


def __dir__() -> list[str]:
    """The lazy names too, so `dir(stim3d)` and editors' completion show the API."""
    return sorted({*__all__, *(name for name in globals() if name.startswith("__"))})
