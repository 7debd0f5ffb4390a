"""The batch driver: failure isolation, retries in fresh workers, recycling, the summary.

The scheduling policy is tested on a scripted in-memory pool (fast, exact); the real thing
(worker processes owning bpy, a worker killed by os.abort) through the command line.
"""

from __future__ import annotations

import io
import json
from types import SimpleNamespace

import pytest

from stim3d.render.batch.config import load_config
from stim3d.render.batch.driver import ProgressEvent
from stim3d.render.batch.executors import schedule
from stim3d.render.batch.executors.jobs import BatchAborted, Outcome, threads_per_worker
from stim3d.render.batch.keys import item_key
from stim3d.render.batch.plan import expand
from stim3d.render.batch.produce import produce_item
from stim3d.render.batch.progress import BatchProgress
from stim3d.render.batch.summary import constant_baselines, percentile
from stim3d.render.settings import RenderSettings
from tests.batch_support import ScriptedPool, complete_items, jobs, stim3d
from tests.worker_faults import fault_env


def run(pool: ScriptedPool, n: int, workers: int = 1, recycle_after: int = 50,
        item_timeout: float | None = None, startup_timeout: float = 600.0) -> dict[str, Outcome]:
    outcomes: dict[str, Outcome] = {}
    schedule(pool, jobs(n), workers, recycle_after, lambda o: outcomes.__setitem__(o.item_id, o), item_timeout,
             startup_timeout)
    return outcomes


def test_a_crashing_item_is_retried_once_in_a_fresh_worker_then_reported_failed():
    pool = ScriptedPool({"item-2": ["crash", "crash"]})
    outcomes = run(pool, 5, workers=2)
    assert sorted(outcomes) == [f"item-{i}" for i in range(5)]  # the batch went on
    failed = outcomes["item-2"]
    assert failed.status == "crashed" and failed.attempts == 2
    assert "2 times" in failed.reason and "SIGABRT" in failed.reason
    assert all(outcomes[f"item-{i}"].status == "rendered" for i in (0, 1, 3, 4))
    runners = [w for w, items in pool.ran.items() if "item-2" in items]
    assert len(runners) == 2 and pool.ran[runners[1]][0] == "item-2"  # the retry was the fresh worker's first item


def test_an_item_that_crashes_once_renders_on_its_retry():
    outcomes = run(ScriptedPool({"item-0": ["crash"]}), 3)
    assert outcomes["item-0"].status == "rendered" and outcomes["item-0"].attempts == 2


def test_an_exception_is_retried_in_a_fresh_worker_and_the_old_one_retired():
    pool = ScriptedPool({"item-1": ["error", "error"]})
    outcomes = run(pool, 3)
    assert outcomes["item-1"].status == "error" and outcomes["item-1"].attempts == 2
    assert "RuntimeError: boom" in outcomes["item-1"].reason
    assert len(pool.stopped) >= 2  # each worker that raised was replaced


def test_a_hung_item_is_killed_at_the_timeout_and_renders_on_its_retry():
    pool = ScriptedPool({"item-1": ["hang", "ok"]})
    outcomes = run(pool, 4, workers=2, item_timeout=0.05)
    assert all(o.status == "rendered" for o in outcomes.values()) and outcomes["item-1"].attempts == 2
    hung = next(w for w, items in pool.ran.items() if "item-1" in items)
    assert pool.killed == [hung]  # killed, not asked: a hung worker would not answer
    retry = [w for w, items in pool.ran.items() if "item-1" in items][1]
    assert pool.ran[retry][0] == "item-1"  # the retry ran first in a fresh worker


def test_an_item_that_hangs_twice_is_reported_with_the_timeout_and_the_batch_goes_on():
    pool = ScriptedPool({"item-0": ["hang", "hang"]})
    outcomes = run(pool, 3, workers=1, item_timeout=0.05)
    assert outcomes["item-0"].status == "error" and outcomes["item-0"].attempts == 2
    assert outcomes["item-0"].reason == "took longer than the item timeout (0.05 s); its worker was stopped"
    assert outcomes["item-1"].status == outcomes["item-2"].status == "rendered" and len(pool.killed) == 2


