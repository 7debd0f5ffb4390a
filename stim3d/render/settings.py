"""How an item is rendered: `RenderSettings`, the `render:` section of a config and of provenance.

Rendering's own vocabulary (engines, samples, OIDN's quality, Cycles' light tree,
threads, extra passes) lives here, beside the backends that read it, not in the scene
model: a scene knows what is in the picture (scenes/model.py), not how a renderer
samples it. Only the look is shared: the scene records which look it was drawn in.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, ValidationInfo, field_validator

from stim3d.scenes.model import ADDED, LookName, Strict


class RenderSettings(Strict):
    """How an item is rendered. Part of the config (`render:`) and of provenance."""

    engine: Literal["cycles", "workbench", "raster"] = "cycles"
    width: int = Field(640, ge=8, le=8192)
    height: int = Field(480, ge=8, le=8192)
    samples: int = Field(64, ge=1, le=65536)
    denoise: bool = True
    denoise_quality: Literal["high", "balanced", "fast"] = Field(
        "high", description="OIDN quality; fast also prefilters the albedo/normal passes the fast way "
                            "(cost and quality per family: bench/render_settings.py)")
    light_tree: bool = Field(True, description="Cycles' light tree; off is faster under a few area lights")
    adaptive_sampling: bool = True
    device: Literal["cpu", "gpu"] = "cpu"
    threads: int = Field(0, ge=0, description="Cycles threads; 0 = all cores")
    depth: bool = Field(False, description="also write depth.npy")
    normals: Annotated[bool, ADDED] = Field(False, description="also write normals.npy: camera-space unit normals, OpenCV axes (Cycles only)")
    object_masks: Annotated[bool, ADDED] = Field(
        False, description="also write masks/<id>_visible.png and masks/<id>_amodal.png per object (exact amodal "
        "silhouettes from the ray cast, render/object_masks.py)")
    rays_per_pixel: int = Field(1, ge=1, le=8, description="s: visibility casts s x s rays per pixel")
    look: Annotated[LookName, ADDED] = Field("studio", description="appearance: studio, clevr, photoreal or photoreal_raw (docs/looks.md)")

    @field_validator("normals")
    @classmethod
    def _normals_need_cycles(cls, value: bool, info: ValidationInfo) -> bool:
        if value and info.data.get("engine", "cycles") != "cycles":
            raise ValueError(f"the normals pass needs engine cycles ({info.data.get('engine')} has none)")
        return value
