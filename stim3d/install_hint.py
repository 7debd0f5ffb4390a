"""THE install command a message names when an extra is missing: one place, so no hint says `pip install stim3d`.

stim3d is not published on a package index (docs/release.md says how a release would
be), so `pip install "stim3d[export]"` cannot work. What can work depends on how this
copy of stim3d got here, told apart without the network:

- a source checkout (the package's parent folder holds stim3d's pyproject.toml; an
  editable install or `python -m stim3d` from the checkout): `pip install -e '.[extra]'`,
  with the checkout's path instead of `.` when the working folder is elsewhere;
- an install from a local wheel or folder (pip's `direct_url.json` in the
  distribution's metadata names it): that same wheel or folder with the extra;
- anything else (no record of where it came from): the wheel's file name,
  `stim3d-<version>-py3-none-any.whl`, which is what `python -m build` makes.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from urllib.parse import unquote, urlparse

from stim3d.version import __version__

DISTRIBUTION = "stim3d"


def source_checkout() -> Path | None:
    """The checkout this stim3d is imported from, or None when it is an installed copy."""
    root = Path(__file__).resolve().parent.parent
    pyproject = root / "pyproject.toml"
    try:
        text = pyproject.read_text(encoding="utf-8")
    except OSError:
        return None
    return root if f'name = "{DISTRIBUTION}"' in text else None


def installed_from() -> str | None:
    """The local wheel file or folder pip installed this distribution from (its direct_url.json), if any."""
    from importlib import metadata

    try:
        text = metadata.distribution(DISTRIBUTION).read_text("direct_url.json")
        url = json.loads(text)["url"] if text else None
    except (metadata.PackageNotFoundError, ValueError, KeyError, TypeError):
        return None
    if not isinstance(url, str) or not url.startswith("file://"):
        return None
    return unquote(urlparse(url).path) or None


def wheel_name() -> str:
    """The file name `python -m build` gives stim3d's wheel (pure Python: py3-none-any)."""
    return f"{DISTRIBUTION}-{__version__}-py3-none-any.whl"


def install_hint(extra: str = "") -> str:
    """The pip command that installs this copy of stim3d with `extra` (export, blender, ray, ...; "" for none)."""
    wanted = f"[{extra}]" if extra else ""
    root = source_checkout()
    if root is not None:
        here = Path(os.getcwd()).resolve() == root
        return f"pip install -e '{'.' if here else root}{wanted}'"
    source = installed_from()
    return f"pip install '{source or wheel_name()}{wanted}'"
