"""Chen & Towsley, "On Bufferbloat and Delay Analysis of MultiPath TCP in Wireless Networks"
(IFIP Networking 2014; seed 000).

- §IV, Eq. (1)-(9): packets received on the first subflow before the first data packet of the
  delayed second subflow arrives, loss-free (Eq. (3)) and with at most one loss event (Eq. (9)).
- §V-A, Eq. (10) and Fig. 5: congestion window while the bottleneck buffer fills, and the loss
  rate 1/N of one congestion-avoidance cycle as a function of the network storage F.
- §V-B, Eq. (11)-(12) and Fig. 6: LIA's alpha and the first subflow's increment efficiency.

Symbols follow the paper's Table I: ``iw`` = I_w (packets), ``b`` = delayed-ACK factor,
``psi`` = 1 + 1/b, ``gamma`` = R_2/R_1, ``beta`` = w_2/w_1, ``mu`` = bandwidth (packets/s),
``tau`` = minimum RTT (s), ``F`` = network storage (packets), ``B`` = buffer (packets).

Deviations from the reference (all documented where they apply):

- Δ = 2γ (Eq. (1)) is a number of *rounds* of R_1, but the sums of Eq. (3)-(9) need an integer
  Δ. The paper does not say how it rounds; every function taking γ exposes
  ``rounding = "floor" | "ceil" | "continuous"``. For Eq. (3) "continuous" is the printed closed
  form with the real exponent 2γ; for Eq. (9), which has no closed form, "continuous" is the
  linear interpolation in Δ between the floor and ceil values (our choice, not the paper's).
- Eq. (7) prints Q = Σ_{i=0}^{Δ} S(k)·C(k) (index i, summand in k); we read it as Σ_k.
- Eq. (5) is implemented as printed: S(k) = p (1-p)^{d_ss(k)-1} Π_{i<k} (1-p)^{d_ss(i)}, i.e. the
  probability of one *given* packet of round k being the loss, not of "at least one loss in
  round k" (which would be 1 - (1-p)^{d_ss(k)}).
- The printed T_ca = 3b/(8μ)·(F+1)² is an approximation of solving Eq. (10) for w(T_ca) = F;
  the exact root is b/(2μ)·(F² - (F+1)²/4), smaller by b(2F+1)/(2μ). Both are exposed; the
  loss rate of Fig. 5 uses the printed N.

What the equations give versus what the paper states (checked in tests/python/test_models.py):

- Fig. 2 / §IV text: "67, 88 and 130 packets" at median γ = 3.9, 4.4, 6.0 (I_w = 10, b = 2,
  p = 0.9 %). Eq. (9) as printed gives, for Δ = 2γ rounds,
  γ = 3.9: 263.7 (floor, Δ = 7), 269.8 (ceil, Δ = 8), 268.6 (continuous);
  γ = 4.4: 269.8 (floor, Δ = 8), 175.6 (ceil, Δ = 9), 194.4 (continuous);
  γ = 6.0: 171.3 (Δ = 12 exactly).
  None of them is near 67 / 88 / 130, and the printed model is not even monotonic in Δ
  (it peaks at Δ = 8 and dips at Δ = 10), because conditioning on "at most one loss" with the
  per-packet S(k) of Eq. (5) reweights towards early losses once (1-p)^d becomes small.
  Taking Δ = γ rounds instead (as if Eq. (1) counted RTTs of the second flow once) gives
  47.0 / 79.7 (γ = 3.9), 79.7 / 127.2 (γ = 4.4) and 192.4 (γ = 6.0) — closer in magnitude but
  still not the printed values. Taking Δ = γ rounds *and* the binomial probability of exactly
  one lost packet in round k (Eq. (5) times d_ss(k), see ``fig2_alternative_reading``) gives
  66.9 / 82.6 / 138.6, the closest reading we found; it is a reading, not the printed model.
  The sentence in §IV may report measured per-carrier averages rather than model values;
  footnote 2 also says R_1 is measured under load during Δ, which the model's round counting
  does not capture. We implement what is printed and do not tune.
- Fig. 5: μ = 10 Mbit/s and τ = 15 ms give μτ = 12.5 packets of 1500 bytes ("roughly 12").
  With μτ = 12: B = 0 → F = 12 → N = 139 → 0.72 %; B = μτ → F = 24 → N = 493 → 0.203 %;
  B = 8μτ → F = 108 → N = 9019 → 0.0111 %: the printed 0.7 % → 0.2 % → 0.01 % are reproduced.
  With μτ = 12.5 exactly, F = ⌈B + μτ⌉ gives 13 / 25 / 113 → 0.625 % / 0.188 % / 0.0101 %.
- Fig. 6: β = 2, γ 2 → 8 gives 1/(1+1)² = 0.25 → 1/(1.25)² = 0.64 (paper: "0.25 to 0.65");
  (0.64 - 0.25)/0.64 = 60.9 % matches "underestimated by 61 %" (0.65 would give 61.5 %).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Literal

__all__ = [
    "Rounding",
    "bdp_packets",
    "cwnd_while_buffer_fills",
    "d_ca",
    "d_ss",
    "delta_rounds",
    "expected_packets_at_rounds",
    "expected_packets_before_second_flow",
    "expected_packets_exactly_one_loss",
    "fig2_alternative_reading",
    "increment_efficiency",
    "increment_underestimation",
    "lia_alpha",
    "loss_free_packets",
    "loss_free_packets_at_rounds",
    "loss_rate_per_cycle",
    "loss_round_distribution",
    "packets_given_loss_round",
    "packets_per_cycle",
    "psi",
    "storage_capacity",
    "t_ca_exact",
    "t_ca_printed",
]

#: How a non-integer Δ = 2γ is turned into a number of rounds (see the module docstring).
Rounding = Literal["floor", "ceil", "continuous"]


def psi(b: float) -> float:
    """ψ = 1 + 1/b, the slow-start growth factor per round with delayed-ACK factor b (§IV)."""
    if b <= 0:
        raise ValueError(f"delayed-ACK factor b = {b} must be > 0")
    return 1.0 + 1.0 / b


def delta_rounds(gamma: float) -> float:
    """Eq. (1): Δ = t_4 - t_2 = 2·R_2 = 2γ·R_1, returned in rounds of R_1 (i.e. 2γ)."""
    if gamma <= 0:
        raise ValueError(f"RTT ratio gamma = {gamma} must be > 0")
    return 2.0 * gamma


def d_ss(i: int, iw: float = 10, b: float = 2) -> float:
    """Eq. (2): d_ss(i) = I_w·ψ^(i-1), packets received in slow-start round i (i ≥ 1)."""
    return float(iw * psi(b) ** (i - 1))


def d_ca(j: int, k: int, iw: float = 10, b: float = 2) -> float:
    """Eq. (4): d_ca(j|k) = d_ss(k)/2 + j - (k+1), packets in round j > k after a loss in round k."""
    if j <= k:
        raise ValueError(f"Eq. (4) needs j > k (got j = {j}, k = {k})")
    return d_ss(k, iw, b) / 2.0 + j - (k + 1)


def loss_free_packets_at_rounds(delta: int, iw: float = 10, b: float = 2) -> float:
    """Eq. (3) for an integer Δ: d = Σ_{i=1}^{Δ} d_ss(i) = I_w·(ψ^Δ - 1)/(ψ - 1) packets."""
    _check_rounds(delta)
    return sum(d_ss(i, iw, b) for i in range(1, delta + 1))


def loss_free_packets(gamma: float, iw: float = 10, b: float = 2, rounding: Rounding = "continuous") -> float:
    """Eq. (3): packets received on flow 1 during Δ = 2γ rounds without loss (packets).

    ``"continuous"`` is the printed closed form I_w·(ψ^{2γ} - 1)/(ψ - 1) with a real exponent;
    ``"floor"`` / ``"ceil"`` sum Eq. (2) over ⌊2γ⌋ / ⌈2γ⌉ whole rounds.
    """
    delta = delta_rounds(gamma)
    if rounding == "continuous":
        g = psi(b)
        return float(iw * (g**delta - 1.0) / (g - 1.0))
    return loss_free_packets_at_rounds(_round(delta, rounding), iw, b)


def loss_round_distribution(
    delta: int, p: float, iw: float = 10, b: float = 2, exactly_one: bool = False
) -> list[float]:
    """Eq. (5)-(7): [P(0), P(1), ..., P(Δ)], the conditional probability that the (single) loss
    event falls in round k, P(0) being "no loss during Δ". Dimensionless, sums to 1.

    S(0) = (1-p)^d, C(0) = C(Δ) = 1, S(k) and C(k) as printed in Eq. (5) and (6).
    ``exactly_one`` is the alternative reading of ``expected_packets_exactly_one_loss``: S(k)
    times d_ss(k), the probability that exactly one of round k's packets is lost.
    """
    _check_rounds(delta)
    _check_p(p)
    q = 1.0 - p
    d = loss_free_packets_at_rounds(delta, iw, b)
    weights = [q**d]  # S(0)·C(0)
    for k in range(1, delta + 1):
        n_k = d_ss(k, iw, b)
        s_k = p * q ** (n_k - 1.0) * math.prod(q ** d_ss(i, iw, b) for i in range(1, k))
        if exactly_one:
            s_k *= n_k
        c_k = 1.0 if k == delta else math.prod(q ** d_ca(j, k, iw, b) for j in range(k + 1, delta + 1))
        weights.append(s_k * c_k)
    total = sum(weights)  # Q of Eq. (7)
    return [w / total for w in weights]


def packets_given_loss_round(k: int, delta: int, iw: float = 10, b: float = 2) -> float:
    """Eq. (8): d(k), packets received on flow 1 by the end of Δ given the loss is in round k
    (k = 0: no loss). Packets."""
    _check_rounds(delta)
    if not 0 <= k <= delta:
        raise ValueError(f"loss round k = {k} must lie in [0, {delta}]")
    if k == 0:
        return loss_free_packets_at_rounds(delta, iw, b)
    slow_start = sum(d_ss(i, iw, b) for i in range(1, k + 1))
    avoidance = sum(d_ca(j, k, iw, b) for j in range(k + 1, delta + 1))
    return slow_start - 1.0 + avoidance


def expected_packets_at_rounds(delta: int, p: float, iw: float = 10, b: float = 2, exactly_one: bool = False) -> float:
    """Eq. (9) for an integer Δ: E[received packets] = Σ_{k=0}^{Δ} P(k)·d(k) (packets).
    ``exactly_one``: see ``loss_round_distribution``."""
    if delta == 0:
        return 0.0
    dist = loss_round_distribution(delta, p, iw, b, exactly_one)
    return sum(pk * packets_given_loss_round(k, delta, iw, b) for k, pk in enumerate(dist))


def _interpolated(f: Callable[[int], float], x: float) -> float:
    """f at a non-integer number of rounds x: linear between f(⌊x⌋) and f(⌈x⌉)."""
    lo, hi = math.floor(x), math.ceil(x)
    e_lo = f(lo)
    return e_lo if hi == lo else e_lo + (x - lo) * (f(hi) - e_lo)


def expected_packets_before_second_flow(
    gamma: float, p: float = 0.009, iw: float = 10, b: float = 2, rounding: Rounding = "continuous"
) -> float:
    """Eq. (9) at Δ = 2γ rounds: expected packets received on the first subflow, with at most
    one loss event, before the second subflow's first data packet (packets).

    Defaults are the paper's (I_w = 10, b = 2, p = 0.009). ``"floor"`` / ``"ceil"`` evaluate at
    ⌊2γ⌋ / ⌈2γ⌉ rounds; ``"continuous"`` interpolates linearly between the two (our choice).
    """
    delta = delta_rounds(gamma)
    if rounding != "continuous":
        return expected_packets_at_rounds(_round(delta, rounding), p, iw, b)
    return _interpolated(lambda d: expected_packets_at_rounds(d, p, iw, b), delta)


def expected_packets_exactly_one_loss(delta: int, p: float, iw: float = 10, b: float = 2) -> float:
    """Eq. (9) for an integer Δ with Eq. (5) read as the probability of exactly one lost packet
    in round k (packets). *Not the printed equation* — an alternative reading.

    Eq. (5) as printed, S(k) = p (1-p)^{d_ss(k)-1} Π_{i<k} (1-p)^{d_ss(i)}, is the probability
    that one *given* packet of round k is the one lost. The event Eq. (8) conditions on (its
    "−1": exactly one packet lost, in round k) can hit any of the d_ss(k) packets of that
    round, so its probability carries the binomial factor d_ss(k):

        S'(k) = d_ss(k) · p (1-p)^{d_ss(k)-1} · Π_{i<k} (1-p)^{d_ss(i)}.

    Everything else is as printed: C(k) of Eq. (6), S(0) = (1-p)^d, the normalisation Q of
    Eq. (7) and d(k) of Eq. (8). (Reading S'(k) as "at least one loss in round k",
    1 - (1-p)^{d_ss(k)}, the paper's "multiple losses in one round trip are one loss event",
    gives nearly the same values: 43.4 instead of 43.5 at Δ = 3, 141.0 instead of 138.6 at
    Δ = 6.)
    """
    return expected_packets_at_rounds(delta, p, iw, b, exactly_one=True)


def fig2_alternative_reading(gamma: float, p: float = 0.009, iw: float = 10, b: float = 2) -> float:
    """The closest reading of §IV we found to the paper's "67, 88 and 130 packets" (packets).
    *Not the paper's model*: it departs from the printed text twice.

    1. Δ = γ rounds of R_1 (that is, Δ = R_2), where Eq. (1) prints Δ = 2R_2 = 2γ rounds;
    2. Eq. (5) with the binomial factor d_ss(k) (``expected_packets_exactly_one_loss``).

    A non-integer γ is interpolated linearly between ⌊γ⌋ and ⌈γ⌉ rounds, as the
    ``"continuous"`` rounding of ``expected_packets_before_second_flow``. At the paper's median
    γ = 3.9 / 4.4 / 6.0 (p = 0.009, I_w = 10, b = 2) it gives 66.9 / 82.6 / 138.6.
    """
    if gamma <= 0:
        raise ValueError(f"RTT ratio gamma = {gamma} must be > 0")
    return _interpolated(lambda d: expected_packets_exactly_one_loss(d, p, iw, b), gamma)


def bdp_packets(rate_bps: float, tau_s: float, packet_bytes: int = 1500) -> float:
    """μτ, the minimum bandwidth-delay product in packets of ``packet_bytes`` (§V-A)."""
    return rate_bps * tau_s / (8.0 * packet_bytes)


def storage_capacity(buffer_packets: float, bdp: float) -> int:
    """F = ⌈B + μτ⌉, the network storage (packets in flight it can hold), §V-A."""
    return math.ceil(buffer_packets + bdp)


def cwnd_while_buffer_fills(t_s: float, storage: float, mu_pps: float, b: float = 2) -> float:
    """Eq. (10): w(t) = sqrt((F+1)²/4 + 2μt/b), the window (packets) t seconds after the
    sender starts filling the buffer; ``mu_pps`` in packets/s."""
    return math.sqrt(0.25 * (storage + 1.0) ** 2 + 2.0 * mu_pps * t_s / b)


def t_ca_printed(storage: float, mu_pps: float, b: float = 2) -> float:
    """T_ca = 3b/(8μ)·(F+1)² as printed after Eq. (10) (seconds); see t_ca_exact."""
    return 3.0 * b / (8.0 * mu_pps) * (storage + 1.0) ** 2


def t_ca_exact(storage: float, mu_pps: float, b: float = 2) -> float:
    """Root of Eq. (10) at w(T_ca) = F: b/(2μ)·(F² - (F+1)²/4) seconds."""
    return b / (2.0 * mu_pps) * (storage**2 - 0.25 * (storage + 1.0) ** 2)


def packets_per_cycle(storage: float, b: float = 2) -> int:
    """N ≈ ⌈3b/8·(F+1)² + F⌉, packets sent in one congestion-avoidance cycle (§V-A)."""
    return math.ceil(3.0 * b / 8.0 * (storage + 1.0) ** 2 + storage)


def loss_rate_per_cycle(storage: float, b: float = 2) -> float:
    """1/N, the loss rate when only buffer overflow drops packets (§V-A, Fig. 5). Fraction."""
    return 1.0 / packets_per_cycle(storage, b)


def lia_alpha(cwnds: Sequence[float], rtts: Sequence[float]) -> float:
    """Eq. (11) (RFC 6356): α = w·max_i(w_i/R_i²)/(Σ_i w_i/R_i)², w = Σ_i w_i.

    Windows in packets (or any common unit), RTTs in seconds; α is dimensionless.
    """
    if len(cwnds) != len(rtts) or not cwnds:
        raise ValueError("need one RTT per window, at least one subflow")
    best = max(w / r**2 for w, r in zip(cwnds, rtts, strict=True))
    rate = sum(w / r for w, r in zip(cwnds, rtts, strict=True))
    return sum(cwnds) * best / rate**2


def increment_efficiency(beta: float, gamma: float) -> float:
    """Eq. (12): 1/(1 + β/γ)², flow 1's increase per ACK under LIA relative to TCP's 1/w_1.

    Valid when flow 1 is the "better" flow, w_1/R_1² ≥ w_2/R_2², i.e. β ≤ γ².
    """
    if gamma <= 0 or beta < 0:
        raise ValueError(f"need gamma > 0 and beta >= 0 (got {gamma}, {beta})")
    if beta > gamma**2:
        raise ValueError(
            f"Eq. (12) assumes flow 1 is the better flow (beta <= gamma^2); got beta={beta}, gamma={gamma}"
        )
    return 1.0 / (1.0 + beta / gamma) ** 2


def increment_underestimation(beta: float, gamma_stale: float, gamma_true: float) -> float:
    """Fraction by which flow 1's increase rate is underestimated when α still uses the stale
    γ: 1 - eff(β, γ_stale)/eff(β, γ_true) (§V-B: "underestimated by 61 %"). Fraction."""
    return 1.0 - increment_efficiency(beta, gamma_stale) / increment_efficiency(beta, gamma_true)


def _round(delta: float, rounding: Rounding) -> int:
    if rounding == "floor":
        return math.floor(delta)
    if rounding == "ceil":
        return math.ceil(delta)
    raise ValueError(f"rounding must be 'floor', 'ceil' or 'continuous', not {rounding!r}")


def _check_rounds(delta: int) -> None:
    if not isinstance(delta, int) or delta < 0:
        raise ValueError(f"Δ = {delta!r} must be a whole number of rounds >= 0")


def _check_p(p: float) -> None:
    if not 0.0 <= p < 1.0:
        raise ValueError(f"loss probability p = {p} must lie in [0, 1)")
