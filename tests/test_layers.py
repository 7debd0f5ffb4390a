"""Every import points down: the layers of docs/architecture.md, read from the sources with ast.

From the ground up: the shared leaves (errors, version, install hints), the scoring core,
the scene model, rendering (items into files) and the Blender add-on over it, then the
layer users meet: eval, the human study above it, the public API, and the command on top.
A module may import its own layer and any layer below, never one above; imports made
inside functions count too (a lazy import is still an arrow).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "stim3d"
LAYERS = {  # stim3d.<first part> -> its floor
    "errors": 0, "version": 0, "install_hint": 0,
    "scoring": 1,
    "scenes": 2,
    "render": 3, "provenance": 3, "blender_addon": 3,
    "eval": 4,
    "study": 5,
    "api": 6,
    "cli": 7, "__main__": 7, "__init__": 7,
}


def layer_of(module: str) -> int:
    parts = module.split(".")
    return LAYERS[parts[1] if len(parts) > 1 else "__init__"]


def module_name(path: Path) -> str:
    return ".".join(path.relative_to(ROOT).with_suffix("").parts)


def imports(path: Path) -> set[str]:
    module = module_name(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                found.add(".".join([*base, node.module] if node.module else base))
            else:
                found.add(node.module or "")
    return {name for name in found if name == "stim3d" or name.startswith("stim3d.")}


SOURCES = sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)


def test_every_top_level_part_of_the_package_has_a_layer():
    parts = {p.relative_to(PACKAGE).parts[0].removesuffix(".py") for p in SOURCES}
    assert parts <= set(LAYERS), sorted(parts - set(LAYERS))


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_import_runs_back_up(path):
    own = layer_of(module_name(path))
    upward = sorted(name for name in imports(path) if layer_of(name) > own)
    assert not upward, f"{path.relative_to(ROOT)} (layer {own}) imports from a higher layer: {upward}"
