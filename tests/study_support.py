"""Shared by the study tests: one tiny rendered batch with every answer type a person can answer (cell_set
is produced by no family), one with every registered family, and a study built as for real participants."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
STANDIN_WIDGETS = ROOT / "tests" / "fixtures" / "study" / "widgets_standin.js"

# Workbench at 64x48: integer (shape_count), yes_no and a rubric (form_constancy's default and describe
# questions), letters (large dots, so that one letter is legible at this size), cell (odd_grid), ROSE's
# strict_count / strict_cell_set / strict_cell_set_count (rose_grid), box (ava_localize), number
# (ava_depth_absolute) and choice (ava_spatial), two items of ava_depth_absolute and three of ava_spatial so that
# the catch trials (the easiest of the exact types: ava_spatial's two-way choices) leave one of each as a main trial.
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
    count: 3
"""

# A consent page as an owner would write it (no template placeholder left), so a study builds without --pilot.
APPROVED_CONSENT = "<h2>Consent</h2><p>About 10 minutes. Contact: A. Researcher, researcher@example.org.</p>\n"


def build_real(batch: Path, out: Path, options: Any) -> Any:
    """`build_study` as for real participants (no pilot: no gold on the page), the consent edited first."""
    from stim3d.study.build import build_study

    out.mkdir(parents=True, exist_ok=True)
    (out / "consent.html").write_text(APPROVED_CONSENT)
    return build_study(batch, out, options)


# Workbench at 64x48, one item of each registered family (three shape_count items, two of ava_depth_absolute and
# ava_spatial, so that practice and catch trials leave every answer type a main trial; form_constancy asks its
# describe question too): tests/test_study_score_families.py and tests/test_study_people.py share its render.
EVERY_FAMILY_COUNTS = {"shape_count": 3, "ava_depth_absolute": 2, "ava_spatial": 2}
EVERY_FAMILY_PARAMS: dict[str, dict[str, Any]] = {
    "shape_count": {"max_instances": 2}, "letters": {"n_letters": 1, "dot_size": 0.3, "spacing": 0.7},
    "odd_grid": {"rows": 3, "cols": 3, "min_object_px": 3}, "rose_grid": {"rows": 4, "cols": 4}}


def every_family_config() -> dict[str, Any]:
    """The batch config of every family `stim3d.families()` registers (EVERY_FAMILY_COUNTS, EVERY_FAMILY_PARAMS)."""
    import stim3d

    tasks: list[dict[str, Any]] = []
    for family in sorted(stim3d.families()):
        task: dict[str, Any] = {"family": family, "count": EVERY_FAMILY_COUNTS.get(family, 1),
                                "params": EVERY_FAMILY_PARAMS.get(family, {})}
        if family == "form_constancy":
            task["questions"] = ["default", "describe"]
        tasks.append(task)
    return {"seed": 5, "render": {"engine": "workbench", "width": 64, "height": 48}, "tasks": tasks}


def render_every_family_batch(folder: Path) -> Path:
    """The rendered batch of `every_family_config` (the session fixture `every_family_batch`)."""
    import stim3d

    report = stim3d.render_batch(every_family_config(), folder / "batch", workers=1)
    assert not report.failed, report.failed
    return folder / "batch"


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
