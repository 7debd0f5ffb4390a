"""The source distribution carries its test suite: built with stim3d's build backend as `python -m build --sdist`
would, unpacked, and collected by pytest from the unpacked folder (tests/helpers.py, batch_support.py, conftest.py
and bench/ included). It carries what a wheel built from it needs too: the build backend, and jsPsych and
photoreal's HDRIs vendored with the scripts holding their pins (the backend checks one against the other, offline).
Needs the package index for setuptools >= 77 (PEP 639 licence metadata), as tests/test_packaging.py does; the pip
cache makes it quick."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ("pyproject.toml", "README.md", "LICENSE", "MANIFEST.in", "mkdocs.yml", "stim3d", "scenes", "render",
           "scoring", "blender_addon", "build_backend", "tests", "bench", "docs", "scripts", "examples")


@pytest.mark.network  # pip installs setuptools>=77 from the package index
def test_the_sdist_holds_the_test_suite_and_it_collects(tmp_path):
    source = tmp_path / "src"  # a copy, so the build leaves no egg-info or build/ in the checkout
    source.mkdir()
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info", ".pytest_cache", "results")
    for name in SOURCES:
        path = ROOT / name
        if path.is_dir():
            shutil.copytree(path, source / name, symlinks=True, ignore=ignore)
        else:
            shutil.copy2(path, source / name)
    venv = tmp_path / "build-env"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    subprocess.run([python, "-m", "pip", "install", "-q", "setuptools>=77"], check=True, capture_output=True)
    # As a frontend calls it: pyproject's backend-path on sys.path, the hook run in the source tree.
    built = subprocess.run([python, "-c", "import sys; sys.path.insert(0, 'build_backend'); import stim3d_build; "
                            "print(stim3d_build.build_sdist(sys.argv[1]))", str(tmp_path / "dist")],
                           cwd=source, capture_output=True, text=True, check=True)
    archive = tmp_path / "dist" / built.stdout.strip().splitlines()[-1]
    with tarfile.open(archive) as tar:
        tar.extractall(tmp_path / "unpacked", filter="data")
    (unpacked,) = (tmp_path / "unpacked").iterdir()
    for needed in ("tests/conftest.py", "tests/helpers.py", "tests/batch_support.py", "bench/common.py",
                   "stim3d/scenes/presets/demo.yaml", "stim3d/scoring/schema/record.schema.json",
                   "examples/plugin-template/pyproject.toml", "build_backend/stim3d_build.py",
                   "scripts/fetch_jspsych.sh", "scripts/fetch_hdris.sh", "scripts/vendor_lib.sh",
                   "stim3d/study/vendor/jspsych/jspsych.js", "stim3d/study/vendor/jspsych/SHA256SUMS",
                   "stim3d/render/hdri/city.exr", "stim3d/render/hdri/VERSION", "stim3d/render/hdri/SHA256SUMS"):
        assert (unpacked / needed).is_file(), needed
    collected = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"],
                               cwd=unpacked, capture_output=True, text=True, env={"PATH": "/usr/bin:/bin"})
    assert collected.returncode == 0, collected.stdout[-3000:] + collected.stderr[-2000:]
    count = int(collected.stdout.strip().splitlines()[-1].split()[0])
    ours = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"],
                          cwd=ROOT, capture_output=True, text=True)
    assert count == int(ours.stdout.strip().splitlines()[-1].split()[0])  # the same tests as the checkout
