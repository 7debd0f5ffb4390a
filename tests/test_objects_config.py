"""Mesh files in batches: the config's folder and `mesh_roots` bound what a family may read, and a changed
file makes its item render again although the resume key (made from the config) is unchanged."""

from __future__ import annotations

from pathlib import Path

import pytest
import trimesh
from pydantic import Field

from stim3d.api import render_items
from stim3d.render.batch.config import load_config, parse_config
from stim3d.render.batch.folder import BatchFolder
from stim3d.render.batch.plan import expand
from stim3d.render.batch.produce import compose_item
from stim3d.render.settings import RenderSettings
from stim3d.scenes.camera import look_at
from stim3d.scenes.colors import named
from stim3d.scenes.families import FAMILIES
from stim3d.scenes.families.base import Composed, Family, FamilyParams, Frame
from stim3d.scenes.families.shared.stage import counting_lights
from stim3d.scenes.mesh_files import MeshFileError, mesh_source
from stim3d.scenes.meshes import resting_source_object
from stim3d.scenes.model import Question, Scene
from stim3d.scenes.visibility import measure
from tests.plugin_support import install, stim3d


class Params(FamilyParams):
    mesh: str = Field("meshes/thing.obj", description="the mesh file, relative to the config's folder")


def _compose(params: Params, rng, frame: Frame) -> Composed:
    obj = resting_source_object(1, mesh_source(params.mesh, frame.mesh_roots), 1.2, 0.0, 0.0, 30.0, named("red"))
    scene = Scene(camera=look_at((0.0, -6.0, 3.0), (0.0, 0.0, 0.5), frame.width, frame.height),
                  lights=counting_lights(), objects=[obj])
    question = Question(question_id="q0", text="How many objects are there?", answer_type="integer", gold=1)
    return Composed(scene, [question], measure(scene, frame.rays_per_pixel))


@pytest.fixture
def mesh_family(monkeypatch):
    family = Family("mesh_one", "one mesh file on the ground", Params, _compose, ("integer",))
    monkeypatch.setitem(FAMILIES._loaded(), "mesh_one", family)
    return family


def _write_config(folder, extra: str = "") -> Path:
    """folder/config.yaml: one mesh_one item reading meshes/thing.obj (an annulus) beside it, plus `extra`."""
    (folder / "meshes").mkdir(exist_ok=True)
    trimesh.creation.annulus(r_min=0.3, r_max=0.5, height=0.4).export(folder / "meshes" / "thing.obj")
    path = folder / "config.yaml"
    path.write_text("seed: 1\nrender: {engine: workbench, width: 64, height: 48}\n"
                    f"tasks:\n  - family: mesh_one\n    count: 1\n{extra}")
    return path


def _config(folder, extra: str = "") -> object:
    return load_config(_write_config(folder, extra))


def test_mesh_roots_leave_older_configs_hash_alone():
    plain = {"tasks": [{"family": "shape_count", "count": 1}]}
    assert "mesh_roots" not in parse_config(plain).model_dump()
    assert parse_config({**plain, "mesh_roots": ["/data/meshes"]}).content_hash() != parse_config(plain).content_hash()


def test_a_family_reads_meshes_beside_the_config_and_nowhere_else(tmp_path, mesh_family):
    config = _config(tmp_path)
    (plan,) = expand(config)
    assert plan.mesh_roots == (str(tmp_path.resolve()),)
    composed = compose_item(plan, config.seed, config.render)
    assert composed.item.scene.objects[0].source.name == "thing.obj"
    elsewhere = tmp_path.parent / f"{tmp_path.name}-other"
    elsewhere.mkdir()
    trimesh.creation.box().export(elsewhere / "box.obj")
    outside = _config(tmp_path, f"    params: {{mesh: {elsewhere / 'box.obj'}}}\n")
    with pytest.raises(MeshFileError, match="outside the allowed folders"):
        compose_item(expand(outside)[0], outside.seed, outside.render)
    allowed = _config(tmp_path, f"    params: {{mesh: {elsewhere / 'box.obj'}}}\nmesh_roots: [{elsewhere}]\n")
    assert compose_item(expand(allowed)[0], allowed.seed, allowed.render).item.scene.objects[0].source.name == "box.obj"


