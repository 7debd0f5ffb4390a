"""Start and follow the child process that renders and saves an item (see render_job.py).

No Blender import here: the caller passes `bpy.app.binary_path`. Desktop Blender
runs the job in `blender --background --factory-startup`; Blender as a Python
module (no binary) runs it in this Python interpreter, which has bpy.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from stim3d.render.batch.folder import BatchFolder
from stim3d.render.settings import RenderSettings
from stim3d.scenes.model import Item

SCRIPT = Path(__file__).with_name("render_job.py")
LOG_TAIL_LINES = 15
# What the child imports beyond Blender's own Python: stim3d and the wheels the extension brings.
CHILD_IMPORTS = ("scenes", "render", "trimesh", "embreex", "fcl", "pydantic", "pydantic_core", "annotated_types",
                 "typing_extensions", "typing_inspection", "yaml", "PIL", "OpenEXR")


class RenderJobError(RuntimeError):
    """The child failed; the message is one line, the child's log is in `log`."""

    def __init__(self, message: str, log: str = ""):
        super().__init__(message)
        self.log = log


def edited_item_id(item_id: str, out: Path) -> str:
    """`<item_id>-editN` with the first N whose folder does not exist yet in `out` (an edit of an edit drops the old suffix)."""
    stem = re.sub(r"-edit\d+$", "", item_id)
    n = 1
    while BatchFolder(out).item_dir(f"{stem}-edit{n}").exists():
        n += 1
    return f"{stem}-edit{n}"


def renamed(item: Item, new_id: str) -> Item:
    """`item` under a new id; question ids `<item_id>-qK` follow."""
    prefix = f"{item.item_id}-"
    questions = [
        q.model_copy(update={"question_id": new_id + "-" + q.question_id.removeprefix(prefix)})
        for q in item.questions
    ]
    return item.model_copy(update={"item_id": new_id, "questions": questions})


def import_roots() -> list[str]:
    """The folders this process imports CHILD_IMPORTS from, for the child's sys.path.

    Not the whole sys.path: inside Blender it also holds Blender's own script
    folders (with an internal `bpy` package), which would shadow the child's bpy.
    """
    roots: list[str] = []
    for name in CHILD_IMPORTS:
        spec = importlib.util.find_spec(name)
        if spec is None or spec.origin is None:
            continue
        origin = Path(spec.origin).resolve()
        root = str(origin.parent.parent if spec.submodule_search_locations else origin.parent)
        if root not in roots:
            roots.append(root)
    return roots


def child_command(blender_binary: str, job_path: Path) -> list[str]:
    if blender_binary:
        return [blender_binary, "--background", "--factory-startup", "--python-exit-code", "1",
                "--python", str(SCRIPT), "--", str(job_path)]
    return [sys.executable, str(SCRIPT), str(job_path)]


@dataclass
class RenderJob:
    process: subprocess.Popen
    scratch: tempfile.TemporaryDirectory
    result_path: Path
    log_path: Path

    def running(self) -> bool:
        return self.process.poll() is None

    def wait(self) -> tuple[Path, int]:
        self.process.wait()
        return self.outcome()

    def outcome(self) -> tuple[Path, int]:
        """(new item folder, records in OUT/records.jsonl); RenderJobError (one line) if the child failed."""
        try:
            log = self.log_path.read_text(errors="replace") if self.log_path.exists() else ""
            result = json.loads(self.result_path.read_text()) if self.result_path.exists() else {}
        finally:
            self.scratch.cleanup()
        if "folder" in result:
            return Path(result["folder"]), int(result["records"])
        tail = "\n".join(log.splitlines()[-LOG_TAIL_LINES:])
        message = result.get("error") or f"the render process exited with code {self.process.returncode}"
        raise RenderJobError(f"render failed: {message}", tail)

    def cancel(self) -> None:
        if self.running():
            self.process.terminate()
            self.process.wait()
        self.scratch.cleanup()


def start_render_job(item: Item, settings: RenderSettings, out: Path, blender_binary: str = "") -> RenderJob:
    """Render `item` with `settings` in a child process, write `out/items/<item_id>/` and `out/records.jsonl`."""
    scratch = tempfile.TemporaryDirectory(prefix="stim3d-addon-")
    root = Path(scratch.name)
    job = {
        "item": item.to_json(),
        "settings": settings.model_dump(mode="json"),
        "out": str(Path(out).resolve()),
        "workdir": str(root / "work"),
        "result": str(root / "result.json"),
        "sys_path": import_roots(),
    }
    job_path = root / "job.json"
    job_path.write_text(json.dumps(job))
    log_path = root / "child.log"
    # The batch renderer resets Blender to factory settings; with no extension enabled, Blender then
    # deletes every extension's wheels from the user's extensions folder. The child gets a folder
    # of its own and imports stim3d and the wheels from this process's folders (sys_path) instead.
    env = {**os.environ, "BLENDER_USER_EXTENSIONS": str(root / "extensions")}
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            child_command(blender_binary, job_path), stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            env=env,
        )
    return RenderJob(process, scratch, root / "result.json", log_path)
