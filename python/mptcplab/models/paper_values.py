"""Numbers published in the seed papers, each with its exact source, for "paper vs ours" tables.

Values are stored in the project's base units (seconds, bit/s, bytes, fractions, packets) in
``value``; ``printed`` keeps the paper's own spelling. ``source`` names the seed, the section
and the figure or table. Nothing here is computed: the equations live in the sibling modules,
and tests/python/test_models.py says which printed numbers they reproduce.

Seeds:

- 000: Y.-C. Chen, D. Towsley, "On Bufferbloat and Delay Analysis of MultiPath TCP in Wireless
  Networks", IFIP Networking 2014.
- 001: T. Kato, A. Diwakar, R. Yamamoto, S. Ohzahata, "Why Multipath TCP Degrades Throughput
  Under Insufficient Send Socket Buffer and Differently Delayed Paths".
- 002: H. Shi, Y. Cui, X. Wang, Y. Hu, M. Dai, F. Wang, K. Zheng, "STMS: Improving MPTCP
  Throughput Under Heterogenous Networks" (slides).
- 003: G. Miguel, A. Singh, "Multipath TCP over WiFi and 3G links" (replication of Raiciu et
  al., "How Hard Can It Be?", NSDI 2012, Fig. 4).
- 004: R. Khalili, "Performance issues with MPTCP" (slides on
  draft-khalili-mptcp-performance-issues-00).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "CT_FIG2",
    "CT_FIG2_R_SQUARED",
    "CT_FIG3",
    "CT_FIG5_LOSS",
    "CT_FIG5_SETUP",
    "CT_FIG6",
    "CT_FIG7",
    "CT_FIG8",
    "CT_RTO",
    "CT_SETUP",
    "KATO_RESULTS",
    "KATO_SETUP",
    "KHALILI_A",
    "KHALILI_B",
    "KHALILI_C",
    "KHALILI_OLIA_A",
    "NSDI12_RESULTS",
    "NSDI12_SETUP",
    "STMS_BUFFER_TABLE",
    "STMS_CLAIMS",
    "STMS_MOTIVATION",
    "STMS_REAL_WORLD",
    "STMS_RTT_TABLE",
    "ChenFig2Point",
    "Cited",
    "KhaliliRow",
    "StmsBufferRow",
]

S000 = "seed 000 (Chen & Towsley)"
S001 = "seed 001 (Kato et al.)"
S002 = "seed 002 (STMS slides)"
S003 = "seed 003 (NSDI'12 replication)"
S004 = "seed 004 (Khalili slides)"


@dataclass(frozen=True)
class Cited:
    """One published number: ``value`` in ``unit`` (base units), as ``printed``, from ``source``."""

    value: float
    unit: str
    printed: str
    source: str


@dataclass(frozen=True)
class ChenFig2Point:
    """Seed 000, §IV: a carrier's median RTT ratio and the packets received before flow 2."""

    carrier: str
    gamma_median: Cited
    packets: Cited


@dataclass(frozen=True)
class StmsBufferRow:
    """Seed 002, "Big in-network buffer requirement" table (30 Mbit/s, 20 ms vs 200 ms)."""

    in_network_buffer: Cited
    mptcp_fast_path_bps: Cited
    mptcp_overall_bps: Cited
    sptcp_fast_bps: Cited
    fast_path_utilisation: Cited


@dataclass(frozen=True)
class KhaliliRow:
    """One user type of one configuration of seed 004's tables; per-user throughput in bit/s.

    ``None`` where the slide leaves the cell empty.
    """

    config: str
    users: str
    single_path_measured: Cited | None
    mptcp_measured: Cited | None
    optimal_with_probing: Cited | None
    optimal_without_probing: Cited | None


def _c(value: float, unit: str, printed: str, source: str) -> Cited:
    return Cited(value, unit, printed, source)


def _mbps(x: float, source: str) -> Cited:
    return Cited(x * 1e6, "bit/s", f"{x:g} Mbit/s", source)


# --- seed 000: Chen & Towsley -------------------------------------------------------------

_IV = f"{S000}, §IV (text after Eq. (9))"
CT_SETUP = {
    "iw": _c(10, "packets", "I_w = 10", _IV),
    "b": _c(2, "segments per ACK", "b = 2 (thus ψ = 1.5)", _IV),
    "p_wifi": _c(0.009, "fraction", "p = 0.009", _IV),
    "p_wifi_spread": _c(0.002, "fraction", "0.9 ± 0.2 %", f"{S000}, §IV (before Eq. (4))"),
    "p_cellular_max": _c(0.0003, "fraction", "< 0.03 % for all carriers", f"{S000}, §IV and §V-A"),
}

