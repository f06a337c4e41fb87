#!/usr/bin/env bash
# Shared set-up for install.sh and test.sh: Debian packages that are missing,
# then a virtualenv in .venv with sslperf installed (EXTRAS selects extras).
# BOOTSTRAP_STEPS=packages does only the first, =venv only the second (test.sh
# starts the image build between them, while pip downloads).
set -euo pipefail
cd "$(dirname "$0")/.."

need_pkgs=()
want() { # want COMMAND-OR-FILE PACKAGE
  case "$1" in
    /*) [ -e "$1" ] || need_pkgs+=("$2") ;;
    *) command -v "$1" >/dev/null 2>&1 || need_pkgs+=("$2") ;;
  esac
}
want cc gcc
want c++ g++
want make make
want perl perl
want cmake cmake
want ninja ninja-build
# wolfSSL is configured by its own autotools script (its assembly switches are there only).
want autoreconf autoconf
want automake automake
want libtoolize libtool
# BoringSSL's FIPS module is built with clang (its delocated assembly), as its build requires.
want clang clang
want go golang-go
want pkg-config pkg-config
want size binutils
want git git
want cargo cargo
want /usr/include/openssl/ssl.h libssl-dev
want openssl openssl
# `sslperf profile`: perf (sampling) and valgrind (callgrind, where perf is not allowed).
want perf linux-perf
# `sslperf serve-load`: wrk loads the servers; apt fetches and dpkg-source unpacks their Debian source packages.
want wrk wrk
want dpkg-source dpkg-dev
want apt-get apt
want valgrind valgrind
# Builds compile only what changed since an earlier build (bisects, neighbouring releases).
want ccache ccache
if [ "${EXTRAS:-}" = "test" ]; then
  # The tests start a real PostgreSQL and open the HTML report in headless Chromium.
  want /usr/lib/postgresql postgresql
  want chromium chromium
  want runuser util-linux
  # bench/exec_vs_hyperfine.py times one command by `sslperf exec` and by hyperfine, side by side.
  want hyperfine hyperfine
  # Probes for 64-bit ARM (`sslperf probe build --lib openssl-…+aarch64`): Debian's cross tool chain builds
  # them, and qemu-user runs them here, for correctness only.
  want aarch64-linux-gnu-gcc gcc-aarch64-linux-gnu
  want /usr/aarch64-linux-gnu/include/stdio.h libc6-dev-arm64-cross
  want qemu-aarch64 qemu-user
  # tests/test_probe.py runs a probe's driver with BusyBox's applets alone, as on a board.
  want busybox busybox-static
  # tests/test_docs.py renders the man page with groff's warnings on.
  want groff groff-base
  # `sslperf recommend` snippets are checked by the servers' own config parsers.
  want /usr/sbin/nginx nginx
  want /usr/sbin/haproxy haproxy
  want /usr/sbin/apache2 apache2
  # The container image is built and run with podman on a base image mmdebstrap makes (no image
  # registry): runc, because crun refuses hybrid cgroups (scripts/podman.sh says why); uidmap and
  # fuse-overlayfs for podman run as a user other than root.
  want podman podman
  want runc runc
  want mmdebstrap mmdebstrap
  want newuidmap uidmap
  want fuse-overlayfs fuse-overlayfs
fi

steps=" ${BOOTSTRAP_STEPS:-packages venv} "
if [[ "$steps" == *" packages "* ]] && [ ${#need_pkgs[@]} -gt 0 ]; then
  echo "== installing Debian packages: ${need_pkgs[*]}"
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  export DEBIAN_FRONTEND=noninteractive
  timeout 900 $sudo_cmd apt-get update -qq
  timeout 1800 $sudo_cmd apt-get install -y -qq --no-install-recommends "${need_pkgs[@]}"
fi

[[ "$steps" == *" venv "* ]] || exit 0

python=${PYTHON:-python3}
if ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
  echo "sslperf needs Python 3.11 or newer; $("$python" --version) found. Set PYTHON=/path/to/python3.11." >&2
  exit 2
fi
if [ ! -x .venv/bin/python ]; then
  echo "== creating .venv"
  "$python" -m venv .venv
fi
# What the venv was installed from, one line per set of extras: the same line again (the test command
# bootstraps twice, and a CI job on a kept checkout once more) skips pip, which would only say so in ~5 s.
stamp=.venv/sslperf-installed
installed_from="$(cat pyproject.toml scripts/bootstrap.sh | sha256sum | cut -c1-16) extras=${EXTRAS:-} $(.venv/bin/python -V)"
if grep -qxF "$installed_from" "$stamp" 2>/dev/null && .venv/bin/python -c 'import sslperf' 2>/dev/null; then
  echo "== sslperf${EXTRAS:+[$EXTRAS]} is installed in .venv (from this pyproject.toml and bootstrap.sh)"
else
  echo "== installing sslperf${EXTRAS:+[$EXTRAS]} into .venv"
  # BOOTSTRAP_BYTECODE=lazy (the test command): pip compiles none of the ~7,000 modules it installs (~14 CPU-s);
  # Python compiles each one the first time it is imported, and keeps it.
  compile_flag=()
  [ "${BOOTSTRAP_BYTECODE:-}" = lazy ] && compile_flag=(--no-compile)
  timeout 900 .venv/bin/pip install --quiet --disable-pip-version-check "${compile_flag[@]}" --upgrade pip
  # `sslperf regressions` finds change points with Apache Otava's analysis module, which needs only
  # numpy and scipy; the package itself also requires the clients of Otava's services (BigQuery,
  # Slack, Graphite) and pins numpy==2.2.0.*, so it is installed without its dependencies, last: an
  # install after it (a second bootstrap, the test extra) would report its unmet requirements as an
  # ERROR, so it is taken out first.
  timeout 300 .venv/bin/pip uninstall --quiet --yes apache-otava 2>/dev/null || true
  timeout 1800 .venv/bin/pip install --quiet --disable-pip-version-check "${compile_flag[@]}" -e ".${EXTRAS:+[$EXTRAS]}"
  timeout 900 .venv/bin/pip install --quiet --disable-pip-version-check "${compile_flag[@]}" --no-deps \
    "apache-otava==0.8.0"
  echo "$installed_from" >> "$stamp"
fi
# sslperf is installed editable, so pip compiles none of its modules: compiled here, every `sslperf` starts
# without compiling them again, also where PYTHONDONTWRITEBYTECODE is set (~90 ms of a `speed` run's start).
timeout 300 .venv/bin/python -m compileall -q src
