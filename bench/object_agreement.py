"""Objects beyond primitives: is a composed or mesh object's visibility as exact as a primitive's, and what does it cost?

Each scene is an `ava_object` layout (library objects with their positions, sizes and turns,
under the counting camera and lights), rendered three ways on the same layout:

- `composed`: as composed (the library's objects, scenes/objects.yaml);
- `primitives`: every object replaced by a primitive of the same size at the same place
  (sphere, cube, cone, cylinder, torus in turn);
- `mesh files`: every object replaced by a mesh file written here by trimesh, in turn a
  capsule (OBJ), an open box without two sides (PLY, not watertight), an icosphere
  (GLB) and a two-part mesh (STL: two boxes apart, one file).

For each, the ray-cast instance map (scenes/visibility.py `measure`, the ground truth's own)
is compared with Blender's object-index pass (mask.png) through `stim3d.render_items`:
the share of equal pixels, and how many differing pixels lie off silhouette edges. The same
items are timed end to end at the ava3d preset's render settings (640x480, 4 samples, OIDN
fast): seconds per item for each kind. And the best constant answer of ava_object over the
preset's plan (its answer schedule), for both of its questions.

    python -m bench.object_agreement [--quick] [--scenes N]
"""

from __future__ import annotations

import math
import tempfile
import time
from collections import Counter
from pathlib import Path

import trimesh

from stim3d.api import compose, render_items
from stim3d.render.batch.config import load_config
from stim3d.render.batch.item_folder import load_mask
from stim3d.render.batch.plan import expand
from stim3d.scenes.families.ava.ava_common import ObjectSpec
from stim3d.scenes.families.shared.stage import resting_object
from stim3d.scenes.mesh_files import mesh_source
from stim3d.scenes.meshes import resting_source_object
from stim3d.scenes.model import SHAPES, GroundTruth, Item, SceneObject
from stim3d.scenes.presets import preset_path
from stim3d.scenes.visibility import measure

from .common import Run, add_device, median, parse_args, print_table, progress
from .mask_agreement import edge_pixels

AGREEMENT = {"engine": "cycles", "samples": 8, "denoise": False, "width": 320, "height": 240}
PRESET = {"engine": "cycles", "samples": 4, "denoise": True, "denoise_quality": "fast", "light_tree": False,
          "width": 640, "height": 480}
MESH_FILES = ("capsule.obj", "open_box.ply", "icosphere.glb", "two_boxes.stl")
KINDS = ("primitives", "composed", "mesh files")


def write_meshes(folder: Path) -> None:
    """The mesh files the `mesh files` kind uses, each of another format and kind of mesh."""
    trimesh.creation.capsule(height=1.2, radius=0.45).export(folder / "capsule.obj")
    box = trimesh.creation.box((1.0, 0.6, 0.8))
    trimesh.Trimesh(box.vertices, box.faces[4:], process=False).export(folder / "open_box.ply")
    trimesh.creation.icosphere(subdivisions=3, radius=0.5).export(folder / "icosphere.glb")
    parts = [trimesh.creation.box((0.4, 0.4, 0.9)), trimesh.creation.box((0.4, 0.4, 0.5))]
    parts[1].apply_translation((0.7, 0.0, -0.2))
    trimesh.util.concatenate(parts).export(folder / "two_boxes.stl")


def _yaw(obj: SceneObject) -> float:
    w, _, _, z = obj.rotation_quat
    return math.degrees(2.0 * math.atan2(z, w))


def variant(item: Item, kind: str, meshes: Path) -> Item:
    """The item's layout with every object of `kind`, its ground truth measured again."""
    objects = []
    for i, obj in enumerate(item.scene.objects):
        x, y, yaw, size = obj.location[0], obj.location[1], _yaw(obj), float(obj.size)
        if kind == "primitives":
            spec = ObjectSpec(SHAPES[i % len(SHAPES)], obj.color.name, size * 0.7)
            objects.append(resting_object(obj.id, spec, x, y, yaw, dict(obj.attributes)))
        elif kind == "mesh files":
            source = mesh_source(MESH_FILES[i % len(MESH_FILES)], [meshes])
            objects.append(resting_source_object(obj.id, source, size, x, y, yaw, obj.color, dict(obj.attributes)))
        else:
            objects.append(obj)
    scene = item.scene.model_copy(update={"objects": objects})
    truth = measure(scene, 1)
    return item.model_copy(update={"item_id": f"{item.item_id}-{kind.replace(' ', '-')}", "scene": scene,
                                   "ground_truth": GroundTruth(objects=truth.truths)})


