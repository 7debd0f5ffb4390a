"""Bad input over the whole command line: one clear line, exit code 2, no traceback, nothing written, nothing lost.

Each case builds its bad input in a fresh folder holding a copy of a small rendered
batch and an empty `outside/` folder, runs the command, and checks: the exit code,
stderr (exactly one line for refusals; one `skipped` line per bad item for the
commands that skip and go on), no "Traceback", and a snapshot of the whole folder:
a refused command changed nothing at all, a skipping one wrote only inside its
destination and lost nothing of the batch.
"""

from __future__ import annotations

import errno
import hashlib
import io
import json
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from stim3d.cli import main
from tests.batch_support import ROOT

CONFIG = """\
seed: 5
render: {engine: raster, width: 64, height: 48, samples: 1}
tasks:
  - family: shape_count
    count: 3
    params: {max_instances: 2}
"""
ITEM = "shape_count-t0-00001"


@pytest.fixture(scope="module")
def rendered(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("hardening")
    (folder / "batch.yaml").write_text(CONFIG)
    result = run("render", str(folder / "batch.yaml"), "--out", str(folder / "batch"), "--quiet", cwd=folder)
    assert result.returncode == 0, result.stderr
    return folder


def run(*args: str, cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "stim3d", *args], cwd=cwd, capture_output=True, text=True,
                          input=stdin, env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=300)


def run_here(argv: list[str], capsys, monkeypatch, stdin: str | None = None) -> tuple[int, str]:
    """`stim3d ARGV` in this process (no interpreter start-up per case); any exception escaping main fails the test."""
    if stdin is not None:
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin.encode())))
    handler = signal.getsignal(signal.SIGTERM)  # `render` installs its own
    try:
        code = main(argv)
    except SystemExit as stop:  # argparse
        code = int(stop.code or 0)
    finally:
        signal.signal(signal.SIGTERM, handler)
    return code, capsys.readouterr().err


def snapshot(root: Path) -> dict[str, str]:
    """Every path under `root` with its content hash (folders as 'dir', symlinks by target)."""
    state = {}
    for path in sorted(root.rglob("*")):
        rel = str(path.relative_to(root))
        if path.is_symlink():
            state[rel] = f"link:{os.readlink(path)}"
        elif path.is_dir():
            state[rel] = "dir"
        else:
            state[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    return state


# -- building bad inputs (each gets the case folder `d`, returns the command's arguments) ----------

def write(path: Path, data: bytes | str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


def config_with(text: str) -> Callable[[Path], list[str]]:
    return lambda d: ["validate", str(write(d / "bad.yaml", text))]


def render_config(text: str) -> Callable[[Path], list[str]]:
    return lambda d: ["render", str(write(d / "bad.yaml", text)), "--out", str(d / "new")]


TASK = "tasks:\n  - {family: shape_count, count: 2, params: {max_instances: 2}}\n"
ONE_TASK = "tasks:\n  - {{family: shape_count, count: {count}, params: {{{params}}}{extra}}}\n"


def task(count: str = "2", params: str = "max_instances: 2", extra: str = "") -> str:
    return ONE_TASK.format(count=count, params=params, extra=extra)


def corrupt_manifest(d: Path) -> None:
    write(d / "batch" / "batch.json", "{ not json")


def retouch_records(d: Path, change: Callable[[dict], None]) -> None:
    path = d / "batch" / "records.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    for row in rows:
        change(row)
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))


def truncate_image(d: Path, name: str = "image.png", keep_records_hash: bool = True) -> None:
    """A truncated image whose records hash was rewritten to match (what a resume once did)."""
    image = d / "batch" / "items" / ITEM / name
    image.write_bytes(image.read_bytes()[:120])
    if keep_records_hash and name == "image.png":
        sha = hashlib.sha256(image.read_bytes()).hexdigest()
        retouch_records(d, lambda r: r["image"].__setitem__("sha256", sha) if r["item_id"] == ITEM else None)


def small_mask(d: Path) -> None:
    from PIL import Image

    mask = d / "batch" / "items" / ITEM / "mask.png"
    Image.open(mask).resize((32, 24)).save(mask)


def tampered_config_hash(d: Path) -> list[str]:
    manifest = json.loads((d / "batch" / "batch.json").read_text())
    manifest["config"]["seed"] = 6  # the recorded hash no longer matches
    write(d / "batch" / "batch.json", json.dumps(manifest))
    return ["merge", str(d / "batch"), "--out", str(d / "merged")]


def bad_item_id(d: Path) -> None:
    item = d / "batch" / "items" / ITEM / "item.json"
    item.write_text(item.read_text().replace(f'"item_id": "{ITEM}"', '"item_id": "../../../outside/escaped"'))


