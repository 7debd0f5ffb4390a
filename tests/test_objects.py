"""Objects beyond the five primitives (docs/objects.md): composed library objects and mesh files.

What a user relies on: any object's triangles are the same in the ray cast, in placement's
collisions and in the BOP model; a mesh file is normalised (longest extent = `size`, centred,
Z up) and its hash is in item.json; a bad file is refused in one line; primitives' item.json
bytes do not change.
"""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pytest
import trimesh

from stim3d.errors import Stim3dError
from stim3d.export.bop_models import model_key, model_ply
from stim3d.scenes.camera import look_at
from stim3d.scenes.colors import named
from stim3d.scenes.families.shared.stage import counting_lights
from stim3d.scenes.mesh_files import MeshFileError, mesh_source
from stim3d.scenes.meshes import (
    GROUND_CLEARANCE,
    object_mesh,
    object_world_vertices,
    resting_source_object,
    source_mesh,
)
from stim3d.scenes.model import Scene, SceneObject
from stim3d.scenes.object_library import composed_source, library, library_object, synonyms_of
from stim3d.scenes.placement import mesh_distance
from stim3d.scenes.visibility import measure
from tests.helpers import resting


def _obj_file(folder, name="bunny.obj", mesh=None):
    mesh = mesh if mesh is not None else trimesh.creation.capsule(height=2.0, radius=0.5)
    path = folder / name
    mesh.export(path)
    return path


def _scene(objects, width=64, height=48) -> Scene:
    camera = look_at((0.0, -6.0, 3.0), (0.0, 0.0, 0.5), width, height)
    return Scene(camera=camera, lights=counting_lights(), objects=objects)


def test_mesh_file_is_normalised_to_size_centred_and_hashed(tmp_path):
    path = _obj_file(tmp_path)
    source = mesh_source(path.name, [tmp_path])
    obj = resting_source_object(1, source, 1.5, 0.0, 0.0, 0.0, named("red"))
    vertices = object_world_vertices(obj)
    extents = vertices.max(axis=0) - vertices.min(axis=0)
    assert extents.max() == pytest.approx(1.5)
    assert vertices[:, 2].min() == pytest.approx(GROUND_CLEARANCE * 1.5, abs=1e-6)  # resting on the ground
    assert np.allclose(0.5 * (vertices.max(axis=0) + vertices.min(axis=0)), obj.location, atol=1e-5)
    assert source.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    assert json.loads(obj.model_dump_json())["source"]["sha256"] == source.sha256


def test_gltf_is_read_y_up_and_obj_z_up(tmp_path):
    tall_along_y = trimesh.creation.box((0.5, 3.0, 1.0))
    obj_src = mesh_source(_obj_file(tmp_path, "a.obj", tall_along_y), [tmp_path])
    glb_src = mesh_source(_obj_file(tmp_path, "a.glb", tall_along_y), [tmp_path])
    assert (obj_src.up, glb_src.up) == ("z", "y")
    for source, long_axis in ((obj_src, 1), (glb_src, 2)):
        unit = resting_source_object(1, source, 1.0, 0, 0, 0, named("red"))
        extents = np.ptp(object_mesh(unit).vertices, axis=0)
        assert int(np.argmax(extents)) == long_axis


def test_primitive_json_has_no_source_key_and_shape_needs_matching_source():
    obj = resting(1, "cube", "red", 0, 0)
    assert "source" not in json.loads(obj.model_dump_json())
    with pytest.raises(ValueError, match="needs a source of kind 'composed'"):
        SceneObject(**{**obj.model_dump(), "shape": "composed"})


def test_composed_object_round_trips_through_item_json_with_its_parts():
    mug = library_object(1, "mug", 0.8, 0.0, 0.0, 30.0, named("blue"))
    again = SceneObject.model_validate_json(mug.model_dump_json())
    assert again == mug
    assert [p.name for p in again.source.parts] == ["body", "handle"]
    assert np.array_equal(object_mesh(again).vertices, object_mesh(mug).vertices)


