//! The link part of the scenario schema: rate or capacity trace, delay and jitter, queue and
//! AQM, loss models, and schedules of changes.
//!
//! A path's top-level values apply to both directions; its `up` / `down` tables override any
//! of them per direction. Trace files are read once, when the scenario is validated.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::qdisc::{check_aqm, qdisc, Aqm};
use super::{ConfigError, Prob};
use crate::net::jitter::{Distribution, Jitter};
use crate::net::link::{Capacity, LinkParams, ScheduledChange};
use crate::net::qdisc::{DecidesAt, QueueLimit};
use crate::net::service::{OppTrace, RateProfile};
use crate::units::{Dur, Rate, MAX_DUR_NS};

/// Delay variation (netem-like).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JitterCfg {
    /// netem's jitter: the half-width for `uniform`, the standard deviation otherwise.
    pub amount: Dur,
    #[serde(default)]
    pub distribution: Distribution,
    /// Whether packets may overtake each other (netem's behaviour); by default order is kept.
    #[serde(default)]
    pub reorder: bool,
}

impl JitterCfg {
    fn resolve(self) -> Jitter {
        Jitter { amount: self.amount, distribution: self.distribution, reorder: self.reorder }
    }
}

/// One change of a link's parameters at time `at` (repeating with `schedule_period`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScheduleStep {
    pub at: Dur,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<Rate>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay: Option<Dur>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loss: Option<Prob>,
}

impl ScheduleStep {
    /// The change of delay and loss (a change of rate is resolved into the capacity).
    fn resolve(&self) -> ScheduledChange {
        ScheduledChange { at: self.at, delay: self.delay, loss: self.loss.map(|l| l.0) }
    }
}

