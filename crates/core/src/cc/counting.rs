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
