"""Score reports: report.html with Wilson intervals from a real batch, --compare, the psychometric fit, ROSE's gap,
and the gallery's filter to the items a model got wrong."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import pytest
from PIL import Image

import stim3d
from stim3d.cli import main
from stim3d.eval.report import sections
from stim3d.scoring.records import answer_text, read_records
from stim3d.scoring.report import score
from tests.helpers import family_records


@pytest.fixture
def batch(tiny_batch, tmp_path) -> Path:
    shutil.copytree(tiny_batch, tmp_path / "batch")
    return tmp_path / "batch"


@pytest.mark.bpy
def test_score_writes_report_html_with_wilson_intervals_and_pngs(batch, tmp_path, capsys):
    records = read_records(batch / "records.jsonl")
    predictions = tmp_path / "model.jsonl"
    rows = [{"question_id": r.question_id,
             "response": answer_text(r.answer.type, r.answer.gold) if r.family == "shape_count" else "99"}
            for r in records]
    predictions.write_text("".join(json.dumps(row) + "\n" for row in rows))
    assert main(["score", str(batch), str(predictions)]) == 0
    page = (tmp_path / "model.scores.report" / "report.html").read_text()
    # shape_count 6 of 6 right: Wilson [0.610, 1.000]; shape_color_count 0 of 4: [0.000, 0.490] (Newcombe's formula)
    assert "<td>shape_count</td><td>6</td><td>6</td><td>1.000</td><td>[0.610, 1.000]</td>" in page
    assert "<td>shape_color_count</td><td>4</td><td>0</td><td>0.000</td><td>[0.000, 0.490]</td>" in page
    assert "accuracy by min_visibility" in page  # an axis the batch varies (0.6 and 0.9)
    pngs = sorted((tmp_path / "model.scores.report").glob("*.png"))
    assert {p.name for p in pngs} >= {"accuracy_by_family.png", "accuracy_by_question_type.png", "axis_min_visibility.png"}
    for png in pngs:
        with Image.open(png) as image:
            assert image.format == "PNG" and image.width > 100
        assert f"src='{png.name}'" in page


@pytest.mark.bpy
def test_compare_tables_models_side_by_side_with_the_hand_counted_baselines(batch, capsys):
    for model in ("baseline:oracle", "baseline:constant"):
        stim3d.evaluate(batch, model)
    records = read_records(batch / "records.jsonl")
    golds = {family: Counter(r.answer.gold for r in records if r.family == family) for family in ("shape_count", "shape_color_count")}
    constant_right = sum(max(c.values()) for c in golds.values())  # each family answers its most frequent gold
    counting_only = batch / "counting-only.jsonl"  # a predictions file: right on shape_count (6 of 10), else none
    counting_only.write_text("".join(json.dumps({"question_id": r.question_id, "response": str(r.answer.gold)}) + "\n"
                                     for r in records if r.family == "shape_count"))
    capsys.readouterr()
    sources = [*sorted(str(p) for p in (batch / "eval").glob("*/")), str(counting_only)]
    assert main(["score", str(batch), "--compare", *sources]) == 0
    out = capsys.readouterr().out.splitlines()
    table = {line.split()[0]: line.split() for line in out[1:4]}
    assert table["baseline-oracle"][1:4] == ["10", "0", "1.000"]
    assert table["counting-only"][1:4] == ["10", "4", "0.600"]
    assert float(table["baseline-constant"][3]) == pytest.approx(constant_right / 10, abs=5e-4)
    assert main(["score", str(batch), "--compare", str(batch / "no-such-folder")]) == 2
    assert "no-such-folder: no such file or folder" in capsys.readouterr().err
    again = [*sorted(str(p) for p in (batch / "eval").glob("*/")), str(counting_only)]  # as the shell's eval/*/
    assert again == sources and main(["score", str(batch), "--compare", *again]) == 0  # compare.html is no model
    page = (batch / "eval" / "compare.html").read_text()
    assert "baseline-oracle" in page and "baseline-constant" in page and "shape_color_count (integer)" in page


@pytest.mark.bpy
def test_the_gallery_filters_to_the_items_a_model_got_wrong(batch, capsys):
    stim3d.evaluate(batch, "baseline:constant")
    records = read_records(batch / "records.jsonl")
    best = {f: Counter(r.answer.gold for r in records if r.family == f).most_common() for f in {r.family for r in records}}
    # the constant answer is the most frequent gold, ties to the smallest (sorted JSON order)
    constant = {f: min(g for g, n in counts if n == counts[0][1]) for f, counts in best.items()}
    wrong = sorted({r.item_id for r in records if r.answer.gold != constant[r.family]})
    assert main(["gallery", str(batch), "--filter", "wrong=baseline:constant"]) == 0
    page = (batch / "gallery" / "wrong-baseline_constant.html").read_text()
    shown = sorted(i for i in {r.item_id for r in records} if f"thumbs/{i}.jpg" in page)
    assert shown == wrong
    assert main(["gallery", str(batch), "--filter", "wrong=never-run"]) == 2
    assert "baseline-constant" in capsys.readouterr().err


def test_the_psychometric_curve_of_a_symmetric_sweep_has_its_threshold_in_the_middle(tmp_path):
    base = family_records("shape_count")[0]
    counts = {0.3: 1, 0.4: 3, 0.5: 5, 0.6: 7, 0.7: 9}  # right out of 10: symmetric about 0.5
    records, predictions = [], {}
    for level, right in counts.items():
        for i in range(10):
            record = base.model_copy(update={"question_id": f"q{level}-{i}",
                                             "difficulty": {**base.difficulty, "sweep_level": level}})
            records.append(record)
            predictions[record.question_id] = str(record.answer.gold) if i < right else "99"
    parts, files = sections(tmp_path, records, score(records, predictions))
    page = "".join(parts)
    assert "psychometric curve over occlusion sweeps" in page
    assert "50 % threshold at sweep_level = 0.500" in page  # by symmetry, whatever the slope
    assert (tmp_path / "axis_sweep_level.png").is_file()


def test_accuracy_is_tabled_per_rung_of_the_realism_ladder_in_its_order(tmp_path):
    """One scene's records on every rung (studio records carry no look): the report tables each rung, least to
    most photographic, with its own accuracy, so a builder reads what realism cost the model."""
    base = family_records("shape_count")[0]
    right = {"clevr": True, "studio": True, "photoreal_raw": True, "photoreal": False}
    records, predictions = [], {}
    for look, correct in right.items():
        difficulty = {k: v for k, v in base.difficulty.items() if k != "look"}
        if look != "studio":
            difficulty["look"] = look
        record = base.model_copy(update={"question_id": f"q-{look}", "difficulty": difficulty})
        records.append(record)
        predictions[record.question_id] = str(record.answer.gold) if correct else "99"
    page = "".join(sections(tmp_path, records, score(records, predictions))[0])
    ladder = page[page.index("Accuracy by look"):]
    assert [ladder.index(f"<td>{look}</td>") for look in right] == sorted(ladder.index(f"<td>{look}</td>") for look in right)
    assert "<td>photoreal</td><td>1</td><td>0</td>" in ladder and "<td>clevr</td><td>1</td><td>1</td>" in ladder
    assert (tmp_path / "accuracy_by_look.png").is_file()
    one_look = "".join(sections(tmp_path, records[:1], score(records[:1], predictions))[0])
    assert "Accuracy by look" not in one_look


def test_figures_draw_groups_answered_all_right_or_all_wrong(tmp_path):
    from stim3d.eval import figures
    from stim3d.eval.stats import Cell

    cells = [Cell(0.3, 7, 0), Cell(0.5, 9, 4), Cell(0.9, 10, 10)]  # interval ends at exactly 0 and 1
    for path in (figures.curve(cells, "level", tmp_path / "c.png"), figures.bars(cells, "t", tmp_path / "b.png")):
        with Image.open(path) as image:
            assert image.format == "PNG"


def test_rose_perception_to_action_gap_is_tabled(tmp_path):
    scenes = [family_records("rose_grid", seed) for seed in (1, 2)]
    records = [r for scene in scenes for r in scene if r.answer.type != "rubric"]
    tasks = {r.question_id: r.subject["task"] for r in records}
    predictions = {r.question_id: answer_text(r.answer.type, r.answer.model_dump(mode="json")["gold"]) for r in records}
    for r in scenes[1]:  # second scene: the global count (T1) and T2 wrong
        if tasks.get(r.question_id) in ("T1", "T2"):
            predictions[r.question_id] = "nothing"
    page = "".join(sections(tmp_path, records, score(records, predictions))[0])
    # T2: PASS 1 on the scene where T1 was right, 0 where it was wrong: gap 1; T3 right on both: gap 0
    assert "<tr><td>T2</td><td>1</td><td>1.000</td><td>1</td><td>0.000</td><td>1.000</td></tr>" in page
    assert "<tr><td>T3</td><td>1</td><td>1.000</td><td>1</td><td>1.000</td><td>0.000</td></tr>" in page


@pytest.mark.bpy
def test_a_rendered_occlusion_sweep_gets_its_psychometric_curve_in_the_eval_report(tiny_batch, tmp_path):
    from tests.batch_support import stim3d as run_stim3d
    from tests.eval_server import FakeModel, running

    source = tiny_batch / "items" / "shape_count-t0-00000"
    sweep = tmp_path / "sweep"
    done = run_stim3d("sweep", "occlusion", str(source), "--levels", "0.1:0.9:0.2", "--out", str(sweep),
                      "--engine", "workbench", "--quiet")
    assert done.returncode in (0, 1) and (sweep / "records.jsonl").is_file(), done.stderr  # 1: a level unreachable
    records = read_records(sweep / "records.jsonl")
    levels = sorted({r.difficulty["sweep_level"] for r in records})
    assert len(levels) >= 3
    server = FakeModel(records)
    server.wrong = {r.question_id for r in records if r.difficulty["sweep_level"] == levels[0]}  # wrong when most hidden
    with running(server):
        result = stim3d.evaluate(sweep, "toy-vlm", server.url, backoff=0.01, timeout=5)
    page = (result.folder / "report.html").read_text()
    assert "psychometric curve over occlusion sweeps" in page
    threshold = float(page.split("50 % threshold at sweep_level = ")[1].split(".</p>")[0])
    assert levels[0] < threshold < levels[1]  # all wrong at the lowest level, all right above it
    assert (result.folder / "axis_sweep_level.png").is_file()
