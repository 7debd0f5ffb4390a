"""OddGrid-3D (scenes/families/oddgrid/odd_grid.py): the odd cell, its differences, the answer, labels, metrics.

Composition is checked against the camera itself (projected centres give the row
and column), the odd object's differences against its neighbours' fields, and a
tiny Cycles render measures the colour difference back from the image and mask.
"""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from stim3d.render.batch.config import load_config
from stim3d.render.batch.plan import expand
from stim3d.render.batch.records import records_for
from stim3d.render.settings import RenderSettings
from stim3d.scenes.camera import geometry
from stim3d.scenes.colors import delta_e_srgb
from stim3d.scenes.families import get_family
from stim3d.scenes.families.base import Frame
from stim3d.scenes.families.oddgrid.odd_attributes import difficulty_terms, grid_band, lab_to_srgb, parse_odd_types
from stim3d.scenes.families.oddgrid.odd_grid import draw_plan
from stim3d.scenes.families.oddgrid.odd_measure import measured_color_difference
from stim3d.scenes.items import make_item
from stim3d.scenes.model import Item, Provenance
from stim3d.scenes.placement import InfeasibleError
from stim3d.scenes.primitives import quat_to_matrix
from stim3d.scoring.answers import parse
from stim3d.scoring.report import score
from stim3d.scoring.rules import cell_distance, cell_tolerance

FRAME = Frame(320, 240)
SINGLE = ("color", "size", "rotation", "position")


def item(seed: int, frame: Frame = FRAME, **params) -> Item:
    return make_item("odd_grid", {"min_object_px": 6, **params}, [4, 0, seed], f"og-{seed}", frame)


def grid_objects(it: Item):
    return [o for o in it.scene.objects if "row" in o.attributes]


def cells_from_projection(it: Item) -> dict[int, tuple[int, int]]:
    """(row, col) of every grid object from its projected centre alone: rows by image y, columns by x."""
    objects = grid_objects(it)
    rows, cols = it.difficulty["rows"], it.difficulty["cols"]
    u, v, _ = geometry(it.scene.camera).project(np.array([o.location for o in objects]))
    order = np.argsort(v, kind="stable")
    found = {}
    for r in range(rows):
        band = order[r * cols:(r + 1) * cols]
        for c, index in enumerate(band[np.argsort(u[band], kind="stable")]):
            found[objects[index].id] = (r + 1, c + 1)
    return found


@pytest.mark.parametrize("layout", ["ground", "board"])
@pytest.mark.parametrize("seed", range(4))
def test_answer_is_the_odd_cell_counted_from_the_image_top_left(layout, seed):
    it = item(seed, layout=layout, odd_types="4-type", p_none=0.0, labels=seed % 2 == 0)
    projected = cells_from_projection(it)
    for obj in grid_objects(it):
        assert projected[obj.id] == (obj.attributes["row"], obj.attributes["col"])
    odd = [o for o in grid_objects(it) if o.attributes.get("odd")]
    assert len(odd) == 1
    assert tuple(it.questions[0].gold) == projected[odd[0].id]
    truths = {t.id: t for t in it.ground_truth.objects}
    assert all(truths[o.id].visibility >= 0.95 and truths[o.id].truncation == 0 for o in grid_objects(it))
    assert it.params["rows"] is None and 5 <= it.difficulty["rows"] <= 9


def test_no_odd_item_has_no_differing_object():
    it = item(1, rows=6, cols=7, odd_types="4-type", p_none=1.0)
    assert tuple(it.questions[0].gold) == (0, 0)
    objects = grid_objects(it)
    assert len(objects) == 42 and not any(o.attributes.get("odd") for o in objects)
    assert len({(o.size, o.color.srgb, o.rotation_quat, o.location[2]) for o in objects}) == 1
    xs = sorted({o.location[0] for o in objects})
    ys = sorted({o.location[1] for o in objects})
    assert len(xs) == 7 and len(ys) == 6  # every object exactly on its cell centre
    assert np.allclose(np.diff(xs), np.diff(xs)[0]) and np.allclose(np.diff(ys), np.diff(ys)[0])
    assert it.difficulty["discrepancy"] == "none" and it.difficulty["odd_present"] is False


