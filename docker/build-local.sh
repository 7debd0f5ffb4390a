#!/usr/bin/env bash
# Build and verify the stim3d image on a machine without a Docker engine or a registry.
#
#   1. makes a Debian bookworm base with `debootstrap --variant=minbase` and imports it with
#      `podman import` as localhost/debian:bookworm-slim (skipped when that image exists);
#   2. builds the Dockerfile's `test` stage with `buildah bud --isolation=chroot`: the test suite
#      and a render of the demo preset run inside the image, so this step fails if either fails;
#   3. builds the final image (same cached layers) as localhost/stim3d:latest;
#   4. prints the build times and the image size.
#
# Needs root and the Debian packages buildah, podman, debootstrap.
# A proxy's CA bundle reaches pip as a build secret, never as a layer: it is taken from
# STIM3D_CA_BUNDLE, else PIP_CERT, else SSL_CERT_FILE (unset all three to build without one).
# Arguments after `--` go to both `buildah bud` calls (e.g. `-- --build-arg PIP_INDEX_URL=...`).
#
# The build context is the working tree (as with `docker build .`); `--ref REV` builds a git
# revision instead (`git archive`), which is what to verify while the tree holds work in progress.
#
# Usage: docker/build-local.sh [--ref REV] [--tag NAME] [--skip-test] [--rebuild-base] [-- BUILDAH_ARGS...]
set -euo pipefail
cd "$(dirname "$0")/.."

TAG="localhost/stim3d:latest"
BASE="localhost/debian:bookworm-slim"
MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
ref=""
run_test=1
rebuild_base=0
extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --ref) ref="${2:?--ref needs a git revision}"; shift 2 ;;
    --tag) TAG="${2:?--tag needs a name}"; shift 2 ;;
    --skip-test) run_test=0; shift ;;
    --rebuild-base) rebuild_base=1; shift ;;
    --) shift; extra=("$@"); break ;;
    *) echo "build-local.sh: unknown option '$1' (allowed: --ref REV, --tag NAME, --skip-test, --rebuild-base, -- BUILDAH_ARGS)" >&2; exit 2 ;;
  esac
done

[ "$(id -u)" -eq 0 ] || { echo "build-local.sh: run as root (debootstrap and buildah's chroot isolation need it)" >&2; exit 2; }
for tool in buildah podman debootstrap; do
  command -v "$tool" >/dev/null || { echo "build-local.sh: '$tool' not found; apt-get install buildah podman debootstrap" >&2; exit 2; }
done

# -- 1. the base image -------------------------------------------------------------------------------
if [ "$rebuild_base" -eq 1 ] || ! podman image exists "$BASE"; then
  rootfs="$(mktemp -d "${TMPDIR:-/var/tmp}/stim3d-rootfs.XXXXXX")"
  trap 'rm -rf "$rootfs"' EXIT
  echo "build-local.sh: debootstrap bookworm (minbase) from $MIRROR"
  debootstrap --variant=minbase bookworm "$rootfs" "$MIRROR" >"$rootfs.log" 2>&1 \
    || { tail -20 "$rootfs.log" >&2; echo "build-local.sh: debootstrap failed (log: $rootfs.log)" >&2; exit 1; }
  rm -f "$rootfs.log"
  # What the official bookworm-slim image adds: updates and security sources, no docs or man pages,
  # no apt caches left in layers.
  rm -f "$rootfs/etc/apt/sources.list"
  cat >"$rootfs/etc/apt/sources.list.d/debian.sources" <<EOF
Types: deb
URIs: $MIRROR
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://deb.debian.org/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
  cat >"$rootfs/etc/dpkg/dpkg.cfg.d/slim" <<'EOF'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/info/*
path-exclude /usr/share/locale/*
EOF
  printf 'APT::Install-Recommends "false";\nAPT::Install-Suggests "false";\n' >"$rootfs/etc/apt/apt.conf.d/99slim"
  cat >"$rootfs/etc/apt/apt.conf.d/docker-clean" <<'EOF'
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
EOF
  # debootstrap takes bookworm's point release; the security updates come from the sources above.
  cp /etc/resolv.conf "$rootfs/etc/resolv.conf"
  chroot "$rootfs" sh -c 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get upgrade -y -qq >/dev/null' \
    || { echo "build-local.sh: apt-get upgrade in the new base failed" >&2; exit 1; }
  # Nothing of this machine goes into the image (the build mounts its own resolv.conf).
  rm -f "$rootfs/etc/resolv.conf" "$rootfs/etc/hostname"
  rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/cache/apt/*.bin "$rootfs"/var/lib/apt/lists/* "$rootfs"/usr/share/man/*
  find "$rootfs/usr/share/doc" -type f ! -name copyright -delete
  podman image rm -f "$BASE" >/dev/null 2>&1 || true
  tar -C "$rootfs" --numeric-owner -c . | podman import --change 'CMD ["bash"]' - "$BASE" >/dev/null
  rm -rf "$rootfs"
  trap - EXIT
  echo "build-local.sh: imported $BASE"
fi

# -- 2./3. the test stage, then the image ------------------------------------------------------------
context=.
if [ -n "$ref" ]; then
  context="$(mktemp -d "${TMPDIR:-/var/tmp}/stim3d-context.XXXXXX")"
  trap 'rm -rf "$context"' EXIT
  git archive "$ref" | tar -x -C "$context"
  cp .dockerignore "$context/"
  echo "build-local.sh: context is $ref ($(git rev-parse --short "$ref"))"
fi
# jsPsych and photoreal's HDRIs (git-ignored) into the context: the image has no npm, and stim3d's build stops
# without them.
[ -f "$context/scripts/fetch_jspsych.sh" ] && bash "$context/scripts/fetch_jspsych.sh"
[ -f "$context/scripts/fetch_hdris.sh" ] && bash "$context/scripts/fetch_hdris.sh"
ca="${STIM3D_CA_BUNDLE:-${PIP_CERT:-${SSL_CERT_FILE:-}}}"
secret=()
if [ -n "$ca" ]; then
  [ -f "$ca" ] || { echo "build-local.sh: CA bundle '$ca' is not a file" >&2; exit 2; }
  secret=(--secret "id=ca_bundle,src=$ca")
  echo "build-local.sh: passing CA bundle $ca to pip as build secret 'ca_bundle'"
fi
bud=(buildah bud --isolation=chroot --layers --force-rm --pull=never -f "$PWD/docker/Dockerfile"
     --build-arg "BASE_IMAGE=$BASE" "${secret[@]}" "${extra[@]}")

seconds() { echo $(( $(date +%s) - $1 )); }
if [ "$run_test" -eq 1 ]; then
  start=$(date +%s)
  echo "build-local.sh: building the test stage (test suite + demo render inside the image)"
  "${bud[@]}" --target test -t localhost/stim3d:test "$context"
  test_seconds=$(seconds "$start")
fi
start=$(date +%s)
echo "build-local.sh: building $TAG"
"${bud[@]}" --target runtime -t "$TAG" "$context"
final_seconds=$(seconds "$start")

size=$(podman image inspect --format '{{.Size}}' "$TAG")
[ "$run_test" -eq 1 ] && echo "build-local.sh: test stage passed in ${test_seconds}s"
echo "build-local.sh: $TAG built in ${final_seconds}s (after the test stage); size $(( size / 1000000 )) MB"
