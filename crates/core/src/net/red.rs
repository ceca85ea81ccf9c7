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

use crate::rng::Rng;
use crate::units::Dur;

/// Size of a typical packet (bytes): packet-counted thresholds and the idle decay use it.
pub const AVPKT: u64 = 1500;

/// What RED decided for an arriving packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Enqueue,
    Drop,
}

#[derive(Clone, Debug)]
pub struct Red {
    max_p: f64,
    w_q: f64,
    gentle: bool,
    /// Average queue (bytes).
    avg: f64,
    /// Arrivals since the last drop, or since `avg` entered the drop band (this one included).
    count: u64,
    rng: Rng,
}

impl Red {
    pub fn new(max_p: f64, w_q: f64, gentle: bool, rng: Rng) -> Red {
        Red { max_p, w_q, gentle, avg: 0.0, count: 0, rng }
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

    /// The decision for an arrival, after [`Red::update_avg`].
    pub fn decide(&mut self, min_th: f64, max_th: f64) -> Verdict {
        let p_b = self.p_b(self.avg, min_th, max_th);
        if p_b <= 0.0 {
            self.count = 0;
            return Verdict::Enqueue;
        }
        if p_b >= 1.0 {
            self.count = 0;
            return Verdict::Drop;
        }
        self.count += 1;
        let denom = 1.0 - (self.count - 1) as f64 * p_b;
        let p_a = if denom <= p_b { 1.0 } else { p_b / denom };
        if self.rng.uniform() < p_a {
            self.count = 0;
            Verdict::Drop
        } else {
            Verdict::Enqueue
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn red() -> Red {
        Red::new(0.1, 0.002, false, Rng::stream(1, "red-test"))
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
            if r.decide(10_000.0, 30_000.0) == Verdict::Drop {
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
        let g = Red::new(0.1, 0.002, true, Rng::stream(1, "red-test"));
        // Halfway from max_th to 2·max_th: max_p + (1 − max_p)/2 = 0.55.
        assert!((g.p_b(45_000.0, 10_000.0, 30_000.0) - 0.55).abs() < 1e-12);
        assert_eq!(g.p_b(60_000.0, 10_000.0, 30_000.0), 1.0);
    }
}
