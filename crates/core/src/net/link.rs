//! A unidirectional link: a queue (drop-tail limited in packets, bytes or time, or CoDel), a
//! transmitter whose service is a bit rate charged on the full on-wire size (constant,
//! scheduled, or a capacity trace), propagation delay with optional jitter, and losses on
//! the wire (Bernoulli, Gilbert–Elliott, explicit list).
//!
//! Sans-IO: the link never owns a clock. Two transmitter modes:
//! - drop-tail FIFO (the default): because service order is fixed, a packet's transmission
//!   start, end and arrival are computed when it arrives; the packets waiting for the
//!   transmitter are those whose start lies in the future, which is what limits apply to
//!   (the packet being serialised has left the queue, as in a Linux qdisc). A time limit
//!   (like tc-tbf's `latency`) drops a packet whose wait would exceed it.
//!   RED (optional) decides at the same moment, from the bytes waiting, before the limit.
//! - CoDel: decisions are taken at dequeue time, so the transmitter is event-driven: the
//!   driver wakes the link when a transmission ends.
//!
//! Packets in propagation sit in one pipe ordered by arrival time (a deque when order is
//! preserved, a heap when jitter may reorder), so the driver needs one pending event per
//! link, not one per packet. Losses happen on the wire: a lost packet uses its transmission
//! time.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use crate::config::{Aqm, LinkParams, QueueLimit};
use crate::net::codel::{Codel, Verdict};
use crate::net::jitter;
use crate::net::loss::LossModel;
use crate::net::packet::Packet;
use crate::net::red::{self, Red};
use crate::net::service::Service;
use crate::rng::Rng;
use crate::units::{Dur, Time};

/// What a link needs to know about the items it carries: their size on the wire.
///
/// The simulator's links carry [`Packet`]s; the real-time emulator's carry raw frames.
pub trait WireLen {
    /// Bytes charged on the link's rate (the IP packet: headers and payload).
    fn wire_len(&self) -> u32;
}

impl WireLen for Packet {
    #[inline]
    fn wire_len(&self) -> u32 {
        self.wire_len
    }
}

/// Per-link counters.
#[derive(Clone, Debug, Default)]
pub struct LinkStats {
    pub arrived: u64,
    pub delivered: u64,
    pub delivered_bytes: u64,
    pub queue_drops: u64,
    pub aqm_drops: u64,
    pub loss_drops: u64,
    pub max_queue_packets: u64,
    pub max_queue_bytes: u64,
    /// Transmission time of every packet served (ns).
    pub busy_ns: u64,
}

/// What happened to a packet offered to the link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Offer {
    Accepted,
    /// Dropped at the tail of a full queue.
    QueueDrop,
    /// Dropped on arrival by the AQM (RED).
    AqmDrop,
    /// Serialised, then lost on the wire.
    Lost,
}

#[allow(clippy::large_enum_variant)] // one per link; boxing would add a pointer chase per packet
enum Mode<P> {
    Fifo {
        waiting: VecDeque<(Time, u32)>,
        waiting_bytes: u64,
        /// RED with its (min, max) thresholds, and when the last waiting packet entered
        /// transmission (the queue has been empty since then when nothing waits).
        red: Option<(Red, QueueLimit, QueueLimit)>,
        last_start: Time,
    },
    Codel {
        codel: Codel,
        /// (enqueue time, ordinal on the link, packet).
        queue: VecDeque<(Time, u64, P)>,
        bytes: u64,
        /// The packet being serialised: (end, packet, lost on the wire).
        in_tx: Option<(Time, P, bool)>,
        limit: QueueLimit,
    },
}

/// A packet in a reordering pipe, ordered by (arrival time, sending order).
struct Timed<P>(Time, u64, P);

impl<P> PartialEq for Timed<P> {
    fn eq(&self, o: &Self) -> bool {
        (self.0, self.1) == (o.0, o.1)
    }
}
impl<P> Eq for Timed<P> {}
impl<P> PartialOrd for Timed<P> {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl<P> Ord for Timed<P> {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        (self.0, self.1).cmp(&(o.0, o.1))
    }
}

/// Packets in propagation, by arrival time (ties in sending order).
enum Pipe<P> {
    Fifo(VecDeque<(Time, P)>),
    Reorder(BinaryHeap<Reverse<Timed<P>>>, u64),
}

