"""Build the installable Blender extension: the add-on, stim3d's own wheel, and its dependencies' wheels.

`stim3d addon build --out DIR` writes one zip per platform,
`stim3d-<version>-<platform>.zip`, that Blender 4.2+ installs with no internet
(Edit > Preferences > Get Extensions > Install from Disk): Blender extracts the
wheels listed in the manifest into its extensions' site-packages.

What goes in:
- blender_addon/*.py and its blender_manifest.toml (from the installed package), with
  `version` (the package's, as a semantic version), `platforms` and `wheels` filled in;
- stim3d's own packages (scenes, render, scoring) as one pure-Python wheel, packed
  by the `wheel` project's `wheel pack` (which writes RECORD) from an unpacked wheel
  tree: the files of the imported `stim3d` package (a checkout's or a wheel install's
  alike) and the installed distribution's metadata as its build backend wrote it
  (METADATA, WHEEL, entry_points.txt, ...: the entry points register the built-in
  families and scoring cores inside Blender exactly as in a pip install). No build
  backend runs, so nothing is fetched from the package index and a wheel install
  (which has no pyproject.toml) builds the same way; SOURCE_DATE_EPOCH fixes the
  zip's timestamps, so the same files give the same bytes;
- the third-party wheels stim3d needs inside Blender, downloaded with
  `pip download --only-binary=:all: --python-version 3.11 --platform ...` at the
  versions installed in this environment (the versions the tests ran with).
  Left out: bpy (Blender itself), numpy (Blender ships it), pyrender (the raster
  backend is not used in Blender) and Cython (python-fcl lists it, but its
  compiled module never imports it).

`with_dependencies=False` builds a platform-independent zip with stim3d's wheel
only, for a Blender whose Python already has the dependencies (the tests use
it: no download).
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import tempfile
import tomllib
import zipfile
from collections.abc import Callable
from importlib import metadata, resources
from pathlib import Path

from stim3d.errors import Stim3dError
from stim3d.version import __version__

# The installed (or checked-out) `stim3d` package: in a checkout stim3d/ links the top-level folders, in a wheel
# install they are real folders; the build reads the same files either way, never a repository path.
PACKAGE_DIR = Path(str(resources.files("stim3d")))
ADDON_DIR = Path(str(resources.files("stim3d.blender_addon")))
MANIFEST = "blender_manifest.toml"
# Sub-packages that go into stim3d's own wheel. The add-on's own code sits at the zip's root as the extension
# module, so blender_addon/ is not in that wheel.
OWN_PACKAGES = ("scenes", "render", "scoring")
# .ttf and .txt: the font ava_ocr's signs are set in (scenes/fonts/) and its licence. .exr and the vendor files:
# photoreal's pmndrs HDRIs (stim3d/render/hdri/, scripts/fetch_hdris.sh) with their
# licence and checksums, so the add-on renders every photoreal item a batch can hold.
PACKAGE_DATA_SUFFIXES = (".py", ".yaml", ".json", ".css", ".js", ".exr", ".ttf", ".txt")
VENDOR_FILES = ("LICENSE", "VERSION", "SHA256SUMS")
DEPENDENCIES = ("trimesh", "embreex", "python-fcl", "pydantic", "PyYAML", "Pillow", "OpenEXR")
NOT_BUNDLED = {"numpy", "cython"}  # numpy: Blender ships it; Cython: unused at run time (see above)
BLENDER_PYTHON = "3.11"
# Blender platform -> pip platform tags. Linux: Blender 4.2+ needs glibc 2.28; macOS: arm64 only
# (Blender 5.0 dropped Intel Macs; embreex publishes no Intel-Mac wheel for Python 3.11).
PLATFORMS: dict[str, tuple[str, ...]] = {
    "linux-x64": ("manylinux_2_28_x86_64", "manylinux2014_x86_64"),
    "windows-x64": ("win_amd64",),
    "macos-arm64": ("macosx_14_0_arm64", "macosx_11_0_arm64"),
}
FIXED_DATE = (1980, 1, 1, 0, 0, 0)  # zip entries: same inputs, same bytes
FIXED_EPOCH = 315532800  # the same date for `wheel pack` (SOURCE_DATE_EPOCH)
INSTALL_TIME_FILES = {"RECORD", "INSTALLER", "REQUESTED", "direct_url.json"}

Progress = Callable[[str], None]


class AddonBuildError(Stim3dError, RuntimeError):
    """The extension could not be built (a download failed, a file is missing): one line."""


def _zip_write(archive: zipfile.ZipFile, name: str, data: bytes) -> None:
    info = zipfile.ZipInfo(name, date_time=FIXED_DATE)
    info.compress_type = zipfile.ZIP_DEFLATED
    info.external_attr = 0o644 << 16
    archive.writestr(info, data)


def package_files(package: Path = PACKAGE_DIR) -> dict[str, bytes]:
    """stim3d's own package files (sources and data), keyed by their path inside the wheel."""
    files: dict[str, bytes] = {}
    for path in sorted(package.iterdir()):  # the top level: api.py, version.py, ...
        if path.is_file() and path.suffix in PACKAGE_DATA_SUFFIXES:
            files[f"stim3d/{path.name}"] = path.read_bytes()
    for name in OWN_PACKAGES:
        top = package / name
        for folder, dirs, names in os.walk(top, followlinks=True):  # stim3d/<name> is a symlink in a checkout
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for file_name in sorted(names):
                path = Path(folder) / file_name
                if path.suffix in PACKAGE_DATA_SUFFIXES or path.name in VENDOR_FILES:
                    files[f"stim3d/{name}/{path.relative_to(top).as_posix()}"] = path.read_bytes()
    if not any(key.startswith("stim3d/scenes/") for key in files):
        raise AddonBuildError(f"no stim3d packages found under {package}")
    return files


