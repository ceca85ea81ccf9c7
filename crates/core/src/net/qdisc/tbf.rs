//! TBF, the token bucket filter, as Linux's `sch_tbf` configured by tc (`tc-tbf(8)`,
//! `q_tbf.c`): a bucket of `burst` bytes filled at the shaping rate, a packet leaving when
//! the bucket holds its length, and the packets waiting for tokens kept in a byte-limited
//! FIFO (the default child, a `bfifo` of `limit` bytes).
//!
//! The rules modelled:
//! - **the limit**: given in bytes, or as tc's `latency`, the longest a packet may wait for
//!   tokens, which tc turns into bytes once, `limit = rate · latency + burst`, and with a
//!   `peakrate` the smaller of that and `peakrate · latency + mtu`. An arrival is admitted
//!   while the bytes waiting plus its own are at most `limit` (`bfifo_enqueue`);
//! - **the largest packet**: a packet longer than the bucket (`burst`; with a peakrate also
//!   `mtu`) can never gather its tokens and is dropped (`tbf_enqueue`'s `max_size` test;
//!   without GSO there is nothing to segment). Counted as an AQM drop;
//! - the link's hard limit (`queue`) still applies, as for every discipline.
//!
//! The shaping rate is the link's rate: the link's transmitter is the shaper (on a Mininet
//! or tc test bed the TBF is what sets the link's rate). Deviations that follow from it:
//! - packets leave at the link rate one after another, so the bucket never holds a packet
//!   back beyond its serialisation, and a full bucket does not let a burst leave faster
//!   than the rate (in Linux it may, up to `burst` bytes, when the device is faster than the
//!   rate). `burst` enters the limit and the largest packet only;
//! - a `peakrate` enters only the limit and the largest packet (the transmitter never
//!   exceeds the link rate, which is below the peak rate);
//! - tc converts `latency` once, at the configured rate; here the conversion uses the link's
//!   nominal rate at each arrival (the same for a constant-rate link; a link whose rate is
//!   scheduled or traced gets the limit of its current rate);
//! - the queue counts wire bytes waiting for the transmitter; the packet being serialised
//!   has left it, as a packet TBF released to the device has left TBF's backlog.
//!
//! With `device` set ([`Bucket`]) TBF is the shaper in front of a faster device, as on a
//! Mininet or tc test bed where TBF sits on a virtual interface with no rate of its own:
//! `tbf_dequeue` lets a packet go when the bucket holds its length, the bucket refills at the
//! shaping rate (the link's) up to `burst` while the link idles, and the device sends at its
//! own rate. A full bucket then lets up to `burst` bytes leave back to back; over any interval
//! of length τ at most `burst` + rate · τ bytes leave. Without `device` the deviations above
//! hold.
//!
//! TBF decides at enqueue, so the link keeps its fast path.

use super::{Arrival, DecidesAt, Enqueue, Qdisc, QueueLimit};
use crate::units::{Dur, Rate, Time};

/// How the TBF's byte limit is given.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TbfLimit {
    /// tc's `limit` (bytes).
    Bytes(u64),
    /// tc's `latency`: converted with `rate · latency + burst` (and the peak rate's bound).
    Latency(Dur),
}

/// TBF's configuration (the shaping rate is the link's).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TbfParams {
    /// The link's hard limit, kept as by every discipline.
    pub hard: QueueLimit,
    /// The bucket (bytes).
    pub burst: u64,
    pub limit: TbfLimit,
    /// tc's `peakrate` with its `mtu` (bytes), which tc requires with it.
    pub peak: Option<(Rate, u64)>,
    /// The rate of the device beneath TBF; `None`: the link's transmitter is the shaper.
    pub device: Option<Rate>,
}

impl TbfParams {
    /// The byte limit at shaping rate `rate_bps`, as `q_tbf.c` computes it from `latency`:
    /// `rate · latency + burst`, with a peak rate at most `peakrate · latency + mtu`
    /// (truncated to whole bytes, as tc's assignment to its 32-bit field does).
    pub fn limit_bytes(&self, rate_bps: f64) -> u64 {
        match self.limit {
            TbfLimit::Bytes(b) => b,
            TbfLimit::Latency(l) => {
                let mut lim = rate_bps / 8.0 * l.secs_f64() + self.burst as f64;
                if let Some((peak, mtu)) = self.peak {
                    lim = lim.min(peak.bps() as f64 / 8.0 * l.secs_f64() + mtu as f64);
                }
                lim as u64
            }
        }
    }

