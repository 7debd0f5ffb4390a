"""One item end to end: compose -> visibility -> render -> measured colours -> item folder.

Rendering never changes the ground truth. When the renderer has its own
object-index pass, that pass is what `mask.png` holds, and its agreement with the
ray-cast instance map is recorded in provenance; a disagreement beyond
antialiasing is a bug to look at, never something to hide.
"""

from __future__ import annotations

import shutil
import time
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from stim3d.render.backends.output import RenderOutput
from stim3d.render.batch.item_folder import write_item_folder
from stim3d.render.batch.plan import ItemPlan
from stim3d.render.camera_pipeline import develop
from stim3d.render.markers import RAW_IMAGE, annotate
from stim3d.render.object_masks import object_masks
from stim3d.render.provenance import family_revisions, library_versions
from stim3d.render.settings import RenderSettings
from stim3d.scenes.families import FAMILIES
from stim3d.scenes.families.base import Frame
from stim3d.scenes.interchange import with_interchange
from stim3d.scenes.items import make_item
from stim3d.scenes.look_contrast import object_contrasts
from stim3d.scenes.look_redraws import check, recorded, redraw_for
from stim3d.scenes.model import DrawnLook, Item, Provenance, round6
from stim3d.scenes.visibility import measure
from stim3d.version import __version__


def render_with(settings: RenderSettings, item: Item, workdir: Path) -> RenderOutput:
    """Dispatch to the backend named by settings.engine (imported lazily: bpy is heavy); under a look with a camera
    pipeline, the linear render developed by it (render/camera_pipeline.py) is the image."""
    if settings.engine == "raster":
        from stim3d.render.backends import raster

        return raster.render_scene(item.scene, settings, item.seed, workdir)
    from stim3d.render.backends import blender

    output = blender.render_scene(item.scene, settings, item.seed, workdir)
    look = item.scene.look
    if output.linear is not None and isinstance(look, DrawnLook) and look.pipeline is not None:
        output = replace(output, image=develop(output.linear, look.pipeline))
    return output


def measured_colors(image: np.ndarray, mask: np.ndarray, object_ids: list[int]) -> dict[int, tuple[float, float, float] | None]:
    """Median sRGB (0-1) of each object's visible pixels in the final image."""
    colors: dict[int, tuple[float, float, float] | None] = {}
    for object_id in object_ids:
        pixels = image[mask == object_id]
        if len(pixels):
            r, g, b = (round6(float(c)) for c in np.median(pixels, axis=0) / 255.0)
            colors[object_id] = (r, g, b)
        else:
            colors[object_id] = None
    return colors


def finish_item(item: Item, output: RenderOutput, settings: RenderSettings, key: str | None,
                raycast_map: np.ndarray | None = None) -> tuple[Item, np.ndarray]:
    """Attach provenance, measured colours and contrasts; choose the mask (renderer's pass when it has one).

    `raycast_map` is the item's ray-cast instance map when the caller already has it (`compose_item`);
    otherwise it is measured here.
    """
    if raycast_map is None:
        raycast_map = measure(item.scene, item.ground_truth.rays_per_pixel).instance_map
    if output.instance_map is not None:
        mask = output.instance_map
        agreement = round6(float(np.mean(mask == raycast_map)))
        source = "renderer"
    else:
        mask, agreement, source = raycast_map, None, "raycast"
    colors = measured_colors(output.image, mask, [o.id for o in item.scene.objects])
    contrasts = object_contrasts(output.image, mask, {t.id: t.visible_px for t in item.ground_truth.objects},
                                 _figures(item))
    truths = [t.model_copy(update={"measured_srgb": colors[t.id], "contrast_de": contrasts[t.id]})
              for t in item.ground_truth.objects]
    sampled = settings.engine == "cycles"  # Workbench and raster take no samples and have no denoiser
    provenance = Provenance(
        stim3d_version=__version__,
        generator_revision=family_revisions({item.family})[item.family],
        blender_version=output.blender_version,
        library_versions=library_versions(),
        engine=settings.engine,
        samples=settings.samples if sampled else None,
        device=settings.device,
        denoise=settings.denoise if sampled else None,
        denoise_quality=settings.denoise_quality if sampled and settings.denoise else None,
        light_tree=settings.light_tree if sampled else None,
        adaptive_sampling=settings.adaptive_sampling if sampled else None,
        mask_source=source,
        mask_agreement=agreement,
        item_key=key,
    )
    finished = item.model_copy(
        update={"ground_truth": item.ground_truth.model_copy(update={"objects": truths}), "provenance": provenance}
    )
    return with_interchange(finished), mask  # camera matrices and 3D boxes (scenes/interchange.py)


