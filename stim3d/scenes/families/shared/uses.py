"""Which modules a family's module imports, read from its source (ast): who uses which shared module.

One reader for two rules: a family's resume key includes the revisions of the shared
modules it uses (`shared_modules`, scenes/families/shared/__init__.py), and no family
module imports another family's module (tests/test_family_imports.py). Reading the
imports instead of declaring them means the list cannot go stale.
"""

from __future__ import annotations

import ast
import functools
import importlib.util
from pathlib import Path

FAMILIES_PACKAGE = "stim3d.scenes.families"
SHARED_PACKAGE = f"{FAMILIES_PACKAGE}.shared"


def imported_modules(source: str, module: str, is_package: bool = False) -> set[str]:
    """Absolute names of the modules `module`'s source imports (`from X import y` also names X.y: it may be a module)."""
    package = module if is_package else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")
            if node.level:
                base = base[: len(base) - (node.level - 1)]
                name = ".".join([*base, node.module] if node.module else base)
            else:
                name = node.module or ""
            found.add(name)
            found.update(f"{name}.{alias.name}" for alias in node.names)
    return found


def _source(module: str) -> tuple[str, bool] | None:
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.origin or not spec.origin.endswith(".py"):
        return None
    return Path(spec.origin).read_text(encoding="utf-8"), spec.submodule_search_locations is not None


@functools.cache
def shared_modules(module: str) -> tuple[str, ...]:
    """Short names of the shared modules `module` uses, directly or through the family helpers it imports."""
    seen, todo, used = set(), [module], set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        try:
            found = _source(name)
        except (ImportError, ValueError):  # `from X import name` where name is not a module
            continue
        if found is None:
            continue
        for imported in imported_modules(found[0], name, found[1]):
            if imported.startswith(f"{SHARED_PACKAGE}.") and imported.count(".") == SHARED_PACKAGE.count(".") + 1:
                used.add(imported.rsplit(".", 1)[1])
            if imported.startswith(f"{FAMILIES_PACKAGE}.") and imported not in seen:
                todo.append(imported)
    return tuple(sorted(used))
