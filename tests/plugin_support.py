"""Plug-ins as pip would install them: a module and a dist-info declaring entry points, in a folder put on PYTHONPATH.

Used by the hardening tests (tests/test_hardening_plugins.py, test_hardening_pipes.py) to install
well-behaved and misbehaving families, scoring cores and judges into a fresh `stim3d` process.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.batch_support import ROOT

ROW_FAMILY = '''
from pydantic import Field

from stim3d.scenes.camera import look_at
from stim3d.scenes.colors import named
from stim3d.scenes.families.base import Composed, Family, FamilyParams, Frame
from stim3d.scenes.families.shared.stage import counting_lights
from stim3d.scenes.model import Question, Scene, SceneObject
from stim3d.scenes.primitives import unit_dimensions
from stim3d.scenes.visibility import measure


class Params(FamilyParams):
    n: int = Field(2, ge=1, le=4, description="spheres in the row")


def compose(params, rng, frame):
    dims = tuple(0.5 * d for d in unit_dimensions("sphere"))
    objects = [SceneObject(id=i + 1, shape="sphere", size=0.5, dimensions=dims, color=named("red"),
                           location=(1.2 * i - 0.6 * (params.n - 1), 0.0, 0.25)) for i in range(params.n)]
    camera = look_at((0.0, -6.0, 2.5), (0.0, 0.0, 0.25), frame.width, frame.height)
    scene = Scene(camera=camera, lights=counting_lights(), objects=objects)
    question = Question(question_id="q0", text="How many spheres are there?", answer_type="integer", gold=GOLD)
    return Composed(scene, [question], measure(scene, frame.rays_per_pixel))


FAMILY = Family(NAME, "N red spheres in a row", Params, compose, ("integer",))
'''


def family_module(name: str, gold: str = "params.n", prelude: str = "") -> str:
    """A family plug-in's source: `prelude` runs at import; the question's gold is the expression `gold`."""
    return prelude + ROW_FAMILY.replace("NAME", repr(name)).replace("GOLD", gold)


def install(site: Path, distribution: str, modules: dict[str, str], entry_points: dict[str, dict[str, str]]) -> None:
    """Write `modules` ({module name: source}) and a dist-info for `distribution` declaring `entry_points`."""
    site.mkdir(parents=True, exist_ok=True)
    for module, source in modules.items():
        (site / f"{module}.py").write_text(source)
    info = site / f"{distribution.replace('-', '_')}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {distribution}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("".join(
        f"[{group}]\n" + "".join(f"{name} = {target}\n" for name, target in targets.items())
        for group, targets in entry_points.items()))


def python(*args: str, site: Path, cwd: Path, env: dict[str, str] | None = None, timeout: float = 300,
           output: int | None = None) -> subprocess.CompletedProcess:
    """`python ARGS` in a fresh process that sees the plug-ins installed in `site`.

    `output`, a file descriptor, receives both stdout and stderr (e.g. a pipe nobody reads); else both are captured.
    """
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join((str(site), str(ROOT))), **(env or {})}
    streams = {"capture_output": True} if output is None else {"stdout": output, "stderr": output}
    return subprocess.run([sys.executable, *args], cwd=cwd, text=True, env=environment, timeout=timeout,
                          **streams)  # type: ignore[call-overload]


def stim3d(*args: str, site: Path, cwd: Path, env: dict[str, str] | None = None, timeout: float = 300,
           output: int | None = None) -> subprocess.CompletedProcess:
    """`python -m stim3d ARGS` in a fresh process that sees the plug-ins installed in `site`."""
    return python("-m", "stim3d", *args, site=site, cwd=cwd, env=env, timeout=timeout, output=output)


TOY_CORE = '''
import json
from pathlib import Path


def receive(records, batch_dir):
    Path(batch_dir, "core_received.json").write_text(json.dumps([r.question_id for r in records]))
    return [f"toy core: {len(records)} records"]
'''
