"""Add-on: enabled in the next Blender session after installing (issue 15.11), long questions wrapped."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_long_questions_wrap_to_the_panel_width():
    pytest.importorskip("bpy")
    from stim3d.blender_addon.display import wrap_for_panel

    question = ("The shapes stand in a grid of 4 rows and 5 columns; rows are numbered from the top of the image, "
                "columns from the left. Starting from the cube at (row 2, column 1), how many tori are there to "
                "the right of it in the same row?")
    lines = wrap_for_panel(question, 300, 1.0)
    assert len(lines) > 3 and all(len(line) <= (300 - 40) / 7 for line in lines)
    assert " ".join(lines) == question  # nothing cut off
    assert len(wrap_for_panel(question, 300, 2.0)) > len(lines)  # a larger UI scale fits fewer characters
    assert wrap_for_panel("How many cubes?", 800) == ["How many cubes?"]


@pytest.mark.bpy
def test_install_script_keeps_the_extension_enabled_in_a_new_session(tmp_path):
    from stim3d.cli import main

    assert main(["addon", "build", "--out", str(tmp_path / "dist"), "--without-dependencies"]) == 0
    (zip_path,) = (tmp_path / "dist").glob("stim3d-*.zip")
    env = {**os.environ, "BLENDER_USER_RESOURCES": str(tmp_path / "blender")}
    check = ("import bpy, json; bpy.ops.wm.read_userpref(); "  # desktop Blender reads them at start-up
             "print('RESULT ' + json.dumps('bl_ext.user_default.stim3d' in bpy.context.preferences.addons))")

    def enabled_in_new_session() -> bool:
        result = subprocess.run([sys.executable, "-c", check], env=env, capture_output=True, text=True, timeout=300)
        return json.loads(next(line for line in result.stdout.splitlines() if line.startswith("RESULT "))[7:])

    # enable_on_install alone: enabled now, gone in the next session (what the first user hit).
    plain = (f"import bpy; bpy.ops.extensions.package_install_files(filepath={str(zip_path)!r}, "
             "repo='user_default', enable_on_install=True)")
    subprocess.run([sys.executable, "-c", plain], env=env, capture_output=True, timeout=300, check=True)
    assert not enabled_in_new_session()
    script = ROOT / "stim3d" / "blender_addon" / "install_persistent.py"
    run = (f"import runpy, sys; sys.argv = [{str(script)!r}, '--', {str(zip_path)!r}]; "
           f"runpy.run_path({str(script)!r}, run_name='__main__')")
    result = subprocess.run([sys.executable, "-c", run], env=env, capture_output=True, text=True, timeout=300)
    assert "enabled and saved in the preferences" in result.stdout, result.stderr
    assert enabled_in_new_session()
