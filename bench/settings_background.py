"""What the top row of a photoreal frame shows in each setting, per family: the evidence for docs/looks.md "Settings".

For every registered family (its defaults; odd_grid 5x5) and each setting kind, the first 8 items of entropy
[2026, 11, i] whose photoreal setting is that kind are ray cast (no render): rays through the top row's pixel
centres at 320x240 against the stage (scenes/setting_stage.py stage_parts) and the objects, classed by first hit:

- `support`: the surface the objects stand on (the table top; outdoors the patch, or the lawn when there is no
  patch; the dome's ground within the objects' footprint radius times two);
- `beyond`: anything else of the setting (the room's floor, walls and trims, the table's legs; outdoors the lawn
  around a patch and the hedge; the dome's ground farther out, the map's own ground);
- `sky`: nothing (the world: the HDRI or the sky);
- `object`: a scene object.

It prints the median share of `beyond + sky` per family and kind and writes bench/results/settings_background.json.
`python -m bench.settings_background`.
"""

from __future__ import annotations

import numpy as np
import trimesh

from stim3d.scenes.camera import geometry
from stim3d.scenes.families import FAMILIES
from stim3d.scenes.families.base import Frame
from stim3d.scenes.items import make_item
from stim3d.scenes.meshes import object_mesh, object_world_vertices
from stim3d.scenes.setting_stage import setting_axes, stage_parts, to_world
from stim3d.scenes.settings import SETTING_KINDS

from .common import Run, parse_args

PARAMS = {"odd_grid": {"rows": 5, "cols": 5}}
PER_KIND = 8


def _hits(meshes: list[trimesh.Trimesh], origins: np.ndarray, directions: np.ndarray) -> np.ndarray:
    if not meshes:
        return np.full(len(origins), np.inf)
    mesh = trimesh.util.concatenate(meshes)
    locations, rays, _ = mesh.ray.intersects_location(origins, directions, multiple_hits=False)
    distance = np.full(len(origins), np.inf)
    distance[rays] = np.linalg.norm(locations - origins[rays], axis=1)
    return distance


def ray_labels(item, xs: np.ndarray, ys: np.ndarray) -> np.ndarray:
    """What each camera ray through image points (`xs`, `ys`, pixel units) meets first in a photoreal item's
    setting: `support`, `beyond`, `sky` or `object` (the module docstring)."""
    setting = item.scene.look.setting
    origins, directions = geometry(item.scene.camera).rays(np.asarray(xs, float), np.asarray(ys, float))
    origins = np.asarray(origins, dtype=float).copy()
    groups: dict[str, list[trimesh.Trimesh]] = {"support": [], "beyond": [], "object": []}
    for part in stage_parts(setting, item.scene.camera.location):
        faces = np.concatenate([part.quads[:, [0, 1, 2]], part.quads[:, [0, 2, 3]]])
        mesh = trimesh.Trimesh(to_world(setting, part.vertices), faces, process=False)
        support = part.surface == "table_top" or (part.surface == "ground")
        groups["support" if support else "beyond"].append(mesh)
    for obj in item.scene.objects:
        groups["object"].append(trimesh.Trimesh(object_world_vertices(obj), object_mesh(obj).faces, process=False))
    distance = {name: _hits(meshes, origins, directions) for name, meshes in groups.items()}
    first = np.argmin(np.stack([distance["support"], distance["beyond"], distance["object"]]), axis=0)
    nothing = np.isinf(np.minimum(np.minimum(distance["support"], distance["beyond"]), distance["object"]))
    label = np.array(["support", "beyond", "object"])[first]
    label[nothing] = "sky"
    if setting.kind != "tabletop":  # the ground plane is one part: split it where the support ends
        origin, right, away = setting_axes(setting)
        points = origins + np.where(np.isinf(distance["support"]), 0, distance["support"])[:, None] * directions
        local = points - origin
        on_ground = label == "support"
        if setting.kind == "outdoor" and setting.patch is not None:
            inside = (np.abs(local @ right) <= setting.patch[0] / 2) & (np.abs(local @ away) <= setting.patch[1] / 2)
        elif setting.kind == "outdoor":
            inside = np.ones(len(points), bool)
        else:
            spread = max(float(np.linalg.norm(np.asarray(o.location[:2]) - origin[:2])) for o in item.scene.objects)
            inside = np.linalg.norm(local[:, :2], axis=1) <= 2 * spread
        label[on_ground & ~inside] = "beyond"
    return label


def top_row(item) -> dict[str, float]:
    xs = np.arange(item.scene.camera.width) + 0.5
    label = ray_labels(item, xs, np.full(xs.shape, 0.5))
    return {name: float(np.mean(label == name)) for name in ("support", "beyond", "sky", "object")}


def main() -> None:
    args = parse_args(__doc__.splitlines()[0])
    run = Run("settings_background", args.quick, args.out, {"frame": "320x240", "rays": "top row, pixel centres"})
    table: dict[str, dict[str, dict[str, float]]] = {}
    for family in FAMILIES:
        table[family] = {}
        for kind in SETTING_KINDS:
            shares = []
            for index in range(400):
                item = make_item(family, PARAMS.get(family, {}), [2026, 11, index], f"{family}-x", Frame(320, 240),
                                 look="photoreal")
                if item.scene.look.setting.kind != kind:
                    continue
                shares.append(top_row(item))
                if len(shares) == PER_KIND or (args.quick and len(shares) == 2):
                    break
            summary = {name: round(float(np.median([s[name] for s in shares])), 3)
                       for name in ("support", "beyond", "sky", "object")}
            summary["not_support_min"] = round(float(min(1 - s["support"] for s in shares)), 3)
            table[family][kind] = summary
        cells = "  ".join(f"{kind} {table[family][kind]['beyond'] + table[family][kind]['sky']:.2f}"
                          for kind in SETTING_KINDS)
        print(f"{family:20s} {cells}", flush=True)
    run.finish({"top_row": table, "per_kind": PER_KIND})


if __name__ == "__main__":
    main()
