"""Render -> predictions -> score, end to end; and delivery of a batch's records to a scoring core.

One tiny Cycles batch (6 items at 64x48, 4 samples) is rendered through the command
line with a toy scoring core registered by an entry point (a dist-info folder put on
sys.path, as `pip install` would leave it). Predictions are then written right for
half the questions and wrong, unparseable or missing for the rest, and the scores
must come out exactly as constructed.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import jsonschema
import numpy as np
import pytest
from PIL import Image

from stim3d.render.batch.records import records_for
from stim3d.scenes.families.base import Frame
from stim3d.scenes.items import make_item
from stim3d.scenes.model import Provenance
from stim3d.scoring.records import SCHEMA_PATH, read_records
from tests.helpers import run_cli as run

ROOT = Path(__file__).resolve().parents[1]

CONFIG = """\
seed: 5
render: {engine: cycles, width: 64, height: 48, samples: 4, denoise: false}
tasks:
  - family: shape_count
    count: 3
    grid: {min_visibility: [0.7, 0.9]}
    params: {n_shape_types: 2, max_instances: 2}
  - family: shape_color_count
    count: 3
    grid: {min_visibility: [0.7, 0.9]}
    params: {n_shape_types: 2, max_instances: 2}
"""

TOY_CORE = '''\
import json
from pathlib import Path


def receive(records, batch_dir):
    Path(batch_dir, "toy_core_received.json").write_text(json.dumps([r.model_dump(mode="json") for r in records]))
    return [f"toy core: {len(records)} records"]
'''


def install_toy_core(folder: Path) -> None:
    """A module and its dist-info with an entry point in stim3d.scoring_cores: what pip would install."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "stim3d_toy_core.py").write_text(TOY_CORE)
    info = folder / "stim3d_toy_core-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: stim3d-toy-core\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[stim3d.scoring_cores]\ntoy = stim3d_toy_core:receive\n")


def render_in_subprocess(root: Path, *extra: str, site: Path | None = None) -> subprocess.CompletedProcess:
    """`stim3d render` in a fresh process (its workers must not inherit a parent that imported bpy)."""
    env = dict(os.environ)
    if site is not None:
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(site), env.get("PYTHONPATH")) if p)
    return subprocess.run([sys.executable, "-m", "stim3d", "render", str(root / "batch.yaml"), "--out",
                           str(root / "out"), "--quiet", *extra], cwd=ROOT, env=env, capture_output=True, text=True)


@pytest.fixture(scope="module")
def batch(tmp_path_factory):
    if importlib.util.find_spec("bpy") is None:
        pytest.skip("the Blender Python module (bpy==5.0.1) is not installed")
    root = tmp_path_factory.mktemp("e2e")
    install_toy_core(root / "site")
    (root / "batch.yaml").write_text(CONFIG)
    result = render_in_subprocess(root, "--scoring-core", "toy", site=root / "site")
    assert result.returncode == 0, result.stderr
    return root, result.stdout


@pytest.mark.bpy
def test_toy_scoring_core_registered_by_entry_point_receives_every_record(batch):
    root, stdout = batch
    out = root / "out"
    records = read_records(out / "records.jsonl")
    received = json.loads((out / "toy_core_received.json").read_text())
    assert len(records) == 6
    assert received == [json.loads(r.model_dump_json()) for r in records]
    assert "toy core: 6 records" in stdout


@pytest.mark.bpy
def test_builtin_core_is_the_default(batch):
    root, _ = batch
    result = render_in_subprocess(root)  # every item is already done: skipped, then delivered again
    assert result.returncode == 0, result.stderr
    assert "scoring core builtin: all 6 records scorable" in result.stdout


@pytest.mark.bpy
def test_merge_delivers_the_merged_records_to_the_scoring_core(batch, tmp_path, monkeypatch):
    root, _ = batch
    monkeypatch.syspath_prepend(str(root / "site"))
    code, stdout, stderr = run("merge", str(root / "out"), "--out", str(tmp_path / "merged"), "--scoring-core", "toy")
    assert code == 0, stderr
    received = json.loads((tmp_path / "merged" / "toy_core_received.json").read_text())
    assert [r["question_id"] for r in received] == [r.question_id for r in read_records(root / "out" / "records.jsonl")]
    assert "toy core: 6 records" in stdout


