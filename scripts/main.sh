#!/usr/bin/env bash
# The main job: set up, then run the bundled NSDI'12 WiFi + 3G scenario and plot it.
# (Until the reproduction report exists, this is the demonstration run.)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
out=out/nsdi12-wifi-3g
.venv/bin/mptcplab run scenarios/nsdi12-wifi-3g.toml --out "$out"
.venv/bin/mptcplab plot "$out"
echo "done: results in $out/, figures in $out/plots/"
