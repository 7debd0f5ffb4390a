"""Task variants: several renders of one composed scene (e.g. with and without a cue), sharing a scene_id."""

from __future__ import annotations

import pytest

from stim3d.render.batch.config import ConfigError, parse_config
from stim3d.render.batch.plan import expand
from stim3d.render.batch.records import records_for
from stim3d.scenes.families.base import Frame
from stim3d.scenes.items import make_item

CONFIG = {
    "seed": 5,
    "tasks": [{"family": "shape_count", "count": 2, "params": {"n_shape_types": 3},
               "variants": {"plain": {}, "wide": {"band": 0.1}}}],
}


def test_each_item_is_planned_once_per_variant_with_the_same_seed():
    plans = expand(parse_config(CONFIG))
    assert [p.item_id for p in plans] == ["shape_count-t0-00000-plain", "shape_count-t0-00000-wide",
                                          "shape_count-t0-00001-plain", "shape_count-t0-00001-wide"]
    assert [p.scene_id for p in plans] == ["shape_count-t0-00000"] * 2 + ["shape_count-t0-00001"] * 2
    assert plans[0].item_index == plans[1].item_index and plans[1].params["band"] == 0.1


def test_variants_without_overrides_are_the_same_scene_and_share_the_records_scene_id():
    config = {**CONFIG, "tasks": [{**CONFIG["tasks"][0], "variants": {"a": {}, "b": {}}}]}
    plans = expand(parse_config(config))[:2]
    items = [make_item(p.family, p.params, [5, p.task_index, p.item_index], p.item_id, Frame(96, 72), p.split,
                       p.scene_id) for p in plans]
    assert items[0].scene == items[1].scene and items[0].questions[0].gold == items[1].questions[0].gold
    for item in items:
        item.provenance = None
    fake = items[0].model_copy(update={"provenance": _provenance()})
    (record,) = records_for(fake, "items/x/image.png", "0" * 64)
    assert record.scene_id == "shape_count-t0-00000"


def _provenance():
    from stim3d.scenes.model import Provenance

    return Provenance(stim3d_version="0", blender_version=None, engine="raster", samples=1, device="cpu",
                      denoise=False, mask_source="raycast", mask_agreement=None, item_key="k")


@pytest.mark.parametrize("variants, message", [
    ({"Bad-Name": {}}, "variant name 'Bad-Name'"),
    ({"x": {"no_such_param": 1}}, "no_such_param"),
])
def test_bad_variants_are_one_clear_config_error(variants, message):
    config = {**CONFIG, "tasks": [{**CONFIG["tasks"][0], "variants": variants}]}
    with pytest.raises(ConfigError, match=message):
        parse_config(config)
