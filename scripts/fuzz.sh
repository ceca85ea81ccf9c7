#!/usr/bin/env bash
# A longer fuzz campaign than the test suite's: N random cases of each scenario property
# (mutated scenarios, random valid scenarios) and M command-line calls (default N / 10), then
# the count of each outcome class. Usage: bash scripts/fuzz.sh N [M]
# (after scripts/setup.sh; see tests/python/test_fuzz.py for the properties).
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:?usage: scripts/fuzz.sh N [M]}
m=${2:-$((n / 10))}
report=$(mktemp)
trap 'rm -f "$report"' EXIT
status=0
MPTCPLAB_FUZZ_EXAMPLES=$n MPTCPLAB_FUZZ_CLI_EXAMPLES=$m MPTCPLAB_FUZZ_REPORT=$report \
    .venv/bin/python -m pytest tests/python/test_fuzz.py -q -p no:cacheprovider || status=$?
echo "outcomes (property: class count):"
.venv/bin/python -c 'import json,sys; [print(f"  {p}: " + ", ".join(f"{k} {v}" for k, v in sorted(c.items()))) for p, c in json.load(open(sys.argv[1])).items()]' "$report"
exit $status
