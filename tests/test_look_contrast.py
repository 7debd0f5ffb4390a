"""The contrast floor: each object's CIEDE2000 against a 2-pixel ring around it (scenes/look_contrast.py),
recorded per object and as the records' `min_contrast_de`, and a clevr look whose ground is redrawn for it."""

from __future__ import annotations

import json

import numpy as np
import pytest

from stim3d.render.backends.output import RenderOutput
from stim3d.render.batch import produce
from stim3d.render.batch.item_folder import load_item
from stim3d.render.batch.records import records_for
from stim3d.render.settings import RenderSettings
from stim3d.scenes.colors import PALETTE, delta_e_srgb, named
from stim3d.scenes.families.base import Frame
from stim3d.scenes.items import make_item
from stim3d.scenes.look_colours import MIN_VISIBLE_PX
from stim3d.scenes.look_contrast import (
    FLOOR_DE,
    RING_PX,
    STUDIO_REDRAW_GROUNDS,
    object_contrast,
    object_contrasts,
    ring,
)
from stim3d.scenes.looks import CLEVR_GROUND, draw_look
from stim3d.scenes.visibility import measure

GREY, RED, BLUE = (128, 128, 128), (204, 20, 20), (26, 66, 219)


def _disc(height: int = 40, width: int = 40, radius: float = 8.0) -> np.ndarray:
    """An instance map holding object 1 as a disc in the middle, 0 elsewhere."""
    y, x = np.mgrid[:height, :width]
    return np.where((y - height / 2) ** 2 + (x - width / 2) ** 2 <= radius**2, 1, 0).astype(np.uint16)


def _paint(mask: np.ndarray, colours: dict[int, tuple[int, int, int]]) -> np.ndarray:
    image = np.zeros((*mask.shape, 3), np.uint8)
    for object_id, colour in colours.items():
        image[mask == object_id] = colour
    return image


def test_an_object_the_colour_of_its_surroundings_measures_zero():
    mask = _disc()
    assert object_contrast(_paint(mask, {0: GREY, 1: GREY}), mask, 1) == pytest.approx(0.0, abs=1e-6)


def test_a_red_disc_on_grey_measures_the_colour_difference_of_red_and_grey():
    mask = _disc()
    expected = float(delta_e_srgb(np.array(RED) / 255, np.array(GREY) / 255))
    assert expected > 30
    assert object_contrast(_paint(mask, {0: GREY, 1: RED}), mask, 1) == pytest.approx(expected, abs=1e-4)


def test_the_ring_is_outside_the_silhouette_and_at_most_two_pixels_away():
    """The ring never holds the object's own pixels, and ground beyond RING_PX does not count: a red disc in a
    grey ring on a blue ground measures red against grey, not against blue."""
    mask = _disc()
    around = ring(mask == 1)
    assert not (around & (mask == 1)).any() and around.any()
    ys, xs = np.nonzero(around)
    inside = np.argwhere(mask == 1)
    distance = np.sqrt(((np.stack([ys, xs], 1)[:, None, :] - inside[None, :, :]) ** 2).sum(-1)).min(1)
    assert distance.max() <= RING_PX and distance.min() >= 1
    image = _paint(mask, {0: BLUE, 1: RED})
    image[around] = GREY
    expected = float(delta_e_srgb(np.array(RED) / 255, np.array(GREY) / 255))
    assert object_contrast(image, mask, 1) == pytest.approx(expected, abs=1e-4)


def test_other_objects_count_as_surroundings_and_small_objects_are_not_judged():
    """A red object touching nothing but another red object measures ~0; an object under MIN_VISIBLE_PX is None."""
    mask = _disc()
    mask[mask == 0] = 2  # object 2 fills everything around object 1
    image = _paint(mask, {1: RED, 2: RED})
    contrasts = object_contrasts(image, mask, {1: float((mask == 1).sum()), 2: MIN_VISIBLE_PX - 1})
    assert contrasts[1] == pytest.approx(0.0, abs=1e-6) and contrasts[2] is None


def _fake_render(colour_of, background=(255, 255, 255)):
    """A stand-in renderer: each object painted flat `colour_of(rendered, obj)` (sRGB 0-1) on `background`."""
    def render(settings, rendered, workdir):
        instance_map = measure(rendered.scene, 1).instance_map
        image = np.zeros((*instance_map.shape, 3), np.uint8)
        image[:] = background
        for obj in rendered.scene.objects:
            image[instance_map == obj.id] = np.round(np.asarray(colour_of(rendered, obj)) * 255)
        return RenderOutput(image=image, instance_map=instance_map, depth=None, blender_version="stand-in",
                            render_seconds=0.0)
    return render


