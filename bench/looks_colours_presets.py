"""Issue 44's colour measurement at the presets' own settings, in rounds that accumulate in one folder.

Every colour-naming family is measured in clevr and photoreal at the size, sampling and
parameters of the seed preset that ships it (bench/looks_colours.py `--preset`), over at
least 200 items per family and look or the whole preset where it holds fewer:
shape_color_count (dysm3d, 120) and ava_color (ava3d, 200) whole, every 7th odd_grid
item of oddgrid3d (225 of 1,575) and every 9th rose_grid item of rose3d (223 of 2,000).
An odd step keeps both variants of a scene in the sample. Each preset's sample is cut into
ROUNDS slices: round r renders slice r of every preset, so after any round the folder
holds a uniform share of every family's sample. A round is about 300 renders on 2 cores,
and a killed round resumes.

    python -m bench.looks_colours_presets --folder DIR [--rounds 1,2] [--looks clevr,photoreal]

`--looks studio --rounds 1` measures the same first fifth in studio, the look the presets ship in
(its own results files, looks_colours_preset_rose3d_studio.json and so on).

Each preset's results file (rose3d's is bench/results/looks_colours_preset_rose3d.json)
covers every item its folder holds: the rounds rendered so far. Print the docs' table with
`python -m bench.looks_colours --markdown` and the four files.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

from .common import RESULTS_DIR

ROUNDS = 5
# preset -> every n-th item of its colour-family tasks (bench.looks_colours --preset) makes its sample
STEPS = {"rose3d": 9, "oddgrid3d": 7, "ava3d": 1, "dysm3d": 1}
FAMILIES = "shape_color_count,ava_color,odd_grid,rose_grid"
LOOKS = "clevr,photoreal"


def shard(step: int, round_number: int) -> str:
    """The `--shard k/n` of round `round_number` (1-based) of a sample of every `step`-th item: the items with
    index % (step * ROUNDS) == step * (round - 1), so the ROUNDS rounds together are index % step == 0."""
    return f"{1 + step * (round_number - 1)}/{step * ROUNDS}"


def results_name(preset: str, looks: str) -> str:
    """The results file of `preset`'s sample in `looks`: the issue's two looks keep the plain name, and another
    choice (studio, the shipped presets' own look) gets its own file instead of overwriting theirs."""
    suffix = "" if looks == LOOKS else "_" + looks.replace(",", "_")
    return f"looks_colours_preset_{preset}{suffix}.json"


def _rounds(text: str) -> list[int]:
    try:
        rounds = [int(part) for part in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: comma-separated round numbers, e.g. 1,2") from None
    if not all(1 <= r <= ROUNDS for r in rounds):
        raise argparse.ArgumentTypeError(f"{text!r}: rounds are 1 to {ROUNDS}")
    return rounds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folder", type=Path, required=True, help="where the renders accumulate (DIR/<preset>/<look>)")
    parser.add_argument("--rounds", type=_rounds, default=list(range(1, ROUNDS + 1)),
                        help=f"comma-separated rounds to render, 1 to {ROUNDS} (default: all)")
    parser.add_argument("--looks", default=LOOKS, help=f"comma-separated looks (default {LOOKS}; another choice "
                        "writes its own results file, e.g. looks_colours_preset_rose3d_studio.json)")
    args = parser.parse_args()
    for round_number in args.rounds:
        for preset, step in STEPS.items():
            print(f"round {round_number} of {ROUNDS}: {preset}, shard {shard(step, round_number)}", flush=True)
            done = subprocess.run([
                sys.executable, "-m", "bench.looks_colours", "--preset", preset, "--families", FAMILIES,
                "--looks", args.looks, "--folder", str(args.folder / preset), "--shard", shard(step, round_number),
                "--objects", "failing", "--out", str(RESULTS_DIR / results_name(preset, args.looks))],
                check=False)
            if done.returncode != 0:
                raise SystemExit(f"bench.looks_colours_presets: {preset} round {round_number} exited with "
                                 f"{done.returncode}")


if __name__ == "__main__":
    main()
