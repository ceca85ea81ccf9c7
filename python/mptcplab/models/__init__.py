"""Analytical models from the seed papers, in pure Python (no simulator run needed).

One module per source; every function names its equation and units in its docstring:

- ``chen_towsley``: Chen & Towsley 2014 (seed 000), Eq. (1)-(12): delayed start of the second
  subflow, bufferbloat loss rate vs network storage, LIA increment efficiency.
- ``tcp_throughput``: Mathis et al. 1997 and Padhye et al. 1998 TCP throughput.
- ``buffers``: RFC 6824's receive-buffer rule and the STMS gap (seed 002).
- ``khalili``: the Kelly-Voice optimal allocation with and without a probing cost, and the
  reconstructed scenarios A, B, C of seed 004.
- ``paper_values``: the papers' published numbers with their sources.

Only the standard library is used, so importing this package is cheap; ``import mptcplab``
does not import it.
"""

from mptcplab.models import paper_values
from mptcplab.models.buffers import receive_buffer_bytes, stms_gap_bytes, stms_gap_packets
from mptcplab.models.chen_towsley import (
    Rounding,
    bdp_packets,
    cwnd_while_buffer_fills,
    d_ca,
    d_ss,
    delta_rounds,
    expected_packets_at_rounds,
    expected_packets_before_second_flow,
    increment_efficiency,
    increment_underestimation,
    lia_alpha,
    loss_free_packets,
    loss_free_packets_at_rounds,
    loss_rate_per_cycle,
    loss_round_distribution,
    packets_given_loss_round,
    packets_per_cycle,
    psi,
    storage_capacity,
    t_ca_exact,
    t_ca_printed,
)
from mptcplab.models.khalili import (
    Allocation,
    UserClass,
    probe_rate_bps,
    proportional_fair_allocation,
    scenario_a,
    scenario_b,
    scenario_c,
)
from mptcplab.models.tcp_throughput import (
    mathis_constant,
    mathis_throughput_bps,
    padhye_approx_throughput_pps,
    padhye_expected_window,
    padhye_throughput_bps,
    padhye_throughput_pps,
)

__all__ = [
    "Allocation",
    "Rounding",
    "UserClass",
    "bdp_packets",
    "cwnd_while_buffer_fills",
    "d_ca",
    "d_ss",
    "delta_rounds",
    "expected_packets_at_rounds",
    "expected_packets_before_second_flow",
    "increment_efficiency",
    "increment_underestimation",
    "lia_alpha",
    "loss_free_packets",
    "loss_free_packets_at_rounds",
    "loss_rate_per_cycle",
    "loss_round_distribution",
    "mathis_constant",
    "mathis_throughput_bps",
    "packets_given_loss_round",
    "packets_per_cycle",
    "padhye_approx_throughput_pps",
    "padhye_expected_window",
    "padhye_throughput_bps",
    "padhye_throughput_pps",
    "paper_values",
    "probe_rate_bps",
    "proportional_fair_allocation",
    "psi",
    "receive_buffer_bytes",
    "scenario_a",
    "scenario_b",
    "scenario_c",
    "stms_gap_bytes",
    "stms_gap_packets",
    "storage_capacity",
    "t_ca_exact",
    "t_ca_printed",
]