impl<P> Pipe<P> {
    #[inline]
    fn push(&mut self, t: Time, p: P) {
        match self {
            Pipe::Fifo(q) => q.push_back((t, p)),
            Pipe::Reorder(h, n) => {
                *n += 1;
                h.push(Reverse(Timed(t, *n, p)));
            }
        }
    }
    fn head(&self) -> Option<Time> {
        match self {
            Pipe::Fifo(q) => q.front().map(|e| e.0),
            Pipe::Reorder(h, _) => h.peek().map(|e| e.0 .0),
        }
    }
    fn pop(&mut self) -> Option<P> {
        match self {
            Pipe::Fifo(q) => q.pop_front().map(|e| e.1),
            Pipe::Reorder(h, _) => h.pop().map(|e| e.0 .2),
        }
    }
    fn len(&self) -> usize {
        match self {
            Pipe::Fifo(q) => q.len(),
            Pipe::Reorder(h, _) => h.len(),
        }
    }
}

/// A piecewise-constant value over (possibly periodic) time.
struct Steps<T: Copy> {
    at: Vec<Dur>,
    v: Vec<T>,
    period: Option<Dur>,
}

impl<T: Copy> Steps<T> {
    fn get(&self, t: Time) -> T {
        if self.v.len() == 1 {
            return self.v[0];
        }
        let off = match self.period {
            Some(p) if p.0 > 0 => Dur(t.0 % p.0),
            _ => Dur(t.0),
        };
        self.v[self.at.partition_point(|a| *a <= off).saturating_sub(1)]
    }
}

/// A unidirectional link carrying items of type `P` (the simulator's [`Packet`] by default).
pub struct Link<P = Packet> {
    pub name: String,
    pub params: LinkParams,
    service: Service,
    /// When the transmitter finishes the last packet accepted (FIFO mode).
    free_at: Time,
    mode: Mode<P>,
    pipe: Pipe<P>,
    loss: LossModel,
    delay: Steps<Dur>,
    loss_rate: Steps<f64>,
    jitter_rng: Rng,
    last_arrival: Time,
    pub stats: LinkStats,
}

impl<P: WireLen> Link<P> {
    pub fn new(name: String, params: LinkParams, seed: u64) -> Link<P> {
        let loss =
            LossModel::new(Rng::stream(seed, &format!("link:{name}:loss")), params.loss_burst, params.drop.clone());
        let jitter_rng = Rng::stream(seed, &format!("link:{name}:jitter"));
        let mode = match params.aqm {
            Some(Aqm::Codel { target, interval }) => Mode::Codel {
                codel: Codel::new(target, interval),
                queue: VecDeque::new(),
                bytes: 0,
                in_tx: None,
                limit: params.queue,
            },
            Some(Aqm::Red { min, max, max_p, weight, gentle }) => Mode::Fifo {
                waiting: VecDeque::new(),
                waiting_bytes: 0,
                red: Some((
                    Red::new(max_p.0, weight, gentle, Rng::stream(seed, &format!("link:{name}:red"))),
                    min,
                    max,
                )),
                last_start: Time::ZERO,
            },
            None => Mode::Fifo { waiting: VecDeque::new(), waiting_bytes: 0, red: None, last_start: Time::ZERO },
        };
        let reorder = params.jitter.as_ref().is_some_and(|j| j.reorder);
        let pipe = if reorder { Pipe::Reorder(BinaryHeap::new(), 0) } else { Pipe::Fifo(VecDeque::new()) };
        let mut delay = Steps { at: vec![Dur::ZERO], v: vec![params.delay], period: params.schedule_period };
        let mut loss_rate = Steps { at: vec![Dur::ZERO], v: vec![params.loss], period: params.schedule_period };
        for s in &params.schedule {
            if let Some(d) = s.delay {
                delay.at.push(s.at);
                delay.v.push(d);
            }
            if let Some(l) = s.loss {
                loss_rate.at.push(s.at);
                loss_rate.v.push(l.0);
            }
        }
        Link {
            name,
            service: params.service(),
            params,
            free_at: Time::ZERO,
            mode,
            pipe,
            loss,
            delay,
            loss_rate,
            jitter_rng,
            last_arrival: Time::ZERO,
            stats: LinkStats::default(),
        }
    }

    /// When the transmitter finishes the last packet it took (FIFO mode: known on arrival).
    pub fn tx_end(&self) -> Time {
        self.free_at
    }

