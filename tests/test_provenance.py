"""Every output says which code made it, and a batch folder made by other code is refused, never mixed.

Item provenance carries the stim3d version, the family's generator revision and the
library versions; render settings are the ones the engine really used. The resume key
and batch.json carry the code identity, so a rerun after a generator change refuses
the folder with one line (exit 2) unless `--force`.
"""

from __future__ import annotations

import dataclasses
import json
from importlib.metadata import version

import numpy as np
import pytest
import yaml

from stim3d.provenance import code_identity, git_commit, library_versions
from stim3d.render.backends.output import RenderOutput
from stim3d.render.batch.config import ConfigError, parse_config
from stim3d.render.batch.folder import BatchFolder
from stim3d.render.batch.keys import item_key
from stim3d.render.batch.plan import expand
from stim3d.render.batch.produce import finish_item
from stim3d.render.batch.records import records_for
from stim3d.render.settings import RenderSettings
from stim3d.scenes.families import FAMILIES
from stim3d.scenes.families.base import Frame
from stim3d.scenes.items import make_item
from stim3d.version import __version__
from tests.batch_support import stim3d

CONFIG = """\
seed: 5
render: {engine: workbench, width: 64, height: 48}
tasks:
  - family: shape_count
    count: 2
    params: {n_shape_types: 2, max_instances: 2}
"""


def _item():
    return make_item("shape_count", {"n_shape_types": 2, "max_instances": 2}, [1, 0, 0], "shape_count-x", Frame(64, 48))


def _output(item, with_pass: bool) -> RenderOutput:
    h, w = item.scene.camera.height, item.scene.camera.width
    image = np.full((h, w, 3), 128, np.uint8)
    instance_map = np.zeros((h, w), np.uint16) if with_pass else None
    return RenderOutput(image, instance_map, None, "5.0.1" if with_pass else None, 0.0)


@pytest.mark.parametrize("engine", ["workbench", "raster"])
def test_engines_without_samples_record_none(engine):
    item = _item()
    settings = RenderSettings(engine=engine, width=64, height=48, samples=64, denoise=True)
    finished, _ = finish_item(item, _output(item, engine == "workbench"), settings, "k")
    assert finished.provenance.samples is None and finished.provenance.denoise is None
    assert finished.provenance.denoise_quality is None and finished.provenance.light_tree is None
    assert finished.provenance.adaptive_sampling is None
    record = records_for(finished, "items/x/image.png", "ab" * 32)[0]
    assert record.provenance.samples is None and record.provenance.denoise is None


def test_cycles_records_its_samples_and_the_code():
    item = _item()
    settings = RenderSettings(engine="cycles", width=64, height=48, samples=7, denoise=False, light_tree=False)
    finished, _ = finish_item(item, _output(item, True), settings, "k")
    prov = finished.provenance
    assert (prov.samples, prov.denoise, prov.denoise_quality, prov.light_tree) == (7, False, None, False)
    denoised = RenderSettings(engine="cycles", width=64, height=48, samples=4, denoise_quality="fast")
    assert finish_item(item, _output(item, True), denoised, "k")[0].provenance.denoise_quality == "fast"
    assert prov.stim3d_version == __version__
    assert prov.generator_revision == FAMILIES["shape_count"].revision
    assert prov.library_versions["numpy"] == np.__version__
    assert prov.library_versions["trimesh"] == version("trimesh")
    assert set(prov.library_versions) == {"bpy", "numpy", "trimesh", "embreex"}
    record = records_for(finished, "items/x/image.png", "ab" * 32)[0]
    assert record.provenance.generator_revision == prov.generator_revision
    assert record.provenance.library_versions == prov.library_versions
    # The commit of a checkout is a property of the run, not of the output: never in item.json.
    commit = git_commit()
    assert commit is None or commit.split("-")[0] not in finished.model_dump_json()


def test_library_versions_and_commit_are_looked_up_once():
    assert library_versions() is library_versions()
    assert git_commit() == git_commit()


def test_item_key_changes_with_the_generator_revision_and_the_version(monkeypatch):
    config = parse_config(yaml.safe_load(CONFIG))
    plan = expand(config)[0]
    FAMILIES._loaded()
    family = FAMILIES._families["shape_count"]
    old = item_key(plan, config.seed, config.render)
    assert item_key(plan, config.seed, config.render) == old  # deterministic
    monkeypatch.setitem(FAMILIES._families, "shape_count", dataclasses.replace(family, revision=family.revision + 1))
    assert item_key(plan, config.seed, config.render) != old
    monkeypatch.setitem(FAMILIES._families, "shape_count", family)
    monkeypatch.setattr("stim3d.render.provenance.__version__", "9.9.9")
    assert item_key(plan, config.seed, config.render) != old


def _check_manifest(out, config, force):
    """What a render does first: check the folder's batch.json against this config and code, then write its own."""
    BatchFolder(out).check_manifest(config, force)
    BatchFolder(out).write_manifest(config)


