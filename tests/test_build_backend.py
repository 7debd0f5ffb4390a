"""The build backend (build_backend/stim3d_build.py): a wheel carries the pinned jsPsych and HDRIs, or none is built.

A pip user's `stim3d study build` needs jsPsych in the wheel, and photoreal needs the pmndrs HDRIs; both are
git-ignored, so the backend checks each vendored folder against its script's pins (scripts/fetch_jspsych.sh,
scripts/fetch_hdris.sh) before every wheel and sdist and fetches it when the check fails. Here the check is shown to
see each way either folder can be wrong, and pip (`pip wheel --no-build-isolation`, as scripts/check_wheel.sh
builds, offline for pip) builds with npm kept offline on an empty cache: from the sdist of a copy of the sources
with the vendored folders (the wheel holds every file, byte for byte, and nothing is fetched) and from a copy
without them (both fetches fail, and the build stops with one error naming the commands that fix it). The release
workflow's check of the built archives (.github/workflows/release.yml) passes that wheel and its sdist, and fails a
wheel without either folder.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path
from types import ModuleType

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
JSPSYCH = Path("stim3d/study/vendor/jspsych")
HDRIS = Path("stim3d/render/hdri")
# folder -> (its script, a file to change, a file to delete)
FOLDERS = {JSPSYCH: ("fetch_jspsych.sh", "jspsych.js", "plugin-preload.js"),
           HDRIS: ("fetch_hdris.sh", "city.exr", "lobby.exr")}


@functools.cache
def backend() -> ModuleType:
    """build_backend/stim3d_build.py, imported from its file (pip puts backend-path on sys.path; tests do not), and
    registered as pip's import would be (its dataclass looks its module up there)."""
    spec = importlib.util.spec_from_file_location("stim3d_build", ROOT / "build_backend" / "stim3d_build.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def entry(folder: Path):
    """The backend's VENDORED entry for `folder`."""
    (found,) = [v for v in backend().VENDORED if v.folder == folder.as_posix()]
    return found


@pytest.fixture(scope="module")
def vendored() -> None:
    for folder, (script, _, _) in FOLDERS.items():
        if not (ROOT / folder / "SHA256SUMS").is_file():
            pytest.fail(f"{folder} is not vendored: run scripts/{script}")


def source_copy(target: Path, with_vendor: bool) -> Path:
    """What a wheel is built from, copied (setuptools builds in place): with or without the vendored folders."""
    target.mkdir()
    skip = shutil.ignore_patterns("__pycache__", *(() if with_vendor else (JSPSYCH.parent.name, HDRIS.name)))
    for name in ("pyproject.toml", "README.md", "LICENSE", "MANIFEST.in", "stim3d", "build_backend", "scripts"):
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, target / name, symlinks=True, ignore=skip)
        else:
            shutil.copy2(ROOT / name, target / name)
    return target


def offline_env(npm_cache: Path) -> dict[str, str]:
    """Offline for pip, and for npm too: an empty cache it may only read from."""
    npm_cache.mkdir(exist_ok=True)
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    env.update(PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1", npm_config_offline="true",
               npm_config_cache=str(npm_cache))
    return env


def pip_wheel(source: Path, dist: Path, npm_cache: Path) -> subprocess.CompletedProcess:
    """`pip wheel`, offline (offline_env)."""
    return subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-w", str(dist),
                           str(source)], cwd=source.parent, env=offline_env(npm_cache), capture_output=True, text=True,
                          timeout=300)


def backend_sdist(source: Path, dist: Path, npm_cache: Path) -> Path:
    """The sdist, as a frontend builds it: pyproject's backend-path on sys.path, the hook run in the source tree."""
    built = subprocess.run([sys.executable, "-c", "import sys; sys.path.insert(0, 'build_backend'); "
                            "import stim3d_build; print(stim3d_build.build_sdist(sys.argv[1]))", str(dist)],
                           cwd=source, env=offline_env(npm_cache), capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stderr[-3000:]
    return dist / built.stdout.strip().splitlines()[-1]


def release_check(dist: Path) -> subprocess.CompletedProcess:
    """The release workflow's step that checks the built archives carry the vendored folders, run on `dist/` (as the
    runner does, with `python` this interpreter)."""
    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / "release.yml").read_text())
    (step,) = [s for s in workflow["jobs"]["build"]["steps"] if "carry jsPsych and the HDRIs" in s.get("name", "")]
    env = {"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin"}
    return subprocess.run(["bash", "-e", "-c", step["run"]], cwd=dist.parent, env=env, capture_output=True, text=True,
                          timeout=60)


def strip(wheel: Path, folder: Path, dist: Path) -> Path:
    """A copy of `wheel` in `dist/` without `folder`."""
    dist.mkdir(parents=True)
    with zipfile.ZipFile(wheel) as archive, zipfile.ZipFile(dist / wheel.name, "w") as out:
        for name in archive.namelist():
            if not name.startswith(f"{folder.as_posix()}/"):
                out.writestr(name, archive.read(name))
    return dist