    /// Packets and bytes waiting for the transmitter at `now`.
    pub fn backlog(&mut self, now: Time) -> (u64, u64) {
        match &mut self.mode {
            Mode::Fifo { waiting, waiting_bytes, .. } => {
                prune(waiting, waiting_bytes, now);
                (waiting.len() as u64, *waiting_bytes)
            }
            Mode::Codel { queue, bytes, .. } => (queue.len() as u64, *bytes),
        }
    }

    fn fits(&self, limit: QueueLimit, n: u64, bytes: u64, len: u32, wait: Dur, now: Time) -> bool {
        match limit {
            QueueLimit::Packets(p) => n < p,
            QueueLimit::Bytes(b) => bytes + len as u64 <= b,
            QueueLimit::Time(t) => match self.mode {
                Mode::Fifo { .. } => wait <= t,
                // Event-driven: the wait is not known yet; use the nominal rate.
                Mode::Codel { .. } => (bytes + len as u64) as f64 * 8.0 <= self.service.nominal_bps(now) * t.secs_f64(),
            },
        }
    }

    /// Arrival at the far end of a packet whose transmission ends at `end`.
    #[inline]
    fn arrival(&mut self, end: Time) -> Time {
        let delay = self.delay.get(end);
        let mut t = match &self.params.jitter {
            None => end + delay,
            Some(j) => {
                let d = delay.0 as f64 + j.amount.0 as f64 * jitter::draw(j.distribution, &mut self.jitter_rng);
                end + Dur(d.max(0.0) as u64)
            }
        };
        if matches!(self.pipe, Pipe::Fifo(_)) {
            t = t.max(self.last_arrival); // order-preserving jitter
            self.last_arrival = t;
        }
        t
    }

    /// Offers a packet to the link at `now`.
    pub fn offer(&mut self, now: Time, pkt: P) -> Offer {
        self.stats.arrived += 1;
        let ordinal = self.stats.arrived;
        match self.mode {
            Mode::Fifo { .. } => self.offer_fifo(now, pkt, ordinal),
            Mode::Codel { .. } => {
                let Mode::Codel { queue, bytes, limit, .. } = &self.mode else { unreachable!() };
                let (n, b, limit) = (queue.len() as u64, *bytes, *limit);
                if !self.fits(limit, n, b, pkt.wire_len(), Dur::ZERO, now) {
                    self.stats.queue_drops += 1;
                    return Offer::QueueDrop;
                }
                let len = pkt.wire_len();
                let Mode::Codel { queue, bytes, .. } = &mut self.mode else { unreachable!() };
                queue.push_back((now, ordinal, pkt));
                *bytes += len as u64;
                self.stats.max_queue_packets = self.stats.max_queue_packets.max(queue.len() as u64);
                self.stats.max_queue_bytes = self.stats.max_queue_bytes.max(*bytes);
                self.start_next(now);
                Offer::Accepted
            }
        }
    }

    fn offer_fifo(&mut self, now: Time, pkt: P, ordinal: u64) -> Offer {
        let start = self.free_at.max(now);
        let Mode::Fifo { waiting, waiting_bytes, red, last_start } = &mut self.mode else { unreachable!() };
        prune(waiting, waiting_bytes, now);
        let (n, b) = (waiting.len() as u64, *waiting_bytes);
        if let Some((red, min, max)) = red {
            let rate = self.service.nominal_bps(now);
            let avpkt_time = Dur::from_secs_f64(red::AVPKT as f64 * 8.0 / rate.max(1.0));
            let idle = (n == 0).then(|| now.since((*last_start).min(now)));
            red.update_avg(b, idle, avpkt_time);
            let bytes = |q: QueueLimit| match q {
                QueueLimit::Packets(p) => (p * red::AVPKT) as f64,
                QueueLimit::Bytes(b) => b as f64,
                QueueLimit::Time(t) => rate * t.secs_f64() / 8.0,
            };
            if red.decide(bytes(*min), bytes(*max)) == red::Verdict::Drop {
                self.stats.aqm_drops += 1;
                return Offer::AqmDrop;
            }
        }
        if start > now && !self.fits(self.params.queue, n, b, pkt.wire_len(), start.since(now), now) {
            self.stats.queue_drops += 1;
            return Offer::QueueDrop;
        }
        let end = self.service.finish(start, pkt.wire_len() as u64);
        self.free_at = end;
        self.stats.busy_ns += end.since(start).0;
        let Mode::Fifo { last_start, .. } = &mut self.mode else { unreachable!() };
        *last_start = start;
        if start > now {
            let Mode::Fifo { waiting, waiting_bytes, .. } = &mut self.mode else { unreachable!() };
            waiting.push_back((start, pkt.wire_len()));
            *waiting_bytes += pkt.wire_len() as u64;
            self.stats.max_queue_packets = self.stats.max_queue_packets.max(waiting.len() as u64);
            self.stats.max_queue_bytes = self.stats.max_queue_bytes.max(*waiting_bytes);
        }
        if self.loss.lose(ordinal, self.loss_rate.get(start)) {
            self.stats.loss_drops += 1;
            return Offer::Lost;
        }
        let t = self.arrival(end);
        self.pipe.push(t, pkt);
        Offer::Accepted
    }