@pytest.mark.parametrize("odd_type", SINGLE)
def test_odd_object_differs_in_exactly_its_attribute_by_the_recorded_amount(odd_type):
    it = item(7, rows=5, cols=6, odd_types=odd_type, p_none=0.0, shape="cube" if odd_type == "rotation" else "random")
    objects = grid_objects(it)
    odd = next(o for o in objects if o.attributes.get("odd"))
    twin = next(o for o in objects if not o.attributes.get("odd"))
    a = odd.attributes
    assert a["odd_attributes"] == odd_type
    same = {"color": odd.color.srgb == twin.color.srgb, "size": odd.size == twin.size,
            "rotation": odd.rotation_quat == twin.rotation_quat}
    for name, equal in same.items():
        assert equal == (name != odd_type), name
    if odd_type == "color":
        assert 5.0 <= a["delta_e"] <= 20.0
        assert float(delta_e_srgb(np.array(odd.color.srgb), np.array(twin.color.srgb))) == pytest.approx(a["delta_e"], abs=1e-5)
    if odd_type == "size":
        assert 0.05 <= abs(a["size_ratio"] - 1.0) <= 0.15
        assert odd.size / twin.size == pytest.approx(a["size_ratio"], abs=1e-5)
        assert (a["area_ratio"] - 1.0) * (a["size_ratio"] - 1.0) > 0  # the projected area changes the same way
    if odd_type == "rotation":
        turn = quat_to_matrix(odd.rotation_quat) @ quat_to_matrix(twin.rotation_quat).T
        angle = math.degrees(math.acos(np.clip((np.trace(turn) - 1) / 2, -1, 1)))
        assert angle == pytest.approx(abs(a["rotation_deg"]), abs=0.01) and 5 <= angle <= 25
        assert a["silhouette_change"] > 0.0
    if odd_type == "position":
        pitch_x = abs(twin.location[0] - next(o for o in objects if o.attributes["row"] == twin.attributes["row"]
                                             and o.attributes["col"] != twin.attributes["col"]).location[0])
        assert 0.05 <= abs(a["shift_share_x"]) <= 0.12 and 0.05 <= abs(a["shift_share_y"]) <= 0.12
        assert abs(a["shift_m_x"]) == pytest.approx(abs(a["shift_share_x"]) * pitch_x, abs=1e-5)
        assert abs(a["shift_px_u"]) > 0.5
    assert it.difficulty["n_odd_attributes"] == 1 and it.difficulty["odd_type"] == odd_type


def test_rotation_never_turns_a_sphere_or_a_round_shape_about_its_own_axis():
    with pytest.raises(ValueError, match="sphere shows no rotation"):
        get_family("odd_grid").params_model.model_validate({"shape": "sphere", "odd_types": "rotation"})
    for seed in range(6):
        it = item(seed, rows=5, cols=5, odd_types="rotation", p_none=0.0, shape="random")
        odd = next(o for o in grid_objects(it) if o.attributes.get("odd"))
        assert odd.shape != "sphere"
        if odd.shape in ("cylinder", "cone", "torus"):
            twin = next(o for o in grid_objects(it) if not o.attributes.get("odd"))
            own_axis = quat_to_matrix(twin.rotation_quat)[:, 2]
            axis = np.array([odd.attributes[k] for k in ("axis_x", "axis_y", "axis_z")])
            assert abs(float(own_axis @ axis)) < 1e-3


