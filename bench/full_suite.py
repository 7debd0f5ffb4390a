"""The whole seed suite end to end, as a user runs it: `stim3d render all` in a subprocess, timed.

Every seed preset (render/batch/suite.py: dysm3d, oddgrid3d, rose3d, ava3d, rubrics3d)
renders at its own settings into a fresh root. The subprocess is the installed
command (`python -m stim3d`), so the figures include everything a user waits for:
start-up, bpy import, composition, rendering, records, summaries. Per preset, the
file keeps the items planned and rendered, failures, this run's wall time and wall
seconds per rendered item, the batch summary's median seconds per item, the best
constant answer per question type and the best constant description of rubric
records, all read back from the suite's own suite.json.

`--sample N` renders every N-th item of each preset (`--shard 1/N`): the seconds per
item estimate the full run, and the file says it is a sample. `--quick` checks that
the bench works (every 500th item at 320x240 with Workbench) and writes a scratch
file. `--device gpu` renders Cycles on the GPU and is recorded (docs/performance.md).

The full Cycles run takes hours on two cores (docs/performance.md, "The whole seed
suite"); on a shared machine, read the load average in the file before quoting a
figure. `--root DIR` renders into DIR and keeps it: a run that was stopped is resumed
by running the same command again (stim3d's batches resume). `--stop-after MINUTES`
stops the suite with SIGTERM at that time, as a user's Ctrl-C would; stim3d still
writes suite.json, naming the preset it stopped in. The file then says `resumed` when
the root held earlier work; its per-preset figures time the last run, and `runs`
lists every run with the same settings that wrote this results file (root, commit, wall
seconds, load, items rendered per preset), so `all_runs` gives the whole suite's wall
time and each preset's seconds per item over runs cut short by the end of a session,
and `complete` says whether every preset is rendered whole with none failed.

A machine that is not kept between sessions takes its root with it, so a suite longer
than a session is rendered preset by preset: `--presets rose3d,ava3d --root NEW` renders
only those into a new root, and the file keeps the earlier runs (each names its root,
commit and load). Per preset, `all_runs` counts the root that got furthest with it; a
preset begun in a lost root and rendered again elsewhere counts only the second.

    python -m bench.full_suite [--quick] [--sample N] [--workers 2] [--device gpu] [--engine workbench] [--root DIR] [--presets NAME,...] [--stop-after MINUTES]
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import deque
from pathlib import Path
from typing import Any

from stim3d.render.batch.suite import SUITE_PRESETS, SUITE_SUMMARY, select_presets

from .common import Run, add_device, parse_args, path_label, print_table, progress

ROOT = Path(__file__).resolve().parents[1]
QUICK = {"sample": 500, "engine": "workbench", "width": 320, "height": 240}
LOAD_EVERY = 60.0  # seconds between load-average samples during the suite


def suite_command(out: Path, sample: int | None, workers: int | None, device: str,
                  overrides: dict[str, Any], presets: tuple[str, ...] | None = None) -> list[str]:
    """The `stim3d render all` command line this bench runs."""
    command = [sys.executable, "-m", "stim3d", "render", "all", "--out", str(out), "--quiet", "--device", device]
    if presets is not None:
        command += ["--presets", ",".join(presets)]
    if sample and sample > 1:
        command += ["--shard", f"1/{sample}"]
    if workers:
        command += ["--workers", str(workers)]
    for key, value in overrides.items():
        if value is not None:
            command += [f"--{key}", str(value)]
    return command


def preset_row(row: dict[str, Any]) -> dict[str, Any]:
    """One preset's figures from suite.json."""
    rendered = row["rendered"]
    return {"preset": row["preset"], "items": row["items"], "rendered": rendered, "skipped": row["skipped"],
            "failures": len(row["failed"]),
            "failed": row["failed"], "wall_seconds": row["wall_seconds"],
            "seconds_per_item": round(row["wall_seconds"] / rendered, 3) if rendered else None,
            "median_item_seconds": (row["seconds_per_item"] or {}).get("median"),
            "constant_baseline": row["constant_baseline"], "description_baseline": row["description_baseline"]}


