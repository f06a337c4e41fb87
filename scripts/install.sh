#!/usr/bin/env bash
# Install sslperf (and the packages it needs) and run the main job.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
echo "== sslperf is installed: run it as .venv/bin/sslperf (or activate .venv)"
.venv/bin/sslperf libs list
.venv/bin/sslperf libs info system
