"""The study folder's files: the page's assets and jsPsych (package data), the stimuli, sizes, the JATOS archive.

Generated sub-folders (`stimuli/`, `lib/jspsych/`, `js/`, `css/`) are each written whole
into a temporary folder and swapped into place (stim3d/files.py `atomic_folder`), so a
rebuild never leaves a mix of two builds and never touches `data/` or `consent.html`.
Everything is copied byte for byte and listed in sorted order: the same batch and
options give the same files, and the same JATOS archive (fixed zip timestamps).
"""

from __future__ import annotations

import hashlib
import json
import shutil
import uuid
import zipfile
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path, PurePosixPath

from stim3d.files import OutsideDestination, atomic_folder, atomic_path, inside
from stim3d.study.contract import MANIFEST, TRIALS
from stim3d.study.errors import StudyError

ASSETS = "assets"
VENDOR = ("vendor", "jspsych")
LIB_DIR = "lib/jspsych"
GENERATED_DIRS = ("stimuli", "lib", "js", "css")
CONSENT = "consent.html"
PAGE = "index.html"
PUBLIC_FILES = (PAGE, CONSENT, MANIFEST, TRIALS)  # with GENERATED_DIRS: everything the page loads
# What only the shipped consent template says: its placeholders and its instruction to replace it. A consent page
# holding any of them was not edited, and `study build` refuses it unless the study is a pilot.
CONSENT_PLACEHOLDERS = ("[N]", "[researcher", "Replace this text with your approved consent form")
JATOS_SCRIPT = '<script src="jatos.js"></script>'
JATOS_MARK = "<!-- jatos.js -->"  # where a JATOS archive's copy of index.html loads jatos.js
ZIP_TIME = (1980, 1, 1, 0, 0, 0)
JATOS_NAMESPACE = uuid.UUID("6f1c1f0e-5c43-4a8e-9d61-3d2b7a1e5f00")  # stim3d's namespace for the archive's UUIDs


def _package() -> Traversable:
    return resources.files("stim3d.study")


def asset_files() -> dict[str, bytes]:
    """Every file of the page's sources (index.html, consent.html, js/, css/) by relative path."""
    root = _package().joinpath(ASSETS)
    found: dict[str, bytes] = {}

    def walk(node: Traversable, prefix: str) -> None:
        for child in sorted(node.iterdir(), key=lambda c: c.name):
            if child.name.startswith(".") or child.name == "__pycache__":
                continue
            if child.is_dir():
                walk(child, f"{prefix}{child.name}/")
            else:
                found[f"{prefix}{child.name}"] = child.read_bytes()

    if not root.is_dir():
        raise StudyError("this stim3d install has no study page (stim3d/study/assets/); reinstall stim3d")
    walk(root, "")
    return found


def vendored_jspsych() -> tuple[dict[str, bytes], list[str]]:
    """jsPsych's files as scripts/fetch_jspsych.sh left them (checked against SHA256SUMS) and their VERSIONS lines."""
    root = _package().joinpath(*VENDOR)
    hint = "run scripts/fetch_jspsych.sh (scripts/install.sh does; a wheel ships it)"
    if not root.is_dir() or not root.joinpath("SHA256SUMS").is_file():
        raise StudyError(f"jsPsych is not vendored in this install (stim3d/study/vendor/jspsych/): {hint}")
    files: dict[str, bytes] = {}
    for line in root.joinpath("SHA256SUMS").read_text().splitlines():
        digest, _, name = line.partition("  ")
        path = root.joinpath(name)
        data = path.read_bytes() if path.is_file() else b""
        if not path.is_file() or hashlib.sha256(data).hexdigest() != digest:
            raise StudyError(f"vendored jsPsych file {name} is missing or changed: {hint}")
        files[name] = data
    versions = [line.split()[0] for line in root.joinpath("VERSIONS").read_text().splitlines() if line.strip()]
    return files, versions


def write_folder(out: Path, name: str, files: dict[str, bytes]) -> None:
    """Replace `out/name` with exactly `files` (relative paths inside it), in one swap."""
    target = out / name
    target.parent.mkdir(parents=True, exist_ok=True)
    with atomic_folder(target) as tmp:
        for rel, data in sorted(files.items()):
            path = tmp / rel
            try:
                inside(tmp, path)
            except OutsideDestination:
                raise StudyError(f"{rel!r} would be written outside {target}") from None
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)


