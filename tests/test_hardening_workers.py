"""Workers stay within --workers through crashes, errors and start-up deaths; retries are counted; nothing is left in TMPDIR.

The policy is checked on a scripted pool that counts live workers exactly (every
kind of death, hundreds of seeded scenarios); the real thing by rendering with
workers that abort (the STIM3D_FAULT_ITEM hook) while the test counts the batch's
worker processes in /proc.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from stim3d.render.batch.executors import schedule
from stim3d.render.batch.executors.jobs import BatchAborted, JobContext, Outcome
from stim3d.render.batch.executors.local import LocalPool
from stim3d.render.batch.executors.schedule import WorkerEvent
from stim3d.render.settings import RenderSettings
from tests.batch_support import ITEM_TIMEOUT, ROOT, ScriptedPool, children_of, jobs, stim3d
from tests.worker_faults import fault_env


class CountingPool(ScriptedPool):
    """A scripted pool that knows how many worker processes are alive, as the OS would.

    A worker is alive from `start` until it crashes (dies at once), dies while starting,
    or is stopped. `peak` is the most that were ever alive together.
    """

    def __init__(self, script=None, dead_on_start_workers: set[int] | None = None):
        super().__init__(script)
        self.dead_on_start_workers = dead_on_start_workers or set()
        self.live: set[int] = set()
        self.peak = 0

    def start(self) -> int:
        handle = self.started
        if handle in self.dead_on_start_workers:
            self.started += 1
            self.ran[handle] = []
            self.events.append(WorkerEvent(handle, "died", reason="worker process killed by SIGKILL"))
            return handle
        handle = super().start()
        self.live.add(handle)
        self.peak = max(self.peak, len(self.live))
        return handle

    def submit(self, handle, job) -> None:
        super().submit(handle, job)
        if self.events[-1].kind == "died":
            self.live.discard(handle)  # the process is gone before the parent hears of it

    def stop(self, handle: int) -> None:
        super().stop(handle)
        self.live.discard(handle)

    def wait(self, timeout: float | None = None) -> list[WorkerEvent]:
        return [self.events.popleft()]


def run_counting(pool: CountingPool, n: int, workers: int) -> dict[str, Outcome]:
    outcomes: dict[str, Outcome] = {}
    schedule(pool, jobs(n), workers, 3, lambda o: outcomes.__setitem__(o.item_id, o))
    return outcomes


@pytest.mark.parametrize("workers", [1, 2, 3])
def test_live_workers_never_exceed_the_limit_whatever_dies(workers):
    """Both workers killed at once, exceptions, crashes on retry: never more than `workers` alive."""
    script = {"item-0": ["crash"], "item-1": ["crash", "crash"], "item-2": ["error"], "item-3": ["error", "crash"],
              "item-4": ["crash"], "item-5": ["error", "error"]}
    pool = CountingPool(script)
    outcomes = run_counting(pool, 12, workers)
    assert sorted(outcomes) == sorted(f"item-{i}" for i in range(12))  # nothing lost
    assert pool.peak <= workers, f"{pool.peak} workers alive with --workers {workers}"
    assert outcomes["item-0"].status == "rendered" and outcomes["item-0"].attempts == 2
    assert outcomes["item-1"].status == "crashed" and outcomes["item-5"].status == "error"


def test_live_workers_never_exceed_the_limit_in_random_fault_scenarios():
    rng = np.random.default_rng(14)
    behaviours = ["ok", "ok", "ok", "crash", "error"]
    for _ in range(300):
        workers, n = int(rng.integers(1, 5)), int(rng.integers(1, 15))
        # the first item renders, so the "first items all failed" stop does not end the scenario early
        script = {f"item-{i}": [str(rng.choice(behaviours)) for _ in range(2)] for i in range(1, n)}
        pool = CountingPool(script)
        outcomes = run_counting(pool, n, workers)
        assert len(outcomes) == n
        assert pool.peak <= workers, (workers, script)
        for item_id, steps in script.items():
            expected_tries = 1 if steps[0] == "ok" else 2
            assert outcomes[item_id].attempts == expected_tries, (item_id, steps)


def test_one_worker_dying_at_start_up_does_not_abort_the_batch():
    pool = CountingPool(dead_on_start_workers={0})  # the first worker is killed while importing Blender
    outcomes = run_counting(pool, 6, workers=2)
    assert all(o.status == "rendered" for o in outcomes.values()) and len(outcomes) == 6
    assert pool.peak <= 2


def test_workers_that_never_start_still_stop_the_run():
    with pytest.raises(BatchAborted, match="could not start"):
        run_counting(CountingPool(dead_on_start_workers=set(range(100))), 4, workers=2)


# -- the real executor ---------------------------------------------------------------------------

RASTER_CONFIG = """\
seed: 5
render: {engine: raster, width: 64, height: 48, samples: 1}
tasks:
  - family: shape_count
    count: 10
    params: {max_instances: 2}
