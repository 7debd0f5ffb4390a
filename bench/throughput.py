"""Throughput of the dysm3d preset: items per minute vs local workers (1, 2) and vs Ray nodes (1, 2, 3).

The workload is scenes/presets/dysm3d.yaml with its render settings (resolution and
samples overridable) and each task's count cut so that a run has `--items` items
spread over every family. Configurations, each rendering the same items into a fresh
folder through `render_batch` (the driver `stim3d render` uses):

- `local-1`: one local worker, Cycles on every core (the "1 x 2" split on 2 cores);
- `local-2`: two local workers, Cycles on half the cores each ("2 x 1");
- `ray-N`: a Ray cluster simulated on this machine (`ray.cluster_utils.Cluster`,
  loopback only): a head with no CPUs plus N worker nodes of `--cpus-per-node` Ray
  CPUs each (default 1), one actor per node with that many Cycles threads. On a
  machine with fewer cores than N x cpus-per-node the nodes share cores, so the
  figures are ratios: they show what one node-sized share of CPU renders and how
  close N nodes come to N times that.

Wall time runs from the call to its return (worker or actor start, bpy import, every
item, records.jsonl); the Ray cluster itself is started before the clock. Other work
on shared cores drifts over minutes, so the configurations run in `--rounds` rounds
whose order alternates (forwards, then backwards) and each round's load average is
kept; the results file is rewritten after every round. Ray's workers run at niceness 0
here (Ray's default is 15, which on cores shared with other work would starve them).

Cost model (written to the results file): items per minute per core = items per
minute / cores busy (local: min(cores, workers x threads); Ray: min(cores, nodes x
CPUs per node)), from the best configuration that keeps every core busy; core-hours
for 100,000 items = 100,000 / (that x 60); wall hours on a cluster of C cores =
core-hours / C, assuming that per-core rate holds (scaling efficiency measured here:
ray-2 / (2 x ray-1)).

`--device gpu` renders with Cycles on the GPU (same script on a GPU machine; Ray
nodes then still count CPUs, one actor per node).

    python -m bench.throughput [--quick] [--items 10] [--rounds 2] [--width 800 --height 600] [--configs local-1,local-2,ray-1,ray-2,ray-3]
    python -m bench.throughput --resummarise bench/results/throughput.json   # cost model only, no rendering
"""

from __future__ import annotations

import json
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from stim3d.render.batch.config import load_config
from stim3d.render.batch.driver import render_batch

from .common import Run, load_average, parse_args, print_table, progress

PRESET = Path(__file__).resolve().parents[1] / "stim3d" / "scenes" / "presets" / "dysm3d.yaml"
CONFIGS = ("local-1", "local-2", "ray-1", "ray-2", "ray-3")
LOOPBACK = "127.0.0.1"
TARGET_ITEMS = 100_000


