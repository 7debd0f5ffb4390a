"""`stim3d sweep occlusion`: render an occlusion sweep of an item folder or of every item of a config.

Each reachable level becomes a normal item folder (`OUT/items/<item_id>-vis0400/`:
image, mask, item.json, timing.json), rendered with the same backend, settings and
seed as any item (`stim3d.render.batch.produce.render_item`). The run also
writes:
- `OUT/records.jsonl`: the records of every level of this run (render/batch/records.py);
  `difficulty` holds `sweep_id`, `sweep_level` (requested), `target_visibility`
  (achieved) and `answer_depends_on_visibility`;
- `OUT/sweeps.json`: per sweep, the target, the occluder, the path, and per level
  the achieved visibility or the reason it could not be reached; items that
  could not be made at all are listed with their reason;
- with `plot=True`: `OUT/sweep_plot.png` (achieved vs requested visibility) and
  `OUT/strip-<source item>.png` (the levels' images side by side, labelled).

A rerun into the same folder skips level folders whose key (scene, questions and
render settings) matches, as `stim3d render` does.
"""

from stim3d.render.sweep.levels import parse_levels
from stim3d.render.sweep.pictures import accuracy_by_level, plot_achieved, read_scores, strip
from stim3d.render.sweep.run import SweepReport, run_occlusion_sweep

__all__ = ["SweepReport", "accuracy_by_level", "parse_levels", "plot_achieved", "read_scores", "run_occlusion_sweep",
           "strip"]
