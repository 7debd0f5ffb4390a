"""How fast is ray-cast visibility, and how does it compare with getting the same numbers from Blender?

Scenes of 5, 10, 20 and 40 objects are laid out once (scenes.placement.Layout,
every object at least 20 % visible, no interpenetration) and viewed through the
counting camera at 320x240 .. 1280x960 (same view, more pixels).

- Ray cast: `scenes.visibility.measure(scene)` (embree; every object cast alone
  over its projected box, then z-composited): median wall and CPU seconds over
  repeats, rays cast per second.
- Blender's route to the same numbers: a 1-sample Cycles render of the scene with
  its object-index pass, plus one render per object alone (its unoccluded
  silhouette), through render/backends/blender.py's `render_scene`; visible fraction =
  pixels of the object in the first / pixels in its own render. Timed end to end
  per scene (reset, build, render, passes read back), once.
Ratio = Blender route / ray cast, both measured in this run. The Blender route's
fractions are compared with the ray cast's as a check that both measured the same thing.

    python -m bench.visibility_speed [--quick] [--no-blender]
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import numpy as np

from stim3d.render.settings import RenderSettings
from stim3d.scenes.camera import geometry
from stim3d.scenes.colors import COLOR_NAMES, named
from stim3d.scenes.families.base import Frame
from stim3d.scenes.families.shared.stage import counting_camera, counting_lights
from stim3d.scenes.model import SHAPES, Scene, SceneObject
from stim3d.scenes.placement import Bounds, Layout, resting_pose, yaw_quat
from stim3d.scenes.primitives import unit_dimensions, world_vertices
from stim3d.scenes.visibility import measure

from .common import Run, add_device, median, parse_args, print_table, progress

OBJECT_COUNTS = (5, 10, 20, 40)
RESOLUTIONS = ((320, 240), (640, 480), (960, 720), (1280, 960))
MIN_VISIBILITY = 0.2
LAYOUT_SEED = 11


def object_size(n_objects: int) -> float:
    """Smaller objects when many must fit on the visible ground."""
    return round(min(0.9, 0.9 * float(np.sqrt(10.0 / n_objects))) * 0.8, 3)


def resting_object(object_id: int, shape: str, color: str, size: float, x: float, y: float, yaw: float) -> SceneObject:
    rotation = yaw_quat(yaw)
    return SceneObject(id=object_id, shape=shape, size=size, dimensions=tuple(d * size for d in unit_dimensions(shape)),
                       location=resting_pose(shape, size, x, y, rotation), rotation_quat=rotation, color=named(color))


def build_scene(n_objects: int, seed: int = LAYOUT_SEED) -> Scene:
    """A layout of `n_objects` random primitives (bounded retries; raises if the ground is too crowded)."""
    rng = np.random.default_rng([seed, n_objects])
    width, height = RESOLUTIONS[0]
    camera = counting_camera(Frame(width, height))
    size = object_size(n_objects)
    for _ in range(20):
        layout = Layout(camera, clearance=0.02)
        for object_id in range(1, n_objects + 1):
            shape, color = str(SHAPES[rng.integers(len(SHAPES))]), str(COLOR_NAMES[rng.integers(len(COLOR_NAMES))])
            make = lambda x, y, yaw, i=object_id, s=shape, c=color: resting_object(i, s, c, size, x, y, yaw)  # noqa: E731
            if layout.place_randomly(make, rng, Bounds(MIN_VISIBILITY)) is None:
                break
        else:
            return Scene(camera=camera, lights=counting_lights(), objects=[layout.objects[i] for i in sorted(layout.objects)])
    raise RuntimeError(f"could not lay out {n_objects} objects; try a smaller object size")


def at_resolution(scene: Scene, width: int, height: int) -> Scene:
    """The same view with more or fewer pixels."""
    return scene.model_copy(update={"camera": counting_camera(Frame(width, height))})


def rays_cast(scene: Scene) -> int:
    """Rays `measure` casts: each object's projected bounding box, in pixels."""
    cam = geometry(scene.camera)
    total = 0
    for obj in scene.objects:
        u, v, _ = cam.project(world_vertices(obj.shape, obj.size, obj.location, obj.rotation_quat))
        total += (int(np.ceil(u.max())) - int(np.floor(u.min()))) * (int(np.ceil(v.max())) - int(np.floor(v.min())))
    return total


