"""stim3d as an installed library: one import name, no collisions, family plug-ins, Ray and workers from any folder.

The wheel is built from this checkout and installed (no dependencies) into a fresh
virtual environment that sees the project's .venv for its heavy dependencies (bpy,
numpy, trimesh...) through a .pth file placed after its own site-packages. Next to
it go the real `render` (Render.com's SDK) and `scoring` packages from the package
index, whose import names stim3d used to take, and a tiny third-party family
plug-in built here. Everything then runs from a project folder that has its own
`scenes/` and `render/` packages, which must never be imported.

Needs the package index (pip downloads `render` and `scoring`; the wheel is built
offline with the test extra's setuptools); CI has it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import textwrap
import zipfile
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from stim3d.version import __version__

pytestmark = [pytest.mark.bpy, pytest.mark.network]  # the `installed` fixture pip-installs from the package index

ROOT = Path(__file__).resolve().parents[1]
TEMPLATE = ROOT / "examples" / "plugin-template"  # the plug-in template a plug-in author copies


def run(args: list[str], cwd: Path, env: dict[str, str] | None = None, timeout: float = 600) -> subprocess.CompletedProcess:
    # Never PYTHONPATH: a checkout on it (a worktree's set-up) would stand in for the installed wheel.
    clean = {key: value for key, value in (env or os.environ).items() if key != "PYTHONPATH"}
    done = subprocess.run(args, cwd=cwd, env=clean, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"{' '.join(map(str, args))}\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
    return done


def write_plugin(folder: Path) -> Path:
    """A copy of examples/plugin-template (installed from the copy, so its build leaves nothing in the checkout)."""
    shutil.copytree(TEMPLATE, folder, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info", "build"))
    return folder


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> dict[str, Path]:
    """A fresh venv with stim3d's wheel, render==1.5.0, scoring==0.0.9 and the tiny plug-in installed."""
    base = tmp_path_factory.mktemp("packaging")
    # Built from a copy: setuptools builds in place, and a stim3d.egg-info left in the checkout would be a second
    # stim3d distribution wherever the checkout is on sys.path (pip would then call stim3d installed). With the build
    # backend (build_backend/) and the pins it checks the vendored folders against (the fetch scripts in scripts/).
    source = base / "src"
    source.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE", "MANIFEST.in", "stim3d", "scenes", "render", "scoring",
                 "blender_addon", "build_backend", "scripts"):
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, source / name, symlinks=True, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(ROOT / name, source / name)
    run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(base / "dist"),
         str(source)], cwd=base)
    (wheel,) = (base / "dist").glob("stim3d-*.whl")
    venv = base / "venv"
    run([sys.executable, "-m", "venv", str(venv)], cwd=base)
    python = venv / "bin" / "python"
    site = Path(run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], cwd=base).stdout.strip())
    # After the venv's own packages: the project's dependencies (not its editable stim3d, whose finder is a .pth
    # of .venv that a .pth-added folder does not run).
    (site / "zz_project_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    plugin = write_plugin(base / "plugin-src")
    run([str(python), "-m", "pip", "install", "-q", "--no-deps", str(wheel)], cwd=base)
    run([str(python), "-m", "pip", "install", "-q", "render==1.5.0", "scoring==0.0.9"], cwd=base)
    run([str(python), "-m", "pip", "install", "-q", "--no-deps", str(plugin)], cwd=base)
    project = base / "user-project"  # a user's folder with packages named like stim3d's old top-level ones
    for name in ("scenes", "render"):
        (project / name).mkdir(parents=True)
        (project / name / "__init__.py").write_text(f'raise RuntimeError("the user package {name} was imported")\n')
    (project / "batch.yaml").write_text(
        "seed: 3\nrender: {engine: workbench, width: 64, height: 48}\n"
        "tasks:\n  - {family: tiny_row, count: 2, grid: {answer: [1, 3]}}\n  - {family: shape_count, count: 1}\n"
    )
    return {"wheel": wheel, "venv": venv, "python": python, "project": project, "site": site}


def test_the_wheel_installs_one_top_level_name(installed):
    with zipfile.ZipFile(installed["wheel"]) as wheel:
        wheel_names = wheel.namelist()
    tops = {name.split("/")[0] for name in wheel_names}
    assert tops == {"stim3d", f"stim3d-{__version__}.dist-info"}
    # Every package folder on disk is in the wheel: stim3d/ links the top-level folders, packages.find follows them.
    in_wheel = {name.rsplit("/", 1)[0] for name in wheel_names if name.endswith("/__init__.py")}
    on_disk = {"stim3d"} | {
        "/".join(["stim3d", top, *p.parent.relative_to(ROOT / top).parts])
        for top in ("scenes", "render", "scoring", "blender_addon") for p in (ROOT / top).rglob("__init__.py")
    }
    assert on_disk <= in_wheel, f"package folders missing from the wheel: {sorted(on_disk - in_wheel)}"


def test_stim3d_and_the_real_render_and_scoring_packages_both_work(installed):
    # scoring 0.0.9 imports sklearn without declaring it, so it is located, not imported: what matters is that
    # the name `scoring` is that package and stim3d's scoring core is stim3d.scoring.
    check = textwrap.dedent("""
        import importlib.util, json, render, stim3d, stim3d.scoring
        from render import Render
        theirs = importlib.util.find_spec("scoring").origin
        assert not theirs.startswith(stim3d.__path__[0]) and not render.__file__.startswith(stim3d.__path__[0])
        print(json.dumps({"stim3d": stim3d.__version__, "render": render.__file__, "scoring": theirs,
                          "families": sorted(stim3d.families())}))
    """)
    # Not from the user's project folder: `python -c` puts the current folder first on sys.path, so there
    # `import render` is the user's own package, whatever is installed.
    elsewhere = installed["project"].parent
    out = json.loads(run([str(installed["python"]), "-c", check], cwd=elsewhere).stdout.strip().splitlines()[-1])
    assert out["stim3d"] == __version__
    assert str(installed["site"]) in out["render"] and str(installed["site"]) in out["scoring"]
    assert {"shape_count", "tiny_row"} <= set(out["families"])
    version = run([str(installed["venv"] / "bin" / "stim3d"), "--version"], cwd=installed["project"]).stdout
    assert version.strip() == f"stim3d {__version__}"


def test_plugin_is_listed_with_its_distribution(installed):
    listing = run([str(installed["venv"] / "bin" / "stim3d"), "families"], cwd=installed["project"]).stdout
    assert "tiny_row [stim3d-plugin-template]: N red spheres in a row" in listing
    assert "shape_count [stim3d]:" in listing


@pytest.mark.parametrize("executor", ["local", "ray"])
def test_plugin_items_render_from_a_folder_with_its_own_scenes_and_render(installed, executor):
    out = installed["project"] / f"out-{executor}"
    args = [str(installed["venv"] / "bin" / "stim3d"), "render", "batch.yaml", "--out", str(out), "--quiet",
            "--executor", executor]
    env = {**os.environ, "RAY_ADDRESS": "", "RAY_USAGE_STATS_ENABLED": "0"}
    run(args, cwd=installed["project"], env=env)
    records = [json.loads(line) for line in (out / "records.jsonl").read_text().splitlines()]
    assert sorted(r["family"] for r in records) == ["shape_count", "tiny_row", "tiny_row"]
    for record in records:
        assert record["provenance"]["stim3d_version"] == __version__
        item = json.loads((out / "items" / record["item_id"] / "item.json").read_text())
        assert item["provenance"]["stim3d_version"] == __version__
        if record["family"] == "tiny_row":  # the gold answer is what the mask shows: one id per sphere
            mask = np.asarray(Image.open(out / "items" / record["item_id"] / "mask.png"))
            assert len(set(np.unique(mask)) - {0}) == record["answer"]["gold"]
    scored = installed["project"] / f"predictions-{executor}.jsonl"
    scored.write_text("".join(json.dumps({"question_id": r["question_id"], "response": str(r["answer"]["gold"])}) + "\n"
                              for r in records))
    report = run([str(installed["venv"] / "bin" / "stim3d"), "score", str(out), str(scored)], cwd=installed["project"])
    assert "1.000" in report.stdout


def test_presets_by_name_and_the_addon_build_work_from_the_installed_wheel(installed):
    """From a user's folder with no checkout in sight: presets resolve inside the installed package, and the
    add-on zip is built from the installed files (no pyproject.toml, no blender_addon/ folder beside them)."""
    stim3d_bin, project = str(installed["venv"] / "bin" / "stim3d"), installed["project"]
    assert run([stim3d_bin, "validate", "demo"], cwd=project).stdout.startswith("demo: valid; 6 items")
    listing = json.loads(run([stim3d_bin, "presets", "--json"], cwd=project).stdout)
    assert all(str(installed["site"]) in row["path"] for row in listing)
    run([stim3d_bin, "addon", "build", "--without-dependencies", "--out", str(project / "dist")], cwd=project)
    (zip_path,) = (project / "dist").glob("stim3d-*.zip")
    with zipfile.ZipFile(zip_path) as archive:
        import tomllib

        manifest = tomllib.loads(archive.read("blender_manifest.toml").decode())
        (wheel_name,) = [n for n in archive.namelist() if n.startswith("wheels/stim3d-")]
        wheel_bytes = archive.read(wheel_name)
    assert manifest["version"].replace("-", ".") == __version__  # 0.2.0-dev0 <-> 0.2.0.dev0
    inner = project / "inner.whl"
    inner.write_bytes(wheel_bytes)
    with zipfile.ZipFile(inner) as wheel:
        names = set(wheel.namelist())
        entry_points = wheel.read(f"stim3d-{__version__}.dist-info/entry_points.txt").decode()
    assert "stim3d/scenes/presets/demo.yaml" in names and "stim3d/scoring/schema/record.schema.json" in names
    assert "shape_count = stim3d.scenes.families.dysm.shape_count" in entry_points


def test_provenance_names_the_plugin_distribution_and_version(installed):
    out = installed["project"] / "out-provenance"
    run([str(installed["venv"] / "bin" / "stim3d"), "render", "batch.yaml", "--out", str(out), "--quiet"],
        cwd=installed["project"])
    batch = json.loads((out / "batch.json").read_text())
    found = json.dumps(batch)
    assert '"tiny_row": "stim3d-plugin-template 0.1.0"' in found, found[:2000]
