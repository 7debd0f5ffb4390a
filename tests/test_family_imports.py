"""No family imports another family's module nor another benchmark's; shared helpers carry their own revision.

Read from the sources with ast, so the rule holds for code that is never run in a test.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from stim3d.render.provenance import code_identity
from stim3d.scenes.families import FAMILIES
from stim3d.scenes.families import shared as shared_package
from stim3d.scenes.families.shared.uses import imported_modules, shared_modules

ROOT = Path(__file__).resolve().parents[1]
FAMILIES_DIR = ROOT / "stim3d" / "scenes" / "families"
PACKAGE = "stim3d.scenes.families"


def defines_a_family(path: Path) -> bool:
    """Whether the module assigns a `Family(...)` at its top level (FAMILY = Family(...))."""
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            func = node.value.func
            if isinstance(func, ast.Name) and func.id == "Family":
                return True
    return False


def module_of(path: Path) -> str:
    return ".".join([PACKAGE, *path.relative_to(FAMILIES_DIR).with_suffix("").parts])


FAMILY_MODULES = {module_of(p) for p in FAMILIES_DIR.rglob("*.py") if defines_a_family(p)}
BENCHMARKS = ("dysm", "oddgrid", "rose", "ava")  # the folders families are grouped in, one per benchmark served


def imports_of(path: Path) -> set[str]:
    relative = path.relative_to(ROOT).with_suffix("")
    module = ".".join(["stim3d", *relative.parts])
    if path.name == "__init__.py":
        return imported_modules(path.read_text(), module.removesuffix(".__init__"), is_package=True)
    return imported_modules(path.read_text(), module)


def test_every_registered_family_module_is_found():
    assert {f.compose.__module__ for f in FAMILIES.values()} == FAMILY_MODULES
    assert len(FAMILY_MODULES) >= 12


@pytest.mark.parametrize("path", sorted(FAMILIES_DIR.rglob("*.py")), ids=lambda p: str(p.relative_to(FAMILIES_DIR)))
def test_no_module_of_the_families_imports_a_family_module(path):
    if path == FAMILIES_DIR / "__init__.py":
        return  # the registry loads them all through entry points, not imports
    own = module_of(path)
    leaked = sorted((imports_of(path) & FAMILY_MODULES) - {own})
    assert not leaked, f"{path.relative_to(ROOT)} imports family module(s) {leaked}: move the helper to scenes/families/shared/"


def test_every_family_lives_in_the_folder_of_the_benchmark_it_serves():
    assert {module.split(".")[3] for module in FAMILY_MODULES} == set(BENCHMARKS)
    assert {p.name for p in FAMILIES_DIR.glob("*.py")} == {"__init__.py", "base.py"}


@pytest.mark.parametrize("path", sorted(p for b in BENCHMARKS for p in (FAMILIES_DIR / b).glob("*.py")),
                         ids=lambda p: str(p.relative_to(FAMILIES_DIR)))
def test_a_benchmark_s_modules_import_no_other_benchmark_s_module(path):
    mine = path.parent.name
    others = {m for m in imports_of(path) for b in BENCHMARKS if b != mine and m.startswith(f"{PACKAGE}.{b}")}
    assert not others, f"{path.relative_to(ROOT)} imports {sorted(others)}: move what both use to scenes/families/shared/"


@pytest.mark.parametrize("path", sorted((FAMILIES_DIR / "shared").glob("*.py")), ids=lambda p: p.name)
def test_shared_modules_import_no_benchmark_s_module(path):
    inside = {m for m in imports_of(path) if m.startswith(f"{PACKAGE}.")}
    allowed = {f"{PACKAGE}.base"} | {m for m in inside if m.startswith(f"{PACKAGE}.shared")}
    assert inside <= allowed, f"{path.name} imports {sorted(inside - allowed)}"


def test_a_family_s_shared_modules_are_read_from_its_imports_through_its_helpers():
    assert shared_modules(FAMILIES["shape_count"].compose.__module__) == ("answers", "counting", "stage")
    assert shared_modules(FAMILIES["ava_color"].compose.__module__) == ("answers", "stage")  # stage through ava_common
    assert shared_modules(FAMILIES["form_constancy"].compose.__module__) == ("rotation", "stage")
    assert shared_modules(FAMILIES["odd_grid"].compose.__module__) == (
        "counting", "font", "grid_layout", "rotation", "stage")  # font through oddgrid/grid_labels.py


def test_a_shared_module_s_revision_reaches_only_the_keys_of_the_families_that_use_it(monkeypatch):
    # At revision 1 (the split, byte-identical) the key is what it was before shared modules existed.
    assert code_identity({"form_constancy"}, with_commit=False).keys() == {"stim3d_version", "generator_revisions"}
    monkeypatch.setitem(shared_package.REVISIONS, "rotation", 2)
    assert code_identity({"form_constancy"}, with_commit=False)["shared_revisions"] == {"rotation": 2}
    assert code_identity({"odd_grid", "letters"}, with_commit=False)["shared_revisions"] == {"rotation": 2}
    assert "shared_revisions" not in code_identity({"letters", "shape_count"}, with_commit=False)
    monkeypatch.setitem(shared_package.REVISIONS, "answers", 3)
    assert code_identity({"ava_color", "letters"}, with_commit=False)["shared_revisions"] == {"answers": 3}


def test_the_renderer_s_markers_import_no_family_module():
    """Rendered measures come through `Family.rendered_difficulty`; render/markers.py only asks the registry."""
    imported = imports_of(ROOT / "stim3d" / "render" / "markers.py")
    modules = {module_of(p) for p in FAMILIES_DIR.rglob("*.py") if p.name != "__init__.py"}
    assert not imported & modules, sorted(imported & modules)
    assert PACKAGE in imported  # the registry, to find the item's family
