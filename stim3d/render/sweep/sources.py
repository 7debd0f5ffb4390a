"""The items a sweep starts from: one item folder, or every item a config plans, and the settings to render with."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from stim3d.render.batch.config import load_config
from stim3d.render.batch.folder import ITEM_JSON
from stim3d.render.batch.item_files import item_problem
from stim3d.render.batch.item_folder import load_item
from stim3d.render.batch.plan import expand
from stim3d.render.settings import RenderSettings
from stim3d.scenes.families.base import Frame
from stim3d.scenes.items import make_item
from stim3d.scenes.model import Item
from stim3d.scenes.placement import InfeasibleError
from stim3d.scenes.sweep import SweepError


@dataclass
class Sources:
    """The items to sweep (or why one could not be made) and the settings to render them with."""

    settings: RenderSettings
    items: list[Item] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)
    from_config: bool = False


def load_sources(source: Path, engine: str | None = None, samples: int | None = None) -> Sources:
    """An item folder (or its item.json) gives one item; a config gives every item it plans."""
    source = Path(source)
    overrides = {k: v for k, v in {"engine": engine, "samples": samples}.items() if v is not None}

    def with_overrides(settings: RenderSettings) -> RenderSettings:
        try:
            return RenderSettings.model_validate({**settings.model_dump(), **overrides})
        except ValidationError as exc:
            error = exc.errors()[0]
            raise SweepError(error["msg"], field=str(error["loc"][0]), value=repr(error["input"])) from None

    folder = source.parent if source.name == ITEM_JSON else source
    if not source.exists():
        raise SweepError(f"{source}: no such item folder or config file")
    if folder.is_dir():
        if not (folder / ITEM_JSON).is_file():
            raise SweepError(f"{folder}: not an item folder (no item.json) and not a config file")
        try:
            item = load_item(folder)
        except ValueError as exc:
            raise SweepError(f"{folder / ITEM_JSON}: not a stim3d item: {item_problem(exc)}") from None
        settings = with_overrides(_settings_of(item))
        return Sources(settings=settings, items=[item])
    config = load_config(source)
    settings = with_overrides(config.render)
    sources = Sources(settings=settings, from_config=True)
    frame = Frame(config.render.width, config.render.height, config.render.rays_per_pixel)
    for plan in expand(config):
        entropy = [config.seed, plan.task_index, plan.item_index]
        try:
            sources.items.append(make_item(plan.family, plan.params, entropy, plan.item_id, frame, plan.split))
        except InfeasibleError as exc:
            sources.failed[plan.item_id] = str(exc)
    return sources


def _settings_of(item: Item) -> RenderSettings:
    """Render settings that reproduce how an item folder was made (size from its camera)."""
    camera = item.scene.camera
    base: dict[str, object] = {"width": camera.width, "height": camera.height,
                               "rays_per_pixel": item.ground_truth.rays_per_pixel}
    if item.provenance is not None:
        p = item.provenance
        used = {"engine": p.engine, "samples": p.samples, "device": p.device, "denoise": p.denoise}
        base.update({k: v for k, v in used.items() if v is not None})  # Workbench/raster record no samples
    return RenderSettings.model_validate(base)