def test_records_carry_the_least_contrast_and_studio_redraws_only_its_ground(tmp_path, monkeypatch):
    """Studio objects painted the grey of a ground that never changes are rendered on each redraw grey and recorded
    under the floor (contrast_de ~0, the records' min_contrast_de ~0); painted on the stage's own ground, a grey
    object clears the floor on the first redraw, whose ground is recorded in item.json; objects that stand out
    are rendered once, on the ground they always had."""
    item = make_item("shape_color_count", {}, [2026, 0, 1], "scc", Frame(96, 72))
    judged = [t.id for t in item.ground_truth.objects if t.visible_px >= MIN_VISIBLE_PX]
    assert judged
    settings = RenderSettings(width=96, height=72, samples=1)
    calls: list[tuple[float, float, float]] = []
    grey = tuple(int(round(v * 255)) for v in PALETTE["gray"])
    flat = _fake_render(lambda rendered, obj: PALETTE["gray"], background=grey)
    monkeypatch.setattr(produce, "render_with", lambda s, r, w: calls.append(r.scene.stage.ground_srgb) or flat(s, r, w))
    done = load_item(produce.render_item(item, settings, tmp_path / "o", tmp_path / "w", key="k"))
    assert len(calls) == 1 + len(STUDIO_REDRAW_GROUNDS) and len(set(calls)) == len(calls)
    assert done.scene.look.name == "studio" and done.scene.look.contrast_failures == judged  # still under it, recorded
    assert {t.id for t in done.ground_truth.objects if t.contrast_de is not None} == set(judged)
    (record, *_) = records_for(done, "image.png", "0" * 64)
    assert record.difficulty["min_contrast_de"] == pytest.approx(0.0, abs=1e-6)
    assert record.difficulty["look_redraws"] == len(STUDIO_REDRAW_GROUNDS) == done.scene.look.ground_redraws
    assert record.difficulty["look_contrast_failures"] == len(judged) and "look" not in record.difficulty

    def on_stage(settings, rendered, workdir):  # the ground is drawn in the stage's own grey
        background = tuple(round(v * 255) for v in rendered.scene.stage.ground_srgb)
        return _fake_render(lambda r, obj: (0.62, 0.62, 0.6), background=background)(settings, rendered, workdir)

    monkeypatch.setattr(produce, "render_with", on_stage)
    done = load_item(produce.render_item(item, settings, tmp_path / "o1", tmp_path / "w", key="k"))
    assert done.scene.look.ground_redraws == 1 and done.scene.stage.ground_srgb != item.scene.stage.ground_srgb
    assert done.scene.look.redraws == 1  # what `stim3d sweep look`'s looks.json and the looks benches report for it
    assert json.loads(done.to_json())["scene"]["look"]["name"] == "studio"  # a redrawn studio item records it
    assert min(t.contrast_de for t in done.ground_truth.objects if t.contrast_de is not None) >= FLOOR_DE

    monkeypatch.setattr(produce, "render_with", _fake_render(lambda rendered, obj: obj.color.srgb))
    folder = produce.render_item(item, settings, tmp_path / "o2", tmp_path / "w", key="k")
    done = load_item(folder)
    contrasts = [t.contrast_de for t in done.ground_truth.objects if t.contrast_de is not None]
    (record, *_) = records_for(done, "image.png", "0" * 64)
    assert record.difficulty["min_contrast_de"] == min(contrasts) >= FLOOR_DE
    assert "look_redraws" not in record.difficulty and done.scene.stage == item.scene.stage
    assert "look" not in json.loads(done.to_json())["scene"]  # studio at its defaults: item.json as before looks
    assert "contrast_de" not in json.dumps(make_item("shape_color_count", {}, [2026, 0, 1], "scc",
                                                     Frame(96, 72)).model_dump(mode="json"))  # composed: absent


def test_a_look_redraws_while_an_object_is_under_the_floor_and_records_it_apart_from_colour(tmp_path, monkeypatch):
    """A photoreal ground painted the colour of one object in every render: three redraws, then the object is
    listed in look.contrast_failures (its named colour still reads right: colour_failures does not hold it)."""
    item = make_item("shape_color_count", {}, [2026, 0, 1], "scc", Frame(96, 72), look="photoreal")
    target = next(o for o in item.scene.objects if item.ground_truth.of(o.id).visible_px >= MIN_VISIBLE_PX)
    calls = []

    def vanishing(settings, rendered, workdir):
        calls.append(rendered.scene.look.environment)
        return _fake_render(lambda r, obj: obj.color.srgb,
                            background=tuple(np.round(np.asarray(target.color.srgb) * 255)))(settings, rendered, workdir)

    monkeypatch.setattr(produce, "render_with", vanishing)
    folder = produce.render_item(item, RenderSettings(width=96, height=72, samples=1, look="photoreal"),
                                 tmp_path / "o", tmp_path / "w", key="k")
    look = json.loads((folder / "item.json").read_text())["scene"]["look"]
    assert len(calls) == 4 and len({c.model_dump_json() for c in calls}) > 1 and look["redraws"] == 3
    assert target.id in look["contrast_failures"] and target.id not in look["colour_failures"]


