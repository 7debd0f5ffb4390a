"""Pictures for the docs: one rendered item per family, and the gallery page as headless Chromium shows it."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
from PIL import Image

from .docs_examples import ROOT, _stim3d

# Families whose defaults do not fit the pictures' 320x240 frame get these parameters.
PICTURE_PARAMS: dict[str, dict] = {"odd_grid": {"rows": 5, "cols": 5}}
PICTURE_RENDER = {"engine": "cycles", "width": 320, "height": 240, "samples": 16, "denoise": True}


def shorten(text: str, limit: int = 150) -> str:
    """A long prompt cut at a word boundary (the full text is in the item's item.json)."""
    return text if len(text) <= limit else text[:limit].rsplit(" ", 1)[0] + " ..."


def family_pictures(work: Path, target: Path) -> tuple[str, list[str]]:
    """Render the first item of every registered family; copy the images to `target`; return (markdown table, changed)."""
    from stim3d.scenes.families import FAMILIES

    names = sorted(FAMILIES)
    config = {"seed": 2026, "render": PICTURE_RENDER,
              "tasks": [{"family": name, "count": 1, "params": PICTURE_PARAMS.get(name, {})} for name in names]}
    work.mkdir(parents=True, exist_ok=True)
    (work / "families.yaml").write_text(json.dumps(config))
    # exit code 1 only means some family's item could not be made; those are left out of the table
    subprocess.run([sys.executable, "-m", "stim3d", "render", str(work / "families.yaml"), "--out", str(work / "out"),
                    "--quiet"], cwd=ROOT, capture_output=True, text=True)
    rows, changed = ["| family | a rendered item | its first question |", "|---|---|---|"], []
    for t, name in enumerate(names):
        folder = work / "out" / "items" / f"{name}-t{t}-00000"
        if not (folder / "image.png").is_file():
            continue
        image = target / f"{name}.png"
        if not image.is_file() or image.read_bytes() != (folder / "image.png").read_bytes():
            image.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(folder / "image.png", image)
            changed.append(f"families/{name}.png")
        item = json.loads((folder / "item.json").read_text())
        question = item["questions"][0] if item["questions"] else None
        asked = f"{shorten(question['text'])} (gold: {question['gold']})".replace("|", "/") if question else ""
        rows.append(f"| `{name}` | ![{name}](families/{name}.png) | {asked} |")
    note = (f"\n\n*Seed 2026, the first item of each family at its default parameters"
            f"{' (odd_grid: 5x5)' if 'odd_grid' in names else ''}; Cycles, 320x240, 16 samples with OIDN.*")
    return "\n".join(rows) + note, changed


GALLERY_CONFIG = """\
seed: 3
render: {engine: cycles, width: 320, height: 240, samples: 16, denoise: true}
tasks:
  - family: shape_count
    count: 3
    grid: {min_visibility: [0.7, 0.9]}
    variants: {studio: {look: studio}, photo: {look: photoreal}}
  - family: shape_color_count
    count: 3
    grid: {min_visibility: [0.7, 0.9]}
    variants: {studio: {look: studio}, photo: {look: photoreal}}
"""


def _chromium_shot(url: str, path: Path, width: int, height: int) -> np.ndarray:
    binary = shutil.which("chromium") or shutil.which("chromium-browser")
    if binary is None:
        raise SystemExit("chromium is not installed: run `scripts/install.sh --test` (Debian package 'chromium')")
    subprocess.run([binary, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
                    f"--window-size={width},{height}", "--virtual-time-budget=5000", f"--screenshot={path}", url],
                   check=True, capture_output=True, timeout=120)
    return np.asarray(Image.open(path).convert("RGB"))


def gallery_screenshot(work: Path) -> tuple[Path, str]:
    """A 12-item Cycles batch's gallery (6 scenes, each in studio and photoreal): the card grid above, one item's
    detail view with overlays below."""
    work.mkdir(parents=True, exist_ok=True)
    (work / "gallery.yaml").write_text(GALLERY_CONFIG)
    _stim3d("render", str(work / "gallery.yaml"), "--out", str(work / "out"), "--quiet", cwd=ROOT)
    _stim3d("gallery", str(work / "out"), cwd=ROOT)
    page = (work / "out" / "gallery" / "index.html").as_uri()
    item_id = "shape_color_count-t1-00001-photo"
    top = _chromium_shot(page, work / "grid.png", 1280, 512)
    link = f"#item={item_id}&show=mask,amodal,labels"
    bottom = _chromium_shot(page + link, work / "detail.png", 1280, 512)
    shot = work / "gallery.png"
    Image.fromarray(np.concatenate([top, bottom])).save(shot, optimize=True)
    caption = (f"*A 12-item Cycles batch (6 scenes, each in studio and photoreal as variants; 320x240, 16 samples "
               f"with OIDN): two headless-Chromium screenshots of the page as written, the card grid (with its look "
               f"filter) and the link `{link}`.*")
    return shot, caption
