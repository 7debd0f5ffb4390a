#!/usr/bin/env bash
# Type-check the stim3d package with mypy (settings: [tool.mypy] in pyproject.toml).
#
# The package's folders sit at the repository's top level and pyproject's package-dir maps
# them under `stim3d` (scenes/ = stim3d.scenes, ...), which mypy cannot follow. So mypy reads
# a throw-away tree of symlinks laid out as the installed package is. Extra arguments go to mypy.
set -euo pipefail
cd "$(dirname "$0")/.."
repo="$PWD"
tree="$(mktemp -d)"
trap 'rm -rf "$tree"' EXIT
mkdir "$tree/stim3d"
for file in stim3d/*.py; do ln -s "$repo/$file" "$tree/stim3d/"; done
for folder in scenes render scoring blender_addon; do ln -s "$repo/$folder" "$tree/stim3d/$folder"; done
cd "$tree"
"$repo/.venv/bin/mypy" --config-file "$repo/pyproject.toml" --cache-dir "$repo/.mypy_cache" -p stim3d "$@"
