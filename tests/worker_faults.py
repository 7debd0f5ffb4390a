"""Faults injected into real batch workers through `STIM3D_WORKER_HOOK` (render/batch/executors/jobs.py).

`fault_env(abort=..., hang=..., hang_startup=...)` gives the environment a test passes to
`stim3d render` (or sets with monkeypatch): every new worker, local process or Ray actor,
runs `install` from this file before its backend loads. A worker then aborts on the item
ids of STIM3D_TEST_ABORT_ITEMS, sleeps on those of STIM3D_TEST_HANG_ITEMS as a hung render
would, or never gets ready with STIM3D_TEST_HANG_STARTUP. The sleeps are bounded
(HANG_SECONDS, far past any timeout a test sets).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

HANG_SECONDS = 600


def fault_env(abort: str | list[str] = (), hang: str | list[str] = (), hang_startup: bool = False) -> dict[str, str]:
    def ids(value: str | list[str]) -> str:
        return value if isinstance(value, str) else ",".join(value)

    env = {"STIM3D_WORKER_HOOK": f"{Path(__file__).resolve()}:install",
           "STIM3D_TEST_ABORT_ITEMS": ids(abort), "STIM3D_TEST_HANG_ITEMS": ids(hang)}
    if hang_startup:
        env["STIM3D_TEST_HANG_STARTUP"] = "1"
    return env


def install() -> None:
    """Run in a new worker: hang now if asked, else wrap `Worker.run` to abort or hang on the named items."""
    from stim3d.render.batch.executors.jobs import Worker

    if os.environ.get("STIM3D_TEST_HANG_STARTUP"):
        time.sleep(HANG_SECONDS)
    aborting = set(filter(None, os.environ.get("STIM3D_TEST_ABORT_ITEMS", "").split(",")))
    hanging = set(filter(None, os.environ.get("STIM3D_TEST_HANG_ITEMS", "").split(",")))
    original = Worker.run

    def run(self: Worker, job):  # type: ignore[no-untyped-def]
        if job.item_id in aborting:
            os.abort()
        if job.item_id in hanging:
            time.sleep(HANG_SECONDS)
        return original(self, job)

    Worker.run = run  # type: ignore[method-assign]
