"""The whole dysm3d preset end to end through `stim3d render`, as a user runs it: wall time and what it wrote.

    python -m bench.full_preset [--quick] [--preset scenes/presets/dysm3d.yaml] [--workers N]

Runs the CLI in a subprocess (process start, composition, visibility, scene build,
render, denoise and writing all count), with the preset's own render settings, into
a scratch folder, then reads the batch's summary.json: items rendered and failed,
seconds per item, and the best constant answer per question type. `--quick` renders
the 6-item demo preset instead (a shard writes no summary).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.common import Run, add_device, parse_args

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    args = parse_args(__doc__.splitlines()[0], lambda p: (
        p.add_argument("--preset", default="scenes/presets/dysm3d.yaml", help="config to render"),
        p.add_argument("--workers", type=int, default=1, help="worker processes (default 1, stim3d render's own)"),
        add_device(p),
    ))
    preset = "scenes/presets/demo.yaml" if args.quick else args.preset
    run = Run("full_preset", args.quick, args.out, {"preset": preset, "workers": args.workers}, device=args.device)
    with tempfile.TemporaryDirectory(prefix="stim3d-bench-") as scratch:
        out = Path(scratch) / "batch"
        command = [sys.executable, "-m", "stim3d", "render", preset, "--out", str(out), "--quiet",
                   "--workers", str(args.workers), "--device", args.device]
        started = time.perf_counter()
        done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
        wall = time.perf_counter() - started
        run.sample_load()
        if done.returncode != 0:
            raise SystemExit(f"stim3d render failed (exit {done.returncode}): {done.stderr.strip()[-500:]}")
        summary = json.loads((out / "summary.json").read_text())
    items = summary["items"]
    figures = {
        "items": items,
        "rendered": summary["rendered"],
        "failed": len(summary["failed"]),
        "wall_seconds_end_to_end": round(wall, 1),
        "wall_minutes_end_to_end": round(wall / 60, 2),
        "seconds_per_item_all_in": round(wall / max(1, items), 3),
        "seconds_per_item_in_worker": summary["seconds_per_item"],
        "constant_baseline": summary["constant_baseline"],
    }
    print(f"{summary['rendered']} of {items} items in {wall / 60:.1f} min "
          f"({wall / max(1, items):.2f} s per item all-in), {len(summary['failed'])} failed")
    for baseline in summary["constant_baseline"]:
        print(f"  {baseline['question_type']}: best constant {baseline['best_answer']} "
              f"{baseline['accuracy']:.3f} of {baseline['distinct_answers']} distinct answers")
    run.finish(figures)


if __name__ == "__main__":
    main()