@pytest.mark.bpy
def test_written_records_validate_and_their_gold_follows_from_the_object_index_pass(batch):
    root, _ = batch
    out = root / "out"
    schema = json.loads(SCHEMA_PATH.read_text())
    for line in (out / "records.jsonl").read_text().splitlines():
        jsonschema.validate(json.loads(line), schema)
    for record in read_records(out / "records.jsonl"):
        folder = out / Path(record.image.path).parent
        assert record.provenance.engine == "cycles" and record.provenance.mask_agreement is not None
        item = json.loads((folder / "item.json").read_text())
        seen = set(np.unique(np.asarray(Image.open(folder / "mask.png"))).tolist()) - {0}
        matching = [o for o in item["scene"]["objects"]
                    if o["shape"] == record.subject["shape"]
                    and ("color" not in record.subject or o["color"]["name"] == record.subject["color"])]
        assert all(o["id"] in seen for o in matching)  # every counted object shows in the renderer's pass
        assert record.answer.gold == len(matching)


NUMBER_WORDS = ["zero", "one", "two", "three", "four", "five"]
# per record (in question-id order): how the prediction is made, and what it should count as
PLAN = [
    ("prose", True, True),      # right: "There are 2 of them."
    ("plus_one", False, True),  # wrong by one: valid, count SOFT 0.5
    ("boxed", True, True),      # right: "\boxed{2}"
    ("garbage", False, False),  # unparseable: invalid
    ("word", True, True),       # right: "I count two."
    ("missing", False, False),  # no prediction line at all
]
SOFT = {"prose": 1.0, "boxed": 1.0, "word": 1.0, "plus_one": 0.5, "garbage": 0.0, "missing": 0.0}


def response(kind: str, gold: int) -> str | None:
    return {
        "prose": f"There are {gold} of them.",
        "plus_one": f"Looking carefully, I believe there are {gold + 1}.",
        "boxed": f"Let me count each one.\n\\boxed{{{gold}}}",
        "garbage": "I cannot tell from this picture.",
        "word": f"I count {NUMBER_WORDS[gold]}.",
        "missing": None,
    }[kind]


def expected_row(records, plan) -> dict:
    golds = Counter(r.answer.gold for r in records)
    return {
        "n": len(records),
        "missing": sum(kind == "missing" for kind, _, _ in plan),
        "accuracy": sum(right for _, right, _ in plan) / len(records),
        "valid_rate": sum(valid for _, _, valid in plan) / len(records),
        "score": sum(SOFT[kind] for kind, _, _ in plan) / len(records),
        "constant_baseline": max(golds.values()) / len(records),
    }


@pytest.mark.bpy
def test_scores_are_exactly_as_constructed(batch, tmp_path):
    root, _ = batch
    records = sorted(read_records(root / "out" / "records.jsonl"), key=lambda r: r.question_id)
    lines = []
    for record, (kind, _, _) in zip(records, PLAN):
        text = response(kind, record.answer.gold)
        if text is not None:
            lines.append({"question_id": record.question_id, "response": text, "model": "constructed"})
    lines.append({"question_id": "not-a-question-q0", "response": "3"})
    predictions = tmp_path / "predictions.jsonl"
    predictions.write_text("".join(json.dumps(row) + "\n" for row in lines))
    scores = tmp_path / "scores.json"

    code, stdout, stderr = run("score", str(root / "out"), str(predictions), "--by", "min_visibility", "--out", str(scores))
    assert code == 0, stderr
    report = json.loads(scores.read_text())
    assert report["records"] == 6 and report["predictions"] == 6
    assert report["missing_ids"] == [records[5].question_id]
    assert report["unknown_ids"] == ["not-a-question-q0"]

    groups = {("all", None): list(range(6))}
    for i, record in enumerate(records):
        groups.setdefault(("family", record.family), []).append(i)
        groups.setdefault(("min_visibility", record.difficulty["min_visibility"]), []).append(i)
    rows = {(row["key"], row["value"]): row for row in report["rows"]}
    assert set(rows) == set(groups)
    for group, members in groups.items():
        expected = expected_row([records[i] for i in members], [PLAN[i] for i in members])
        got = {k: rows[group][k] for k in expected}
        assert got == pytest.approx(expected), group

    by_id = {q["question_id"]: q for q in report["questions"]}
    for record, (kind, right, valid) in zip(records, PLAN):
        result = by_id[record.question_id]
        assert (result["correct"], result["valid"], result["answered"]) == (right, valid, kind != "missing")
        if right:
            assert result["parsed"] == record.answer.gold

    printed = stdout.splitlines()
    assert printed[0] == "records: 6  predictions: 6  missing: 1  unknown ids: 1"
    all_row = next(line for line in printed if line.startswith("all "))
    assert all_row.split()[1:7] == ["6", "1", "0.500", f"{3.5 / 6:.3f}", f"{4 / 6:.3f}",
                                    f"{expected_row(records, PLAN)['constant_baseline']:.3f}"]
    assert any(line.startswith("family=shape_count ") for line in printed)
    assert any(line.startswith("min_visibility=0.9 ") for line in printed)
    assert f"wrote {scores}" in printed


