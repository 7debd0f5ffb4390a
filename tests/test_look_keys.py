"""Which item.json keys a look changes (docs/looks.md, "Which item.json keys a look changes"): exactly those.

One tiny AVA colour item (a boxed object, so its family measures the render) is rendered
by Cycles at 64x48, 2 samples, in studio and in clevr; the two item.json files must be
equal once the keys the docs name are taken out, and must differ in some of them.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from stim3d.render.settings import RenderSettings
from stim3d.scenes.families.base import Frame
from stim3d.scenes.items import make_item

# The keys docs/looks.md names, as paths into item.json ("*" any list index, a trailing "*" any key suffix).
LOOK_KEYS = (
    "scene.look",  # absent for studio unless redrawn: environment, lights, ground, objects, redraws, failures
    "difficulty.look",  # absent for studio
    "ground_truth.objects.*.measured_srgb",
    "ground_truth.objects.*.contrast_de",
    # families' rendered_difficulty hooks
    "difficulty.measured_de_*", "difficulty.measured_nearest", "difficulty.measured_margin_de",
    "difficulty.measured_ambiguous",  # ava_color
    "difficulty.measured_delta_e", "difficulty.neighbour_delta_e",  # odd_grid
    "scene.stage.ground_srgb",  # studio's contrast redraw, when it needed one
    "scene.lights.*.power_w", "scene.stage.world_strength",  # studio's colour re-exposure, when it needed one
)
DOCS = Path(__file__).resolve().parent.parent / "docs" / "looks.md"


def _pattern(key: str) -> re.Pattern[str]:
    return re.compile("^" + re.escape(key).replace(r"\.\*\.", r"\.\d+\.").replace(r"\*", ".*") + "$")


PATTERNS = [_pattern(key) for key in LOOK_KEYS]


def leaves(value: Any, path: str = "") -> dict[str, Any]:
    """Every leaf of a JSON document by its dotted path (list items by index); empty containers are leaves."""
    if isinstance(value, dict) and value:
        return {k: v for key, item in value.items() for k, v in leaves(item, f"{path}.{key}" if path else key).items()}
    if isinstance(value, list) and value and not all(isinstance(v, (int, float)) for v in value):
        return {k: v for i, item in enumerate(value) for k, v in leaves(item, f"{path}.{i}").items()}
    return {path: value}


def look_key(path: str) -> bool:
    """Whether a leaf lies under one of the keys the docs name (the key itself or anything inside it)."""
    parts = path.split(".")
    return any(p.match(".".join(parts[:i])) for p in PATTERNS for i in range(1, len(parts) + 1))


def test_the_docs_name_every_key_this_test_allows():
    text = DOCS.read_text()
    for key in LOOK_KEYS:
        assert f"`{key.replace('.*.', '[].').rstrip('*')}" in text, key


@pytest.mark.bpy
def test_two_looks_differ_in_item_json_only_where_the_docs_say(tmp_path):
    pytest.importorskip("bpy")
    from stim3d.render.batch import produce

    documents = {}
    for look in ("studio", "clevr"):
        item = make_item("ava_color", {}, [3, 0, 0], "ava-look", Frame(64, 48), look=look)
        settings = RenderSettings(width=64, height=48, samples=2, denoise=False, look=look)
        folder = produce.render_item(item, settings, tmp_path / look, tmp_path / f"work-{look}", key=None)
        documents[look] = leaves(json.loads((folder / "item.json").read_text()))
    studio, clevr = documents["studio"], documents["clevr"]
    differing = {path for path in set(studio) | set(clevr) if studio.get(path, "absent") != clevr.get(path, "absent")}
    assert differing, "two looks must differ somewhere"
    unexpected = sorted(path for path in differing if not look_key(path))
    assert not unexpected, f"a look changed keys the docs do not name: {unexpected}"
    assert any(path.startswith("scene.look.") for path in differing)
    assert any(path.endswith(".measured_srgb") for path in differing), "the measured colours should differ"