def run_suite(command: list[str], stop_after: float | None, run: Run) -> tuple[int, float, bool]:
    """Run the suite command; SIGTERM it after `stop_after` minutes. Its exit code, wall seconds and whether it was stopped.

    The suite's progress (stim3d's --quiet status line every 30 s, each preset's start, failures) is passed
    through to this bench's stderr, so a run of hours shows where it is; the last lines are kept for an error.
    The load average is sampled every minute, so the file's maximum covers the whole run, not its two ends.
    """
    started = time.perf_counter()
    child = subprocess.Popen(command, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    last: deque[str] = deque(maxlen=5)

    def relay() -> None:
        assert child.stderr is not None
        for line in child.stderr:
            last.append(line.rstrip())
            print(line, end="", file=sys.stderr, flush=True)

    relaying = threading.Thread(target=relay, daemon=True)
    relaying.start()
    deadline = started + stop_after * 60 if stop_after else None
    stopped = False
    while child.poll() is None:
        if deadline is not None and time.perf_counter() >= deadline:
            stopped = True
            child.send_signal(signal.SIGTERM)  # stim3d stops its workers, keeps finished items and writes suite.json
            child.wait(timeout=120)
            break
        wait = LOAD_EVERY if deadline is None else max(0.1, min(LOAD_EVERY, deadline - time.perf_counter()))
        try:
            child.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            run.sample_load()
    relaying.join(timeout=10)
    wall = time.perf_counter() - started
    if child.returncode not in (0, 1, 130):
        raise SystemExit(f"stim3d render all exited {child.returncode}: {last[-1] if last else '(no output)'}")
    return child.returncode, wall, stopped


def summary_stamp(root: Path) -> int | None:
    """suite.json's modification time in ns (None when absent): a kept root's summary from an earlier run is never read as this run's."""
    try:
        return (root / SUITE_SUMMARY).stat().st_mtime_ns
    except FileNotFoundError:
        return None


def per_preset(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per preset, the root that got furthest with it: wall seconds and items rendered summed over that root's runs.

    A preset's items only add up within one root (a run resumes its own folder), so a preset begun in a root
    that was lost with its machine and rendered again in another counts the second root's runs alone; its time
    in the lost root is left out of the suite's time, not added to it.
    """
    groups: dict[tuple[str, str], dict[str, Any]] = {}
    for one in runs:
        for name, figures in one.get("presets", {}).items():
            group = groups.setdefault((name, one["root"]), {
                "preset": name, "root": one["root"], "items": figures["items"], "wall_seconds": 0.0, "rendered": 0,
                "failures": 0, "runs": 0, "commits": []})
            group["wall_seconds"] += figures["wall_seconds"]
            group["rendered"] += figures["rendered"]
            group["failures"] = figures["failures"]  # the last run's: a rerun retries earlier failures
            group["runs"] += 1
            if one["commit"] not in group["commits"]:
                group["commits"].append(one["commit"])
    best: dict[str, dict[str, Any]] = {}
    for group in groups.values():  # runs are in time order: on a tie the later root wins
        if group["preset"] not in best or group["rendered"] >= best[group["preset"]]["rendered"]:
            best[group["preset"]] = group
    return [{**g, "wall_seconds": round(g["wall_seconds"], 1), "complete": g["rendered"] == g["items"],
             "seconds_per_item": round(g["wall_seconds"] / g["rendered"], 3) if g["rendered"] else None}
            for name in SUITE_PRESETS if (g := best.get(name))]


COMPARABLE = ("sample_every", "overrides", "device", "workers")  # settings that must match for runs to add up


def earlier_runs(results: Path, settings: dict[str, Any]) -> list[dict[str, Any]]:
    """The full-suite runs an earlier invocation wrote to `results` with the same settings, each naming its root.

    Runs against other roots are kept: a suite longer than a session is rendered preset by preset
    (`--presets`), and a machine that was not kept takes its root with it. Files written before runs
    named their root, items and load get them from the document (they had one root).
    """
    try:
        document = json.loads(results.read_text())
    except (OSError, ValueError):
        return []
    earlier = document.get("settings", {})
    if any(earlier.get(key) != settings[key] for key in COMPARABLE) or not earlier.get("root"):
        return []
    rows = {r["preset"]: r for r in document.get("figures", {}).get("presets", [])}
    runs = []
    for one in document.get("figures", {}).get("runs", []):
        presets = {name: {**({"items": rows[name]["items"], "failures": rows[name]["failures"]} if name in rows else {}),
                          **figures} for name, figures in one.get("presets", {}).items()}
        runs.append({"root": earlier["root"], "load_average": document.get("load_average"), **one, "presets": presets})
    return runs


def main() -> None:
    def add(parser):
        parser.add_argument("--sample", type=int, metavar="N", help="render every N-th item of each preset (--shard 1/N)")
        parser.add_argument("--workers", type=int, help="worker processes (default: the CLI's, 1)")
        add_device(parser)
        parser.add_argument("--engine", choices=("cycles", "workbench", "raster"), help="override every preset's engine")
        parser.add_argument("--width", type=int, help="override every preset's width")
        parser.add_argument("--height", type=int, help="override every preset's height")
        parser.add_argument("--root", type=Path, help="render into this folder and keep it (a rerun resumes)")
        parser.add_argument("--presets", metavar="NAME,...",
                            help="render only these seed presets (stim3d render all --presets); the file adds them "
                                 "to its earlier runs'")
        parser.add_argument("--stop-after", type=float, metavar="MINUTES",
                            help="stop the suite (SIGTERM) after this many minutes; with --root, rerun to go on")

    args = parse_args(__doc__.splitlines()[0], add)
    if args.sample is not None and args.sample < 1:
        raise SystemExit(f"--sample {args.sample}: must be at least 1")
    if args.stop_after is not None and args.stop_after <= 0:
        raise SystemExit(f"--stop-after {args.stop_after}: must be a positive number of minutes")
    try:
        presets = select_presets(args.presets)
    except ValueError as exc:
        raise SystemExit(f"--presets {args.presets!r}: {exc}") from None
    settings = {"sample": args.sample, "engine": args.engine, "width": args.width, "height": args.height}
    if args.quick:
        settings = {**settings, **QUICK}
    overrides = {k: settings[k] for k in ("engine", "width", "height")}
    run = Run("full_suite", args.quick, args.out, settings={
        "presets": list(presets), "device": args.device, "workers": args.workers or 1,
        "sample_every": settings["sample"] or 1, "overrides": overrides,
        "is_sample": bool(settings["sample"] and settings["sample"] > 1),
        "root": path_label(str(args.root.resolve())) if args.root else None,
        "what": f"stim3d render all in a subprocess, {'kept root --root' if args.root else 'fresh root'}; "
                "wall time from start to exit"}, device=args.device)
    with tempfile.TemporaryDirectory(prefix="stim3d-bench-") as tmp:
        out = args.root.resolve() if args.root else Path(tmp) / "suite"
        resumed = (out / SUITE_SUMMARY).is_file() or any(out.glob("*/batch.json"))
        command = suite_command(out, settings["sample"], args.workers, args.device, overrides,
                                None if args.presets is None else presets)
        progress("running: " + " ".join(command[1:]))
        before = summary_stamp(out)
        load_start = run.loads[-1]
        exit_code, wall, stopped = run_suite(command, args.stop_after, run)
        run.sample_load()
        if summary_stamp(out) in (None, before):
            raise SystemExit(f"stim3d render all exited {exit_code} without writing {SUITE_SUMMARY}")
        summary = json.loads((out / SUITE_SUMMARY).read_text())
    rows = [preset_row(row) for row in summary["presets"]]
    runs = earlier_runs(run.path(), run.settings) if args.root else []
    runs.append({"commit": run.code["git_commit"], "root": path_label(str(out)), "wall_seconds": round(wall, 1),
                 "rendered": summary["total"]["rendered"], "exit_code": exit_code, "stopped_in": summary["interrupted"],
                 "load_average": {"start": load_start, "max_sampled": max(run.loads)},
                 "presets": {r["preset"]: {"items": r["items"], "wall_seconds": r["wall_seconds"],
                                           "rendered": r["rendered"], "failures": r["failures"]} for r in rows}})
    suite = per_preset(runs)
    suite_wall, suite_rendered = sum(p["wall_seconds"] for p in suite), sum(p["rendered"] for p in suite)
    complete = len(suite) == len(SUITE_PRESETS) and all(p["complete"] and not p["failures"] for p in suite)
    figures = {"exit_code": exit_code, "stopped": stopped, "complete": complete, "wall_seconds": round(wall, 1),
               "presets": rows, "total": {**summary["total"], "command_wall_seconds": round(wall, 1)},
               "suite_code": summary["code"].get("git_commit"), "resumed": resumed, "runs": runs,
               "all_runs": {"runs": len(runs), "wall_seconds": round(suite_wall, 1), "rendered": suite_rendered,
                            "seconds_per_item": round(suite_wall / suite_rendered, 3) if suite_rendered else None,
                            "presets": suite}}
    print_table("stim3d render all" + (f", every {settings['sample']}th item" if settings["sample"] else ""),
                ["preset", "items", "rendered", "failures", "wall s", "s/item", "median item s"],
                [[r["preset"], r["items"], r["rendered"], r["failures"], r["wall_seconds"], r["seconds_per_item"],
                  r["median_item_seconds"]] for r in rows])
    print(f"command wall time {wall:.1f} s, exit code {exit_code}"
          + (f"; stopped after {args.stop_after:g} min in {summary['interrupted']}" if stopped else ""))
    if len(runs) > 1:
        print(f"the suite over {len(runs)} runs: {suite_rendered} items rendered in {suite_wall:.1f} s"
              + ("" if complete else "; not complete yet: rerun the same command (or --presets the rest)"))
    run.finish(figures)


if __name__ == "__main__":
    main()
