#!/usr/bin/env bash
# Install sslperf with its test dependencies and run the whole test suite,
# including the end-to-end tests that build a real OpenSSL.
set -euo pipefail
cd "$(dirname "$0")/.."
EXTRAS=test bash scripts/bootstrap.sh
exec .venv/bin/python -m pytest -ra "$@"