def agreement(item: Item, out: Path) -> dict:
    """Render `item` and compare its mask.png with the ray cast; seconds are the render_items call's."""
    start = time.perf_counter()
    (folder,) = render_items([item], out, AGREEMENT)
    seconds = time.perf_counter() - start
    rendered, raycast = load_mask(folder), measure(item.scene).instance_map
    differ = rendered != raycast
    return {"item": item.item_id, "objects": len(item.scene.objects), "pixels": int(differ.size),
            "differing_px": int(differ.sum()), "off_edges_px": int((differ & ~edge_pixels(raycast)).sum()),
            "agreement": float(1.0 - differ.mean()), "seconds": round(seconds, 3)}


def constant_baselines() -> dict[str, float]:
    """Best constant answer of each ava_object question over the ava3d preset's plan (its scheduled answers)."""
    path = preset_path("ava3d")
    assert path is not None, "the ava3d preset is not installed"
    answers = Counter(p.params["answer"] for p in expand(load_config(path)) if p.family == "ava_object")
    best = max(answers.values()) / sum(answers.values())
    return {"items": sum(answers.values()), "options": len(answers), "best_constant_choice": round(best, 4),
            "best_constant_open": round(best, 4), "chance": round(1.0 / len(answers), 4)}


def main() -> None:
    args = parse_args(__doc__.splitlines()[0], lambda p: (
        p.add_argument("--scenes", type=int, help="layouts (default 10; --quick 1)"), add_device(p)))
    n = args.scenes or (1 if args.quick else 10)
    timed = 1 if args.quick else min(n, 4)
    run = Run("object_agreement", args.quick, args.out, device=args.device,
              settings={"scenes": n, "timed_scenes": timed, "agreement_render": AGREEMENT, "preset_render": PRESET,
                        "mesh_files": list(MESH_FILES)})
    AGREEMENT["device"] = PRESET["device"] = args.device
    rows: dict[str, list[dict]] = {kind: [] for kind in KINDS}
    seconds: dict[str, list[float]] = {kind: [] for kind in KINDS}
    with tempfile.TemporaryDirectory(prefix="stim3d-bench-") as tmp:
        meshes = Path(tmp)
        write_meshes(meshes)
        for s in range(n):
            small = compose("ava_object", {"max_distractors": 6}, seed=s, width=320, height=240)
            for kind in KINDS:
                rows[kind].append(agreement(variant(small, kind, meshes), meshes / "agree"))
                progress(f"scene {s + 1}/{n} {kind}: {rows[kind][-1]['differing_px']} px differ")
            if s < timed:
                big = compose("ava_object", {"max_distractors": 6}, seed=s, width=640, height=480)
                for kind in KINDS:
                    start = time.perf_counter()
                    render_items([variant(big, kind, meshes)], meshes / "timed", PRESET)
                    seconds[kind].append(time.perf_counter() - start)
            run.sample_load()

    figures: dict = {"per_kind": {}, "ava_object_baseline": constant_baselines()}
    for kind in KINDS:
        pixels = sum(r["pixels"] for r in rows[kind])
        differing = sum(r["differing_px"] for r in rows[kind])
        figures["per_kind"][kind] = {
            "scenes": len(rows[kind]), "objects": sum(r["objects"] for r in rows[kind]),
            "agreement_pooled": 1.0 - differing / pixels, "differing_px": differing,
            "off_edges_px": sum(r["off_edges_px"] for r in rows[kind]),
            "worst_agreement": min(r["agreement"] for r in rows[kind]),
            "seconds_per_item_640x480": round(median(seconds[kind]), 2) if seconds[kind] else None,
            "per_scene": rows[kind],
        }
    per_kind = figures["per_kind"]
    print_table(
        f"Ray cast vs Blender's object-index pass, {n} ava_object layouts ({AGREEMENT['width']}x{AGREEMENT['height']}, "
        f"{AGREEMENT['samples']} samples); seconds per item at 640x480, 4 samples, OIDN fast (median of {timed})",
        ["kind", "objects", "pooled agreement", "worst scene", "differing px", "off silhouette edges", "s per item"],
        [[k, v["objects"], f"{v['agreement_pooled']:.5%}", f"{v['worst_agreement']:.5%}", v["differing_px"],
          v["off_edges_px"], v["seconds_per_item_640x480"]] for k, v in per_kind.items()],
    )
    base = figures["ava_object_baseline"]
    print(f"\nava_object in ava3d: {base['items']} items over {base['options']} objects; best constant answer "
          f"{base['best_constant_choice']:.1%} on both questions (chance {base['chance']:.1%})")
    run.finish(figures)


if __name__ == "__main__":
    main()
