"""Every repository path the docs and the code's strings name exists: a moved module leaves no stale pointer.

Docstrings, comments, messages and `--help` texts cite files as `render/backends/blender.py`;
docs/*.md and README.md do the same. A path starting at one of the repository's top folders
is resolved against the checkout; placeholders (`bench/results/NAME.json`, `{name}` fields,
`*` patterns) are skipped.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TOPS = ("scenes", "render", "scoring", "blender_addon", "stim3d", "tests", "docs", "bench", "scripts", "docker",
        "build_backend")
PATH = re.compile(r"(?<![\w./-])((?:" + "|".join(TOPS) + r")/[\w./-]*\w)")
PLACEHOLDER = re.compile(r"(^|/)[A-Z][A-Z_]*(\.|/|$)")


LINKS = ("scenes", "render", "scoring", "blender_addon")  # top-level links into stim3d/ (docs/architecture.md)


def python_files() -> list[Path]:
    return [p for top in TOPS if top not in LINKS and (ROOT / top).is_dir() for p in (ROOT / top).rglob("*.py")]


def missing_paths(text: str) -> set[str]:
    named = {m.rstrip(".") for m in PATH.findall(text)}
    return {p for p in named if not {"*", "{"} & set(p) and not PLACEHOLDER.search(p) and not (ROOT / p).exists()}


def test_the_path_finder_sees_a_stale_path_and_skips_placeholders():
    stale = "/".join(("render", "blender.py"))  # built, so that this file names no stale path itself
    assert missing_paths(f"see {stale} and render/backends/blender.py.") == {stale}
    assert missing_paths("bench/results/NAME.json, bench/results/{name}.json, scenes/families/*.py") == set()
    assert missing_paths("`stim3d/files.py`, scenes/families/shared/") == set()


def test_every_path_named_in_the_code_exists():
    stale = sorted(f"{path.relative_to(ROOT)}: {p}" for path in python_files()
                   for p in missing_paths(path.read_text(encoding="utf-8")))
    assert not stale, "strings name paths that do not exist:\n" + "\n".join(stale)


def test_every_path_named_in_the_docs_exists():
    pages = [*sorted((ROOT / "docs").rglob("*.md")), ROOT / "README.md"]
    stale = sorted(f"{page.relative_to(ROOT)}: {p}" for page in pages for p in missing_paths(page.read_text()))
    assert not stale, "pages name paths that do not exist:\n" + "\n".join(stale)


def architecture_map() -> set[str]:
    """The module paths docs/architecture.md's map lists, rebuilt from its indentation (two spaces a level)."""
    text = (ROOT / "docs" / "architecture.md").read_text()
    block = text.split("## The map", 1)[1].split("```", 2)[1]
    listed, folders = set(), []
    for line in block.splitlines():
        if not line.strip():
            continue
        depth = (len(line) - len(line.lstrip(" "))) // 2
        name = line.split()[0]
        folders = folders[:depth]
        if name.endswith("/"):
            folders.append(name.rstrip("/"))
        elif name.endswith(".py"):
            listed.add("/".join([*folders, name]))
    return listed


def test_the_architecture_map_lists_every_module():
    modules = {str(p.relative_to(ROOT)) for p in (ROOT / "stim3d").rglob("*.py") if "__pycache__" not in p.parts}
    listed = architecture_map()
    assert len(listed) > 100 and "stim3d/scenes/families/shared/stage.py" in listed  # the map was read, nesting and all
    assert not listed - modules, f"the map lists modules that do not exist: {sorted(listed - modules)}"
    unlisted = sorted(m for m in modules - listed if not m.endswith("__init__.py"))
    assert not unlisted, f"docs/architecture.md's map does not list: {unlisted}"
