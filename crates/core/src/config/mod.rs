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

macro_rules! unit_serde {
    ($t:ty, $parse:expr, $what:expr, $from_f64:expr, $to_string:expr) => {
        impl<'de> serde::Deserialize<'de> for $t {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl<'de> serde::de::Visitor<'de> for V {
                    type Value = $t;
                    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                        f.write_str($what)
                    }
                    fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<$t, E> {
                        $parse(s).map_err(E::custom)
                    }
                    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<$t, E> {
                        ($from_f64)(v).map_err(E::custom)
                    }
                    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<$t, E> {
                        ($from_f64)(v as f64).map_err(E::custom)
                    }
                    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<$t, E> {
                        ($from_f64)(v as f64).map_err(E::custom)
                    }
                }
                d.deserialize_any(V)
            }
        }
        impl serde::Serialize for $t {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(&($to_string)(self))
            }
        }
    };
}

pub(crate) use unit_serde;

mod algorithms;
mod buffer;
mod conn;
mod link;
mod preset;
pub mod profile;
mod topology;
pub use algorithms::*;
pub use buffer::{BufSize, BufTriple};
pub use conn::*;
pub use link::{Aqm, Capacity, JitterCfg, LinkParams, LinkSpec, PathCfg, QueueAt, QueueLimit, ScheduleStep, Traces};
pub use preset::{presets, PresetInfo};
pub use profile::Stack;
pub use topology::{LinkCfg, RouteCfg, RouteTable};

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

/// A size in bytes (`"600KB"`, `"1MiB"`, or a number of bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct ByteSize(pub u64);

unit_serde!(
    ByteSize,
    |s: &str| units::parse_bytes(s).map(ByteSize),
    "a size such as \"600KB\" or \"1MiB\" (a plain number is bytes)",
    |v: f64| if v >= 0.0 && v.fract() == 0.0 {
        units::parse_bytes(&format!("{v}B")).map(ByteSize)
    } else {
        Err(format!("{v} must be a whole, non-negative number of bytes"))
    },
    |b: &ByteSize| format!("{}B", b.0)
);

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

// ---------------------------------------------------------------------------------------
// Parsing and validation
// ---------------------------------------------------------------------------------------

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != *cb);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// The closest allowed name to `given`, if it is close enough to be a typo.
pub fn did_you_mean<'a>(given: &str, allowed: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    allowed
        .into_iter()
        .map(|a| (edit_distance(given, a), a))
        .filter(|(d, a)| *d <= 2.max(a.len() / 3))
        .min_by_key(|(d, _)| *d)
        .map(|(_, a)| a)
}

/// Adds a "did you mean" to serde's "unknown field/variant `x`, expected one of ..." messages.
fn improve_message(msg: &str) -> String {
    let (Some(s), Some(e)) = (msg.find('`'), msg[msg.find('`').map_or(0, |i| i + 1)..].find('`')) else {
        return msg.to_string();
    };
    let given = &msg[s + 1..s + 1 + e];
    let allowed: Vec<&str> =
        msg[s + 1 + e + 1..].split('`').enumerate().filter(|(i, _)| i % 2 == 1).map(|(_, t)| t).collect();
    if allowed.is_empty() || !(msg.starts_with("unknown field") || msg.starts_with("unknown variant")) {
        return msg.to_string();
    }
    match did_you_mean(given, allowed.iter().copied()) {
        Some(s) => format!("{msg} (did you mean `{s}`?)"),
        None => msg.to_string(),
    }
}

fn strip_position(msg: &str) -> String {
    // serde_json appends " at line L column C", meaningless after TOML → JSON conversion.
    match msg.rfind(" at line ") {
        Some(i) => msg[..i].to_string(),
        None => msg.to_string(),
    }
}

fn path_string(p: &serde_path_to_error::Path) -> String {
    let s = p.to_string();
    if s == "." {
        String::new()
    } else {
        s
    }
}

impl Scenario {
    /// Parses and validates a scenario given as JSON.
    pub fn from_json_str(s: &str) -> Result<Scenario, ConfigError> {
        let mut value: serde_json::Value = serde_json::from_str(s)
            .map_err(|e| ConfigError::new("", format!("malformed JSON: {}", strip_position(&e.to_string()))))?;
        profile::apply_profiles(&mut value);
        let mut sc: Scenario = serde_path_to_error::deserialize(value).map_err(|e| {
            ConfigError::new(path_string(e.path()), improve_message(&strip_position(&e.inner().to_string())))
        })?;
        sc.validate()?;
        sc.load_links()?;
        Ok(sc)
    }