CT_FIG2 = (
    ChenFig2Point(
        "AT&T", _c(3.9, "ratio", "median γ 3.9", f"{_IV}, Fig. 2"), _c(67, "packets", "67", f"{_IV}, Fig. 2")
    ),
    ChenFig2Point(
        "Verizon", _c(4.4, "ratio", "median γ 4.4", f"{_IV}, Fig. 2"), _c(88, "packets", "88", f"{_IV}, Fig. 2")
    ),
    ChenFig2Point(
        "Sprint", _c(6.0, "ratio", "median γ 6.0", f"{_IV}, Fig. 2"), _c(130, "packets", "130", f"{_IV}, Fig. 2")
    ),
)
CT_FIG2_R_SQUARED = _c(0.8758, "R²", "R^2 = 0.8758", f"{_IV}, Fig. 2 (fit of empirical averages to Eq. (9))")

_V_A = f"{S000}, §V-A"
CT_FIG3 = {
    "wifi_rtt": _c(0.030, "s", "approximately 30 ms", f"{_V_A}, Fig. 3"),
    "att_rtt_min": _c(0.060, "s", "60 ms", f"{_V_A}, Fig. 3"),
    "att_rtt_max": _c(0.180, "s", "180 ms", f"{_V_A}, Fig. 3"),
    "sprint_rtt_min": _c(0.160, "s", "160 ms", f"{_V_A}, Fig. 3"),
    "sprint_rtt_max": _c(1.2, "s", "1.2 second", f"{_V_A}, Fig. 3"),
    "verizon_rtt_min": _c(0.060, "s", "60 ms", f"{_V_A}, Fig. 3"),
    "verizon_rtt_max": _c(0.900, "s", "900 ms", f"{_V_A}, Fig. 3"),
    "gamma_low": _c(2, "ratio", "γ can quickly rise from 2", f"{_V_A}, text after Fig. 3"),
    "gamma_high": _c(40, "ratio", "to 40", f"{_V_A}, text after Fig. 3"),
    "gamma_extreme": _c(80, "ratio", "in some cases up to 80", f"{_V_A}, text after Fig. 3"),
}

CT_FIG5_SETUP = {
    "mu": _mbps(10, f"{_V_A}, Fig. 5"),
    "tau": _c(0.015, "s", "τ = 15 ms", f"{_V_A}, Fig. 5"),
    "b": _c(2, "segments per ACK", "b = 2", f"{_V_A}, Fig. 5"),
    "bdp": _c(12, "packets", "the minimum BDP is roughly 12 packets", f"{_V_A}, Fig. 5"),
}
#: (buffer B in units of the minimum BDP μτ, loss rate 1/N) as stated for Fig. 5.
CT_FIG5_LOSS = (
    (0, _c(0.007, "fraction", "0.7 %", f"{_V_A}, Fig. 5 (no buffer)")),
    (1, _c(0.002, "fraction", "0.2 %", f"{_V_A}, Fig. 5 (B = μτ)")),
    (8, _c(0.0001, "fraction", "0.01 %", f"{_V_A}, Fig. 5 (buffer increased 8-fold)")),
)

_V_B = f"{S000}, §V-B"
CT_FIG6 = {
    "beta": _c(2, "ratio", "β = 2", f"{_V_B}, Fig. 6"),
    "gamma_from": _c(2, "ratio", "γ ... from 2", f"{_V_B}, Fig. 6"),
    "gamma_to": _c(8, "ratio", "to 8", f"{_V_B}, Fig. 6"),
    "efficiency_from": _c(0.25, "fraction", "0.25", f"{_V_B}, Fig. 6"),
    "efficiency_to": _c(0.65, "fraction", "0.65", f"{_V_B}, Fig. 6"),
    "underestimation": _c(0.61, "fraction", "underestimated by 61 %", f"{_V_B}, text after Fig. 6"),
}
CT_RTO = {
    "clock_granularity": _c(0.2, "s", "G ... 0.2 sec", f"{_V_B}, footnote 3"),
    "initial_rto": _c(1.0, "s", "initial value of RTO is 1 sec", f"{_V_B}, footnote 3"),
}

_V_C = f"{S000}, §V-C"
CT_FIG7 = {
    "cell_rtt_start": _c(0.080, "s", "80 ms", f"{_V_C}, Fig. 7"),
    "cell_rtt_inflated": _c(0.800, "s", "800 ms", f"{_V_C}, Fig. 7"),
    "cell_rtt_peak": _c(3.5, "s", "up to 3.5 seconds (20 to 32 s)", f"{_V_C}, Fig. 7"),
    "cell_rtt_after": _c(0.400, "s", "drops from 2 sec to 400 ms after 35 s", f"{_V_C}, Fig. 7"),
    "restart_window": _c(10, "packets", "the initial window of 10 packets", f"{_V_C}, Fig. 7"),
}
CT_FIG8 = {
    "file_size": _c(16e6, "bytes", "16 MB files", f"{_V_C}, Fig. 8"),
    "rounds": _c(40, "runs", "40 rounds of measurements", f"{_V_C}, Fig. 8"),
    "receive_buffer": _c(6e6, "bytes", "default maximum size of 6 MB", f"{_V_C}, Fig. 8"),
    "improvement": _c(0.30, "fraction", "improves by 30 % (no RST w/ penl.)", f"{_V_C}, Fig. 8"),
}