macro_rules! link_fields {
    ($(#[$m:meta])* pub struct $name:ident { $($extra:tt)* }) => {
        $(#[$m])*
        #[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
        #[serde(deny_unknown_fields)]
        pub struct $name {
            $($extra)*
            /// A named preset (`crates/core/presets/<name>.toml`, optionally `<name>.up` or
            /// `<name>.down`) whose values fill in whatever is left unset here.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub preset: Option<String>,
            /// Bit rate, counted on full on-wire packets.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub rate: Option<Rate>,
            /// Mahimahi trace file (one ms timestamp per 1500-byte delivery opportunity).
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub trace: Option<String>,
            /// Capacity trace file of `second,bytes_per_second` lines (repeats at its end).
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub rate_trace: Option<String>,
            /// One-way propagation delay.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub delay: Option<Dur>,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub jitter: Option<JitterCfg>,
            /// Queue limit at the link's entrance (default 1000 packets).
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub queue: Option<QueueLimit>,
            /// Where the queue sits: in a router (default) or in the sending host (a `tc`
            /// rate limit on the sender's own interface), where TCP small queues hold the
            /// backlog in the sender's sockets ([`QueueAt`]).
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub queue_at: Option<QueueAt>,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub aqm: Option<Aqm>,
            /// Mean loss probability per packet.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub loss: Option<Prob>,
            /// Mean loss burst length (packets); > 1 selects Gilbert–Elliott losses.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub loss_burst: Option<f64>,
            /// Explicit drops: ordinals (1 = first) of packets offered to the link.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub drop: Option<Vec<u64>>,
            /// Changes of rate, delay and loss over time.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub schedule: Option<Vec<ScheduleStep>>,
            /// Repeat the schedule with this period.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub schedule_period: Option<Dur>,
        }
    };
}

pub(crate) use link_fields;

link_fields!(
    /// Per-direction overrides of a path's link parameters.
    pub struct LinkSpec {}
);

link_fields!(
    /// A path of the two-host topology: an uplink (client → server) and a downlink.
    /// Top-level values apply to both directions; `up` / `down` override per direction.
    pub struct PathCfg {
        pub name: String,
        #[serde(default)]
        pub up: LinkSpec,
        #[serde(default)]
        pub down: LinkSpec,
    }
);

/// Where a link's queue sits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum QueueAt {
    /// In a router between the hosts: a TCP sender sees it only through its RTT.
    #[default]
    Router,
    /// In the sending host (`tc` on its interface): each packet counts against its sender's
    /// TCP small queues until the link has sent it ([`crate::tcp::tsq`]). Paths only; the
    /// queue must be drop-tail or RED (a CoDel queue decides departures when they happen).
    Host,
}

/// Trace files read during validation, by path.
#[derive(Clone, Debug, Default)]
pub struct Traces {
    pub opportunities: BTreeMap<String, Arc<OppTrace>>,
    pub rates: BTreeMap<String, Arc<RateProfile>>,
}

/// Largest trace file read (256 MiB). A Mahimahi trace spends about 8 bytes (a millisecond
/// timestamp and a newline) per 1500-byte delivery opportunity, so this is about an hour of
/// a 100 Mbit/s link; anything larger is almost surely not a trace (or a device such as
/// `/dev/zero`) and would be read into memory whole.
pub const MAX_TRACE_BYTES: u64 = 256 << 20;

/// Reads a trace file: a regular file of at most [`MAX_TRACE_BYTES`].
pub fn read_trace(path: &str) -> Result<String, String> {
    let meta = std::fs::metadata(path).map_err(|e| format!("cannot read `{path}`: {e}"))?;
    if !meta.is_file() {
        return Err(format!("`{path}` is not a regular file"));
    }
    if meta.len() > MAX_TRACE_BYTES {
        return Err(format!("`{path}` has {} B; a trace file may have at most 256 MiB", meta.len()));
    }
    std::fs::read_to_string(path).map_err(|e| format!("cannot read `{path}`: {e}"))
}

/// Most seconds of a capacity trace: second `k` covers [k - 1, k) s, so the trace's period,
/// its last second, is at most [`MAX_DUR_NS`] (2^53 ns) like any duration.
pub const MAX_RATE_TRACE_SECS: u64 = MAX_DUR_NS / 1_000_000_000;

/// Parses a `second,bytes_per_second` capacity trace (seconds 1, 2, ... in order, at most
/// [`MAX_RATE_TRACE_SECS`]).
pub fn parse_rate_trace(text: &str) -> Result<RateProfile, String> {
    parse_rate_trace_within(text, MAX_RATE_TRACE_SECS)
}

/// [`parse_rate_trace`] with at most `max_secs` seconds.
fn parse_rate_trace_within(text: &str, max_secs: u64) -> Result<RateProfile, String> {
    let mut rates = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let l = line.trim();
        if l.is_empty() || l.starts_with('#') {
            continue;
        }
        let mut parts = l.split(',');
        let (Some(sec), Some(bps), None) = (parts.next(), parts.next(), parts.next()) else {
            return Err(format!("line {}: `{l}` is not `second,bytes_per_second`", n + 1));
        };
        let sec: f64 = sec.trim().parse().map_err(|_| format!("line {}: `{sec}` is not a number of seconds", n + 1))?;
        let bytes: f64 =
            bps.trim().parse().map_err(|_| format!("line {}: `{bps}` is not a number of bytes per second", n + 1))?;
        if bytes < 0.0 || !bytes.is_finite() {
            return Err(format!("line {}: {bytes} bytes/s is negative", n + 1));
        }
        if bytes * 8.0 > crate::units::MAX_RATE_BPS {
            return Err(format!("line {}: {bytes} bytes/s is above the 1Tbit fastest link", n + 1));
        }
        if sec != (rates.len() + 1) as f64 {
            return Err(format!("line {}: second {sec} out of sequence (expected {})", n + 1, rates.len() + 1));
        }
        if rates.len() as u64 >= max_secs {
            return Err(format!(
                "line {}: second {sec} ends beyond 2^53 ns (about 104 days), the longest time a scenario may give",
                n + 1
            ));
        }
        rates.push((bytes * 8.0).round() as u64);
    }
    if rates.is_empty() {
        return Err("the trace has no samples".into());
    }
    if rates.iter().all(|&r| r == 0) {
        return Err("every sample is 0 bytes/s: the link could never send".into());
    }
    let starts = (0..rates.len() as u64).map(Dur::from_secs).collect();
    Ok(RateProfile { starts, period: Some(Dur::from_secs(rates.len() as u64)), rates })
}

impl PathCfg {
    fn pick<T: Clone>(o: &Option<T>, base: &Option<T>) -> Option<T> {
        o.clone().or_else(|| base.clone())
    }

