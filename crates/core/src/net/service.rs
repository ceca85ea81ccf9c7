//! How fast a link serves its queue: a constant or time-varying bit rate, or a trace of
//! delivery opportunities.
//!
//! - [`RateProfile`]: piecewise-constant rate (a constant rate, a schedule of rate changes,
//!   or a per-second bytes/s trace), optionally repeating with a period. The end of a
//!   transmission integrates the rate over time, so a packet that starts at one rate and
//!   ends at another takes exactly the right time; zero-rate intervals stall the link.
//! - [`OppTrace`]: Mahimahi packet-delivery opportunities (Winstein et al., NSDI 2013): one
//!   millisecond timestamp per opportunity to deliver 1500 bytes, repeating with the last
//!   timestamp as period. As in Mahimahi's `LinkQueue`, bytes are a fluid: a packet may
//!   use the rest of one opportunity and part of the next, several small packets share one,
//!   and an opportunity with nothing queued is lost.

use std::sync::Arc;

use crate::units::{Dur, Rate, Time, MAX_DUR_NS};

/// Bytes per Mahimahi delivery opportunity.
pub const OPPORTUNITY_BYTES: u64 = 1500;

/// A piecewise-constant bit rate: `rates[i]` (bit/s) holds from `starts[i]` to the next start.
#[derive(Clone, Debug, PartialEq)]
pub struct RateProfile {
    pub starts: Vec<Dur>,
    pub rates: Vec<u64>,
    /// Repeat every `period` (the profile covers [0, period)).
    pub period: Option<Dur>,
}

impl RateProfile {
    pub fn constant(r: Rate) -> RateProfile {
        RateProfile { starts: vec![Dur::ZERO], rates: vec![r.bps()], period: None }
    }

    /// Rate in effect at `t` and when it next changes (the sums saturate: a change past
    /// the end of time is at `Time::MAX`).
    fn at(&self, t: Time) -> (u64, Option<Time>) {
        let (base, off) = match self.period {
            Some(p) if p.0 > 0 => (t.0 - t.0 % p.0, Dur(t.0 % p.0)),
            _ => (0, Dur(t.0)),
        };
        let i = self.starts.partition_point(|s| *s <= off).saturating_sub(1);
        let next = match self.starts.get(i + 1) {
            Some(s) => Some(Time(base.saturating_add(s.0))),
            None => self.period.filter(|p| p.0 > 0).map(|p| Time(base.saturating_add(p.0))),
        };
        (self.rates[i], next)
    }

    /// When a transmission of `bytes` that starts at `start` ends (`Time::MAX` if the rate
    /// is zero forever after).
    pub fn finish(&self, start: Time, bytes: u64) -> Time {
        if self.rates.len() == 1 {
            return if self.rates[0] == 0 { Time::MAX } else { start + Rate(self.rates[0]).tx_time(bytes) };
        }
        let mut t = start;
        let mut bits = bytes as u128 * 8 * 1_000_000_000; // bit·ns still to send
        let mut idle_segments = 0;
        loop {
            if t == Time::MAX {
                return Time::MAX;
            }
            let (r, next) = self.at(t);
            let span = next.map(|n| n.0 - t.0);
            if r == 0 {
                idle_segments += 1;
                if idle_segments > self.rates.len() + 1 || span.is_none() {
                    return Time::MAX;
                }
            } else {
                idle_segments = 0;
                let need = u64::try_from(bits.div_ceil(r as u128)).unwrap_or(u64::MAX);
                match span {
                    Some(s) if need > s => bits -= s as u128 * r as u128,
                    _ => return Time(t.0.saturating_add(need)),
                }
            }
            t = next.expect("span checked");
        }
    }

    /// Mean rate over one period (or the constant rate), bit/s.
    pub fn mean_bps(&self) -> f64 {
        match self.period {
            Some(p) if self.rates.len() > 1 => {
                let mut total = 0.0;
                for i in 0..self.rates.len() {
                    let end = self.starts.get(i + 1).copied().unwrap_or(p);
                    total += self.rates[i] as f64 * (end.0 - self.starts[i].0) as f64;
                }
                total / p.0 as f64
            }
            _ => self.rates[0] as f64,
        }
    }
}

/// Latest timestamp of a Mahimahi trace (ms): [`MAX_DUR_NS`], the bound on every duration a
/// scenario gives, in whole milliseconds. Converting a timestamp to nanoseconds and adding
/// repetitions of the period then stays far inside 64 bits (a run lasts at most 2^53 ns).
pub const MAX_TRACE_MS: u64 = MAX_DUR_NS / 1_000_000;

/// Mahimahi delivery opportunities (ms offsets within one period).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OppTrace {
    pub ms: Vec<u64>,
    pub period_ms: u64,
}

