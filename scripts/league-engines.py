#!/usr/bin/env python3
"""Checks that the full scheduler league's rows from one engine equal another's on a sample.

After `mptcplab reproduce league --full --engine dask --out OUT`, the league's runs are
stored in OUT/league/cache/league-full/runs/<run key>.json. This script draws a sample of
the full league's points (a fixed seed, so the sample is the same every time), runs them
again with the local process-pool engine into a temporary directory, and compares every
stored field but `wall_s` (each run's wall-clock time) run by run:

    .venv/bin/python scripts/league-engines.py OUT/league/cache/league-full --sample 200 --jobs 2

Exit 0 when every sampled run is present in the cache and equal; 1 otherwise, listing the
differences.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
from pathlib import Path


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("cache", type=Path, help="the league's sweep directory (holds runs/)")
    ap.add_argument("--sample", type=int, default=200, help="runs to compare (default 200)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1, help="seed of the sample (default 1)")
    a = ap.parse_args()

    from mptcplab.experiments import league
    from mptcplab.experiments._data import shared_dir
    from mptcplab.sweep import sweep

    size = league.SIZES["full"]
    pts = league.points(league.chosen(league.walks(shared_dir()), size), size)
    sample = random.Random(a.seed).sample(pts, min(a.sample, len(pts)))
    base = league._base(league.walks(shared_dir())[0])
    with tempfile.TemporaryDirectory() as tmp:
        local = sweep(base, sample, repeat=1, jobs=a.jobs, out=Path(tmp) / "local", engine="local")
        bad = []
        for rec_path in sorted((Path(tmp) / "local" / "runs").glob("*.json")):
            mine = json.loads(rec_path.read_text())
            theirs_path = a.cache / "runs" / rec_path.name
            if not theirs_path.exists():
                bad.append(f"{rec_path.stem}: not in {a.cache}/runs")
                continue
            theirs = json.loads(theirs_path.read_text())
            for rec in (mine, theirs):
                rec.pop("wall_s")
            if mine != theirs:
                diff = sorted(k for k in mine["metrics"] if mine["metrics"][k] != theirs["metrics"].get(k))
                bad.append(f"{rec_path.stem}: differs in {diff[:5] or 'params'}")
    print(f"{len(local)} sampled runs of {len(pts)}: {len(local) - len(bad)} equal, {len(bad)} not")
    for line in bad:
        print("  " + line)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
