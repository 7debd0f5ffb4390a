"""stim3d's PEP 517 build backend: setuptools' own, with the vendored assets checked (and fetched) before a wheel or
an sdist.

Why: two folders of package data are git-ignored and vendored by a script each: the study page's JavaScript
(jsPsych, scripts/fetch_jspsych.sh -> stim3d/study/vendor/jspsych/) and photoreal's 18 pmndrs HDRIs
(scripts/fetch_hdris.sh -> stim3d/render/hdri/). A wheel built without one installs fine and then refuses every
`stim3d study build`, or every photoreal item that draws a pmndrs map, so a build from a fresh clone (what a
release builds) must fetch them, and a build that cannot must stop.

`build_wheel` and `build_sdist` first check each folder of VENDORED against the pins of its script (its version
file must be exactly the text the script writes for them, and every file must match SHA256SUMS, with no file
unlisted), in Python, so a wheel built from the sdist (which carries the folders and the scripts) needs neither
npm nor bash nor the network. For a folder whose check fails they run `bash <script> --force` (npm and the npm
registry) and check again; when any is still wrong they raise one VendoredMissing: what is missing and the
commands that fix it. Everything else, the editable install (`pip install -e .`) included, is setuptools'
unchanged: an editable install reads the checkout's folders live, so fetching after installing is enough there,
and `stim3d study build` and photoreal's renderer say so themselves when a folder is missing.
"""

from __future__ import annotations

import hashlib
import re
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
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

SUMS = "SHA256SUMS"
PACKAGES_BLOCK = re.compile(r'^PACKAGES="\n(.*?)\n"$', re.MULTILINE | re.DOTALL)


class VendoredMissing(RuntimeError):
    """A vendored folder is missing or not the pinned one, and fetching it failed: no wheel or sdist is built."""


def jspsych_pins(script_text: str) -> str | None:
    """The VERSIONS text fetch_jspsych.sh writes for its PACKAGES block (`name@version integrity file` a package),
    or None when the script has no such block."""
    found = PACKAGES_BLOCK.search(script_text)
    if found is None:
        return None
    rows = [line.split() for line in found.group(1).splitlines()]
    return "".join(f"{name}@{version} {integrity} {file}\n" for name, version, integrity, file in
                   (row for row in rows if len(row) == 4))


def hdri_pins(script_text: str) -> str | None:
    """The VERSION text fetch_hdris.sh writes for its PACKAGE, VERSION and INTEGRITY variables
    (`package@version integrity`), or None when the script lacks one of them."""
    values = dict(re.findall(r'^(PACKAGE|VERSION|INTEGRITY)="([^"\n]*)"$', script_text, re.MULTILINE))
    if values.keys() != {"PACKAGE", "VERSION", "INTEGRITY"}:
        return None
    return f"{values['PACKAGE']}@{values['VERSION']} {values['INTEGRITY']}\n"


@dataclass(frozen=True)
class Vendored:
    """One git-ignored folder of package data: what it is (for messages), the script that vendors it, the folder,
    the file in it that records the pinned versions, and how to read the pins (that file's text) from the script,
    so the pins live in the script alone."""

    what: str
    script: str
    folder: str
    version_file: str
    pins: Callable[[str], str | None]

    @property
    def fix(self) -> str:
        """The command that vendors the folder, as a user types it."""
        return f"bash {self.script}"


VENDORED = (
    Vendored("jsPsych (the study page's JavaScript)", "scripts/fetch_jspsych.sh", "stim3d/study/vendor/jspsych",
             "VERSIONS", jspsych_pins),
    Vendored("photoreal's pmndrs HDRIs", "scripts/fetch_hdris.sh", "stim3d/render/hdri", "VERSION", hdri_pins),
)


def pinned_text(root: Path, vendored: Vendored) -> str:
    """The version file's text `vendored`'s script pins, read from the script in `root`."""
    script = root / vendored.script
    if not script.is_file():
        raise VendoredMissing(f"{vendored.script} is missing from {root}: build from a stim3d checkout or its sdist")
    pins = vendored.pins(script.read_text(encoding="utf-8"))
    if pins is None:
        raise VendoredMissing(f"{vendored.script} has no pins to read the versions of {vendored.what} from")
    return pins


def vendor_problem(root: Path, vendored: Vendored) -> str | None:
    """Why `root`'s copy of `vendored` is not the pinned, intact one (one line), or None when it is."""
    folder = root / vendored.folder
    sums = folder / SUMS
    version_file = folder / vendored.version_file
    if not sums.is_file() or not version_file.is_file():
        return f"{vendored.folder}/ is missing or incomplete (no {SUMS} or {vendored.version_file})"
    if version_file.read_text(encoding="utf-8") != pinned_text(root, vendored):
        return f"{vendored.folder}/{vendored.version_file} is not the versions {vendored.script} pins"
    listed: dict[str, str] = {}
    for line in sums.read_text(encoding="utf-8").splitlines():
        digest, _, name = line.partition("  ")
        listed[name] = digest
    present = {p.name for p in folder.iterdir()} - {SUMS}
    if present != set(listed):
        return f"{vendored.folder}/ holds {sorted(present ^ set(listed))} apart from {SUMS}'s list"
    for name, digest in sorted(listed.items()):
        if hashlib.sha256((folder / name).read_bytes()).hexdigest() != digest:
            return f"{vendored.folder}/{name} does not match its sha256 in {SUMS}"
    return None


def fetched_problem(root: Path, vendored: Vendored) -> str | None:
    """Run `vendored`'s script with --force in `root`, then check again: why the folder is still wrong, or None."""
    try:
        fetched = subprocess.run(["bash", vendored.script, "--force"], cwd=root, timeout=600)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{vendored.fix} could not run ({exc})"
    if fetched.returncode != 0:
        return f"{vendored.fix} failed (exit code {fetched.returncode}, see above)"
    return vendor_problem(root, vendored)


def ensure_vendored(root: Path) -> None:
    """Leave `root` with every folder of VENDORED pinned and intact: checked, fetched when the check fails, checked
    again; one VendoredMissing (what is wrong with each, and the commands to run) when any is still not there."""
    failures: list[tuple[Vendored, str]] = []
    for vendored in VENDORED:
        problem = vendor_problem(root, vendored)
        if problem is None:
            continue
        print(f"stim3d build: {problem}; fetching {vendored.what} ({vendored.fix} --force)", file=sys.stderr,
              flush=True)
        problem = fetched_problem(root, vendored)
        if problem is not None:
            failures.append((vendored, problem))
    if failures:
        missing = "; ".join(f"{vendored.what}: {problem}" for vendored, problem in failures)
        commands = " && ".join(vendored.fix for vendored, _ in failures)
        raise VendoredMissing(f"stim3d cannot be built without its vendored package data: {missing}. Install Node.js "
                              f"and npm (Debian: apt-get install nodejs npm), run `{commands}` in the source tree "
                              f"({root}; it needs the npm registry), then build again.")


def build_wheel(wheel_directory: str, config_settings: dict | None = None,
                metadata_directory: str | None = None) -> str:
    """setuptools' wheel, after `ensure_vendored` (the wheel ships the vendored folders as package data)."""
    ensure_vendored(Path.cwd())
    return _setuptools_build_wheel(wheel_directory, config_settings, metadata_directory)


def build_sdist(sdist_directory: str, config_settings: dict | None = None) -> str:
    """setuptools' sdist, after `ensure_vendored`: the sdist carries the vendored folders and the scripts with their
    pins, so a wheel built from it is checked offline and needs no npm."""
    ensure_vendored(Path.cwd())
    return _setuptools_build_sdist(sdist_directory, config_settings)
