#!/usr/bin/env bash
# The main job: set up, then reproduce every seed result in quick mode and build the report
# (report/index.html: figures, the papers' numbers beside ours, verdicts).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
.venv/bin/mptcplab reproduce all --quick --out report
echo "done: open report/index.html"
