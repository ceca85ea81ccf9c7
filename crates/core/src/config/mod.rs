//! The one scenario schema: topology, links, connections, algorithms, buffers,
//! applications, duration, seed and outputs.
//!
//! Every front end (the Python package, the benchmarks, the tests) goes through
//! [`Scenario::from_json_str`] / [`Scenario::from_toml_str`], which report the offending key
//! path, the value and what is allowed. Durations, rates, sizes and probabilities accept human
//! units (`"10ms"`, `"8Mbit"`, `"600KB"`, `"64 packets"`, `"0.9%"`); plain numbers are read in
//! base units (seconds, bit/s, bytes, a fraction), queue limits as packets.

use serde::{Deserialize, Serialize};
use std::fmt;

use crate::units::{self, Dur, Rate};

// ---------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------

/// A configuration error: where (`connections[0].tcp.mss`), and what is wrong or allowed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError {
    pub path: String,
    pub message: String,
}

impl ConfigError {
    /// An error at `path`. Control characters in either part (a value quoted back with a
    /// newline in it) are escaped, so the error always prints as one line.
    pub fn new(path: impl Into<String>, message: impl Into<String>) -> Self {
        ConfigError { path: one_line(path.into()), message: one_line(message.into()) }
    }
}

/// `s` with control characters and line separators escaped as the Python layer escapes
/// them (as in a Python literal: `\n`, `\x1b`, `\u2028`), so an error is always one line.
fn one_line(s: String) -> String {
    let breaks = |c: char| c.is_control() || c == '\u{2028}' || c == '\u{2029}';
    if !s.chars().any(breaks) {
        return s;
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if breaks(c) && (c as u32) < 0x100 => out.push_str(&format!("\\x{:02x}", c as u32)),
            c if breaks(c) => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() || self.path == "." {
            write!(f, "{}", self.message)
        } else {
            write!(f, "{}: {}", self.path, self.message)
        }
    }
}

impl std::error::Error for ConfigError {}

// ---------------------------------------------------------------------------------------
// Unit-carrying values
// ---------------------------------------------------------------------------------------

pub(crate) use crate::units::unit_serde;
pub use crate::units::ByteSize;

mod algorithms;
mod buffer;
mod conn;
mod link;
mod parse;
mod preset;
pub mod profile;
mod qdisc;
mod topology;
mod validate;
mod window;
pub use crate::net::qdisc::QueueLimit;
pub use algorithms::*;
pub use buffer::{BufSize, BufTriple};
pub use conn::*;
pub use link::{JitterCfg, LinkSpec, PathCfg, QueueAt, ScheduleStep, Traces};
pub use parse::did_you_mean;
pub use preset::{presets, PresetInfo};
pub use profile::Stack;
pub use qdisc::{qdisc, Aqm};
pub use topology::{LinkCfg, RouteCfg, RouteTable};
pub use window::*;

/// Shortest period of a periodic application (1 µs): a 1500-byte packet takes 1.2 µs to
/// serialise even at 10 Gbit/s, so more frequent writes are a bulk sender, only slower to
/// simulate (one event per write).
pub const MIN_APP_PERIOD: Dur = Dur(1_000);
/// Smallest `tcp.rto_min` (1 µs): a retransmission timer shorter than one packet's
/// serialisation time at 10 Gbit/s has no physical meaning, and under loss it would fire
/// without bound.
pub const MIN_RTO: Dur = Dur(1_000);

unit_serde!(
    Dur,
    units::parse_dur,
    "a duration such as \"10ms\" or \"2s\" (a plain number is seconds)",
    |v: f64| if v >= 0.0 && v.is_finite() {
        units::parse_dur(&format!("{v}s"))
    } else {
        Err(format!("{v} must be a non-negative duration"))
    },
    |d: &Dur| d.to_string()
);

unit_serde!(
    Rate,
    units::parse_rate,
    "a bit rate such as \"8Mbit\" (a plain number is bit/s)",
    |v: f64| if v >= 1.0 && v.is_finite() {
        units::parse_rate(&format!("{v}bit"))
    } else {
        Err(format!("{v} must be a positive rate in bit/s"))
    },
    |r: &Rate| r.to_string()
);

/// `v` rounded to 12 significant digits, so 0.9 % prints as "0.9%", not "0.9000000000000001%".
fn round_sig(v: f64) -> f64 {
    if v == 0.0 || !v.is_finite() {
        return v;
    }
    let digits = 12 - v.abs().log10().ceil() as i32;
    let k = 10f64.powi(digits);
    (v * k).round() / k
}

/// A probability (`"0.9%"` or a fraction).
#[derive(Clone, Copy, Debug, PartialEq, PartialOrd, Default)]
pub struct Prob(pub f64);

unit_serde!(
    Prob,
    |s: &str| units::parse_prob(s).map(Prob),
    "a probability such as \"0.9%\" or 0.009",
    |v: f64| if (0.0..=1.0).contains(&v) { Ok(Prob(v)) } else { Err(format!("{v} must lie between 0 and 1")) },
    |p: &Prob| format!("{}%", round_sig(p.0 * 100.0))
);

// ---------------------------------------------------------------------------------------
// Schema
// ---------------------------------------------------------------------------------------

fn default_seed() -> u64 {
    1
}

/// A whole scenario.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Short name (used in reports).
    #[serde(default)]
    pub name: String,
    /// One line saying what the scenario is and where its numbers come from.
    #[serde(default)]
    pub description: String,
    /// Master seed; each random component derives its own stream from it.
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// Simulated time after which the run stops (downloads may finish earlier).
    pub duration: Dur,
    /// Paths between the client and the server host (one link each way).
    #[serde(default)]
    pub paths: Vec<PathCfg>,
    /// Links between any named nodes (general topologies), used through connection routes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub links: Vec<LinkCfg>,
    /// Connections (MPTCP or single-path TCP).
    pub connections: Vec<ConnCfg>,
    #[serde(default)]
    pub output: OutputCfg,
    /// Trace files read at validation (not part of the schema).
    #[serde(skip)]
    pub traces: Traces,
}

impl Scenario {
    pub fn path_index(&self, name: &str) -> Option<usize> {
        self.paths.iter().position(|p| p.name == name)
    }
}

#[cfg(test)]
mod tests;
