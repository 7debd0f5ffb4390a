"""Shared by the study tests: one tiny rendered batch with every answer type a person can answer (cell_set
is produced by no family), built into studies by each test file."""

from __future__ import annotations

import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
STANDIN_WIDGETS = ROOT / "tests" / "fixtures" / "study" / "widgets_standin.js"

# Workbench at 64x48: integer (shape_count), yes_no and a rubric (form_constancy's default and describe
# questions), letters (large dots, so that one letter is legible at this size), cell (odd_grid), ROSE's
# strict_count / strict_cell_set / strict_cell_set_count (rose_grid), box (ava_localize), number
# (ava_depth_absolute) and choice (ava_spatial), two items of the last two so that the easiest (the catch
# trials) leave one of each as a main trial.
STUDY_BATCH_CONFIG = """\
seed: 5
render: {engine: workbench, width: 64, height: 48}
tasks:
  - family: shape_count
    count: 3
    params: {max_instances: 2}
  - family: form_constancy
    count: 1
    questions: [default, describe]
  - family: letters
    count: 1
    params: {n_letters: 1, dot_size: 0.3, spacing: 0.7}
  - family: odd_grid
    count: 2
    params: {rows: 3, cols: 3, min_object_px: 3}
  - family: rose_grid
    count: 1
    params: {rows: 4, cols: 4}
  - family: ava_localize
    count: 1
  - family: ava_depth_absolute
    count: 2
  - family: ava_spatial
    count: 2
"""

def render_study_batch(folder: Path) -> Path:
    """The rendered batch folder of STUDY_BATCH_CONFIG (the session fixture `study_batch`)."""
    import stim3d

    config = folder / "batch.yaml"
    config.write_text(STUDY_BATCH_CONFIG)
    report = stim3d.render_batch(config, folder / "batch", workers=1)
    assert not report.failed, report.failed
    return folder / "batch"


def with_standin_widgets(study: Path) -> None:
    """Put the stand-in widget plugin in a built study (the page's flow is tested apart from the real widgets)."""
    shutil.copyfile(STANDIN_WIDGETS, study / "js" / "widgets.js")
