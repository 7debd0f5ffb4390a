"""Occlusion sweeps: one scene at graded visibility levels of one object, nothing else changing.

A sweep holds a scene fixed and moves one object, the *occluder*, along a
straight path on the ground in front of another, the *target*, so that the
target's ray-cast visibility takes each requested level (within `tolerance`,
0.01 by default). Only the occluder's location changes from level to level:
every other object, the camera, the lights, the stage and the questions are the
very same values (byte-identical in item.json).

The path (`OccluderPath`) starts where the occluder hides the most of the target
(straight in front of it, towards the camera, from `placement.occluder_path`,
refined to the offset of least visibility) and runs sideways; at `max_offset`
the occluder no longer covers the target. Visibility is sampled along the path,
and for each level the first crossing is bracketed and solved by bisection
(`placement.solve_occluder_offset`). A level that cannot be reached is returned
with the reason (`Unreachable`) and the other levels are still solved:
- `occluder_too_small`: even straight in front the occluder leaves more visible;
- `frame_edge`: the target is cut by the frame, so its visibility has a ceiling;
- `hidden_by_others`: other objects already hide part of the target;
- `pixel_quantisation`: visibility jumps over the level between two pixel columns
  (a small target in pixels); render larger;
- `occluder_leaves_frame`, `collision` (interpenetration, checked with the
  placement `Layout`), `hides_other` (another object would drop below its
  visibility floor): the solved position is not allowed.

`sweep_item` turns a sweep of an item's scene into one `Item` per level. The
gold answer is recomputed from each level's scene by the family's own rule
(`Family.recount`, the one the add-on's Re-validate uses too); the counting
families count every object whatever its visibility, a fully hidden one too, so
their answer does not change, and the items say so
(`difficulty.answer_depends_on_visibility: false`).
"""

from .choose import choose_pair, rank_occluders, rank_targets
from .items import ItemSweep, level_gold, level_item_id, sweep_id, sweep_item, sweepable
from .model import TOLERANCE, LevelResult, OccluderPath, Sweep, SweepError, Unreachable
from .solve import SweepStage, candidate_paths, solve_sweep, sweep_scene, sweep_stage

__all__ = ["TOLERANCE", "ItemSweep", "LevelResult", "OccluderPath", "Sweep", "SweepError", "SweepStage",
           "Unreachable", "candidate_paths", "choose_pair", "level_gold", "level_item_id", "rank_occluders",
           "rank_targets", "solve_sweep", "sweep_id", "sweep_item", "sweep_scene", "sweep_stage", "sweepable"]
