"""Requests per second of `stim3d eval` against the local test server, and what a killed run costs on resume.

Renders one Workbench batch (40 items at 64x48 and, for the image-size rows, 20 at
640x480) into a scratch folder, starts the loopback OpenAI-compatible server of the
tests (tests/eval_server.py) and measures:

- answers per second (median of 3 runs) at concurrency 1, 4 and 8, with the server answering at once
  (the client's own overhead: image encoding, JSON, HTTP, the fsynced append) and
  with 50 ms of simulated model latency per request (what concurrency buys);
- resume: a `stim3d eval` subprocess killed while its 21st request hangs, then rerun:
  how many questions the rerun asks, how many requests each question got in total
  (the answered ones must have exactly one) and the rerun's seconds.

    python -m bench.eval_throughput [--quick]
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.common import Run, median, parse_args, print_table, progress
from stim3d.eval import evaluate
from stim3d.eval.store import RESPONSES, eval_folder
from stim3d.scoring.records import read_records
from tests.eval_server import FakeModel

CONFIG = """\
seed: 21
render: {{engine: workbench, width: {width}, height: {height}}}
tasks:
  - family: shape_count
    count: {count}
    grid: {{min_visibility: [0.6, 0.9]}}
    params: {{n_shape_types: 2, max_instances: 3}}
"""
ROOT = Path(__file__).resolve().parents[1]


def render(root: Path, name: str, width: int, height: int, count: int) -> Path:
    (root / f"{name}.yaml").write_text(CONFIG.format(width=width, height=height, count=count))
    subprocess.run([sys.executable, "-m", "stim3d", "render", str(root / f"{name}.yaml"), "--out", str(root / name),
                    "--quiet"], check=True, cwd=ROOT)
    return root / name


def rate(batch: Path, server: FakeModel, model: str, concurrency: int, repeats: int = 3) -> tuple[float, int]:
    """Median answers per second over `repeats` runs, each timed over its asking phase only
    (`EvalResult.ask_seconds`: not reading the batch, not scoring)."""
    rates = []
    for repeat in range(repeats):
        server.counts.clear()  # a scripted delay applies to each question's first request
        result = evaluate(batch, f"{model}-r{repeat}", server.url, concurrency=concurrency, timeout=30, backoff=0.05,
                          report=False)
        assert not result.failed, result.failed
        rates.append(result.asked / result.ask_seconds)
    return median(rates), result.asked


def resume(batch: Path, server: FakeModel, hang_at: int) -> dict[str, float]:
    qids = [r.question_id for r in read_records(batch / "records.jsonl")]
    server.counts.clear()
    server.script = {qids[hang_at]: ["hang"]}
    process = subprocess.Popen([sys.executable, "-m", "stim3d", "eval", str(batch), "--model", "resume-probe",
                                "--base-url", server.url, "--concurrency", "1"], cwd=ROOT,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while server.counts[qids[hang_at]] == 0 and time.monotonic() < deadline:
        time.sleep(0.02)
    os.kill(process.pid, signal.SIGKILL)
    process.wait(timeout=30)
    stored = len((eval_folder(batch, "resume-probe") / RESPONSES).read_text().splitlines())
    server.script = {}
    started = time.perf_counter()
    result = evaluate(batch, "resume-probe", server.url, timeout=30, report=False)
    seconds = time.perf_counter() - started
    answered_before = set(qids[:hang_at])
    return {"questions": len(qids), "stored_before_kill": stored, "asked_on_resume": result.asked,
            "reused_on_resume": result.reused,
            "max_requests_of_an_answered_question": max(server.counts[q] for q in answered_before),
            "requests_of_the_question_in_flight": server.counts[qids[hang_at]], "resume_seconds": round(seconds, 3)}


def main() -> None:
    args = parse_args(__doc__.splitlines()[0])
    count = 8 if args.quick else 40
    run = Run("eval_throughput", args.quick, args.out, settings={"items": count, "image": "64x48 (and 640x480)",
                                                                  "engine": "workbench", "delays_s": [0, 0.05]})
    figures: dict[str, object] = {}
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        progress("rendering the batches")
        small = render(root, "small", 64, 48, count)
        large = render(root, "large", 640, 480, 4 if args.quick else 20)
        for batch, label in ((small, "64x48"), (large, "640x480")):
            qids = [r.question_id for r in read_records(batch / "records.jsonl")]
            server = FakeModel(read_records(batch / "records.jsonl"))
            httpd, _ = server.start()
            try:
                rate(batch, server, f"warm-up-{label}", 1, repeats=1)  # imports and first-use costs, not timed
                for delay in (0.0, 0.05):
                    if label == "640x480" and delay:
                        continue
                    for concurrency in (1, 4, 8):
                        server.script = {q: [f"delay:{delay}"] for q in qids} if delay else {}
                        progress(f"{label}, delay {delay}s, concurrency {concurrency}")
                        per_second, asked = rate(batch, server, f"rate-{label}-{delay}-{concurrency}", concurrency)
                        run.sample_load()
                        figures[f"{label}_delay{delay}_c{concurrency}"] = round(per_second, 1)
                        rows.append([label, delay * 1000, concurrency, asked, per_second])
                if label == "64x48":
                    figures["resume"] = resume(batch, server, hang_at=min(20, count // 2))
            finally:
                server.release.set()
                httpd.shutdown()
                httpd.server_close()
    print_table("stim3d eval against the loopback test server", ["image", "model ms", "concurrency", "answers",
                                                                 "answers/s"], rows)
    print("resume after kill:", figures["resume"])
    print(f"wrote {run.finish(figures)}")


if __name__ == "__main__":
    main()
