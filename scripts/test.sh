#!/usr/bin/env bash
# Sets up (the package, the test tools and the uml backend's kernel), then runs every test:
# rustfmt check, clippy with warnings denied, the Rust tests, and the Python tests (API,
# command line, units, errors, both kernel backends).
set -euo pipefail
cd "$(dirname "$0")/.."
MPTCPLAB_SETUP_TEST_TOOLS=1 bash scripts/setup.sh
# The uml backend's kernel: built once per machine (about 9 minutes on two cores), then cached.
bash scripts/setup-uml.sh
if [ -f "$HOME/.cargo/env" ]; then
    # shellcheck disable=SC1091
    . "$HOME/.cargo/env"
fi
export PYO3_PYTHON="$PWD/.venv/bin/python"
echo "== cargo fmt --check"
cargo fmt --all --check
echo "== cargo clippy (warnings denied)"
cargo clippy --workspace --all-targets --locked -- -D warnings
echo "== cargo test"
cargo test --workspace --locked
echo "== pytest"
.venv/bin/python -m pytest tests/python
