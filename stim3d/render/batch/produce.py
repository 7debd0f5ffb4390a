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
from stim3d.render.markers import RAW_IMAGE, annotate
from stim3d.render.object_masks import object_masks
from stim3d.render.provenance import family_revisions, library_versions
from stim3d.render.settings import RenderSettings
from stim3d.scenes.families import FAMILIES
from stim3d.scenes.families.base import Frame
from stim3d.scenes.interchange import with_interchange
from stim3d.scenes.items import make_item
from stim3d.scenes.look_colours import (
    MAX_REDRAWS,
    MIN_CORRECTION_EV,
    Draw,
    colour_failures,
    exposure_correction,
    measured_colours,
    next_draw,
)
from stim3d.scenes.look_contrast import STUDIO_REDRAW_GROUNDS, contrast_failures, object_contrasts, with_studio_ground
from stim3d.scenes.looks import with_look, with_studio_exposure
from stim3d.scenes.model import Item, Provenance, round6
from stim3d.scenes.visibility import measure
from stim3d.version import __version__


def render_with(settings: RenderSettings, item: Item, workdir: Path) -> RenderOutput:
    """Dispatch to the backend named by settings.engine (imported lazily: bpy is heavy)."""
    if settings.engine == "raster":
        from stim3d.render.backends import raster

        return raster.render_scene(item.scene, settings, item.seed, workdir)
    from stim3d.render.backends import blender

    return blender.render_scene(item.scene, settings, item.seed, workdir)


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
        if item.scene.look is not None and settings.engine == "cycles":  # colour golds and contrast must hold
            item, output, finished, mask = _colours_hold(item, output, finished, mask, settings, workdir, key, raycast_map)
        elif settings.engine == "cycles":  # studio: only its ground and its exposure can change
            if contrast_failures(finished):
                item, output, finished, mask = _ground_stands_out(item, finished, settings, workdir, key, raycast_map)
            item, output, finished, mask = _studio_colours(item, output, finished, mask, settings, workdir, key,
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


def _colours_hold(item: Item, output: RenderOutput, finished: Item, mask: np.ndarray, settings: RenderSettings,
                  workdir: Path, key: str | None, raycast_map: np.ndarray | None):
    """Render again (up to MAX_REDRAWS times; the same draw with its exposure corrected, or a fresh draw:
    scenes/look_colours.py `next_draw`) while a named colour is not the nearest palette colour in the
    image (scenes/look_colours.py), the family's own colour check fails (`Family.look_colour_check`: OddGrid's
    measured dE) or an object stands out from its surroundings by less than the contrast floor
    (scenes/look_contrast.py); the family's measures and the objects still failing each check after the last
    draw are recorded in the look."""
    assert item.scene.look is not None
    name = item.scene.look.name
    measured, failures, low = colour_check(finished)
    attempt, draw = 0, Draw()
    while (failures or low) and attempt < MAX_REDRAWS:
        attempt += 1
        # an object under the contrast floor needs another ground or material, which only a fresh draw gives
        draw = next_draw(draw, None if low else exposure_correction(finished, measured_colours(finished)))
        item = with_look(item, name, draw.index, draw.ev, redraws=attempt)
        output = render_with(settings, item, workdir)
        finished, mask = finish_item(item, output, settings, key, raycast_map)
        measured, failures, low = colour_check(finished)
    if failures or measured or low:
        look = finished.scene.look.model_copy(update={"colour_failures": failures,  # type: ignore[union-attr]
                                                      "contrast_failures": low, "measured": measured})
        finished = finished.model_copy(update={"scene": finished.scene.model_copy(update={"look": look})})
    return item, output, finished, mask


def _ground_stands_out(item: Item, finished: Item, settings: RenderSettings, workdir: Path, key: str | None,
                       raycast_map: np.ndarray | None):
    """Studio under the contrast floor: render again on each of STUDIO_REDRAW_GROUNDS' greys (ranked for the
    scene, scenes/look_contrast.py) until every judged object clears it; the last draw is kept either way."""
    for attempt in range(1, len(STUDIO_REDRAW_GROUNDS) + 1):
        item = with_studio_ground(item, attempt)
        output = render_with(settings, item, workdir)
        finished, mask = finish_item(item, output, settings, key, raycast_map)
        if not contrast_failures(finished):
            break
    return item, output, finished, mask


def _studio_colours(item: Item, output: RenderOutput, finished: Item, mask: np.ndarray, settings: RenderSettings,
                    workdir: Path, key: str | None, raycast_map: np.ndarray | None):
    """Studio's colour redraw. Studio draws no look, but its rig can still push a colour off its name (a standing
    OddGrid board's lower rows lit dimly: oranges read red). When the measured colours predict an exposure under
    which every judged object names its colour (scenes/look_colours.py `exposure_correction`), the item is rendered
    once more with the rig and world scaled by it (scenes/looks.py `with_studio_exposure`); that render is kept if
    it fails fewer objects and puts none more under the contrast floor. The first bracket takes the step that
    clears the named colours by the most, which can overshoot what the prediction does not see (the family's own
    check: a dark odd OddGrid cell that -2 stops blends into its black neighbours); while an object still fails,
    a second bracket takes the smallest step predicted to pass (bench/studio_brackets.py measured both). The
    brackets rendered are counted in `difficulty.exposure_brackets` (kept or not: they are the item's cost), the
    objects still failing in `difficulty.colour_failures`; an item whose colours hold is left exactly as it was."""
    _, failures, low = colour_check(finished)
    if not failures:
        return item, output, finished, mask
    drawn, measured = item, measured_colours(finished)
    brackets = 0
    for step in dict.fromkeys(exposure_correction(finished, measured, least=least) for least in (False, True)):
        if not failures or step is None or abs(step) < MIN_CORRECTION_EV:  # dict.fromkeys: a step is rendered once
            continue
        brackets += 1
        bracketed = with_studio_exposure(drawn, step)
        bracketed_output = render_with(settings, bracketed, workdir)
        bracketed_finished, bracketed_mask = finish_item(bracketed, bracketed_output, settings, key, raycast_map)
        _, still, bracketed_low = colour_check(bracketed_finished)
        if len(still) < len(failures) and len(bracketed_low) <= len(low):
            item, output, finished, mask = bracketed, bracketed_output, bracketed_finished, bracketed_mask
            failures, low = still, bracketed_low
    counts = {"exposure_brackets": brackets} if brackets else {}
    if failures:
        counts["colour_failures"] = len(failures)
    if counts:
        finished = finished.model_copy(update={"difficulty": {**finished.difficulty, **counts}})
    return item, output, finished, mask


def colour_check(finished: Item) -> tuple[dict[str, float], list[int], list[int]]:
    """(the family's colour measures, sorted ids of the objects whose colour fails, sorted ids of the objects under
    the contrast floor) of a rendered item."""
    failures = set(colour_failures(finished, measured_colours(finished)))
    measured: dict[str, float] = {}
    family = FAMILIES.get(finished.family)
    if family is not None and family.look_colour_check is not None:
        measured, failing = family.look_colour_check(finished)
        failures.update(failing)
    return measured, sorted(failures), contrast_failures(finished)


@dataclass(frozen=True)
class Composed:
    """A planned item composed and measured, ready to render: everything before the backend runs."""

    item: Item
    raycast_map: np.ndarray  # the final scene's ray-cast instance map (the mask check in finish_item)
    seconds: float


def compose_item(plan: ItemPlan, batch_seed: int, settings: RenderSettings) -> Composed:
    """Compose one planned item and ray-cast its final scene. Pure Python and Embree, never bpy: a worker
    runs it on a thread for its next item while Cycles renders the current one (jobs.Worker).
    Raises InfeasibleError for impossible constraints."""
    started = time.perf_counter()
    frame = Frame(settings.width, settings.height, settings.rays_per_pixel, plan.mesh_roots)
    entropy = [batch_seed, plan.task_index, plan.item_index]
    look = plan.look or settings.look
    item = make_item(plan.family, plan.params, entropy, plan.item_id, frame, plan.split, plan.scene_id, plan.questions,
                     look=look)
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
