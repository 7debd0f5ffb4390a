#!/usr/bin/env bash
# One-step set-up on a fresh Debian (bookworm) machine with Python 3.11:
# the system libraries bpy and pyrender need, then a virtual environment in .venv
# with stim3d installed (editable) with its `blender` extra (bpy: rendering; the core alone is
# `pip install -e .`, docs/index.md). `--test` adds the test and docs extras (CI lints, type-checks,
# builds the docs site); `--ray` the Ray extra.
set -euo pipefail
cd "$(dirname "$0")/.."

extras="blender,export"
for arg in "$@"; do
  case "$arg" in
    --test) extras="${extras:+$extras,}test,docs"; with_browser=1 ;;
    --ray) extras="${extras:+$extras,}ray" ;;
    *) echo "install.sh: unknown option '$arg' (allowed: --test, --ray)" >&2; exit 2 ;;
  esac
done

# Libraries `import bpy` needs on a bare Debian, plus EGL (Workbench, pyrender) and OSMesa.
APT_PACKAGES="libx11-6 libxrender1 libxfixes3 libxi6 libxkbcommon0 libsm6 libgl1 libegl1 libegl-mesa0 libosmesa6"
# npm fetches jsPsych for `stim3d study build` (scripts/fetch_jspsych.sh) and photoreal's pmndrs HDRIs
# (scripts/fetch_hdris.sh); Debian's only when none is installed.
command -v npm >/dev/null 2>&1 || APT_PACKAGES="$APT_PACKAGES nodejs npm"
# The gallery test (tests/test_gallery.py) opens the page in headless Chromium; only the tests need it.
if [ "${with_browser:-0}" = 1 ]; then APT_PACKAGES="$APT_PACKAGES chromium"; fi
missing=""
for p in $APT_PACKAGES; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "${missing// /}" ]; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  echo "install.sh: installing system packages:$missing"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi

PYTHON="${PYTHON:-python3.11}"
command -v "$PYTHON" >/dev/null 2>&1 || PYTHON=python3
"$PYTHON" -c 'import sys; assert sys.version_info[:2] == (3, 11), f"stim3d needs Python 3.11 (bpy 5.0.1), found {sys.version.split()[0]}"'
[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
# jsPsych at pinned, integrity-checked versions into stim3d/study/vendor/jspsych/ before the install, so the
# study's page is complete in an editable install and in a wheel built from this checkout.
bash scripts/fetch_jspsych.sh
# photoreal's 18 pmndrs HDRIs (stim3d/render/hdri/, package data like jsPsych), pinned and integrity-checked.
bash scripts/fetch_hdris.sh
.venv/bin/python -m pip install -q -e ".[$extras]"
echo "install.sh: ready: .venv/bin/stim3d ($(.venv/bin/python -c 'import bpy; print("Blender", bpy.app.version_string)' 2>/dev/null | tail -1))"