def test_labelled_variant_is_the_same_scene_with_number_markers():
    plain = item(3, layout="board", odd_types="2-type", p_none=0.0)
    labelled = item(3, layout="board", odd_types="2-type", p_none=0.0, labels=True)
    n = len(grid_objects(plain))
    assert labelled.scene.objects[:n + 1] == plain.scene.objects  # the grid and the board
    assert labelled.scene.camera == plain.scene.camera and labelled.questions[0].gold == plain.questions[0].gold
    marks = labelled.scene.objects[n + 1:]
    assert marks and all(not m.countable and "row" not in m.attributes for m in marks)
    numbers = {(m.attributes["label_axis"], m.attributes["label_number"]) for m in marks}
    rows, cols = plain.difficulty["rows"], plain.difficulty["cols"]
    assert numbers == {("row", r) for r in range(1, rows + 1)} | {("col", c) for c in range(1, cols + 1)}
    truth_ids = {t.id for t in labelled.ground_truth.objects}
    assert {m.id for m in marks} <= truth_ids
    # row numbers sit left of column 1 and level with their row; column numbers above row 1
    u, v, _ = geometry(labelled.scene.camera).project(np.array([o.location for o in labelled.scene.objects]))
    by_id = {o.id: i for i, o in enumerate(labelled.scene.objects)}
    first_col = min(u[by_id[o.id]] for o in grid_objects(plain) if o.attributes["col"] == 1)
    top_row = min(v[by_id[o.id]] for o in grid_objects(plain) if o.attributes["row"] == 1)
    assert all(u[by_id[m.id]] < first_col for m in marks if m.attributes["label_axis"] == "row")
    assert all(v[by_id[m.id]] < top_row for m in marks if m.attributes["label_axis"] == "col")


def test_question_follows_the_paper_and_can_hide_the_attribute():
    named = item(2, odd_types="color+size", p_none=0.0)
    text = named.questions[0].text
    assert "visually different in color and size." in text
    assert "Counting starts from the top-left corner, i.e., Row 1, Column 1." in text
    assert "\\boxed{Row X, Column Y}" in text and "output \\boxed{Row 0, Column 0}" in text
    hidden = item(2, odd_types="color+size", p_none=0.0, name_attributes=False)
    assert "visually different." in hidden.questions[0].text and "color" not in hidden.questions[0].text
    assert hidden.scene == named.scene and named.questions[0].answer_type == "cell"


def test_a_grid_too_dense_for_the_image_is_infeasible_naming_the_pixel_constraint():
    with pytest.raises(InfeasibleError) as caught:
        make_item("odd_grid", {"rows": 12, "cols": 12}, [1, 0, 0], "dense", Frame(96, 72))
    assert caught.value.constraint == "min_object_px" and "px across" in str(caught.value)
    with pytest.raises(ValueError, match="odd_types"):
        get_family("odd_grid").params_model.model_validate({"odd_types": "colour"})


def test_combinations_and_difficulty_terms():
    assert parse_odd_types("3-type") == 3 and parse_odd_types("size+color") == ("color", "size")
    it = item(5, rows=5, cols=6, odd_types="3-type", p_none=0.0)
    assert len(it.difficulty["odd_attributes"].split("+")) == 3 == it.difficulty["n_odd_attributes"]
    assert [grid_band(n) for n in (25, 44, 45, 64, 65, 81)] == ["small", "small", "medium", "medium", "large", "large"]
    # 81 cells (grid term 1), one attribute (term 1), smallest magnitude (term 1): hardest
    assert difficulty_terms(9, 9, {"color": 0.0}) == {"difficulty_score": 1.0, "tier": "hard", "discrepancy": "low",
                                                      "magnitude": 0.0}
    # 25 cells, four attributes at their largest: easiest
    easy = difficulty_terms(5, 5, dict.fromkeys(SINGLE, 1.0))
    assert easy["difficulty_score"] == 0.0 and easy["tier"] == "easy" and easy["discrepancy"] == "high"
    assert np.allclose(lab_to_srgb(np.array([53.2408, 80.0925, 67.2032])), [1.0, 0.0, 0.0], atol=1e-4)  # sRGB red