def time_raycast(scene: Scene, repeats: int) -> dict:
    measure(scene)  # warm-up: mesh caches, embree scene builds
    wall, cpu = [], []
    for _ in range(repeats):
        w0, c0 = time.perf_counter(), time.process_time()
        measure(scene)
        wall.append(time.perf_counter() - w0)
        cpu.append(time.process_time() - c0)
    rays = rays_cast(scene)
    return {"wall_s": median(wall), "cpu_s": median(cpu), "rays_cast": rays, "rays_per_s": rays / median(wall), "repeats": repeats}


def blender_route(scene: Scene, workdir: Path, device: str = "cpu") -> dict:
    """Visible fractions from Blender: one object-index render of the scene plus one per object alone."""
    from stim3d.render.backends.blender import render_scene

    settings = RenderSettings(engine="cycles", width=scene.camera.width, height=scene.camera.height, samples=1,
                              denoise=False, adaptive_sampling=False, device=device)  # type: ignore[arg-type]
    w0, c0 = time.perf_counter(), time.process_time()
    full = render_scene(scene, settings, 0, workdir)
    render_calls = full.render_seconds
    fractions = {}
    for obj in scene.objects:
        alone = render_scene(scene.model_copy(update={"objects": [obj]}), settings, 0, workdir)
        render_calls += alone.render_seconds
        amodal = int(np.sum(alone.instance_map == obj.id))
        fractions[obj.id] = int(np.sum(full.instance_map == obj.id)) / amodal if amodal else 0.0
    return {
        "wall_s": time.perf_counter() - w0,
        "cpu_s": time.process_time() - c0,
        "render_call_s": render_calls,
        "renders": len(scene.objects) + 1,
        "fractions": fractions,
    }


def main() -> None:
    args = parse_args(
        __doc__.splitlines()[0],
        lambda p: (p.add_argument("--no-blender", action="store_true", help="time the ray cast only"), add_device(p)),
    )
    counts = (5,) if args.quick else OBJECT_COUNTS
    resolutions = RESOLUTIONS[:1] if args.quick else RESOLUTIONS
    repeats = 2 if args.quick else 7
    run = Run("visibility_speed", args.quick, args.out,
              settings={"object_counts": counts, "resolutions": [f"{w}x{h}" for w, h in resolutions],
                        "raycast_repeats": repeats, "min_visibility": MIN_VISIBILITY, "layout_seed": LAYOUT_SEED,
                        "blender_route": "cycles, 1 sample, no denoising, no adaptive sampling, threads = all cores; once per scene"},
              device=args.device)
    rows = []
    with tempfile.TemporaryDirectory(prefix="stim3d-bench-") as tmp:
        if not args.no_blender:  # import bpy and render once before timing anything
            blender_route(at_resolution(build_scene(counts[0]), 64, 48), Path(tmp), args.device)
        for n_objects in counts:
            base = build_scene(n_objects)
            for width, height in resolutions:
                scene = at_resolution(base, width, height)
                progress(f"{n_objects} objects at {width}x{height}")
                row = {"objects": n_objects, "resolution": f"{width}x{height}", "pixels": width * height,
                       "raycast": time_raycast(scene, repeats)}
                if not args.no_blender:
                    blender = blender_route(scene, Path(tmp), args.device)
                    ours = {t.id: t.visibility for t in measure(scene).truths}
                    blender["max_abs_fraction_difference"] = max(abs(blender["fractions"][i] - ours[i]) for i in ours)
                    del blender["fractions"]
                    row["blender"] = blender
                    row["ratio_wall"] = blender["wall_s"] / row["raycast"]["wall_s"]
                    row["ratio_cpu"] = blender["cpu_s"] / row["raycast"]["cpu_s"]
                rows.append(row)
                run.sample_load()
    print_table(
        "Ray-cast visibility (measure) vs Blender's route (1-sample object-index render + one per object)",
        ["objects", "resolution", "ray cast s", "rays cast", "Mrays/s", "Blender s", "renders", "ratio (wall)", "ratio (CPU)", "max |dfrac|"],
        [[r["objects"], r["resolution"], r["raycast"]["wall_s"], r["raycast"]["rays_cast"], r["raycast"]["rays_per_s"] / 1e6,
          r.get("blender", {}).get("wall_s"), r.get("blender", {}).get("renders"), r.get("ratio_wall"), r.get("ratio_cpu"),
          r.get("blender", {}).get("max_abs_fraction_difference")] for r in rows],
    )
    run.finish({"rows": rows})


if __name__ == "__main__":
    main()