def test_an_object_under_the_floor_takes_fresh_draws_even_when_a_colour_also_reads_dark(tmp_path, monkeypatch):
    """One object vanishes into a ground of its own colour and another is painted half as bright as its name (a
    colour failure whose exposure step is clear): an exposure correction of the same draw cannot give the first
    object another ground, so every redraw is a fresh, uncorrected draw."""
    item = make_item("shape_color_count", {}, [2026, 0, 1], "scc", Frame(96, 72), look="photoreal")
    target, dark = [o for o in item.scene.objects if item.ground_truth.of(o.id).visible_px >= MIN_VISIBLE_PX][:2]
    drawn = []

    def render(settings, rendered, workdir):
        look = rendered.scene.look
        drawn.append((look.exposure_correction_ev, look.environment.name, look.environment.rotation_deg))
        paint = _fake_render(lambda r, obj: np.asarray(obj.color.srgb) * (0.5 if obj.id == dark.id else 1.0),
                             background=tuple(np.round(np.asarray(target.color.srgb) * 255)))
        return paint(settings, rendered, workdir)

    monkeypatch.setattr(produce, "render_with", render)
    folder = produce.render_item(item, RenderSettings(width=96, height=72, samples=1, look="photoreal"),
                                 tmp_path / "o", tmp_path / "w", key="k")
    look = json.loads((folder / "item.json").read_text())["scene"]["look"]
    assert dark.id in look["colour_failures"] and target.id in look["contrast_failures"]
    assert [ev for ev, _name, _turn in drawn] == [0.0] * 4 and len(set(drawn)) == 4


def test_clevr_keeps_its_grey_ground_on_the_first_draw_and_changes_it_on_a_redraw():
    item = make_item("shape_count", {}, [2026, 0, 0], "sc", Frame(96, 72), look="clevr")
    scene = item.scene.model_copy(update={"objects": [o.model_copy(update={"color": named("gray")})
                                                      for o in item.scene.objects]})
    first = draw_look("clevr", scene, "shape_count", item.seed_entropy, 0)
    assert first is not None and first.ground.srgb == CLEVR_GROUND
    tones = set()
    for attempt in (1, 2, 3):
        look = draw_look("clevr", scene, "shape_count", item.seed_entropy, attempt)
        assert look is not None and look.ground.srgb != CLEVR_GROUND
        tones.add(look.ground.srgb)
    assert len(tones) == 2  # a lighter and a darker grey, in turn


@pytest.mark.bpy
def test_grey_objects_on_clevr_grey_come_out_above_the_floor_after_a_ground_redraw(tmp_path):
    """Grey objects on CLEVR's 0.5 grey ground (Cycles, tiny; this seed's grey torus measures 0.3 dE against it):
    the look is redrawn with another grey ground and every judged object ends above the floor."""
    pytest.importorskip("bpy")
    item = make_item("shape_count", {}, [26, 0, 1], "sc", Frame(96, 72), look="clevr")  # a grey torus measures 0.3
    grey = [o.model_copy(update={"color": named("gray")}) for o in item.scene.objects]
    item = item.model_copy(update={"scene": item.scene.model_copy(update={"objects": grey})})
    settings = RenderSettings(width=96, height=72, samples=4, look="clevr")
    folder = produce.render_item(item, settings, tmp_path / "o", tmp_path / "w", key="k")
    done = load_item(folder)
    assert done.scene.look.name == "clevr" and done.scene.look.redraws >= 1
    assert done.scene.look.ground.srgb != CLEVR_GROUND and done.scene.look.contrast_failures == []
    judged = [t.contrast_de for t in done.ground_truth.objects if t.contrast_de is not None]
    assert judged and min(judged) >= FLOOR_DE