def installed_distribution() -> metadata.Distribution:
    """stim3d's installed distribution, whose metadata goes into the wheel: the first .dist-info on sys.path of
    the imported version. A stim3d.egg-info that an in-place build left in a checkout on sys.path is skipped
    (it has no WHEEL file, so it is no installed wheel's metadata)."""
    found = [dist for dist in metadata.distributions(name="stim3d") if dist.read_text("WHEEL") is not None]
    if not found:
        from stim3d.install_hint import install_hint

        raise AddonBuildError(f"stim3d is not installed (no distribution metadata): {install_hint()} first")
    for dist in found:
        if dist.version == __version__:
            return dist
    raise AddonBuildError(
        f"the installed stim3d distribution is {found[0].version} but the imported package is {__version__}: reinstall it"
    )


def dist_info_files(dist: metadata.Distribution) -> dict[str, bytes]:
    """The distribution's .dist-info files that a wheel carries: not the installer's own (PEP 376/610) nor RECORD,
    which `wheel pack` writes anew."""
    folder = f"stim3d-{__version__}.dist-info"
    files = {
        str(path): path.read_binary()
        for path in dist.files or []
        if path.parts[0] == folder and "/".join(path.parts[1:]) not in INSTALL_TIME_FILES
    }
    if f"{folder}/METADATA" not in files or f"{folder}/WHEEL" not in files:
        raise AddonBuildError(f"stim3d's installed metadata has no {folder}/METADATA or WHEEL: reinstall it")
    return files


def build_own_wheel(dest: Path, package: Path = PACKAGE_DIR) -> Path:
    """stim3d-<version>-py3-none-any.whl holding the `stim3d` package, packed by `wheel pack`."""
    if importlib.util.find_spec("wheel") is None:
        raise AddonBuildError("building the add-on needs the 'wheel' project, a dependency of stim3d: pip install wheel")
    tree = dest / "unpacked"
    for name, data in {**package_files(package), **dist_info_files(installed_distribution())}.items():
        path = tree / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        path.chmod(0o644)  # the zip records each file's mode: the same whatever the umask
    env = {**os.environ, "SOURCE_DATE_EPOCH": str(FIXED_EPOCH)}
    done = subprocess.run([sys.executable, "-m", "wheel", "pack", str(tree), "--dest-dir", str(dest)],
                          capture_output=True, text=True, env=env)
    wheels = list(dest.glob("stim3d-*.whl"))
    if done.returncode != 0 or len(wheels) != 1:
        lines = done.stderr.strip().splitlines() or [f"exit {done.returncode}"]
        raise AddonBuildError(f"wheel pack could not pack stim3d's wheel: {lines[-1]}")
    return wheels[0]


def manifest_version(version: str = __version__) -> str:
    """The package's PEP 440 version as the semantic version Blender's manifest requires: 0.2.0.dev0 -> 0.2.0-dev0."""
    import re

    match = re.fullmatch(r"(\d+)(?:\.(\d+))?(?:\.(\d+))?[.-]?(.*)", version)
    if match is None:
        raise AddonBuildError(f"package version {version!r} is not a release number")
    release = ".".join(part or "0" for part in match.groups()[:3])
    suffix = re.sub(r"[^0-9A-Za-z.]", "", match.group(4).replace("+", "."))
    return f"{release}-{suffix}" if suffix else release


def pinned_dependencies() -> list[str]:
    """DEPENDENCIES pinned to the versions installed here (unpinned when one is not installed)."""
    pins = []
    for name in DEPENDENCIES:
        try:
            pins.append(f"{name}=={metadata.version(name)}")
        except metadata.PackageNotFoundError:
            pins.append(name)
    return pins