# --- seed 001: Kato et al. ----------------------------------------------------------------

KATO_SETUP = {
    "fast_rate": _mbps(100, f"{S001}, §III.A, Fig. 3"),
    "slow_one_way_delay": _c(0.040, "s", "40 msec for one direction, i.e., 80 msec in round-trip", f"{S001}, §III.A"),
    "send_buffer": _c(1_048_576, "bytes", "1,048,576 bytes", f"{S001}, §III.A"),
    "receive_buffer_max": _c(6_291_456, "bytes", "4,096, 87380, and 6,291,456 bytes", f"{S001}, §III.A"),
    "duration": _c(10, "s", "bulk data transfer is executed for 10 seconds", f"{S001}, §III.A"),
}
KATO_RESULTS = {
    "runs": _c(5, "runs", "five experiment runs", f"{S001}, §III.B"),
    "throughput_min": _mbps(42.4, f"{S001}, §III.B"),
    "throughput_max": _mbps(49.8, f"{S001}, §III.B"),
    "throughput_mean": _mbps(46.8, f"{S001}, §III.B"),
    "throughput_sd": _mbps(3.54, f"{S001}, §III.B"),
    "run4_throughput": _mbps(48.6, f"{S001}, §III.B (the fourth run)"),
    "slow_cwnd_peak": _c(700, "packets", "up to around 700 packets", f"{S001}, §III.B, Fig. 6"),
    "slow_cwnd_drops": _c(20, "drops", "undergoes drops more than 20 times", f"{S001}, §III.B, Fig. 6"),
    "buffer_starvations": _c(278, "events", "buffer starvation happened 278 times", f"{S001}, §IV.B, Fig. 10"),
    "penalizations": _c(28, "events", "penalization occurred 28 times", f"{S001}, §IV.B, Fig. 10"),
}

# --- seed 002: STMS -----------------------------------------------------------------------

STMS_MOTIVATION = {
    "sites_share": _c(0.20, "fraction", "20% of top 500 sites", f"{S002}, slide 'Background'"),
    "rtt_difference": _c(0.045, "s", "RTT difference > 45ms", f"{S002}, slide 'Background'"),
    "rtt_difference_max": _c(0.134, "s", "as high as 134ms", f"{S002}, slide 'Background'"),
}
_T1 = f"{S002}, slide 'Host buffer is not the only bottleneck' (30 Mbit/s, loss 0.01 %, 6M host buffer)"
STMS_RTT_TABLE = {
    "20ms_vs_200ms": {
        "aggregate": _mbps(33.1, _T1),
        "fast_path": _mbps(12.1, _T1),
        "fast_path_loss": _c(0.0005, "fraction", "0.05", _T1),
    },
    "20ms_vs_20ms": {
        "aggregate": _mbps(56.5, _T1),
        "fast_path": _mbps(28.3, _T1),
        "fast_path_loss": _c(0.0001, "fraction", "0.01", _T1),
    },
}
_T2 = f"{S002}, slide 'Big in-network buffer requirement'"


def _stms_row(buf_k: int, fast: float, overall: float, sptcp: float, util: str) -> StmsBufferRow:
    return StmsBufferRow(
        _c(buf_k, "K (unit as printed)", f"{buf_k}", _T2),
        _mbps(fast, _T2),
        _mbps(overall, _T2),
        _mbps(sptcp, _T2),
        _c(float(util.rstrip("%")) / 100, "fraction", util, _T2),
    )


STMS_BUFFER_TABLE = (
    _stms_row(30, 12.1, 31, 28.4, "42.61%"),
    _stms_row(60, 22, 36, 28.4, "77.46%"),
    _stms_row(90, 24.9, 40.2, 28.4, "87.68%"),
    _stms_row(150, 28.3, 46.3, 28.4, "99.65%"),
)
_T3 = f"{S002}, slide 'Real-world evaluation'"
STMS_REAL_WORLD = {
    "wifi_rate": _mbps(40, _T3),
    "wifi_latency": _c(0.050, "s", "50 ms", _T3),
    "lte_rate": _mbps(30, _T3),
    "lte_latency": _c(0.070, "s", "70 ms", _T3),
    "file_size": _c(200e6, "bytes", "200MB file", _T3),
}
STMS_CLAIMS = {
    "limited_in_network_buffer": _c(0.25, "fraction", "25% improvement", f"{S002}, slide 'Macrobenchmarks'"),
    "limited_host_buffer": _c(0.20, "fraction", "20% improvement", f"{S002}, slide 'Host buffer'"),
}