def test_cell_metrics_match_hand_computed_values():
    params = {"rows": 6, "cols": 8, "tolerance": 1}
    sigma = 0.25 * math.hypot(6, 8)  # 2.5
    assert cell_distance((3, 4), (3, 4), params) == 1.0
    assert cell_distance((4, 5), (3, 4), params) == pytest.approx(math.exp(-2 / (2 * 2.5**2)) - 0.3)  # 0.5521
    assert sigma == 2.5 and cell_distance((6, 8), (1, 1), params) == 0.0  # exp(-74 / 12.5) - 0.3 < 0
    assert cell_distance((0, 0), (3, 4), params) == 0.0 and cell_distance((0, 0), (0, 0), params) == 1.0
    assert cell_tolerance((4, 5), (3, 4), params) == 1.0 and cell_tolerance((5, 4), (3, 4), params) == 0.0
    boxed, plain = parse("cell", "I see it. \\boxed{Row 3, Column 5}"), parse("cell", "It is row 3, column 5")
    assert boxed.value == plain.value == (3, 5)
    assert boxed.strict and not plain.strict and plain.valid
    assert parse("cell", "\\boxed{Row 0, Column 0}").value == (0, 0)


def test_scores_by_odd_type_band_and_tier_with_strictness():
    items = [item(seed, rows=5, cols=5 + seed, odd_types=t, p_none=0.0) for seed, t in enumerate(("color", "2-type"))]
    provenance = Provenance(stim3d_version="test", engine="raster", samples=None, device="cpu", denoise=None)
    records = [r for it in items for r in records_for(it.model_copy(update={"provenance": provenance}), "x.png", "0" * 64)]
    golds = [tuple(r.answer.gold) for r in records]
    responses = {records[0].question_id: f"\\boxed{{Row {golds[0][0]}, Column {golds[0][1]}}}",
                 records[1].question_id: f"It is row {golds[1][0]}, column {golds[1][1] % 6 + 1}"}
    report = score(records, responses, by=["odd_type", "grid_band", "tier"]).to_dict()
    rows = {(row["key"], row["value"]): row for row in report["rows"]}
    assert rows[("all", None)]["valid_rate"] == 1.0 and rows[("all", None)]["strict_rate"] == 0.5
    assert rows[("odd_type", "color")]["accuracy"] == 1.0 and rows[("odd_type", "2-type")]["accuracy"] == 0.0
    assert ("grid_band", "small") in rows and {k for k, _ in rows} >= {"odd_type", "grid_band", "tier"}
    second = report["questions"][1]
    assert second["valid"] and not second["strict"]
    d_col = abs(golds[1][1] % 6 + 1 - golds[1][1])
    assert second["rules"]["cell_tolerance"] == float(d_col <= 1)
    sigma = 0.25 * math.hypot(5, 6)
    assert second["rules"]["cell_distance"] == pytest.approx(max(math.exp(-d_col**2 / (2 * sigma**2)) - 0.3, 0.0))


def test_preset_follows_the_test_split_and_its_golds_are_fixed_before_the_layout():
    config = load_config(Path(__file__).parents[1] / "stim3d" / "scenes" / "presets" / "oddgrid3d.yaml")
    plans = expand(config)
    questions = [p for p in plans if not p.item_id.endswith("-labelled")]
    assert len(plans) == 1575 and len(questions) == 1400
    per_type = Counter(p.params["odd_types"] for p in questions)
    assert set(per_type.values()) == {200} and len(per_type) == 7
    assert {(p.params["rows"], p.params["cols"]) for p in questions} == {(r, c) for r in range(5, 10) for c in range(5, 10)}
    labelled = [p for p in plans if p.item_id.endswith("-labelled")]
    assert len(labelled) == 175 and all(p.params["labels"] and p.scene_id for p in labelled)
    # bench/oddgrid_baselines.py lists golds with draw_plan alone: they must be the composed items' golds
    params_model = get_family("odd_grid").params_model
    for entropy in ([1, 0, 0], [1, 0, 1], [1, 2, 3]):
        params = {"rows": 5, "cols": 6, "odd_types": "3-type", "p_none": 0.5, "min_object_px": 6}
        rows, cols, _, _, spec = draw_plan(params_model.model_validate(params),
                                           np.random.default_rng(np.random.SeedSequence(entropy)))
        composed = make_item("odd_grid", params, entropy, "plan", FRAME)
        assert tuple(composed.questions[0].gold) == ((spec.row, spec.col) if spec.present else (0, 0))


