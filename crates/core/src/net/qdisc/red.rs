//! RED, Random Early Detection (Floyd & Jacobson, "Random Early Detection Gateways for
//! Congestion Avoidance", IEEE/ACM ToN 1(4), 1993, §4 and Fig. 2), with the "gentle" option
//! (Floyd, "Recommendations on using the gentle variant of RED", 2000).
//!
//! At every arrival the average queue `avg` follows an EWMA of the instantaneous queue with
//! weight `w_q`; after an idle period it decays as if `m` small packets had arrived into an
//! empty queue, `m` = idle time / transmission time of a typical packet. Below `min_th`
//! nothing is dropped; between `min_th` and `max_th` a packet is dropped with probability
//! `p_a = p_b / (1 − (n − 1)·p_b)`, `p_b = max_p (avg − min_th)/(max_th − min_th)`, for the
//! n-th arrival since the last drop, which spreads drops evenly: the number of arrivals
//! between drops is uniform on 1..1/p_b (§7); above `max_th` every packet
//! is dropped, or, when gentle, `p_b` rises linearly from `max_p` to 1 at `2·max_th`.
//!
//! RED decides at enqueue, before the link's hard limit (`queue`, checked as drop-tail
//! does), so the link keeps its fast path.
//!
//! Deviations and choices:
//! - the queue is measured in bytes waiting for the transmitter (the packet being serialised
//!   has left it, as in a Linux qdisc); thresholds given in packets count 1500-byte packets,
//!   thresholds given in time are converted at the link's nominal rate at the arrival;
//! - the typical packet for the idle decay is 1500 bytes (Linux's `avpkt` plays this role);
//! - drops only, no ECN marking (the engine has no ECN);
//! - `avg` is a float (Linux keeps it in fixed point with `Wlog`);
//! - the paper is off by one between its pseudo-code (Fig. 2: `count` is incremented, then
//!   `p_a = p_b/(1 − count·p_b)`, which makes the gap uniform on 1..1/p_b − 1) and its
//!   analysis (§7: uniform on 1..1/p_b); we follow §7, as Linux's equivalent random-threshold
//!   form (`qR`) does.

use super::{Arrival, DecidesAt, Enqueue, Qdisc, QueueLimit};
use crate::rng::Rng;
use crate::units::{Dur, Time};

/// Size of a typical packet (bytes): packet-counted thresholds and the idle decay use it.
pub const AVPKT: u64 = 1500;

/// RED's configuration.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RedParams {
    /// The hard limit behind RED.
    pub limit: QueueLimit,
    /// `min_th` and `max_th` on the average queue: packets of [`AVPKT`] bytes, bytes, or
    /// time at the link's nominal rate.
    pub min: QueueLimit,
    pub max: QueueLimit,
    pub max_p: f64,
    /// `w_q`, the weight of the average queue's EWMA.
    pub w_q: f64,
    pub gentle: bool,
}

#[derive(Clone, Debug)]
pub struct Red {
    limit: QueueLimit,
    min: QueueLimit,
    max: QueueLimit,
    max_p: f64,
    w_q: f64,
    gentle: bool,
    /// Average queue (bytes).
    avg: f64,
    /// Arrivals since the last drop, or since `avg` entered the drop band (this one included).
    count: u64,
    /// When the last admitted packet entered transmission: the queue has been idle since
    /// then when nothing waits (the paper's `q_time`).
    idle_since: Time,
    rng: Rng,
}

impl Red {
    /// RED drawing from `rng`.
    fn with_rng(p: &RedParams, rng: Rng) -> Red {
        let RedParams { limit, min, max, max_p, w_q, gentle } = *p;
        Red { limit, min, max, max_p, w_q, gentle, avg: 0.0, count: 0, idle_since: Time::ZERO, rng }
    }

    /// The current average queue (bytes).
    pub fn avg(&self) -> f64 {
        self.avg
    }

    /// Updates the average for an arrival that finds `queue` bytes waiting. `idle` is how
    /// long the queue has been empty (`None` if it is not), `avpkt_time` the transmission
    /// time of a typical packet at the link rate.
    pub fn update_avg(&mut self, queue: u64, idle: Option<Dur>, avpkt_time: Dur) {
        match idle {
            Some(d) if queue == 0 => {
                let m = d.0 as f64 / avpkt_time.0.max(1) as f64;
                self.avg *= (1.0 - self.w_q).powf(m);
            }
            _ => self.avg = (1.0 - self.w_q) * self.avg + self.w_q * queue as f64,
        }
    }