    /// The largest packet the bucket can pass (`max_size`): `burst`, with a peak rate also
    /// at most `mtu`.
    pub fn max_size(&self) -> u64 {
        match self.peak {
            Some((_, mtu)) => self.burst.min(mtu),
            None => self.burst,
        }
    }
}

/// TBF's bucket when it shapes in front of a faster device (`sch_tbf`'s `tbf_dequeue`). The
/// tokens are kept as time at the shaping rate, as the kernel keeps them (`q->tokens`, `q->t_c`,
/// the bucket `q->buffer` = the time `burst` takes at the rate); it starts full (`tbf_change`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bucket {
    /// The bucket (bytes).
    burst: u64,
    /// The device's rate.
    pub device: Rate,
    /// Tokens at `t_c`; `None`: a full bucket.
    toks: Option<Dur>,
    t_c: Time,
}

impl Bucket {
    pub fn new(burst: u64, device: Rate) -> Bucket {
        Bucket { burst, device, toks: None, t_c: Time::ZERO }
    }

    /// When a packet of `len` bytes arriving at `now` leaves TBF at shaping rate `rate`, and the
    /// shaping time it uses. Packets leave in order, so it may leave from `t0`, the later of
    /// `now` and the last departure: `toks = min(toks + (t0 − t_c), buffer)`; it leaves at `t0`
    /// if `toks` covers its `len / rate`, else when the missing tokens have accrued. The bucket
    /// keeps what is left. A packet that has left TBF is the device's, no longer TBF's backlog.
    pub fn depart(&mut self, now: Time, len: u64, rate: Rate) -> (Time, Dur) {
        let t0 = now.max(self.t_c);
        let buffer = rate.tx_time(self.burst);
        let toks = match self.toks {
            None => buffer,
            Some(t) => (t + t0.since(self.t_c)).min(buffer),
        };
        let cost = rate.tx_time(len);
        let (start, left) =
            if toks >= cost { (t0, Dur(toks.0 - cost.0)) } else { (t0 + Dur(cost.0 - toks.0), Dur::ZERO) };
        self.toks = Some(left);
        self.t_c = start;
        (start, cost)
    }
}

/// TBF with its limits.
#[derive(Clone, Debug)]
pub struct Tbf {
    p: TbfParams,
}

impl Qdisc for Tbf {
    type Params = TbfParams;
    const DECIDES_AT: DecidesAt = DecidesAt::Enqueue;

    fn new(params: &TbfParams, _link: &str, _seed: u64) -> Tbf {
        Tbf { p: *params }
    }

