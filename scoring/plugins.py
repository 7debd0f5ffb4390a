"""Plug-in callables named by an entry point or a `module:function`: the one lookup scoring cores and judges share."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from importlib.metadata import entry_points
from typing import Any


def registered(group: str, builtin: str, builtin_target: str) -> dict[str, str]:
    """{name: "module:function"} of every entry point of `group`, the built-in one included."""
    found = {ep.name: ep.value for ep in entry_points(group=group)}
    return {builtin: builtin_target, **found}


def load_callable(spec: str, available: dict[str, str], *, group: str, option: str, noun: str, label: str,
                  error: type[ValueError]) -> Callable[..., Any]:
    """The callable `spec` names: a registered name, or `module:function`; `error` (one line) otherwise.

    `option` (e.g. --judge), `noun` (judge) and `label` (judge) word the messages for the plug-in kind.
    """
    target = spec if ":" in spec else available.get(spec)
    if target is None:
        raise error(f"{option} {spec}: no {noun} of that name in entry-point group {group} "
                    f"(registered: {', '.join(sorted(available))}); or give module:function")
    module_name, _, attribute = target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise error(f"{label} {spec} ({target}): cannot import {module_name!r}: {exc}") from None
    function = getattr(module, attribute, None)
    if not callable(function):
        raise error(f"{label} {spec} ({target}): {module_name} has no function {attribute!r}")
    return function