def download_wheels(platform: str, dest: Path) -> list[Path]:
    """The dependency wheels for one Blender platform (Python 3.11), numpy and Cython left out."""
    tags = [flag for tag in PLATFORMS[platform] for flag in ("--platform", tag)]
    command = [
        sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check",
        "--only-binary=:all:", "--python-version", BLENDER_PYTHON, "--implementation", "cp",
        "--abi", "cp311", "--abi", "abi3", "--abi", "none", *tags, "--dest", str(dest),
        *pinned_dependencies(), "numpy<2",
    ]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        lines = [line for line in done.stderr.splitlines() if line.startswith("ERROR")] or done.stderr.splitlines()[-1:]
        raise AddonBuildError(
            f"pip could not download the wheels for {platform}: {lines[-1] if lines else 'exit ' + str(done.returncode)} "
            "(needs access to the package index; `with_dependencies=False` builds without them)"
        )
    wheels = sorted(dest.glob("*.whl"))
    return [w for w in wheels if w.name.split("-")[0].lower().replace("_", "-") not in NOT_BUNDLED]


def manifest_text(platforms: list[str], wheel_names: list[str]) -> str:
    """The add-on's manifest with `platforms` and `wheels` set (inserted before the first table)."""
    template = (ADDON_DIR / MANIFEST).read_text()
    lines = [f'version = "{manifest_version()}"' if line.startswith("version =") else line  # the package's version
             for line in template.splitlines()]
    generated = []
    if platforms:
        generated.append("platforms = [" + ", ".join(f'"{p}"' for p in platforms) + "]")
    generated.append("wheels = [\n" + "".join(f'  "./wheels/{name}",\n' for name in wheel_names) + "]")
    first_table = next((i for i, line in enumerate(lines) if line.startswith("[")), len(lines))
    text = "\n".join(lines[:first_table] + generated + [""] + lines[first_table:]) + "\n"
    parsed = tomllib.loads(text)
    if parsed.get("wheels") != [f"./wheels/{name}" for name in wheel_names]:
        raise AddonBuildError(f"{ADDON_DIR / MANIFEST}: could not set 'wheels' (does the template set it already?)")
    return text


def addon_files() -> dict[str, bytes]:
    files = {
        path.name: path.read_bytes()
        for path in sorted(ADDON_DIR.glob("*.py"))  # the add-on's modules, from the installed package
    }
    if "__init__.py" not in files:
        raise AddonBuildError(f"{ADDON_DIR}: no __init__.py")
    return files


def write_extension(zip_path: Path, platforms: list[str], wheels: list[Path]) -> Path:
    names = [w.name for w in wheels]
    with zipfile.ZipFile(zip_path, "w") as archive:
        _zip_write(archive, MANIFEST, manifest_text(platforms, names).encode())
        for name, data in addon_files().items():
            _zip_write(archive, name, data)
        for wheel in wheels:
            _zip_write(archive, f"wheels/{wheel.name}", wheel.read_bytes())
    return zip_path


def build_addon(
    out: Path,
    platforms: list[str] | None = None,
    with_dependencies: bool = True,
    progress: Progress | None = None,
) -> list[Path]:
    """Write the extension zip(s) into `out`; returns their paths.

    With dependencies: one zip per platform (default: every platform in PLATFORMS).
    Without: one platform-independent zip, `stim3d-<version>.zip`.
    """
    say = progress or (lambda message: None)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    unknown = sorted(set(platforms or []) - set(PLATFORMS))
    if unknown:
        raise AddonBuildError(f"unknown platform {unknown[0]!r}; allowed: {', '.join(PLATFORMS)}")
    with tempfile.TemporaryDirectory(prefix="stim3d-addon-build-") as scratch:
        own = build_own_wheel(Path(scratch))
        if not with_dependencies:
            path = write_extension(out / f"stim3d-{__version__}.zip", [], [own])
            say(f"wrote {path} (stim3d's wheel only; Blender's Python must already have {', '.join(DEPENDENCIES)})")
            return [path]
        written = []
        for platform in platforms or list(PLATFORMS):
            say(f"downloading wheels for {platform} (Python {BLENDER_PYTHON})...")
            folder = Path(scratch) / platform
            folder.mkdir()
            wheels = download_wheels(platform, folder)
            path = write_extension(out / f"stim3d-{__version__}-{platform.replace('-', '_')}.zip", [platform], [own, *wheels])
            size_mb = path.stat().st_size / 1e6
            say(f"wrote {path} ({size_mb:.1f} MB: {', '.join(w.name.split('-')[0] for w in [own, *wheels])})")
            written.append(path)
        return written
