#!/usr/bin/env bash
# podman as this project runs it (scripts/base-image.sh, scripts/build-image.sh,
# tests/test_container.py): `bash scripts/podman.sh ARGS…` is `podman ARGS…`
# with a containers.conf of its own (CONTAINERS_CONF), nothing in /etc changed.
#
# What podman 4.3 (Debian 12) needed on this kind of machine — a Firecracker
# VM, root, no systemd as PID 1, cgroups v1 with a cgroup v2 "unified" mount
# that holds the hugetlb controller, and no CAP_SYS_RESOURCE:
#   * runtime = runc: crun 1.8 refuses the hybrid cgroups ("cgroups in hybrid
#     mode not supported, drop all controllers from cgroupv2"); runc 1.1 runs.
#   * default_ulimits: as root podman sets RLIMIT_NOFILE to 1048576 and
#     RLIMIT_NPROC to 4194304 in every container (and RUN step), which
#     fails without CAP_SYS_RESOURCE ("setrlimit RLIMIT_NOFILE: Operation not
#     permitted"); so both are set at most to this process's hard limits
#     (RLIMIT_NPROC at most 16384: 50000 failed even under the hard limit
#     of 96365 while 30000 ran; podman's conmon runs with 32768).
#   * cgroup_manager = cgroupfs and events_logger = file: no systemd/journald
#     (podman guessed both itself here; set so it never depends on guessing).
#   * storage: the default overlay driver in /var/lib/containers/storage works
#     (the kernel's overlayfs on ext4): no vfs, no fuse-overlayfs as root.
#   * network: the callers pass --network=host: no image registry is needed,
#     builds fetch only Debian and PyPI packages, and the test's container
#     reaches a PostgreSQL server on the host's loopback. (The default CNI
#     bridge worked here too.)
set -euo pipefail

conf_dir="${SSLPERF_PODMAN_CONF_DIR:-${XDG_RUNTIME_DIR:-/tmp}/sslperf-podman-$(id -u)}"
mkdir -p "$conf_dir"

limit() { # limit HARD CAP: HARD (a number or "unlimited") no higher than CAP
  if [ "$1" = unlimited ] || [ "$1" -gt "$2" ]; then echo "$2"; else echo "$1"; fi
}
nofile=$(limit "$(ulimit -Hn)" 1048576)
nproc=$(limit "$(ulimit -Hu)" 16384)

conf="$conf_dir/containers.conf"
tmp=$(mktemp "$conf_dir/containers.conf.XXXXXX")
cat > "$tmp" <<EOF
# Written by scripts/podman.sh (see there why); rewritten on every call.
[containers]
default_ulimits = ["nofile=$nofile:$nofile", "nproc=$nproc:$nproc"]

[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
EOF
mv -f "$tmp" "$conf"

export CONTAINERS_CONF="$conf"
exec podman "$@"
