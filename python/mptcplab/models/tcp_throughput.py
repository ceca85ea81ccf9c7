"""Steady-state TCP Reno throughput models: Mathis et al. and Padhye et al.

- Mathis, Semke, Mahdavi, Ott, "The Macroscopic Behavior of the TCP Congestion Avoidance
  Algorithm", ACM CCR 27(3), 1997: BW = (MSS/RTT)·C/sqrt(p), with C = sqrt(3/(2b)) for
  periodic losses and one ACK per b segments (C = sqrt(3/2) ≈ 1.22 for b = 1, sqrt(3/4) ≈ 0.87
  for delayed ACKs, b = 2).
- Padhye, Firoiu, Towsley, Kurose, "Modeling TCP Throughput: A Simple Model and its Empirical
  Validation", ACM SIGCOMM 1998: the full model Eq. (31), built from E[W] (Eq. (13)), Q̂ and
  G(p) (Eq. (28)), and the closed-form approximation given after it.

Units: MSS in bytes, RTT and T_0 in seconds, p a fraction, windows in packets; results in
bit/s (``*_bps``) or packets/s (``*_pps``).

Deviations from the references: none intended. The equation numbers are those of the
SIGCOMM '98 version (the IEEE/ACM ToN 2000 version numbers them differently); the
approximation's number is not given here because we could not check it against the paper.
"""

from __future__ import annotations

import math

__all__ = [
    "mathis_constant",
    "mathis_throughput_bps",
    "padhye_approx_throughput_pps",
    "padhye_expected_window",
    "padhye_throughput_bps",
    "padhye_throughput_pps",
]


def mathis_constant(b: int = 1) -> float:
    """C = sqrt(3/(2b)): 1.2247 for an ACK per segment, 0.8660 for delayed ACKs (b = 2)."""
    if b < 1:
        raise ValueError(f"segments per ACK b = {b} must be >= 1")
    return math.sqrt(3.0 / (2.0 * b))


def mathis_throughput_bps(mss_bytes: float, rtt_s: float, p: float, b: int = 1) -> float:
    """Mathis et al. 1997: BW = (MSS/RTT)·C/sqrt(p), in bit/s (MSS counted as 8·mss_bytes bits)."""
    _check(rtt_s, p)
    return 8.0 * mss_bytes / rtt_s * mathis_constant(b) / math.sqrt(p)


def padhye_expected_window(p: float, b: int = 2) -> float:
    """Padhye et al. Eq. (13): E[W] = (2+b)/(3b) + sqrt(8(1-p)/(3bp) + ((2+b)/(3b))²) packets,
    the mean window at the end of a triple-duplicate-ACK period without a window limit."""
    _check(1.0, p)
    a = (2.0 + b) / (3.0 * b)
    return a + math.sqrt(8.0 * (1.0 - p) / (3.0 * b * p) + a * a)


def _q_hat(p: float, w: float) -> float:
    """Q̂(w): probability that a loss indication is a timeout, given window w (packets)."""
    q = 1.0 - p
    num = (1.0 - q**3) * (1.0 + q**3 * (1.0 - q ** (w - 3.0)))
    return min(1.0, float(num / (1.0 - q**w)))


def _g(p: float) -> float:
    """Padhye et al. Eq. (28): G(p) = 1 + p + 2p² + 4p³ + 8p⁴ + 16p⁵ + 32p⁶."""
    return 1.0 + p + 2 * p**2 + 4 * p**3 + 8 * p**4 + 16 * p**5 + 32 * p**6


def padhye_throughput_pps(rtt_s: float, p: float, t0_s: float, w_max: float, b: int = 2) -> float:
    """Padhye et al. Eq. (31), the full model, in packets/s.

    With E[W] < W_max:  [(1-p)/p + E[W] + Q̂(E[W])/(1-p)] / [RTT(b/2·E[W] + 1) + Q̂(E[W])·G(p)·T_0/(1-p)];
    otherwise:          [(1-p)/p + W_max + Q̂(W_max)/(1-p)] /
                        [RTT(b/8·W_max + (1-p)/(p·W_max) + 2) + Q̂(W_max)·G(p)·T_0/(1-p)].
    """
    _check(rtt_s, p)
    q = 1.0 - p
    ew = padhye_expected_window(p, b)
    timeouts = _g(p) * t0_s / q
    if ew < w_max:
        qh = _q_hat(p, ew)
        return (q / p + ew + qh / q) / (rtt_s * (b / 2.0 * ew + 1.0) + qh * timeouts)
    qh = _q_hat(p, w_max)
    return (q / p + w_max + qh / q) / (rtt_s * (b / 8.0 * w_max + q / (p * w_max) + 2.0) + qh * timeouts)


def padhye_throughput_bps(mss_bytes: float, rtt_s: float, p: float, t0_s: float, w_max: float, b: int = 2) -> float:
    """Eq. (31) converted to bit/s with segments of ``mss_bytes``."""
    return 8.0 * mss_bytes * padhye_throughput_pps(rtt_s, p, t0_s, w_max, b)


def padhye_approx_throughput_pps(rtt_s: float, p: float, t0_s: float, w_max: float, b: int = 2) -> float:
    """Padhye et al.'s closed-form approximation, in packets/s:

    B(p) ≈ min(W_max/RTT, 1/(RTT·sqrt(2bp/3) + T_0·min(1, 3·sqrt(3bp/8))·p·(1 + 32p²))).
    """
    _check(rtt_s, p)
    denom = rtt_s * math.sqrt(2.0 * b * p / 3.0) + t0_s * min(1.0, 3.0 * math.sqrt(3.0 * b * p / 8.0)) * p * (
        1.0 + 32.0 * p * p
    )
    return min(w_max / rtt_s, 1.0 / denom)


def _check(rtt_s: float, p: float) -> None:
    if rtt_s <= 0:
        raise ValueError(f"RTT = {rtt_s} s must be > 0")
    if not 0.0 < p < 1.0:
        raise ValueError(f"loss probability p = {p} must lie in (0, 1)")
