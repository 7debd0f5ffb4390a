"""Install and use it anywhere (issue 28): presets by name, the light core's one-line refusals, the error types and
API on `dir(stim3d)`, the dataset card's split sizes, the manifest's version, YAML booleans, every config error."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from pydantic import ValidationError

import stim3d
from stim3d.cli.addon_package import manifest_text, manifest_version
from stim3d.export.card import card_header, size_category, split_bytes
from stim3d.scenes.families.base import FamilyParams
from stim3d.scenes.presets import preset_names, preset_path
from tests.helpers import run_cli as run

ROOT = Path(__file__).resolve().parents[1]


def yaml_item_count(path: Path) -> int:
    """Items a config asks for, read from the YAML itself: each task's count (or the sum of its splits) times its
    variants (a variant renders every item again with some parameters overridden)."""
    config = yaml.safe_load(path.read_text())
    return sum((task.get("count") or sum(task["splits"].values())) * max(1, len(task.get("variants") or {}))
               for task in config["tasks"])


def test_presets_lists_every_shipped_file_with_its_item_count():
    code, out, _ = run("presets", "--json")
    rows = {row["name"]: row for row in json.loads(out)}
    assert code == 0 and set(rows) == {p.stem for p in (ROOT / "stim3d" / "scenes" / "presets").glob("*.yaml")}
    assert rows["dysm3d"]["items"] == 120 + 120 + 96 + 80 + 80  # the published DYSM 3D benchmark
    for name, row in rows.items():
        assert row["items"] == yaml_item_count(ROOT / "stim3d" / "scenes" / "presets" / f"{name}.yaml")
    code, text, _ = run("presets")
    assert code == 0 and any(line.split()[:2] == ["dysm3d", "496"] for line in text.splitlines())


def test_a_preset_is_named_from_any_folder_and_a_path_still_works(tmp_path):
    named = subprocess.run([sys.executable, "-m", "stim3d", "validate", "demo"], cwd=tmp_path, capture_output=True,
                           text=True, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert named.returncode == 0 and named.stdout.startswith("demo: valid; 6 items"), named.stderr
    code, out, _ = run("validate", str(ROOT / "stim3d" / "scenes" / "presets" / "demo.yaml"))
    assert code == 0 and "valid; 6 items" in out
    assert preset_path("demo") == Path(str(preset_path("demo"))) and preset_path("../pyproject") is None


def test_a_name_that_is_neither_file_nor_preset_lists_the_presets_in_one_line(tmp_path):
    code, out, err = run("render", "no_such_preset", "--out", str(tmp_path / "out"))
    assert code == 2 and out == "" and len(err.splitlines()) == 1
    assert "no preset of that name" in err and all(name in err for name in preset_names())
    assert not (tmp_path / "out").exists()


def test_render_without_blender_says_what_to_install_in_one_line(tmp_path, monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "bpy" else real(name, *a))
    code, out, err = run("render", "demo", "--out", str(tmp_path / "out"))
    from stim3d.install_hint import install_hint

    assert code == 2 and len(err.splitlines()) == 1 and f"{install_hint('blender')} (Python 3.11)" in err
    assert "pip install -e '" in err and "[blender]'" in err  # this test runs from a checkout
    assert not (tmp_path / "out").exists()


def test_the_light_core_imports_no_renderer():
    check = (
        "import sys, stim3d, stim3d.scenes.items, stim3d.scoring.report, stim3d.export.coco, "
        "stim3d.export.imagefolder, stim3d.export.clevr, stim3d.views.gallery, "
        "stim3d.cli as cli\n"
        "cli.build_parser(); stim3d.compose('shape_count', {}, seed=1, width=64, height=48)\n"
        "print(sorted(m for m in ('bpy', 'pyrender', 'OpenEXR', 'matplotlib', 'OpenGL') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", check], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_imagefolder_without_pyarrow_names_the_extra_and_writes_nothing(tmp_path):
    script = ("import sys; sys.modules['pyarrow'] = None\n"
              "from stim3d.cli import main; sys.exit(main(sys.argv[1:]))")
    done = subprocess.run([sys.executable, "-c", script, "export", "imagefolder", str(tmp_path),
                           "--to", str(tmp_path / "hf")], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 2 and len(done.stderr.splitlines()) == 1, done.stderr
    assert "pip install -e '.[export]'" in done.stderr and not (tmp_path / "hf").exists()  # run in the checkout


def test_validate_names_samples_only_for_the_engine_that_takes_them(tmp_path):
    config = tmp_path / "w.yaml"
    config.write_text("render: {engine: workbench, width: 64, height: 48}\ntasks: [{family: shape_count, count: 1}]\n")
    code, out, _ = run("validate", str(config))
    assert code == 0 and out.rstrip().endswith("engine workbench 64x48")


def test_every_config_error_is_reported_at_once(tmp_path):
    config = tmp_path / "bad.yaml"
    config.write_text("tasks:\n  - family: shape_count\n    count: 1\n    params: {max_instances: 99, bogus: 1}\n"
                      "  - family: spatial_grid\n    count: 1\n    params: {rows: 0}\n")
    code, out, err = run("validate", str(config))
    lines = err.splitlines()
    assert code == 2 and out == "" and len(lines) == 3, err
    assert [line.split(": ")[3] for line in lines] == ["tasks[0].params.max_instances = 99", "tasks[0].params.bogus",
                                                      "tasks[1].params.rows = 0"]


def test_yaml_booleans_become_yes_and_no_or_are_refused_clearly_for_every_field():
    from typing import Literal

    class Fixed(FamilyParams):
        answer: Literal["yes", "no", "random"] = "random"
        mode: Literal["on", "off"] = "on"
        n: int = 1

    assert Fixed.model_validate(yaml.safe_load("answer: yes")).answer == "yes"
    assert Fixed.model_validate(yaml.safe_load("answer: no")).answer == "no"
    with pytest.raises(ValidationError, match="quote it"):
        Fixed.model_validate(yaml.safe_load("mode: off"))  # 'off' cannot be told back from False
    with pytest.raises(ValidationError, match="where a number is expected"):
        Fixed.model_validate(yaml.safe_load("n: yes"))


def test_dir_shows_the_api_and_the_error_types_are_exported():
    names = dir(stim3d)
    assert {"compose", "families", "render_batch", "load_batch", "Batch", "ConfigError", "InfeasibleError",
            "ExportError", "FamilyError", "RendererMissing"} <= set(names)
    from stim3d.render.batch.config import ConfigError

    assert stim3d.ConfigError is ConfigError
    with pytest.raises(stim3d.FamilyError):
        stim3d.compose("no_such_family", {}, seed=1)


def test_dataset_card_declares_split_sizes_language_size_band_and_citation(tmp_path):
    (tmp_path / "train").mkdir()
    (tmp_path / "train" / "a.png").write_bytes(b"x" * 10)
    (tmp_path / "train" / "metadata.parquet").write_bytes(b"y" * 5)
    sizes = split_bytes(tmp_path, ["train"])
    assert sizes == {"train": 15}
    header = card_header({"train": 1200}, [], sizes)
    assert header["dataset_info"]["splits"] == [{"name": "train", "num_bytes": 15, "num_examples": 1200}]
    assert header["language"] == ["en"] and header["size_categories"] == ["1K<n<10K"]
    assert (size_category(999), size_category(1000), size_category(10**6)) == ("n<1K", "1K<n<10K", "n>1M")


def test_the_extension_manifest_carries_the_package_version():
    assert manifest_version("0.2.0.dev0") == "0.2.0-dev0"
    assert manifest_version("1.4") == "1.4.0" and manifest_version("2.0.1rc1") == "2.0.1-rc1"
    import tomllib

    assert tomllib.loads(manifest_text([], []))["version"] == manifest_version(stim3d.__version__)


def test_schema_help_names_the_folder_that_holds_the_checked_in_schema():
    done = subprocess.run([sys.executable, "-m", "stim3d", "schema", "--help"], cwd=ROOT, capture_output=True, text=True)
    folder = next(word.strip("()") for word in done.stdout.split() if word.endswith("record.schema.json"))
    assert (ROOT / folder).is_file()


def test_config_schema_types_each_familys_params_for_editors():
    import jsonschema

    code, out, _ = run("schema", "--config")
    schema = json.loads(out)
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    for preset in sorted((ROOT / "stim3d" / "scenes" / "presets").glob("*.yaml")):  # every shipped preset is a valid config
        assert not list(validator.iter_errors(yaml.safe_load(preset.read_text()))), preset.name
    bad = yaml.safe_load("tasks: [{family: shape_count, count: 1, params: {max_instances: 99, bogus: 1}},"
                         " {family: nope, count: 1}]")
    problems = sorted(error.message for error in validator.iter_errors(bad))
    assert len(problems) == 3  # the same three `stim3d validate` names: over the maximum, unknown key, family
    assert any("99 is greater than the maximum of 5" in p for p in problems)  # shape_count: max_instances <= 5
    assert any("'bogus' was unexpected" in p for p in problems) and any("'nope' is not one of" in p for p in problems)


def test_json_output_of_families_validate_and_show(tmp_path):
    code, out, _ = run("families", "--json")
    rows = {row["name"]: row for row in json.loads(out)}
    assert rows["shape_count"]["distribution"] == "stim3d"
    assert rows["shape_count"]["params"]["max_instances"]["maximum"] == 5
    code, out, _ = run("validate", "demo", "--json")
    assert json.loads(out) == {"config": "demo", "valid": True, "items": 6, "families": {"shape_count": 4,
                               "shape_color_count": 2}, "engine": "cycles", "width": 480, "height": 360, "samples": 16}
    item = stim3d.compose("shape_count", {}, seed=2, width=64, height=48)
    (tmp_path / "it").mkdir()
    (tmp_path / "it" / "item.json").write_text(item.to_json())
    code, out, _ = run("show", str(tmp_path / "it"), "--json")
    assert code == 0 and out == item.to_json()


def test_verbose_and_log_file_record_the_command_and_an_errors_traceback(tmp_path):
    log = tmp_path / "stim3d.log"
    code, _, err = run("render", "no_such_preset", "--out", str(tmp_path / "o"), "--log-file", str(log))
    text = log.read_text()
    assert code == 2 and len(err.splitlines()) == 1  # the console stays one line without --verbose
    assert "INFO stim3d: stim3d" in text and "render no_such_preset" in text and "Traceback" in text
    code, _, err = run("--verbose", "render", "no_such_preset", "--out", str(tmp_path / "o"))
    assert code == 2 and "Traceback" in err and err.rstrip().splitlines()[-1].startswith("stim3d: error: no_such_preset")


def test_a_family_whose_compose_raises_is_named_in_one_line_by_validate(tmp_path, monkeypatch):
    import dataclasses

    from stim3d.scenes.families import FAMILIES

    FAMILIES._loaded()

    def broken(params, rng, frame):
        raise ZeroDivisionError("division by zero")

    family = dataclasses.replace(FAMILIES._families["shape_count"], name="broken_plugin", compose=broken)
    monkeypatch.setitem(FAMILIES._families, "broken_plugin", family)
    config = tmp_path / "c.yaml"
    config.write_text("tasks: [{family: broken_plugin, count: 1}]\n")
    code, out, err = run("validate", str(config))
    assert code == 2 and out == "" and len(err.splitlines()) == 1 and "Traceback" not in err
    assert "broken_plugin" in err and "ZeroDivisionError: division by zero" in err
