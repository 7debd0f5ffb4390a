"""Which code made an output: stim3d's version, the families' generator revisions, library versions, git commit.

Two kinds of identity, kept apart on purpose:

- What decides an item's content (`stim3d_version`, the family's `revision`, the
  versions of the libraries that measure and render it) goes into item.json and the
  records. These are the same for a checkout and a wheel install of the same
  release, so the same config gives the same bytes either way.
- The git commit of a checkout identifies a *run*, not an output: every commit
  (even one that only edits a README) would otherwise change every item.json. It
  goes into batch.json and summary.json only (`code_identity`).

Everything is looked up once per process and never reads the clock.
"""

from __future__ import annotations

import functools
import subprocess
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from stim3d.version import __version__

LIBRARIES = ("bpy", "numpy", "trimesh", "embreex")


@functools.cache
def library_versions() -> dict[str, str | None]:
    """Installed versions of the libraries that shape an item (None when one is not installed).

    Read from the installed distributions' metadata, so nothing heavy (bpy) is imported.
    """
    versions: dict[str, str | None] = {}
    for name in LIBRARIES:
        try:
            versions[name] = version(name)
        except PackageNotFoundError:
            versions[name] = None
    return versions


@functools.cache
def git_commit() -> str | None:
    """The commit of the checkout stim3d runs from, with `-dirty` when tracked files differ; None for an install."""
    root = Path(__file__).resolve().parents[2]  # stim3d/render/provenance.py -> the checkout
    if not (root / ".git").exists():
        return None
    try:
        commit = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True,
                                timeout=10, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=30, check=True).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return f"{commit}-dirty" if dirty else commit or None


def family_revisions(names: list[str] | set[str]) -> dict[str, int | None]:
    """The generator revision of each named family (None for a family that is not registered)."""
    from stim3d.scenes.families import FAMILIES

    return {name: (FAMILIES[name].revision if name in FAMILIES else None) for name in sorted(names)}


def family_distributions(names: list[str] | set[str]) -> dict[str, str | None]:
    """'<distribution> <version>' of the package that registered each named family (a plug-in's or stim3d's
    own), so a batch says which release of a third party's generator made it; None for an unknown family."""
    from stim3d.scenes.families import plugins

    registered = {plugin.name: plugin.distribution for plugin in plugins()}
    found: dict[str, str | None] = {}
    for name in sorted(names):
        distribution = registered.get(name)
        try:
            found[name] = f"{distribution} {version(distribution)}" if distribution else None
        except PackageNotFoundError:  # a checkout on PYTHONPATH: the name is known, the version is not
            found[name] = distribution
    return found


def shared_revisions_of(names: list[str] | set[str]) -> dict[str, int]:
    """The revisions of the shared family modules the named families use, from revision 2 on.

    A shared module at its first revision is left out, so keys made before the
    shared modules were split out of the families stay the same
    (scenes/families/shared/__init__.py).
    """
    from stim3d.scenes.families import FAMILIES
    from stim3d.scenes.families.shared import shared_modules, shared_revisions

    used = {module for name in names if name in FAMILIES for module in shared_modules(FAMILIES[name].compose.__module__)}
    return shared_revisions(used)


def code_identity(family_names: list[str] | set[str], *, with_commit: bool = True) -> dict[str, Any]:
    """What batch.json and summary.json record about the code: version, revisions, libraries, git commit.

    `with_commit=False` leaves the commit out: the part a resume must match. The
    revisions of shared family modules join `generator_revisions`' side only once one
    moved past its first revision (`shared_revisions`).
    """
    identity: dict[str, Any] = {"stim3d_version": __version__, "generator_revisions": family_revisions(family_names)}
    if shared := shared_revisions_of(family_names):
        identity["shared_revisions"] = shared
    if with_commit:  # a run's identity: a newer plug-in release need not refuse a resume (its revision does)
        identity["family_distributions"] = family_distributions(family_names)
        identity["libraries"] = library_versions()
        identity["git_commit"] = git_commit()
    return identity
