//! Host timing noise (`host_jitter`): the time a real host takes between deciding to send a
//! packet and the packet leaving its interface (softirq and worker scheduling, qdisc, driver).
//!
//! Each packet a host sends leaves after an extra delay `d = s·Q(u)`, u uniform on [0, 1),
//! where Q is the quantile function measured on Linux (piecewise linear between the
//! per-mille quantiles of [`MEASURED`]) and `s` scales it so that its mean is the configured
//! `host_jitter`. A host's packets leave in the order they were sent (FIFO): a packet never
//! leaves before the one sent before it, `depart = max(now + d, previous departure)`, as
//! one transmit queue does. Every host draws from its own stream (`host:<node>:jitter`) of
//! the scenario's seed, so runs are reproducible and seeds differ.
//!
//! The measurement (the data file's header has the kernel release and the command): on the
//! kernel backend with no link jitter, the receiving host's turnaround, from a data
//! segment's arrival to the departure of the ACK acknowledging it, both seen by one capture
//! on the client's interface (so the link emulator's timing is not in it). The simulator's
//! turnaround is 0. The receiver's quick-ACK path is taken as the sample of every packet a
//! host sends (the sender's data path was not captured separately).
//!
//! Measured on Linux 6.18 (16 954 samples): mean 33.3 µs, median 7.9 µs, p90 50 µs, p99
//! 431 µs, max 2.8 ms; the `linux` profile's `host_jitter` is that mean, 33 µs.
//!
//! Deviations: the delay is drawn independently per packet (the measured delays are
//! correlated in bursts: a softirq that runs late delays several packets); the same shape
//! serves both hosts; a host is a node name of the topology (connections sharing a node
//! share its transmit order).

use std::collections::VecDeque;
use std::sync::OnceLock;

use crate::net::packet::Packet;
use crate::rng::Rng;
use crate::units::{Dur, Time};

/// The measured turnaround quantiles (µs), `quantile,delay_us` lines at 0.000, 0.001, …, 1.000.
pub const MEASURED: &str = include_str!("../../data/host-jitter-linux-6.18.csv");

/// The measured quantile function: 1001 delays (µs) at quantiles 0, 0.001, …, 1.
pub fn quantiles() -> &'static [f64] {
    static Q: OnceLock<Vec<f64>> = OnceLock::new();
    Q.get_or_init(|| {
        let q: Vec<f64> = MEASURED
            .lines()
            .filter(|l| !l.starts_with('#') && !l.starts_with("quantile") && !l.trim().is_empty())
            .map(|l| l.split(',').nth(1).and_then(|v| v.trim().parse().ok()).expect("quantile,delay_us"))
            .collect();
        assert_eq!(q.len(), 1001, "the host jitter table has the 1001 per-mille quantiles");
        q
    })
}

/// Mean of the measured quantile function (µs), computed once: [`HostQueue::delay`] divides
/// by it for every packet a host sends.
fn measured_mean() -> f64 {
    static M: OnceLock<f64> = OnceLock::new();
    *M.get_or_init(|| table_mean(quantiles()))
}

/// Mean of the piecewise-linear quantile function (µs): the average of each segment's
/// midpoint.
pub fn table_mean(q: &[f64]) -> f64 {
    q.windows(2).map(|w| (w[0] + w[1]) / 2.0).sum::<f64>() / (q.len() - 1) as f64
}

/// One draw of the shape (µs, mean [`table_mean`]).
fn draw_table(q: &[f64], rng: &mut Rng) -> f64 {
    let x = rng.uniform() * (q.len() - 1) as f64;
    let k = (x as usize).min(q.len() - 2);
    let f = x - k as f64;
    q[k] + f * (q[k + 1] - q[k])
}

/// A host's transmit queue: packets waiting for their departure time, in sending order.
pub struct HostQueue {
    rng: Rng,
    last: Time,
    pub q: VecDeque<(Time, Packet)>,
}

impl HostQueue {
    pub fn new(seed: u64, node: &str) -> HostQueue {
        HostQueue { rng: Rng::stream(seed, &format!("host:{node}:jitter")), last: Time::ZERO, q: VecDeque::new() }
    }

