"""Child process of the add-on's Render and Save: render one item and write its folder as the batch does.

Run by blender_addon/jobs.py, never by hand:
    python render_job.py JOB.json                                   (Blender as a Python module)
    blender --background --factory-startup --python render_job.py -- JOB.json  (desktop Blender)

Why a separate process: the batch renderer (`render.backends.blender.render_scene`)
starts from factory settings, which would wipe the user's open session; a child
Blender renders the edited item with exactly the code every composed item goes
through (render/batch/composed.py: lock, render_item, records) and leaves the user's
scene alone.

JOB.json: {"item": item JSON, "settings": RenderSettings, "out": batch folder,
"workdir": scratch folder, "sys_path": folders to import stim3d and its wheels
from, "result": where to write {"folder": ...} or {"error": "one line"}}.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def run(job: dict) -> tuple[Path, int]:
    """Render, write the item folder, rebuild OUT/records.jsonl. Returns (folder, record count)."""
    from stim3d.render.batch.composed import ComposedPlan, render_composed
    from stim3d.render.batch.folder import BatchFolder
    from stim3d.render.settings import RenderSettings
    from stim3d.scenes.model import Item

    item = Item.model_validate_json(job["item"])
    settings = RenderSettings.model_validate(job["settings"])
    plan = ComposedPlan([(item, settings)], key=None, records="folder", edited_by_hand=True)  # an edit always renders
    run = render_composed(plan, Path(job["out"]), in_process=True, scratch=Path(job["workdir"]))
    return BatchFolder(job["out"]).item_dir(item.item_id), run.records


def main(job_path: str) -> int:
    job = json.loads(Path(job_path).read_text())
    own_folder = str(Path(__file__).resolve().parent)  # `python render_job.py` puts it first: the add-on's
    sys.path[:] = [entry for entry in sys.path if entry != own_folder]  # modules must not shadow others
    for entry in reversed(job["sys_path"]):
        if entry not in sys.path:
            sys.path.insert(0, entry)
    result = Path(job["result"])
    try:
        folder, records = run(job)
    except Exception as exc:  # reported to the user as one line; the traceback stays in the child's log
        import traceback

        traceback.print_exc()
        result.write_text(json.dumps({"error": f"{exc.__class__.__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"}))
        return 1
    result.write_text(json.dumps({"folder": str(folder), "records": records}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[-1]))