    /// Parses and validates a scenario given as TOML.
    pub fn from_toml_str(s: &str) -> Result<Scenario, ConfigError> {
        let value: toml::Value =
            toml::from_str(s).map_err(|e| ConfigError::new("", format!("malformed TOML: {}", e.message())))?;
        let json = serde_json::to_string(&value).map_err(|e| ConfigError::new("", e.to_string()))?;
        Scenario::from_json_str(&json)
    }

    /// The fully resolved scenario (every default filled in) as pretty JSON.
    pub fn to_json_pretty(&self) -> String {
        serde_json::to_string_pretty(self).expect("scenario serialises")
    }

    pub fn path_index(&self, name: &str) -> Option<usize> {
        self.paths.iter().position(|p| p.name == name)
    }

    /// Checks every link and reads the trace files it names (once each).
    fn load_links(&mut self) -> Result<(), ConfigError> {
        self.expand_presets()?;
        let mut traces = Traces::default();
        for p in self.paths.iter_mut() {
            // Fill the defaults in, so the resolved scenario shows them.
            p.queue.get_or_insert(QueueLimit::Packets(1000));
            p.loss.get_or_insert(Prob(0.0));
            p.delay.get_or_insert(Dur::ZERO);
        }
        for (i, p) in self.paths.iter().enumerate() {
            p.check(&format!("paths[{i}]"), "up", &p.up, &mut traces)?;
            p.check(&format!("paths[{i}]"), "down", &p.down, &mut traces)?;
        }
        for (i, l) in self.links.iter().enumerate() {
            l.as_path().check(&format!("links[{i}]"), "", &LinkSpec::default(), &mut traces)?;
            if l.queue_at == Some(QueueAt::Host) {
                return Err(ConfigError::new(
                    format!("links[{i}].queue_at"),
                    "a host queue is modelled on paths only (the first link a host's packets take); \
                     use a path, or `router`",
                ));
            }
        }
        self.route_table()?;
        self.traces = traces;
        Ok(())
    }

    /// Parameters of general link `i` (`[[links]]`).
    pub fn general_link(&self, i: usize) -> LinkParams {
        self.links[i].as_path().resolve(&LinkSpec::default(), &self.traces)
    }

    /// Client → server and server → client parameters of path `i`.
    pub fn links_of(&self, i: usize) -> [LinkParams; 2] {
        let p = &self.paths[i];
        [p.resolve(&p.up, &self.traces), p.resolve(&p.down, &self.traces)]
    }

    /// A queue given in bytes must hold one full-sized packet of every connection that
    /// crosses it; a smaller one drops every data packet.
    fn check_queues_hold_a_packet(&self) -> Result<(), ConfigError> {
        let mtu_of =
            |uses: &dyn Fn(&ConnCfg) -> bool| self.connections.iter().filter(|c| uses(c)).map(|c| c.tcp.mtu).max();
        let refuse = |key: String, b: u64, mtu: u64| {
            ConfigError::new(key, format!("{b} B cannot hold one {mtu}-byte packet (the largest MTU crossing it)"))
        };
        for (i, p) in self.paths.iter().enumerate() {
            let Some(mtu) = mtu_of(&|c: &ConnCfg| c.paths.contains(&p.name)) else { continue };
            for (dir, o) in [("up", &p.up), ("down", &p.down)] {
                let (key, q) = match (&o.queue, &p.queue) {
                    (Some(q), _) => (format!("paths[{i}].{dir}.queue"), q),
                    (None, Some(q)) => (format!("paths[{i}].queue"), q),
                    (None, None) => continue,
                };
                if let QueueLimit::Bytes(b) = *q {
                    if b < mtu {
                        return Err(refuse(key, b, mtu));
                    }
                }
            }
        }
        for (i, l) in self.links.iter().enumerate() {
            let crosses = |c: &ConnCfg| c.routes.iter().any(|r| r.up.contains(&l.name) || r.down.contains(&l.name));
            let Some(mtu) = mtu_of(&crosses) else { continue };
            if let Some(QueueLimit::Bytes(b)) = l.queue {
                if b < mtu {
                    return Err(refuse(format!("links[{i}].queue"), b, mtu));
                }
            }
        }
        Ok(())
    }

