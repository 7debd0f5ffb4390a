"""`stim3d study build`: trials, grids, roles, determinism, the plan in node, package data, JATOS, bad inputs."""

from __future__ import annotations

import fnmatch
import json
import re
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
from tests.study_support import ROOT, build_real

pytestmark = pytest.mark.bpy

VENDOR = ROOT / "stim3d" / "study" / "vendor" / "jspsych"


@pytest.fixture(scope="module")
def batch(study_batch) -> Path:
    return study_batch


@pytest.fixture(scope="module")
def built(batch, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("studies") / "study"
    build_real(batch, out, BuildOptions(practice=2, catch=2, jatos=True))  # a real study: no gold but practice's
    return out


def trials_of(study: Path) -> list[Trial]:
    return [Trial.model_validate(t) for t in json.loads((study / "trials.json").read_text())["trials"]]


def test_trials_carry_the_records_answer_types_and_golds_only_where_the_page_judges(batch, built):
    records = {r.question_id: r for r in load_batch(batch).records}
    trials = trials_of(built)
    assert {t.answer_type for t in trials} >= {"integer", "yes_no", "letters", "cell", "choice", "box", "number",
                                               "strict_count", "strict_cell_set", "strict_cell_set_count"}
    assert [t.role for t in trials].count("practice") == 2 and [t.role for t in trials].count("catch") == 2
    for trial in trials:
        record = records[trial.question_id]
        assert trial.answer_type == record.answer.type and trial.options == record.answer.options
        assert (built / trial.image).read_bytes() == loaded_image(batch, trial.item_id)  # lossless, the model's PNG
        if trial.role in ("main", "catch"):  # the page never judges these: their answers stay with the scorer
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
    build_real(batch, again, BuildOptions(practice=2, catch=2, jatos=True))
    for name in ("study.json", "trials.json"):
        assert (again / name).read_bytes() == (built / name).read_bytes()
    assert (again.with_name("again.jzip")).read_bytes() == built.with_name("study.jzip").read_bytes()
    other = tmp_path / "other"
    build_study(batch, other, BuildOptions(pilot=True, practice=1, catch=2, jatos=True))
    assert json.loads((other / "study.json").read_text())["study_id"] != json.loads((built / "study.json").read_text())["study_id"]


def test_force_rebuilds_but_keeps_data_and_consent(batch, tmp_path):
    out = tmp_path / "study"
    build_study(batch, out, BuildOptions(pilot=True))
    (out / "consent.html").write_text("our approved text")
    (out / "data" / "p1").mkdir(parents=True)
    (out / "data" / "p1" / "s1.json").write_text("{}")
    (out / "stimuli" / "stale.png").write_bytes(b"x")
    with pytest.raises(StudyError, match="already a study; `force=True` rebuilds it"):
        build_study(batch, out, BuildOptions(pilot=True))
    build_study(batch, out, BuildOptions(pilot=True, force=True, practice=1))
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
    packed = {n.removeprefix(folder + "/") for n in names if n != jas_name}
    assert packed == on_disk - {".stim3d-private.json"}  # the page's files; the owner's private file stays here


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
    from stim3d.cli.common import UsageError
    from stim3d.cli.study import build_options

    args = Namespace(per_participant=None, practice=-1, catch=2, seed=0, filter=[], present_ms=None, mask_ms=None,
                     completion_url=None, jatos=False, force=False)
    with pytest.raises(UsageError, match=r"^--practice -1: "):
        build_options(args)
    args.practice, args.completion_url = 2, "prolific.example/complete"
    with pytest.raises(UsageError, match=r"^--completion-url .*http"):
        build_options(args)


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


def test_build_refuses_an_item_the_page_cannot_present_in_one_line_naming_it(batch, tmp_path, monkeypatch, capsys):
    """A type without a widget (here box, its widget taken away) would end the study on that trial: refused."""
    from stim3d.cli import main
    from stim3d.study import contract

    monkeypatch.delitem(contract.RESPONSE_FORMS, "box")
    item = next(r for r in load_batch(batch).records if r.answer.type == "box")
    assert main(["study", "build", str(batch), "--out", str(tmp_path / "study")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"item {item.item_id}, question {item.question_id}: answer type 'box' has no widget" in err[0]
    assert not (tmp_path / "study").exists()


def test_force_refuses_a_folder_that_is_not_a_study_and_deletes_nothing(batch, tmp_path, capsys):
    """--force replaces stimuli/, lib/, js/ and css/ whole: into someone else's folder it would delete theirs."""
    from stim3d.cli import main

    for name, manifest in (("site", None), ("app", '{"name": "my app"}'), ("odd", "[1, 2]")):
        stranger = tmp_path / name
        for rel in ("js/app.js", "css/site.css", "stimuli/logo.png", "index.html"):
            (stranger / rel).parent.mkdir(parents=True, exist_ok=True)
            (stranger / rel).write_text(f"{name}'s {rel}")
        if manifest is not None:
            (stranger / "study.json").write_text(manifest)
        before = {p: p.read_bytes() for p in stranger.rglob("*") if p.is_file()}
        assert main(["study", "build", str(batch), "--out", str(stranger), "--force"]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "is not empty and is not a study" in err[0] and "--force only rebuilds" in err[0]
        assert {p: p.read_bytes() for p in stranger.rglob("*") if p.is_file()} == before


def test_only_the_pages_files_are_counted_and_packed_for_jatos(batch, tmp_path):
    """What the owner keeps in the study folder (notes, an older version's exclusions.json) never leaves it."""
    out = tmp_path / "study"
    build_study(batch, out, BuildOptions(pilot=True))
    (out / "notes.txt").write_text("participant emails")
    (out / "exclusions.json").write_text("{}")
    (out / "private").mkdir()
    (out / "private" / "key.txt").write_text("secret")
    report = build_study(batch, out, BuildOptions(pilot=True, force=True, jatos=True))
    with zipfile.ZipFile(report.jzip) as archive:
        names = {name.split("/", 1)[1] for name in archive.namelist() if "/" in name}
    assert names and not names & {"notes.txt", "exclusions.json", "private/key.txt"}
    assert {"index.html", "consent.html", "study.json", "trials.json"} <= names
    assert all(name.split("/")[0] in ("js", "css", "lib", "stimuli") for name in names if "/" in name)


def test_no_absolute_path_is_published_and_score_finds_the_batch_from_the_private_file(batch, built, tmp_path):
    """study.json and trials.json are served to every participant and packed for JATOS: no path of this machine."""
    from stim3d.study.score import score_study

    home = str(batch.resolve().parent)
    published = [(built / name).read_text() for name in ("study.json", "trials.json")]
    with zipfile.ZipFile(built.with_name("study.jzip")) as archive:
        published += [archive.read(name).decode("utf-8", "replace") for name in archive.namelist()
                      if name.endswith((".json", ".jas", ".html"))]
    assert all(home not in text and str(built.parent) not in text for text in published)
    manifest = json.loads((built / "study.json").read_text())
    assert "path" not in manifest["batch"] and manifest["batch"]["name"] == batch.resolve().name
    assert json.loads((built / ".stim3d-private.json").read_text()) == {"batch": str(batch.resolve())}
    copy = tmp_path / "copied-study"
    shutil.copytree(built, copy)
    (copy / ".stim3d-private.json").unlink()  # a study folder copied without its private file
    with pytest.raises(StudyError, match=r"no record of the batch this study was built from; give `batch`$"):
        score_study(copy)


def test_an_unedited_consent_template_is_refused_unless_the_study_is_a_pilot(batch, tmp_path, capsys):
    """A first build leaves only the template to edit; once edited the study builds; --pilot builds it as it is."""
    from stim3d.cli import main

    out = tmp_path / "study"
    assert main(["study", "build", str(batch), "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "consent.html: the consent template is not edited (it still has [N], [researcher" in err[0]
    assert "pass --pilot to try the study first" in err[0], err
    assert [p.name for p in out.iterdir()] == ["consent.html"]  # the one file to edit, nothing else
    template = (out / "consent.html").read_text()
    (out / "consent.html").write_text(template.replace("[N]", "10"))  # half edited is not edited
    with pytest.raises(StudyError, match=r"still has \[researcher, Replace this text"):
        build_study(batch, out, BuildOptions())
    (out / "consent.html").write_text("<h2>Consent</h2><p>About 10 minutes. Contact: A. Researcher.</p>")
    assert main(["study", "build", str(batch), "--out", str(out)]) == 0  # no --force: only the consent was there
    manifest = json.loads((out / "study.json").read_text())
    assert "pilot" not in manifest
    pilot = tmp_path / "pilot"
    assert main(["study", "build", str(batch), "--out", str(pilot), "--pilot"]) == 0
    assert (pilot / "consent.html").read_text() == template
    piloted = json.loads((pilot / "study.json").read_text())
    assert piloted["pilot"] is True and piloted["study_id"] == manifest["study_id"]  # the same study, tried out
    capsys.readouterr()
    assert main(["study", "build", str(batch), "--out", str(pilot), "--force"]) == 2  # still the template
    assert "not edited" in capsys.readouterr().err


def test_describe_questions_are_left_out_with_the_reason_unless_included(batch, tmp_path):
    """A rubric scores a description against facts the person is never shown: not a people's question by default."""
    rubric = [r for r in load_batch(batch).records if r.answer.type == "rubric"]
    assert rubric
    report = build_real(batch, tmp_path / "plain", BuildOptions())
    assert all(t.answer_type != "rubric" for t in trials_of(tmp_path / "plain"))
    (line,) = [line for line in report.summary_lines() if line.startswith("left out")]
    assert line.startswith(f"left out {len(rubric)} describe question(s): a free description is scored by a rubric")
    assert line.endswith("(`include_describe=True` keeps them)")  # the CLI shows it as --include-describe
    included = build_real(batch, tmp_path / "with", BuildOptions(include_describe=True))
    assert not [line for line in included.summary_lines() if line.startswith("left out")]
    (trial,) = [t for t in trials_of(tmp_path / "with") if t.answer_type == "rubric"]
    assert trial.prompt.startswith("Describe the picture") and "Mention how many objects there are" in trial.instructions
    assert json.loads((tmp_path / "with" / "study.json").read_text())["options"]["include_describe"] is True
    assert "include_describe" not in json.loads((tmp_path / "plain" / "study.json").read_text())["options"]


def test_a_pilot_ships_every_gold_and_keeps_the_real_studys_id(batch, built, tmp_path):
    """The owner's try-out shows each gold after the answer; the real study (`built`) has none but practice's."""
    pilot = tmp_path / "pilot"
    report = build_study(batch, pilot, BuildOptions(pilot=True, practice=2, catch=2, jatos=True))
    records = {r.question_id: r for r in load_batch(batch).records}
    for trial in trials_of(pilot):
        record = records[trial.question_id]
        assert trial.gold_text == answer_text(trial.answer_type, record.answer.gold)
    assert any(line.startswith("pilot: every trial's gold") for line in report.summary_lines())
    manifest = json.loads((pilot / "study.json").read_text())
    assert manifest["pilot"] is True
    assert manifest["study_id"] == json.loads((built / "study.json").read_text())["study_id"]
    assert not [t for t in trials_of(built) if t.role in ("main", "catch") and (t.gold or t.gold_text)]


def test_catch_trials_are_only_easy_exact_answers(every_family_batch, tmp_path):
    """Asked for as many as the batch allows, catch trials are counts up to 6, yes/no or a choice among up to 4:
    never a box, a length, letters, typed text, cells or a description, never AVA's 8 colours or 12 objects."""
    from stim3d.study.select import MAX_CATCH_COUNT, MAX_CATCH_OPTIONS

    with pytest.raises(StudyError, match=r"catch 50: only (\d+) item\(s\) left after 0 practice item\(s\) have an "
                                         r"easy exact question") as refused:
        build_study(every_family_batch, tmp_path / "none", BuildOptions(pilot=True, practice=0, catch=50))
    most = int(re.search(r"only (\d+) item", str(refused.value))[1])
    assert most >= 3
    build_study(every_family_batch, tmp_path / "study", BuildOptions(pilot=True, practice=0, catch=most))
    records = {r.question_id: r for r in load_batch(every_family_batch).records}
    catch = [records[t.question_id] for t in trials_of(tmp_path / "study") if t.role == "catch"]
    assert len(catch) == most
    for record in catch:
        kind = record.answer.type
        assert kind in ("integer", "strict_count", "yes_no", "choice"), record.question_id
        if kind == "choice":
            assert len(record.answer.options or []) <= MAX_CATCH_OPTIONS and record.subject.get("form") != "open"
        if kind in ("integer", "strict_count"):
            assert record.answer.gold <= MAX_CATCH_COUNT
    left = [r for r in records.values() if r.item_id not in {c.item_id for c in catch}]
    assert {"box", "number", "text", "letters", "cell"} <= {r.answer.type for r in left}  # never checks


def test_min_window_is_recorded_and_the_flag_is_one_line(batch, tmp_path, capsys):
    from stim3d.cli import main

    out = tmp_path / "study"
    assert main(["study", "build", str(batch), "--out", str(out), "--pilot", "--min-window", "1024x700"]) == 0
    assert json.loads((out / "study.json").read_text())["options"]["min_window"] == [1024, 700]
    capsys.readouterr()
    for bad, message in (("1024", "'1024': give width x height in CSS pixels"),
                         ("100x700", "--min-window 100x700: width and height must each be 200-4000 CSS pixels")):
        try:
            code = main(["study", "build", str(batch), "--out", str(tmp_path / "other"), "--min-window", bad])
        except SystemExit as exc:  # argparse's own refusal of the argument
            code = exc.code
        err = capsys.readouterr().err.strip().splitlines()
        assert code == 2 and len(err) == 1 and message in err[0], err
    assert not (tmp_path / "other").exists()