# -- errors (no rendering needed) -------------------------------------------------------------------

@pytest.fixture()
def small_records(tmp_path) -> Path:
    """records.jsonl of two composed (not rendered) counting items."""
    provenance = Provenance(stim3d_version="test", engine="raster", samples=1, device="cpu", denoise=False)
    rows = []
    for index in range(2):
        item = make_item("shape_count", {}, [3, 0, index], f"shape_count-t0-{index:05d}", Frame(160, 120))
        rows += records_for(item.model_copy(update={"provenance": provenance}), "items/x/image.png", "cd" * 32)
    path = tmp_path / "records.jsonl"
    path.write_text("".join(r.model_dump_json() + "\n" for r in rows))
    return path


@pytest.mark.parametrize("spec, expected", [
    ("nope", "--scoring-core nope: no core of that name in entry-point group stim3d.scoring_cores"),
    ("no_such_module_xyz:receive", "cannot import 'no_such_module_xyz'"),
    ("stim3d.scoring.rules:no_such_function", "has no function 'no_such_function'"),
])
def test_a_bad_scoring_core_fails_before_rendering(tmp_path, spec, expected):
    (tmp_path / "batch.yaml").write_text(CONFIG)
    code, _, stderr = run("render", str(tmp_path / "batch.yaml"), "--out", str(tmp_path / "out"), "--scoring-core", spec)
    assert code == 2
    assert len(stderr.strip().splitlines()) == 1 and expected in stderr, stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("content, expected", [
    ('{"question_id": "shape_count-t0-00000-q0", "response": "2"}\n{oops\n', "predictions.jsonl line 2: not JSON"),
    ('{"question_id": "shape_count-t0-00000-q0"}\n', "line 1: no 'response'"),
    ('{"response": "2"}\n', "line 1: expected"),
    ('{"question_id": "shape_count-t0-00000-q0", "response": ["2"]}\n', "'response' must be a string or null"),
    ('{"question_id": "shape_count-t0-00000-q0", "response": "2"}\n\n'
     '{"question_id": "shape_count-t0-00000-q0", "response": "3"}\n', "line 3: question_id 'shape_count-t0-00000-q0' "
                                                                       "already answered on line 1"),
])
def test_bad_predictions_are_one_clear_line(small_records, tmp_path, content, expected):
    predictions = tmp_path / "predictions.jsonl"
    predictions.write_text(content)
    code, stdout, stderr = run("score", str(small_records), str(predictions))
    assert code == 2 and not stdout
    assert len(stderr.strip().splitlines()) == 1 and expected in stderr, stderr


def test_score_names_unknown_breakdown_keys_and_missing_files(small_records, tmp_path):
    predictions = tmp_path / "predictions.jsonl"
    predictions.write_text('{"question_id": "shape_count-t0-00000-q0", "response": null}\n')
    code, _, stderr = run("score", str(small_records), str(predictions), "--by", "colour")
    assert code == 2 and "--by colour: no record has 'colour'; keys:" in stderr and "min_visibility" in stderr
    code, _, stderr = run("score", str(small_records), str(predictions), "--by", "least_visibility:zero")
    assert code == 2 and "bin width 'zero' must be a positive number" in stderr
    code, _, stderr = run("score", str(tmp_path / "nope.jsonl"), str(predictions))
    assert code == 2 and "nope.jsonl: no such file" in stderr
    code, stdout, _ = run("score", str(small_records), str(predictions), "--by", "least_visibility:0.05")
    assert code == 0
    report = json.loads(predictions.with_suffix(".scores.json").read_text())
    assert report["rows"][0]["valid_rate"] == 0.0 and report["missing"] == 1  # null response: answered, invalid
    bins = [row["value"] for row in report["rows"] if row["key"] == "least_visibility:0.05"]
    assert bins and all(b.startswith("[") and b.endswith(")") for b in bins)