    /// CoDel mode: if the transmitter is idle, takes the next packet CoDel lets through.
    fn start_next(&mut self, now: Time) {
        loop {
            let Mode::Codel { codel, queue, bytes, in_tx, .. } = &mut self.mode else { return };
            if in_tx.is_some() {
                return;
            }
            let Some((enq, ordinal, pkt)) = queue.pop_front() else {
                codel.on_empty();
                return;
            };
            *bytes -= pkt.wire_len() as u64;
            if codel.on_dequeue(now, now.since(enq), *bytes) == Verdict::Drop {
                self.stats.aqm_drops += 1;
                continue;
            }
            let lost = self.loss.lose(ordinal, self.loss_rate.get(now));
            if lost {
                self.stats.loss_drops += 1;
            }
            let end = self.service.finish(now, pkt.wire_len() as u64);
            self.stats.busy_ns += end.since(now).0;
            self.free_at = end;
            let Mode::Codel { in_tx, .. } = &mut self.mode else { unreachable!() };
            *in_tx = Some((end, pkt, lost));
            return;
        }
    }

    /// Completes transmissions and hands over every packet that has reached the far end.
    pub fn advance(&mut self, now: Time, out: &mut Vec<P>) {
        while let Mode::Codel { in_tx, .. } = &mut self.mode {
            if in_tx.as_ref().is_none_or(|(end, _, _)| *end > now) {
                break;
            }
            let (end, pkt, lost) = in_tx.take().expect("checked above");
            if !lost {
                let t = self.arrival(end);
                self.pipe.push(t, pkt);
            }
            self.start_next(end);
        }
        while self.pipe.head().is_some_and(|t| t <= now) {
            let p = self.pipe.pop().expect("head exists");
            self.stats.delivered += 1;
            self.stats.delivered_bytes += p.wire_len() as u64;
            out.push(p);
        }
    }

    /// When the link next needs the driver: a transmission ends or a packet arrives.
    pub fn next_wake(&self) -> Option<Time> {
        let tx = match &self.mode {
            Mode::Codel { in_tx: Some((end, _, _)), .. } => Some(*end),
            _ => None,
        };
        match (tx, self.pipe.head()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Packets accepted and not yet delivered (queued, being serialised or propagating).
    pub fn in_flight(&self) -> u64 {
        let held = match &self.mode {
            Mode::Fifo { .. } => 0,
            Mode::Codel { queue, in_tx, .. } => {
                queue.len() as u64 + u64::from(in_tx.as_ref().is_some_and(|(_, _, lost)| !lost))
            }
        };
        self.pipe.len() as u64 + held
    }

    /// Fraction of `[0, end]` the transmitter was busy.
    pub fn utilisation(&self, end: Time) -> f64 {
        if end.0 == 0 {
            return 0.0;
        }
        let busy = self.stats.busy_ns.saturating_sub(self.free_at.0.saturating_sub(end.0));
        (busy as f64 / end.0 as f64).min(1.0)
    }

    /// Packet conservation: offered = delivered + dropped + still in the link.
    pub fn check_conservation(&self) -> Result<(), String> {
        let s = &self.stats;
        let dropped = s.queue_drops + s.aqm_drops + s.loss_drops;
        let rhs = s.delivered + dropped + self.in_flight();
        if s.arrived != rhs {
            return Err(format!(
                "link {}: {} packets arrived but {} delivered + {dropped} dropped + {} in the link = {rhs}",
                self.name,
                s.arrived,
                s.delivered,
                self.in_flight()
            ));
        }
        Ok(())
    }
}

fn prune(waiting: &mut VecDeque<(Time, u32)>, waiting_bytes: &mut u64, now: Time) {
    while let Some(&(start, len)) = waiting.front() {
        if start > now {
            break;
        }
        waiting.pop_front();
        *waiting_bytes -= len as u64;
    }
}
