"""The example runs shown in the docs, as code: the scoring walk-through and the demo batch's summary.

The scoring example is shown exactly as it runs: its config, stand-in model and
command are constants here, `scoring_block` writes them into docs/scoring.md
with the output they print, and tests/test_docs.py checks that page against a
fresh run. Scores depend only on item.json and records.jsonl, never on pixels, so
`render=False` builds the batch folder from composed items (no Blender, a few
seconds) and prints exactly what the rendered batch prints; `python -m bench.docs`
also runs the rendered version and checks the two agree.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]

SCORING_CONFIG = """\
seed: 1
render: {engine: workbench, width: 320, height: 240}
tasks:
  - family: shape_count
    count: 18
    grid: {min_visibility: [0.6, 0.75, 0.9]}
  - family: shape_color_count
    count: 12
    grid: {min_visibility: [0.6, 0.75, 0.9]}
"""

STAND_IN = """\
import json
from pathlib import Path

out = Path("demo")
with open("predictions.jsonl", "w") as f:
    for line in open(out / "records.jsonl"):
        r = json.loads(line)     # r["prompt"] and out / r["image"]["path"] are what a model is shown
        item = json.loads((out / Path(r["image"]["path"]).parent / "item.json").read_text())
        visibility = {t["id"]: t["visibility"] for t in item["ground_truth"]["objects"]}
        n = sum(o["shape"] == r["subject"]["shape"] and o["color"]["name"] == r["subject"].get("color", o["color"]["name"])
                and visibility[o["id"]] >= 0.9 for o in item["scene"]["objects"])
        f.write(json.dumps({"question_id": r["question_id"], "response": f"I can see {n} of them."}) + "\\n")
"""

SCORE_ARGS = ["score", "demo", "predictions.jsonl", "--by", "min_visibility"]


def scoring_commands() -> str:
    """The shell commands of the walk-through, as a user types them from the repository root."""
    return (
        f"cat > scoring_demo.yaml <<'YAML'\n{SCORING_CONFIG}YAML\n"
        ".venv/bin/stim3d render scoring_demo.yaml --out demo --quiet\n\n"
        ".venv/bin/python - <<'PY'   # the stand-in \"model\": replace with real model calls\n"
        f"{STAND_IN}PY\n"
        f".venv/bin/stim3d {' '.join(SCORE_ARGS)}\n"
    )


def _stim3d(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    result = subprocess.run([sys.executable, "-m", "stim3d", *args], cwd=cwd, capture_output=True, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    if result.returncode != 0:
        raise RuntimeError(f"stim3d {' '.join(args)} failed: {result.stderr.strip()}")
    return result


def composed_batch(config_text: str, out: Path) -> None:
    """A batch folder as `stim3d render` would write it, minus the pixels: item.json files and records.jsonl.

    Items are composed exactly as batch workers compose them (same plan, same seeds,
    same frame); images are not rendered, so records point at absent images with a
    placeholder hash. Everything a score depends on is identical to a rendered batch.
    """
    from stim3d.files import write_jsonl_atomic
    from stim3d.render.batch.config import parse_config
    from stim3d.render.batch.plan import expand
    from stim3d.render.batch.records import records_for
    from stim3d.scenes.families.base import Frame
    from stim3d.scenes.items import make_item
    from stim3d.scenes.model import Provenance

    config = parse_config(yaml.safe_load(config_text))
    settings = config.render
    frame = Frame(settings.width, settings.height, settings.rays_per_pixel)
    provenance = Provenance(stim3d_version="composed only", engine=settings.engine, samples=None, device="cpu",
                            denoise=None)
    records = []
    for plan in expand(config):
        item = make_item(plan.family, plan.params, [config.seed, plan.task_index, plan.item_index], plan.item_id,
                         frame, plan.split, plan.scene_id).model_copy(update={"provenance": provenance})
        folder = out / "items" / item.item_id
        folder.mkdir(parents=True)
        (folder / "item.json").write_text(item.to_json())
        records += records_for(item, f"items/{item.item_id}/image.png", "0" * 64)
    write_jsonl_atomic(out / "records.jsonl", records)


def run_scoring_example(render: bool) -> str:
    """What the walk-through prints at its last command (`render=False`: the batch composed, not rendered)."""
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        (work / "scoring_demo.yaml").write_text(SCORING_CONFIG)
        if render:
            _stim3d("render", "scoring_demo.yaml", "--out", "demo", "--quiet", cwd=work)
        else:
            composed_batch(SCORING_CONFIG, work / "demo")
        subprocess.run([sys.executable, "-"], input=STAND_IN, text=True, cwd=work, check=True)
        return _stim3d(*SCORE_ARGS, cwd=work).stdout


def scoring_block(output: str) -> str:
    return (f"```bash\n{scoring_commands()}```\n\nprints (and writes the same, plus every question's parse and "
            f"score, to `predictions.scores.json`):\n\n```\n{output}```")


def demo_summary(out: Path) -> str:
    """Render the demo preset with two workers (stderr not a terminal: one line per item) and show what it printed."""
    # run beside `out` with a relative --out, so what it prints names `out/...`, not a scratch path
    result = _stim3d("render", str(ROOT / "stim3d" / "scenes" / "presets" / "demo.yaml"), "--out", out.name, "--workers", "2",
                     cwd=out.parent)
    load = os.getloadavg()[0]
    log = "\n".join(line for line in result.stderr.splitlines() if line.strip())
    return (f"A run of the demo preset with two workers, stderr not a terminal, on this project's 2-core machine "
            f"(1-minute load average {load:.1f} when it ended; other work shares the cores, so items take longer "
            f"than on a quiet machine):\n\n```\n$ stim3d render scenes/presets/demo.yaml --out out --workers 2\n"
            f"{log}\n```\n\nand the summary it printed on stdout (also written to `out/summary.json`):\n\n"
            f"```\n{result.stdout.rstrip()}\n```")