    /// The initial drop probability `p_b` for an average queue `avg` (bytes) and thresholds
    /// `min_th` < `max_th` (bytes).
    pub fn p_b(&self, avg: f64, min_th: f64, max_th: f64) -> f64 {
        if avg < min_th {
            0.0
        } else if avg < max_th {
            self.max_p * (avg - min_th) / (max_th - min_th)
        } else if self.gentle && avg < 2.0 * max_th {
            self.max_p + (1.0 - self.max_p) * (avg - max_th) / max_th
        } else {
            1.0
        }
    }

    /// The decision for an arrival, after [`Red::update_avg`]: `Accept` or `EarlyDrop`.
    pub fn decide(&mut self, min_th: f64, max_th: f64) -> Enqueue {
        let p_b = self.p_b(self.avg, min_th, max_th);
        if p_b <= 0.0 {
            self.count = 0;
            return Enqueue::Accept;
        }
        if p_b >= 1.0 {
            self.count = 0;
            return Enqueue::EarlyDrop;
        }
        self.count += 1;
        let denom = 1.0 - (self.count - 1) as f64 * p_b;
        let p_a = if denom <= p_b { 1.0 } else { p_b / denom };
        if self.rng.uniform() < p_a {
            self.count = 0;
            Enqueue::EarlyDrop
        } else {
            Enqueue::Accept
        }
    }
}

/// A threshold in bytes, for a link whose nominal rate is `rate` (bit/s).
fn threshold_bytes(q: QueueLimit, rate: f64) -> f64 {
    match q {
        QueueLimit::Packets(p) => (p * AVPKT) as f64,
        QueueLimit::Bytes(b) => b as f64,
        QueueLimit::Time(t) => rate * t.secs_f64() / 8.0,
    }
}

impl Qdisc for Red {
    type Params = RedParams;
    const DECIDES_AT: DecidesAt = DecidesAt::Enqueue;

    fn new(p: &RedParams, link: &str, seed: u64) -> Red {
        Red::with_rng(p, Rng::stream(seed, &format!("link:{link}:red")))
    }

