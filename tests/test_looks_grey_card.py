"""bench/looks_grey_card.py: the grey card it renders under each photoreal map, and the per-map gains it derives
(a measurement; photoreal does not apply them, bench/results/looks_NOTES.md "Grey card per map")."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from bench.looks_grey_card import GREY, grey_card_scene, side_gains
from stim3d.scenes import looks
from stim3d.scenes.colors import PALETTE
from stim3d.scenes.families.base import Frame
from stim3d.scenes.items import make_item

RESULT = Path(__file__).resolve().parents[1] / "bench" / "results" / "looks_grey_card.json"


def test_gains_bring_every_level_to_the_same_luminance_and_keep_the_overall_level():
    levels = {"a": 0.1, "b": 0.4, "c": 0.2}
    gains = side_gains(levels)
    assert {name: levels[name] * gains[name] for name in levels} == pytest.approx({n: 0.2 for n in levels}, rel=1e-3)
    assert math.prod(gains.values()) == pytest.approx(1.0, abs=1e-3)


def test_the_committed_gains_are_the_committed_levels():
    figures = json.loads(RESULT.read_text())["figures"]
    assert set(figures["side_gain"]) == {name for name in looks.ENVIRONMENTS if not name.startswith("pmndrs_")}  # Blender's
    assert side_gains(figures["level"]) == pytest.approx(figures["side_gain"], abs=2e-4)


def test_the_grey_card_is_grey_matte_spheres_lit_by_the_map_alone_as_photoreal_exposes_it():
    item = make_item("shape_count", {}, [26, 0, 0], "shape_count-x", Frame(64, 48), look="photoreal")
    card = grey_card_scene(item.scene, "sunset", 90.0)
    assert [o.id for o in card.objects] == [o.id for o in item.scene.objects]
    assert [o.location for o in card.objects] == [o.location for o in item.scene.objects]
    assert all(o.shape == "sphere" and o.color.srgb == PALETTE[GREY] and o.finish == "matte" for o in card.objects)
    assert card.look is not None and card.look.sun is None and card.look.ground == item.scene.look.ground
    assert {m.material for m in card.look.objects} == {"rubber"}
    env = card.look.environment
    assert (env.name, env.rotation_deg, env.exposure_ev) == ("sunset", 90.0, 0.0)
    assert env.strength * looks.ENVIRONMENT_IRRADIANCE["sunset"] == pytest.approx(looks.TARGET_IRRADIANCE)
    assert env.white_balance == looks.ENVIRONMENT_WHITE_BALANCE["sunset"]
