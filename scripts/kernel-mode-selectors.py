"""What selects Linux's operating mode: the UML kernel (virtual time, deterministic per seed)
run across seeds and across single-factor changes, one factor at a time, on
``scenarios/kernel/kernel-modes-example.toml`` (issue 37's example) and the three
``scenarios/kernel/kernel-*.toml`` compare scenarios.

Each run appends one row to ``scenarios/kernel/modes/runs.csv`` (the command that repeats it,
the UML kernel's release, source version and configuration hash, goodput, subflow shares,
the slow subflow's window and RTT over the measured window, window-limited time, the join
time, the application's writes); a row already there is skipped, so an interrupted
measurement resumes where it stopped. ``--summary`` writes ``scenarios/kernel/modes/summary.md``
from the CSV alone (no run).

Without ``host_jitter`` a UML run does not depend on its seed beyond the kernel's own
randomness; a level whose first 10 seeds give the same goodput to the last digit gets no more
seeds (``SAME_AFTER``). The factors are also changed one at a time at ``host_jitter = 33us``
(factor names ending ``@33us``), where the seed varies the hosts' timing.

The rule, declared before the runs:
- modes per level: :func:`mptcplab.validation.modes.find_modes` on the level's goodputs;
- frequencies compared across levels: the modes of all of a scenario's runs pooled (every
  level) by the same rule; each run belongs to the pooled mode whose range holds it (pooled
  outliers stay unclassified); a level's frequency of a mode is its runs in it / its runs,
  with a 95 % Wilson score interval; a level's change against the baseline is the difference
  of the two proportions with Newcombe's hybrid score interval (Newcombe 1998, method 10:
  from the two Wilson intervals, (d − √((p1−l1)² + (u2−p2)²), d + √((u1−p1)² + (p2−l2)²))).
With ``--backend linux`` the same measurement runs on this machine's kernel (root; the link
emulators at ``SCHED_FIFO`` unless the level says otherwise) over :data:`HOST_LEVELS`, into
``host-runs.csv`` and ``host-summary.md``: the host's kernel has timing of its own, so the seed
is not the only thing that differs between two runs, and every level gets its seeds.

Runs of another UML kernel (``MPTCPLAB_UML_CACHE`` naming a cache folder of its own, e.g. a
kernel built from the host's release series with ``MPTCPLAB_UML_TREE``) go into a CSV of their
own, ``--csv runs-<name>.csv``, summarised into ``summary-<name>.md``: a row is keyed by scenario,
factor, level and seed only, so two kernels must not share a file. Every run's kernel release
is checked against the file's first row.

Usage::

    python scripts/kernel-mode-selectors.py [--backend uml|linux] [--csv NAME] [--seeds 20] [--only FACTOR] [--summary]
"""

from __future__ import annotations

import argparse
import csv
import math
import shlex
import statistics
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "python"))

from mptcplab.kernel.uml.backend import run_uml

