#!/usr/bin/env bash
# Install sslperf with its test dependencies and run the whole test suite,
# including the end-to-end tests that build real libraries:
#   1. the Debian packages are installed (podman among them), and the
#      container image (tests/test_container.py) starts building in the
#      background (podman's layer cache makes a rebuild quick; the test waits
#      for this build): its downloads go on while pip installs sslperf with
#      its test dependencies;
#   2. then the libraries the end-to-end tests need start building in the
#      background too (kept in .test-cache for the next run: a build whose
#      cache key matches is not made again), and every test that
#      times nothing runs in two workers, each on a CPU of its own and at a
#      lower priority than the builds (a test that needs a library waits for
#      its build, and those tests run last);
#   3. then the tests that assert on measured speed (marker `timing`) run
#      alone, one at a time.
# Before the tests, `lint-imports` checks the package layers (pyproject.toml's
# import-linter contract): an import from a layer above fails the run.
# With arguments, it runs pytest with them instead (e.g. -m "not slow", a file).
set -euo pipefail
cd "$(dirname "$0")/.."
export SSLPERF_TEST_CACHE="${SSLPERF_TEST_CACHE:-$PWD/.test-cache}"
# Compiled modules are kept (in the checkout's __pycache__, ignored by git) even where the environment says not to
# write them: else each of the suite's ~600 Python processes compiles sslperf again, and pytest the tests.
unset PYTHONDONTWRITEBYTECODE
# The compiler cache outlives the checkout, as a CI keeps its ccache between runs: a fresh clone still builds
# every library from source, and compiles only what this machine has not compiled before.
export SSLPERF_CCACHE_DIR="${SSLPERF_CCACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/sslperf-test-ccache}"
if [ $# -gt 0 ]; then
  EXTRAS=test bash scripts/bootstrap.sh
  exec .venv/bin/python -m pytest -ra "$@"
fi

EXTRAS=test BOOTSTRAP_STEPS=packages bash scripts/bootstrap.sh
mkdir -p "$SSLPERF_TEST_CACHE"
nice -n 5 timeout 3900 bash scripts/build-image.sh localhost/sslperf:test \
  > "$SSLPERF_TEST_CACHE/image-build.log" 2>&1 &
image_build=$!

EXTRAS=test BOOTSTRAP_STEPS=venv BOOTSTRAP_BYTECODE=lazy bash scripts/bootstrap.sh
prebuild_data=$(mktemp -d)
trap 'rm -rf "$prebuild_data"' EXIT
SSLPERF_CACHE_DIR="$SSLPERF_TEST_CACHE/e2e" SSLPERF_DATA_DIR="$prebuild_data" \
  timeout 3600 .venv/bin/python -m sslperf libs build $(grep -v '^#' tests/e2e-libs.txt) \
  > "$SSLPERF_TEST_CACHE/prebuild.log" 2>&1 &
prebuild=$!
status=0
.venv/bin/lint-imports --no-cache || status=$?
nice -n 10 .venv/bin/python -m pytest -ra --durations=25 -n 2 --dist loadgroup -m "not timing" || status=$?
wait "$prebuild" || echo "== the background builds failed (the tests that need them say why): $SSLPERF_TEST_CACHE/prebuild.log"
wait "$image_build" || echo "== the background image build failed (tests/test_container.py says why): $SSLPERF_TEST_CACHE/image-build.log"
.venv/bin/python -m pytest -ra --durations=10 -m timing || status=$?
exit "$status"
