"""The study page's JavaScript house rules, read from stim3d/study/assets/js/: one dialect (ES2015+: const and let,
arrow functions, template strings; no `var`, no `function` expressions), one fnv1a32, files under 400 lines named for
what they do, and index.html and the widgets' harness loading every file they need in the order the files use each
other. Each file also parses (`node --check`)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
JS = ROOT / "stim3d" / "study" / "assets" / "js"
SCRIPTS = sorted(JS.glob("*.js"))
MAX_LINES = 400
ON_DEMAND = {"staircase.js", "staircase_flow.js"}  # loaded by flow.js when study.json has a staircase
WIDGET_FILES = ["hash.js", "responses.js", "stage.js", "answer_widgets.js", "widgets.js"]  # the plugin and its parts


def code_of(path: Path) -> str:
    """The file without its comments and string contents (a rule is about code, not words)."""
    text = path.read_text(encoding="utf-8")
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    text = re.sub(r"(?<![:\\])//[^\n]*", "", text)
    return re.sub(r"`(?:\\.|[^`\\])*`|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'", '""', text)


@pytest.mark.parametrize("path", SCRIPTS, ids=lambda p: p.name)
def test_each_script_is_one_dialect_and_short(path):
    code = code_of(path)
    assert not re.search(r"\bvar\s", code), f"{path.name}: `var` (use const or let)"
    assert not re.search(r"\bfunction\b", code), f"{path.name}: a `function` (use an arrow function or a method)"
    assert not re.search(r"\.prototype\.|\barguments\b", code), f"{path.name}: ES5 idioms"
    assert '"use strict"' in path.read_text(encoding="utf-8"), path.name
    lines = len(path.read_text(encoding="utf-8").splitlines())
    assert lines < MAX_LINES, f"{path.name}: {lines} lines (split it by what it does)"


def test_every_script_parses():
    node = shutil.which("node")
    if node is None:
        pytest.fail("node is missing: scripts/install.sh installs nodejs")
    for path in SCRIPTS:
        result = subprocess.run([node, "--check", str(path)], capture_output=True, text=True, timeout=60)
        assert result.returncode == 0, (path.name, result.stderr)


def test_fnv1a32_is_written_once_and_used_from_there():
    defined = [p.name for p in SCRIPTS if re.search(r"\bfnv1a32\s*=\s*\(|function\s+fnv1a32\b", code_of(p))]
    assert defined == ["hash.js"]
    users = [p.name for p in SCRIPTS if "fnv1a32" in code_of(p) and p.name != "hash.js"]
    assert sorted(users) == ["plan.js", "stage.js", "staircase.js"]
    for name in users:
        assert "Stim3dHash" in (JS / name).read_text(encoding="utf-8"), name
    assert 0x811C9DC5 == int(re.search(r"0x811c9dc5", (JS / "hash.js").read_text())[0], 16)


def script_sources(page: Path, prefix: str) -> list[str]:
    return [src.removeprefix(prefix) for src in re.findall(r'<script src="([^"]+)"', page.read_text(encoding="utf-8"))
            if src.startswith(prefix)]


def test_the_page_loads_every_script_in_the_order_they_use_each_other():
    loaded = script_sources(ROOT / "stim3d" / "study" / "assets" / "index.html", "js/")
    assert sorted(loaded) == sorted(p.name for p in SCRIPTS if p.name not in ON_DEMAND)
    for path in SCRIPTS:  # a file that reads another's global (window.Stim3dX) loads after it
        for needed in re.findall(r"window\.(Stim3d[A-Za-z]+)\b", code_of(path)):
            owner = next(p.name for p in SCRIPTS if re.search(rf"window\.{needed}\s*=|root\.{needed}\s*=",
                                                               p.read_text(encoding="utf-8")))
            if owner != path.name and path.name not in ON_DEMAND and owner not in ON_DEMAND:
                assert loaded.index(owner) < loaded.index(path.name), (path.name, needed, owner)
    harness = script_sources(ROOT / "tests" / "fixtures" / "study_widgets" / "harness.html",
                             "../../../stim3d/study/assets/js/")
    assert harness == WIDGET_FILES
    assert [name for name in loaded if name in WIDGET_FILES] == WIDGET_FILES
