//! The slow-start and congestion-avoidance counting rules a controller's window growth
//! follows (chosen per connection in the schema, `tcp.slow_start` and `tcp.ca_counting`).

use serde::{Deserialize, Serialize};

/// Slow-start growth rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum SlowStart {
    /// cwnd += bytes newly acknowledged (doubles per RTT whatever the ACK ratio).
    #[default]
    Linux,
    /// cwnd += 1 MSS per ACK (growth ψ = 1 + 1/b per round with delayed ACKs).
    PerAck,
}

/// Where slow start ends: the test a controller makes on every ACK before growing the window.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum SlowStartBound {
    /// Slow start while cwnd < ssthresh (Linux >= 4.3, `tcp_in_slow_start`).
    #[default]
    Below,
    /// Slow start while cwnd <= ssthresh (Linux up to 4.2: `tcp_reno_cong_avoid`,
    /// `bictcp_cong_avoid`, and MPTCP v0.88's `mptcp_ccc_cong_avoid` test
    /// `tp->snd_cwnd <= tp->snd_ssthresh`): a window set to ssthresh after a recovery grows by
    /// the slow-start rule on the next ACK that may grow it, to at most ssthresh + 1 segment
    /// (`tcp_slow_start`'s cap from 3.18; one segment per ACK before).
    AtOrBelow,
}

/// Congestion-avoidance counting.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum CaCounting {
    /// Bytes acknowledged (RFC 3465; Linux since 3.18): +1 segment per RTT whatever the
    /// delayed-ACK ratio.
    #[default]
    Bytes,
    /// One count per ACK (Linux up to 3.17, the kernels seed 000 measured): +1/b segment per
    /// RTT with delayed ACKs, the rule Eq. (10)'s 3b/8 term assumes.
    PerAck,
}