impl OppTrace {
    /// Parses a Mahimahi trace: one integer millisecond timestamp per line, non-decreasing,
    /// each at most [`MAX_TRACE_MS`].
    pub fn parse(text: &str) -> Result<OppTrace, String> {
        let mut ms = Vec::new();
        for (n, line) in text.lines().enumerate() {
            let l = line.trim();
            if l.is_empty() {
                continue;
            }
            let too_late = || {
                format!(
                    "line {}: timestamp {l} ms is beyond {MAX_TRACE_MS} ms (2^53 ns, about 104 days, the \
                     longest time a scenario may give)",
                    n + 1
                )
            };
            let v: u64 = l.parse().map_err(|_| {
                if l.bytes().all(|b| b.is_ascii_digit()) {
                    too_late()
                } else {
                    format!("line {}: `{l}` is not a whole number of milliseconds", n + 1)
                }
            })?;
            if v > MAX_TRACE_MS {
                return Err(too_late());
            }
            if ms.last().is_some_and(|&p| v < p) {
                return Err(format!(
                    "line {}: timestamp {v} ms goes back in time (timestamps must not decrease)",
                    n + 1
                ));
            }
            ms.push(v);
        }
        let period_ms = *ms.last().ok_or("the trace has no delivery opportunities")?;
        if period_ms == 0 {
            return Err("the last timestamp is 0 ms, so the trace has no period (it must be > 0)".into());
        }
        Ok(OppTrace { ms, period_ms })
    }

    /// Absolute time of opportunity `k` (counting across repetitions); `Time::MAX` (never)
    /// past the end of time, never a wrapped product.
    fn time(&self, k: u64) -> Time {
        let n = self.ms.len() as u64;
        let ms = (k / n).checked_mul(self.period_ms).and_then(|c| c.checked_add(self.ms[(k % n) as usize]));
        ms.and_then(|ms| ms.checked_mul(1_000_000)).map_or(Time::MAX, Time)
    }

    /// Index of the first opportunity at or after `t` (saturating: `u64::MAX` is never).
    fn first_at_or_after(&self, t: Time) -> u64 {
        let ms = t.0.div_ceil(1_000_000);
        let cycle = ms / self.period_ms;
        let off = ms % self.period_ms;
        let n = self.ms.len() as u64;
        let i = self.ms.partition_point(|&x| x < off) as u64;
        cycle.saturating_mul(n).saturating_add(i)
    }

    /// Mean capacity (bit/s).
    pub fn mean_bps(&self) -> f64 {
        self.ms.len() as f64 * OPPORTUNITY_BYTES as f64 * 8.0 / (self.period_ms as f64 * 1e-3)
    }
}

/// The service process of a link, with the state a FIFO transmitter needs.
#[derive(Clone, Debug)]
pub enum Service {
    /// A constant rate (bit/s, non-zero), with the last size served and its transmission
    /// time: most packets on a link have one of a few sizes, and the division is the costly
    /// part of serving one.
    Constant {
        bps: u64,
        last: (u64, Dur),
    },
    Rate(Arc<RateProfile>),
    Opportunities {
        trace: Arc<OppTrace>,
        /// Current opportunity and the bytes still unused in it.
        cur: Option<u64>,
        left: u64,
    },
}

impl Service {
    /// When a packet of `bytes` whose transmission may start at `start` has been delivered
    /// by the transmitter. Calls must come in FIFO order (non-decreasing `start`).
    #[inline]
    pub fn finish(&mut self, start: Time, bytes: u64) -> Time {
        match self {
            Service::Constant { bps, last } => {
                if last.0 != bytes {
                    *last = (bytes, Rate(*bps).tx_time(bytes));
                }
                start + last.1
            }
            _ => self.finish_varying(start, bytes),
        }
    }

    /// [`Service::finish`] for a time-varying rate or a trace (kept out of line: the
    /// constant rate's per-packet path stays small).
    #[inline(never)]
    fn finish_varying(&mut self, start: Time, bytes: u64) -> Time {
        match self {
            Service::Constant { .. } => unreachable!("handled by finish"),
            Service::Rate(p) => p.finish(start, bytes),
            Service::Opportunities { trace, cur, left } => {
                let mut k = match *cur {
                    Some(k) if trace.time(k) >= start && *left > 0 => k,
                    Some(k) if trace.time(k) == start => k,
                    _ => {
                        let k = trace.first_at_or_after(start);
                        *left = OPPORTUNITY_BYTES;
                        k
                    }
                };
                if *cur != Some(k) {
                    *left = OPPORTUNITY_BYTES;
                }
                let mut need = bytes;
                while need > *left {
                    need -= *left;
                    k = k.saturating_add(1);
                    *left = OPPORTUNITY_BYTES;
                }
                *left -= need;
                *cur = Some(k);
                trace.time(k)
            }
        }
    }