"""


def _worker_pids(pid: int) -> list[int]:
    """The batch's worker processes (spawned children running multiprocessing's spawn_main)."""
    found = []
    for child in children_of(pid):
        try:
            if b"spawn_main" in Path(f"/proc/{child}/cmdline").read_bytes():
                state = Path(f"/proc/{child}/stat").read_text().split(")")[-1].split()[0]
                found += [child] if state != "Z" else []
        except OSError:
            pass
    return found


def test_killed_workers_are_replaced_within_the_limit_and_retries_are_counted(tmp_path):
    config = tmp_path / "batch.yaml"
    config.write_text(RASTER_CONFIG)
    out = tmp_path / "out"
    faulty = [f"shape_count-t0-{i:05d}" for i in (1, 2, 5, 8)]  # each aborts its worker, twice
    proc = subprocess.Popen([sys.executable, "-m", "stim3d", "render", str(config), "--out", str(out), "--workers", "2"],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, **fault_env(abort=faulty)})
    peak, samples = 0, 0
    while proc.poll() is None:
        peak = max(peak, len(_worker_pids(proc.pid)))
        samples += 1
        time.sleep(0.005)
    stdout, stderr = proc.communicate()
    assert proc.returncode == 1, stderr  # some items failed; the batch finished
    assert samples > 20 and 1 <= peak <= 2, f"{peak} worker processes with --workers 2 ({samples} samples)"
    summary = json.loads((out / "summary.json").read_text())
    assert sorted(summary["failed"]) == faulty and summary["rendered"] == 6
    assert summary["retries"] == 4 and all(summary["attempts"][i] == 2 for i in faulty)
    assert "retried after a worker died or raised: 4" in stdout
    assert "retried 4" in stderr.splitlines()[-1]  # the progress line counts them too


def test_a_hung_item_costs_its_timeout_not_the_batch(tmp_path):
    config = tmp_path / "batch.yaml"
    config.write_text(RASTER_CONFIG)
    out = tmp_path / "out"
    hung = "shape_count-t0-00003"  # its worker sleeps as a hung render would (tests/worker_faults.py)
    started = time.monotonic()
    done = stim3d("render", str(config), "--out", str(out), "--workers", "2", "--item-timeout", str(ITEM_TIMEOUT),
                  "--quiet", env=fault_env(hang=hung))
    assert done.returncode == 1, done.stderr  # that item failed; the batch finished
    assert time.monotonic() - started < 120  # two timeouts and nine items, not the hook's ten minutes
    summary = json.loads((out / "summary.json").read_text())
    assert list(summary["failed"]) == [hung] and summary["rendered"] == 9
    assert summary["failed"][hung] == {
        "reason": f"took longer than the item timeout ({ITEM_TIMEOUT} s); its worker was stopped", "attempts": 2}
    assert f"failed {hung}: took longer than the item timeout ({ITEM_TIMEOUT} s)" in done.stderr


def test_a_worker_that_hangs_while_starting_is_killed_and_cannot_hold_the_batch(tmp_path, monkeypatch):
    """Real worker processes that never get ready (tests/worker_faults.py): each is killed at the
    start-up timeout, and three in a row stop the run with one line instead of waiting forever."""
    for name, value in fault_env(hang_startup=True).items():
        monkeypatch.setenv(name, value)
    context = JobContext(0, RenderSettings(engine="raster", width=64, height=48), tmp_path / "out")
    started = time.monotonic()
    with pytest.raises(BatchAborted) as caught:
        schedule(LocalPool(context), jobs(2), 1, 50, lambda outcome: None, startup_timeout=3)
    assert str(caught.value) == "a worker process could not start (3 tries): not ready after 3 s; it was stopped"
    assert time.monotonic() - started < 60  # three timeouts, not the hook's ten minutes
    assert _worker_pids(os.getpid()) == []  # each hung worker was killed, not left behind


def test_a_bad_item_timeout_is_one_line(tmp_path):
    done = stim3d("render", "demo", "--out", str(tmp_path / "out"), "--item-timeout", "0")
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "stim3d: error: argument --item-timeout: '0': give a positive number of seconds (see 'stim3d render --help')"]


@pytest.mark.bpy
def test_workers_leave_nothing_in_the_temporary_folder(tmp_path):
    """Blender makes a temp folder at import; a worker's TMPDIR is its own scratch space, removed with it."""
    config = tmp_path / "batch.yaml"
    config.write_text(RASTER_CONFIG.replace("engine: raster", "engine: workbench").replace("count: 10", "count: 2"))
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    result = stim3d("render", str(config), "--out", str(tmp_path / "out"), "--workers", "2", "--quiet",
                    env={"TMPDIR": str(tmpdir)})
    assert result.returncode == 0, result.stderr
    assert list(tmpdir.iterdir()) == []


EXTENSIONS_LOADED_BY_A_RENDER = """
import importlib.machinery, json, sys
from stim3d import api
from stim3d.render.batch.executors.jobs import import_backend
from stim3d.render.settings import RenderSettings

def extensions():
    return {name for name, module in list(sys.modules.items())
            if (getattr(module, "__file__", None) or "").endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES))}

settings = RenderSettings(engine=sys.argv[1], width=64, height=48, samples=2)
import_backend(settings)
before = extensions()
item = api.compose("shape_count", {"max_instances": 2}, seed=3, width=64, height=48)
api.render_items([item], sys.argv[2], settings)
print(json.dumps(sorted(extensions() - before)))
"""


@pytest.mark.bpy
@pytest.mark.parametrize("engine", ["workbench", "cycles"])
def test_a_worker_loads_every_extension_module_before_it_composes_ahead(tmp_path, engine):
    """After import_backend (worker start) a render loads no new extension module.

    A worker composes its next item on a thread (Embree) while it renders; a worker whose
    first render loaded bpy then hung for good in the dynamic loader. So nothing a render
    needs may be first loaded after the worker starts: the list of new ones must be empty.
    """
    result = subprocess.run([sys.executable, "-c", EXTENSIONS_LOADED_BY_A_RENDER, engine, str(tmp_path / "out")],
                            capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    assert json.loads(result.stdout.strip().splitlines()[-1]) == []