OUT = REPO / "scenarios" / "kernel" / "modes"
CSV = OUT / "runs.csv"
HOST_CSV = OUT / "host-runs.csv"
EXAMPLE = "scenarios/kernel/kernel-modes-example.toml"
J33 = "connections.mptcp.host_jitter=33us"
#: A level whose first ``SAME_AFTER`` seeds gave the same goodput to the last digit is
#: deterministic in the seed (the seed then reaches only the kernel's own randomness: initial
#: sequence numbers, MPTCP keys, ports): it gets no more seeds.
SAME_AFTER = 10
#: (scenario, factor, level, --set overrides). The baseline is the scenario as written.
LEVELS: list[tuple[str, str, str, list[str]]] = [
    (EXAMPLE, "baseline", "-", []),
    (EXAMPLE, "host_jitter", "10us", ["connections.mptcp.host_jitter=10us"]),
    (EXAMPLE, "host_jitter", "33us", ["connections.mptcp.host_jitter=33us"]),
    (EXAMPLE, "host_jitter", "100us", ["connections.mptcp.host_jitter=100us"]),
    (EXAMPLE, "write", "8KiB", ["connections.mptcp.app.write=8KiB"]),
    (EXAMPLE, "write", "128KiB", ["connections.mptcp.app.write=128KiB"]),
    # The first frame the client offers the cell path is its MP_JOIN SYN (the links carry no
    # ARP: the emulator's frames are IP): dropping it delays the join by the SYN's
    # retransmission timeout (TCP_TIMEOUT_INIT, 1 s); dropping two, by the backed-off second
    # one too. The run records when the cell subflow first delivered data (slow_first_data_s,
    # at the sampling interval's resolution).
    (EXAMPLE, "join", "1 SYN dropped", ["paths.cell.up.drop=[1]"]),
    (EXAMPLE, "join", "2 SYNs dropped", ["paths.cell.up.drop=[1, 2]"]),
    (EXAMPLE, "iw", "4", ["connections.mptcp.tcp.iw=4"]),
    (EXAMPLE, "iw", "20", ["connections.mptcp.tcp.iw=20"]),
    # The same factors where the hosts' timing varies (the simulator's host_jitter, 33 us as
    # measured on the kernel backend): whether a factor moves the distribution of modes.
    (EXAMPLE, "write @33us", "8KiB", [J33, "connections.mptcp.app.write=8KiB"]),
    (EXAMPLE, "write @33us", "128KiB", [J33, "connections.mptcp.app.write=128KiB"]),
    (EXAMPLE, "join @33us", "1 SYN dropped", [J33, "paths.cell.up.drop=[1]"]),
    (EXAMPLE, "iw @33us", "4", [J33, "connections.mptcp.tcp.iw=4"]),
    (EXAMPLE, "iw @33us", "20", [J33, "connections.mptcp.tcp.iw=20"]),
    ("scenarios/kernel/kernel-equal-paths.toml", "baseline", "-", []),
    ("scenarios/kernel/kernel-heterogeneous.toml", "baseline", "-", []),
    ("scenarios/kernel/kernel-rcvbuf-limited.toml", "baseline", "-", []),
    ("scenarios/kernel/kernel-equal-paths.toml", "host_jitter", "33us", [J33]),
    ("scenarios/kernel/kernel-heterogeneous.toml", "host_jitter", "33us", [J33]),
    ("scenarios/kernel/kernel-rcvbuf-limited.toml", "host_jitter", "33us", [J33]),
]
#: The levels measured on the host's kernel: the application's write size and the initial window
#: (what moved the mode on UML), and the emulators' scheduling ("emulator" is not a scenario key:
#: the level ``normal`` runs them at the normal priority, the backend's setting before SCHED_FIFO).
HOST_LEVELS: list[tuple[str, str, str, list[str]]] = [
    (EXAMPLE, "baseline", "-", []),
    (EXAMPLE, "write", "8KiB", ["connections.mptcp.app.write=8KiB"]),
    (EXAMPLE, "iw", "20", ["connections.mptcp.tcp.iw=20"]),
    (EXAMPLE, "emulator", "normal", []),
]
COLUMNS = ["scenario", "factor", "level", "seed", "command", "kernel", "uml_version", "uml_config_sha256",
           "goodput_mbps", "share_0", "share_1", "path_0", "path_1", "join_s", "slow_first_data_s", "slow_cwnd_mean_b", "slow_cwnd_p10_b",
           "slow_cwnd_p90_b", "slow_srtt_mean_ms", "fast_cwnd_mean_b", "fast_srtt_mean_ms", "rwnd_limited_s",
           "sndbuf_limited_s", "reinjected_b", "retrans_0", "retrans_1", "loss_drops", "queue_drops", "writes",
           "write_bytes"]


#: Host runs also record how the emulators ran and the machine's load.
HOST_COLUMNS = COLUMNS + ["emulator", "loadavg", "lateness_p99_s", "reliable"]


def _key(row: dict[str, Any]) -> tuple[str, str, str, str]:
    return (str(row["scenario"]), str(row["factor"]), str(row["level"]), str(row["seed"]))


def _rows(path: Path) -> list[dict[str, str]]:
    if not path.is_file():
        return []
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def _seed_invariant(rows: list[dict[str, str]], scenario: str, factor: str, level: str) -> bool:
    v = [r["goodput_mbps"] for r in rows if (r["scenario"], r["factor"], r["level"]) == (scenario, factor, level)]
    return len(v) >= SAME_AFTER and len(set(v)) == 1


def _series(ts: Any, entity: str, metric: str, frm: float, to: float) -> list[float]:
    s = ts[(ts.entity == entity) & (ts.metric == metric) & (ts.time_s >= frm) & (ts.time_s <= to)]
    return [float(v) for v in s.value]


def _pct(v: list[float], q: float) -> float:
    if not v:
        return math.nan
    v = sorted(v)
    return v[min(len(v) - 1, int(q * len(v)))]


