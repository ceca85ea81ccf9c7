"""Measures the start-up cost of the Python front end (recorded in BENCHMARKS.md).

Usage: .venv/bin/python scripts/startup_time.py [repeats]
Prints the median and maximum wall time of `import mptcplab` and `mptcplab --help` in fresh
interpreters, next to a bare interpreter start for reference.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path

CLI = str(Path(sys.executable).with_name("mptcplab"))
CASES = {
    "python -c pass (reference)": [sys.executable, "-c", "pass"],
    "python -c 'import mptcplab'": [sys.executable, "-c", "import mptcplab"],
    "mptcplab --help": [CLI, "--help"],
}


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    for name, cmd in CASES.items():
        subprocess.run(cmd, check=True, capture_output=True)  # warm the file cache
        times = []
        for _ in range(n):
            t0 = time.perf_counter()
            subprocess.run(cmd, check=True, capture_output=True)
            times.append(time.perf_counter() - t0)
        print(f"{name:<32} median {statistics.median(times) * 1e3:6.1f} ms   max {max(times) * 1e3:6.1f} ms   (n={n})")


if __name__ == "__main__":
    main()
