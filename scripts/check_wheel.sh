#!/usr/bin/env bash
# stim3d as a user has it: a wheel in a fresh virtual environment, used from a folder with no checkout in sight. Builds
# the wheel from a clean clone of the checkout's HEAD (`git clone` into a temporary folder, so nothing git-ignored comes
# along: no vendored jsPsych or HDRIs, no build/ or egg-info), offline for pip with the standard tools (`pip wheel
# --no-build-isolation`: pyproject's build backend, build_backend/stim3d_build.py, over the test extra's setuptools);
# the backend fetches jsPsych and photoreal's HDRIs there with scripts/fetch_jspsych.sh and scripts/fetch_hdris.sh (npm
# and the npm registry: the one network access), as a release build does. Installs the wheel with --no-deps into a fresh
# venv whose dependencies (bpy, numpy, datasets...) come from the main venv through a .pth file placed after the venv's
# own site-packages (the main venv's editable stim3d is not seen: a .pth-added folder's own .pth files do not run, and
# the fresh venv's stim3d comes first). Then, from another folder: checks the wheel's HDRIs (every map photoreal draws,
# each file as its SHA256SUMS lists it), renders a preset by name, builds the Blender add-on and checks the wheel inside
# it, installs the template plug-in (examples/plugin-template) and renders it with a built-in family in two splits,
# exports that batch as an imagefolder and loads both splits with datasets.load_dataset, and builds a study (with its
# JATOS archive) from that batch, checking both carry the wheel's jsPsych. Called by .ci/run; runs alone too: `bash
# scripts/check_wheel.sh` (needs .venv).
#
# What is tested is HEAD, committed: uncommitted changes are not in the clone, and the script says so on stderr
# when the working tree has any (commit them to test them). CI runs on a clean clone, where the two are the same.
set -euo pipefail
cd "$(dirname "$0")/.."
repo="$PWD"
main_venv="${MAIN_VENV:-$repo/.venv}"   # the rendering venv (scripts/install.sh)
started=$SECONDS
unset PYTHONPATH   # a user's shell: a checkout on it would stand in for the installed wheel
export PIP_NO_INDEX=1 PIP_DISABLE_PIP_VERSION_CHECK=1   # offline for pip: every step uses what is installed already
export HF_DATASETS_DISABLE_PROGRESS_BARS=1 HF_HUB_OFFLINE=1

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
head="$(git rev-parse HEAD)"
if [ -n "$(git status --porcelain)" ]; then
  echo "check_wheel.sh: the working tree has uncommitted or untracked changes; testing HEAD ${head:0:12} without them" >&2
fi
git clone -q --no-checkout "$repo" "$work/src"
git -C "$work/src" checkout -q --detach "$head"
[ ! -e "$work/src/stim3d/study/vendor" ] \
  || { echo "check_wheel.sh: HEAD holds stim3d/study/vendor/ (jsPsych is fetched, never committed)" >&2; exit 1; }
[ ! -e "$work/src/stim3d/render/hdri" ] \
  || { echo "check_wheel.sh: HEAD holds stim3d/render/hdri/ (the HDRIs are fetched, never committed)" >&2; exit 1; }
"$main_venv/bin/python" -m pip wheel -q --no-deps --no-build-isolation -w "$work/dist" "$work/src" >/dev/null
wheel="$(ls "$work"/dist/stim3d-*.whl)"

"$main_venv/bin/python" -m venv "$work/venv"
bin="$work/venv/bin"
site="$("$bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
"$main_venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])' > "$site/zz_main_venv_dependencies.pth"
"$bin/python" -m pip install -q --no-deps "$wheel"
cp -r "$work/src/examples/plugin-template" "$work/plugin"
"$bin/python" -m pip install -q --no-deps --no-build-isolation "$work/plugin" >/dev/null

mkdir "$work/user" && cd "$work/user"   # a user's folder: nothing of the checkout is importable from here
"$bin/python" -c '
import sys, stim3d, stim3d_plugin_template
from importlib import metadata
site = sys.argv[1]
assert stim3d.__file__.startswith(site) and stim3d_plugin_template.__file__.startswith(site), stim3d.__file__
assert metadata.distribution("stim3d").locate_file("").as_posix().startswith(site)' "$site"
# photoreal's pmndrs HDRIs in the installed wheel: every map photoreal draws, every file as SHA256SUMS lists it.
"$bin/python" - <<'PY'
import hashlib
from importlib import resources
from stim3d.scenes.look_basis import ENVIRONMENTS, PMNDRS_PREFIX
hdri = resources.files("stim3d.render").joinpath("hdri")
sums = dict(line.split("  ")[::-1] for line in hdri.joinpath("SHA256SUMS").read_text().splitlines())
drawn = {name for name in ENVIRONMENTS if name.startswith(PMNDRS_PREFIX)}
assert {PMNDRS_PREFIX + name[:-4] for name in sums if name.endswith(".exr")} == drawn, sorted(sums)
assert {p.name for p in hdri.iterdir()} == sums.keys() | {"SHA256SUMS"}, sorted(p.name for p in hdri.iterdir())
for name, digest in sums.items():
    assert hashlib.sha256(hdri.joinpath(name).read_bytes()).hexdigest() == digest, name
