"""The task families, by name, found through the entry-point group `stim3d.families`.

The built-in families register in stim3d's own pyproject.toml exactly as a third
party's plug-in does in its own (docs/plugins.md):

```toml
[project.entry-points."stim3d.families"]
my_family = "my_package.my_family"          # a module that defines FAMILY = Family(...)
```

An entry point names a module defining `FAMILY` (a `Family`) or the `Family` object
itself. Plug-ins are loaded on first use, once per process; a plug-in that cannot
be imported, or whose family name differs from its entry-point name, is not
registered, and asking for it raises `FamilyError` naming the distribution and the
cause (`stim3d families` lists such plug-ins with their error).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from importlib.metadata import EntryPoint, entry_points
from types import ModuleType

from .base import Composed, Family, FamilyParams, Frame

GROUP = "stim3d.families"
NAME = re.compile(r"[a-z][a-z0-9_]{0,39}")  # family names become item-id prefixes and folder names


class FamilyError(KeyError):
    """An unknown family, or a plug-in that could not be loaded. `str()` is the one-line message."""

    def __str__(self) -> str:
        return str(self.args[0])


@dataclass(frozen=True)
class PluginInfo:
    """Where a family came from: its entry point, the distribution that declared it, and any load error."""

    name: str
    target: str
    distribution: str
    error: str | None = None


def _load(entry_point: EntryPoint) -> Family:
    loaded = entry_point.load()
    family = getattr(loaded, "FAMILY", None) if isinstance(loaded, ModuleType) else loaded
    if not isinstance(family, Family):
        raise TypeError(f"{entry_point.value} does not define FAMILY = Family(...)")
    if family.name != entry_point.name:
        raise ValueError(f"its family is named {family.name!r}, not {entry_point.name!r} as the entry point says")
    return family


class _Registry(Mapping[str, Family]):
    """Family name -> Family, loaded from the entry points on first access."""

    def __init__(self) -> None:
        self._families: dict[str, Family] | None = None
        self.plugins: dict[str, PluginInfo] = {}

    def _loaded(self) -> dict[str, Family]:
        if self._families is None:
            families: dict[str, Family] = {}
            for entry_point in sorted(entry_points(group=GROUP), key=lambda ep: ep.name):
                dist = entry_point.dist.name if entry_point.dist is not None else "?"
                error = None
                if entry_point.name in self.plugins:
                    error = f"the name is also registered by {self.plugins[entry_point.name].distribution}"
                elif not NAME.fullmatch(entry_point.name):
                    error = "a family name is 1-40 characters of a-z, 0-9 and _, starting with a letter"
                else:
                    try:
                        families[entry_point.name] = _load(entry_point)
                    except Exception as exc:  # noqa: BLE001 - a broken plug-in must not break the others
                        error = f"{type(exc).__name__}: {exc}".splitlines()[0]
                self.plugins.setdefault(entry_point.name, PluginInfo(entry_point.name, entry_point.value, dist, error))
            self._families = families
        return self._families

    def __getitem__(self, name: str) -> Family:
        return self._loaded()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._loaded())

    def __len__(self) -> int:
        return len(self._loaded())


FAMILIES = _Registry()


def get_family(name: str) -> Family:
    """The family called `name`; FamilyError (one line: what is wrong, what is allowed) otherwise."""
    if name in FAMILIES:
        return FAMILIES[name]
    broken = FAMILIES.plugins.get(name)
    if broken is not None and broken.error:
        raise FamilyError(f"family {name!r} (from {broken.distribution}, {broken.target}) could not be loaded: "
                          f"{broken.error}")
    raise FamilyError(f"unknown family {name!r}; allowed: {', '.join(sorted(FAMILIES))}")


def plugins() -> list[PluginInfo]:
    """Every entry point of the group, loaded or not, in name order."""
    FAMILIES._loaded()
    return [FAMILIES.plugins[name] for name in sorted(FAMILIES.plugins)]


__all__ = ["Composed", "FAMILIES", "Family", "FamilyError", "FamilyParams", "Frame", "PluginInfo", "get_family",
           "plugins"]
