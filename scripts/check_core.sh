#!/usr/bin/env bash
# The light core on a Python without Blender: a second virtual environment with Python 3.12 (or 3.13)
# installs `stim3d` (no extra: no bpy, no pyrender, numpy 2 allowed), then validates a preset by name, scores
# and exports a batch that the main venv (.venv, Python 3.11 with bpy) rendered, and refuses to render in one
# line. Called by .ci/run; runs alone too: `bash scripts/check_core.sh` (needs .venv from scripts/install.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
repo="$PWD"
main_venv="${MAIN_VENV:-$repo/.venv}"   # the rendering venv (scripts/install.sh)

# Another Python as a fresh machine has it: on PATH, from pyenv, or from uv (which downloads a build).
core_python=""
for candidate in python3.12 python3.13 "$HOME"/.pyenv/versions/3.12*/bin/python "$HOME"/.pyenv/versions/3.13*/bin/python; do
  # `-V`, not `command -v`: a pyenv shim exists even where its version is not selected
  if "$candidate" -V >/dev/null 2>&1; then core_python="$(command -v "$candidate")"; break; fi
done
if [ -z "$core_python" ] && command -v uv >/dev/null 2>&1; then
  uv python install 3.12 >/dev/null && core_python="$(uv python find 3.12)"
fi
if [ -z "$core_python" ]; then
  echo "check_core.sh: no Python 3.12 or 3.13 found (PATH, ~/.pyenv, uv); install one to prove the light core" >&2
  exit 1
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# Install from a copy of the sources (with the build backend and the fetch scripts whose pins it reads: the build
# checks the vendored jsPsych and HDRIs), so the build leaves no build/ or egg-info in the checkout.
tar --exclude=__pycache__ -cf - pyproject.toml README.md LICENSE MANIFEST.in build_backend scripts \
  stim3d scenes render scoring blender_addon \
  | (mkdir -p "$work/src" && cd "$work/src" && tar -xf -)
"$core_python" -m venv "$work/core"
core="$work/core/bin"
"$core/python" -m pip install -q --disable-pip-version-check "$work/src"
echo "check_core.sh: core installed on $("$core/python" -V) with numpy $("$core/python" -c 'import numpy; print(numpy.__version__)')"
if "$core/python" -c 'import bpy' 2>/dev/null; then echo "check_core.sh: bpy is importable in the core venv" >&2; exit 1; fi

# A batch rendered where Blender is (two families, Workbench, tiny images).
cat > "$work/tiny.yaml" <<'YAML'
seed: 3
render: {engine: workbench, width: 64, height: 48}
tasks:
  - family: shape_count
    count: 2
  - family: spatial_grid
    count: 1
YAML
PYTHONPATH="$repo" "$main_venv/bin/python" -m stim3d render "$work/tiny.yaml" --out "$work/batch" --quiet >/dev/null

cd "$work"   # presets by name from any directory, through the installed package
"$core/stim3d" validate demo
"$core/stim3d" presets --json | "$core/python" -c 'import json, sys; assert {p["name"] for p in json.load(sys.stdin)} >= {"demo", "dysm3d"}'
set +e; refused="$("$core/stim3d" render demo --out "$work/nope" 2>&1)"; code=$?; set -e
[ "$code" = 2 ] && [ "$(printf '%s\n' "$refused" | wc -l)" = 1 ] && [[ "$refused" == *"/src[blender]'"* ]] \
  || { echo "check_core.sh: render without bpy should say so in one line, exit 2; got $code: $refused" >&2; exit 1; }

# Score gold answers: every question must be correct.
"$core/python" - "$work/batch/records.jsonl" "$work/predictions.jsonl" <<'PY'
import json, sys
from stim3d.scoring.records import answer_text, read_records
with open(sys.argv[2], "w") as f:
    for r in read_records(sys.argv[1]):
        f.write(json.dumps({"question_id": r.question_id, "response": answer_text(r.answer.type, r.answer.gold)}) + "\n")
PY
"$core/stim3d" score "$work/batch" "$work/predictions.jsonl" --out "$work/scores.json" >/dev/null
"$core/python" -c '
import json, sys
report = json.load(open(sys.argv[1]))
overall = next(row for row in report["rows"] if row["key"] == "all")
assert report["records"] > 0 and overall["accuracy"] == 1.0, overall' "$work/scores.json"

# Exports: COCO in the core; the imagefolder names its extra until pyarrow is there, then writes parquet.
"$core/stim3d" export coco "$work/batch" --to "$work/coco" >/dev/null
set +e; refused="$("$core/stim3d" export imagefolder "$work/batch" --to "$work/hf" 2>&1)"; code=$?; set -e
[ "$code" = 2 ] && [[ "$refused" == *"/src[export]'"* ]] || { echo "check_core.sh: imagefolder without pyarrow: $code $refused" >&2; exit 1; }
"$core/python" -m pip install -q --disable-pip-version-check "$work/src[export]"
"$core/stim3d" export imagefolder "$work/batch" --to "$work/hf" >/dev/null
ls "$work"/hf/*/metadata.parquet >/dev/null
"$core/stim3d" gallery "$work/batch" >/dev/null
echo "check_core.sh: the light core validated, scored, exported and made a gallery on $("$core/python" -V)"