def test_a_changed_mesh_file_undoes_its_item(tmp_path, mesh_family):
    pytest.importorskip("bpy", reason="the Blender Python module (bpy==5.0.1) is not installed")
    config = _config(tmp_path)
    item = compose_item(expand(config)[0], config.seed, config.render).item
    out = tmp_path / "out"
    render_items([item], out, RenderSettings(engine="workbench", width=64, height=48))
    state = BatchFolder(out).state(item.item_id, None)
    assert state.done
    trimesh.creation.icosphere().export(tmp_path / "meshes" / "thing.obj")
    state = BatchFolder(out).state(item.item_id, None)
    assert not state.done and state.reason == "mesh file changed since it was rendered: thing.obj"


def test_a_changed_gltf_buffer_undoes_its_item(tmp_path, mesh_family):
    """A glTF's geometry in an external .bin: rewriting the .bin (the .gltf unchanged) makes the rendered item
    not done, so resuming renders it again."""
    pytest.importorskip("bpy", reason="the Blender Python module (bpy==5.0.1) is not installed")
    config = _config(tmp_path, "    params: {mesh: meshes/thing.gltf}\n")
    files = trimesh.exchange.gltf.export_gltf(trimesh.creation.box((0.5, 1.5, 1.0)))
    for name, data in files.items():
        (tmp_path / "meshes" / ("thing.gltf" if name == "model.gltf" else name)).write_bytes(data)
    item = compose_item(expand(config)[0], config.seed, config.render).item
    out = tmp_path / "out"
    render_items([item], out, RenderSettings(engine="workbench", width=64, height=48))
    assert BatchFolder(out).state(item.item_id, None).done
    moved = trimesh.exchange.gltf.export_gltf(trimesh.creation.box((1.5, 0.5, 1.0)))
    for name, data in moved.items():
        if name.endswith(".bin"):
            (tmp_path / "meshes" / name).write_bytes(data)
    state = BatchFolder(out).state(item.item_id, None)
    assert not state.done and state.reason == "mesh file changed since it was rendered: thing.gltf"



MESH_FAMILY = """
from pydantic import Field

from stim3d.scenes.camera import look_at
from stim3d.scenes.colors import named
from stim3d.scenes.families.base import Composed, Family, FamilyParams
from stim3d.scenes.families.shared.stage import counting_lights
from stim3d.scenes.mesh_files import mesh_source
from stim3d.scenes.meshes import resting_source_object
from stim3d.scenes.model import Question, Scene
from stim3d.scenes.visibility import measure


class Params(FamilyParams):
    mesh: str = Field("meshes/thing.obj", description="the mesh file, relative to the config's folder")


def compose(params, rng, frame):
    obj = resting_source_object(1, mesh_source(params.mesh, frame.mesh_roots), 1.2, 0.0, 0.0, 30.0, named("red"))
    scene = Scene(camera=look_at((0.0, -6.0, 3.0), (0.0, 0.0, 0.5), frame.width, frame.height),
                  lights=counting_lights(), objects=[obj])
    question = Question(question_id="q0", text="How many objects are there?", answer_type="integer", gold=1)
    return Composed(scene, [question], measure(scene, frame.rays_per_pixel))


FAMILY = Family("mesh_one", "one mesh file on the ground", Params, compose, ("integer",))
"""


def test_validate_passes_a_mesh_config_that_renders(tmp_path):
    """`stim3d validate` composes through render's own path: a config whose family reads a mesh file beside it
    passes validate and renders, and a mesh outside the allowed folders is refused by validate in one line."""
    pytest.importorskip("bpy", reason="the Blender Python module (bpy==5.0.1) is not installed")
    site = tmp_path / "site"
    install(site, "mesh-plugin", {"mesh_family": MESH_FAMILY}, {"stim3d.families": {"mesh_one": "mesh_family"}})
    work = tmp_path / "work"
    work.mkdir()
    _write_config(work)
    validated = stim3d("validate", "config.yaml", site=site, cwd=work)
    assert (validated.returncode, validated.stderr) == (0, "") and "valid; 1 items (1 mesh_one)" in validated.stdout
    rendered = stim3d("render", "config.yaml", "--out", "out", "--quiet", site=site, cwd=work)
    assert rendered.returncode == 0, rendered.stderr
    assert (work / "out" / "items" / "mesh_one-t0-00000" / "image.png").is_file()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    trimesh.creation.box().export(elsewhere / "box.obj")
    _write_config(work, f"    params: {{mesh: {elsewhere / 'box.obj'}}}\n")
    refused = stim3d("validate", "config.yaml", site=site, cwd=work)
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    (line,) = refused.stderr.strip().splitlines()
    assert "mesh_one-t0-00000 (tasks[0]): mesh" in line and "outside the allowed folders" in line
