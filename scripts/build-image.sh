#!/usr/bin/env bash
# The sslperf image from the Containerfile, on the base image that
# scripts/base-image.sh makes from Debian's packages (no image registry):
#   bash scripts/build-image.sh [IMAGE]          # default localhost/sslperf:latest
#   LIBS="openssl-3.6 openssl-1.1.1w" bash scripts/build-image.sh   # libraries baked in
# podman's layer cache makes a second build quick. One build at a time: a
# second caller (tests/test_container.py while scripts/test.sh's background
# build runs) waits for the first, then finds every layer cached.
# SSLPERF_BUILD_CA: a CA bundle the build's RUN steps trust for PyPI and
# crates.io (default: this machine's bundle, so a TLS-intercepting proxy the
# machine trusts works in the build too); it is a build secret, not kept in
# the image.
set -euo pipefail
cd "$(dirname "$0")/.."

image="${1:-localhost/sslperf:latest}"
base="${SSLPERF_BASE_IMAGE:-localhost/sslperf-base:bookworm}"
lock="${XDG_RUNTIME_DIR:-/tmp}/sslperf-image-build-$(id -u).lock"

exec 9>"$lock"
if ! flock -n 9; then
  echo "== another image build is running; waiting for it (at most 1 h)"
  flock -w 3600 9 || { echo "the other image build did not end within an hour ($lock)" >&2; exit 1; }
fi

started=$SECONDS
bash scripts/base-image.sh

secret=()
ca="${SSLPERF_BUILD_CA:-/etc/ssl/certs/ca-certificates.crt}"
[ -s "$ca" ] && secret=(--secret "id=ca,src=$ca")
old=$(timeout 120 bash scripts/podman.sh image inspect --format '{{.Id}}' "$image" 2>/dev/null || true)

echo "== building $image on $base${LIBS:+ with $LIBS}"
timeout "${SSLPERF_IMAGE_TIMEOUT:-3600}" bash scripts/podman.sh build --network=host \
  --build-arg "BASE=$base" --build-arg "LIBS=${LIBS:-}" "${secret[@]}" \
  --file Containerfile --tag "$image" .

new=$(timeout 120 bash scripts/podman.sh image inspect --format '{{.Id}}' "$image")
if [ -n "$old" ] && [ "$old" != "$new" ]; then   # the image this tag named before: nothing refers to it now
  timeout 300 bash scripts/podman.sh rmi "$old" > /dev/null 2>&1 || true
fi
echo "== $image built in $((SECONDS - started)) s"