def rendered(it: Item, tmp_path: Path, engine: str) -> tuple[Item, np.ndarray]:
    pytest.importorskip("bpy", reason="the Blender Python module (bpy==5.0.1) is not installed")
    from stim3d.render.batch.produce import render_item

    settings = RenderSettings(engine=engine, width=it.scene.camera.width, height=it.scene.camera.height, samples=16,
                              denoise=False)
    folder = render_item(it, settings, tmp_path / "out", tmp_path / f"work-{it.item_id}", None)
    return Item.model_validate_json((folder / "item.json").read_text()), np.array(Image.open(folder / "mask.png"))


@pytest.mark.bpy
def test_colour_difference_measured_back_from_a_cycles_render(tmp_path):
    frame = Frame(160, 120)
    for seed, delta_e in ((0, (5.0, 5.01)), (1, (19.99, 20.0))):
        it = make_item("odd_grid", {"rows": 5, "cols": 5, "odd_types": "color", "p_none": 0.0, "min_object_px": 4,
                                    "delta_e_range": list(delta_e)}, [9, 0, seed], f"c{seed}", frame)
        done, mask = rendered(it, tmp_path, "cycles")
        odd = next(o for o in done.scene.objects if o.attributes.get("odd"))
        truth = done.ground_truth.of(odd.id)
        assert abs(int((mask == odd.id).sum()) - truth.visible_px) <= 0.05 * truth.visible_px
        measured = measured_color_difference(done)
        assert abs(measured["measured_delta_e"] - odd.attributes["delta_e"]) <= 2.0, measured
        assert measured["measured_delta_e"] > 2 * measured["neighbour_delta_e"]
        record = records_for(done, "items/x/image.png", "0" * 64)[0]
        assert record.difficulty["measured_delta_e"] == measured["measured_delta_e"]
        assert record.scoring.params == {"tolerance": 1, "rows": 5, "cols": 5}
        assert record.difficulty["grid_band"] == "small" and record.difficulty["odd_type"] == "color"


@pytest.mark.bpy
def test_labels_are_in_the_mask_as_their_own_ids(tmp_path):
    it = make_item("odd_grid", {"rows": 4, "cols": 4, "odd_types": "size", "p_none": 0.0, "labels": True,
                                "layout": "board", "min_object_px": 4}, [9, 1, 0], "lab", Frame(240, 180))
    done, mask = rendered(it, tmp_path, "workbench")
    marks = {o.id for o in done.scene.objects if "label_axis" in o.attributes}
    seen = set(np.unique(mask).tolist())
    assert len(marks & seen) >= 0.9 * len(marks)
    assert all(o.id in seen for o in done.scene.objects if "row" in o.attributes)


def test_validate_refuses_a_grid_range_whose_densest_grid_is_under_the_pixel_minimum(tmp_path):
    """The first item (3x3) composes at 320x240; the task's densest grid (3x12) cannot show every object 16 px
    across: validate composes it at the render's full size and refuses the config in one line, naming it."""
    from tests.helpers import run_cli

    config = tmp_path / "dense.yaml"
    text = ("seed: 1\nrender: {engine: raster, width: 320, height: 240}\ntasks:\n  - family: odd_grid\n    count: 4\n"
            "    grid: {cols: COLS}\n    params: {rows: 3, min_object_px: 16}\n")
    config.write_text(text.replace("COLS", "[3, 12]"))
    code, out, err = run_cli("validate", str(config))
    assert (code, out) == (2, "") and len(err.splitlines()) == 1
    assert err.startswith("stim3d: error: tasks[0]'s densest item (odd_grid, rows 3, cols 12) cannot be composed: "
                          "constraint 'min_object_px' could not be met")
    config.write_text(text.replace("COLS", "[3, 4]"))
    assert run_cli("validate", str(config))[0] == 0
