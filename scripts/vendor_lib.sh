# Shared by the scripts that vendor git-ignored package data (scripts/fetch_jspsych.sh, scripts/fetch_hdris.sh):
# sourced, never run. Both keep a folder with a version file and a SHA256SUMS of every other file, and replace it
# only once a new copy is complete; their option, the check and the publishing step are written once here.
# (build_backend/stim3d_build.py checks the same folders in Python, adding that no file may be unlisted.)

# vendor_options NAME ARGS...: set `force` to 1 when ARGS hold --force, else 0. Any other argument is bad input:
# one line naming it (as NAME, the script), and exit code 2.
vendor_options() {
  local name="$1" arg
  shift
  force=0
  for arg in "$@"; do
    case "$arg" in
      --force) force=1 ;;
      *) echo "$name: unknown option '$arg' (allowed: --force)" >&2; exit 2 ;;
    esac
  done
}

# vendor_verified DEST VERSION_FILE TEXT: true when DEST/VERSION_FILE holds exactly TEXT (the pinned versions) and
# every file DEST/SHA256SUMS lists matches its sha256; false otherwise (missing files included), silently.
vendor_verified() {
  local dest="$1" version_file="$2" text="$3"
  [ -f "$dest/$version_file" ] && [ -f "$dest/SHA256SUMS" ] \
    && [ "$(cat "$dest/$version_file")" = "$text" ] \
    && (cd "$dest" && sha256sum --check --quiet --strict SHA256SUMS >/dev/null 2>&1)
}

# vendor_publish STAGED DEST: write STAGED/SHA256SUMS (every file in STAGED), then make STAGED the folder DEST in
# one step: the old DEST (if any) is replaced only now, once the caller has verified everything in STAGED.
vendor_publish() {
  local staged="$1" dest="$2"
  (cd "$staged" && sha256sum -- $(ls | grep -v '^SHA256SUMS$' | sort) > SHA256SUMS)
  mkdir -p "$(dirname "$dest")"
  rm -rf "$dest.old"
  if [ -d "$dest" ]; then mv "$dest" "$dest.old"; fi
  mv "$staged" "$dest"
  rm -rf "$dest.old"
}
