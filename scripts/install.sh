#!/usr/bin/env bash
# Install sslperf (and the packages it needs) and run the main job: the
# quick primitives suite on the system OpenSSL, as tables, a JSON file and
# an HTML report with its figures.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
echo "== sslperf is installed: run it as .venv/bin/sslperf (or activate .venv)"
.venv/bin/sslperf libs list
mkdir -p out
.venv/bin/sslperf speed --quick --lib system --out out/system-speed.json
.venv/bin/sslperf report latest --out out/report --format html --format png
echo "== results: out/system-speed.json (every sample) and out/report/report.html"
