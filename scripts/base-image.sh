#!/usr/bin/env bash
# A Debian 12 (bookworm) base image made here from Debian's packages, with no
# image registry:
#   mmdebstrap --variant=minbase bookworm FILE.tar && podman import FILE.tar localhost/sslperf-base:bookworm
# Idempotent: an image of that name already there is kept (SSLPERF_BASE_REBUILD=1
# makes it again). The Containerfile builds on it with
#   --build-arg BASE=localhost/sslperf-base:bookworm
# (scripts/build-image.sh). Environment: SSLPERF_BASE_IMAGE (the name),
# SSLPERF_DEBIAN_MIRROR and SSLPERF_DEBIAN_SECURITY (the apt sources the image
# keeps). As root mmdebstrap chroots; otherwise it needs user namespaces (uidmap).
# The root file system goes through a file, not a pipe, so a failed or
# interrupted mmdebstrap never leaves a truncated image behind to be kept.
set -euo pipefail
cd "$(dirname "$0")/.."

image="${SSLPERF_BASE_IMAGE:-localhost/sslperf-base:bookworm}"
mirror="${SSLPERF_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
security="${SSLPERF_DEBIAN_SECURITY:-http://deb.debian.org/debian-security}"

if [ "${SSLPERF_BASE_REBUILD:-}" != 1 ] && timeout 120 bash scripts/podman.sh image exists "$image"; then
  echo "== base image $image is there"
  exit 0
fi
command -v mmdebstrap >/dev/null || {
  echo "mmdebstrap is missing: EXTRAS=test bash scripts/bootstrap.sh installs it (Debian package mmdebstrap)." >&2
  exit 2
}

work=$(mktemp -d "${TMPDIR:-/var/tmp}/sslperf-base.XXXXXX")
trap 'rm -rf "$work"' EXIT
echo "== making $image with mmdebstrap (minbase, bookworm, from $mirror)"
started=$SECONDS
# No documentation, man pages or translations: the image is for running sslperf.
timeout 1200 mmdebstrap --variant=minbase --quiet \
  --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright' \
  --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/info/*' \
  --dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-include=/usr/share/locale/locale.alias' \
  bookworm "$work/rootfs.tar" \
  "deb $mirror bookworm main" "deb $mirror bookworm-updates main" "deb $security bookworm-security main"
timeout 600 bash scripts/podman.sh import \
  --change 'CMD ["/bin/bash"]' \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'LABEL org.opencontainers.image.description="Debian 12 minbase, made by sslperf scripts/base-image.sh"' \
  --message "mmdebstrap --variant=minbase bookworm" \
  "$work/rootfs.tar" "$image" > /dev/null
echo "== base image $image made in $((SECONDS - started)) s"
