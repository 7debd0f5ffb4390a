"""Regenerate every example output and figure of the docs that the code can produce: `python -m bench.docs`.

The pages hold generated parts between markers:

    <!-- regen:NAME -->
    ...written by this command...
    <!-- /regen:NAME -->

Steps (`--only STEP`, repeatable; default: all):

- `perf`: the Performance tables and figures, from bench/results/*.json only (instant);
- `scoring`: the scoring walk-through of docs/scoring.md, rendered and scored for real
  (and checked against the composed-only run that tests/test_docs.py repeats);
- `summary`: the demo preset rendered with two workers: its log and summary (docs/batches.md);
- `sweep`: an occlusion sweep of the demo batch's first item: docs/sweep_strip.png and its caption;
- `looksweep`: `stim3d sweep look` of one shape_color_count item: docs/images/look_strip.png and its caption;
- `families`: one picture per registered family, docs/families/<name>.png, and their table;
- `gallery`: the gallery page of a 12-item Cycles batch (6 scenes in studio and photoreal), screenshot by
  headless Chromium: docs/gallery.png.
- `oddgrid`: docs/oddgrid.md's constant baselines (instant) and its contact sheet of an 8-item Cycles batch.
- `objects`: docs/objects.md's contact sheet of the composed-object library, 12 Cycles renders, and its photoreal
  scene of library objects (bench/docs_objects.py).
- `study`: one screenshot per response widget of the study (docs/images/study/) and the table of
  docs/study_widgets.md, from the widgets answered and submitted in headless Chromium, and one trial
  on a laptop and on a phone (docs/images/study_trial_desktop.png, study_trial_phone.png;
  bench/docs_study.py).

It prints how long each step took and which files changed. Renders are small (the
pages say their sizes) but `summary`, `sweep`, `families` and `gallery` still take
minutes on two cores.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from . import docs_objects, docs_oddgrid, docs_perf, oddgrid_baselines
from .docs_examples import ROOT, _stim3d, demo_summary, run_scoring_example, scoring_block
from .docs_pictures import family_pictures, gallery_screenshot

DOCS = ROOT / "docs"
BLOCK = re.compile(r"(<!-- regen:(?P<name>[a-z0-9-]+) -->\n)(?P<body>.*?)(<!-- /regen:(?P=name) -->)", re.S)


def pages() -> list[Path]:
    """Every page that may hold generated blocks: the docs and the README."""
    return [*sorted(DOCS.glob("*.md")), ROOT / "README.md"]


def blocks(text: str) -> dict[str, str]:
    """Every generated block of a page, by name (without the newline before its end marker)."""
    return {m["name"]: m["body"].rstrip("\n") for m in BLOCK.finditer(text)}


def replace_block(path: Path, name: str, body: str) -> bool:
    """Put `body` between the markers named `name` in `path`; True when the file changed."""
    text = path.read_text()
    if name not in blocks(text):
        raise SystemExit(f"{path}: no <!-- regen:{name} --> ... <!-- /regen:{name} --> markers")
    new = BLOCK.sub(lambda m: m[1] + body.rstrip("\n") + "\n" + m[4] if m["name"] == name else m[0], text)
    if new != text:
        path.write_text(new)
    return new != text


def step_perf(work: Path) -> list[str]:
    changed = []
    for page in pages():
        for name in blocks(page.read_text()):
            if name in docs_perf.BLOCKS and replace_block(page, name, docs_perf.BLOCKS[name]()):
                changed.append(f"{page.name}:{name}")
    return changed


def step_scoring(work: Path) -> list[str]:
    rendered, composed = run_scoring_example(render=True), run_scoring_example(render=False)
    if rendered != composed:
        raise SystemExit(f"the rendered and the composed-only scoring runs differ:\n{rendered}\n---\n{composed}")
    return ["scoring.md:scoring-example"] if replace_block(DOCS / "scoring.md", "scoring-example",
                                                            scoring_block(rendered)) else []


def _demo(work: Path) -> Path:
    out = work / "out"
    if not (out / "records.jsonl").is_file():
        (work / "summary.md").write_text(demo_summary(out))
    return out


def step_summary(work: Path) -> list[str]:
    _demo(work)
    return ["batches.md:demo-summary"] if replace_block(DOCS / "batches.md", "demo-summary",
                                                        (work / "summary.md").read_text()) else []


def step_sweep(work: Path) -> list[str]:
    demo = _demo(work)
    out = work / "sweep"
    source = demo / "items" / "shape_count-t0-00000"
    _stim3d("sweep", "occlusion", str(source), "--levels", "0.2:1.0:0.2", "--out", str(out), "--plot", cwd=ROOT)
    sweep = json.loads((out / "sweeps.json").read_text())["sweeps"][0]
    item = json.loads((source / "item.json").read_text())
    objects = {o["id"]: o for o in item["scene"]["objects"]}
    target, occluder = objects[sweep["target_id"]], objects[sweep["occluder_id"]]
    achieved = ", ".join(f"{lv['achieved']:.4f}" for lv in sweep["levels"] if lv.get("achieved") is not None)
    question = item["questions"][0]
    render = item["provenance"]
    caption = (f"*Made by the command above from the demo batch ({render['engine'].capitalize()}, "
               f"{item['scene']['camera']['width']}x{item['scene']['camera']['height']}, {render['samples']} samples; "
               f"the strip shows the same crop of each level). The {occluder['color']['name']} {occluder['shape']} "
               f"(object {occluder['id']}) slides in front of the {target['color']['name']} {target['shape']} "
               f"(object {target['id']}). Labels read `requested -> achieved` visibility: {achieved}. The question, "
               f"\"{question['text']}\", and its gold answer ({question['gold']}) are the same at every level.*")
    changed = ["sweeps.md:sweep-caption"] if replace_block(DOCS / "sweeps.md", "sweep-caption", caption) else []
    strip = out / f"strip-{sweep['source_item_id']}.png"
    if _copy_if_changed(strip, DOCS / "sweep_strip.png"):
        changed.append("sweep_strip.png")
    return changed


LOOK_SWEEP_CONFIG = {"seed": 26, "render": {"engine": "cycles", "width": 320, "height": 240, "samples": 32,
                                              "denoise": True},
                     "tasks": [{"family": "shape_color_count", "count": 1}]}


def step_looksweep(work: Path) -> list[str]:
    work.mkdir(parents=True, exist_ok=True)
    (work / "looks.json").write_text(json.dumps(LOOK_SWEEP_CONFIG))
    _stim3d("sweep", "look", str(work / "looks.json"), "--out", str(work / "looks"), "--quiet", cwd=ROOT)
    summary = json.loads((work / "looks" / "looks.json").read_text())["sweeps"][0]
    render = LOOK_SWEEP_CONFIG["render"]
    redraws = ", ".join(f"{e['look']} {e['redraws']}" for e in summary["looks"])
    caption = (f"*Made by `python -m bench.docs --only looksweep`: `stim3d sweep look` of one shape_color_count item "
               f"(seed {LOOK_SWEEP_CONFIG['seed']}, Cycles, {render['width']}x{render['height']}, {render['samples']} "
               f"samples with OIDN), the realism ladder left to right ({', '.join(e['look'] for e in summary['looks'])}); "
               f"same mask and gold answers in each. "
               f"Colour redraws: {redraws}.*")
    changed = ["looks.md:look-sweep-caption"] if replace_block(DOCS / "looks.md", "look-sweep-caption", caption) else []
    if _copy_if_changed(work / "looks" / f"strip-{summary['source_item_id']}.png", DOCS / "images" / "look_strip.png"):
        changed.append("images/look_strip.png")
    return changed


def step_families(work: Path) -> list[str]:
    table, changed = family_pictures(work / "families", DOCS / "families")
    if replace_block(DOCS / "families.md", "family-pictures", table):
        changed.append("families.md:family-pictures")
    return changed


def step_gallery(work: Path) -> list[str]:
    shot, caption = gallery_screenshot(work / "gallery")
    changed = ["gallery.png"] if _copy_if_changed(shot, DOCS / "gallery.png") else []
    if replace_block(DOCS / "gallery.md", "gallery-caption", caption):
        changed.append("gallery.md:gallery-caption")
    return changed


def step_oddgrid(work: Path) -> list[str]:
    changed = ["oddgrid.md:oddgrid-baselines"] if replace_block(DOCS / "oddgrid.md", "oddgrid-baselines",
                                                                 oddgrid_baselines.table()) else []
    if _copy_if_changed(docs_oddgrid.contact_sheet(work / "oddgrid"), DOCS / "images" / "oddgrid_contact.png"):
        changed.append("images/oddgrid_contact.png")
    return changed


def step_objects(work: Path) -> list[str]:
    sheet = docs_objects.contact_sheet(work / "objects")
    photo = docs_objects.photoreal_scene(work / "objects")
    pictures = {"images/objects_contact.png": sheet, "images/objects_photoreal.png": photo}
    return [name for name, path in pictures.items() if _copy_if_changed(path, DOCS / name)]


def step_study(work: Path) -> list[str]:
    from . import docs_study  # needs playwright (the test extra) and the vendored jsPsych

    table, changed = docs_study.screenshots()
    changed += docs_study.trial_screenshots()
    if replace_block(docs_study.PAGE, "study-widgets", table):
        changed.append("study_widgets.md:study-widgets")
    return changed


def _copy_if_changed(source: Path, target: Path) -> bool:
    if target.is_file() and target.read_bytes() == source.read_bytes():
        return False
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, target)
    return True


STEPS: dict[str, Callable[[Path], list[str]]] = {
    "perf": step_perf, "scoring": step_scoring, "summary": step_summary, "sweep": step_sweep, "looksweep": step_looksweep,
    "families": step_families, "gallery": step_gallery, "oddgrid": step_oddgrid, "objects": step_objects,
    "study": step_study,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", action="append", choices=sorted(STEPS), help="run only this step (repeatable)")
    args = parser.parse_args()
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip() or "not a checkout"
    print(f"regenerating docs at commit {commit}")
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as scratch:
        for name in args.only or list(STEPS):
            t = time.perf_counter()
            changed = STEPS[name](Path(scratch))
            print(f"{name}: {time.perf_counter() - t:.0f} s; changed: {', '.join(changed) or 'nothing'}", flush=True)
    print(f"done in {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
