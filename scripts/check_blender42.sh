#!/usr/bin/env bash
# Check the renderer and the Blender add-on on Blender 4.2 (the oldest the add-on supports), by hand.
# CI installs only bpy 5.0.1; this builds a throwaway virtualenv with bpy 4.2.0 (Blender as a Python module),
# installs stim3d into it (editable, no dependency resolution: bpy 4.2 pins its own numpy), and runs the
# Blender backend and add-on tests there: object-index pass against the ray cast, depth pass, row order,
# Workbench, and the add-on's install / Generate / Open / Re-validate / Render and Save flow.
#   scripts/check_blender42.sh [VENV_DIR]     (default /tmp/venv42; reused if it already has bpy 4.2.0)
# Needs python3.11 and the system libraries scripts/install.sh installs. Exit code: pytest's (0 = all passed).
set -euo pipefail
cd "$(dirname "$0")/.."
venv="${1:-/tmp/venv42}"

if ! "$venv/bin/python" -c 'import bpy, sys; sys.exit(bpy.app.version != (4, 2, 0))' 2>/dev/null; then
  python3.11 -m venv "$venv"
  "$venv/bin/pip" install -q "bpy==4.2.0" "numpy<2" trimesh embreex python-fcl pydantic pyyaml pillow OpenEXR pytest
fi
"$venv/bin/pip" install -q --no-deps -e .
"$venv/bin/python" -c 'import bpy; print("bpy", bpy.app.version_string)' 2>/dev/null
# -rs lists skipped tests: a skip here means something was not checked on 4.2.
# os._exit: bpy 4.2.0 as a module segfaults while the interpreter shuts down once any operator class has been
# registered (a five-line operator does it too; 5.0.1 does not), after every test has passed; skipping
# that finalization keeps the exit code pytest's.
exec "$venv/bin/python" -c '
import os, sys, pytest
code = pytest.main(["-q", "-rs", "-p", "no:cacheprovider",
                    "tests/test_blender_backend.py", "tests/test_addon.py", "tests/test_dysm3d_render.py"])
sys.stdout.flush(); sys.stderr.flush()
os._exit(int(code))'