def test_a_worker_hung_while_starting_is_killed_and_replaced_and_the_batch_renders():
    pool = ScriptedPool(hung_starts=1)
    outcomes = run(pool, 4, workers=1, startup_timeout=0.05)  # no item timeout: start-ups are timed anyway
    assert all(o.status == "rendered" and o.attempts == 1 for o in outcomes.values()) and len(outcomes) == 4
    assert pool.killed == [0] and pool.ran[0] == []  # the hung worker was given nothing


def test_workers_that_never_get_ready_stop_the_batch_with_one_line():
    with pytest.raises(BatchAborted) as caught:
        run(ScriptedPool(hung_starts=99), 3, startup_timeout=0.05)
    assert str(caught.value) == "a worker process could not start (3 tries): not ready after 0.05 s; it was stopped"


def test_an_infeasible_item_is_reported_at_once_naming_the_constraint():
    pool = ScriptedPool({"item-1": ["infeasible"]})
    outcomes = run(pool, 3)
    assert outcomes["item-1"].attempts == 1 and "min_visibility" in outcomes["item-1"].reason
    assert pool.started == 1  # deterministic failure: no retry, no new worker


def test_workers_are_recycled_after_n_items():
    pool = ScriptedPool()
    outcomes = run(pool, 7, workers=1, recycle_after=3)
    assert len(outcomes) == 7
    assert sorted(len(items) for items in pool.ran.values()) == [1, 3, 3]


def test_each_job_carries_the_plan_its_worker_runs_next():
    """What a worker composes while it renders is what it is given next (the last job carries nothing)."""
    pool = ScriptedPool()
    run(pool, 5, workers=1)
    assert pool.ran[0] == [f"item-{i}" for i in range(5)]
    assert [pool.ahead[f"item-{i}"] for i in range(5)] == ["item-1", "item-2", "item-3", "item-4", None]
    pool = ScriptedPool()
    run(pool, 7, workers=1, recycle_after=3)
    assert pool.ahead["item-2"] is None  # its worker is recycled after item-2: nothing to compose ahead


@pytest.mark.parametrize("workers", [1, 2, 3])
def test_a_reserved_job_is_neither_lost_nor_charged_an_attempt_when_its_worker_dies(workers):
    pool = ScriptedPool({"item-0": ["crash"], "item-3": ["error"], "item-4": ["crash", "crash"]})
    outcomes = run(pool, 9, workers=workers)
    assert sorted(outcomes) == [f"item-{i}" for i in range(9)]
    assert {i for i, o in outcomes.items() if o.attempts > 1} == {"item-0", "item-3", "item-4"}
    submitted = [i for items in pool.ran.values() for i in items]
    assert all(submitted.count(f"item-{i}") == 1 for i in (1, 2, 5, 6, 7, 8))  # a reservation is not a run


def test_an_idle_worker_takes_a_job_reserved_by_a_busy_one():
    """At the end of the queue a reservation does not hold an item back from a free worker."""
    pool = ScriptedPool()
    run(pool, 3, workers=2)
    assert sorted(i for items in pool.ran.values() for i in items) == ["item-0", "item-1", "item-2"]
    assert pool.started == 2 and all(items for items in pool.ran.values())


def test_a_broken_setup_stops_the_batch_instead_of_failing_every_item():
    with pytest.raises(BatchAborted, match="first 3 items all failed"):
        run(ScriptedPool({f"item-{i}": ["crash", "crash"] for i in range(10)}), 10)
    with pytest.raises(BatchAborted, match="could not start"):
        run(ScriptedPool(dead_on_start=True), 3)


