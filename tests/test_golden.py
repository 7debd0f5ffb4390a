"""Golden outputs: each family's composed item.json, for fixed params and seed, is pinned by its sha256.

Composition is deterministic and needs no renderer, so a change in what a family
makes (its own code, or shared code under it: placement, visibility, colours,
cameras) shows up here as a changed hash. That is on purpose: a change to a
family's output must, in ONE commit,

1. bump the family's generator revision (`FAMILY = Family(..., revision=N + 1)`;
   it is recorded in every item's provenance and in the resume key, so batch folders
   made by the old revision are refused instead of being mixed with new items), and
2. update the family's row below to the new revision and hash.

The failure message of each test gives the exact row to write. Adding a family is
adding one row (the test for unlisted families prints it). The pinned bytes are
`Item.to_json()` of `make_item` (item.json before rendering adds provenance).
"""

from __future__ import annotations

import hashlib

import pytest

from stim3d.scenes.families import FAMILIES
from stim3d.scenes.families.base import Frame
from stim3d.scenes.items import make_item

FRAME = Frame(320, 240)
ENTROPY = [2026, 0, 0]  # batch seed 2026, task 0, item 0

# family: (params, generator revision, sha256 of the composed item.json)
GOLDEN: dict[str, tuple[dict, int, str]] = {
    "ava_color": ({}, 1, "7b2ba0d9a63c310ad049e7e869a3deec2ee6d6ff94847dacd87c9ecbf2580243"),
    "ava_count": ({}, 1, "73bd86e1095c36f7f4e723cef76b0671daf07e9e0caadd0d49f55e7006d49d94"),
    "ava_depth_absolute": ({}, 1, "88178ec8b76be154b6b9aa318f195b0909a81085e299d79e3f1526e2d38eb790"),
    "ava_depth_relative": ({}, 1, "94405639026530e2ec21bbbd44445aabcc06b48e6c95942f54382f235b8d9572"),
    "ava_localize": ({}, 1, "1aef7affd26e57277e282b38c3781c8b8c09951d2367365a422c8b5fb67d6390"),
    "ava_ocr": ({}, 2, "1f53164207b87c0975a545b31c083fa854c041365e908ba5eef982a9a33289bd"),
    "ava_orientation": ({}, 2, "99a27528b763cd803c183c8d5e5e85d23553f1e8cce9a69ac2b12bf93410a07d"),
    "ava_object": ({}, 3, "c3548b36f8fe0e85d7ec96125c0911acff1794c125ea7d37b67d9680f9077d2a"),
    "ava_texture": ({}, 2, "fa3b10f42a3c7c913cd2ab8b40917d1b082a3930b93d65e28b20b0c18d37668b"),
    "ava_spatial": ({}, 1, "5bca9b184a6d180d4b04df5327ea372f338c6a98cd78d06c0e6dbab495c17428"),
    "form_constancy": ({}, 1, "4587ba1133a282f39810edaf9c9a089f4389a843b30a36ca2b437eea8a70a97c"),
    "letters": ({}, 2, "1042ec46b09ae43b188f08edb48096cb307058c3870c288e36ad26240ff017dc"),
    "odd_grid": ({"rows": 5, "cols": 5}, 8, "c5391b4bceddd8666cf473aee540e3e8474d79998a10bf21cd9847bcfc8e5414"),
    "rose_grid": ({}, 5, "acfb3d0d80380f72016f9480c3fb193dd82fc2ac6e132e44894698bddda37a94"),
    "shape_color_count": ({}, 2, "ca89b559b10f501b4e13c50d3ac94e6bf229be41d89c922162495c190e56f6b6"),
    "shape_count": ({}, 2, "37f786c5abfb0d0a4c3576dc58ba4ebf210c9130261aad8bf42a8e303fea321b"),
    "spatial_grid": ({}, 1, "0135516f9dc88c3fb904cb31d3f6e9bab3d0f991f472addb29d1823393edb3e0"),
}


def golden_hash(family: str, params: dict) -> str:
    item = make_item(family, params, list(ENTROPY), f"{family}-golden", FRAME)
    return hashlib.sha256(item.to_json().encode()).hexdigest()


def row(family: str, params: dict, revision: int, digest: str) -> str:
    return f'    "{family}": ({params!r}, {revision}, "{digest}"),'


def test_every_registered_family_has_a_golden_row():
    missing = sorted(set(FAMILIES) - set(GOLDEN))
    rows = "\n".join(row(name, {}, FAMILIES[name].revision, golden_hash(name, {})) for name in missing)
    assert not missing, f"families without a golden row; add to GOLDEN in tests/test_golden.py:\n{rows}"


@pytest.mark.parametrize("family", sorted(GOLDEN))
def test_composed_item_matches_its_pin(family):
    params, pinned_revision, pinned = GOLDEN[family]
    if family not in FAMILIES:  # a plug-in not installed here; a family that is gone should lose its row
        pytest.skip(f"{family} is not a registered family (if it was removed, remove its row from GOLDEN)")
    revision = FAMILIES[family].revision
    digest = golden_hash(family, params)
    new_row = row(family, params, revision, digest)
    if digest != pinned and revision == pinned_revision:
        pytest.fail(
            f"{family}'s composed item changed for the same params and seed, but its generator revision is still "
            f"{revision}. If the change is on purpose, in one commit: set revision={revision + 1} in its "
            f"FAMILY = Family(...) and replace its row in tests/test_golden.py with\n"
            f"{row(family, params, revision + 1, digest)}\n"
            f"If it is not on purpose, something it builds on (placement, visibility, colours, camera) changed its output."
        )
    if digest != pinned:
        pytest.fail(f"{family} is at generator revision {revision}: update its row in tests/test_golden.py to\n{new_row}")
    assert revision == pinned_revision, (
        f"{family}'s revision moved to {revision} but its composed item did not change: "
        f"set its row's revision back or to match:\n{new_row}"
    )