    /// Fig. 2 at each arrival: update `avg` from the bytes waiting (or decay it after an idle
    /// period), decide, then check the hard limit.
    #[inline(always)]
    fn enqueue(&mut self, a: &Arrival<'_>) -> Enqueue {
        let rate = a.rate_bps();
        let avpkt_time = Dur::from_secs_f64(AVPKT as f64 * 8.0 / rate.max(1.0));
        let idle = (a.queued.packets == 0).then(|| a.now.since(self.idle_since.min(a.now)));
        self.update_avg(a.queued.bytes, idle, avpkt_time);
        if self.decide(threshold_bytes(self.min, rate), threshold_bytes(self.max, rate)) == Enqueue::EarlyDrop {
            return Enqueue::EarlyDrop;
        }
        if !self.limit.admits(a) {
            return Enqueue::TailDrop;
        }
        self.idle_since = a.now + a.wait.unwrap_or(Dur::ZERO);
        Enqueue::Accept
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use super::super::testing::{arrival, service};

    fn params(gentle: bool) -> RedParams {
        RedParams {
            limit: QueueLimit::Packets(1000),
            min: QueueLimit::Packets(5),
            max: QueueLimit::Packets(15),
            max_p: 0.1,
            w_q: 0.002,
            gentle,
        }
    }

    fn red() -> Red {
        Red::with_rng(&params(false), Rng::stream(1, "red-test"))
    }

    /// The EWMA of a constant queue q after n arrivals from 0: q·(1 − (1 − w)^n).
    #[test]
    fn average_follows_the_ewma_and_decays_when_idle() {
        let mut r = red();
        for _ in 0..1000 {
            r.update_avg(30_000, None, Dur::from_ms(1));
        }
        let expect = 30_000.0 * (1.0 - 0.998f64.powi(1000));
        assert!((r.avg() - expect).abs() < 1e-6 * expect, "{} vs {expect}", r.avg());
        // 100 typical-packet times idle: avg·(1 − w)^100.
        let before = r.avg();
        r.update_avg(0, Some(Dur::from_ms(100)), Dur::from_ms(1));
        assert!((r.avg() - before * 0.998f64.powi(100)).abs() < 1e-6 * before);
    }

    /// Floyd & Jacobson §7: with `p_a = p_b/(1 − count·p_b)` the gap between drops is uniform
    /// on 1..1/p_b, so the drop fraction is 1/E[gap] = 2·p_b/(1 + p_b). At avg halfway
    /// between the thresholds p_b = max_p/2 = 0.05 → 0.0952; and no gap exceeds 1/p_b = 20.
    #[test]
    fn drops_in_the_band_are_evenly_spread_at_the_configured_probability() {
        let mut r = red();
        r.avg = 20_000.0;
        let (n, mut drops, mut gap, mut max_gap) = (200_000, 0u64, 0u64, 0u64);
        for _ in 0..n {
            gap += 1;
            if r.decide(10_000.0, 30_000.0) == Enqueue::EarlyDrop {
                drops += 1;
                max_gap = max_gap.max(gap);
                gap = 0;
            }
        }
        let frac = drops as f64 / n as f64;
        let expect = 2.0 * 0.05 / 1.05;
        // Binomial-like sd of the fraction is below √(f/n) ≈ 0.0007; allow 5 sd.
        assert!((frac - expect).abs() < 0.0035, "drop fraction {frac} vs {expect}");
        assert!(max_gap <= 20, "a gap of {max_gap} arrivals exceeds 1/p_b");
    }

    #[test]
    fn thresholds_and_the_gentle_ramp() {
        let r = red();
        assert_eq!(r.p_b(9_999.0, 10_000.0, 30_000.0), 0.0);
        assert!((r.p_b(25_000.0, 10_000.0, 30_000.0) - 0.075).abs() < 1e-12);
        assert_eq!(r.p_b(30_000.0, 10_000.0, 30_000.0), 1.0);
        let g = Red::with_rng(&params(true), Rng::stream(1, "red-test"));
        // Halfway from max_th to 2·max_th: max_p + (1 − max_p)/2 = 0.55.
        assert!((g.p_b(45_000.0, 10_000.0, 30_000.0) - 0.55).abs() < 1e-12);
        assert_eq!(g.p_b(60_000.0, 10_000.0, 30_000.0), 1.0);
    }

    /// Floyd & Jacobson §4: the decision follows the average queue, not the instantaneous
    /// one. A standing queue of 30 packets (45 000 B, above max_th = 15 packets) is first
    /// admitted while `avg` (an EWMA with w_q = 0.002) is below min_th = 7 500 B, then
    /// dropped at every arrival once `avg` passes max_th = 22 500 B (not gentle).
    #[test]
    fn the_drop_decision_follows_the_average_queue() {
        let s = service();
        let mut r = Red::new(&params(false), "l", 1);
        let (mut avg, mut early, mut band) = (0.0, 0, 0);
        for k in 0..2000 {
            let v = r.enqueue(&arrival(&s, Time(k), 30, Some(Dur::from_ms(30))));
            avg = (1.0 - 0.002) * avg + 0.002 * 45_000.0;
            assert_eq!(r.avg(), avg);
            if avg < 7_500.0 {
                assert_eq!(v, Enqueue::Accept, "arrival {k}: avg {avg} is below min_th");
                early += 1;
            } else if avg >= 22_500.0 {
                assert_eq!(v, Enqueue::EarlyDrop, "arrival {k}: avg {avg} is above max_th");
            } else {
                band += 1;
            }
        }
        // About 91 arrivals below min_th, 255 in the band (1 − 0.998^n crosses 1/6, then 1/2).
        assert!(early > 80 && band > 200, "{early} {band}");
    }

    #[test]
    fn the_hard_limit_applies_behind_red() {
        let s = service();
        let mut r = Red::new(&RedParams { limit: QueueLimit::Packets(10), ..params(false) }, "l", 1);
        assert_eq!(r.enqueue(&arrival(&s, Time(1), 10, Some(Dur::from_ms(10)))), Enqueue::TailDrop);
        assert_eq!(r.enqueue(&arrival(&s, Time(2), 9, Some(Dur::from_ms(9)))), Enqueue::Accept);
    }
}