def measure(scenario: str, factor: str, level: str, sets: list[str], seed: int, backend: str = "uml") -> dict[str, Any]:
    if backend == "uml":
        res = run_uml(REPO / scenario, seed=seed, overrides=sets)
    else:
        from mptcplab.kernel.backend import run_linux
        from mptcplab.kernel.emulator import EmulatorSched

        sched = EmulatorSched.normal() if (factor, level) == ("emulator", "normal") else None
        res = run_linux(REPO / scenario, seed=seed, overrides=sets, sched=sched)
    s = res.summary
    c = s["connections"][0]
    subs = sorted(s["subflows"], key=lambda x: x["subflow"])
    res_sc = res.scenario.resolved
    warmup = float(res_sc["output"]["warmup"].rstrip("s"))
    end = float(s["duration_s"])
    ts = res.timeseries
    # The slow subflow: the one on the path with the longer delay.
    rtt = [sub["min_rtt_s"] or 0 for sub in subs]
    slow, fast = (1, 0) if len(subs) > 1 and rtt[1] >= rtt[0] else (0, 1 if len(subs) > 1 else 0)
    ent = [f"{c['name']}/{sub['path']}" for sub in subs]
    sc_ = _series(ts, ent[slow], "cwnd_bytes", warmup, end)
    fc = _series(ts, ent[fast], "cwnd_bytes", warmup, end)
    sr = _series(ts, ent[slow], "srtt_s", warmup, end)
    fr = _series(ts, ent[fast], "srtt_s", warmup, end)
    cmd = ["mptcplab", "run", scenario, "--backend", backend, "--seed", str(seed), *[a for x in sets for a in ("--set", x)]]
    if (factor, level) == ("emulator", "normal"):
        cmd += ["--emulator-priority", "normal"]
    uml = s.get("uml") or {}
    emu = s.get("emulator") or {}
    host = {
        "emulator": "/".join(sorted({x.get("policy", "") for x in emu.get("sched") or []})),
        "loadavg": (emu.get("host") or {}).get("loadavg", ""),
        "lateness_p99_s": emu.get("p99_lateness_s", ""), "reliable": emu.get("reliable", ""),
    } if backend == "linux" else {}
    return host | {
        "scenario": Path(scenario).stem, "factor": factor, "level": level, "seed": seed, "command": shlex.join(cmd),
        "kernel": s["kernel"], "uml_version": uml.get("version"), "uml_config_sha256": uml.get("config_sha256"),
        "goodput_mbps": round(c["goodput_bps"] / 1e6, 5),
        "share_0": round(subs[0]["share"], 5), "share_1": round(subs[1]["share"], 5) if len(subs) > 1 else "",
        "path_0": subs[0]["path"], "path_1": subs[1]["path"] if len(subs) > 1 else "",
        "join_s": round(subs[1]["established_s"], 6) if len(subs) > 1 and subs[1]["established_s"] is not None else "",
        "slow_first_data_s": subs[slow]["first_data_s"] if len(subs) > 1 else "",
        "slow_cwnd_mean_b": round(statistics.fmean(sc_)) if sc_ else "", "slow_cwnd_p10_b": _pct(sc_, 0.1),
        "slow_cwnd_p90_b": _pct(sc_, 0.9), "slow_srtt_mean_ms": round(statistics.fmean(sr) * 1e3, 2) if sr else "",
        "fast_cwnd_mean_b": round(statistics.fmean(fc)) if fc else "",
        "fast_srtt_mean_ms": round(statistics.fmean(fr) * 1e3, 2) if fr else "",
        "rwnd_limited_s": round(c["rwnd_limited_time_s"], 3), "sndbuf_limited_s": round(c["sndbuf_limited_time_s"], 3),
        "reinjected_b": c["reinjected_bytes"], "retrans_0": subs[0]["retransmitted_segments"],
        "retrans_1": subs[1]["retransmitted_segments"] if len(subs) > 1 else "",
        "loss_drops": sum(x["loss_drops"] for x in s["links"]),
        "queue_drops": sum(x["queue_drops"] for x in s["links"]),
        "writes": c.get("writes"), "write_bytes": c.get("write_bytes") or "",
    }


def summary_path(csv_path: Path) -> Path:
    """``runs.csv`` -> ``summary.md``, ``host-runs.csv`` -> ``host-summary.md``,
    ``runs-NAME.csv`` -> ``summary-NAME.md``."""
    return csv_path.with_name(csv_path.stem.replace("runs", "summary", 1) + ".md")


