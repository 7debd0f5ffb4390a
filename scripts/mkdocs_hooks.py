"""MkDocs hook (mkdocs.yml `hooks:`): lay the package out for mkdocstrings before the API pages are read.

pyproject's package-dir maps the top-level folders under `stim3d` (scenes/ = stim3d.scenes, ...), which
griffe's static analysis cannot follow. This writes build/api-tree/stim3d as the installed package looks
(symlinks to the real files), and mkdocs.yml points the python handler's `paths` at build/api-tree.
scripts/typecheck.sh does the same for mypy.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
TREE = ROOT / "build" / "api-tree"
SUBPACKAGES = {"scenes": "scenes", "render": "render", "scoring": "scoring", "blender_addon": "blender_addon"}


def on_config(config: Any) -> Any:
    package = TREE / "stim3d"
    shutil.rmtree(TREE, ignore_errors=True)
    package.mkdir(parents=True)
    for source in sorted((ROOT / "stim3d").glob("*.py")):
        (package / source.name).symlink_to(source)
    for name, folder in SUBPACKAGES.items():
        (package / name).symlink_to(ROOT / folder, target_is_directory=True)
    return config
