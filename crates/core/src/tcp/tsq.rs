//! TCP small queues (Linux `tcp_small_queue_check` in `tcp_write_xmit`, since 3.6): a
//! subflow may hold only so many bytes in its own host's queues (qdisc and device). It
//! matters where the queue of a path sits at the sending host (`queue_at = "host"`, a `tc`
//! rate limit on the sender's interface): there the subflow, not the link, holds the backlog,
//! and its RTT stays near the path's base RTT.
//!
//! Every packet a subflow transmits is charged its skb truesize (`sk_wmem_alloc`) until it
//! leaves the host: the driver reports its transmission complete (`tcp_wfree`), here when the
//! host queue's link finishes serialising it (the simulator tells the endpoint when; a packet
//! the queue drops is released at once). Before each transmission the subflow compares what
//! it holds with
//!
//! `limit = min(max(2 × truesize(skb), pacing_rate / 1024), tcp_limit_output_bytes)`
//!
//! (about 1 ms of data at the pacing rate, `sk_pacing_shift` = 10) and is throttled
//! (`TSQ_THROTTLED`) while it holds more. Rules ([`crate::config::TsqRule`]):
//! - `linux_4` (Linux 3.16–4.19, the out-of-tree MPTCP v0.9x kernels): `tcp_limit_output_bytes`
//!   = 262 144; the out-of-tree schedulers see a throttled subflow as temporarily unavailable
//!   (`mptcp_is_temp_unavailable`);
//! - `linux_6` (upstream, measured on 6.18): `tcp_limit_output_bytes` = 4 194 304, and a
//!   subflow with at most one packet unacknowledged is never throttled
//!   (`tcp_rtx_queue_empty_or_single_skb`).
//!
//! Deviations: when the last charge that kept a subflow throttled is released, the connection
//! pushes afresh (the scheduler runs); Linux's TSQ handler (`tcp_tsq_handler`) transmits only
//! what the subflow's own write queue holds, and the meta-level scheduler runs again at the
//! next ACK or write. The device's own serialisation after the shaping queue and the driver's
//! completion delay are not modelled. Pure ACKs are not charged.

use std::collections::VecDeque;

use crate::config::TsqRule;
use crate::units::Time;

/// `sk_pacing_shift`: the limit is this many bits below the pacing rate (about 1 ms).
const PACING_SHIFT: u32 = 10;

impl TsqRule {
    /// `tcp_limit_output_bytes` of the rule (0 when TSQ is off).
    pub fn limit_output_bytes(self) -> u64 {
        match self {
            TsqRule::Off => 0,
            TsqRule::Linux4 => 262_144,
            TsqRule::Linux6 => 4_194_304,
        }
    }
}

/// What one subflow holds in its host's queues.
#[derive(Clone, Debug, Default)]
pub struct Tsq {
    pub rule: TsqRule,
    /// Truesize of packets handed to the host queue whose departure time is not known yet,
    /// oldest first.
    untimed: VecDeque<u64>,
    /// (departure, truesize) of packets whose departure is known, in departure order.
    timed: VecDeque<(Time, u64)>,
    /// Sum of both (Linux `sk_wmem_alloc`, less the socket's own reference).
    bytes: u64,
    /// Times a transmission found the subflow throttled.
    pub throttles: u64,
}

impl Tsq {
    pub fn new(rule: TsqRule) -> Tsq {
        Tsq { rule, ..Tsq::default() }
    }

    /// A packet of `truesize` bytes entered the host's queues.
    pub fn charge(&mut self, now: Time, truesize: u64) {
        self.forget(now);
        self.untimed.push_back(truesize);
        self.bytes += truesize;
    }

    /// The oldest untimed packet leaves the host at `at` (its departure from the host queue).
    pub fn departs(&mut self, at: Time) {
        let Some(b) = self.untimed.pop_front() else {
            debug_assert!(false, "a departure without a charge");
            return;
        };
        debug_assert!(self.timed.back().is_none_or(|&(t, _)| t <= at), "host queue departures out of order");
        self.timed.push_back((at, b));
    }

