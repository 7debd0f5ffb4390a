"""stim3d's PEP 517 build backend: setuptools' own, with jsPsych checked (and fetched) before a wheel or an sdist.

Why: the study page's JavaScript (jsPsych) is git-ignored package data that scripts/fetch_jspsych.sh vendors into
stim3d/study/vendor/jspsych/. A wheel built without it installs fine and then refuses every `stim3d study build`,
so a build from a fresh clone (what a release builds) must fetch it, and a build that cannot must stop.

`build_wheel` and `build_sdist` first check the folder against the pins of scripts/fetch_jspsych.sh (its
PACKAGES: VERSIONS must be exactly those lines, and every file must match SHA256SUMS, with no file unlisted),
in Python, so a wheel built from the sdist (which carries both the folder and the script) needs neither npm
nor bash nor the network. When the check fails they run `bash scripts/fetch_jspsych.sh --force` (npm and the
npm registry) and check again; when that fails too they raise JsPsychMissing: what is missing and the command
that fixes it. Everything else, the editable install (`pip install -e .`) included, is setuptools' unchanged:
an editable install reads the checkout's folder live, so fetching after installing is enough there, and
`stim3d study build` says so itself when the folder is missing.
"""

from __future__ import annotations

import hashlib
import re
import subprocess
import sys
from pathlib import Path

from setuptools.build_meta import (
    build_editable,
    get_requires_for_build_editable,
    get_requires_for_build_sdist,
    get_requires_for_build_wheel,
    prepare_metadata_for_build_editable,
    prepare_metadata_for_build_wheel,
)
from setuptools.build_meta import build_sdist as _setuptools_build_sdist
from setuptools.build_meta import build_wheel as _setuptools_build_wheel

__all__ = ["build_editable", "build_sdist", "build_wheel", "get_requires_for_build_editable",
           "get_requires_for_build_sdist", "get_requires_for_build_wheel", "prepare_metadata_for_build_editable",
           "prepare_metadata_for_build_wheel"]

SCRIPT = "scripts/fetch_jspsych.sh"
VENDOR = "stim3d/study/vendor/jspsych"
SUMS = "SHA256SUMS"
FIX = f"bash {SCRIPT}"
PINS = re.compile(r'^PACKAGES="\n(.*?)\n"$', re.MULTILINE | re.DOTALL)


class JsPsychMissing(RuntimeError):
    """The vendored jsPsych is missing or not the pinned one, and fetching it failed: no wheel or sdist is built."""


def pinned_versions(root: Path) -> str:
    """The VERSIONS text fetch_jspsych.sh writes for its pins (`name@version integrity file` per package), read from
    the script itself so the pins live in one place."""
    script = root / SCRIPT
    if not script.is_file():
        raise JsPsychMissing(f"{SCRIPT} is missing from {root}: build from a stim3d checkout or its sdist")
    found = PINS.search(script.read_text(encoding="utf-8"))
    if found is None:
        raise JsPsychMissing(f"{SCRIPT} has no PACKAGES block to read jsPsych's pins from")
    rows = [line.split() for line in found.group(1).splitlines()]
    return "".join(f"{name}@{version} {integrity} {file}\n" for name, version, integrity, file in
                   (row for row in rows if len(row) == 4))


def vendor_problem(root: Path) -> str | None:
    """Why `root`'s vendored jsPsych is not the pinned, intact one (one line), or None when it is."""
    folder = root / VENDOR
    sums = folder / SUMS
    if not sums.is_file() or not (folder / "VERSIONS").is_file():
        return f"{VENDOR}/ is missing or incomplete (no {SUMS} or VERSIONS)"
    if (folder / "VERSIONS").read_text(encoding="utf-8") != pinned_versions(root):
        return f"{VENDOR}/VERSIONS is not the versions {SCRIPT} pins"
    listed: dict[str, str] = {}
    for line in sums.read_text(encoding="utf-8").splitlines():
        digest, _, name = line.partition("  ")
        listed[name] = digest
    present = {p.name for p in folder.iterdir()} - {SUMS}
    if present != set(listed):
        return f"{VENDOR}/ holds {sorted(present ^ set(listed))} apart from {SUMS}'s list"
    for name, digest in sorted(listed.items()):
        if hashlib.sha256((folder / name).read_bytes()).hexdigest() != digest:
            return f"{VENDOR}/{name} does not match its sha256 in {SUMS}"
    return None


def ensure_jspsych(root: Path) -> None:
    """Leave `root` with the pinned jsPsych vendored: checked, fetched when the check fails, checked again;
    JsPsychMissing (what is wrong, and the command to run) when it is still not there."""
    problem = vendor_problem(root)
    if problem is None:
        return
    print(f"stim3d build: {problem}; fetching jsPsych ({FIX} --force)", file=sys.stderr, flush=True)
    try:
        fetched = subprocess.run(["bash", SCRIPT, "--force"], cwd=root, timeout=600)
        failure = None if fetched.returncode == 0 else f"{FIX} failed (exit code {fetched.returncode}, see above)"
    except (OSError, subprocess.TimeoutExpired) as exc:
        failure = f"{FIX} could not run ({exc})"
    problem = failure or vendor_problem(root)
    if problem is not None:
        raise JsPsychMissing(f"stim3d cannot be built without jsPsych (the study page's JavaScript): {problem}. "
                             f"Install Node.js and npm (Debian: apt-get install nodejs npm), run `{FIX}` in the source tree "
                             f"({root}; it needs the npm registry), then build again.")


def build_wheel(wheel_directory: str, config_settings: dict | None = None,
                metadata_directory: str | None = None) -> str:
    """setuptools' wheel, after `ensure_jspsych` (the wheel ships the vendored jsPsych as package data)."""
    ensure_jspsych(Path.cwd())
    return _setuptools_build_wheel(wheel_directory, config_settings, metadata_directory)


def build_sdist(sdist_directory: str, config_settings: dict | None = None) -> str:
    """setuptools' sdist, after `ensure_jspsych`: the sdist carries the vendored jsPsych and the script with its
    pins, so a wheel built from it is checked offline and needs no npm."""
    ensure_jspsych(Path.cwd())
    return _setuptools_build_sdist(sdist_directory, config_settings)
