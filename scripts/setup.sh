#!/usr/bin/env bash
# Sets up everything the project needs, idempotently:
#   - checks the Rust toolchain (cargo, rustfmt, clippy) and a C linker (apt-get only if missing),
#   - creates .venv with Python >= 3.11,
#   - installs mptcplab with its test and cluster extras (editable; the extension module, with
#     the Linux backend's link emulator in it, is built by maturin in release mode), rebuilding only when the Rust sources or the package
#     metadata changed since the last install.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ -f "$HOME/.cargo/env" ]; then
    # shellcheck disable=SC1091
    . "$HOME/.cargo/env"
fi
if ! command -v cargo >/dev/null 2>&1; then
    echo "error: cargo not found: mptcplab needs a Rust toolchain (rustup, stable >= 1.80)" >&2
    exit 1
fi

apt_needed=()
command -v cc >/dev/null 2>&1 || apt_needed+=(build-essential)
PYTHON=${PYTHON:-python3}
if ! command -v "$PYTHON" >/dev/null 2>&1; then
    apt_needed+=(python3 python3-venv)
elif ! "$PYTHON" -c 'import venv, ensurepip' >/dev/null 2>&1; then
    apt_needed+=(python3-venv)
fi
# The test suite opens the reproduction report in a real headless browser, and reads the
# simulator's packet captures with tshark.
if [ "${MPTCPLAB_SETUP_TEST_TOOLS:-0}" = 1 ]; then
    command -v chromium >/dev/null 2>&1 || apt_needed+=(chromium)
    command -v tshark >/dev/null 2>&1 || apt_needed+=(tshark)
fi
# The Linux backend (run --backend linux) drives namespaces with iproute2 (ip, nstat), turns
# NIC offloads off with ethtool, and captures with tcpdump (--pcap).
command -v ip >/dev/null 2>&1 || apt_needed+=(iproute2)
command -v nstat >/dev/null 2>&1 || apt_needed+=(iproute2)
command -v ethtool >/dev/null 2>&1 || apt_needed+=(ethtool)
command -v tcpdump >/dev/null 2>&1 || apt_needed+=(tcpdump)
if [ ${#apt_needed[@]} -gt 0 ]; then
    echo "setup: installing ${apt_needed[*]} with apt-get"
    apt-get update
    # shellcheck disable=SC2046
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $(printf '%s\n' "${apt_needed[@]}" | sort -u)
fi
if ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
    echo "error: $PYTHON is $("$PYTHON" --version 2>&1); mptcplab needs Python >= 3.11 (set PYTHON=...)" >&2
    exit 1
fi

if [ ! -x .venv/bin/python ]; then
    echo "setup: creating .venv"
    "$PYTHON" -m venv .venv
fi

# Rebuild only when something the extension or the package metadata depends on changed.
stamp_file=.venv/.mptcplab-build-stamp
stamp=$( (cat pyproject.toml Cargo.toml Cargo.lock; find crates -name '*.rs' -o -name Cargo.toml -o -name '*.toml' -path '*/presets/*' | LC_ALL=C sort | xargs cat) | sha256sum | cut -d' ' -f1)
if [ "$(cat "$stamp_file" 2>/dev/null)" != "$stamp" ] || ! .venv/bin/python -c 'import mptcplab._core' >/dev/null 2>&1; then
    echo "setup: building and installing mptcplab (release build of the Rust extension)"
    .venv/bin/python -m pip install --quiet --upgrade pip
    .venv/bin/python -m pip install --quiet -e ".[test,cluster]"
    echo "$stamp" > "$stamp_file"
else
    echo "setup: mptcplab is up to date in .venv"
fi

# The Linux backend's real-time link emulator is part of the extension module built above
# (`python -m mptcplab.kernel.linkemu`); `cargo build --release -p mptcplab-linkemu` builds it
# as a program of its own, which MPTCPLAB_LINKEMU=target/release/mptcplab-linkemu selects.
