"""Every import points down: the layers of docs/architecture.md, read from the sources with ast.

Inside render/ the same holds by floor (RENDER_FLOORS: the leaves, the backends, the batch, the sweeps and
packaging), rendering never imports the Blender add-on (its one user), and a module named in a string passed
to `importlib.import_module` or `__import__` counts as an import. Each rule is shown to catch a planted import.

From the ground up: the shared leaves (errors, version, install hints), the scoring core,
the scene model, rendering (items into files) and the Blender add-on over it, then the
layer users meet: the readers of finished batches (views, export) and eval, the human study
above them, the public API, and the command on top.
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
    "errors": 0, "version": 0, "install_hint": 0, "files": 0,
    "scoring": 1,
    "scenes": 2,
    "render": 3, "provenance": 3, "blender_addon": 3,
    "eval": 4, "views": 4, "export": 4,
    "study": 5,
    "api": 6,
    "cli": 7, "__main__": 7, "__init__": 7,
}


RENDER_FLOORS = {  # stim3d.render.<part> -> its floor inside render/
    "settings": 0, "markers": 0, "provenance": 0, "camera_pipeline": 0, "object_masks": 0, "__init__": 0,
    "backends": 1,
    "batch": 2,
    "sweep": 3,
}
LOADERS = {"import_module", "__import__"}  # calls whose constant string argument names a module they import


def layer_of(module: str) -> int:
    parts = module.split(".")
    return LAYERS[parts[1] if len(parts) > 1 else "__init__"]


def module_name(path: Path) -> str:
    return ".".join(path.relative_to(ROOT).with_suffix("").parts)


def imports(path: Path, module: str | None = None) -> set[str]:
    """The stim3d modules a file imports, read as `module` (default: the file's own module name)."""
    module = module or module_name(path)
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
        elif isinstance(node, ast.Call) and _called(node) in LOADERS:
            found.update(arg.value for arg in node.args[:1] if isinstance(arg, ast.Constant) and isinstance(arg.value, str))
    return {name for name in found if name == "stim3d" or name.startswith("stim3d.")}


def _called(call: ast.Call) -> str:
    """The called name: `f` of `f(...)` and of `module.f(...)`."""
    return call.func.attr if isinstance(call.func, ast.Attribute) else call.func.id if isinstance(call.func, ast.Name) else ""


def render_floor(module: str) -> int | None:
    """A module's floor inside render/ (None outside it)."""
    parts = module.split(".")
    if parts[:2] != ["stim3d", "render"]:
        return None
    return RENDER_FLOORS[parts[2] if len(parts) > 2 else "__init__"]


def violations(module: str, imported: set[str]) -> list[str]:
    """Every rule an import of `module` breaks: a higher layer, a higher floor inside render/, the add-on from
    render/."""
    found = [f"{name}: a higher layer" for name in sorted(imported) if layer_of(name) > layer_of(module)]
    own = render_floor(module)
    if own is not None:
        found += [f"{name}: a higher floor of render/" for name in sorted(imported)
                  if (floor := render_floor(name)) is not None and floor > own]
        found += [f"{name}: rendering imports the add-on" for name in sorted(imported)
                  if name.startswith("stim3d.blender_addon")]
    return found


SOURCES = sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)


def test_every_top_level_part_of_the_package_has_a_layer():
    parts = {p.relative_to(PACKAGE).parts[0].removesuffix(".py") for p in SOURCES}
    assert parts <= set(LAYERS), sorted(parts - set(LAYERS))


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_import_runs_back_up(path):
    broken = violations(module_name(path), imports(path))
    assert not broken, f"{path.relative_to(ROOT)}: {broken}"


def test_every_part_of_render_has_a_floor():
    parts = {p.relative_to(PACKAGE / "render").parts[0].removesuffix(".py") for p in (PACKAGE / "render").rglob("*.py")}
    assert parts <= set(RENDER_FLOORS), sorted(parts - set(RENDER_FLOORS))


@pytest.mark.parametrize("module, planted, rule", [
    ("stim3d.scenes.looks", "from stim3d.render.batch import produce", "a higher layer"),
    ("stim3d.render.markers", "from stim3d.render.batch.driver import render_batch", "a higher floor of render/"),
    ("stim3d.render.backends.blender", "import stim3d.render.sweep.run", "a higher floor of render/"),
    ("stim3d.render.batch.produce", "from stim3d.blender_addon import session", "rendering imports the add-on"),
    ("stim3d.scoring.report", "importlib.import_module('stim3d.eval.run')", "a higher layer"),
    ("stim3d.render.settings", "def later():\n    __import__('stim3d.render.batch.plan')", "a higher floor of render/"),
])
def test_each_rule_catches_a_planted_import(tmp_path, module, planted, rule):
    """A module written with one forbidden import (plain, lazy, or through import_module) is caught by its rule."""
    path = tmp_path / "planted.py"
    path.write_text(f"import importlib\n{planted}\n")
    names = imports(path, module)
    assert any(rule in found for found in violations(module, names)), (planted, names)