    #[inline]
    fn enqueue(&mut self, a: &Arrival<'_>) -> Enqueue {
        if a.len as u64 > self.p.max_size() {
            return Enqueue::EarlyDrop;
        }
        let fifo = QueueLimit::Bytes(self.p.limit_bytes(a.rate_bps()));
        if self.p.hard.admits(a) && fifo.admits(a) {
            Enqueue::Accept
        } else {
            Enqueue::TailDrop
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{arrival, service};
    use super::*;

    const HARD: QueueLimit = QueueLimit::Packets(1000);

    fn params(burst: u64, limit: TbfLimit, peak: Option<(Rate, u64)>) -> TbfParams {
        TbfParams { hard: HARD, burst, limit, peak, device: None }
    }

    fn decide(p: TbfParams, packets: u64, wait: Option<Dur>) -> Enqueue {
        let s = service();
        Tbf::new(&p, "l", 1).enqueue(&arrival(&s, Time(5), packets, wait))
    }

    /// tc's conversion, `limit = rate · latency + burst`: seed 003's 3G link, 2 Mbit/s =
    /// 250 000 B/s, 2 s of latency and Mininet's 15 000 B bucket give 500 000 + 15 000 =
    /// 515 000 B; the WiFi link, 8 Mbit/s = 1 000 000 B/s, 80 ms: 80 000 + 15 000 = 95 000 B.
    #[test]
    fn latency_becomes_rate_times_latency_plus_the_bucket() {
        let g3 = params(15_000, TbfLimit::Latency(Dur::from_ms(2000)), None);
        assert_eq!(g3.limit_bytes(2e6), 515_000);
        let wifi = params(15_000, TbfLimit::Latency(Dur::from_ms(80)), None);
        assert_eq!(wifi.limit_bytes(8e6), 95_000);
        // A limit in bytes is taken as it is.
        assert_eq!(params(15_000, TbfLimit::Bytes(4_000), None).limit_bytes(8e6), 4_000);
    }

    /// With a peak rate tc takes the smaller bound: at 12 Mbit/s (1 500 000 B/s), 10 ms and a
    /// 30 000 B bucket the rate gives 15 000 + 30 000 = 45 000 B; a 16 Mbit/s peak (2 000 000
    /// B/s) with a 1 500 B mtu gives 20 000 + 1 500 = 21 500 B, which wins; a 100 Mbit/s peak
    /// gives 125 000 + 1 500 and leaves 45 000 B.
    #[test]
    fn a_peak_rate_bounds_the_limit_by_peakrate_times_latency_plus_mtu() {
        let l = TbfLimit::Latency(Dur::from_ms(10));
        assert_eq!(params(30_000, l, Some((Rate(16_000_000), 1_500))).limit_bytes(12e6), 21_500);
        assert_eq!(params(30_000, l, Some((Rate(100_000_000), 1_500))).limit_bytes(12e6), 45_000);
    }

    /// bfifo under TBF: on the 12 Mbit/s test service, 10 ms of latency and a 3 000 B bucket
    /// give 15 000 + 3 000 = 18 000 B: 11 queued 1500-byte packets (16 500 B) leave room for
    /// a twelfth (18 000 B), 12 queued do not (19 500 B).
    #[test]
    fn the_fifo_admits_while_the_bytes_waiting_plus_its_own_fit_the_limit() {
        let p = params(3_000, TbfLimit::Latency(Dur::from_ms(10)), None);
        assert_eq!(decide(p, 11, None), Enqueue::Accept);
        assert_eq!(decide(p, 12, None), Enqueue::TailDrop);
        // A packet going straight to the idle transmitter never waits in the fifo.
        assert_eq!(decide(p, 12, Some(Dur::ZERO)), Enqueue::Accept);
    }

    /// The link's hard limit still applies beneath TBF's own.
    #[test]
    fn the_hard_limit_still_applies() {
        let p = TbfParams { hard: QueueLimit::Packets(5), ..params(3_000, TbfLimit::Bytes(1_000_000), None) };
        assert_eq!(decide(p, 4, None), Enqueue::Accept);
        assert_eq!(decide(p, 5, None), Enqueue::TailDrop);
    }

    /// `tbf_dequeue` at 8 Mbit/s (1500 B = 1.5 ms of tokens) with a 15 000 B bucket (15 ms):
    /// a full bucket lets ten 1500-byte packets leave at once; the eleventh waits the 1.5 ms
    /// its tokens take; after 6 ms idle (6 ms of tokens) four leave at once and the fifth waits
    /// 1.5 ms less what was left (0 ms): bytes over any interval τ stay within burst + rate · τ.
    #[test]
    fn a_full_bucket_lets_burst_bytes_leave_back_to_back_then_the_rate_holds() {
        let rate = Rate(8_000_000);
        let mut b = Bucket::new(15_000, Rate(10_000_000_000));
        let t0 = Time(1_000_000_000);
        for _ in 0..10 {
            assert_eq!(b.depart(t0, 1500, rate), (t0, Dur::from_us(1500)));
        }
        let (eleventh, _) = b.depart(t0, 1500, rate);
        assert_eq!(eleventh, t0 + Dur::from_us(1500));
        let later = eleventh + Dur::from_ms(6);
        for _ in 0..4 {
            assert_eq!(b.depart(later, 1500, rate).0, later);
        }
        assert_eq!(b.depart(later, 1500, rate).0, later + Dur::from_us(1500));
        // The bucket never holds more than `burst`: after 1 s idle, again exactly ten at once.
        let idle = later + Dur::from_secs(1);
        let starts: Vec<Time> = (0..11).map(|_| b.depart(idle, 1500, rate).0).collect();
        assert!(starts[..10].iter().all(|&t| t == idle));
        assert_eq!(starts[10], idle + Dur::from_us(1500));
    }

    /// `max_size`: a 1500-byte packet is longer than a 1 000 B bucket, or than a 1 000 B mtu
    /// beside a peak rate, and can never gather its tokens: dropped even into an empty queue.
    #[test]
    fn a_packet_longer_than_the_bucket_is_dropped() {
        assert_eq!(decide(params(1_000, TbfLimit::Bytes(100_000), None), 0, Some(Dur::ZERO)), Enqueue::EarlyDrop);
        let peak = params(30_000, TbfLimit::Bytes(100_000), Some((Rate(16_000_000), 1_000)));
        assert_eq!(decide(peak, 0, Some(Dur::ZERO)), Enqueue::EarlyDrop);
        assert_eq!(decide(params(1_500, TbfLimit::Bytes(100_000), None), 0, None), Enqueue::Accept);
    }
}
