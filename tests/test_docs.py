"""The docs show what the code prints: generated blocks are checked against a fresh run of their generator.

`python -m bench.docs` writes the blocks between `<!-- regen:NAME -->` markers; these
tests rerun the cheap generators (no Blender) and fail when a page has drifted:
the scoring walk-through (on a composed batch, which scores exactly like the rendered
one), and every Performance figure, which must come from bench/results/*.json.
"""

from __future__ import annotations

import re

import pytest

from bench import docs_perf, oddgrid_baselines
from bench.docs import BLOCK, DOCS, ROOT, blocks, pages, replace_block
from bench.docs_examples import run_scoring_example, scoring_block

HOW = "regenerate with `.venv/bin/python -m bench.docs --only {step}` and commit the pages"


def _all_blocks() -> dict[tuple[str, str], str]:
    return {(page.name, name): body for page in pages() for name, body in blocks(page.read_text()).items()}


def test_every_generated_block_is_known():
    known = {*docs_perf.BLOCKS, "scoring-example", "demo-summary", "sweep-caption", "family-pictures",
             "gallery-caption", "oddgrid-baselines", "look-sweep-caption", "study-widgets"}
    unknown = {key for key in _all_blocks() if key[1] not in known}
    assert not unknown, f"blocks no step of bench/docs.py writes: {sorted(unknown)}"


def test_markers_are_paired():
    for page in pages():
        text = page.read_text()
        opened = re.findall(r"<!-- regen:([a-z0-9-]+) -->", text)
        assert len(opened) == len(list(BLOCK.finditer(text))), f"{page.name}: a regen marker without its end marker"


@pytest.mark.parametrize("name", sorted(docs_perf.BLOCKS))
def test_performance_figures_come_from_the_result_files(name):
    expected = docs_perf.BLOCKS[name]()
    shown = {page: body for (page, block), body in _all_blocks().items() if block == name}
    assert shown, f"no page shows {name}"
    for page, body in shown.items():
        assert body == expected, f"docs/{page} block {name} differs from bench/results: {HOW.format(step='perf')}"


def test_scoring_walk_through_prints_what_the_page_shows():
    page = DOCS / "scoring.md"
    shown = blocks(page.read_text())["scoring-example"]
    assert shown == scoring_block(run_scoring_example(render=False)).rstrip("\n"), (
        f"docs/scoring.md's scoring example no longer matches what the code prints: {HOW.format(step='scoring')}")


def test_oddgrid_baselines_are_what_the_preset_gives():
    shown = blocks((DOCS / "oddgrid.md").read_text())["oddgrid-baselines"]
    assert shown == oddgrid_baselines.table().rstrip("\n"), HOW.format(step="oddgrid")


def test_readme_keeps_the_two_setup_commands_and_links_into_the_docs():
    readme = (ROOT / "README.md").read_text()
    assert "bash scripts/install.sh && .venv/bin/stim3d render scenes/presets/demo.yaml --out out" in readme
    assert "bash scripts/install.sh --test && .venv/bin/python -m pytest -q -ra" in readme
    for link in re.findall(r"\]\((docs/[^)#]+)", readme):
        assert (ROOT / link).exists(), f"README links to {link}, which does not exist"


def test_replace_block_rewrites_only_its_block(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("a\n<!-- regen:x -->\nold\n<!-- /regen:x -->\nb\n<!-- regen:y -->\n<!-- /regen:y -->\n")
    assert replace_block(page, "y", "new y")
    assert page.read_text() == "a\n<!-- regen:x -->\nold\n<!-- /regen:x -->\nb\n<!-- regen:y -->\nnew y\n<!-- /regen:y -->\n"
    assert not replace_block(page, "y", "new y")
