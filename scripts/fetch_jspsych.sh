#!/usr/bin/env bash
# jsPsych for `stim3d study build`, vendored at pinned versions: `npm pack` each package, check the tarball
# against the integrity pinned below (the registry's dist.integrity, an SRI sha512), and unpack only the
# browser build (dist/index.browser.min.js), jsPsych's CSS and the licence into stim3d/study/vendor/jspsych/
# (git-ignored; the wheel ships it as package data). jsPsych is never committed and never loaded from a CDN.
#
# Idempotent: when the folder holds exactly these versions (VERSIONS) and every file matches its recorded
# sha256 (SHA256SUMS), nothing is fetched. `--force` fetches again. Needs npm (scripts/install.sh installs
# Debian's nodejs and npm when it is missing) and network access to the npm registry only.
#
# To move to other versions: `npm view <package>@<version> dist.integrity`, edit PACKAGES, run this script.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/vendor_lib.sh   # vendor_options, vendor_verified, vendor_publish

DEST="stim3d/study/vendor/jspsych"
# name version integrity file-in-vendor-folder
PACKAGES="
jspsych 8.3.0 sha512-UrwSVG14v8oRX6WFQ1L6uuGT0G7KgRDSH48iKIVIQI+yMRGAlvg+tEUNFKe/1xZxgk3kZiZ5xP0AnpPqPj1zkg== jspsych.js
@jspsych/plugin-preload 2.1.0 sha512-tQUViQQNK5RXc+sYjNyV1NKl8gt9Wl+sZ55kpW1eEn9I84WCSBtjPDthr7WxGMZeK+E/ybYucWMVcIwlncaHAg== plugin-preload.js
@jspsych/plugin-instructions 2.1.0 sha512-jg3bepI9axwenGMNGunmcnnsXn4V2xMhVrzfHUGkA7AP/TQLdS8aeNqwhq3SVy6EXPX8X+r/sr2GKHrXeViRFA== plugin-instructions.js
@jspsych/plugin-html-button-response 2.1.0 sha512-AhJPePA8s/ount+QYtqfgMtEkz7g+j+bnhQ9XqxfsnK2f5MdnlakYtpjxW9YgFx9y0Gs7yb7OZk1+omcKlzaEQ== plugin-html-button-response.js
@jspsych/plugin-html-keyboard-response 2.2.0 sha512-xuNbZH4QNuERMIg2+tHZ0KDpn/TZFXjmUa23zSl2iEmNGp1DNMhOZGlzR4lyavcFeq5qudpr3ZS4AlrlMS0Gdg== plugin-html-keyboard-response.js
@jspsych/plugin-survey-html-form 2.1.0 sha512-jM9xSaojD7+xqL7yVjn7FUmboH3QAFBAaNOLBSUNJNQpGaJmGRtjrmlPggLp24Bnjd/jkjnThFj+z88Mgr67gQ== plugin-survey-html-form.js
"

vendor_options fetch_jspsych.sh "$@"   # sets force

versions_text() { echo "$PACKAGES" | awk 'NF == 4 { print $1 "@" $2 " " $3 " " $4 }'; }

if [ "$force" = 0 ] && vendor_verified "$DEST" VERSIONS "$(versions_text)"; then
  echo "fetch_jspsych.sh: $DEST is present and verified ($(echo "$PACKAGES" | awk 'NF == 4' | wc -l) packages)"
  exit 0
fi

command -v npm >/dev/null 2>&1 || { echo "fetch_jspsych.sh: npm is missing (scripts/install.sh installs nodejs and npm)" >&2; exit 1; }

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/out"

echo "$PACKAGES" | awk 'NF == 4' | while read -r name version integrity file; do
  tarball="$(cd "$work" && npm pack --loglevel=error "$name@$version" | tail -n 1)" \
    || { echo "fetch_jspsych.sh: npm pack $name@$version failed (npm's error above; is the npm registry reachable?)" >&2; exit 1; }
  # SRI "sha512-<base64>": the same digest of the tarball's bytes, base64-encoded.
  actual="sha512-$(openssl dgst -sha512 -binary "$work/$tarball" | base64 -w 0)"
  if [ "$actual" != "$integrity" ]; then
    echo "fetch_jspsych.sh: $name@$version: integrity mismatch (pinned $integrity, packed $actual); nothing installed" >&2
    exit 1
  fi
  mkdir -p "$work/unpack-$file"
  tar -xzf "$work/$tarball" -C "$work/unpack-$file" package/dist/index.browser.min.js package/package.json
  cp "$work/unpack-$file/package/dist/index.browser.min.js" "$work/out/$file"
  grep -q '"license": "MIT"' "$work/unpack-$file/package/package.json" \
    || { echo "fetch_jspsych.sh: $name@$version is no longer declared MIT; check its licence before vendoring" >&2; exit 1; }
  if [ "$name" = jspsych ]; then
    tar -xzf "$work/$tarball" -C "$work/unpack-$file" package/css/jspsych.css
    cp "$work/unpack-$file/package/css/jspsych.css" "$work/out/jspsych.css"
  fi
  echo "fetch_jspsych.sh: $name@$version verified ($file)"
done

# The packages declare "license": "MIT" in package.json but ship no licence file; this is the MIT licence of
# the jsPsych project (its repository's licence file), which covers jsPsych and its @jspsych plugins.
cat > "$work/out/LICENSE" <<'EOF'
jsPsych and the @jspsych plugins vendored here (versions in VERSIONS) are distributed under the MIT License:

The MIT License (MIT)

Copyright (c) 2014 Joshua R. de Leeuw and the jsPsych contributors

Permission is hereby granted, free of charge, to any person obtaining a copy
of this software and associated documentation files (the "Software"), to deal
in the Software without restriction, including without limitation the rights
to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
copies of the Software, and to permit persons to whom the Software is
furnished to do so, subject to the following conditions:

The above copyright notice and this permission notice shall be included in all
copies or substantial portions of the Software.

THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
SOFTWARE.
EOF
versions_text > "$work/out/VERSIONS"
# Publish in one step: the old folder (if any) is replaced only once every package is verified.
vendor_publish "$work/out" "$DEST"
echo "fetch_jspsych.sh: $DEST ready ($(du -sk "$DEST" | cut -f1) kB)"
