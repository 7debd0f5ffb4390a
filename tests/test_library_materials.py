"""Library objects in photoreal are made of what they are (docs/objects.md, "Materials"): a mug is glazed ceramic, a
chair stands on wooden legs, a car on rubber tyres; the accents keep their own colour while the object keeps its
named colour, and nothing of it moves geometry."""

from __future__ import annotations

import numpy as np
import pytest
from pydantic import ValidationError

from stim3d.scenes.camera import geometry, look_at
from stim3d.scenes.colors import named
from stim3d.scenes.families.base import Frame
from stim3d.scenes.items import make_item
from stim3d.scenes.look_colours import colour_margin
from stim3d.scenes.looks import draw_look
from stim3d.scenes.materials import ACCENT_MATERIALS, MADE_OF, OBJECT_MATERIALS
from stim3d.scenes.meshes import composed_mesh
from stim3d.scenes.object_library import LibraryEntry, LibraryPart, library, library_object
from stim3d.scenes.visibility import cast_object
from tests.helpers import scene


def chair_scene(color: str = "blue", finish: str = "matte", name: str = "chair"):
    chair = library_object(1, name, 2.0, 0.0, 0.0, 30.0, named(color)).model_copy(update={"finish": finish})
    return scene([chair], look_at((0.0, -6.0, 3.2), (0.0, 0.0, 0.9), 96, 72), 96, 72)


def test_a_photoreal_chair_stands_on_four_legs_of_one_wood_and_its_seat_keeps_the_drawn_material():
    for seed in range(6):
        look = draw_look("photoreal", chair_scene(), "shape_count", [7, seed, 0]).of(1)
        legs = {name: part for name, part in look.parts.items()}
        assert sorted(legs) == sorted(p.name for p in library()["chair"].parts if p.name.startswith("leg_"))
        assert len({part.model_dump_json() for part in legs.values()}) == 1  # the same wood on every leg
        leg = next(iter(legs.values()))
        assert leg.accent == "natural_wood" and leg.srgb in ACCENT_MATERIALS["natural_wood"].colors
        assert leg.material == "varnished_wood" and leg.params["bevel_m"] > 0  # built and worn like the object
        assert look.material in OBJECT_MATERIALS and OBJECT_MATERIALS[look.material].pooled


def test_a_mug_is_glazed_ceramic_glossy_or_satin_by_its_finish_and_no_other_object_draws_the_satin_glaze():
    for finish in ("glossy", "matte"):
        for seed in range(4):
            look = draw_look("photoreal", chair_scene(finish=finish, name="mug"), "shape_count", [3, seed, 0]).of(1)
            assert look.material == MADE_OF["glazed_ceramic"][finish] and not look.parts
            assert OBJECT_MATERIALS[look.material].roughness[0] <= look.roughness <= \
                OBJECT_MATERIALS[look.material].roughness[1]
    for seed in range(40):  # a primitive never draws it: the pooled draw is what it was before the glaze existed
        item = make_item("shape_count", {}, [5, seed, 0], "x", Frame(64, 48), look="photoreal")
        assert all(o.material != "matte_glaze" for o in item.scene.look.objects)


def test_only_photoreal_gives_parts_their_own_materials():
    assert draw_look("studio", chair_scene(), "shape_count", [1, 0, 0]).name == "studio"
    assert not draw_look("clevr", chair_scene(), "shape_count", [1, 0, 0]).of(1).parts
    raw = draw_look("photoreal_raw", chair_scene(), "shape_count", [1, 0, 0]).of(1)
    assert raw == draw_look("photoreal", chair_scene(), "shape_count", [1, 0, 0]).of(1)  # one draw, two rungs


def test_an_unknown_accent_or_made_of_in_the_library_is_one_clear_error():
    with pytest.raises(ValidationError, match="unknown accent material 'gold'; known: natural_wood, steel"):
        LibraryPart(name="leg", shape="cylinder", material="gold")
    with pytest.raises(ValidationError, match="unknown made_of 'glass'; known: glazed_ceramic"):
        LibraryEntry(synonyms=["x"], front="x", parts=[{"name": "a", "shape": "cube"}], made_of="glass")


def _part_pixels(scene_, part_names: set[str]) -> tuple[np.ndarray, np.ndarray]:
    """(rows, cols) of the pixels whose ray first hits one of the chair's `part_names` (the chair is alone)."""
    chair = scene_.objects[0]
    cast = cast_object(chair, geometry(scene_.camera))
    owner = composed_mesh(chair.source.parts)[1]
    names = np.array([p.name for p in chair.source.parts])[owner[cast.face]]
    keep = np.isin(names, sorted(part_names))
    return cast.gy[keep], cast.gx[keep]


@pytest.mark.bpy
def test_a_rendered_chairs_legs_are_wood_its_seat_its_colour_and_the_mask_the_studio_one(tmp_path):
    pytest.importorskip("bpy")
    from stim3d.render.backends import blender
    from stim3d.render.settings import RenderSettings

    base = chair_scene("blue")
    drawn = base.model_copy(update={"look": draw_look("photoreal_raw", base, "shape_count", [7, 1, 0])})
    settings = RenderSettings(width=96, height=72, samples=8, denoise=True, threads=1, look="photoreal_raw")
    photo = blender.render_scene(drawn, settings, 1, tmp_path / "photo")
    studio = blender.render_scene(base, settings.model_copy(update={"look": "studio"}), 1, tmp_path / "studio")
    assert np.array_equal(photo.instance_map, studio.instance_map)  # shading only: the object-index pass is the same

    legs = {p.name for p in base.objects[0].source.parts if p.name.startswith("leg_")}
    image = photo.image.astype(float)
    leg_rows, leg_cols = _part_pixels(base, legs)
    top_rows, top_cols = _part_pixels(base, {"seat", "backrest"})
    assert len(leg_rows) > 20 and len(top_rows) > 200
    leg, top = np.median(image[leg_rows, leg_cols], axis=0), np.median(image[top_rows, top_cols], axis=0)
    assert leg[0] > leg[2] + 10, leg  # wood: warmer than blue
    assert top[2] > top[0] + 30, top  # the painted parts: blue
    whole = np.median(image[photo.instance_map == 1], axis=0)
    assert colour_margin(whole / 255.0, "blue") > 0  # the object's measured colour still names blue