    /// Resolves one direction; `traces` holds the files read at validation.
    pub fn resolve(&self, o: &LinkSpec, traces: &Traces) -> LinkParams {
        // Validation guarantees exactly one capacity source per direction.
        let trace = Self::pick(&o.trace, &self.trace);
        let rate_trace = Self::pick(&o.rate_trace, &self.rate_trace);
        let rate = Self::pick(&o.rate, &self.rate);
        let schedule = Self::pick(&o.schedule, &self.schedule).unwrap_or_default();
        let period = Self::pick(&o.schedule_period, &self.schedule_period);
        let (capacity, nominal_rate) = if let Some(t) = trace.filter(|_| o.rate.is_none() && o.rate_trace.is_none()) {
            let t = traces.opportunities.get(&t).expect("trace loaded at validation").clone();
            let mean = Rate(t.mean_bps().round() as u64);
            (Capacity::Trace(t), mean)
        } else if let Some(t) = rate_trace.filter(|_| o.rate.is_none()) {
            let p = traces.rates.get(&t).expect("trace loaded at validation").clone();
            let mean = Rate(p.mean_bps().round() as u64);
            (Capacity::Rate(p), mean)
        } else {
            let r = rate.expect("validated: a rate");
            let mut starts = vec![Dur::ZERO];
            let mut rates = vec![r.bps()];
            for s in &schedule {
                if let Some(x) = s.rate {
                    if s.at == Dur::ZERO {
                        rates[0] = x.bps();
                    } else {
                        starts.push(s.at);
                        rates.push(x.bps());
                    }
                }
            }
            (Capacity::Rate(Arc::new(RateProfile { starts, rates, period })), r)
        };
        let mut drop = Self::pick(&o.drop, &self.drop).unwrap_or_default();
        drop.sort_unstable();
        drop.dedup();
        let queue = Self::pick(&o.queue, &self.queue).unwrap_or(QueueLimit::Packets(1000));
        LinkParams {
            capacity,
            nominal_rate,
            delay: Self::pick(&o.delay, &self.delay).unwrap_or_default(),
            jitter: Self::pick(&o.jitter, &self.jitter).map(JitterCfg::resolve),
            qdisc: qdisc(queue, Self::pick(&o.aqm, &self.aqm)),
            loss: Self::pick(&o.loss, &self.loss).unwrap_or_default().0,
            loss_burst: Self::pick(&o.loss_burst, &self.loss_burst),
            drop,
            schedule: schedule.iter().map(ScheduleStep::resolve).collect(),
            schedule_period: period,
            at_host: Self::pick(&o.queue_at, &self.queue_at) == Some(QueueAt::Host),
        }
    }

