"""Shared by the batch tests: a tiny Cycles config, running the CLI, comparing batch folders."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections import deque
from pathlib import Path

from stim3d.render.batch.executors.jobs import Job, Outcome
from stim3d.render.batch.executors.schedule import WorkerEvent
from stim3d.render.batch.plan import ItemPlan

ROOT = Path(__file__).resolve().parents[1]
# --item-timeout for the tests that hang one item on purpose (tests/worker_faults.py): far below its ten
# minutes, yet well above a 64x48 raster item on two busy cores (at 5 s, items that were not hung timed out
# under a load average of 6).
ITEM_TIMEOUT = 15

# Tiny Cycles renders (64x48, 4 samples): a fraction of a second each, and bit-identical across
# processes and thread counts, which is what "identical output" is checked against.
TINY_CONFIG = """\
seed: {seed}
render: {{engine: cycles, width: 64, height: 48, samples: 4, denoise: false}}
tasks:
  - family: shape_count
    count: {count}
    grid: {{n_shape_types: [1, 2, 3], min_visibility: [0.7, 0.9]}}
    params: {{max_instances: 2}}
  - family: shape_color_count
    count: 3
    grid: {{n_shape_types: [2]}}
    params: {{max_instances: 2}}
"""

# Raster shape-count batches (no Blender): the hardening tests' folders to break, resume and refuse.
RASTER_CONFIG = """\
seed: 9
render: {{engine: raster, width: 64, height: 48, samples: 1}}
tasks:
  - family: shape_count
    count: {count}
    params: {{max_instances: 2}}
"""


def render_reference_batch(folder: Path) -> tuple[Path, Path]:
    """(config, out) of one uninterrupted one-worker run of TINY_CONFIG (the session fixture `reference_batch`)."""
    config = write_config(folder)
    result = stim3d("render", str(config), "--out", str(folder / "out"), "--quiet")
    assert result.returncode == 0, result.stderr
    return config, folder / "out"


def write_config(folder: Path, name: str = "batch.yaml", seed: int = 11, count: int = 6) -> Path:
    path = folder / name
    path.write_text(TINY_CONFIG.format(seed=seed, count=count))
    return path


def stim3d(*args: str, env: dict[str, str] | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "stim3d", *args], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, timeout=timeout)


def start_stim3d(*args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "stim3d", *args], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def complete_items(out: Path) -> list[str]:
    items = out / "items"
    return sorted(p.name for p in items.iterdir() if not p.name.startswith(".")) if items.is_dir() else []


def temporaries(out: Path) -> list[str]:
    return sorted(str(p.relative_to(out)) for p in out.rglob(".*tmp*"))


def batch_files(out: Path) -> dict[str, bytes]:
    """Everything that must be identical between two runs of one config: item files and records.

    timing.json and summary.json hold wall-clock times and are left out on purpose.
    """
    files = {"records.jsonl": (out / "records.jsonl").read_bytes()}
    for folder in sorted((out / "items").iterdir()):
        for name in ("item.json", "image.png", "mask.png"):
            files[f"items/{folder.name}/{name}"] = (folder / name).read_bytes()
    return files


def assert_same_batch(actual: Path, expected: Path) -> None:
    got, want = batch_files(actual), batch_files(expected)
    assert sorted(got) == sorted(want), set(got) ^ set(want)
    differing = [name for name in want if got[name] != want[name]]
    assert not differing, f"{actual} differs from {expected} in {differing}"


def children_of(pid: int) -> list[int]:
    """Child process ids (Linux /proc)."""
    found = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            found += [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            pass
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
    except OSError:
        return False
    return state != "Z"


def wait_until(condition, timeout: float, interval: float = 0.05) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(interval)
    return condition()


class ScriptedPool:
    """Workers that do what `script[item_id]` says: a list of behaviours, one per attempt.

    Behaviours: "ok", "crash" (the worker dies), "error" (an exception), "infeasible",
    "hang" (no answer ever comes). Workers: `dead_on_start` (each dies before it is ready),
    `hung_starts` (the first N never get ready). Records which worker ran what, and which were
    stopped or killed.
    """

    def __init__(self, script: dict[str, list[str]] | None = None, dead_on_start: bool = False, hung_starts: int = 0):
        self.script = {k: deque(v) for k, v in (script or {}).items()}
        self.dead_on_start = dead_on_start
        self.hung_starts = hung_starts
        self.events: deque[WorkerEvent] = deque()
        self.started = 0
        self.ran: dict[int, list[str]] = {}  # worker -> item ids it was given, in order
        self.ahead: dict[str, str | None] = {}  # item id -> the item reserved as that worker's next
        self.stopped: list[int] = []
        self.killed: list[int] = []

    def start(self) -> int:
        handle, self.started = self.started, self.started + 1
        self.ran[handle] = []
        if handle < self.hung_starts:
            return handle  # no event ever comes
        self.events.append(WorkerEvent(handle, "died", reason="exit code 1") if self.dead_on_start else WorkerEvent(handle, "ready"))
        return handle

    def submit(self, handle: int, job: Job) -> None:
        self.ran[handle].append(job.item_id)
        self.ahead[job.item_id] = job.ahead.item_id if job.ahead else None
        behaviour = self.script.get(job.item_id, deque()).popleft() if self.script.get(job.item_id) else "ok"
        if behaviour == "crash":
            self.events.append(WorkerEvent(handle, "died", reason="worker process killed by SIGABRT"))
        elif behaviour == "error":
            self.events.append(WorkerEvent(handle, "done", Outcome(job.item_id, "error", reason="RuntimeError: boom")))
        elif behaviour == "hang":
            pass
        elif behaviour == "infeasible":
            self.events.append(WorkerEvent(handle, "done", Outcome(job.item_id, "infeasible",
                                                              reason="constraint 'min_visibility' could not be met")))
        else:
            self.events.append(WorkerEvent(handle, "done", Outcome(job.item_id, "rendered", seconds=1.0)))

    def wait(self, timeout: float | None = None) -> list[WorkerEvent]:
        if not self.events:  # only hung workers left: the time runs out
            assert timeout is not None, "waiting forever on a hung worker"
            time.sleep(timeout)
            return []
        return [self.events.popleft()]

    def stop(self, handle: int) -> None:
        self.stopped.append(handle)

    def kill(self, handle: int) -> None:
        self.killed.append(handle)

    def shutdown(self) -> None:
        pass


def jobs(n: int) -> list[Job]:
    return [Job(ItemPlan(f"item-{i}", "shape_count", {}, 0, i, "test"), key="k") for i in range(n)]


def render_cone_sweep(base: Path) -> Path:
    """A Workbench occlusion sweep of the hand-made three-object scene, its cone at 0.3-1.0 visible in 0.1 steps:
    the sweep folder the staircase tests (models and people) run on."""
    from tests.helpers import counting_item, three_objects

    source = base / "source"
    source.mkdir()
    (source / "item.json").write_text(counting_item(three_objects(), "cone").to_json())
    result = stim3d("sweep", "occlusion", str(source), "--levels", "0.3:1.0:0.1", "--out", str(base / "sweep"),
                    "--target", "1", "--occluder", "2", "--engine", "workbench", "--quiet")
    assert result.returncode == 0, result.stderr
    return base / "sweep"
