"""Buffer sizing rules for heterogeneous paths.

- RFC 6824 (TCP Extensions for Multipath Operation with Multiple Addresses), §3.3.4 "Receiver
  Considerations": the connection-level receive buffer that lets every subflow send at full
  rate, and absorb a fast retransmit on the slowest one, is 2·Σ_i BW_i·RTT_max.
  The NSDI '12 paper ("How Hard Can It Be?", Raiciu et al.; its replication is seed 003) states
  the same rule without the factor 2: Σ_i BW_i·RTT_max. Both are one function here (``factor``).
- STMS (Shi et al., slides, seed 002): the out-of-order gap, in data, that the slow subflow
  leaves for the fast one so both arrive in order: Gap = BW_fast·(Delay_slow - Delay_fast),
  from Gap/BW_fast + Delay_fast = Delay_slow. The delays are one-way (forward) delays, which
  the slides note are hard to measure; with symmetric paths, half the RTTs.

Units: rates in bit/s, times in seconds, results in bytes.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["receive_buffer_bytes", "stms_gap_bytes", "stms_gap_packets"]


def receive_buffer_bytes(rates_bps: Sequence[float], rtts_s: Sequence[float], factor: float = 2.0) -> float:
    """RFC 6824 §3.3.4: factor·Σ_i BW_i·RTT_max, in bytes (factor 2 per RFC 6824; 1 per NSDI '12).

    ``rtts_s`` are the subflows' RTTs (the largest one is used), including queueing delay if
    the buffer must cover loaded paths.
    """
    if len(rates_bps) != len(rtts_s) or not rates_bps:
        raise ValueError("need one RTT per subflow rate, at least one subflow")
    if min(rates_bps) < 0 or min(rtts_s) < 0 or factor <= 0:
        raise ValueError("rates and RTTs must be >= 0 and the factor > 0")
    return factor * sum(rates_bps) * max(rtts_s) / 8.0


def stms_gap_bytes(rate_fast_bps: float, delay_slow_s: float, delay_fast_s: float) -> float:
    """STMS gap: BW_fast·(Delay_slow - Delay_fast), in bytes; 0 if the "slow" path is not slower."""
    if rate_fast_bps < 0:
        raise ValueError(f"rate {rate_fast_bps} bit/s must be >= 0")
    return max(0.0, rate_fast_bps * (delay_slow_s - delay_fast_s) / 8.0)


def stms_gap_packets(rate_fast_bps: float, delay_slow_s: float, delay_fast_s: float, mss_bytes: int = 1448) -> float:
    """The STMS gap in segments of ``mss_bytes`` (the slides count the gap in packets)."""
    return stms_gap_bytes(rate_fast_bps, delay_slow_s, delay_fast_s) / mss_bytes