def workload(items: int, width: int | None, height: int | None, samples: int | None, device: str):
    """The dysm3d preset cut to `items` items over its tasks (at least one each), render settings overridden."""
    config = load_config(PRESET)
    n_tasks = len(config.tasks)
    counts = [items // n_tasks + (1 if i < items % n_tasks else 0) for i in range(n_tasks)]
    tasks = [task.model_copy(update={"count": max(1, n)}) for task, n in zip(config.tasks, counts)]
    update: dict[str, Any] = {"device": device}
    update.update({k: v for k, v in (("width", width), ("height", height), ("samples", samples)) if v})
    return config.model_copy(update={"tasks": tasks, "render": config.render.model_copy(update=update)})


class LoopbackCluster:
    """A head with no CPUs and `nodes` worker nodes on this machine, bound to 127.0.0.1 only."""

    def __init__(self, nodes: int, cpus_per_node: int):
        from ray.cluster_utils import Cluster

        # Ray runs its workers at niceness 15 by default: on cores shared with other work they would get
        # a smaller share than the local workers they are compared with.
        self.cluster = Cluster(initialize_head=True, head_node_args={
            "num_cpus": 0, "include_dashboard": False, "node_ip_address": LOOPBACK,
            "_system_config": {"worker_niceness": 0}})
        for _ in range(nodes):
            self.cluster.add_node(num_cpus=cpus_per_node, node_ip_address=LOOPBACK)
        self.cluster.wait_for_nodes(timeout=120)

    def close(self) -> None:
        self.cluster.shutdown()


def measure(config, name: str, folder: Path, cpus_per_node: int) -> dict:
    """One run of one configuration; the raw sums, so that rounds add up."""
    kind, count = name.split("-")
    cluster = LoopbackCluster(int(count), cpus_per_node) if kind == "ray" else None
    try:
        load = load_average()
        start = time.perf_counter()
        if cluster is None:
            report = render_batch(config, folder, workers=int(count))
        else:
            report = render_batch(config, folder, executor="ray", address=cluster.cluster.address, workers=int(count))
        wall = time.perf_counter() - start
    finally:
        if cluster is not None:
            cluster.close()
    timings = [json.loads(p.read_text()) for p in sorted((folder / "items").glob("*/timing.json"))]
    return {"items": report.rendered, "failed": len(report.failed), "wall_s": wall, "seconds": report.seconds,
            "render_calls": [t["render_call"] for t in timings],
            "outside_per_item": [1 - t["render_call"] / sum(t.values()) for t in timings], "load_average": load}


def cores_busy(name: str, cpus_per_node: int) -> int:
    kind, count = name.split("-")
    cores = os.cpu_count() or 1
    return min(cores, int(count) * cpus_per_node) if kind == "ray" else cores


def combine(name: str, runs: list[dict], cpus_per_node: int) -> dict:
    wall, items = sum(r["wall_s"] for r in runs), sum(r["items"] for r in runs)
    per_minute = items / wall * 60 if wall else 0.0
    cores = cores_busy(name, cpus_per_node)
    return {
        "config": name, "items": items, "failed": sum(r["failed"] for r in runs), "wall_s": round(wall, 1),
        "items_per_minute": round(per_minute, 3), "cores_busy": cores,
        "items_per_minute_per_core": round(per_minute / cores, 3),
        "seconds_per_item_all_in": round(wall / items, 2) if items else None,
        "seconds_per_item_median": round(statistics.median(s for r in runs for s in r["seconds"]), 2),
        "render_call_s_median": round(statistics.median(c for r in runs for c in r["render_calls"]), 2),
        "outside_render_share_per_item_median": round(statistics.median(o for r in runs for o in r["outside_per_item"]), 4),
        "load_average_per_run": [r["load_average"] for r in runs],
    }


def cost_model(rows: list[dict], preset_items: int) -> dict:
    """Items per minute per core, and what 100,000 items (and the whole preset) cost, from the best configuration."""
    # Per core of the best configuration that keeps every core busy: a run on fewer cores has the caches and
    # memory bandwidth to itself and would flatter the figure.
    full = [r for r in rows if r["cores_busy"] == max(x["cores_busy"] for x in rows)]
    best = max(full, key=lambda r: r["items_per_minute_per_core"])
    fastest = max(rows, key=lambda r: r["items_per_minute"])  # the whole machine's best
    per_core = best["items_per_minute_per_core"]
    core_hours = TARGET_ITEMS / (per_core * 60) if per_core else None
    by_name = {r["config"]: r for r in rows}
    efficiency = None
    if "ray-1" in by_name and "ray-2" in by_name and by_name["ray-1"]["items_per_minute"]:
        efficiency = round(by_name["ray-2"]["items_per_minute"] / (2 * by_name["ray-1"]["items_per_minute"]), 3)
    return {
        "best_config": best["config"], "items_per_minute_per_core": per_core,
        "core_hours_per_100k_items": round(core_hours, 1) if core_hours else None,
        "wall_hours_per_100k_items": {f"{c} cores": round(core_hours / c, 2) for c in (2, 16, 64, 256)} if core_hours else None,
        "ray_2_node_scaling_efficiency": efficiency,
        "preset_items": preset_items, "fastest_config": fastest["config"],
        "preset_minutes_on_this_machine": (round(preset_items / fastest["items_per_minute"], 1)
                                           if fastest["items_per_minute"] else None),
        "preset_minutes_per_config": {r["config"]: round(preset_items / r["items_per_minute"], 1)
                                      for r in rows if r["items_per_minute"]},
    }


def resummarise(path: Path) -> None:
    """Recompute the cost model of an existing results file from its measured rows (no rendering)."""
    document = json.loads(path.read_text())
    preset_items = sum(t.count for t in load_config(PRESET).tasks)
    document["figures"]["cost_model"] = cost_model(document["figures"]["runs"], preset_items)
    path.write_text(json.dumps(document, indent=2) + "\n")
    print(json.dumps(document["figures"]["cost_model"], indent=2))


def main() -> None:
    def add(parser):
        parser.add_argument("--items", type=int, default=10, help="items per configuration and round (default 10)")
        parser.add_argument("--rounds", type=int, default=2)
        parser.add_argument("--width", type=int, help="override the preset's width (e.g. 800)")
        parser.add_argument("--height", type=int, help="override the preset's height (e.g. 600)")
        parser.add_argument("--samples", type=int, help="override the preset's samples")
        parser.add_argument("--configs", default=",".join(CONFIGS), help=f"comma-separated, from {', '.join(CONFIGS)}")
        parser.add_argument("--cpus-per-node", type=int, default=1, help="Ray CPUs (and Cycles threads) per simulated node")
        parser.add_argument("--device", choices=("cpu", "gpu"), default="cpu")
        parser.add_argument("--resummarise", type=Path, metavar="RESULTS_JSON", help="only recompute the cost model")

    args = parse_args(__doc__.splitlines()[0], add)
    if args.resummarise:
        resummarise(args.resummarise)
        return
    names = [n for n in args.configs.split(",") if n]
    unknown = sorted(set(names) - set(CONFIGS))
    if unknown:
        raise SystemExit(f"unknown configs {unknown}; choose from {', '.join(CONFIGS)}")
    items, rounds, width, height, samples = args.items, args.rounds, args.width, args.height, args.samples
    if args.quick:
        items, rounds, width, height, samples, names = 5, 1, 96, 72, 2, ["local-1", "ray-1"]
    config = workload(items, width, height, samples, args.device)
    preset_items = sum(t.count for t in load_config(PRESET).tasks)
    run = Run("throughput", args.quick, args.out,
              settings={"render": config.render.model_dump(mode="json"), "items_per_run": sum(t.count for t in config.tasks),
                        "rounds": rounds, "configs": names, "cpus_per_node": args.cpus_per_node, "preset": PRESET.name})
    runs: dict[str, list[dict]] = {name: [] for name in names}
    with tempfile.TemporaryDirectory(prefix="stim3d-bench-") as tmp:
        for round_index in range(rounds):
            for name in (names if round_index % 2 == 0 else names[::-1]):
                progress(f"round {round_index + 1}/{rounds}: {name} ...")
                result = measure(config, name, Path(tmp) / f"r{round_index}-{name}", args.cpus_per_node)
                runs[name].append(result)
                run.sample_load()
                progress(f"  {result['items'] / result['wall_s'] * 60:.2f} items/min (load average {result['load_average']})")
            rows = [combine(name, runs[name], args.cpus_per_node) for name in names]
            model = cost_model(rows, preset_items)
            run.finish({"runs": rows, "cost_model": model, "rounds_completed": round_index + 1})  # after every round
    r = config.render
    print_table(f"Throughput, dysm3d items at {r.width}x{r.height}, {r.samples} samples, denoise={r.denoise}, "
                f"{sum(t.count for t in config.tasks)} items x {rounds} round(s)",
                ["config", "items/min", "cores", "items/min/core", "s/item all-in", "render call s", "outside render"],
                [[x["config"], x["items_per_minute"], x["cores_busy"], x["items_per_minute_per_core"],
                  x["seconds_per_item_all_in"], x["render_call_s_median"],
                  f"{x['outside_render_share_per_item_median']:.1%}"] for x in rows])
    print(f"\ncost model: {model['items_per_minute_per_core']} items/min per core ({model['best_config']}); "
          f"100,000 items = {model['core_hours_per_100k_items']} core-hours; the {preset_items}-item preset on this "
          f"machine ({model['fastest_config']}): {model['preset_minutes_on_this_machine']} min")


if __name__ == "__main__":
    main()