def gallery_symlinked_outside(d: Path) -> list[str]:
    (d / "batch" / "gallery").symlink_to(d / "outside")
    return ["gallery", str(d / "batch")]


@dataclass(frozen=True)
class Case:
    build: Callable[[Path], list[str] | None]
    expect: str  # a piece of the (first) stderr line
    args: tuple[str, ...] = ()  # when `build` only changes files
    code: int = 2
    skipped: int = 0  # > 0: the command skips that many bad items, names each, and finishes
    writes: str | None = None  # the one folder (relative) a skipping command may write in
    stdin: str | None = None


def args(*parts: str) -> tuple[str, ...]:
    return parts


CASES: dict[str, Case] = {
    # configs
    "config not UTF-8": Case(lambda d: ["validate", str(write(d / "bad.yaml", b"tasks: [caf\xe9]"))], "not UTF-8"),
    "render config not UTF-8": Case(lambda d: ["render", str(write(d / "bad.yaml", b"\xff\xfe")), "--out",
                                               str(d / "new")], "not UTF-8"),
    "duplicate key": Case(config_with("seed: 1\nseed: 2\n" + TASK), "duplicate key 'seed'"),
    "bool as count": Case(config_with(task(count="true")), "tasks[0].count = True"),
    "bool as parameter": Case(config_with(task(params="max_instances: true")), "true/false value"),
    "range reversed": Case(render_config(task(params="size_range: [1.05, 0.75]")), "low end comes first"),
    "range zero": Case(config_with(task(params="size_range: [0, 0]")), "must be positive"),
    "range nan": Case(config_with(task(params="size_range: [.nan, 1]")), "finite"),
    "split absolute": Case(render_config(task(extra=", split: /tmp/stim3d-escape")), "split '/tmp/stim3d-escape'"),
    "split traversal": Case(config_with(task(extra=", split: ../up")), "split '../up'"),
    "cannot be composed": Case(config_with(task(params="max_instances: 5, n_shape_types: 5, size_range: [40, 50]")),
                               "cannot be composed"),
    "stdin duplicate key": Case(lambda d: ["validate", "-"], "<stdin>", stdin="seed: 1\nseed: 1\n" + TASK),
    # output folders
    "out is a file": Case(lambda d: ["render", str(d / "batch.yaml"), "--out", str(write(d / "afile", "x"))],
                          "exists and is not a folder"),
    "out is /dev/null": Case(lambda d: ["render", str(d / "batch.yaml"), "--out", "/dev/null"], "not a folder"),
    "out name too long": Case(lambda d: ["render", str(d / "batch.yaml"), "--out", str(d / ("x" * 300))],
                              "too long"),
    "out not writable": Case(lambda d: ["render", str(d / "batch.yaml"), "--out", "/proc/stim3d-out"], "/proc/stim3d-out"),
    "schema out into missing folder": Case(lambda d: ["schema", "--out", str(d / "missing" / "s.json")],
                                           "does not exist"),
    "score out into missing folder": Case(lambda d: ["score", str(d / "batch"), str(write(d / "p.jsonl", "")),
                                                     "--out", str(d / "missing" / "s.json")], "does not exist"),
    "score empty records": Case(lambda d: ["score", str(write(d / "r.jsonl", "")), str(write(d / "p.jsonl", ""))],
                                "no records"),
    "score records not UTF-8": Case(lambda d: ["score", str(write(d / "r.jsonl", b"\xff")),
                                               str(write(d / "p.jsonl", ""))], "not UTF-8"),
    # corrupt batch files
    "render: corrupt batch.json": Case(corrupt_manifest, "batch.json: corrupt",
                                       args=("render", "{d}/batch.yaml", "--out", "{d}/batch")),
    "export: corrupt batch.json": Case(corrupt_manifest, "batch.json: corrupt",
                                       args=("export", "coco", "{d}/batch", "--to", "{d}/coco")),
    "merge: corrupt batch.json": Case(corrupt_manifest, "batch.json: corrupt",
                                      args=("merge", "{d}/batch", "--out", "{d}/merged")),
    "merge: config edited after hashing": Case(tampered_config_hash, "hashes to"),
    "show: item.json not UTF-8": Case(lambda d: write(d / "batch" / "items" / ITEM / "item.json", b"\xff{}") and None,
                                      "not UTF-8", args=("show", "{d}/batch/items/" + ITEM)),
    "sweep: no such target": Case(lambda d: None, "--target 999",
                                  args=("sweep", "occlusion", "{d}/batch/items/" + ITEM, "--levels", "0.5", "--out",
                                        "{d}/sweep", "--target", "999", "--engine", "raster")),
    # a setting the library names (stim3d/errors.py), shown as the flag that sets it (stim3d/cli/flags.py)
    "eval: a model without a server": Case(lambda d: None, "--model m: give --base-url, e.g. http://",
                                           args=("eval", "batch", "--model", "m")),
    "eval: a staircase with --limit": Case(lambda d: None, "--limit: does not apply",
                                           args=("eval", "batch", "--model", "baseline:oracle", "--staircase",
                                                 "--limit", "2")),
    "score: --compare of nothing": Case(lambda d: None, "--compare nosuch: no such file or folder",
                                        args=("score", "batch", "--compare", "nosuch")),
    "gallery: --family of no item": Case(lambda d: None, "--family 'hexagons': no items of that family here",
                                         args=("gallery", "batch", "--family", "hexagons")),
    "gallery: --name not a file name": Case(lambda d: None, "--name '../x': use 1-",
                                            args=("gallery", "batch", "--name", "../x")),
    "gallery: wrong= of a model not scored": Case(lambda d: None, "--filter wrong=m: no ",
                                                  args=("gallery", "batch", "--filter", "wrong=m")),
    "contact sheet: --filter of no key": Case(lambda d: None, "--filter colour=red: no item has",
                                              args=("contact-sheet", "batch", "-o", "s.png", "--filter", "colour=red")),
    "export: --to a folder in use": Case(lambda d: None, "batch/items already exists and is not empty; choose "
                                         "another --to", args=("export", "coco", "batch", "--to", "batch/items")),
    "merge: --out a file": Case(lambda d: write(d / "afile", "x") and None, "--out afile: exists and is not a folder",
                                args=("merge", "batch", "--out", "afile")),
    "sweep: --levels reversed": Case(lambda d: None, "--levels '0.9:0.1:0.1': the range ends (0.1) before it starts",
                                     args=("sweep", "occlusion", "batch/items/" + ITEM, "--levels", "0.9:0.1:0.1",
                                           "--out", "sweep", "--engine", "raster")),
    "sweep: --out a batch": Case(lambda d: None, "--out batch: is a batch folder (it has batch.json)",
                                 args=("sweep", "occlusion", "batch/items/" + ITEM, "--levels", "0.5", "--out",
                                       "batch", "--engine", "raster")),
    "sweep look: not a look": Case(lambda d: None, "--looks 'studio,shiny': 'shiny' is not a look",
                                   args=("sweep", "look", "batch/items/" + ITEM, "--looks", "studio,shiny", "--out",
                                         "looks", "--engine", "raster")),
    "study build: --out the batch": Case(lambda d: None, "--out batch: the study must not be the batch",
                                         args=("study", "build", "batch", "--out", "batch")),
    "study build: --staircase of no sweep": Case(lambda d: None, "--staircase: batch has no sweep",
                                                 args=("study", "build", "batch", "--out", "study", "--staircase")),
    "study score: not a study": Case(lambda d: None, "outside: not a study folder", args=("study", "score", "outside")),
    "study serve: not a study": Case(lambda d: None, "outside: not a study folder",
                                     args=("study", "serve", "outside", "--port", "0")),
    # names from files that would become paths
    "export: split from records is a path": Case(
        lambda d: retouch_records(d, lambda r: r.__setitem__("split", str(d / "outside"))), "split",
        args=("export", "imagefolder", "{d}/batch", "--to", "{d}/export")),
    "export: item id from records is a path": Case(
        lambda d: retouch_records(d, lambda r: r.__setitem__("item_id", "../../outside/x")), "item id",
        args=("export", "imagefolder", "{d}/batch", "--to", "{d}/export")),
    "gallery: folder symlinked outside": Case(gallery_symlinked_outside, "outside"),
    # corrupt items: skipped, named, the rest goes on
    "gallery: item id is a path": Case(bad_item_id, f"skipped {ITEM}", args=("gallery", "{d}/batch"), code=0,
                                       skipped=1, writes="batch/gallery"),
    "gallery: truncated image": Case(lambda d: truncate_image(d), f"skipped {ITEM}", args=("gallery", "{d}/batch"),
                                     code=0, skipped=1, writes="batch/gallery"),
    "contact sheet: truncated image": Case(lambda d: truncate_image(d), f"skipped {ITEM}",
                                           args=("contact-sheet", "{d}/batch", "-o", "{d}/sheet/s.png"), code=0,
                                           skipped=1, writes="sheet"),
    "coco: truncated image": Case(lambda d: truncate_image(d), f"{ITEM}: image.png or mask.png unreadable",
                                  args=("export", "coco", "{d}/batch", "--to", "{d}/coco"), code=1, skipped=1,
                                  writes="coco"),
    "coco: truncated mask": Case(lambda d: truncate_image(d, "mask.png"), f"{ITEM}: image.png or mask.png unreadable",
                                 args=("export", "coco", "{d}/batch", "--to", "{d}/coco"), code=1, skipped=1,
                                 writes="coco"),
    "coco: mask of another size": Case(small_mask, "mask.png is 32x24 but image.png is 64x48",
                                       args=("export", "coco", "{d}/batch", "--to", "{d}/coco"), code=1, skipped=1,
                                       writes="coco"),
    "imagefolder: truncated image": Case(lambda d: truncate_image(d), ITEM,
                                         args=("export", "imagefolder", "{d}/batch", "--to", "{d}/hf"), code=1,
                                         skipped=1, writes="hf"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_bad_input_is_one_line_and_changes_nothing_outside_its_destination(name, rendered, tmp_path, capsys,
                                                                         monkeypatch):
    case = CASES[name]
    d = tmp_path / "case"
    shutil.copytree(rendered, d, symlinks=True)
    (d / "outside").mkdir()
    built = case.build(d)
    argv = built if built else [part.replace("{d}", str(d)) for part in case.args]
    before = snapshot(d)
    monkeypatch.chdir(d)
    code, stderr = run_here(argv, capsys, monkeypatch, case.stdin)

    assert "Traceback" not in stderr, stderr
    assert code == case.code, (code, stderr)
    lines = stderr.strip().splitlines()
    if case.skipped:
        skipped = [line for line in lines if line.startswith("skipped ")]
        assert len(skipped) == case.skipped and case.expect in skipped[0], stderr
    else:
        assert len(lines) == 1 and lines[0].startswith("stim3d: error: "), stderr
        assert case.expect in lines[0], lines[0]
    after = snapshot(d)
    assert not any(path.startswith("outside/") for path in after), "wrote outside its destination"
    changed = {p for p in before.keys() | after.keys() if before.get(p) != after.get(p)}
    allowed = {p for p in changed if case.writes and (p == case.writes or p.startswith(case.writes + "/"))}
    assert changed == allowed, f"changed outside its destination: {sorted(changed - allowed)}"
    assert not Path("/tmp/stim3d-escape").exists()


def test_validate_reads_standard_input_and_a_traceback_never_reaches_the_terminal(rendered):
    result = run("validate", "-", cwd=rendered, stdin=CONFIG)
    assert result.returncode == 0 and "valid; 3 items" in result.stdout, result.stderr
    bad = run("render", "-", "--out", str(rendered / "xxx"), cwd=rendered, stdin="seed: 1\nseed: 1\n" + TASK)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "Traceback" not in bad.stderr, bad.stderr


def test_a_full_disk_is_one_line_naming_the_folder_and_leaves_no_temporaries(rendered, tmp_path, monkeypatch, capsys):
    """ENOSPC while the batch writes its files: one line naming the folder, no temporary left behind."""
    import stim3d.files as files

    def full_disk(path: Path) -> None:  # every flush to disk fails, as on a full disk
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))

    out = tmp_path / "out"
    monkeypatch.setattr(files, "_fsync", full_disk)
    code, err = run_here(["render", str(rendered / "batch.yaml"), "--out", str(out), "--quiet"], capsys, monkeypatch)
    err = err.strip().splitlines()
    assert code == 2 and len(err) == 1, err
    assert err[0] == f"stim3d: error: {out}: the disk is full; its temporary files were removed: free space and " \
                     "rerun the same command"
    assert [p.name for p in out.rglob("*") if ".tmp-" in p.name] == []
    assert not (out / ".stim3d.lock").exists()  # the lock went with the run


def test_score_parses_at_most_the_capped_length_of_a_response(rendered):
    """A runaway answer (here 5 MB) is scored invalid at once instead of being parsed."""
    import time

    from stim3d.scoring.records import read_records
    from stim3d.scoring.report import MAX_RESPONSE_CHARS, score_record

    record = read_records(rendered / "batch" / "records.jsonl")[0]
    gold = str(record.answer.gold)
    started = time.perf_counter()
    result = score_record(record, "1, 2, " * 800_000 + f"the answer is {gold}")
    assert time.perf_counter() - started < 2.0
    assert not result.valid and not result.correct and f"over the {MAX_RESPONSE_CHARS}" in result.reason
    assert len(result.response) < 1_100  # the report keeps its first characters, not 5 MB
    assert score_record(record, f"the answer is {gold}").correct  # an ordinary answer is still read
