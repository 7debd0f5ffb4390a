"""ROSE 3D (rose_grid): golds recomputed from the recorded cells, the cue in the renderer's object-index pass,
and every ROSE metric against hand-computed values, malformed answers included."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import Counter
from functools import cache

import numpy as np
import pytest

from stim3d.render.batch.records import records_for
from stim3d.scenes.camera import geometry
from stim3d.scenes.families.base import Frame
from stim3d.scenes.families.shared.grid_layout import order_preserved
from stim3d.scenes.items import make_item
from stim3d.scenes.model import Item, Provenance
from stim3d.scenes.primitives import world_vertices
from stim3d.scoring.answers import parse
from stim3d.scoring.cores import check_scorable
from stim3d.scoring.records import Answer, Scoring, answer_text
from stim3d.scoring.report import score, score_record
from stim3d.scoring.rose_report import paired_rows, task_case_rows

FRAME = Frame(240, 180)
EXCEPTIONS = ("shape", "color", "size", "rotation", "finish")
REGION_TEXT = re.compile(
    r"(?:in row (?P<row>\d+)|in rows (?P<r0>\d+) to (?P<r1>\d+)|in column (?P<col>\d+)|in columns (?P<c0>\d+) to (?P<c1>\d+)"
    r"|from row (?P<rr0>\d+) column (?P<rc0>\d+) to row (?P<rr1>\d+) column (?P<rc1>\d+)"
    r"|except row (?P<xrow>\d+)|except column (?P<xcol>\d+)"
    r"|except the rectangle from row (?P<xr0>\d+) column (?P<xc0>\d+) to row (?P<xr1>\d+) column (?P<xc1>\d+))"
)


def pair(index: int, rows: int = 5, cols: int = 6, exception: str = "color", frame: Frame = FRAME) -> tuple[Item, Item]:
    """The base and cue item of one scene, as the config's variants make them (same entropy, shared scene_id)."""
    params = {"rows": rows, "cols": cols, "exception": exception}
    return tuple(make_item("rose_grid", {**params, "cue": cue}, [17, 0, index], f"rose-{index}-{name}", frame,
                           scene_id=f"rose-{index}") for name, cue in (("base", False), ("cue", True)))  # type: ignore[return-value]


