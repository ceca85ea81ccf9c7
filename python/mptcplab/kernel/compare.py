"""``mptcplab compare``: the same scenario on the simulator and on the Linux kernel.

Both backends run one scenario, every connection with ``stack = "linux"`` (inserted where the
scenario does not write ``stack``; another stack is refused): the simulator then models each
choice as upstream Linux makes it (the ``default`` scheduler, CUBIC, RACK-TLP and PRR, the
sysctl buffer triples auto-tuned and charged in truesize, the free buffer space advertised,
window updates on every subflow, the MPTCP-level retransmission timer, the backend's
path-manager timing, Linux's option sizes and the hosts' measured processing jitter), and keys the scenario writes
mean the same on both (a fixed ``rcvbuf`` is ``SO_RCVBUF`` on the kernel's socket). ``bbr``
runs on both. Each backend runs ``runs`` times (seeds ``seed``,
``seed + 1``, ...); the report gives, per metric, each backend's median and range and the
kernel's relative difference from the simulator, and for each connection's goodput both
backends' operating modes and whether they agree by the validation's rule
(:func:`mptcplab.validation.modes.distribution_agreement`: a unimodal kernel's median within
10 %, or every kernel mode holding 20 % of the runs matched within 10 % by a simulator mode with
a share within 25 points).
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mptcplab.errors import config_error
from mptcplab.kernel.support import check_supported
from mptcplab.scenario import Overrides, Scenario, load_scenario

__all__ = ["compare", "compare_metrics", "linux_stack"]


def linux_stack(sc: Scenario) -> Scenario:
    """``sc`` with ``stack = "linux"`` on every connection that does not write a stack;
    refuses (:class:`ConfigError`) a connection that writes another one."""
    sets = {}
    for c in sc.data.get("connections", []):
        stack = c.get("stack")
        if stack is None:
            sets[f"connections.{c['name']}.stack"] = "linux"
        elif stack != "linux":
            raise config_error(f"connections.{c['name']}.stack", f"`{stack}`: both backends must model upstream Linux; "
                               "use stack = \"linux\" (or leave it out)", sc.source)
    return sc.with_overrides(sets, label="compare")


def compare_metrics(summary: dict[str, Any]) -> dict[str, float | None]:
    """The numbers compared: per connection goodput and download time; per subflow goodput,
    share, mean and minimum RTT."""
    out: dict[str, float | None] = {}
    for c in summary["connections"]:
        out[f"{c['name']}: goodput (Mbit/s)"] = c["goodput_bps"] / 1e6
        if c.get("download_time_s") is not None:
            out[f"{c['name']}: download time (s)"] = c["download_time_s"]
    for s in summary["subflows"]:
        key = f"{s['connection']}/{s['path']}"
        out[f"{key}: goodput (Mbit/s)"] = s["goodput_bps"] / 1e6
        if any(t["connection"] == s["connection"] and t is not s for t in summary["subflows"]):
            out[f"{key}: share"] = s["share"]
        for f, label in (("mean_rtt_s", "mean RTT (ms)"), ("min_rtt_s", "min RTT (ms)")):
            if s.get(f) is not None:
                out[f"{key}: {label}"] = s[f] * 1e3
    return out


def _stats(values: list[float]) -> dict[str, float] | None:
    if not values:
        return None
    return {"median": statistics.median(values), "min": min(values), "max": max(values), "n": len(values)}


def compare(
    scenario: str | Path | dict[str, Any] | Scenario, runs: int = 3, overrides: Overrides = None,
    out: str | Path | None = None, progress: Callable[[str, int], None] | None = None, backend: str = "linux",
) -> dict[str, Any]:
    """Runs the simulator and a kernel backend (``linux``, the host's kernel, or ``uml``, the
    UML kernel in virtual time) ``runs`` times each; returns ``{"rows": [...], "sim": [...],
    "linux": [...], "backend": backend}`` where ``linux`` holds the kernel's summaries and each
    row a metric, both sides' statistics and ``rel_diff`` (kernel median / simulator median
    − 1). With ``out``, writes ``compare.json``, ``compare.csv`` and ``compare.png`` there."""
    from mptcplab.kernel.backend import run_linux
    from mptcplab.kernel.uml.backend import run_uml
    from mptcplab.runner import run

    if backend not in ("linux", "uml"):
        raise config_error("--backend", f"`{backend}`: one of linux, uml")
    run_kernel = run_uml if backend == "uml" else run_linux
    sc = linux_stack(load_scenario(scenario, overrides))
    check_supported(sc, backend)
    sims, kernels = [], []
    for k in range(runs):
        if progress:
            progress("simulator", k)
        sims.append(run(sc, seed=sc.seed + k).summary)
    for k in range(runs):
        if progress:
            progress(backend, k)
        kernels.append(run_kernel(sc, seed=sc.seed + k).summary)
    sm = [compare_metrics(s) for s in sims]
    km = [compare_metrics(s) for s in kernels]
    keys = list(dict.fromkeys([*sm[0], *km[0]]))
    rows = []
    for key in keys:
        a = _stats([m[key] for m in sm if m.get(key) is not None])
        b = _stats([m[key] for m in km if m.get(key) is not None])
        rel = (b["median"] / a["median"] - 1) if a and b and a["median"] else None
        row: dict[str, Any] = {"metric": key, "sim": a, "linux": b, "rel_diff": rel}
        if key.endswith(": goodput (Mbit/s)") and "/" not in key.split(":")[0] and a and b:
            row |= _by_modes([m[key] for m in sm if m.get(key) is not None],
                             [m[key] for m in km if m.get(key) is not None])
        rows.append(row)
    result = {"scenario": sc.name, "runs": runs, "rows": rows, "sim": sims, "linux": kernels, "backend": backend}
    if out is not None:
        _write(result, Path(out))
    return result


def _by_modes(sim: list[float], kernel: list[float]) -> dict[str, Any]:
    """Both backends' modes of one metric and their agreement by distribution."""
    from mptcplab.validation.modes import distribution_agreement, find_modes

    a = distribution_agreement(kernel, sim)
    return {"modes": {"sim": [vars(m) for m in find_modes(sim).by_value()],
                      "linux": [vars(m) for m in find_modes(kernel).by_value()]},
            "agrees": a.agrees, "agreement": a.reason}


