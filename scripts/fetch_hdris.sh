#!/usr/bin/env bash
# The 18 CC0 HDRIs of the npm package @pmndrs/assets (Poly Haven originals, resized to 512x256 and stored as
# base64 EXR modules) for photoreal's tabletop and outdoor settings, vendored at a pinned version: `npm pack` the
# package, check the tarball against the integrity pinned below (the registry's dist.integrity, an SRI sha512),
# decode each hdri/<name>.exr.js into stim3d/render/hdri/<name>.exr (git-ignored; the wheel ships it as package
# data), and record the licence, the version and every file's sha256. Never committed, never fetched at render
# time. Which settings use these maps and why: docs/looks.md "Light".
#
# Idempotent: when the folder holds this version (VERSION) and every file matches SHA256SUMS, nothing is fetched.
# `--force` fetches again. Needs npm (scripts/install.sh installs Debian's nodejs and npm when it is missing) and
# network access to the npm registry only.
#
# To move to another version: `npm view @pmndrs/assets@<version> dist.integrity`, edit VERSION and INTEGRITY, run
# this script, and measure the maps again (python -m bench.looks_exposure; python -m bench.wall_irradiance).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/vendor_lib.sh   # vendor_options, vendor_verified, vendor_publish

DEST="stim3d/render/hdri"
PACKAGE="@pmndrs/assets"
VERSION="1.7.0"
INTEGRITY="sha512-zHmKNS+3Jvu9K3zJBQfYQKT9Pn9IQt8s0q/eJC3CXKpWpyg6IBa+ivN9NgDn+fDT2AVjUh2YRZ//GXUueuAdCg=="
COUNT=18

vendor_options fetch_hdris.sh "$@"   # sets force

if [ "$force" = 0 ] && vendor_verified "$DEST" VERSION "$PACKAGE@$VERSION $INTEGRITY"; then
  echo "fetch_hdris.sh: $DEST is present and verified ($COUNT maps)"
  exit 0
fi

command -v npm >/dev/null 2>&1 || { echo "fetch_hdris.sh: npm is missing (scripts/install.sh installs nodejs and npm)" >&2; exit 1; }

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/out" "$work/unpack"

tarball="$(cd "$work" && npm pack --silent "$PACKAGE@$VERSION" | tail -n 1)"
actual="sha512-$(openssl dgst -sha512 -binary "$work/$tarball" | base64 -w 0)"
if [ "$actual" != "$INTEGRITY" ]; then
  echo "fetch_hdris.sh: $PACKAGE@$VERSION: integrity mismatch (pinned $INTEGRITY, packed $actual); nothing installed" >&2
  exit 1
fi
tar -xzf "$work/$tarball" -C "$work/unpack" package/package.json package/hdri
grep -q '"license": "CC0-1.0"' "$work/unpack/package/package.json" \
  || { echo "fetch_hdris.sh: $PACKAGE@$VERSION is no longer declared CC0-1.0; check its licence before vendoring" >&2; exit 1; }

# Each module is one line: export default 'data:application/exr;base64,<EXR bytes>'
for module in "$work"/unpack/package/hdri/*.exr.js; do
  name="$(basename "$module" .exr.js)"
  sed -e "s/^export default 'data:application\/exr;base64,//" -e "s/'[[:space:]]*\$//" "$module" \
    | base64 --decode > "$work/out/$name.exr"
  head -c 4 "$work/out/$name.exr" | od -An -tx1 | grep -q "76 2f 31 01" \
    || { echo "fetch_hdris.sh: $name.exr.js did not decode to an OpenEXR file" >&2; exit 1; }
done
found="$(ls "$work"/out/*.exr | wc -l)"
[ "$found" = "$COUNT" ] || { echo "fetch_hdris.sh: $PACKAGE@$VERSION has $found HDRIs, expected $COUNT" >&2; exit 1; }

cat > "$work/out/LICENSE" <<EOF
The HDRIs in this folder (*.exr) come from the npm package $PACKAGE@$VERSION (pmndrs/assets on GitHub), whose
package.json declares "license": "CC0-1.0". They are Poly Haven HDRIs (https://polyhaven.com/hdris, published under
CC0 1.0 Universal), resized by pmndrs to 512x256 and stored as EXR. CC0: no rights reserved; no attribution is
required. Decoded from the package's base64 modules by scripts/fetch_hdris.sh; not modified otherwise.
EOF
echo "$PACKAGE@$VERSION $INTEGRITY" > "$work/out/VERSION"
# Publish in one step: the old folder (if any) is replaced only once every map is decoded and checked.
vendor_publish "$work/out" "$DEST"
echo "fetch_hdris.sh: $DEST ready ($COUNT maps, $(du -sk "$DEST" | cut -f1) kB)"
