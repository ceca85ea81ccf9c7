"""Writes the validation grid, scenarios/validation/*.toml: two-host scenarios that run on
both backends (`stack = "linux"`), each covering one regime where the simulator must agree
with the Linux kernel (`mptcplab validate`).

Every scenario is short (10-15 s, downloads sized to finish) and carries at most 100 Mbit/s
in total, so that five kernel runs of the whole grid take well under an hour and the
user-space link emulator keeps up on two cores. Queues are given in packets of 1500 B:
"1 BDP" is rate x base RTT, "small" a quarter of that (at least 10 packets), "bloated" a
500 ms or 1 s standing queue at the link rate.

Usage: python scripts/make-validation-grid.py   (rewrites the directory's TOML files)
"""

from __future__ import annotations

import math
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "scenarios" / "validation"
TRACES = "../shared/traces/cellular"


def bdp_packets(mbit: float, rtt_ms: float, factor: float = 1.0) -> int:
    return max(10, math.ceil(factor * mbit * 1e6 * rtt_ms / 1e3 / 8 / 1500))


def path(name: str, mbit: float, rtt_ms: float, queue: str | None = None, loss: str | None = None) -> dict:
    p = {"name": name, "rate": f"{mbit:g}Mbit", "delay": f"{rtt_ms / 2:g}ms",
         "queue": queue or f"{bdp_packets(mbit, rtt_ms)} packets"}
    if loss:
        p["loss"] = loss
    return p


def toml_value(v: object) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int | float):
        return str(v)
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{k} = {toml_value(x)}" for k, x in v.items()) + " }"
    if isinstance(v, list):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    return '"' + str(v) + '"'


GRID: list[dict] = []


def add(name: str, regime: str, description: str, paths: list[dict], conn: dict, duration: str = "10s",
        warmup: str = "2s", comment: str = "") -> None:
    GRID.append({"name": name, "regime": regime, "description": description, "paths": paths, "conn": conn,
                 "duration": duration, "warmup": warmup, "comment": comment})


def mptcp(paths: list[dict], **keys: object) -> dict:
    return {"kind": "mptcp", "paths": [p["name"] for p in paths], "app": {"kind": "bulk"}, **keys}


def tcp(p: dict, **keys: object) -> dict:
    return {"kind": "tcp", "paths": [p["name"]], "app": {"kind": "bulk"}, **keys}


def wifi(mbit: float, rtt: float, **kw: str) -> dict:
    return path("wifi", mbit, rtt, **kw)


def cell(mbit: float, rtt: float, **kw: str) -> dict:
    return path("cell", mbit, rtt, **kw)


# --- receive-buffer-limited: a fixed SO_RCVBUF, or an auto-tuned triple with a small max ---
for size, (w, wr, c, cr) in {
    "64KB": (10, 20, 2, 150), "128KB": (10, 20, 5, 100), "256KB": (20, 20, 5, 150),
    "512KB": (50, 10, 10, 200), "1MB": (50, 20, 10, 100),
}.items():
    ps = [wifi(w, wr), cell(c, cr)]
    add(f"rcvbuf-fixed-{size.lower()}", "rcvbuf",
        f"receive buffer fixed at {size} (SO_RCVBUF): WiFi-like {w} Mbit/s {wr} ms + 3G-like {c} Mbit/s {cr} ms RTT "
        f"(ratio {cr / wr:g})", ps, mptcp(ps, rcvbuf=size), duration="12s", warmup="3s")
for label, (w, wr, c, cr) in {"ratio2": (20, 20, 20, 40), "ratio20": (20, 10, 5, 200)}.items():
    ps = [wifi(w, wr), cell(c, cr)]
    add(f"rcvbuf-fixed-256kb-{label}", "rcvbuf",
        f"receive buffer fixed at 256KB: {w} Mbit/s {wr} ms + {c} Mbit/s {cr} ms RTT (RTT ratio {cr / wr:g})",
        ps, mptcp(ps, rcvbuf="256KB"), duration="12s", warmup="3s")
for mx, dflt, (w, wr, c, cr) in (("256KB", "64KB", (20, 20, 5, 150)), ("512KB", "128KB", (50, 10, 10, 100)),
                                 ("1MB", "128KB", (50, 20, 10, 200))):
    ps = [wifi(w, wr), cell(c, cr)]
    add(f"rcvbuf-auto-max-{mx.lower()}", "rcvbuf",
        f"receive buffer auto-tuned (tcp_rmem 4KB {dflt} {mx}): {w} Mbit/s {wr} ms + {c} Mbit/s {cr} ms RTT "
        f"(ratio {cr / wr:g})", ps, mptcp(ps, rcvbuf={"min": "4KB", "default": dflt, "max": mx}), duration="12s", warmup="3s")