def _write(result: dict[str, Any], out: Path) -> None:
    import csv

    out.mkdir(parents=True, exist_ok=True)
    (out / "compare.json").write_text(json.dumps(result, indent=2) + "\n")
    with open(out / "compare.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["metric", "sim_median", "sim_min", "sim_max", "linux_median", "linux_min", "linux_max", "rel_diff"])
        for r in result["rows"]:
            a, b = r["sim"] or {}, r["linux"] or {}
            w.writerow([r["metric"], a.get("median"), a.get("min"), a.get("max"), b.get("median"), b.get("min"), b.get("max"), r["rel_diff"]])
    _plot(result, out / "compare.png")


def _plot(result: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [r for r in result["rows"] if r["sim"] and r["linux"] and "goodput" in r["metric"]]
    fig, ax = plt.subplots(figsize=(max(5, 1.4 * len(rows)), 3.6))
    xs = range(len(rows))
    for off, name, color in ((-0.2, "sim", "tab:blue"), (0.2, "linux", "tab:orange")):
        med = [r[name]["median"] for r in rows]
        err = [[r[name]["median"] - r[name]["min"] for r in rows], [r[name]["max"] - r[name]["median"] for r in rows]]
        ax.bar([x + off for x in xs], med, width=0.4, yerr=err, capsize=3, label="simulator" if name == "sim" else "Linux kernel", color=color)
    ax.set_xticks(list(xs), [r["metric"].replace(": goodput (Mbit/s)", "") for r in rows], rotation=20, ha="right")
    ax.set_ylabel("goodput (Mbit/s)")
    ax.set_title(f"{result['scenario']}: median and range of {result['runs']} runs each", fontsize=10)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