PY

# A preset by name, tiny: the preset's six items at 64x48 with Workbench.
"$bin/stim3d" render demo --out demo --engine workbench --width 64 --height 48 --quiet >/dev/null
[ "$(ls demo/items | wc -l)" = 6 ] || { echo "check_wheel.sh: demo rendered $(ls demo/items | wc -l) items, not 6" >&2; exit 1; }

# The add-on from the wheel install; the wheel inside it installs and its RECORD verifies.
"$bin/stim3d" addon build --without-dependencies --out addon >/dev/null
"$bin/python" - addon "$work/inner" <<'PY'
import base64, hashlib, subprocess, sys, tomllib, zipfile
from pathlib import Path
from importlib import metadata
(zip_path,) = Path(sys.argv[1]).glob("stim3d-*.zip")
version = metadata.version("stim3d")
with zipfile.ZipFile(zip_path) as archive:
    manifest = tomllib.loads(archive.read("blender_manifest.toml").decode())
    (name,) = [n for n in archive.namelist() if n.startswith("wheels/stim3d-")]
    inner = Path(sys.argv[2]).parent / Path(name).name
    inner.write_bytes(archive.read(name))
assert manifest["version"].replace("-", ".") == version, (manifest["version"], version)
with zipfile.ZipFile(inner) as wheel:
    files = {n: wheel.read(n) for n in wheel.namelist()}
record = files[f"stim3d-{version}.dist-info/RECORD"].decode().splitlines()
for path, digest, size in (line.rsplit(",", 2) for line in record):
    if digest:
        expected = base64.urlsafe_b64encode(hashlib.sha256(files[path]).digest()).rstrip(b"=").decode()
        assert digest == "sha256=" + expected and int(size) == len(files[path]), path
assert {line.rsplit(",", 2)[0] for line in record} == set(files)
subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", sys.argv[2], str(inner)], check=True)
PY
PYTHONPATH="$work/inner" "$bin/python" -c '
import sys, stim3d.scenes
assert stim3d.scenes.__file__.startswith(sys.argv[1]), stim3d.scenes.__file__' "$work/inner"

# The template plug-in and a built-in family in two splits; the imagefolder export loads in datasets.
"$bin/stim3d" families | grep -q "tiny_row \[stim3d-plugin-template\]" \
  || { echo "check_wheel.sh: stim3d families does not list the template plug-in" >&2; exit 1; }
cat > two-splits.yaml <<'YAML'
seed: 5
render: {engine: workbench, width: 64, height: 48}
tasks:
  - family: tiny_row
    splits: {train: 2, test: 1}
  - family: shape_count
    splits: {train: 1, test: 1}
YAML
"$bin/stim3d" render two-splits.yaml --out batch --quiet >/dev/null
"$bin/stim3d" export imagefolder batch --to hf >/dev/null
"$bin/python" - batch hf <<'PY'
import collections, json, sys
from pathlib import Path
import datasets
records = [json.loads(line) for line in (Path(sys.argv[1]) / "records.jsonl").read_text().splitlines()]
assert {r["family"] for r in records} == {"tiny_row", "shape_count"}, records
loaded = datasets.load_dataset(sys.argv[2], cache_dir=str(Path(sys.argv[2]).parent / "hf-cache"))
expected = collections.Counter(r["split"] for r in records)
assert {split: len(loaded[split]) for split in loaded} == dict(expected), (dict(expected), loaded)
PY
# A study from that batch (a pilot: the consent page is the unedited template; five items leave three main trials
# after one practice and one catch trial), with its JATOS archive: both carry the wheel's vendored jsPsych.
"$bin/stim3d" study build batch --out study --pilot --practice 1 --catch 1 --jatos >/dev/null
"$bin/python" - study <<'PY'
import hashlib, sys, zipfile
from importlib import resources
from pathlib import Path
study = Path(sys.argv[1])
vendor = resources.files("stim3d.study").joinpath("vendor", "jspsych")
sums = dict(line.split("  ")[::-1] for line in vendor.joinpath("SHA256SUMS").read_text().splitlines())
assert "jspsych.js" in sums and "jspsych.css" in sums, sorted(sums)
lib = study / "lib" / "jspsych"
for name, digest in sums.items():
    assert hashlib.sha256((lib / name).read_bytes()).hexdigest() == digest, name
with zipfile.ZipFile(study.with_name("study.jzip")) as archive:
    packed = [n for n in archive.namelist() if n.endswith("/lib/jspsych/jspsych.js")]
    assert len(packed) == 1 and archive.read(packed[0]) == (lib / "jspsych.js").read_bytes(), packed
PY
echo "check_wheel.sh: from the wheel (built from a clean clone of ${head:0:12}) in a fresh venv: HDRIs checked," \
  "preset rendered by name, add-on built, plug-in rendered, two-split imagefolder loaded, study built with jsPsych" \
  "($((SECONDS - started)) s)"