    /// Drops the packets that have left by `now`.
    fn forget(&mut self, now: Time) {
        while let Some(&(t, b)) = self.timed.front() {
            if t > now {
                break;
            }
            self.timed.pop_front();
            self.bytes -= b;
        }
    }

    /// Nothing was ever charged or everything charged has been forgotten.
    pub fn is_empty(&self) -> bool {
        self.bytes == 0
    }

    /// Bytes still in the host at `now`.
    pub fn held(&self, now: Time) -> u64 {
        let gone: u64 = self.timed.iter().take_while(|&&(t, _)| t <= now).map(|&(_, b)| b).sum();
        self.bytes - gone
    }

    /// The limit for a subflow with `pacing_rate` (bytes/s) about to send an skb of `truesize`.
    pub fn limit(&self, pacing_rate: f64, truesize: u64) -> u64 {
        let by_rate = (pacing_rate.max(0.0) as u64) >> PACING_SHIFT;
        (2 * truesize).max(by_rate).min(self.rule.limit_output_bytes())
    }

    /// Whether a transmission at `now` is held back. `outstanding_segs`: packets sent and not
    /// cumulatively acknowledged (the `linux_6` exemption).
    pub fn throttled(&self, now: Time, limit: u64, outstanding_segs: u64) -> bool {
        if self.rule == TsqRule::Off || self.bytes == 0 {
            return false;
        }
        if self.rule == TsqRule::Linux6 && outstanding_segs <= 1 {
            return false;
        }
        self.held(now) > limit
    }

    /// When a throttled subflow may send again: the departure that brings what it holds down
    /// to `limit` (None if that depends on packets whose departure is not known yet).
    pub fn unthrottle_at(&self, now: Time, limit: u64) -> Option<Time> {
        let mut held = self.held(now);
        for &(t, b) in &self.timed {
            if t <= now {
                continue;
            }
            held -= b;
            if held <= limit {
                return Some(t);
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::Dur;

    fn at(us: u64) -> Time {
        Time::ZERO + Dur::from_us(us)
    }

    /// 1448-byte segments of truesize 2344 (1448 + 896) leaving a 100 Mbit/s shaper every
    /// 120 µs (1500 B on the wire): with a pacing rate of 15 MB/s the limit is
    /// max(2 × 2344, 15e6 >> 10 = 14 648) = 14 648 B, so the seventh packet in the host
    /// (7 × 2344 = 16 408 > 14 648) throttles the subflow, and it sends again when the first
    /// departure brings the host down to 14 064 B.
    #[test]
    fn a_subflow_is_throttled_by_what_it_holds_in_the_host() {
        let mut q = Tsq::new(TsqRule::Linux4);
        let limit = q.limit(15e6, 2344);
        assert_eq!(limit, 14_648);
        for k in 0..7 {
            assert!(!q.throttled(at(0), limit, 10));
            q.charge(at(0), 2344);
            q.departs(at(120 * (k + 1)));
        }
        assert!(q.throttled(at(0), limit, 10));
        assert_eq!(q.unthrottle_at(at(0), limit), Some(at(120)));
        assert!(!q.throttled(at(120), limit, 10));
        assert_eq!(q.held(at(360)), 4 * 2344);
    }

    /// `tcp_limit_output_bytes` caps the rate term (262 144 B on 4.x), and `linux_6` never
    /// throttles a subflow with one packet or none outstanding.
    #[test]
    fn the_sysctl_caps_the_limit_and_linux_6_exempts_a_single_packet() {
        let q = Tsq::new(TsqRule::Linux4);
        assert_eq!(q.limit(1e9, 2344), 262_144);
        let mut q = Tsq::new(TsqRule::Linux6);
        assert_eq!(q.limit(1e10, 2344), 4_194_304);
        q.charge(at(0), 20_000);
        assert!(!q.throttled(at(0), 4688, 1));
        assert!(q.throttled(at(0), 4688, 2));
        // Untimed charges count until their departure is known.
        assert_eq!(q.unthrottle_at(at(0), 4688), None);
    }
}