@pytest.fixture(scope="module")
def pairs():
    return [pair(i, rows=4 + i % 4, cols=4 + (i // 4) % 5, exception=EXCEPTIONS[i % 5]) for i in range(30)]


def grid_cells(item: Item) -> dict[tuple[int, int], object]:
    return {(o.attributes["row"], o.attributes["col"]): o for o in item.scene.objects if o.attributes.get("role") != "cue"}


ATTRIBUTE = {
    "shape": lambda o: o.shape, "color": lambda o: o.color.name, "size": lambda o: o.size,
    "rotation": lambda o: o.rotation_quat, "finish": lambda o: o.finish,
}


def exceptions_from_objects(item: Item, exception: str) -> set[tuple[int, int]]:
    """The exception cells from the objects alone: the cells whose `exception` attribute differs from the majority."""
    cells = grid_cells(item)
    value = ATTRIBUTE[exception]
    majority, _ = Counter(value(o) for o in cells.values()).most_common(1)[0]
    for key, other in ATTRIBUTE.items():  # exceptions differ in the configured attribute only
        if key != exception:
            assert len({other(o) for o in cells.values()}) == 1, key
    return {cell for cell, o in cells.items() if value(o) != majority}


def region_from_text(text: str, rows: int, cols: int) -> tuple[set[tuple[int, int]], bool]:
    """(block cells, exclude) read back from the prompt's words only."""
    found = REGION_TEXT.search(text)
    if found is None:
        return {(r, c) for r in range(1, rows + 1) for c in range(1, cols + 1)}, False
    g = {k: int(v) for k, v in found.groupdict().items() if v is not None}
    r0, r1, c0, c1 = 1, rows, 1, cols
    if "row" in g or "xrow" in g:
        r0 = r1 = g.get("row", g.get("xrow"))
    if "r0" in g:
        r0, r1 = g["r0"], g["r1"]
    if "col" in g or "xcol" in g:
        c0 = c1 = g.get("col", g.get("xcol"))
    if "c0" in g:
        c0, c1 = g["c0"], g["c1"]
    if "rr0" in g:
        r0, c0, r1, c1 = g["rr0"], g["rc0"], g["rr1"], g["rc1"]
    if "xr0" in g:
        r0, c0, r1, c1 = g["xr0"], g["xc0"], g["xr1"], g["xc1"]
    block = {(r, c) for r in range(r0, r1 + 1) for c in range(c0, c1 + 1)}
    return block, "except" in found.group(0)


def test_golds_and_cases_recomputed_from_the_recorded_cells(pairs):
    seen = Counter()
    for base, cue in pairs:
        rows, cols, exception = base.params["rows"], base.params["cols"], base.params["exception"]
        exceptions = exceptions_from_objects(base, exception)
        assert exceptions == {c for c, o in grid_cells(base).items() if o.attributes["exception"]}
        assert 1 <= len(exceptions) <= base.params["max_exceptions"]
        tiles = {(o.attributes["row"], o.attributes["col"]) for o in cue.scene.objects if o.attributes.get("role") == "cue"}
        for q in base.questions + cue.questions:
            task = q.subject["task"]
            if task == "T4":  # the visual region: the cells under the tiles
                block, exclude = tiles, False
                assert "highlighted region" in q.text
            else:
                block, exclude = region_from_text(q.text.split("Examples:")[1], rows, cols)
            allowed = ({(r, c) for r in range(1, rows + 1) for c in range(1, cols + 1)} - block) if exclude else block
            targets = sorted(exceptions & allowed)
            held = len(targets)
            case = "none" if held == 0 else "all" if held == len(exceptions) else "some"
            assert q.subject["case"] == case, (base.item_id, task)
            if q.answer_type == "strict_count":
                assert q.gold == held
            else:
                assert [tuple(c) for c in q.gold] == targets
            bounds = q.subject
            assert block == {(r, c) for r in range(bounds["region_row_min"], bounds["region_row_max"] + 1)
                             for c in range(bounds["region_col_min"], bounds["region_col_max"] + 1)}
            seen[(task, case)] += 1
            seen[("kind", q.subject["region"])] += 1
    for task in ("T2", "T3", "T4", "T5"):
        for case in ("none", "some", "all"):
            # every case occurs: T2's none a fifth of 30 scenes (scheduled counts, rose_plan.py), T3-T5's none a
            # third and their some about a quarter (a one-exception scene has no some)
            assert seen[(task, case)] >= 3, (task, case, seen)
    assert all(seen[("kind", kind)] > 0 for kind in ("row", "rows", "column", "columns", "rectangle"))


def test_a_finish_exception_stands_on_a_shape_whose_highlight_shows(pairs):
    """A glossy cube or cylinder looks like its matte neighbours (bench/rose_finish.py): finish scenes avoid them,
    and the other exceptions still draw from every primitive."""
    finish = [base for (base, _), e in zip(pairs, EXCEPTIONS * 6) if e == "finish"]
    extra = [pair(i, exception="finish")[0] for i in range(30, 42)]
    shapes = {o.shape for item in finish + extra for o in grid_cells(item).values()}
    assert shapes and shapes <= {"sphere", "cone"}, shapes
    others = {o.shape for (base, _), e in zip(pairs, EXCEPTIONS * 6) if e == "color" for o in grid_cells(base).values()}
    assert others & {"cube", "cylinder"}, others


def test_variants_share_the_scene_and_split_the_tasks(pairs):
    for base, cue in pairs:
        assert [q.subject["task"] for q in base.questions] == ["T1", "T2", "T3", "T5"]
        assert [q.subject["task"] for q in cue.questions] == ["T4"]
        assert base.scene.camera == cue.scene.camera
        assert base.scene.objects == [o for o in cue.scene.objects if o.attributes.get("role") != "cue"]
        assert base.difficulty["scene_id"] == cue.difficulty["scene_id"]
        tiles = [o for o in cue.scene.objects if o.attributes.get("role") == "cue"]
        assert tiles and all(t.shape == "tile" and not t.countable and t.color.name == "yellow" for t in tiles)
        assert {t.id for t in tiles} <= {t.id for t in cue.ground_truth.objects}  # each tile has its own mask id
        objects = list(grid_cells(base).values())
        assert order_preserved(objects, base.scene.camera)
        assert min(t.visibility for t in base.ground_truth.objects) >= 0.97


def test_prompts_state_the_indexing_and_the_grammar(pairs):
    base, cue = pairs[0]
    for q in base.questions + cue.questions:
        assert "Rows are counted from top to bottom, and columns from left to right, both starting from 1" in q.text
        assert "COUNT(n)" in q.text and "CLICK(Rr,Cc); CLICK(Rr,Cc); ...; DONE" in q.text and "SUBMIT(n)" in q.text


def fake_records(item: Item):
    provenance = Provenance(stim3d_version="test", engine="raster", samples=1, device="cpu", denoise=False)
    return records_for(item.model_copy(update={"provenance": provenance}), f"items/{item.item_id}/image.png", "ab" * 32)


def test_records_carry_the_region_and_their_golds_parse_back(pairs):
    base, cue = pairs[1]
    records = fake_records(base) + fake_records(cue)
    assert len({r.scene_id for r in records}) == 1
    for record in records:
        check_scorable(record)  # the gold written in the grammar parses back to itself
        if record.answer.type != "strict_count":
            params = record.scoring.params
            assert params["rows"] == base.params["rows"] and params["cols"] == base.params["cols"]
            assert params["region_exclude"] == (record.subject["task"] == "T5")
    rules = {r.subject["task"]: r.scoring.rule for r in records}
    assert rules == {"T1": "count_soft", "T2": "count_soft", "T3": "set_f1", "T4": "set_f1", "T5": "click_submit_soft"}


# -- metrics on crafted responses -----------------------------------------------------------------------

GRID = {"rows": 5, "cols": 6}
T3_REGION = {"region_row_min": 2, "region_row_max": 3, "region_col_min": 1, "region_col_max": 6, "region_exclude": 0}
T5_REGION = {"region_row_min": 3, "region_row_max": 3, "region_col_min": 1, "region_col_max": 6, "region_exclude": 1}


@cache
def template_record():
    return fake_records(pair(0)[0])[0]


def crafted(kind: str, gold, params: dict, rule: str, task: str = "T3", qid: str = "q", scene: str = "s"):
    """A record of a real rose_grid item with the gold, rule and region replaced by hand-chosen ones."""
    return template_record().model_copy(update={
        "question_id": qid, "scene_id": scene, "answer": Answer(type=kind, gold=gold),
        "scoring": Scoring(rule=rule, params=params), "subject": {"task": task, "case": "some"},
    })


# response -> (PASS, VALID, SOFT)
COUNT_CASES = {
    "COUNT(3)": (1, 1, 1.0),
    " count ( 3 ) ": (1, 1, 1.0),  # case-insensitive, whitespace inside and around tokens
    "COUNT(5)": (0, 1, 1 / 3),
    "COUNT(0)": (0, 1, 1 / 4),
    "3": (0, 0, 0.0),  # not the grammar
    "COUNT(3) cells": (0, 0, 0.0),  # extra words
    "COUNT(3.0)": (0, 0, 0.0),
    "": (0, 0, 0.0),
}
# gold {(2, 1), (3, 4)} in rows 2-3 of a 5 x 6 grid: response -> (PASS, VALID, SOFT = strict F1, R-OK)
CLICK_CASES = {
    "CLICK(R3,C4); CLICK(R2,C1); DONE": (1, 1, 1.0, 1.0),  # order ignored
    "click(r2, c1);click( R3 ,C4 ); done": (1, 1, 1.0, 1.0),
    "CLICK(R2,C1); DONE": (0, 1, 2 / 3, 1.0),
    "CLICK(R2,C1); CLICK(R5,C5); DONE": (0, 1, 0.5, 0.5),  # (5, 5) is outside the region
    "CLICK(R2,C1); CLICK(R2,C1); CLICK(R3,C4); DONE": (0, 1, 0.0, 1.0),  # repeated: F1 0, still in region
    "CLICK(R2,C1); CLICK(R3,C4); CLICK(R6,C1); DONE": (0, 1, 0.0, 1.0),  # out of grid: F1 0; R-OK over in-grid clicks
    "CLICK(R2,C1); CLICK(R5,C1); CLICK(R0,C1); DONE": (0, 1, 0.0, 0.5),
    "DONE": (0, 1, 0.0, 1.0),  # an empty set against a non-empty gold; no click breaks the region
    "CLICK(R2,C1) CLICK(R3,C4) DONE": (0, 0, 0.0, 0.0),  # malformed: no semicolons
    "CLICK(R2,C1); CLICK(R3,C4); SUBMIT(2)": (0, 0, 0.0, 0.0),  # the other task's grammar
    "Row 2, Column 1; Row 3, Column 4": (0, 0, 0.0, 0.0),
}
# gold {(1, 2), (4, 5)} outside row 3: response -> (PASS, VALID, SOFT = (F1 + count SOFT + consistency) / 3, F1, R-OK)
SUBMIT_CASES = {
    "CLICK(R1,C2); CLICK(R4,C5); SUBMIT(2)": (1, 1, 1.0, 1.0, 1.0),
    "CLICK(R4,C5); CLICK(R1,C2); SUBMIT(3)": (0, 1, (1 + 1 / 2 + 0) / 3, 1.0, 1.0),
    "CLICK(R1,C2); SUBMIT(1)": (0, 1, (2 / 3 + 1 / 2 + 1) / 3, 2 / 3, 1.0),
    "CLICK(R1,C2); CLICK(R3,C1); SUBMIT(2)": (0, 1, (1 / 2 + 1 + 1) / 3, 0.5, 0.5),  # (3, 1) is in the excluded row
    "CLICK(R1,C2); CLICK(R1,C2); CLICK(R4,C5); SUBMIT(2)": (0, 1, (0 + 1 + 1) / 3, 0.0, 1.0),  # repeat: F1 0
    "CLICK(R1,C2); CLICK(R4,C5); CLICK(R1,C7); SUBMIT(3)": (0, 1, (0 + 1 / 2 + 0) / 3, 0.0, 1.0),  # out of grid
    "SUBMIT(0)": (0, 1, (0 + 1 / 3 + 1) / 3, 0.0, 1.0),
    "CLICK(R1,C2); CLICK(R4,C5); DONE": (0, 0, 0.0, 0.0, 0.0),
    "CLICK(R1,C2); CLICK(R4,C5); SUBMIT(two)": (0, 0, 0.0, 0.0, 0.0),
}


@pytest.mark.parametrize("response", COUNT_CASES)
def test_count_metrics(response):
    record = crafted("strict_count", 3, {}, "count_soft", task="T1")
    result = score_record(record, response)
    assert (result.correct, result.valid) == tuple(bool(v) for v in COUNT_CASES[response][:2])
    assert result.score == pytest.approx(COUNT_CASES[response][2])


@pytest.mark.parametrize("response", CLICK_CASES)
def test_click_metrics(response):
    record = crafted("strict_cell_set", [(2, 1), (3, 4)], {**GRID, **T3_REGION}, "set_f1")
    result = score_record(record, response)
    passed, valid, soft, r_ok = CLICK_CASES[response]
    assert (result.correct, result.valid) == (bool(passed), bool(valid))
    assert result.score == pytest.approx(soft) and result.rules["set_f1"] == pytest.approx(soft)
    assert result.rules["region_ok"] == pytest.approx(r_ok)


def test_zero_target_click_needs_done_alone():
    record = crafted("strict_cell_set", [], {**GRID, **T3_REGION}, "set_f1")
    assert score_record(record, "DONE").correct and score_record(record, "DONE").score == 1.0
    assert score_record(record, "CLICK(R2,C1); DONE").score == 0.0


@pytest.mark.parametrize("response", SUBMIT_CASES)
def test_click_submit_metrics(response):
    record = crafted("strict_cell_set_count", [(1, 2), (4, 5)], {**GRID, **T5_REGION}, "click_submit_soft", task="T5")
    result = score_record(record, response)
    passed, valid, soft, f1, r_ok = SUBMIT_CASES[response]
    assert (result.correct, result.valid) == (bool(passed), bool(valid))
    assert result.score == pytest.approx(soft)
    assert result.rules["set_f1"] == pytest.approx(f1) and result.rules["region_ok"] == pytest.approx(r_ok)


def test_parsed_answers_keep_repeats_and_out_of_grid_cells_for_the_rules():
    assert parse("strict_cell_set", "CLICK(R1,C1); CLICK(R1,C1); CLICK(R0,C9); DONE").value == ((1, 1), (1, 1), (0, 9))
    submitted = parse("strict_cell_set_count", "CLICK(R1,C1); SUBMIT(4)").value
    assert (submitted.cells, submitted.count) == (((1, 1),), 4)


def test_task_case_table_and_pairing_on_one_scene():
    records = [
        crafted("strict_count", 2, {}, "count_soft", task="T1", qid="a1", scene="A"),
        crafted("strict_cell_set", [(2, 1)], {**GRID, **T3_REGION}, "set_f1", task="T3", qid="a3", scene="A"),
        crafted("strict_count", 2, {}, "count_soft", task="T1", qid="b1", scene="B"),
        crafted("strict_cell_set", [(2, 1)], {**GRID, **T3_REGION}, "set_f1", task="T3", qid="b3", scene="B"),
        crafted("strict_count", 2, {}, "count_soft", task="T1", qid="c1", scene="C"),
        crafted("strict_cell_set", [(2, 1)], {**GRID, **T3_REGION}, "set_f1", task="T3", qid="c3", scene="C"),
    ]
    predictions = {"a1": "COUNT(2)", "a3": "CLICK(R2,C1); DONE",  # count right, click right
                   "b1": "COUNT(2)", "b3": "CLICK(R2,C1); CLICK(R5,C1); DONE",  # count right, click wrong
                   "c1": "COUNT(4)", "c3": "CLICK(R2,C1); DONE"}  # count wrong, click right
    report = score(records, predictions)
    t3 = next(p for p in paired_rows(records, report.questions) if p.task == "T3")
    assert (t3.n_anchor_right, t3.pass_anchor_right, t3.n_anchor_wrong, t3.pass_anchor_wrong) == (2, 0.5, 1, 1.0)
    rows = {(r.task, r.case): r for r in task_case_rows(records, report.questions)}
    t1 = rows[("T1", "some")]
    assert t1.pass_rate == pytest.approx(2 / 3) and t1.soft == pytest.approx((1 + 1 + 1 / 3) / 3) and t1.c_f1 is None
    t3_row = rows[("T3", "all cases")]
    assert t3_row.c_f1 == pytest.approx((1 + 2 / 3 + 1) / 3) and t3_row.r_ok == pytest.approx((1 + 0.5 + 1) / 3)


# -- the cue in the renderer's object-index pass -----------------------------------------------------------


def tile_footprint(tile, camera, width: int, height: int, margin: float = 1.5) -> np.ndarray:
    """Pixels whose centre lies within `margin` px of the tile's projected top face (a convex quadrilateral)."""
    vertices = world_vertices(tile.shape, tile.size, tile.location, tile.rotation_quat)
    top = np.unique(np.round(vertices[vertices[:, 2] > tile.location[2]], 9), axis=0)
    u, v, _ = geometry(camera).project(top)
    order = np.argsort(np.arctan2(v - v.mean(), u - u.mean()))
    quad = np.stack([u[order], v[order]], axis=1)
    ys, xs = np.mgrid[0:height, 0:width] + 0.5
    inside = np.ones((height, width), bool)
    for a, b in zip(quad, np.roll(quad, -1, axis=0)):
        edge = b - a
        normal = np.array([edge[1], -edge[0]]) / np.hypot(*edge)
        if np.dot(quad.mean(axis=0) - a, normal) > 0:  # point it away from the centre
            normal = -normal
        inside &= (xs - a[0]) * normal[0] + (ys - a[1]) * normal[1] <= margin
    return inside


def test_base_and_cue_renders_differ_only_where_the_cue_shows(tmp_path):
    pytest.importorskip("bpy", reason="the Blender Python module is not installed")
    from stim3d.render.backends.blender import render_scene
    from stim3d.render.settings import RenderSettings
    from stim3d.scenes.visibility import measure

    frame = Frame(160, 120)
    base, cue = pair(3, rows=4, cols=4, exception="rotation", frame=frame)
    settings = RenderSettings(engine="cycles", width=160, height=120, samples=1, denoise=False)
    maps = {it.item_id: render_scene(it.scene, settings, it.seed, tmp_path / it.item_id).instance_map for it in (base, cue)}
    base_map, cue_map = maps[base.item_id], maps[cue.item_id]
    tiles = {o.id: o for o in cue.scene.objects if o.attributes.get("role") == "cue"}
    on_tile = np.isin(cue_map, list(tiles))
    assert on_tile.any()
    assert np.array_equal(base_map[~on_tile], cue_map[~on_tile])  # nothing else changed
    standing = {(o.attributes["row"], o.attributes["col"]): o.id for o in grid_cells(base).values()}
    for tile_id, tile in tiles.items():
        pixels = cue_map == tile_id
        assert pixels.any(), f"tile {tile_id} does not show"
        # a tile covers its own cell's footprint only, hiding nothing but the ground and its own object's base
        assert not (pixels & ~tile_footprint(tile, cue.scene.camera, 160, 120)).any()
        cell = (tile.attributes["row"], tile.attributes["col"])
        assert set(np.unique(base_map[pixels])) <= {0, standing[cell]}
    t4 = cue.questions[0].subject
    assert {(t.attributes["row"], t.attributes["col"]) for t in tiles.values()} == {
        (r, c) for r in range(t4["region_row_min"], t4["region_row_max"] + 1)
        for c in range(t4["region_col_min"], t4["region_col_max"] + 1)}
    assert np.mean(cue_map == measure(cue.scene).instance_map) >= 0.98  # the recorded truth is what was rendered


def test_score_command_prints_the_task_case_table_and_the_pairing(tmp_path):
    base, cue = pair(5)
    records = fake_records(base) + fake_records(cue)
    (tmp_path / "records.jsonl").write_text("".join(r.model_dump_json() + "\n" for r in records))
    right = {r.question_id: answer_text(r.answer.type, r.answer.gold) for r in records}
    (tmp_path / "predictions.jsonl").write_text("".join(
        json.dumps({"question_id": q, "response": a}) + "\n" for q, a in right.items()))
    done = subprocess.run([sys.executable, "-m", "stim3d", "score", str(tmp_path), str(tmp_path / "predictions.jsonl")],
                          capture_output=True, text=True, check=True)
    assert re.search(r"^T5\s+all cases\s+1\s+1\.000\s+1\.000\s+1\.000\s+1\.000\s+1\.000$", done.stdout, re.M)
    assert "T4 PASS on scenes where T1 was right: 1.000 (n=1); where it was wrong: - (n=0)" in done.stdout
