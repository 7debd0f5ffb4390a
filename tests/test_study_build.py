"""`stim3d study build`: trials, grids, roles, determinism, the plan in node, package data, JATOS, bad inputs."""

from __future__ import annotations

import fnmatch
import json
import shutil
import subprocess
import sys
import tomllib
import zipfile
from argparse import Namespace
from pathlib import Path

import pytest

from stim3d.render.batch.reading import load_batch
from stim3d.scoring.answers import answer_text
from stim3d.study.build import BuildOptions, build_study
from stim3d.study.contract import Trial, participant_plan
from stim3d.study.errors import StudyError
from stim3d.study.select import easiness
from stim3d.study.trials import GRID_TYPES, grid_objects, object_centroids
from tests.study_support import ROOT

pytestmark = pytest.mark.bpy

VENDOR = ROOT / "stim3d" / "study" / "vendor" / "jspsych"


@pytest.fixture(scope="module")
def batch(study_batch) -> Path:
    return study_batch


@pytest.fixture(scope="module")
def built(batch, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("studies") / "study"
    build_study(batch, out, BuildOptions(practice=2, catch=2, jatos=True))
    return out


def trials_of(study: Path) -> list[Trial]:
    return [Trial.model_validate(t) for t in json.loads((study / "trials.json").read_text())["trials"]]


def test_trials_carry_the_records_answer_types_and_golds_only_where_shown(batch, built):
    records = {r.question_id: r for r in load_batch(batch).records}
    trials = trials_of(built)
    assert {t.answer_type for t in trials} >= {"integer", "yes_no", "letters", "cell", "choice", "box", "number",
                                               "strict_count", "strict_cell_set", "strict_cell_set_count"}
    assert [t.role for t in trials].count("practice") == 2 and [t.role for t in trials].count("catch") == 2
    for trial in trials:
        record = records[trial.question_id]
        assert trial.answer_type == record.answer.type and trial.options == record.answer.options
        assert (built / trial.image).read_bytes() == loaded_image(batch, trial.item_id)  # lossless, the model's PNG
        if trial.role == "main":
            assert trial.gold is None and trial.gold_text is None
            assert "answer" not in trial.difficulty and "n_exceptions" not in trial.difficulty
        else:
            assert trial.gold_text == answer_text(record.answer.type, record.answer.gold)
        assert "\\boxed" not in trial.prompt and "CLICK(" not in trial.prompt and trial.instructions
    shown = {t.item_id for t in trials if t.role != "main"}
    assert not any(t.item_id in shown for t in trials if t.role == "main")  # no main trial about a gold's image


def loaded_image(batch: Path, item_id: str) -> bytes:
    return load_batch(batch).image_path(item_id).read_bytes()


def test_catch_trials_are_the_easiest_questions_left_after_practice(batch, built):
    records = {r.question_id: r for r in load_batch(batch).records}
    trials = trials_of(built)
    practice_items = {t.item_id for t in trials if t.role == "practice"}
    catch = [records[t.question_id] for t in trials if t.role == "catch"]
    others = [r for r in records.values() if r.item_id not in practice_items and r.answer.type != "rubric"
              and r.item_id not in {c.item_id for c in catch}]
    assert max(easiness(c) for c in catch) <= min(easiness(r) for r in others)


def test_grid_cells_hold_each_grid_objects_centroid(batch, built):
    items = {item.item_id: item for item in load_batch(batch).items}
    grids = [t for t in trials_of(built) if t.answer_type in GRID_TYPES]
    assert {t.family for t in grids} == {"odd_grid", "rose_grid"}
    for trial in grids:
        item = items[trial.item_id]
        cells = grid_objects(item)
        centroid = object_centroids(item, list(cells.values()))
        assert trial.grid is not None and len(trial.grid.cells) == trial.grid.rows * trial.grid.cols == len(cells)
        for (row, col), oid in cells.items():
            x, y = centroid[oid]
            truth = next(t for t in item.ground_truth.objects if t.id == oid)
            assert truth.centroid_px is None or (x, y) == tuple(truth.centroid_px)
            holding = [(c.row, c.col) for c in trial.grid.cells
                       if c.box[0] <= x < c.box[2] and c.box[1] <= y < c.box[3]]
            assert holding == [(row, col)], (trial.trial_id, row, col, holding)
            assert all(0 <= v <= limit for c in trial.grid.cells for v, limit in zip(c.box, (64, 48, 64, 48)))


def test_the_same_batch_and_options_give_byte_identical_manifest_and_trials(batch, built, tmp_path):
    again = tmp_path / "again"
    build_study(batch, again, BuildOptions(practice=2, catch=2, jatos=True))
    for name in ("study.json", "trials.json"):
        assert (again / name).read_bytes() == (built / name).read_bytes()
    assert (again.with_name("again.jzip")).read_bytes() == built.with_name("study.jzip").read_bytes()
    other = tmp_path / "other"
    build_study(batch, other, BuildOptions(practice=1, catch=2, jatos=True))
    assert json.loads((other / "study.json").read_text())["study_id"] != json.loads((built / "study.json").read_text())["study_id"]


def test_force_rebuilds_but_keeps_data_and_consent(batch, tmp_path):
    out = tmp_path / "study"
    build_study(batch, out, BuildOptions())
    (out / "consent.html").write_text("our approved text")
    (out / "data" / "p1").mkdir(parents=True)
    (out / "data" / "p1" / "s1.json").write_text("{}")
    (out / "stimuli" / "stale.png").write_bytes(b"x")
    with pytest.raises(StudyError, match="already a study; --force"):
        build_study(batch, out, BuildOptions())
    build_study(batch, out, BuildOptions(force=True, practice=1))
    assert (out / "consent.html").read_text() == "our approved text"
    assert (out / "data" / "p1" / "s1.json").read_text() == "{}"
    assert not (out / "stimuli" / "stale.png").exists()
    assert json.loads((out / "study.json").read_text())["options"]["practice"] == 1


def test_plan_js_in_node_equals_participant_plan(built, tmp_path):
    node = shutil.which("node")
    if node is None:
        pytest.fail("node is missing: scripts/install.sh installs nodejs")
    trials = trials_of(built)
    cases = [(seed, participant, per) for seed in (0, 7) for participant in ("P1", "prolific-5f3a", "x.y_z")
             for per in (None, 3)]
    script = tmp_path / "plans.js"
    script.write_text(
        "const plan = require(process.argv[2]);\n"
        "const input = JSON.parse(require('fs').readFileSync(0, 'utf8'));\n"
        "const out = input.cases.map(([seed, p, per]) => plan.participantPlan(input.trials, seed, p, per));\n"
        "process.stdout.write(JSON.stringify({plans: out, hash: plan.fnv1a32('stim3d|ünï')}));\n")
    result = subprocess.run([node, str(script), str(built / "js" / "plan.js")], capture_output=True, text=True,
                            timeout=60, input=json.dumps({"cases": cases, "trials": [t.model_dump(mode="json")
                                                                                    for t in trials]}))
    assert result.returncode == 0, result.stderr
    answer = json.loads(result.stdout)
    from stim3d.study.contract import fnv1a32

    assert answer["hash"] == fnv1a32("stim3d|ünï")
    expected = [participant_plan(trials, seed, p, per) for seed, p, per in cases]
    assert answer["plans"] == expected
    assert len({tuple(p) for p in expected}) > 1  # participants do differ


def test_jatos_archive_holds_the_jas_and_the_study(built):
    with zipfile.ZipFile(built.with_name("study.jzip")) as archive:
        names = archive.namelist()
        (jas_name,) = [n for n in names if n.endswith(".jas")]
        jas = json.loads(archive.read(jas_name))
        folder = jas["data"]["dirName"]
        page = archive.read(f"{folder}/index.html").decode()
    assert jas["version"] == "3" and jas_name == f"{folder}.jas"
    assert [c["htmlFilePath"] for c in jas["data"]["componentList"]] == ["index.html"]
    assert '<script src="jatos.js"></script>' in page
    assert '<script src="jatos.js"></script>' not in (built / "index.html").read_text()
    on_disk = {p.relative_to(built).as_posix() for p in built.rglob("*") if p.is_file()}
    assert {n.removeprefix(folder + "/") for n in names if n != jas_name} == on_disk


def test_package_data_ships_the_page_and_the_vendored_jspsych():
    """The wheel's package-data globs cover every file of assets/ and of the vendored jsPsych (the wheel build
    itself, `pip wheel --no-build-isolation --no-deps .`, was checked to list them)."""
    patterns = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["stim3d.study"]
    package = ROOT / "stim3d" / "study"
    if not (VENDOR / "SHA256SUMS").is_file():
        pytest.fail("jsPsych is not vendored: run scripts/fetch_jspsych.sh")
    files = [p for p in (package / "assets").rglob("*") if p.is_file()] + [p for p in VENDOR.iterdir() if p.is_file()]
    for path in files:
        rel = path.relative_to(package).as_posix()
        assert any(fnmatch.fnmatch(rel, pattern) and rel.count("/") == pattern.count("/") for pattern in patterns), rel
    assert "stim3d/study/vendor/" in (ROOT / ".gitignore").read_text().splitlines()


def test_options_from_args_refuse_bad_values_in_one_line():
    args = Namespace(per_participant=None, practice=-1, catch=2, seed=0, filter=[], present_ms=None, mask_ms=None,
                     completion_url=None, jatos=False, force=False)
    with pytest.raises(StudyError, match=r"^--practice -1: "):
        BuildOptions.from_args(args)
    args.practice, args.completion_url = 2, "prolific.example/complete"
    with pytest.raises(StudyError, match=r"^--completion-url .*http"):
        BuildOptions.from_args(args)


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "stim3d", "study", "build", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)