    /// The nominal rate for limits expressed in time (bit/s): the rate at `t`, or the
    /// trace's mean capacity.
    pub fn nominal_bps(&self, t: Time) -> f64 {
        match self {
            Service::Constant { bps, .. } => *bps as f64,
            Service::Rate(p) => p.at(t).0 as f64,
            Service::Opportunities { trace, .. } => trace.mean_bps(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rate_change_mid_packet_is_integrated() {
        // 12 Mbit/s for 0.5 ms then 6 Mbit/s: 1500 B = 12 kbit: 6 kbit in the first 0.5 ms,
        // the other 6 kbit take 1 ms at 6 Mbit/s: done at 1.5 ms.
        let p = RateProfile {
            starts: vec![Dur::ZERO, Dur::from_us(500)],
            rates: vec![12_000_000, 6_000_000],
            period: None,
        };
        assert_eq!(p.finish(Time::ZERO, 1500), Time(1_500_000));
    }

    #[test]
    fn zero_rate_intervals_stall_and_periods_repeat() {
        // 1 s at 8 Mbit/s, then 1 s at 0, repeating every 2 s.
        let p = RateProfile {
            starts: vec![Dur::ZERO, Dur::from_secs(1)],
            rates: vec![8_000_000, 0],
            period: Some(Dur::from_secs(2)),
        };
        // 1 MB needs exactly 1 s of service: starting at 0.5 s it ends at 2.5 s.
        assert_eq!(p.finish(Time(500_000_000), 1_000_000), Time(2_500_000_000));
        assert!((p.mean_bps() - 4e6).abs() < 1e-6);
    }

    #[test]
    fn mahimahi_opportunities_carry_1500_bytes_as_a_fluid() {
        let t = Arc::new(OppTrace::parse("1\n1\n3\n10\n").unwrap());
        assert_eq!(t.period_ms, 10);
        let mut s = Service::Opportunities { trace: t.clone(), cur: None, left: 0 };
        // Two 750 B packets share the first opportunity at 1 ms.
        assert_eq!(s.finish(Time::ZERO, 750), Time(1_000_000));
        assert_eq!(s.finish(Time(1_000_000), 750), Time(1_000_000));
        // A 1500 B packet uses the second opportunity at 1 ms.
        assert_eq!(s.finish(Time(1_000_000), 1500), Time(1_000_000));
        // 2000 B: all of the 3 ms opportunity and 500 B of the 10 ms one.
        assert_eq!(s.finish(Time(1_000_000), 2000), Time(10_000_000));
        // An idle link loses unused opportunities: next period's first is at 11 ms.
        assert_eq!(s.finish(Time(10_500_000), 100), Time(11_000_000));
        assert!((t.mean_bps() - 4.0 * 1500.0 * 8.0 / 0.010).abs() < 1e-6);
    }

    #[test]
    fn malformed_traces_are_rejected_with_the_line() {
        assert!(OppTrace::parse("1\nx\n").unwrap_err().contains("line 2"));
        assert!(OppTrace::parse("5\n3\n").unwrap_err().contains("back in time"));
        assert!(OppTrace::parse("\n").is_err());
        assert!(OppTrace::parse("0\n0\n").is_err());
    }

    #[test]
    fn trace_timestamps_beyond_2_to_the_53_ns_are_refused() {
        // The trace: 18446744073710 ms × 10^6 ns/ms wraps 64 bits to 1 448 384 ns,
        // which made a 1.58 Mbit/s link of one reported at 0 Mbit/s. 2^53 ns is 9 007 199 254
        // whole ms: that timestamp is accepted, one more is refused with its line.
        assert_eq!(MAX_TRACE_MS, 9_007_199_254);
        let e = OppTrace::parse("0\n18446744073710\n").unwrap_err();
        assert!(e.starts_with("line 2: timestamp 18446744073710 ms is beyond 9007199254 ms"), "{e}");
        assert!(OppTrace::parse("0\n9007199255\n").unwrap_err().starts_with("line 2: "));
        // Past u64 altogether: the same message, not "not a whole number".
        let e = OppTrace::parse("99999999999999999999999\n").unwrap_err();
        assert!(e.starts_with("line 1: timestamp 99999999999999999999999 ms is beyond"), "{e}");
        let t = OppTrace::parse("0\n9007199254\n").unwrap();
        assert_eq!(t.time(1), Time(9_007_199_254_000_000));
    }

    #[test]
    fn opportunity_times_saturate_instead_of_wrapping() {
        // 1 ms period, 1000 opportunities per period. Far-off indices and start times give
        // "never" (Time::MAX), where the products used to wrap to a time in the past.
        let text: String = (0..1000).map(|_| "1\n").collect();
        let t = Arc::new(OppTrace::parse(&text).unwrap());
        assert_eq!(t.time(1000), Time(2_000_000));
        assert_eq!(t.time(u64::MAX), Time::MAX);
        // The first opportunity at or after the end of time: 18446744073710 ms (rounded up)
        // is cycle 18446744073710 of 1000; its time, 1 ms later, is past 64 bits of ns.
        assert_eq!(t.first_at_or_after(Time::MAX), 18_446_744_073_710 * 1000);
        assert_eq!(t.time(t.first_at_or_after(Time::MAX)), Time::MAX);
        let mut s = Service::Opportunities { trace: t, cur: None, left: 0 };
        assert_eq!(s.finish(Time(Time::MAX.0 - 1), 3000), Time::MAX);
        // A rate profile whose next change lies past the end of time serves at its rate.
        let p = RateProfile { starts: vec![Dur::ZERO, Dur::from_secs(1)], rates: vec![8, 0], period: Some(Dur(3)) };
        assert_eq!(p.finish(Time(u64::MAX - 1), 1), Time::MAX);
    }
}