def test_library_has_twelve_objects_with_named_parts_and_synonyms():
    entries = library()
    assert len(entries) >= 12
    for name, entry in entries.items():
        assert entry.synonyms and entry.front
        assert len({p.name for p in entry.parts}) == len(entry.parts)
        assert name.replace("_", " ") in synonyms_of(name)
        dims = np.ptp(object_mesh(library_object(1, name, 1.0, 0, 0, 0, named("red"))).vertices, axis=0)
        assert dims.max() == pytest.approx(1.0)


def test_visibility_of_composed_and_mesh_objects_is_first_hit_over_own_silhouette(tmp_path):
    car = library_object(1, "car", 1.6, -1.0, 0.0, 20.0, named("red"))
    capsule = resting_source_object(2, mesh_source(_obj_file(tmp_path), [tmp_path]), 1.4, 1.2, 0.5, 0.0, named("blue"))
    truth = measure(_scene([car, capsule]))
    for t in truth.truths:
        assert t.visible_px == int((truth.instance_map == t.id).sum())
        assert 0.0 < t.visibility <= 1.0
        assert t.visibility == pytest.approx(t.visible_px / t.amodal_px, abs=1e-6)


def test_non_watertight_mesh_counts_its_open_silhouette(tmp_path):
    box = trimesh.creation.box((1.0, 1.0, 1.0))
    open_box = trimesh.Trimesh(box.vertices, box.faces[2:], process=False)  # one side removed
    assert not open_box.is_watertight
    source = mesh_source(_obj_file(tmp_path, "open.obj", open_box), [tmp_path])
    truth = measure(_scene([resting_source_object(1, source, 1.0, 0.0, 0.0, 35.0, named("red"))])).truths[0]
    assert truth.amodal_px > 100 and truth.visibility == 1.0


def test_collisions_use_the_composed_triangles_not_a_box():
    table = library_object(1, "table", 2.0, 0.0, 0.0, 0.0, named("red"))
    under = resting(2, "sphere", "blue", 0.0, 0.0, 0.3)  # under the table top, between the legs
    assert mesh_distance(table, under) > 0.05
    on_leg = resting(3, "sphere", "blue", 0.9, 0.5, 0.3)  # where a leg stands (the top is 2 m long, legs at 0.9)
    assert mesh_distance(table, on_leg) < 1e-9


def test_bop_model_is_the_objects_mesh():
    chair = library_object(1, "chair", 1.0, 0, 0, 0, named("red"))
    cube = resting(2, "cube", "red", 0, 0, 1.0)
    assert model_key(cube) == ("cube", 1.0) and model_key(chair)[0].startswith("composed:chair:")
    ply, info = model_ply(chair)
    assert f"element face {len(object_mesh(chair).faces)}" in ply
    assert max(info["size_x"], info["size_y"], info["size_z"]) == pytest.approx(1000.0, abs=0.01)


def test_changed_file_is_refused_at_render_time_and_changes_the_hash(tmp_path):
    path = _obj_file(tmp_path)
    source = mesh_source(path, [tmp_path])
    _obj_file(tmp_path, mesh=trimesh.creation.icosphere())
    assert mesh_source(path, [tmp_path]).sha256 != source.sha256
    with pytest.raises(MeshFileError, match="changed since the item was composed"):
        source_mesh(source)


