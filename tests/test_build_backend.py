"""The build backend (build_backend/stim3d_build.py): a wheel carries the pinned jsPsych, or no wheel is built.

A pip user's `stim3d study build` needs jsPsych in the wheel; it is git-ignored, so the backend checks the vendored
folder against scripts/fetch_jspsych.sh's pins before every wheel and sdist and fetches it when the check fails.
Here the check is shown to see each way the folder can be wrong, and pip (`pip wheel --no-build-isolation`, as
scripts/check_wheel.sh builds, offline for pip) builds a copy of the sources twice with npm kept offline on an
empty cache: with the vendored folder (the wheel holds every file, byte for byte, and nothing is fetched) and
without it (the fetch fails, and the build stops with one error naming the command that fixes it). The release
workflow's check of the built wheel (.github/workflows/release.yml) passes that wheel and fails one without jsPsych.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from types import ModuleType

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
VENDOR = Path("stim3d/study/vendor/jspsych")


def backend() -> ModuleType:
    """build_backend/stim3d_build.py, imported from its file (pip puts backend-path on sys.path; tests do not)."""
    spec = importlib.util.spec_from_file_location("stim3d_build", ROOT / "build_backend" / "stim3d_build.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def vendored() -> Path:
    if not (ROOT / VENDOR / "SHA256SUMS").is_file():
        pytest.fail("jsPsych is not vendored: run scripts/fetch_jspsych.sh")
    return ROOT / VENDOR


def source_copy(target: Path, with_vendor: bool) -> Path:
    """What a wheel is built from, copied (setuptools builds in place): with or without the vendored jsPsych."""
    target.mkdir()
    skip = shutil.ignore_patterns("__pycache__", *(() if with_vendor else ("vendor",)))
    for name in ("pyproject.toml", "README.md", "LICENSE", "MANIFEST.in", "stim3d", "build_backend", "scripts"):
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, target / name, symlinks=True, ignore=skip)
        else:
            shutil.copy2(ROOT / name, target / name)
    return target


def pip_wheel(source: Path, dist: Path, npm_cache: Path) -> subprocess.CompletedProcess:
    """`pip wheel` offline for pip, and for npm too: an empty cache it may only read from."""
    npm_cache.mkdir(exist_ok=True)
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    env.update(PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1", npm_config_offline="true",
               npm_config_cache=str(npm_cache))
    return subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-w", str(dist),
                           str(source)], cwd=source.parent, env=env, capture_output=True, text=True, timeout=300)


def release_check(dist: Path) -> subprocess.CompletedProcess:
    """The release workflow's step that checks the built archives carry jsPsych, run on `dist/` (as the runner does,
    with `python` this interpreter)."""
    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / "release.yml").read_text())
    (step,) = [s for s in workflow["jobs"]["build"]["steps"] if "carry jsPsych" in s.get("name", "")]
    env = {"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin"}
    return subprocess.run(["bash", "-e", "-c", step["run"]], cwd=dist.parent, env=env, capture_output=True, text=True,
                          timeout=60)


def test_the_checkouts_vendored_jspsych_is_the_pinned_one(vendored):
    assert backend().vendor_problem(ROOT) is None
    pins = backend().pinned_versions(ROOT)  # read from the script's PACKAGES; VERSIONS is what the script wrote
    assert pins.startswith("jspsych@") and (vendored / "VERSIONS").read_text() == pins


def test_the_check_sees_a_missing_stale_changed_or_extra_file(vendored, tmp_path):
    check = backend().vendor_problem
    (tmp_path / "scripts").mkdir()
    shutil.copy2(ROOT / "scripts" / "fetch_jspsych.sh", tmp_path / "scripts")
    assert "missing" in check(tmp_path)
    folder = tmp_path / VENDOR
    shutil.copytree(vendored, folder)
    assert check(tmp_path) is None
    versions = (folder / "VERSIONS").read_text()
    (folder / "VERSIONS").write_text(versions.replace("@", "@0.", 1))  # another version of jsPsych
    assert "VERSIONS is not the versions scripts/fetch_jspsych.sh pins" in check(tmp_path)
    (folder / "VERSIONS").write_text(versions)
    original = (folder / "jspsych.js").read_bytes()
    (folder / "jspsych.js").write_bytes(original + b"\n")
    assert "jspsych.js does not match its sha256" in check(tmp_path)
    (folder / "jspsych.js").write_bytes(original)
    (folder / "notes.txt").write_text("not jsPsych")
    assert "notes.txt" in check(tmp_path)
    (folder / "notes.txt").unlink()
    (folder / "plugin-preload.js").unlink()
    assert "plugin-preload.js" in check(tmp_path)


def test_a_wheel_carries_the_vendored_jspsych_and_without_it_no_wheel_is_built(vendored, tmp_path):
    source = source_copy(tmp_path / "src", with_vendor=True)
    built = pip_wheel(source, tmp_path / "dist", tmp_path / "npm-cache")
    assert built.returncode == 0, built.stdout[-2000:] + built.stderr[-3000:]
    (wheel,) = (tmp_path / "dist").glob("stim3d-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        packed = {Path(n).name: archive.read(n) for n in archive.namelist() if n.startswith(f"{VENDOR.as_posix()}/")}
    on_disk = {p.name: p.read_bytes() for p in vendored.iterdir()}
    assert packed.keys() == on_disk.keys() and all(packed[n] == on_disk[n] for n in packed)
    assert hashlib.sha256(packed["jspsych.js"]).hexdigest() in packed["SHA256SUMS"].decode()
    checked = release_check(tmp_path / "dist")
    assert checked.returncode == 0 and f"{wheel.name}: jsPsych jspsych@" in checked.stdout, checked.stderr
    stripped = tmp_path / "stripped" / "dist" / wheel.name
    stripped.parent.mkdir(parents=True)
    with zipfile.ZipFile(wheel) as archive, zipfile.ZipFile(stripped, "w") as out:
        for name in archive.namelist():
            if not name.startswith(f"{VENDOR.as_posix()}/"):
                out.writestr(name, archive.read(name))
    assert release_check(stripped.parent).returncode != 0

    bare = source_copy(tmp_path / "bare", with_vendor=False)
    refused = pip_wheel(bare, tmp_path / "bare-dist", tmp_path / "npm-cache")
    assert refused.returncode != 0
    output = refused.stdout + refused.stderr
    errors = [line.strip() for line in output.splitlines() if "JsPsychMissing:" in line]
    assert len(errors) == 1, output[-3000:]
    # It tried to fetch and the script failed (npm offline here; in an image without npm, npm missing), and the
    # error names the command that fixes it.
    assert "is missing or incomplete" in output and "bash scripts/fetch_jspsych.sh failed (exit code 1" in errors[0]
    assert "run `bash scripts/fetch_jspsych.sh` in the source tree" in errors[0]
    assert not list((tmp_path / "bare-dist").glob("*.whl")) and not (bare / VENDOR).exists()
