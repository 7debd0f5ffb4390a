"""The contact sheet of docs/oddgrid.md (its baseline table comes from bench/oddgrid_baselines.py).

The contact sheet shows one item per odd type: the four single types on the ground,
the 2-, 3- and 4-type combinations on a labelled board, and an item without an odd
cell, rendered with Cycles at the preset's setting (640x480, 8 samples + denoising).
"""

from __future__ import annotations

from pathlib import Path

from .docs_examples import ROOT, _stim3d

SHEET_CONFIG = """\
seed: 16
render: {engine: cycles, width: 640, height: 480, samples: 8, denoise: true}
tasks:
  - family: odd_grid
    count: 4
    grid: {odd_types: [color, size, rotation, position]}
    params: {p_none: 0.0, layout: ground}
  - family: odd_grid
    count: 3
    grid: {odd_types: [2-type, 3-type, 4-type]}
    params: {p_none: 0.0, layout: board, labels: true}
  - family: odd_grid
    count: 1
    params: {p_none: 1.0, layout: board, odd_types: color}
"""


def contact_sheet(work: Path) -> Path:
    """Render the 8 items of SHEET_CONFIG into `work` and make their contact sheet; returns the PNG."""
    work.mkdir(parents=True, exist_ok=True)
    config = work / "oddgrid_sheet.yaml"
    config.write_text(SHEET_CONFIG)
    _stim3d("render", str(config), "--out", str(work / "out"), "--quiet", cwd=ROOT)
    sheet = work / "oddgrid_contact.png"
    _stim3d("contact-sheet", str(work / "out"), "-o", str(sheet), "--n", "8", "--columns", "4", "--thumb-width", "320",
            cwd=ROOT)
    return sheet
