#!/usr/bin/env bash
# A longer fuzz campaign than the test suite's: N random cases of each scenario property
# (mutated scenarios, random valid scenarios, names, nesting and numbers at the extremes) and
# M command-line calls of each command-line property (default N / 10; the file-system,
# concurrency and cache properties run whole commands, so they take M / 10 cases each), then
# the count of each outcome class. Usage: bash scripts/fuzz.sh N [M]
# (after scripts/setup.sh, as root for the tiny file systems; see tests/python/test_fuzz*.py
# for the properties).
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:?usage: scripts/fuzz.sh N [M]}
m=${2:-$((n / 10))}
report=$(mktemp)
files_report=$(mktemp)
trap 'rm -f "$report" "$files_report"' EXIT
status=0
MPTCPLAB_FUZZ_EXAMPLES=$n MPTCPLAB_FUZZ_CLI_EXAMPLES=$m MPTCPLAB_FUZZ_REPORT=$report \
    .venv/bin/python -m pytest tests/python/test_fuzz.py tests/python/test_fuzz_extremes.py -q -p no:cacheprovider || status=$?
MPTCPLAB_FUZZ_EXAMPLES=$n MPTCPLAB_FUZZ_CLI_EXAMPLES=$(((m + 9) / 10)) MPTCPLAB_FUZZ_REPORT_FILES=$files_report \
    .venv/bin/python -m pytest tests/python/test_fuzz_files.py -q -p no:cacheprovider || status=$?
echo "outcomes (property: class count):"
.venv/bin/python -c 'import json,sys; [print(f"  {p}: " + ", ".join(f"{k} {v}" for k, v in sorted(c.items()))) for f in sys.argv[1:] for p, c in json.load(open(f)).items()]' "$report" "$files_report"
exit $status