def consent_placeholders(text: str) -> list[str]:
    """The template's placeholders still in a consent page's text (CONSENT_PLACEHOLDERS), in their order."""
    return [mark for mark in CONSENT_PLACEHOLDERS if mark in text]


def write_file(path: Path, data: bytes) -> None:
    with atomic_path(path) as tmp:
        tmp.write_bytes(data)


def copy_stimuli(out: Path, sources: dict[str, Path]) -> None:
    """stimuli/<item>.png copied byte for byte (lossless: the very PNG a model is shown)."""
    target = out / "stimuli"
    with atomic_folder(target) as tmp:
        for rel, source in sorted(sources.items()):
            shutil.copyfile(source, tmp / Path(rel).name)


def is_public(rel: PurePosixPath) -> bool:
    """Whether a path relative to the study folder is one of the page's own files (`PUBLIC_FILES`, or a file in
    `GENERATED_DIRS`), not hidden: the only files the server serves and the JATOS archive carries. Everything
    else in the folder (data/, the lock, a file the owner put there) stays on the owner's machine."""
    parts = rel.parts
    if not parts or any(part.startswith(".") for part in parts):
        return False
    return rel.as_posix() in PUBLIC_FILES or (len(parts) > 1 and parts[0] in GENERATED_DIRS)


def study_files(out: Path) -> list[Path]:
    """The page's files (`is_public`) but study.json, sorted: what build counts and the JATOS archive carries
    (study.json is added apart: it is written last)."""
    return sorted(p for p in out.rglob("*") if p.is_file() and is_public(PurePosixPath(p.relative_to(out).as_posix()))
                  and p.relative_to(out).as_posix() != MANIFEST)


def folder_size(out: Path) -> tuple[int, int]:
    files = study_files(out)
    return len(files), sum(p.stat().st_size for p in files)


def jatos_page(page: bytes) -> bytes:
    """index.html for JATOS: loads jatos.js (JATOS serves it beside the page) where the mark is."""
    text = page.decode("utf-8")
    if JATOS_MARK not in text:
        raise StudyError(f"the study page has no {JATOS_MARK} line to load jatos.js at")
    return text.replace(JATOS_MARK, JATOS_SCRIPT, 1).encode("utf-8")


def jas(study_id: str, title: str, completion_url: str | None) -> dict:
    """The archive's .jas (JATOS study properties, format version 3): one component (the page), one batch."""
    dir_name = f"stim3d_{study_id}"

    def uid(part: str) -> str:
        return str(uuid.uuid5(JATOS_NAMESPACE, f"{study_id}/{part}"))

    return {"version": "3", "data": {
        "uuid": uid("study"), "title": title,
        "description": "Built by `stim3d study build --jatos`; responses are stored with jatos.submitResultData.",
        "groupStudy": False, "linearStudy": False, "allowPreview": False, "dirName": dir_name,
        "comments": "", "jsonData": None, "endRedirectUrl": completion_url or "", "studyEntryMsg": None,
        "componentList": [{"uuid": uid("component"), "title": "stim3d study", "htmlFilePath": PAGE,
                           "reloadable": True, "active": True, "comments": "", "jsonData": None}],
        "batchList": [{"uuid": uid("batch"), "title": "Default", "active": True, "maxActiveMembers": None,
                       "maxTotalMembers": None, "maxTotalWorkers": None,
                       "allowedWorkerTypes": ["PersonalSingle", "PersonalMultiple", "GeneralSingle",
                                              "GeneralMultiple", "Jatos"],
                       "comments": None, "jsonData": None}],
    }}


def write_jzip(out: Path, study_id: str, title: str, completion_url: str | None) -> Path:
    """`<out>.jzip`: the .jas and the study's files (index.html loading jatos.js) under one directory."""
    archive = out.with_name(out.name + ".jzip")
    properties = jas(study_id, title, completion_url)
    dir_name = properties["data"]["dirName"]
    with atomic_path(archive) as tmp, zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as zf:
        def add(name: str, data: bytes) -> None:
            info = zipfile.ZipInfo(name, date_time=ZIP_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            zf.writestr(info, data)

        add(f"{dir_name}.jas", (json.dumps(properties, indent=2) + "\n").encode("utf-8"))
        for path in [*study_files(out), out / MANIFEST]:
            rel = path.relative_to(out).as_posix()
            data = path.read_bytes()
            add(f"{dir_name}/{rel}", jatos_page(data) if rel == PAGE else data)
    return archive