def render_item(item: Item, settings: RenderSettings, out: Path, workdir: Path, key: str | None,
                timing: dict[str, float] | None = None, edited_by_hand: bool = False,
                raycast_map: np.ndarray | None = None) -> Path:
    """Render an already composed item into `OUT/items/<item_id>/`; returns the folder.

    The one way an item becomes files, used by the batch driver, occlusion sweeps and
    the add-on's Render and Save: the backend named by `settings.engine`, measured
    colours and provenance from `finish_item`, then the atomic item-folder write.
    `workdir` is scratch space for the backend's pass files and is removed afterwards.
    """
    try:
        started = time.perf_counter()
        output = render_with(settings, item, workdir)
        finished, mask = finish_item(item, output, settings, key, raycast_map)
        if settings.engine == "cycles":  # colour golds and contrast must hold in the rendered image
            item, output, finished, mask = _until_it_holds(item, output, finished, mask, settings, workdir, key,
                                                           raycast_map)
        elapsed = time.perf_counter() - started
        finished, marked = annotate(finished, output.image)
        extra = {}
        if marked is not None:  # markers are drawn after measuring; the unmarked render is kept (render/markers.py)
            extra, output = {RAW_IMAGE: output.image}, replace(output, image=marked)
        if edited_by_hand and finished.provenance is not None:
            finished = finished.model_copy(
                update={"provenance": finished.provenance.model_copy(update={"edited_by_hand": True})})
        stages = {**(timing or {}), "scene_build_and_passes": elapsed - output.render_seconds,
                  "render_call": output.render_seconds}
        masks = object_masks(finished, mask) if settings.object_masks else None
        return write_item_folder(out, finished, output, mask, stages, extra, masks)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def _figures(item: Item) -> dict[int, str]:
    """Object id -> the figure it is a part of, for the family's objects that are parts (`Family.figure_of`)."""
    family = FAMILIES.get(item.family)
    if family is None or family.figure_of is None:
        return {}
    named = {obj.id: family.figure_of(obj) for obj in item.scene.objects}
    return {object_id: figure for object_id, figure in named.items() if figure is not None}


def _until_it_holds(item: Item, output: RenderOutput, finished: Item, mask: np.ndarray, settings: RenderSettings,
                    workdir: Path, key: str | None, raycast_map: np.ndarray | None):
    """Render again while an object fails a colour or contrast check (scenes/look_redraws.py: the checks, and the
    look's own step that says what to render next and whether the new render is kept); the kept render's look
    records how many renders came after the first and the objects still failing."""
    redraw = redraw_for(item.scene.look)
    checked, redraws = check(finished), 0
    while checked.fails and (candidate := redraw.next(item, finished, checked)) is not None:
        redraws += 1
        candidate_output = render_with(settings, candidate, workdir)
        candidate_finished, candidate_mask = finish_item(candidate, candidate_output, settings, key, raycast_map)
        candidate_checked = check(candidate_finished)
        if redraw.keeps(checked, candidate_checked):
            item, output, finished, mask = candidate, candidate_output, candidate_finished, candidate_mask
            checked = candidate_checked
    return item, output, recorded(finished, checked, redraws), mask


@dataclass(frozen=True)
class Composed:
    """A planned item composed and measured, ready to render: everything before the backend runs."""

    item: Item
    raycast_map: np.ndarray  # the final scene's ray-cast instance map (the mask check in finish_item)
    seconds: float


def plan_item(plan: ItemPlan, batch_seed: int, settings: RenderSettings) -> Item:
    """The planned item composed at `settings`' size: its seed, look and the folders it may read mesh files from.

    The one place a plan becomes an item: `render` (compose_item) and `validate` (stim3d/cli/batch.py, at a trial size)
    both call it, so validate accepts and refuses exactly what render does. Raises InfeasibleError for impossible
    constraints."""
    frame = Frame(settings.width, settings.height, settings.rays_per_pixel, plan.mesh_roots)
    entropy = [batch_seed, plan.task_index, plan.item_index]
    return make_item(plan.family, plan.params, entropy, plan.item_id, frame, plan.split, plan.scene_id,
                     plan.questions, look=plan.look or settings.look)


def compose_item(plan: ItemPlan, batch_seed: int, settings: RenderSettings) -> Composed:
    """Compose one planned item and ray-cast its final scene. Pure Python and Embree, never bpy: a worker
    runs it on a thread for its next item while Cycles renders the current one (jobs.Worker).
    Raises InfeasibleError for impossible constraints."""
    started = time.perf_counter()
    item = plan_item(plan, batch_seed, settings)
    raycast_map = measure(item.scene, item.ground_truth.rays_per_pixel).instance_map
    return Composed(item, raycast_map, time.perf_counter() - started)


def produce_item(plan: ItemPlan, batch_seed: int, settings: RenderSettings, out: Path, workdir: Path, key: str,
                 composed: Composed | None = None) -> Path:
    """Compose (unless `composed` is given), render and write one planned item; returns its folder.

    Raises InfeasibleError for impossible constraints."""
    composed = composed or compose_item(plan, batch_seed, settings)
    return render_item(composed.item, plan.settings(settings), out, workdir, key,
                       {"compose_and_visibility": composed.seconds},
                       raycast_map=composed.raycast_map)
