"""MkDocs hook (mkdocs.yml `hooks:`): lay the package out for mkdocstrings before the API pages are read.

pyproject's package-dir maps the top-level folders under `stim3d` (scenes/ = stim3d.scenes, ...), which
griffe's static analysis cannot follow. This writes build/api-tree/stim3d as the installed package looks
(symlinks to the real files), and mkdocs.yml points the python handler's `paths` at build/api-tree.
scripts/typecheck.sh does the same for mypy.
"""

from __future__ import annotations

import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TREE = ROOT / "build" / "api-tree"
SUBPACKAGES = {"scenes": "scenes", "render": "render", "scoring": "scoring", "blender_addon": "blender_addon"}


def on_startup(command: str, dirty: bool) -> None:
    """Build the tree before any plug-in reads its config.

    on_startup, not on_config: hooks run after the plug-ins listed in mkdocs.yml, and mkdocstrings drops a
    `paths` entry that does not exist yet when its own on_config runs, so in a fresh clone (no build/) the
    API pages could not be collected.
    """
    package = TREE / "stim3d"
    shutil.rmtree(TREE, ignore_errors=True)
    package.mkdir(parents=True)
    for source in sorted((ROOT / "stim3d").glob("*.py")):
        (package / source.name).symlink_to(source)
    for name, folder in SUBPACKAGES.items():
        (package / name).symlink_to(ROOT / folder, target_is_directory=True)