@pytest.mark.parametrize("case, message", [
    ("missing", "no such file"), ("outside", "outside the allowed folders"), ("suffix", "unknown format"),
    ("empty", "no triangles"), ("degenerate", "degenerate"), ("nan", "not finite"), ("many", "at most"),
])
def test_bad_mesh_files_are_one_line_errors(tmp_path, monkeypatch, case, message):
    root = tmp_path / "meshes"
    root.mkdir()
    path = root / "m.obj"
    if case == "missing":
        pass
    elif case == "outside":
        path = _obj_file(tmp_path, "elsewhere.obj")
    elif case == "suffix":
        path = root / "m.txt"
        path.write_text("v 0 0 0\n")
    elif case == "empty":
        path.write_text("# nothing\n")
    elif case == "degenerate":
        path.write_text("v 0 0 0\nv 1 0 0\nv 2 0 0\nf 1 2 3\n")
    elif case == "nan":
        path.write_text("v 0 0 0\nv 1 0 0\nv 0 nan 0\nf 1 2 3\n")
    else:
        monkeypatch.setattr("stim3d.scenes.mesh_files.MAX_FACES", 10)
        _obj_file(root, "m.obj")
    with pytest.raises(MeshFileError, match=message) as caught:
        mesh_source(path if case == "outside" else path.name, [root])
    assert isinstance(caught.value, Stim3dError) and "\n" not in str(caught.value)


def test_composed_source_names_unknown_objects():
    with pytest.raises(Stim3dError, match="unknown library object 'spaceship'; known: car"):
        composed_source("spaceship")


def _gltf_with_buffers(folder, mesh, name="thing.gltf") -> None:
    """`mesh` as a .gltf whose geometry lives in external .bin buffers beside it (trimesh's glTF export)."""
    for file_name, data in trimesh.exchange.gltf.export_gltf(mesh).items():
        (folder / (name if file_name == "model.gltf" else file_name)).write_bytes(data)


def test_a_gltfs_hash_covers_its_external_buffers_and_a_changed_bin_is_caught(tmp_path):
    """The recorded hash is of every byte the mesh reads: a .bin rewritten under an unchanged .gltf changes it, so
    the item is found changed (a batch renders it again) and is refused at render time, never drawn from the new
    triangles under the old ground truth."""
    from stim3d.scenes.mesh_files import changed_mesh_files, normalised_file_mesh

    _gltf_with_buffers(tmp_path, trimesh.creation.box((0.5, 3.0, 1.0)))
    gltf = (tmp_path / "thing.gltf").read_bytes()
    source = mesh_source("thing.gltf", [tmp_path])
    assert source.sha256 != hashlib.sha256(gltf).hexdigest()
    scene = _scene([resting_source_object(1, source, 1.0, 0.0, 0.0, 0.0, named("red"))])
    assert changed_mesh_files(scene) == []
    normalised_file_mesh(source)  # unchanged files: read

    other = tmp_path / "other"
    other.mkdir()
    _gltf_with_buffers(other, trimesh.creation.box((3.0, 0.5, 1.0)))  # same sizes, other vertices
    for bin_file in other.glob("*.bin"):
        (tmp_path / bin_file.name).write_bytes(bin_file.read_bytes())
    assert (tmp_path / "thing.gltf").read_bytes() == gltf  # only the buffer changed
    assert mesh_source("thing.gltf", [tmp_path]).sha256 != source.sha256
    assert changed_mesh_files(scene) == ["thing.gltf"]
    with pytest.raises(MeshFileError, match="changed since the item was composed"):
        normalised_file_mesh(source)


def test_a_self_contained_mesh_keeps_its_plain_hash_and_a_buffer_outside_the_roots_is_refused(tmp_path):
    """A file that reads no other file is hashed as itself (item.json of existing items unchanged); a glTF whose
    buffer lies outside the allowed folders is refused in one line, as the file itself would be."""
    path = _obj_file(tmp_path, "plain.obj")
    assert mesh_source("plain.obj", [tmp_path]).sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    inner = tmp_path / "meshes"
    inner.mkdir()
    _gltf_with_buffers(inner, trimesh.creation.box())
    text = (inner / "thing.gltf").read_text().replace('"uri":"gltf_buffer_0.bin"', '"uri":"../gltf_buffer_0.bin"')
    (inner / "thing.gltf").write_text(text)
    (tmp_path / "gltf_buffer_0.bin").write_bytes((inner / "gltf_buffer_0.bin").read_bytes())
    with pytest.raises(MeshFileError, match=r"reads \.\./gltf_buffer_0\.bin, outside the allowed folders"):
        mesh_source("thing.gltf", [inner])
