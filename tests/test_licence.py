"""Licence: the repository, the package metadata and the Blender manifest all say GPL-3.0-or-later."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_licence_text_ships_and_the_metadata_names_it():
    text = (ROOT / "LICENSE").read_text()
    assert "GNU GENERAL PUBLIC LICENSE" in text and "Version 3, 29 June 2007" in text
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["license"] == "GPL-3.0-or-later" and project["license-files"] == ["LICENSE"]
    manifest = tomllib.loads((ROOT / "stim3d" / "blender_addon" / "blender_manifest.toml").read_text())
    assert manifest["license"] == ["SPDX:GPL-3.0-or-later"]