# --- send-buffer-limited ---
kato = [path("fast", 50, 0.2, queue="1000 packets"), path("slow", 50, 80, queue="1000 packets")]
add("sndbuf-kato-wmem-1mib", "sndbuf",
    "Kato et al. scaled to 2 x 50 Mbit/s: 0.2 ms + 80 ms RTT, tcp_wmem fixed at 1 MiB (min = default = max)",
    kato, mptcp(kato, sndbuf={"min": "1MiB", "default": "1MiB", "max": "1MiB"}),
    comment="Kato et al. (seed 001) Sec. III.A used two 100 Mbit/s paths; 50 Mbit/s each keeps the grid within the\n"
            "emulator's 100 Mbit/s budget. tcp_wmem = 1048576 1048576 1048576 and 1000-packet queues as in the paper.")
add("sndbuf-kato-fixed-1mib", "sndbuf",
    "Kato et al. scaled to 2 x 50 Mbit/s: 0.2 ms + 80 ms RTT, send buffer fixed at 1 MiB (SO_SNDBUF, doubled by Linux)",
    kato, mptcp(kato, sndbuf="1MiB"))
ps = [path("a", 20, 10), path("b", 20, 100)]
add("sndbuf-fixed-256kb", "sndbuf", "send buffer fixed at 256KB (SO_SNDBUF): 20 Mbit/s 10 ms + 20 Mbit/s 100 ms RTT",
    ps, mptcp(ps, sndbuf="256KB"), duration="12s", warmup="3s")
ps = [path("a", 40, 20), path("b", 10, 150)]
add("sndbuf-auto-max-512kb", "sndbuf", "send buffer auto-tuned (tcp_wmem 4KB 16KB 512KB): 40 Mbit/s 20 ms + 10 Mbit/s 150 ms RTT",
    ps, mptcp(ps, sndbuf={"min": "4KB", "default": "16KB", "max": "512KB"}), duration="12s", warmup="3s")
ps = [path("a", 40, 10), path("b", 40, 160)]
add("sndbuf-auto-linux", "sndbuf", "send buffer auto-tuned with Linux's tcp_wmem (4KB 16KB 4MiB): 40 Mbit/s 10 ms + 40 Mbit/s 160 ms RTT",
    ps, mptcp(ps), duration="12s", warmup="3s")

# --- heterogeneous rates and RTTs, small and bloated queues ---
ps = [path("fast", 30, 20, queue=f"{bdp_packets(30, 20, 0.25)} packets"), path("slow", 5, 100, queue=f"{bdp_packets(5, 100, 0.25)} packets")]
add("hetero-small-queues", "hetero", "30 Mbit/s 20 ms + 5 Mbit/s 100 ms RTT, queues of a quarter BDP", ps, mptcp(ps))
ps = [path("fast", 10, 30, queue=f"{bdp_packets(10, 500)} packets"), path("slow", 5, 80, queue=f"{bdp_packets(5, 1000)} packets")]
add("hetero-bloated-queues", "hetero", "10 Mbit/s 30 ms + 5 Mbit/s 80 ms RTT, bloated queues (500 ms and 1 s at the link rate)",
    ps, mptcp(ps), duration="15s", warmup="5s")
ps = [path("fast", 40, 20), path("slow", 4, 20)]
add("hetero-rate-10x", "hetero", "rates 40 and 4 Mbit/s, equal 20 ms RTTs, 1 BDP queues", ps, mptcp(ps))
ps = [{"name": "wifi", "preset": "nsdi12-wifi"}, {"name": "3g", "preset": "nsdi12-3g"}]
add("hetero-nsdi12-wifi-3g", "hetero", "NSDI'12 WiFi (8 Mbit/s, 20 ms, 80 ms buffer) + 3G (2 Mbit/s, 150 ms, 2 s buffer) presets",
    ps, mptcp(ps), duration="15s", warmup="5s")

# --- random loss ---
for loss in ("0%", "0.5%", "1%", "2%"):
    ps = [path("a", 20, 20, loss=loss if loss != "0%" else None), path("b", 10, 60, loss=loss if loss != "0%" else None)]
    add(f"loss-{loss.rstrip('%').replace('.', 'p')}pct", "loss",
        f"random loss {loss} on both paths (both directions): 20 Mbit/s 20 ms + 10 Mbit/s 60 ms RTT", ps, mptcp(ps))

# --- cellular capacity trace ---
lte = {"name": "lte", "delay": "30ms", "queue": "250 packets",
       "down": {"trace": f"{TRACES}/Verizon-LTE-short.down"}, "up": {"trace": f"{TRACES}/Verizon-LTE-short.up"}}
ps = [path("wifi", 10, 20), lte]
add("trace-wifi-lte", "trace", "WiFi-like 10 Mbit/s 20 ms + the Verizon LTE Mahimahi trace (60 ms base RTT, 250-packet queue)",
    ps, mptcp(ps), duration="15s", warmup="3s")
umts = {"name": "umts", "delay": "60ms", "queue": "200 packets",
        "down": {"trace": f"{TRACES}/TMobile-UMTS-driving.down"}, "up": {"trace": f"{TRACES}/TMobile-UMTS-driving.up"}}
add("trace-tcp-umts", "trace", "single-path cubic over the T-Mobile UMTS Mahimahi trace (120 ms base RTT, 200-packet queue)",
    [umts], tcp(umts), duration="15s", warmup="3s")

