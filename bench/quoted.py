"""Which result files the README and docs quote, how each is measured again, and how far behind the code each is.

`QUOTED` lists the benchmarks whose figures docs/performance.md and the README's
Performance summary quote (bench/docs_perf.py reads exactly these), each with the one
command that measures it again. `STUDIES` lists result files of one-off studies: a
setting chosen, a defect measured. Their files stay, with the commit they were measured
at, and the pages that cite them say so; nothing re-measures them.

    python -m bench.quoted            # each file: commit, date, commits since that touched stim3d/render or stim3d/scenes
    python -m bench.quoted --check    # exit 1 when a quoted file is more than MAX_BEHIND such commits old (CI runs it)

`python -m bench.release` re-measures every quoted file at one commit in one run.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"
CODE_PATHS = ("stim3d/render", "stim3d/scenes", "render", "scenes")  # the old top-level paths too, for older commits
MAX_BEHIND = 120  # commits touching the renderer or the scene model since a quoted figure was measured

# The quoted files, in the order bench.release measures them again (cheap first); each is measured again by the
# command it records, except where RELEASE_COMMANDS says otherwise (a run that was resumed over several roots).
QUOTED: tuple[str, ...] = (
    "visibility_accuracy", "visibility_speed", "mask_agreement", "object_agreement", "gallery_scale", "batch_memory", "item_overhead",
    "pipeline_overhead", "pipeline_overhead_dysm3d", "throughput", "throughput_workers", "batch_throughput",
    "render_settings", "render_quality", "full_preset", "full_suite_sample100", "full_suite", "preset_tasks",
    "rose_balance",
)
RELEASE_COMMANDS = {
    "preset_tasks": "python -m bench.preset_tasks --preset ava3d --families ava_object,ava_texture,ava_ocr",
    "full_suite": "python -m bench.full_suite",
    "full_suite_sample100": "python -m bench.full_suite --sample 100 --workers 2 --out bench/results/full_suite_sample100.json",
}
STUDIES = ("eval_throughput", "full_suite_workbench", "looks_colours", "looks_colours_balance_after",
           "looks_colours_balance_after_640x480", "looks_colours_balance_before",
           "looks_colours_balance_before_640x480", "looks_colours_balance_upper_sphere", "looks_colours_chroma_after",
           "looks_colours_chroma_after_640x480", "looks_colours_grey_card_after", "looks_colours_photoreal_after",
           "look_contrast", "look_contrast_before", "looks_colours_clevr_640x480", "looks_colours_photoreal_640x480",
           "looks_colours_seed27_640x480", "looks_colours_preset_dysm3d", "looks_colours_preset_ava3d",
           "looks_colours_preset_oddgrid3d", "looks_colours_preset_rose3d", "looks_colours_preset_dysm3d_studio",
           "looks_colours_preset_ava3d_studio", "looks_colours_preset_oddgrid3d_studio",
           "looks_colours_preset_rose3d_studio",
           "looks_colours_photoreal_before", "looks_exposure", "looks_grey_card", "looks_noise", "looks_settings",
           "looks_settings_dysm_240x180", "looks_settings_oddgrid_640x480", "looks_settings_oddgrid_clevr_640x480",
           "looks_settings_oddgrid_studio_640x480", "looks_settings_photoreal_480x360",
           "looks_settings_photoreal_3eff776", "looks_settings_photoreal_640x480_3eff776",
           "looks_settings_photoreal_640x480", "looks_settings_studio_640x480", "odd_look_margin", "oddgrid_contrast",
           "preset_feasibility", "rose_finish", "studio_brackets", "settings_background", "settings_colour",
           "sky_irradiance", "wall_irradiance", "photoreal_frames", "photoreal_ladder",
           "looks_settings_photoreal_presets", "looks_settings_photoreal_ava_objects",
           "looks_settings_photoreal_count_2048", "looks_settings_photoreal_families",
           "looks_settings_photoreal_depth_2048", "looks_settings_photoreal_texture_1024",
           "looks_settings_photoreal_walls", "looks_noise_walls", "looks_settings_photoreal_walls_families",
           "looks_settings_photoreal_walls_rest", "looks_settings_photoreal_walls_1024")


def command(name: str) -> str:
    """The one command that measures a quoted file again."""
    return RELEASE_COMMANDS.get(name) or json.loads((RESULTS / f"{name}.json").read_text())["command"]


def measured_at(name: str) -> str | None:
    """The commit a result file records (without `-dirty`), None when it recorded none."""
    document = json.loads((RESULTS / f"{name}.json").read_text())
    commit = (document.get("code") or {}).get("git_commit")
    return commit.removesuffix("-dirty") if commit else None


def _git(*args: str) -> str:
    return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True, check=True).stdout.strip()


def age(name: str) -> tuple[str | None, str | None, int | None]:
    """(commit, its date, commits since then that touched the renderer or the scene model) of a result file."""
    commit = measured_at(name)
    if commit is None:
        return None, None, None
    try:
        date = _git("show", "-s", "--format=%cs", commit)
        behind = int(_git("rev-list", "--count", f"{commit}..HEAD", "--", *CODE_PATHS))
    except (subprocess.CalledProcessError, OSError):  # a shallow clone or an install: the history is not here
        return commit, None, None
    return commit, date, behind


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.quoted", description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help=f"exit 1 when a quoted file is over {MAX_BEHIND} behind")
    args = parser.parse_args(argv)
    listed = set(QUOTED) | set(STUDIES)
    unlisted = sorted(p.stem for p in RESULTS.glob("*.json") if p.stem not in listed)
    stale = []
    for kind, names in (("quoted", list(QUOTED)), ("study", list(STUDIES))):
        for name in names:
            commit, date, behind = age(name)
            print(f"{kind:6} {name:40} {commit[:12] if commit else '-':12} {date or '-':10} "
                  f"{'-' if behind is None else behind:>4} commits behind")
            if kind == "quoted" and behind is not None and behind > MAX_BEHIND:
                stale.append(f"{name} ({behind} commits behind; re-measure: {command(name)})")
    if unlisted:
        print(f"bench.quoted: result files in neither QUOTED nor STUDIES: {', '.join(unlisted)}", file=sys.stderr)
        return 1
    if args.check and stale:
        print(f"bench.quoted: {len(stale)} quoted figure(s) more than {MAX_BEHIND} commits behind the renderer and "
              f"scene model (python -m bench.release measures them again): " + "; ".join(stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