def test_the_checkouts_vendored_folders_are_the_pinned_ones(vendored):
    check = backend()
    for folder in FOLDERS:
        vendored_folder = entry(folder)
        assert check.vendor_problem(ROOT, vendored_folder) is None
        pins = check.pinned_text(ROOT, vendored_folder)  # read from the script; the version file is what it wrote
        assert (ROOT / folder / vendored_folder.version_file).read_text() == pins
    assert check.pinned_text(ROOT, entry(JSPSYCH)).startswith("jspsych@8.3.0 sha512-")
    assert check.pinned_text(ROOT, entry(HDRIS)).startswith("@pmndrs/assets@1.7.0 sha512-")


@pytest.mark.parametrize("folder", list(FOLDERS), ids=["jspsych", "hdris"])
def test_the_check_sees_a_missing_stale_changed_or_extra_file(vendored, tmp_path, folder):
    module = backend()
    vendored_folder = entry(folder)
    script, changed, deleted = FOLDERS[folder]

    def check() -> str | None:
        return module.vendor_problem(tmp_path, vendored_folder)

    (tmp_path / "scripts").mkdir()
    shutil.copy2(ROOT / "scripts" / script, tmp_path / "scripts")
    assert "missing" in check()
    copy = tmp_path / folder
    shutil.copytree(ROOT / folder, copy)
    assert check() is None
    version_file = copy / vendored_folder.version_file
    versions = version_file.read_text()
    version_file.write_text(re.sub(r"@(\d)", r"@0.\1", versions, count=1))  # another version of the first package
    assert f"{vendored_folder.version_file} is not the versions scripts/{script} pins" in check()
    version_file.write_text(versions)
    original = (copy / changed).read_bytes()
    (copy / changed).write_bytes(original + b"\n")
    assert f"{changed} does not match its sha256" in check()
    (copy / changed).write_bytes(original)
    (copy / "notes.txt").write_text("not vendored")
    assert "notes.txt" in check()
    (copy / "notes.txt").unlink()
    (copy / deleted).unlink()
    assert deleted in check()
    # A script whose pins cannot be read is one clear error, not a silent pass.
    (tmp_path / "scripts" / script).write_text("#!/usr/bin/env bash\n")
    with pytest.raises(module.VendoredMissing, match=f"scripts/{script} has no pins"):
        check()


def test_a_wheel_carries_both_vendored_folders_and_without_them_no_wheel_is_built(vendored, tmp_path):
    # As a release builds (`python -m build`): the sdist from the sources, then the wheel from the unpacked sdist,
    # which the sdist's folders and scripts let the backend check offline (npm could fetch nothing here).
    source = source_copy(tmp_path / "src", with_vendor=True)
    sdist = backend_sdist(source, tmp_path / "dist", tmp_path / "npm-cache")
    with tarfile.open(sdist) as tar:
        tar.extractall(tmp_path / "unpacked", filter="data")
    (unpacked,) = (tmp_path / "unpacked").iterdir()
    built = pip_wheel(unpacked, tmp_path / "dist", tmp_path / "npm-cache")
    assert built.returncode == 0, built.stdout[-2000:] + built.stderr[-3000:]
    (wheel,) = (tmp_path / "dist").glob("stim3d-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        for folder in FOLDERS:
            prefix = f"{folder.as_posix()}/"
            packed = {Path(n).name: archive.read(n) for n in archive.namelist() if n.startswith(prefix)}
            on_disk = {p.name: p.read_bytes() for p in (ROOT / folder).iterdir()}
            assert packed.keys() == on_disk.keys() and all(packed[n] == on_disk[n] for n in packed), folder
            assert hashlib.sha256(packed[FOLDERS[folder][1]]).hexdigest() in packed["SHA256SUMS"].decode()
    checked = release_check(tmp_path / "dist")
    assert checked.returncode == 0, checked.stderr[-3000:]
    jspsych_files, hdri_files = (len(list((ROOT / folder).iterdir())) for folder in FOLDERS)
    for name in (wheel.name, sdist.name):
        assert (f"{name}: jsPsych jspsych@8.3.0, {jspsych_files} files; HDRIs @pmndrs/assets@1.7.0, {hdri_files} files"
                in checked.stdout), checked.stdout
    for folder in FOLDERS:
        refused_check = release_check(strip(wheel, folder, tmp_path / f"without-{folder.name}" / "dist"))
        assert refused_check.returncode != 0 and f"'{folder.as_posix()}/'" in refused_check.stderr, folder

    bare = source_copy(tmp_path / "bare", with_vendor=False)
    refused = pip_wheel(bare, tmp_path / "bare-dist", tmp_path / "npm-cache")
    assert refused.returncode != 0
    output = refused.stdout + refused.stderr
    errors = [line.strip() for line in output.splitlines() if "VendoredMissing:" in line]
    assert len(errors) == 1, output[-3000:]
    # It tried to fetch each and each script failed (npm offline here; in an image without npm, npm missing), and
    # the one error names both folders and the commands that fix them.
    for folder, (script, _, _) in FOLDERS.items():
        assert f"{folder.as_posix()}/ is missing or incomplete" in output
        assert f"bash scripts/{script} failed (exit code 1" in errors[0]
        assert not (bare / folder).exists()
    assert "run `bash scripts/fetch_jspsych.sh && bash scripts/fetch_hdris.sh` in the source tree" in errors[0]
    assert not list((tmp_path / "bare-dist").glob("*.whl"))