def test_manifest_of_another_revision_is_refused_unless_forced(tmp_path, monkeypatch):
    config = parse_config(yaml.safe_load(CONFIG))
    out = tmp_path / "out"
    _check_manifest(out, config, force=False)
    manifest = json.loads((out / "batch.json").read_text())
    assert manifest["code"]["generator_revisions"] == {"shape_count": FAMILIES["shape_count"].revision}
    assert manifest["code"]["stim3d_version"] == __version__ and "git_commit" in manifest["code"]
    _check_manifest(out, config, force=False)  # same code: resumes
    FAMILIES._loaded()
    family = FAMILIES._families["shape_count"]
    monkeypatch.setitem(FAMILIES._families, "shape_count", dataclasses.replace(family, revision=family.revision + 1))
    with pytest.raises(ConfigError, match=r"generator revisions: shape_count \d+\).*`force=True`"):
        _check_manifest(out, config, force=False)
    _check_manifest(out, config, force=True)
    assert json.loads((out / "batch.json").read_text())["code"]["generator_revisions"]["shape_count"] == family.revision + 1


def test_folder_without_code_record_is_refused(tmp_path):
    config = parse_config(yaml.safe_load(CONFIG))
    out = tmp_path / "out"
    _check_manifest(out, config, force=False)
    manifest = json.loads((out / "batch.json").read_text())
    del manifest["code"]
    (out / "batch.json").write_text(json.dumps(manifest))
    with pytest.raises(ConfigError, match="did not record its generator revisions"):
        _check_manifest(out, config, force=False)


def test_code_identity_is_what_a_resume_compares():
    assert set(code_identity({"shape_count"}, with_commit=False)) == {"stim3d_version", "generator_revisions"}
    assert set(code_identity({"shape_count"})) == {"stim3d_version", "generator_revisions", "family_distributions",
                                                  "libraries", "git_commit"}


@pytest.mark.bpy
def test_resume_across_a_generator_revision_is_refused_in_one_line(tmp_path):
    """End to end through the CLI: a folder whose batch.json names another revision is refused, --force redoes it."""
    config = tmp_path / "batch.yaml"
    config.write_text(CONFIG)
    out = tmp_path / "out"
    first = stim3d("render", str(config), "--out", str(out), "--quiet")
    assert first.returncode == 0, first.stderr
    item = json.loads((out / "items" / "shape_count-t0-00000" / "item.json").read_text())
    assert item["provenance"]["generator_revision"] == FAMILIES["shape_count"].revision
    assert item["provenance"]["samples"] is None and item["provenance"]["engine"] == "workbench"
    summary = json.loads((out / "summary.json").read_text())
    assert summary["code"]["generator_revisions"] == {"shape_count": FAMILIES["shape_count"].revision}
    assert "git_commit" in summary["code"] and summary["code"]["libraries"]["bpy"] == "5.0.1"
    before = (out / "items" / "shape_count-t0-00000" / "item.json").read_bytes()
    shown = stim3d("show", str(out / "items" / "shape_count-t0-00000"))
    assert f"made by stim3d {__version__}, generator revision {FAMILIES['shape_count'].revision}" in shown.stdout

    # The folder as an older generator left it.
    manifest = json.loads((out / "batch.json").read_text())
    manifest["code"]["generator_revisions"]["shape_count"] = 0
    (out / "batch.json").write_text(json.dumps(manifest))
    refused = stim3d("render", str(config), "--out", str(out), "--quiet")
    assert refused.returncode == 2
    lines = refused.stderr.strip().splitlines()
    assert len(lines) == 1 and "shape_count 0" in lines[0] and "--force" in lines[0], refused.stderr
    assert (out / "items" / "shape_count-t0-00000" / "item.json").read_bytes() == before

    forced = stim3d("render", str(config), "--out", str(out), "--quiet", "--force")
    assert forced.returncode == 0, forced.stderr
    assert "rendered: 2" in forced.stdout
    again = stim3d("render", str(config), "--out", str(out), "--quiet")
    assert again.returncode == 0 and "rendered: 0" in again.stdout


def test_merge_refuses_shards_of_another_revision(tmp_path):
    from stim3d.render.batch.merge import merge_shards

    config = parse_config(yaml.safe_load(CONFIG))
    shard = tmp_path / "shard"
    _check_manifest(shard, config, force=False)
    manifest = json.loads((shard / "batch.json").read_text())
    manifest["code"]["generator_revisions"]["shape_count"] = 0
    (shard / "batch.json").write_text(json.dumps(manifest))
    with pytest.raises(ConfigError, match=r"shards were rendered by stim3d .*shape_count 0"):
        merge_shards([shard], tmp_path / "merged")
    assert not (tmp_path / "merged" / "batch.json").exists() and not (tmp_path / "merged" / "records.jsonl").exists()
