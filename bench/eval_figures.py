"""The figures of docs/eval.md: the baselines' report on a small Workbench batch.

Renders 48 items (shape_count over three visibility floors, shape_color_count,
spatial_grid; Workbench at 96x72, about half a minute) into a scratch folder, runs
`stim3d eval` with baseline:constant, baseline:random (seed 0) and baseline:oracle,
then `stim3d score --compare` over the three, and copies the random baseline's
figures to docs/images/ (the eval_*.png files). Prints the comparison table shown on the page.

    python -m bench.eval_figures [OUT]
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
IMAGES = ROOT / "docs" / "images"
CONFIG = """\
seed: 8
render: {engine: workbench, width: 96, height: 72}
tasks:
  - family: shape_count
    count: 24
    grid: {min_visibility: [0.5, 0.7, 0.9]}
    params: {n_shape_types: 2, max_instances: 4}
  - family: shape_color_count
    count: 12
    params: {n_shape_types: 2, max_instances: 3}
  - family: spatial_grid
    count: 12
"""
FIGURES = {"accuracy_by_question_type.png": "eval_random_by_question_type.png",
           "axis_min_visibility.png": "eval_random_by_min_visibility.png"}


def stim3d(*args: str) -> str:
    done = subprocess.run([sys.executable, "-m", "stim3d", *args], cwd=ROOT, capture_output=True, text=True, check=True)
    return done.stdout


def main() -> None:
    scratch = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp(prefix="stim3d-eval-"))
    scratch.mkdir(parents=True, exist_ok=True)
    (scratch / "batch.yaml").write_text(CONFIG)
    out = scratch / "batch"
    stim3d("render", str(scratch / "batch.yaml"), "--out", str(out), "--quiet")
    for model in ("baseline:constant", "baseline:random", "baseline:oracle"):
        stim3d("eval", str(out), "--model", model)
    print(stim3d("score", str(out), "--compare", *(str(out / "eval" / name) for name in
                                                    ("baseline-constant", "baseline-random", "baseline-oracle"))), end="")
    for source, target in FIGURES.items():
        shutil.copyfile(out / "eval" / "baseline-random" / source, IMAGES / target)
        print(f"wrote {IMAGES / target}")


if __name__ == "__main__":
    main()