def test_cycles_threads_split_the_cores_unless_the_config_sets_them():
    assert threads_per_worker(RenderSettings(), cpus=8, workers=3) == 2
    assert threads_per_worker(RenderSettings(), cpus=2, workers=4) == 1
    assert threads_per_worker(RenderSettings(threads=3), cpus=8, workers=4) == 3


def test_best_constant_answer_per_question_type():
    def record(family: str, gold):
        return SimpleNamespace(family=family, answer=SimpleNamespace(type="integer", gold=gold))

    records = [record("shape_count", g) for g in (0, 1, 1, 2)] + [record("shape_color_count", g) for g in (3, 3, 3)]
    baselines = {b.question_type: b for b in constant_baselines(records)}
    assert baselines["shape_count (integer)"].best_answer == "1"
    assert baselines["shape_count (integer)"].accuracy == 0.5 and baselines["shape_count (integer)"].distinct_answers == 3
    assert baselines["shape_color_count (integer)"].accuracy == 1.0
    assert percentile([1.0, 2.0, 3.0, 4.0, 100.0], 95) == 100.0 and percentile([5.0], 95) == 5.0


@pytest.mark.bpy
def test_an_item_composed_ahead_is_the_item_composed_on_its_own(reference_batch, tmp_path):
    """The batch's one worker composed item 4 on a thread while item 3 rendered; its files are those of
    composing and rendering it alone in this process."""
    config_path, expected = reference_batch
    config = load_config(config_path)
    plan = expand(config)[3]
    folder = produce_item(plan, config.seed, config.render, tmp_path / "out", tmp_path / "work",
                          item_key(plan, config.seed, config.render))
    for name in ("item.json", "mask.png", "image.png"):
        assert (folder / name).read_bytes() == (expected / "items" / plan.item_id / name).read_bytes(), name


@pytest.mark.bpy
def test_a_worker_that_aborts_costs_only_its_item(reference_batch, tmp_path):
    config, expected = reference_batch
    faulty = "shape_count-t0-00003"
    out = tmp_path / "out"
    result = stim3d("render", str(config), "--out", str(out), "--workers", "2", env=fault_env(abort=faulty))
    assert result.returncode == 1, result.stderr
    assert complete_items(out) == [i for i in complete_items(expected) if i != faulty]
    for item_id in complete_items(out):
        assert (out / "items" / item_id / "item.json").read_bytes() == (expected / "items" / item_id / "item.json").read_bytes()
    failure = json.loads((out / "failures" / f"{faulty}.json").read_text())
    assert failure["attempts"] == 2 and "SIGABRT" in failure["reason"]
    expected_records = [line for line in (expected / "records.jsonl").read_text().splitlines()
                        if json.loads(line)["item_id"] != faulty]
    assert (out / "records.jsonl").read_text().splitlines() == expected_records
    # What the user sees: per-item lines with counts (stderr is not a terminal), the failure, the summary.
    assert f"failed {faulty}" in result.stderr and "remaining" in result.stderr and "ETA" in result.stderr
    assert f"failed {faulty} after 2 attempts" in result.stdout
    assert "p95" in result.stdout and "best constant answer" in result.stdout


def test_a_log_ends_with_the_totals_even_when_the_last_item_failed():
    """With per-item lines (stderr not a terminal), the last line a user sees always carries the counts."""
    stream = io.StringIO()
    progress = BatchProgress(stream=stream, mode="lines")
    progress(ProgressEvent("start", total=2))
    progress(ProgressEvent("item", total=2, done=1, item_id="a", status="rendered", seconds=1.0))
    progress(ProgressEvent("item", total=2, done=2, failed=1, item_id="b", status="failed", reason="boom", retries=1))
    lines = stream.getvalue().splitlines()
    assert lines[-2] == "failed b: boom"
    assert lines[-1].startswith("done 2/2  failed 1  retried 1  remaining 0")
