"""The task families, by name, found through the entry-point group `stim3d.families`.

The built-in families register in stim3d's own pyproject.toml exactly as a third
party's plug-in does in its own (docs/plugins.md):

```toml
[project.entry-points."stim3d.families"]
my_family = "my_package.my_family"          # a module that defines FAMILY = Family(...)
```

An entry point names a module defining `FAMILY` (a `Family`) or the `Family` object
itself. Plug-ins are loaded on first use, once per process, in isolation
(docs/hardening.md, "Plug-in isolation"): a plug-in that cannot be imported (any
exception, `sys.exit` included), whose family name differs from its entry-point name,
that registers a name stim3d's own families use (the built-in is kept), or that shares
its name with another plug-in (neither is loaded) is not registered. Asking for it
raises `FamilyError` naming the distribution and the cause, and `stim3d families`
lists it as NOT LOADED with that cause.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from importlib.metadata import EntryPoint, entry_points
from types import ModuleType

from stim3d.errors import Stim3dError

from .base import Composed, Family, FamilyParams, Frame

GROUP = "stim3d.families"
NAME = re.compile(r"[a-z][a-z0-9_]{0,39}")  # family names become item-id prefixes and folder names


class FamilyError(Stim3dError, LookupError):
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


BUILTIN_DISTRIBUTION = "stim3d"  # entry points this distribution declares are the built-in families
SHOWN = 80  # characters of a name or an error echoed into a message


def clip(text: str, limit: int = SHOWN) -> str:
    """`text` cut to `limit` characters (with an ellipsis): a 1 MB name must not become a 1 MB error line."""
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _load(entry_point: EntryPoint) -> Family:
    loaded = entry_point.load()
    family = getattr(loaded, "FAMILY", None) if isinstance(loaded, ModuleType) else loaded
    if not isinstance(family, Family):
        raise TypeError(f"{entry_point.value} does not define FAMILY = Family(...)")
    if family.name != entry_point.name:
        raise ValueError(f"its family is named {clip(repr(family.name))}, not {entry_point.name!r} as the entry point says")
    return family


def load_error(exc: BaseException) -> str:
    """One line for whatever a plug-in raised while being imported (SystemExit and other BaseExceptions too)."""
    if isinstance(exc, SystemExit):
        return f"it called sys.exit({clip(repr(exc.code))}) while being imported"
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return clip(f"{type(exc).__name__}: {text}" if text else type(exc).__name__, 200)


def _distribution(entry_point: EntryPoint) -> str:
    return entry_point.dist.name if entry_point.dist is not None else "?"


def _is_builtin(entry_point: EntryPoint) -> bool:
    return _distribution(entry_point).lower().replace("_", "-") == BUILTIN_DISTRIBUTION


class _Registry(Mapping[str, Family]):
    """Family name -> Family, loaded from the entry points on first access.

    `plugins` holds, per name, the entry point that provides it (or the first refused one);
    `refused` every other entry point of a name that was not loaded from it.
    """

    def __init__(self) -> None:
        self._families: dict[str, Family] | None = None
        self.plugins: dict[str, PluginInfo] = {}
        self.refused: list[PluginInfo] = []

    def _loaded(self) -> dict[str, Family]:
        if self._families is None:
            families: dict[str, Family] = {}
            by_name: dict[str, list[EntryPoint]] = {}
            for entry_point in sorted(entry_points(group=GROUP), key=lambda ep: (ep.name, _distribution(ep))):
                by_name.setdefault(entry_point.name, []).append(entry_point)
            for name, candidates in by_name.items():
                builtin = [ep for ep in candidates if _is_builtin(ep)][:1]
                others = [ep for ep in candidates if ep not in builtin]
                refused: list[tuple[EntryPoint, str]] = []
                if builtin:  # a plug-in never replaces one of stim3d's own families
                    refused = [(ep, "the name is a built-in stim3d family; the built-in is kept") for ep in others]
                elif len(others) > 1:  # no way to tell which one the user meant: neither is loaded
                    refused = [(ep, "the name is also registered by " + ", ".join(
                        _distribution(o) for o in others if o is not ep) + "; neither is loaded") for ep in others]
                chosen = builtin[0] if builtin else others[0] if len(others) == 1 else None
                for entry_point, why in refused:
                    info = PluginInfo(name, entry_point.value, _distribution(entry_point), why)
                    if chosen is None and name not in self.plugins:
                        self.plugins[name] = info
                    else:
                        self.refused.append(info)
                if chosen is None:
                    continue
                error = None
                if not NAME.fullmatch(name):
                    error = "a family name is 1-40 characters of a-z, 0-9 and _, starting with a letter"
                else:
                    try:
                        families[name] = _load(chosen)
                    except KeyboardInterrupt:
                        raise
                    except BaseException as exc:  # noqa: BLE001 - a broken plug-in (even sys.exit) must not break stim3d
                        error = load_error(exc)
                self.plugins[name] = PluginInfo(clip(name), chosen.value, _distribution(chosen), error)
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
    raise FamilyError(f"unknown family {clip(repr(name))}; allowed: {', '.join(sorted(FAMILIES))}")


def plugins() -> list[PluginInfo]:
    """Every entry point of the group, loaded or not (refused ones included), in name order."""
    FAMILIES._loaded()
    every = [*FAMILIES.plugins.values(), *FAMILIES.refused]
    return sorted(every, key=lambda info: (info.name, info.error is not None, info.distribution))


__all__ = ["Composed", "FAMILIES", "Family", "FamilyError", "FamilyParams", "Frame", "PluginInfo", "clip",
           "get_family", "plugins"]