# --- seed 003: NSDI'12 replication --------------------------------------------------------

_N = f"{S003}, 'Required software' / topology"
NSDI12_SETUP = {
    "wifi_rate": _mbps(8, _N),
    "wifi_delay": _c(0.010, "s", "10ms delay", _N),
    "wifi_buffer": _c(0.080, "s", "80ms buffer", _N),
    "g3_rate": _mbps(2, _N),
    "g3_delay": _c(0.075, "s", "75ms delay", _N),
    "g3_buffer": _c(2.0, "s", "2 second buffer", _N),
    "server_rate": _mbps(100, _N),
    "server_delay": _c(0.0001, "s", "0.1ms delay", _N),
    "wifi_jitter_low": _c(0.0005, "s", "0.5ms", f"{S003}, jitter table"),
    "wifi_jitter_high": _c(0.0025, "s", "2.5ms", f"{S003}, jitter table"),
    "g3_jitter_low": _c(0.0075, "s", "7.5ms", f"{S003}, jitter table"),
    "g3_jitter_high": _c(0.0375, "s", "37.5ms", f"{S003}, jitter table"),
    "run_time": _c(27, "s", "27 seconds", f"{S003}, methodology"),
    "warmup": _c(5, "s", "ignoring the first 5", f"{S003}, methodology"),
    "cooldown": _c(2, "s", "and last 2 seconds", f"{S003}, methodology"),
}
NSDI12_RESULTS = {
    "receive_buffer_full_use": _c(600e3, "bytes", "600KB or more of receive buffer", f"{S003}, Key Results"),
}

# --- seed 004: Khalili --------------------------------------------------------------------


def _k(x: float | None, where: str) -> Cited | None:
    return None if x is None else _mbps(x, f"{S004}, {where}")


def _krow(
    config: str, users: str, where: str, sp: float | None, mp: float | None, wp: float | None, wop: float | None
) -> KhaliliRow:
    return KhaliliRow(config, users, _k(sp, where), _k(mp, where), _k(wp, where), _k(wop, where))


_KA = "scenario A table (C1 = C2 = 1 Mbps)"
KHALILI_A = (
    _krow("N1=10,N2=10", "type1", _KA, 0.98, 0.96, 1, 1),
    _krow("N1=10,N2=10", "type2", _KA, 0.98, 0.70, 0.94, 1),
    _krow("N1=30,N2=10", "type1", _KA, 0.98, 0.98, 1, 1),
    _krow("N1=30,N2=10", "type2", _KA, 0.98, 0.44, 0.8, 1),
)
_KB = "scenario B table (15 blue + 15 red users, C_X = 27, C_T = 36 Mbps)"
#: Scenario B. Config "red single-path": red users use TCP, blue users MPTCP (measured) or the
#: optimal algorithm (theory); config "red multipath": both use MPTCP (measured) or the optimal
#: algorithm (theory). The slide has no single-path-only column here.
KHALILI_B = (
    _krow("red single-path", "red", _KB, None, 1.5, 2.1, 2.1),
    _krow("red single-path", "blue", _KB, None, 2.5, 2.1, 2.1),
    _krow("red multipath", "red", _KB, None, 1.4, 2.04, 2.1),
    _krow("red multipath", "blue", _KB, None, 2.0, 2.04, 2.1),
)
_KC = "scenario C table (C1 = C2 = 1 Mbps)"
KHALILI_C = (
    _krow("N1=10,N2=10", "multipath", _KC, None, 1.3, 1.04, 1),
    _krow("N1=10,N2=10", "single", _KC, None, 0.68, 0.94, 1),
    _krow("N1=30,N2=10", "multipath", _KC, None, 1.19, 1.04, 1),
    _krow("N1=30,N2=10", "single", _KC, None, 0.38, 0.8, 1),
)
_KO = "'Scenario A: OLIA performs close to optimal algorithm with probing cost' (MPTCP column is OLIA)"
KHALILI_OLIA_A = (
    _krow("N1=10,N2=10", "type1", _KO, 0.98, 0.98, 1, 1),
    _krow("N1=10,N2=10", "type2", _KO, 0.98, 0.86, 0.94, 1),
    _krow("N1=30,N2=10", "type1", _KO, 0.98, 0.98, 1, 1),
    _krow("N1=30,N2=10", "type2", _KO, 0.98, 0.75, 0.8, 1),
)
