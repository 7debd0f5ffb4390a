"""Multi-node Ray: a node killed mid-batch costs nothing but time; the output equals a local run byte for byte.

Three Ray nodes on this machine (`ray.cluster_utils.Cluster`, loopback only, no
dashboard): a head with no CPUs (the driver's node, so never the victim) and worker
node A with one CPU. The batch asks for two actors; only A has room, so the second
waits. When the first item arrives (rendered on A, the only node with a CPU), node B
joins with one CPU and node A is killed, with an item of its actor in flight or just
sent to it. That item must be re-rendered on B by a fresh actor, and the batch folder
must equal one local worker's (item.json, image.png, mask.png, records.jsonl).

The driver is given the head's 127.0.0.1 address as a user would pass it: the executor
must keep it loopback (Ray on its own rewrites it to the machine's network address, where
nothing listens, and waits for minutes).

Needs the `ray` extra; skipped (with the reason) where Ray is not installed.
"""

from __future__ import annotations

import faulthandler
import json

import pytest

ray = pytest.importorskip("ray", reason="Ray is not installed: the Ray executor needs the ray extra "
                                        "(scripts/install.sh --ray, or pip install -e '.[ray]' in a checkout)")

import stim3d  # noqa: E402
from stim3d.render.batch.driver import ProgressEvent  # noqa: E402
from tests.batch_support import assert_same_batch, temporaries  # noqa: E402

LOOPBACK = "127.0.0.1"
# Node deaths noticed within about a second instead of Ray's default 15 s or so; actors at niceness 0 (Ray's
# default 15 starves them on a CI machine busy with other work).
SYSTEM_CONFIG = {"health_check_initial_delay_ms": 0, "health_check_period_ms": 300, "health_check_failure_threshold": 3,
                 "worker_niceness": 0}
NODE_TIMEOUT_S = 30
BATCH_TIMEOUT_S = 240  # seconds; about 20 s on a quiet 2-core machine


@pytest.fixture
def cluster():
    from ray.cluster_utils import Cluster

    cluster = Cluster(initialize_head=True, head_node_args={
        "num_cpus": 0, "include_dashboard": False, "node_ip_address": LOOPBACK, "_system_config": SYSTEM_CONFIG})
    try:
        yield cluster
    finally:
        if ray.is_initialized():
            ray.shutdown()
        cluster.shutdown()


@pytest.mark.bpy
def test_a_node_killed_mid_batch_costs_only_time(reference_batch, cluster, tmp_path):
    config, expected = reference_batch  # one local worker, no Ray
    node_a = cluster.add_node(num_cpus=1, node_ip_address=LOOPBACK)
    cluster.wait_for_nodes(timeout=NODE_TIMEOUT_S)
    events: list[str] = []

    def kill_node_a_after_first_item(event: ProgressEvent) -> None:
        if event.kind != "item" or "killed" in events:
            return
        events.append(f"first item {event.item_id} on node A")
        cluster.add_node(num_cpus=1, node_ip_address=LOOPBACK)  # node B: room for a fresh actor
        cluster.remove_node(node_a, allow_graceful=False)  # SIGKILL: the node's raylet and its actor die
        cluster.wait_for_nodes(timeout=NODE_TIMEOUT_S)
        events.append("killed")

    assert cluster.address.startswith(f"{LOOPBACK}:")
    out = tmp_path / "out"
    # Ray starts nodes from the main thread only, so the batch runs here; a hang ends the test process
    # (with every thread's traceback) instead of blocking CI.
    faulthandler.dump_traceback_later(BATCH_TIMEOUT_S, exit=True)
    try:
        report = stim3d.render_batch(config, out, executor="ray", address=cluster.address, workers=2,
                                     progress=kill_node_a_after_first_item)
    finally:
        faulthandler.cancel_dump_traceback_later()
    assert "killed" in events, events
    assert report.failed == {}, report.failed
    assert report.rendered == report.total
    assert report.retries >= 1, "node A's item was not re-rendered after the node died"  # its item went elsewhere
    assert all(n == 2 for n in report.attempts.values()), report.attempts
    assert_same_batch(out, expected)
    assert temporaries(out) == []
    summary = json.loads((out / "summary.json").read_text())
    assert summary["executor"] == "ray" and summary["retries"] == report.retries
