#!/usr/bin/env bash
# Install sslperf (and the packages it needs) and run the main job: the
# quick primitives suite on the system OpenSSL, as tables and a JSON file.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
echo "== sslperf is installed: run it as .venv/bin/sslperf (or activate .venv)"
.venv/bin/sslperf libs list
mkdir -p out
.venv/bin/sslperf speed --quick --lib system --out out/system-speed.json
echo "== results written to out/system-speed.json"