# --- single path ---
p = path("p", 20, 40)
add("tcp-reno", "single", "single-path reno, 20 Mbit/s 40 ms RTT, 1 BDP queue", [p], tcp(p, cc="reno"))
add("tcp-cubic", "single", "single-path cubic, 20 Mbit/s 40 ms RTT, 1 BDP queue", [p], tcp(p))
p = path("p", 20, 60, loss="1%")
add("tcp-cubic-loss-1pct", "single", "single-path cubic, 20 Mbit/s 60 ms RTT, 1% random loss", [p], tcp(p))
p = path("p", 30, 80)
add("tcp-reno-rcvbuf-128kb", "single", "single-path reno limited by a fixed 128KB receive buffer, 30 Mbit/s 80 ms RTT",
    [p], tcp(p, cc="reno", rcvbuf="128KB"))

# --- idle and periodic applications, downloads ---
ps = [wifi(10, 20), cell(3, 150)]
add("periodic-500kb-1s", "app", "500KB every 1 s (10 chunks; mean chunk time): WiFi-like 10 Mbit/s 20 ms + 3G-like 3 Mbit/s 150 ms",
    ps, mptcp(ps, app={"kind": "periodic", "size": "500KB", "period": "1s", "count": 10}), duration="12s", warmup="0s")
p = path("p", 20, 50)
add("periodic-idle-restart", "app", "single-path cubic, 1MB every 2 s (5 chunks, idle restart between them; mean chunk time), 20 Mbit/s 50 ms",
    [p], tcp(p, app={"kind": "periodic", "size": "1MB", "period": "2s", "count": 5}), duration="12s", warmup="0s")
ps = [wifi(10, 20), cell(3, 150)]
add("download-2mb", "app", "2MB download (download time): WiFi-like 10 Mbit/s 20 ms + 3G-like 3 Mbit/s 150 ms",
    ps, mptcp(ps, app={"kind": "download", "size": "2MB"}), warmup="0s")
ps = [path("a", 30, 20), path("b", 10, 80)]
add("download-20mb", "app", "20MB download (download time): 30 Mbit/s 20 ms + 10 Mbit/s 80 ms", ps,
    mptcp(ps, app={"kind": "download", "size": "20MB"}), warmup="0s")
ps = [path("a", 30, 20), path("b", 10, 150)]
add("download-8mb-rcvbuf-256kb", "app", "8MB download with a fixed 256KB receive buffer: 30 Mbit/s 20 ms + 10 Mbit/s 150 ms",
    ps, mptcp(ps, rcvbuf="256KB", app={"kind": "download", "size": "8MB"}), duration="15s", warmup="0s")

# --- bbr (the kernel's; the simulator needs its own model) ---
ps = [path("a", 20, 20), path("b", 10, 80)]
add("bbr-mptcp", "bbr", "MPTCP with bbr on every subflow: 20 Mbit/s 20 ms + 10 Mbit/s 80 ms, 1 BDP queues", ps, mptcp(ps, cc="bbr"))
p = path("p", 20, 40, queue=f"{bdp_packets(20, 40, 4)} packets")
add("bbr-tcp-deep-queue", "bbr", "single-path bbr, 20 Mbit/s 40 ms RTT, 4 BDP queue", [p], tcp(p, cc="bbr"))


def render(s: dict) -> str:
    lines = [f"# Validation grid ({s['regime']}): {s['description']}."]
    if s["comment"]:
        lines += [f"# {line}" for line in s["comment"].splitlines()]
    lines += ["# Written by scripts/make-validation-grid.py; kernel results in kernel.csv (mptcplab validate).",
              f'name = "{s["name"]}"', f'description = "{s["description"]}"', "seed = 1", f'duration = "{s["duration"]}"', ""]
    for p in s["paths"]:
        lines.append("[[paths]]")
        lines += [f"{k} = {toml_value(v)}" for k, v in p.items()]
        lines.append("")
    c = s["conn"]
    lines += ["[[connections]]", f'name = "{"mptcp" if c["kind"] == "mptcp" else "tcp"}"', f'kind = "{c["kind"]}"',
              'stack = "linux"']
    lines += [f"{k} = {toml_value(v)}" for k, v in c.items() if k != "kind"]
    lines += ["", "[output]", 'timeseries = "10ms"' if c["app"]["kind"] == "periodic" else 'timeseries = "100ms"',
              f'warmup = "{s["warmup"]}"', ""]
    return "\n".join(lines)


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for old in OUT.glob("*.toml"):
        old.unlink()
    names = set()
    for s in GRID:
        assert s["name"] not in names, s["name"]
        names.add(s["name"])
        total = sum(float(p["rate"].removesuffix("Mbit")) for p in s["paths"] if "rate" in p)
        assert total <= 100, (s["name"], total)
        (OUT / f"{s['name']}.toml").write_text(render(s))
    print(f"wrote {len(GRID)} scenarios to {OUT.relative_to(Path.cwd()) if OUT.is_relative_to(Path.cwd()) else OUT}")


if __name__ == "__main__":
    main()