    /// The extra delay of one packet for a mean of `mean`.
    pub fn delay(&mut self, mean: Dur) -> Dur {
        let q = quantiles();
        let us = draw_table(q, &mut self.rng) * mean.secs_f64() * 1e6 / measured_mean();
        Dur::from_secs_f64(us * 1e-6)
    }

    /// Queues `p`, sent at `now`, for departure after its delay (never before the packet
    /// queued before it); returns its departure time.
    pub fn push(&mut self, now: Time, mean: Dur, p: Packet) -> Time {
        let at = (now + self.delay(mean)).max(self.last);
        self.last = at;
        self.q.push_back((at, p));
        at
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::{Dsn, Seq};

    fn pkt(uid: u64) -> Packet {
        Packet {
            uid,
            conn: 0,
            subflow: 0,
            to_server: true,
            hop: 0,
            flags: 0,
            mp: Default::default(),
            wire_len: 64,
            payload: 0,
            seq: Seq(0),
            ack: Seq(0),
            wnd: 0,
            sack: Default::default(),
            dsn: Dsn(0),
            data_ack: Dsn(0),
            ack64: true,
            sent_at: Time::ZERO,
            ts_echo: Time::ZERO,
        }
    }

    #[test]
    fn a_hosts_packets_leave_in_the_order_they_were_sent() {
        // Packets sent 1 µs apart with a mean delay of 50 µs would overtake each other if
        // each left at its own draw; the queue keeps them in order.
        let mut h = HostQueue::new(1, "client");
        let mean = Dur::from_us(50);
        for k in 0..10_000u64 {
            h.push(Time(k * 1_000), mean, pkt(k));
        }
        let uids: Vec<u64> = h.q.iter().map(|(_, p)| p.uid).collect();
        assert!(uids.windows(2).all(|w| w[0] < w[1]));
        assert!(h.q.iter().zip(h.q.iter().skip(1)).all(|(a, b)| a.0 <= b.0));
        assert!(h.q.iter().all(|(t, p)| *t >= Time(p.uid * 1_000)), "never before it was sent");
    }

    #[test]
    fn the_delay_has_the_configured_mean_and_the_measured_maximum() {
        // n independent draws of a distribution with standard deviation σ: the sample mean
        // lies within 5σ/√n of the true mean except with probability < 1e-6 (Chebyshev gives
        // 1/25 for any distribution; the CLT's normal tail 6e-7). The largest draw is at
        // most the table's maximum, scaled: s·Q(1) with s = mean / table mean.
        let q = quantiles();
        let m = table_mean(q);
        // σ² = E[Q(u)²] − m², integrating each linear segment exactly: (a² + ab + b²)/3.
        let segments = (q.len() - 1) as f64;
        let second = q.windows(2).map(|w| (w[0] * w[0] + w[0] * w[1] + w[1] * w[1]) / 3.0).sum::<f64>() / segments;
        let sd = (second - m * m).sqrt();
        let mean_us = 20.0;
        let scale = mean_us / m;
        let n = 200_000;
        let mut h = HostQueue::new(7, "server");
        let xs: Vec<f64> = (0..n).map(|_| h.delay(Dur::from_us(20)).secs_f64() * 1e6).collect();
        let got = xs.iter().sum::<f64>() / n as f64;
        let bound = 5.0 * sd * scale / (n as f64).sqrt();
        assert!((got - mean_us).abs() < bound, "mean {got:.3} µs vs {mean_us} ± {bound:.3}");
        let max = xs.iter().cloned().fold(0.0, f64::max);
        let top = q[q.len() - 1] * scale;
        assert!(max <= top + 1e-3, "max {max} µs vs {top}");
        // Half the draws lie below the scaled median, within 5 binomial sd (5·0.5/√n).
        let below = xs.iter().filter(|&&x| x < q[q.len() / 2] * scale).count() as f64 / n as f64;
        assert!((below - 0.5).abs() < 5.0 * 0.5 / (n as f64).sqrt(), "{below}");
    }

    #[test]
    fn the_same_seed_gives_the_same_delays_and_seeds_differ() {
        let draws = |seed| {
            let mut h = HostQueue::new(seed, "client");
            (0..100).map(|_| h.delay(Dur::from_us(17)).ns()).collect::<Vec<_>>()
        };
        assert_eq!(draws(3), draws(3));
        assert_ne!(draws(3), draws(4));
    }
}
