"""Blender renders a composed object and mesh files exactly where the ray caster says (docs/objects.md).

One tiny Cycles render (64 x 48, 2 samples) of a composed library object, an OBJ written here
by trimesh and an open (non-watertight) mesh, through `stim3d.render_items`: the rendered
object-index pass (mask.png) must equal the ray-cast instance map, every object's visible
pixels in it must be its ground truth's, an unchanged item is skipped byte for byte, and an
item composed again after its mesh file changed renders again.
"""

from __future__ import annotations

import numpy as np
import pytest
import trimesh

from stim3d.api import compose, render_items
from stim3d.render.batch.item_folder import load_mask
from stim3d.scenes.colors import named
from stim3d.scenes.mesh_files import MeshFileError, mesh_source
from stim3d.scenes.meshes import resting_source_object
from stim3d.scenes.model import GroundTruth, Item, StudioLook
from stim3d.scenes.object_library import library_object
from stim3d.scenes.visibility import measure

pytestmark = pytest.mark.bpy
SETTINGS = {"engine": "cycles", "samples": 2, "denoise": False, "width": 64, "height": 48}


def _meshes(folder, bump: float = 0.0):
    """A capsule OBJ (its radius moved by `bump`) and a box without two of its sides."""
    trimesh.creation.capsule(height=1.2, radius=0.45 + bump).export(folder / "capsule.obj")
    box = trimesh.creation.box((1.0, 0.6, 0.8))
    trimesh.Trimesh(box.vertices, box.faces[4:], process=False).export(folder / "open.ply")


def _item(folder) -> Item:
    """A counting item's camera and lights with three non-primitive objects, one partly hiding another."""
    base = compose("shape_count", {"max_instances": 2}, seed=1, width=64, height=48)
    roots = [folder]
    objects = [
        library_object(1, "car", 1.8, -1.2, 0.6, 25.0, named("red")),
        resting_source_object(2, mesh_source("capsule.obj", roots), 1.3, 1.3, 0.8, 0.0, named("blue")),
        resting_source_object(3, mesh_source("open.ply", roots), 1.1, 0.6, -0.5, 40.0, named("green")),
    ]
    scene = base.scene.model_copy(update={"objects": objects, "look": StudioLook()})
    truth = measure(scene, 1)
    return base.model_copy(update={"item_id": "objects-1", "scene": scene, "questions": [],
                                   "ground_truth": GroundTruth(objects=truth.truths)})


@pytest.fixture(scope="module")
def rendered(tmp_path_factory):
    pytest.importorskip("bpy", reason="the Blender Python module (bpy==5.0.1) is not installed")
    meshes, out = tmp_path_factory.mktemp("meshes"), tmp_path_factory.mktemp("out")
    _meshes(meshes)
    item = _item(meshes)
    (folder,) = render_items([item], out, SETTINGS)
    return meshes, out, item, folder


def test_rendered_mask_equals_the_ray_cast_for_composed_and_mesh_objects(rendered):
    _, _, item, folder = rendered
    written = Item.model_validate_json((folder / "item.json").read_text())
    assert written.provenance is not None and written.provenance.mask_agreement == 1.0
    mask = load_mask(folder)
    raycast = measure(item.scene).instance_map
    assert np.array_equal(mask, raycast)
    assert set(np.unique(mask)) - {0} == {1, 2, 3}
    for truth in written.ground_truth.objects:  # visibility from the ray cast = the rendered pixels
        assert truth.visible_px == int((mask == truth.id).sum())
    assert any(t.visibility < 1.0 for t in written.ground_truth.objects)  # the scene has an occlusion


def test_unchanged_mesh_resumes_and_a_changed_file_renders_again(rendered):
    meshes, out, item, folder = rendered
    before = {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}
    stamp = (folder / "item.json").stat().st_mtime_ns
    render_items([item], out, SETTINGS)
    assert (folder / "item.json").stat().st_mtime_ns == stamp
    assert {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()} == before
    _meshes(meshes, bump=0.1)
    with pytest.raises(MeshFileError, match="changed since the item was composed"):
        render_items([item.model_copy(deep=True, update={"item_id": "objects-stale"})], out, SETTINGS)
    changed = _item(meshes)
    assert changed.scene.objects[1].source.sha256 != item.scene.objects[1].source.sha256
    render_items([changed], out, SETTINGS)
    assert (folder / "item.json").stat().st_mtime_ns != stamp
    assert np.array_equal(load_mask(folder), measure(changed.scene).instance_map)
