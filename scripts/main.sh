#!/usr/bin/env bash
# The main job: set up, then reproduce every seed result with the papers' repetition counts
# and build the report (report/index.html: each paper's claims beside ours, tolerances,
# computed verdicts, figures).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
.venv/bin/mptcplab reproduce all --out report
echo "done: open report/index.html"