    /// Semantic checks that the types alone cannot express.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.duration == Dur::ZERO {
            return Err(ConfigError::new("duration", "must be > 0 (e.g. \"60s\")"));
        }
        if self.paths.is_empty() && self.links.is_empty() {
            return Err(ConfigError::new("paths", "at least one path (or [[links]] with routes) is needed"));
        }
        if self.paths.len() > 64 {
            return Err(ConfigError::new(
                "paths",
                format!("{} paths given; at most 64 are supported", self.paths.len()),
            ));
        }
        for (i, p) in self.paths.iter().enumerate() {
            let at = |k: &str| format!("paths[{i}].{k}");
            if p.name.is_empty() {
                return Err(ConfigError::new(at("name"), "must not be empty"));
            }
            if self.paths[..i].iter().any(|q| q.name == p.name) {
                return Err(ConfigError::new(
                    at("name"),
                    format!("`{}` is used by two paths; names must be unique", p.name),
                ));
            }
        }
        if self.connections.is_empty() {
            return Err(ConfigError::new("connections", "at least one connection is needed"));
        }
        let names: Vec<&str> = self.paths.iter().map(|p| p.name.as_str()).collect();
        for (i, c) in self.connections.iter().enumerate() {
            let at = |k: &str| format!("connections[{i}].{k}");
            if c.name.is_empty() {
                return Err(ConfigError::new(at("name"), "must not be empty"));
            }
            if self.connections[..i].iter().any(|o| o.name == c.name) {
                return Err(ConfigError::new(
                    at("name"),
                    format!("`{}` is used by two connections; names must be unique", c.name),
                ));
            }
            if c.paths.is_empty() == c.routes.is_empty() {
                return Err(ConfigError::new(
                    at("paths"),
                    "give either paths (names of [[paths]]) or routes (over [[links]]), exactly one of them",
                ));
            }
            for (j, p) in c.paths.iter().chain(c.backup.iter()).enumerate() {
                if !names.contains(&p.as_str()) {
                    let key = if j < c.paths.len() {
                        format!("paths[{j}]")
                    } else {
                        format!("backup[{}]", j - c.paths.len())
                    };
                    let hint = did_you_mean(p, names.iter().copied())
                        .map(|s| format!(" (did you mean `{s}`?)"))
                        .unwrap_or_default();
                    return Err(ConfigError::new(
                        at(&key),
                        format!("no path named `{p}`; defined paths: {}{hint}", names.join(", ")),
                    ));
                }
            }
            for (j, b) in c.backup.iter().enumerate() {
                if !c.paths.contains(b) {
                    return Err(ConfigError::new(
                        at(&format!("backup[{j}]")),
                        format!("`{b}` is not one of this connection's paths ({})", c.paths.join(", ")),
                    ));
                }
            }
            if c.kind == ConnKind::Tcp {
                if c.paths.len() + c.routes.len() != 1 {
                    return Err(ConfigError::new(
                        at("paths"),
                        format!(
                            "a tcp connection uses exactly one path, {} given (use kind = \"mptcp\" for several)",
                            c.paths.len() + c.routes.len()
                        ),
                    ));
                }
                if let Err(msg) = algorithms::check_single_path(c.cc) {
                    return Err(ConfigError::new(at("cc"), msg));
                }
            }
            if let Err((key, msg)) = c.cc_params.check() {
                return Err(ConfigError::new(at(&format!("cc_params.{key}")), msg));
            }
            if c.start >= self.duration {
                return Err(ConfigError::new(
                    at("start"),
                    format!("{} is not before the end of the run ({})", c.start, self.duration),
                ));
            }
            match c.app {
                AppCfg::Download { size } if size.0 == 0 => {
                    return Err(ConfigError::new(at("app.size"), "a download needs at least one byte"));
                }
                AppCfg::Periodic { size, period, count } => {
                    if size.0 == 0 {
                        return Err(ConfigError::new(at("app.size"), "each period needs at least one byte"));
                    }
                    if period < MIN_APP_PERIOD {
                        return Err(ConfigError::new(
                            at("app.period"),
                            format!(
                                "{period} is below 1us: writes that often are a bulk sender (a 1500-byte packet \
                                 takes 1.2us even at 10 Gbit/s); use kind = \"bulk\""
                            ),
                        ));
                    }
                    if count == Some(0) {
                        return Err(ConfigError::new(at("app.count"), "must be >= 1"));
                    }
                    // The total must be a byte count the engine keeps exactly (as any size).
                    let writes = count.unwrap_or(self.duration.0 / period.0 + 1);
                    if size.0.checked_mul(writes).is_none_or(|t| t > 1 << 53) {
                        return Err(ConfigError::new(
                            at("app.count"),
                            format!("{writes} writes of {} B exceed 2^53 B (9 PB) in total", size.0),
                        ));
                    }
                }
                _ => {}
            }
            if let Err((key, msg)) = c.sched_params.check() {
                return Err(ConfigError::new(at(&format!("sched_params.{key}")), msg));
            }
            if let Some(h) = c.max_tcp_header {
                if c.buffer_accounting != BufferAccounting::Skb {
                    return Err(ConfigError::new(
                        at("max_tcp_header"),
                        "applies only with buffer_accounting = \"skb\" (the out-of-tree stack's one-MSS skbs)",
                    ));
                }
                if h > 1024 {
                    return Err(ConfigError::new(at("max_tcp_header"), format!("{h} B is outside 0..=1024 B")));
                }
            }
            let t = &c.tcp;
            if !(64..=65_495).contains(&t.mss) {
                return Err(ConfigError::new(at("tcp.mss"), format!("{} B is outside 64..=65495 B", t.mss)));
            }
            if t.mtu < t.mss + 40 {
                return Err(ConfigError::new(
                    at("tcp.mtu"),
                    format!("{} B cannot carry mss {} B plus 40 B of TCP/IP headers", t.mtu, t.mss),
                ));
            }
            if t.iw == 0 || t.iw > 1000 {
                return Err(ConfigError::new(at("tcp.iw"), format!("{} segments is outside 1..=1000", t.iw)));
            }
            if t.delack_segments == 0 || t.delack_segments > 64 {
                return Err(ConfigError::new(
                    at("tcp.delack_segments"),
                    format!("{} is outside 1..=64", t.delack_segments),
                ));
            }
            if t.dupthresh == 0 {
                return Err(ConfigError::new(at("tcp.dupthresh"), "must be >= 1"));
            }
            if t.rto_min < MIN_RTO || t.rto_min > t.rto_max {
                return Err(ConfigError::new(
                    at("tcp.rto_min"),
                    format!(
                        "{} must be >= 1us (a shorter timer is below one packet's serialisation time at \
                         10 Gbit/s) and <= rto_max ({})",
                        t.rto_min, t.rto_max
                    ),
                ));
            }
            if t.rto_initial < t.rto_min || t.rto_initial > t.rto_max {
                return Err(ConfigError::new(
                    at("tcp.rto_initial"),
                    format!("{} must lie between rto_min ({}) and rto_max ({})", t.rto_initial, t.rto_min, t.rto_max),
                ));
            }
            let seg = t.mss;
            for (key, b) in [("sndbuf", &c.sndbuf), ("rcvbuf", &c.rcvbuf)] {
                if let Err((sub, msg)) = b.check(seg) {
                    return Err(ConfigError::new(at(&format!("{key}{sub}")), msg));
                }
            }
        }
        for (i, c) in self.connections.iter().enumerate() {
            for (r, route) in c.routes.iter().enumerate() {
                if c.routes[..r].iter().any(|o| o.name == route.name) {
                    return Err(ConfigError::new(
                        format!("connections[{i}].routes[{r}].name"),
                        format!("`{}` names two routes of this connection; route names must be unique", route.name),
                    ));
                }
            }
        }
        self.check_queues_hold_a_packet()?;
        if self.output.warmup >= self.duration {
            return Err(ConfigError::new(
                "output.warmup",
                format!(
                    "{} leaves nothing to measure in a {} run; must be < duration",
                    self.output.warmup, self.duration
                ),
            ));
        }
        if let Some(iv) = self.output.timeseries {
            if iv < Dur::from_us(100) {
                return Err(ConfigError::new(
                    "output.timeseries",
                    format!("{iv} is below the 100us minimum sampling interval"),
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const OK: &str = r#"
        duration = "10s"
        [[paths]]
        name = "wifi"
        rate = "8Mbit"
        delay = "10ms"
        queue = "100 packets"
        loss = "0.9%"
        [[connections]]
        name = "c"
        kind = "mptcp"
        paths = ["wifi"]
        app = { kind = "bulk" }
    "#;

    fn refused(text: &str) -> ConfigError {
        Scenario::from_toml_str(text).expect_err("must be refused")
    }

    #[test]
    fn a_value_with_a_line_break_is_quoted_back_on_one_line() {
        let e = refused(&OK.replace(r#"duration = "10s""#, r#"duration = "x\ny""#));
        assert_eq!(e.to_string(), "duration: `x\\ny` is not a duration");
        let e = refused(&OK.replace(r#"duration = "10s""#, r#"duration = "x\u001by\u2028""#));
        assert_eq!(e.to_string(), "duration: `x\\x1by\\u2028` is not a duration");
    }

    #[test]
    fn a_periodic_total_that_overflows_is_refused_at_its_key() {
        // 2^32 writes of 2^32 B wrap to 0 in u64: the run used to end in an invariant panic.
        let app = r#"app = { kind = "periodic", size = "4294967296B", count = 4294967296, period = "1s" }"#;
        let e = refused(&OK.replace(r#"app = { kind = "bulk" }"#, app));
        assert_eq!(e.path, "connections[0].app.count");
        // Without a count the run's duration bounds the writes: 10 s / 1 us = 10^7 writes.
        let app = r#"app = { kind = "periodic", size = "1GB", period = "1us" }"#;
        assert_eq!(refused(&OK.replace(r#"app = { kind = "bulk" }"#, app)).path, "connections[0].app.count");
        let app = r#"app = { kind = "periodic", size = "1KB", period = "1us" }"#;
        assert!(Scenario::from_toml_str(&OK.replace(r#"app = { kind = "bulk" }"#, app)).is_ok());
    }

    #[test]
    fn periods_and_timers_below_one_microsecond_are_refused() {
        let app = r#"app = { kind = "periodic", size = "1KB", period = "999ns" }"#;
        assert_eq!(refused(&OK.replace(r#"app = { kind = "bulk" }"#, app)).path, "connections[0].app.period");
        let tcp = r#"app = { kind = "bulk" }
        tcp = { rto_min = "1ns", rto_initial = "1ns", rto_max = "1ns" }"#;
        assert_eq!(refused(&OK.replace(r#"app = { kind = "bulk" }"#, tcp)).path, "connections[0].tcp.rto_min");
    }

    #[test]
    fn a_byte_queue_must_hold_one_packet_of_every_connection_crossing_it() {
        let e = refused(&OK.replace(r#"queue = "100 packets""#, r#"queue = "64B""#));
        assert_eq!(e.path, "paths[0].queue");
        assert!(e.message.contains("1500-byte"), "{}", e.message);
        assert!(Scenario::from_toml_str(&OK.replace(r#"queue = "100 packets""#, r#"queue = "1500B""#)).is_ok());
        // A per-direction queue is named where it is written; a smaller MTU needs less.
        let down = OK.replace(r#"queue = "100 packets""#, "down = { queue = \"1000B\" }");
        assert_eq!(refused(&down).path, "paths[0].down.queue");
        let small_mtu =
            down.replace(r#"app = { kind = "bulk" }"#, "app = { kind = \"bulk\" }\ntcp = { mss = 536, mtu = 576 }");
        assert!(Scenario::from_toml_str(&small_mtu).is_ok());
    }

    #[test]
    fn explicit_drop_ordinals_start_at_one() {
        let e = refused(&OK.replace(r#"loss = "0.9%""#, "drop = [3, 0]"));
        assert_eq!(e.path, "paths[0].drop[1]");
    }

    #[test]
    fn route_names_are_unique_within_a_connection() {
        let text = r#"
            duration = "2s"
            [[links]]
            name = "a"
            from = "client"
            to = "server"
            rate = "10Mbit"
            [[links]]
            name = "b"
            from = "server"
            to = "client"
            rate = "10Mbit"
            [[connections]]
            name = "c"
            kind = "mptcp"
            routes = [{ name = "r", up = ["a"], down = ["b"] }, { name = "r", up = ["a"], down = ["b"] }]
            app = { kind = "bulk" }
        "#;
        assert_eq!(refused(text).path, "connections[0].routes[1].name");
        assert!(Scenario::from_toml_str(&text.replacen("name = \"r\"", "name = \"r1\"", 1)).is_ok());
    }

    #[test]
    fn an_unwritable_capture_directory_is_refused_before_the_run() {
        let dir = std::env::temp_dir().join(format!("mptcplab-pcap-check-{}", std::process::id()));
        std::fs::write(&dir, b"a file, not a directory").unwrap();
        let mut s = Scenario::from_toml_str(OK).unwrap();
        s.output.pcap =
            Some(PcapCfg { dir: dir.join("caps").display().to_string(), per: Default::default(), snaplen: None });
        let Err(e) = crate::run_json(&s.to_json_pretty(), None) else { panic!("must be refused") };
        std::fs::remove_file(&dir).unwrap();
        assert_eq!(e.path, "output.pcap.dir");
    }

    #[test]
    fn loss_recovery_is_chosen_by_name_and_a_wrong_name_lists_the_choices() {
        let s = Scenario::from_toml_str(OK).unwrap();
        assert_eq!((s.connections[0].tcp.recovery, s.connections[0].tcp.prr), (Recovery::Rfc6675, false));
        let linux = OK.replace(
            "app = { kind = \"bulk\" }",
            "app = { kind = \"bulk\" }\ntcp = { recovery = \"rack_tlp\", prr = true }",
        );
        let s = Scenario::from_toml_str(&linux).unwrap();
        assert_eq!((s.connections[0].tcp.recovery, s.connections[0].tcp.prr), (Recovery::RackTlp, true));
        let bad = OK.replace("app = { kind = \"bulk\" }", "app = { kind = \"bulk\" }\ntcp = { recovery = \"rack\" }");
        let e = Scenario::from_toml_str(&bad).unwrap_err().to_string();
        for part in ["connections[0].tcp.recovery", "`rack`", "`rack_tlp`", "`rfc6675`"] {
            assert!(e.contains(part), "{part} missing from: {e}");
        }
    }

    #[test]
    fn bbr_runs_on_the_simulator_for_tcp_and_mptcp() {
        for kind in ["mptcp", "tcp"] {
            let text = OK.replace("kind = \"mptcp\"", &format!("kind = \"{kind}\"\ncc = \"bbr\""));
            let s = Scenario::from_toml_str(&text).unwrap();
            assert_eq!(s.connections[0].cc, CcKind::Bbr);
            let out = crate::run_json(&s.to_json_pretty(), None).unwrap();
            assert!(out.summary.connections[0].goodput_bps > 0.0, "{kind}");
        }
    }

    #[test]
    fn the_linux_stack_resolves_its_profile_and_written_keys_win() {
        let text = OK.replace("kind = \"mptcp\"", "kind = \"mptcp\"\nstack = \"linux\"\nsndbuf = \"1MiB\"");
        let s = Scenario::from_toml_str(&text).unwrap();
        let c = &s.connections[0];
        assert_eq!(c.stack, Stack::Linux);
        assert_eq!(c.sndbuf, BufSize::Fixed(ByteSize(1 << 20)));
        assert_eq!(
            c.rcvbuf,
            BufSize::Auto(BufTriple { min: ByteSize(4096), default: ByteSize(131_072), max: ByteSize(33_554_432) })
        );
        assert_eq!(
            (c.scheduler, c.cc, c.tcp.recovery, c.tcp.prr),
            (SchedKind::LinuxDefault, CcKind::Cubic, Recovery::RackTlp, true)
        );
        assert_eq!(
            (c.buffer_accounting, c.window_update, c.mptcp_retransmit),
            (BufferAccounting::Truesize, WindowUpdate::AllSubflows, true)
        );
        // The resolved scenario parses to the same thing.
        let again = Scenario::from_json_str(&s.to_json_pretty()).unwrap();
        assert_eq!(again.to_json_pretty(), s.to_json_pretty());
        let e =
            Scenario::from_toml_str(&OK.replace("kind = \"mptcp\"", "kind = \"mptcp\"\nstack = \"linx\"")).unwrap_err();
        assert_eq!(e.path, "connections[0].stack");
        assert!(e.message.contains("linux"), "{}", e.message);
    }

    #[test]
    fn buffer_triples_are_checked_key_by_key() {
        let with =
            |b: &str| Scenario::from_toml_str(&OK.replace("kind = \"mptcp\"", &format!("kind = \"mptcp\"\n{b}")));
        let e = with("rcvbuf = { min = \"64KB\", default = \"32KB\", max = \"1MB\" }").unwrap_err();
        assert_eq!(e.path, "connections[0].rcvbuf.min");
        let e = with("sndbuf = { min = \"4KB\", default = \"2MB\", max = \"1MB\" }").unwrap_err();
        assert_eq!(e.path, "connections[0].sndbuf.default");
        let e = with("sndbuf = 0").unwrap_err();
        assert_eq!((e.path.as_str(), e.message.as_str()), ("connections[0].sndbuf", "must be > 0"));
        let e = with("sndbuf = -1").unwrap_err();
        assert_eq!(e.path, "connections[0].sndbuf");
        // The config fuzzer's find: a fixed `rcvbuf` of 2^56 B overflowed size × scaling ratio.
        // Linux's buffers are C ints, so INT_MAX = 2 147 483 647 B is the largest accepted.
        let e = with("rcvbuf = { min = \"4KB\", default = \"64KB\", max = \"1000GB\" }").unwrap_err();
        assert_eq!(e.path, "connections[0].rcvbuf.max");
        assert!(e.message.contains("2147483647 B"), "{}", e.message);
        assert!(with("sndbuf = 2147483648").is_err() && with("sndbuf = 2147483647").is_ok());
        let e = with("rcvbuf = { min = \"4KB\", default = \"64KB\" }").unwrap_err();
        assert_eq!(e.path, "connections[0].rcvbuf");
        assert!(e.message.contains("max"), "{}", e.message);
    }

    #[test]
    fn a_valid_scenario_parses_with_defaults() {
        let s = Scenario::from_toml_str(OK).unwrap();
        assert_eq!(s.paths[0].rate, Some(Rate(8_000_000)));
        assert_eq!(s.connections[0].tcp.iw, 10);
        assert!((s.paths[0].loss.unwrap().0 - 0.009).abs() < 1e-12);
        // The resolved form parses back to the same thing.
        assert!(s.to_json_pretty().contains("\"0.9%\""), "{}", s.to_json_pretty());
        let again = Scenario::from_json_str(&s.to_json_pretty()).unwrap();
        assert_eq!(again.to_json_pretty(), s.to_json_pretty());
    }

    #[test]
    fn unknown_keys_name_the_path_and_suggest() {
        let bad = OK.replace("rate = \"8Mbit\"", "rat = \"8Mbit\"");
        let e = Scenario::from_toml_str(&bad).unwrap_err();
        assert_eq!(e.path, "paths[0].rat");
        assert!(e.message.contains("did you mean `rate`"), "{e}");
    }

    #[test]
    fn wrong_units_name_the_field() {
        let bad = OK.replace("\"10ms\"", "\"10 parsecs\"");
        let e = Scenario::from_toml_str(&bad).unwrap_err();
        assert_eq!(e.path, "paths[0].delay");
        assert!(e.message.contains("not a time unit"), "{e}");
    }

    #[test]
    fn a_missing_path_is_reported_with_the_defined_ones() {
        let bad = OK.replace("paths = [\"wifi\"]", "paths = [\"wfi\"]");
        let e = Scenario::from_toml_str(&bad).unwrap_err();
        assert_eq!(e.path, "connections[0].paths[0]");
        assert!(e.message.contains("did you mean `wifi`"), "{e}");
    }

    #[test]
    fn unknown_algorithms_list_the_allowed_ones() {
        let bad = OK.replace("app = { kind = \"bulk\" }", "app = { kind = \"bulk\" }\ncc = \"lai\"");
        let e = Scenario::from_toml_str(&bad).unwrap_err();
        assert_eq!(e.path, "connections[0].cc");
        assert!(e.message.contains("`reno`") && e.message.contains("did you mean `lia`"), "{e}");
    }
}