def test_bad_inputs_are_one_line_and_exit_2(batch, built, tmp_path):
    (tmp_path / "empty").mkdir()
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "notes.txt").write_text("mine")
    out = str(tmp_path / "new")
    cases = {
        "no such batch folder": [str(tmp_path / "missing"), "--out", out],
        "not a stim3d batch folder": [str(tmp_path / "empty"), "--out", out],
        "expected KEY=VALUE": [str(batch), "--out", out, "--filter", "least_visibility"],
        "no item has a difficulty or parameter 'nope'": [str(batch), "--out", out, "--filter", "nope=1"],
        "no items match": [str(batch), "--out", out, "--filter", "least_visibility=0.123"],
        "inside its items/": [str(batch), "--out", str(batch / "items" / "study")],
        "not empty and is not a study": [str(batch), "--out", str(tmp_path / "full")],
        "already a study": [str(batch), "--out", str(built)],
        "--catch 40": [str(batch), "--out", out, "--catch", "40"],
        "--completion-url": [str(batch), "--out", out, "--completion-url", "ftp://x"],
    }
    for expected, args in cases.items():
        result = cli(*args)
        assert result.returncode == 2 and "Traceback" not in result.stderr, (expected, result.stderr)
        assert len(result.stderr.strip().splitlines()) == 1 and expected in result.stderr, (expected, result.stderr)
    assert not Path(out).exists()