@pytest.mark.bpy
def test_grey_objects_on_studio_ground_come_out_above_the_floor_on_a_redrawn_ground(tmp_path):
    """Grey objects in studio (Cycles, tiny): the first render leaves one under the floor against the stage's 0.62
    ground, so the ground is drawn again in another grey, recorded in item.json, and every judged object clears it."""
    pytest.importorskip("bpy")
    item = make_item("shape_count", {}, [26, 0, 1], "sc", Frame(96, 72))
    grey = [o.model_copy(update={"color": named("gray")}) for o in item.scene.objects]
    item = item.model_copy(update={"scene": item.scene.model_copy(update={"objects": grey})})
    folder = produce.render_item(item, RenderSettings(width=96, height=72, samples=4), tmp_path / "o", tmp_path / "w",
                                 key="k")
    done = load_item(folder)
    assert done.scene.look.name == "studio" and done.scene.look.ground_redraws >= 1
    assert done.scene.stage.ground_srgb in {(t, t, t) for t in STUDIO_REDRAW_GROUNDS}
    judged = [t.contrast_de for t in done.ground_truth.objects if t.contrast_de is not None]
    assert judged and min(judged) >= FLOOR_DE


def test_the_dots_of_one_figure_are_judged_together_against_what_they_stand_on():
    """Two touching black dots of one digit on a white board: each dot's own ring is mostly the other dot, so
    alone each measures about 0 against it; as one figure both record the digit's contrast against the board."""
    mask = np.zeros((40, 40), np.uint16)
    mask[10:20, 10:15], mask[10:20, 15:20] = 1, 2
    image = _paint(mask, {0: (240, 240, 240), 1: (15, 15, 15), 2: (15, 15, 15)})
    image[:, 20:] = (15, 15, 15)  # the board ends in dark just right of the digit: dot 2 alone reads ~0
    pixels = {1: float((mask == 1).sum()), 2: float((mask == 2).sum())}
    alone = object_contrasts(image, mask, pixels)
    assert alone[2] < FLOOR_DE
    together = object_contrasts(image, mask, pixels, {1: "row 1", 2: "row 1"})
    assert together[1] == together[2] > FLOOR_DE
    small = {1: MIN_VISIBLE_PX / 2, 2: MIN_VISIBLE_PX / 2}  # too small alone, judged as one figure
    assert object_contrasts(image, mask, small, {1: "row 1", 2: "row 1"})[1] is not None


def test_an_oddgrid_boards_label_numbers_clear_the_floor_as_numbers(tmp_path, monkeypatch):
    """A labelled OddGrid board rendered with its black digits on the light board: every judged label dot records
    its number's contrast (far above the floor), so the digits never send the item into contrast redraws."""
    item = make_item("odd_grid", {"labels": True, "layout": "board"}, [2026, 2, 1], "og", Frame(640, 480))
    dots = [o for o in item.scene.objects if "label_axis" in o.attributes]
    assert dots
    calls = []

    def render(settings, rendered, workdir):
        calls.append(1)
        return _fake_render(lambda r, obj: obj.color.srgb, background=(200, 200, 200))(settings, rendered, workdir)

    monkeypatch.setattr(produce, "render_with", render)
    done = load_item(produce.render_item(item, RenderSettings(width=640, height=480, samples=1), tmp_path / "o",
                                         tmp_path / "w", key="k"))
    by_number: dict[str, set[float | None]] = {}
    for obj in dots:
        by_number.setdefault(f"{obj.attributes['label_axis']} {obj.attributes['label_number']}", set()).add(
            done.ground_truth.of(obj.id).contrast_de)
    assert all(len(values) == 1 for values in by_number.values())  # one value per number
    judged = [v for values in by_number.values() for v in values if v is not None]
    assert judged and min(judged) > FLOOR_DE and len(calls) == 1


def test_a_toy_cars_parts_are_judged_as_one_car_against_what_it_stands_on(tmp_path, monkeypatch):
    """ava_orientation's car is nine part objects (body cubes of one colour side by side, a cabin, a nose, wheels):
    each body cube's ring is mostly its neighbouring cubes, which alone read as no contrast and sent every draw of
    such a car into redraws. Rendered flat on a light ground, every part records the car's one contrast, far above
    the floor, and the item renders once."""
    item = make_item("ava_orientation", {"answer": "left"}, [2026, 3, 1], "car", Frame(320, 240))
    parts = [o for o in item.scene.objects if o.attributes.get("part_of") == "toy_car"]
    assert len(parts) == len(item.scene.objects) >= 5
    calls = []

    def render(settings, rendered, workdir):
        calls.append(1)
        return _fake_render(lambda r, obj: obj.color.srgb, background=(215, 215, 215))(settings, rendered, workdir)

    monkeypatch.setattr(produce, "render_with", render)
    done = load_item(produce.render_item(item, RenderSettings(width=320, height=240, samples=1), tmp_path / "o",
                                         tmp_path / "w", key="k"))
    values = {done.ground_truth.of(obj.id).contrast_de for obj in parts
              if done.ground_truth.of(obj.id).visible_px > 0}
    assert len(values) == 1 and next(iter(values)) > FLOOR_DE and len(calls) == 1
