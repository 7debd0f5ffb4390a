"""The shipped ready configs (`<name>.yaml` here), found by name through importlib.resources.

`stim3d render dysm3d --out out` and `stim3d validate demo` name a preset; any other
argument is a config path. Resolving through the package (not the repository) makes
the names work from any directory with an installed stim3d.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

SUFFIX = ".yaml"


def preset_names() -> list[str]:
    """The shipped presets' names, sorted (a preset is `scenes/presets/<name>.yaml`)."""
    folder = resources.files(__name__)
    return sorted(entry.name[: -len(SUFFIX)] for entry in folder.iterdir() if entry.name.endswith(SUFFIX))


def preset_path(name: str) -> Path | None:
    """The file of preset `name`, or None when no preset has that name.

    Only the listed names resolve (never a path built from the caller's text), so a
    name cannot reach outside the package. Installed packages are plain files (wheels
    unpack), so the resource is a real path that the config loader can open.
    """
    if name not in preset_names():
        return None
    return Path(str(resources.files(__name__) / f"{name}{SUFFIX}"))