    /// Checks one direction and reads its trace files into `traces`.
    pub(crate) fn check(&self, prefix: &str, dir: &str, o: &LinkSpec, traces: &mut Traces) -> Result<(), ConfigError> {
        // Name the key where it is written: the direction's table or the path's.
        let own_keys = serde_json::to_value(o).ok();
        let at = |k: &str| {
            let top = k.split(['.', '[']).next().unwrap_or(k);
            if own_keys.as_ref().and_then(|v| v.get(top)).is_some() {
                format!("{prefix}.{dir}.{k}")
            } else {
                format!("{prefix}.{k}")
            }
        };
        let sources = [
            Self::pick(&o.rate, &self.rate).map(|_| "rate"),
            Self::pick(&o.trace, &self.trace).map(|_| "trace"),
            Self::pick(&o.rate_trace, &self.rate_trace).map(|_| "rate_trace"),
        ];
        // A per-direction source overrides the path-level one.
        let own: Vec<&str> =
            [o.rate.map(|_| "rate"), o.trace.as_ref().map(|_| "trace"), o.rate_trace.as_ref().map(|_| "rate_trace")]
                .into_iter()
                .flatten()
                .collect();
        let chosen: Vec<&str> = if own.is_empty() { sources.into_iter().flatten().collect() } else { own };
        if chosen.is_empty() {
            return Err(ConfigError::new(at("rate"), "no capacity: give one of rate, trace or rate_trace"));
        }
        if chosen.len() > 1 {
            return Err(ConfigError::new(
                at(chosen[1]),
                format!("{} given together; a link takes exactly one of rate, trace, rate_trace", chosen.join(" and ")),
            ));
        }
        let file_of = |k: &str| match k {
            "trace" => o.trace.clone().or_else(|| self.trace.clone()),
            _ => o.rate_trace.clone().or_else(|| self.rate_trace.clone()),
        };
        match chosen[0] {
            "trace" => {
                let f = file_of("trace").expect("chosen");
                if let std::collections::btree_map::Entry::Vacant(slot) = traces.opportunities.entry(f.clone()) {
                    let text = read_trace(&f).map_err(|e| ConfigError::new(at("trace"), e))?;
                    let t = OppTrace::parse(&text)
                        .map_err(|e| ConfigError::new(at("trace"), format!("`{f}` is not a Mahimahi trace: {e}")))?;
                    if t.mean_bps() > crate::units::MAX_RATE_BPS {
                        return Err(ConfigError::new(
                            at("trace"),
                            format!("`{f}` averages {:.3e} bit/s, above the 1Tbit fastest link", t.mean_bps()),
                        ));
                    }
                    slot.insert(Arc::new(t));
                }
            }
            "rate_trace" => {
                let f = file_of("rate_trace").expect("chosen");
                if let std::collections::btree_map::Entry::Vacant(slot) = traces.rates.entry(f.clone()) {
                    let text = read_trace(&f).map_err(|e| ConfigError::new(at("rate_trace"), e))?;
                    let t = parse_rate_trace(&text)
                        .map_err(|e| ConfigError::new(at("rate_trace"), format!("`{f}`: {e}")))?;
                    slot.insert(Arc::new(t));
                }
            }
            _ => {}
        }
        let schedule = Self::pick(&o.schedule, &self.schedule).unwrap_or_default();
        let period = Self::pick(&o.schedule_period, &self.schedule_period);
        for (k, s) in schedule.iter().enumerate() {
            if k > 0 && s.at < schedule[k - 1].at {
                return Err(ConfigError::new(
                    at(&format!("schedule[{k}].at")),
                    format!(
                        "{} comes before the previous step ({}); steps must be in time order",
                        s.at,
                        schedule[k - 1].at
                    ),
                ));
            }
            if s.rate.is_some() && chosen[0] != "rate" {
                return Err(ConfigError::new(
                    at(&format!("schedule[{k}].rate")),
                    format!("a {} link's capacity comes from its trace; schedule only delay and loss", chosen[0]),
                ));
            }
            if period.is_some_and(|p| s.at >= p) {
                return Err(ConfigError::new(
                    at(&format!("schedule[{k}].at")),
                    format!("{} is not inside the schedule_period", s.at),
                ));
            }
            if s.loss.is_some_and(|l| l.0 >= 1.0) {
                return Err(ConfigError::new(
                    at(&format!("schedule[{k}].loss")),
                    "100% loss never delivers anything; must be < 100%",
                ));
            }
        }
        if period.is_some_and(|p| p == Dur::ZERO) {
            return Err(ConfigError::new(at("schedule_period"), "must be > 0"));
        }
        match Self::pick(&o.queue, &self.queue) {
            Some(QueueLimit::Packets(0)) | Some(QueueLimit::Bytes(0)) | Some(QueueLimit::Time(Dur::ZERO)) => {
                return Err(ConfigError::new(at("queue"), "must hold at least one packet"));
            }
            Some(QueueLimit::Bytes(b)) if b < 64 => {
                return Err(ConfigError::new(
                    at("queue"),
                    format!("{b} B cannot hold a single packet (>= 64 B needed)"),
                ));
            }
            _ => {}
        }
        if let Some(k) = Self::pick(&o.drop, &self.drop).and_then(|d| d.iter().position(|&n| n == 0)) {
            return Err(ConfigError::new(
                at(&format!("drop[{k}]")),
                "0 is not a packet ordinal; ordinals start at 1 (the first packet offered to the link)",
            ));
        }
        if Self::pick(&o.loss, &self.loss).is_some_and(|l| l.0 >= 1.0) {
            return Err(ConfigError::new(at("loss"), "100% loss never delivers anything; must be < 100%"));
        }
        if let Some(b) = Self::pick(&o.loss_burst, &self.loss_burst) {
            if !(b >= 1.0 && b.is_finite()) {
                return Err(ConfigError::new(at("loss_burst"), format!("{b} must be a mean burst length >= 1 packet")));
            }
        }
        // TCP small queues count a packet in a host queue until it leaves, which the link
        // knows on arrival only when the discipline decides at enqueue (not CoDel).
        let queue = Self::pick(&o.queue, &self.queue).unwrap_or(QueueLimit::Packets(1000));
        if Self::pick(&o.queue_at, &self.queue_at) == Some(QueueAt::Host)
            && qdisc(queue, Self::pick(&o.aqm, &self.aqm)).decides_at() == DecidesAt::Dequeue
        {
            return Err(ConfigError::new(
                at("queue_at"),
                "a host queue needs a drop-tail or RED queue: CoDel decides departures as they happen, \
                 and TCP small queues must know when each packet leaves",
            ));
        }
        check_aqm(Self::pick(&o.aqm, &self.aqm), &at)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_capacity_trace_ends_within_2_to_the_53_ns() {
        // 2^53 ns = 9 007 199.25 s: second 9 007 199 ends inside, second 9 007 200 beyond.
        assert_eq!(MAX_RATE_TRACE_SECS, 9_007_199);
        assert!(Dur::from_secs(MAX_RATE_TRACE_SECS).0 <= MAX_DUR_NS);
        assert!(Dur::from_secs(MAX_RATE_TRACE_SECS + 1).0 > MAX_DUR_NS);
        // The same rule with a bound of 3 seconds: a fourth line is refused, naming it.
        let p = parse_rate_trace_within("1,100\n2,100\n3,100\n", 3).unwrap();
        assert_eq!(p.period, Some(Dur::from_secs(3)));
        let e = parse_rate_trace_within("1,100\n2,100\n3,100\n4,100\n", 3).unwrap_err();
        assert!(e.starts_with("line 4: second 4 ends beyond 2^53 ns"), "{e}");
    }
}
