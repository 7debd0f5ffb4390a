"""Plug-in callables named by an entry point or a `module:function`: the one lookup scoring cores and judges share.

A plug-in is someone else's code running inside stim3d, so it is isolated (docs/hardening.md,
"Plug-in isolation"): whatever its module raises while being imported (a syntax error,
SystemExit included) and whatever the call raises or however long it hangs becomes one
line naming the plug-in (`load_callable`, `call_bounded`), never a traceback or a stuck command.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable
from importlib.metadata import entry_points
from typing import Any

SHOWN = 120  # characters of a plug-in's error message or return value echoed into a line


def describe(exc: BaseException) -> str:
    """`Type: first line of the message`, cut to SHOWN characters; for SystemExit, what it did."""
    if isinstance(exc, SystemExit):
        return f"it called sys.exit({exc.code!r})"[:SHOWN]
    text = str(exc).strip()
    line = f"{type(exc).__name__}: {text.splitlines()[0]}" if text else type(exc).__name__
    return line if len(line) <= SHOWN else line[:SHOWN - 3] + "..."


def shown(value: object) -> str:
    """repr(value) cut to SHOWN characters."""
    text = repr(value)
    return text if len(text) <= SHOWN else text[:SHOWN - 3] + "..."


def call_bounded(function: Callable[..., Any], args: tuple[Any, ...], *, seconds: float, label: str,
                 error: type[ValueError]) -> Any:
    """`function(*args)`, or `error` (one line naming `label`) if it raises anything or runs longer than `seconds`.

    The call runs on a daemon thread the command waits for: a plug-in that hangs is abandoned (the process can
    still exit), and Ctrl-C or SIGTERM still reach the main thread while it waits.
    """
    outcome: dict[str, Any] = {}

    def target() -> None:
        try:
            outcome["value"] = function(*args)
        except BaseException as exc:  # noqa: BLE001 - reported on the main thread, SystemExit included
            outcome["error"] = exc

    thread = threading.Thread(target=target, name=f"stim3d {label}", daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        raise error(f"{label} did not return within {seconds:g} s; it was abandoned (raise the timeout if it needs longer)")
    if "error" in outcome:
        raise error(f"{label} failed: {describe(outcome['error'])}")
    return outcome.get("value")


def registered(group: str, builtin: str, builtin_target: str) -> dict[str, str]:
    """{name: "module:function"} of every entry point of `group`, the built-in one included."""
    found = {ep.name: ep.value for ep in entry_points(group=group)}
    return {builtin: builtin_target, **found}


def load_callable(spec: str, available: dict[str, str], *, group: str, option: str, noun: str, label: str,
                  error: type[ValueError]) -> Callable[..., Any]:
    """The callable `spec` names: a registered name, or `module:function`; `error` (one line) otherwise.

    `option` (the setting in backticks, e.g. `judge`: stim3d's command names it by its flag), `noun` (judge) and
    `label` (judge) word the messages for the plug-in kind.
    """
    target = spec if ":" in spec else available.get(spec)
    if target is None:
        raise error(f"{option} {spec}: no {noun} of that name in entry-point group {group} "
                    f"(registered: {', '.join(sorted(available))}); or give module:function")
    module_name, _, attribute = target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # noqa: BLE001 - a syntax error, a crash or sys.exit at import: one line
        raise error(f"{label} {spec} ({target}): cannot import {module_name!r}: {describe(exc)}") from None
    function = getattr(module, attribute, None)
    if not callable(function):
        raise error(f"{label} {spec} ({target}): {module_name} has no function {attribute!r}")
    return function
