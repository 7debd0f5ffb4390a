"""Same config and seed, same bytes; no hidden randomness or clock in generated data."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from stim3d.scenes.families import FAMILIES
from stim3d.scenes.families.base import Frame
from stim3d.scenes.items import make_item
from stim3d.scenes.model import Item

ROOT = Path(__file__).resolve().parents[1]


def test_every_family_composes_the_same_bytes_twice():
    frame = Frame(640, 480)  # every family's defaults fit the default image size (dense grids need the pixels)
    for name in FAMILIES:
        first = make_item(name, {}, [5, 1, 2], "a", frame).to_json()
        second = make_item(name, {}, [5, 1, 2], "a", frame).to_json()
        assert first == second, name
        assert make_item(name, {}, [5, 1, 3], "a", frame).to_json() != first, name


def test_item_json_round_trips_exactly():
    text = make_item("shape_color_count", {}, [3, 0, 0], "rt", Frame(160, 120)).to_json()
    assert Item.model_validate_json(text).to_json() == text


FORBIDDEN = [
    r"^\s*import random\b", r"^\s*from random import", r"np\.random\.seed", r"np\.random\.(rand|randn|randint|choice|uniform|normal)\(",
    r"\btime\.time\(", r"\bdatetime\b", r"\buuid\b",
]


def test_scene_code_has_no_global_random_state_or_clock():
    offenders = []
    for path in (ROOT / "stim3d" / "scenes").rglob("*.py"):
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if any(re.search(pattern, line) for pattern in FORBIDDEN):
                offenders.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert not offenders, offenders


def test_scenes_import_without_bpy_or_pyrender():
    code = "import sys, stim3d, stim3d.scenes.families, stim3d.scenes.visibility, stim3d.scenes.items; " \
           "list(stim3d.scenes.families.FAMILIES); stim3d.compose('shape_count', width=64, height=48); " \
           "assert 'bpy' not in sys.modules and 'pyrender' not in sys.modules, sorted(sys.modules)"
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)