def run_all(seeds: int, only: str | None, backend: str = "uml", path: Path | None = None) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    columns, levels = (COLUMNS, LEVELS) if backend == "uml" else (HOST_COLUMNS, HOST_LEVELS)
    path = path or (CSV if backend == "uml" else HOST_CSV)
    rows = _rows(path)
    done = {_key(r) for r in rows}
    new = not path.is_file()
    # Seeds in rounds over every level: an interrupted measurement has every level covered alike.
    for seed in range(1, seeds + 1):
        for scenario, factor, level, sets in levels:
            if only and factor != only and Path(scenario).stem != only:
                continue
            if (Path(scenario).stem, factor, level, str(seed)) in done:
                continue
            if backend == "uml" and _seed_invariant(rows, Path(scenario).stem, factor, level):
                continue
            row = measure(scenario, factor, level, sets, seed, backend)
            if rows and row["kernel"] != rows[0]["kernel"]:
                sys.exit(f"error: {path.name}: kernel {row['kernel']} is not the file's ({rows[0]['kernel']}); "
                         "give another kernel's runs a file of their own (--csv)")
            rows.append({k: str(v) for k, v in row.items()})
            with open(path, "a", newline="") as f:
                w = csv.DictWriter(f, columns)
                if new:
                    w.writeheader()
                    new = False
                w.writerow(row)
            print(f"{row['scenario']} {factor}={level} seed {seed}: {row['goodput_mbps']:.3f} Mbit/s "
                  f"share0 {row['share_0']}", flush=True)


def mechanism(scenario: str, factor: str, level: str, seed: int) -> None:
    """One run again with captures (``--pcap``), its data sequence runs per subflow by
    ``scripts/dsn-runs.py`` over the measured window, written to ``OUT/mechanism/``. A run
    with captures is deterministic but not identical to the run without (tcpdump's work reads
    the virtual clock), so its goodput is written beside the runs' statistics."""
    import subprocess
    import tempfile

    sets = next(x[3] for x in LEVELS if (x[0], x[1], x[2]) == (scenario, factor, level))
    dst = OUT / "mechanism"
    dst.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        res = run_uml(REPO / scenario, seed=seed, overrides=sets, pcap_dir=Path(tmp) / "pcap")
        warmup = res.scenario.resolved["output"]["warmup"].rstrip("s")
        pcaps = sorted(str(p) for p in (Path(tmp) / "pcap").iterdir())
        runs = subprocess.run([sys.executable, str(REPO / "scripts" / "dsn-runs.py"), "--from", warmup, *pcaps],
                              capture_output=True, text=True, check=True).stdout
    c = res.summary["connections"][0]
    ts = res.timeseries
    steps = []
    for sub in res.summary["subflows"]:
        ent = f"{c['name']}/{sub['path']}"
        cw = ts[(ts.entity == ent) & (ts.metric == "cwnd_bytes")].sort_values("time_s")
        prev = None
        out = []
        for t, v in zip(cw.time_s, cw.value, strict=True):
            if v != prev:
                out.append(f"{t:.1f}s {int(v)}")
                prev = v
        steps.append(f"# {sub['path']} cwnd (B) where it changed: " + ", ".join(out[:40]) + (" ..." if len(out) > 40 else ""))
    subs = ", ".join(f"{x['path']} {x['share']:.3f}" for x in res.summary["subflows"])
    cmd = ["mptcplab", "run", scenario, "--backend", "uml", "--seed", str(seed), *[a for x in sets for a in ("--set", x)],
           "--pcap", "DIR"]
    name = f"{Path(scenario).stem}-{factor}-{level}-seed{seed}".replace(" ", "_")
    (dst / f"{name}.txt").write_text(
        f"# {shlex.join(cmd)}; python scripts/dsn-runs.py --from {warmup} DIR/*.pcap\n"
        f"# with captures: goodput {c['goodput_bps'] / 1e6:.4f} Mbit/s, shares {subs}\n" + "\n".join(steps) + f"\n{runs}")
    print(f"{name}: {c['goodput_bps'] / 1e6:.4f} Mbit/s, shares {subs}")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--backend", choices=["uml", "linux"], default="uml")
    ap.add_argument("--csv", help="the runs' file under scenarios/kernel/modes/ (default runs.csv, host-runs.csv)")
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--only", help="one factor (or scenario name) only")
    ap.add_argument("--summary", action="store_true", help="write summary.md from the CSV, run nothing")
    ap.add_argument("--mechanism", nargs=4, metavar=("SCENARIO", "FACTOR", "LEVEL", "SEED"),
                    help="one run again with captures and its data sequence runs (scripts/dsn-runs.py)")
    a = ap.parse_args()
    csv_path = OUT / a.csv if a.csv else (CSV if a.backend == "uml" else HOST_CSV)
    if a.mechanism:
        mechanism(a.mechanism[0], a.mechanism[1], a.mechanism[2], int(a.mechanism[3]))
    elif a.summary:
        from kernel_mode_summary import write_summary  # type: ignore[import-not-found]

        write_summary(csv_path, summary_path(csv_path), host=a.backend == "linux")
    else:
        run_all(a.seeds, a.only, a.backend, csv_path)
