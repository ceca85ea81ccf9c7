//! A unidirectional link: a queue under a discipline ([`crate::net::qdisc`]: drop-tail
//! limited in packets, bytes or time, RED or CoDel), a transmitter whose service is a bit
//! rate charged on the full on-wire size (constant, scheduled, or a capacity trace), and the
//! wire: losses (Bernoulli, Gilbert–Elliott, explicit list), then
//! propagation delay with optional jitter.
//!
//! Sans-IO: the link never owns a clock. Two kinds of queue, chosen by the discipline:
//! - it decides at enqueue (drop-tail, RED): because service order is fixed, a packet's
//!   transmission start, end and arrival are computed when it arrives; the packets waiting
//!   for the transmitter are those whose start lies in the future, which is what the
//!   discipline sees (the packet being serialised has left the queue, as in a Linux qdisc);
//! - it decides at dequeue (CoDel): the link holds the packets and is event-driven: the
//!   driver wakes it when a transmission ends.

use std::collections::VecDeque;

use crate::net::packet::Packet;
pub use crate::net::params::{Capacity, LinkParams, ScheduledChange};
use crate::net::qdisc::tbf::Bucket;
use crate::net::qdisc::{AnyQdisc, Arrival, DecidesAt, Dequeue, Enqueue, Occupancy, QdiscParams, QueueLimit};
use crate::net::service::Service;
pub use crate::net::wire::Stow;
use crate::net::wire::Wire;
use crate::units::{earliest, Dur, Rate, Time};

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

impl LinkStats {
    /// Counts a refused packet; `None` if the discipline accepted it.
    #[inline]
    fn refused(&mut self, v: Enqueue) -> Option<Offer> {
        match v {
            Enqueue::Accept => None,
            Enqueue::TailDrop => {
                self.queue_drops += 1;
                Some(Offer::QueueDrop)
            }
            Enqueue::EarlyDrop => {
                self.aqm_drops += 1;
                Some(Offer::AqmDrop)
            }
        }
    }

    #[inline]
    fn saw_queue(&mut self, q: Occupancy) {
        self.max_queue_packets = self.max_queue_packets.max(q.packets);
        self.max_queue_bytes = self.max_queue_bytes.max(q.bytes);
    }
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

/// The packets waiting for the transmitter of a link whose discipline decides at enqueue:
/// (transmission start, wire bytes) of each packet whose start is still ahead.
#[derive(Default)]
struct Ledger {
    waiting: VecDeque<(Time, u32)>,
    bytes: u64,
}

impl Ledger {
    /// Forgets the packets that have entered transmission by `now`.
    #[inline]
    fn prune(&mut self, now: Time) {
        while let Some(&(start, len)) = self.waiting.front() {
            if start > now {
                break;
            }
            self.waiting.pop_front();
            self.bytes -= len as u64;
        }
    }

    #[inline]
    fn occupancy(&self) -> Occupancy {
        Occupancy { packets: self.waiting.len() as u64, bytes: self.bytes }
    }
}

/// The queue of a link whose discipline decides at dequeue, and its transmitter's packet.
struct Held<P> {
    /// (enqueue time, ordinal on the link, packet).
    queue: VecDeque<(Time, u64, P)>,
    bytes: u64,
    /// The packet being serialised: (end, packet, lost on the wire).
    in_tx: Option<(Time, P, bool)>,
}

impl<P: WireLen + Stow> Held<P> {
    #[inline]
    fn occupancy(&self) -> Occupancy {
        Occupancy { packets: self.queue.len() as u64, bytes: self.bytes }
    }

    /// If the transmitter is idle, takes the next packet the discipline lets through.
    fn start_next(&mut self, now: Time, qdisc: &mut AnyQdisc, tx: &mut Transmitter<P>, stats: &mut LinkStats) {
        while self.in_tx.is_none() {
            let Some((enq, ordinal, pkt)) = self.queue.pop_front() else {
                qdisc.on_empty();
                return;
            };
            self.bytes -= pkt.wire_len() as u64;
            if qdisc.dequeue(now, now.since(enq), self.occupancy()) == Dequeue::Drop {
                stats.aqm_drops += 1;
                continue;
            }
            let lost = tx.wire.lose(ordinal, now);
            if lost {
                stats.loss_drops += 1;
            }
            let end = tx.service.finish(now, pkt.wire_len() as u64);
            stats.busy_ns += end.since(now).0;
            tx.free_at = end;
            self.in_tx = Some((end, pkt, lost));
        }
    }
}

/// A link's queue, by where its discipline decides.
enum Backlog<P> {
    Enqueue(Ledger),
    Dequeue(Held<P>),
}

/// The transmitter and the wire behind it.
struct Transmitter<P: Stow> {
    service: Service,
    /// When the transmitter finishes the last packet it took.
    free_at: Time,
    wire: Wire<P>,
}

/// A unidirectional link carrying items of type `P` (the simulator's [`Packet`] by default).
pub struct Link<P: Stow = Packet> {
    pub name: String,
    pub params: LinkParams,
    qdisc: AnyQdisc,
    backlog: Backlog<P>,
    tx: Transmitter<P>,
    pub stats: LinkStats,
    /// See [`Link::head_stays`].
    head_stays: bool,
    /// A plain link: drop-tail with this limit, and a plain wire with this delay
    /// ([`Wire::plain_delay`]); [`Link::admit`] then asks the limit and puts the packet on
    /// the wire directly, with the same outcome as through the general path.
    plain: Option<(QueueLimit, Dur)>,
    /// A TBF shaping in front of a faster device ([`crate::net::qdisc::tbf::Bucket`]): packets
    /// leave when its bucket holds their length and take the device's rate on the wire.
    bucket: Option<Bucket>,
}

impl<P: WireLen + Stow> Link<P> {
    pub fn new(name: String, params: LinkParams, seed: u64) -> Link<P> {
        let qdisc = AnyQdisc::new(&params.qdisc, &name, seed);
        let backlog = match qdisc.decides_at() {
            DecidesAt::Enqueue => Backlog::Enqueue(Ledger::default()),
            DecidesAt::Dequeue => Backlog::Dequeue(Held { queue: VecDeque::new(), bytes: 0, in_tx: None }),
        };
        let tx = Transmitter { service: params.service(), free_at: Time::ZERO, wire: Wire::new(&name, &params, seed) };
        let head_stays = matches!(backlog, Backlog::Enqueue(_)) && tx.wire.keeps_order();
        let plain = qdisc.drop_tail_limit().zip(tx.wire.plain_delay());
        let bucket = match &params.qdisc {
            QdiscParams::Tbf(p) => p.device.map(|d| Bucket::new(p.burst, d)),
            _ => None,
        };
        Link { name, params, qdisc, backlog, tx, stats: LinkStats::default(), head_stays, plain, bucket }
    }

    /// When the transmitter finishes the last packet it took (known on arrival when the
    /// discipline decides at enqueue).
    pub fn tx_end(&self) -> Time {
        self.tx.free_at
    }

    /// Packets and bytes waiting for the transmitter at `now`.
    pub fn backlog(&mut self, now: Time) -> (u64, u64) {
        let q = match &mut self.backlog {
            Backlog::Enqueue(ledger) => {
                ledger.prune(now);
                ledger.occupancy()
            }
            Backlog::Dequeue(held) => held.occupancy(),
        };
        (q.packets, q.bytes)
    }

    /// Offers a packet to the link at `now`.
    pub fn offer(&mut self, now: Time, pkt: P) -> Offer {
        let len = pkt.wire_len();
        self.admit(now, len, move || pkt)
    }

    /// As [`Link::offer`], for a packet the caller keeps: the link copies it only if it
    /// takes it, straight to where it keeps it.
    pub fn offer_copy(&mut self, now: Time, pkt: &P) -> Offer
    where
        P: Clone,
    {
        self.admit(now, pkt.wire_len(), || pkt.clone())
    }

    /// Admits or refuses a packet of `len` wire bytes; `pkt` gives the packet itself.
    #[inline(always)]
    fn admit(&mut self, now: Time, len: u32, pkt: impl FnOnce() -> P) -> Offer {
        self.stats.arrived += 1;
        let ordinal = self.stats.arrived;
        match &mut self.backlog {
            Backlog::Enqueue(ledger) => {
                let tx = &mut self.tx;
                let (start, shaped) = match self.bucket {
                    None => (tx.free_at.max(now), None),
                    Some(mut b) => {
                        let rate = Rate(tx.service.nominal_bps(now) as u64);
                        let (start, cost) = b.depart(now, len as u64, rate);
                        (start, Some((b, cost)))
                    }
                };
                ledger.prune(now);
                let a = Arrival {
                    now,
                    len,
                    queued: ledger.occupancy(),
                    wait: Some(start.since(now)),
                    service: &tx.service,
                };
                let verdict = match self.plain {
                    // `DropTail::enqueue`.
                    Some((limit, _)) if !limit.admits(&a) => Enqueue::TailDrop,
                    Some(_) => Enqueue::Accept,
                    None => self.qdisc.enqueue(&a),
                };
                if let Some(refused) = self.stats.refused(verdict) {
                    return refused;
                }
                let end = match shaped {
                    None => {
                        let end = tx.service.finish(start, len as u64);
                        self.stats.busy_ns += end.since(start).0;
                        end
                    }
                    Some((b, cost)) => {
                        // The bucket keeps what this packet left; busy for the shaping time it took.
                        self.bucket = Some(b);
                        self.stats.busy_ns += cost.0;
                        start.max(tx.free_at) + b.device.tx_time(len as u64)
                    }
                };
                tx.free_at = end;
                if start > now {
                    ledger.waiting.push_back((start, len));
                    ledger.bytes += len as u64;
                    self.stats.saw_queue(ledger.occupancy());
                }
                if let Some((_, delay)) = self.plain {
                    // A plain wire loses nothing.
                    tx.wire.send_plain(end, delay, pkt());
                    return Offer::Accepted;
                }
                if tx.wire.lose(ordinal, start) {
                    self.stats.loss_drops += 1;
                    return Offer::Lost;
                }
                tx.wire.send(end, pkt());
                Offer::Accepted
            }
            Backlog::Dequeue(held) => {
                let a = Arrival { now, len, queued: held.occupancy(), wait: None, service: &self.tx.service };
                if let Some(refused) = self.stats.refused(self.qdisc.enqueue(&a)) {
                    return refused;
                }
                held.queue.push_back((now, ordinal, pkt()));
                held.bytes += len as u64;
                self.stats.saw_queue(held.occupancy());
                held.start_next(now, &mut self.qdisc, &mut self.tx, &mut self.stats);
                Offer::Accepted
            }
        }
    }

    /// Completes transmissions and hands over every packet that has reached the far end.
    pub fn advance(&mut self, now: Time, out: &mut Vec<P>) {
        for _ in 0..self.complete(now) {
            let Some(p) = self.take_due(now) else { break };
            out.push(p);
        }
    }

    /// Completes the transmissions that end by `now` and bounds the packets to hand over
    /// now: [`Link::take_due`] gives them one at a time, at most this many (a packet
    /// offered meanwhile lands behind them and waits for the next round).
    #[inline]
    pub fn complete(&mut self, now: Time) -> usize {
        if let Backlog::Dequeue(held) = &mut self.backlog {
            while let Some((end, pkt, lost)) = held.in_tx.take_if(|(end, _, _)| *end <= now) {
                if !lost {
                    self.tx.wire.send(end, pkt);
                }
                held.start_next(end, &mut self.qdisc, &mut self.tx, &mut self.stats);
            }
        }
        self.tx.wire.land(now)
    }

    /// Hands over the next packet, if it has reached the far end by `now`.
    #[inline]
    pub fn take_due(&mut self, now: Time) -> Option<P> {
        let p = self.tx.wire.take_due(now)?;
        self.stats.delivered += 1;
        self.stats.delivered_bytes += p.wire_len() as u64;
        Some(p)
    }

    /// As [`Link::take_due`], but the packet is read where the link keeps it: the caller
    /// then calls [`Link::discard_due`], before anything else is done with the link. If none
    /// is due: when the link next needs the driver ([`Link::next_wake`]).
    #[inline(always)]
    pub fn due(&mut self, now: Time) -> Result<&mut P, Option<Time>> {
        let tx_end = self.tx_pending();
        match self.tx.wire.due(now) {
            Ok(p) => {
                self.stats.delivered += 1;
                self.stats.delivered_bytes += p.wire_len() as u64;
                Ok(p)
            }
            Err(head) => Err(earliest(tx_end, head)),
        }
    }

    /// Drops the packet [`Link::due`] gave (it was delivered).
    #[inline(always)]
    pub fn discard_due(&mut self) {
        self.tx.wire.discard_due()
    }

    /// Whether a packet offered while others are in the link never changes
    /// [`Link::next_wake`]: the discipline decides at enqueue (no transmission to end) and
    /// the pipe keeps order (the packet lands behind those in flight).
    pub fn head_stays(&self) -> bool {
        self.head_stays
    }

    /// When the link next needs the driver: a transmission ends or a packet arrives.
    /// Always inlined: the driver asks after every delivery round.
    #[inline(always)]
    pub fn next_wake(&self) -> Option<Time> {
        earliest(self.tx_pending(), self.tx.wire.head())
    }

    /// When the transmission under way ends, on a link that decides at dequeue.
    #[inline(always)]
    fn tx_pending(&self) -> Option<Time> {
        match &self.backlog {
            Backlog::Dequeue(Held { in_tx: Some((end, _, _)), .. }) => Some(*end),
            _ => None,
        }
    }

    /// Packets accepted and not yet delivered (queued, being serialised or propagating).
    pub fn in_flight(&self) -> u64 {
        let held = match &self.backlog {
            Backlog::Enqueue(_) => 0,
            Backlog::Dequeue(h) => h.queue.len() as u64 + u64::from(h.in_tx.as_ref().is_some_and(|(_, _, lost)| !lost)),
        };
        self.tx.wire.len() as u64 + held
    }

    /// Fraction of `[0, end]` the transmitter was busy.
    pub fn utilisation(&self, end: Time) -> f64 {
        if end.0 == 0 {
            return 0.0;
        }
        let busy = self.stats.busy_ns.saturating_sub(self.tx.free_at.0.saturating_sub(end.0));
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

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::net::qdisc::QdiscParams;
    use crate::net::service::RateProfile;
    use crate::units::Rate;

    /// An item of some wire length, named by its ordinal.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    struct Item(u64, u32);

    impl WireLen for Item {
        fn wire_len(&self) -> u32 {
            self.1
        }
    }

    impl Stow for Item {
        type Compact = Item;
        type Extra = ();
        fn stow(self, _: &mut VecDeque<()>) -> Item {
            self
        }
        fn unstow(c: Item, _: &mut VecDeque<()>) -> Item {
            c
        }
    }

    /// A lossless link of constant `rate` and one `delay`, no jitter, with `qdisc`.
    fn lossless(rate: Rate, delay: Dur, qdisc: QdiscParams) -> LinkParams {
        LinkParams {
            capacity: Capacity::Rate(Arc::new(RateProfile::constant(rate))),
            nominal_rate: rate,
            delay,
            jitter: None,
            qdisc,
            loss: 0.0,
            loss_burst: None,
            drop: Vec::new(),
            schedule: Vec::new(),
            schedule_period: None,
            at_host: false,
        }
    }

    /// A plain link (drop-tail, lossless, one delay, no jitter) takes its short path and
    /// answers every offer, and delivers every item, as the general path does.
    #[test]
    fn a_plain_link_behaves_as_through_the_general_path() {
        for limit in [QueueLimit::Packets(20), QueueLimit::Bytes(30_000), QueueLimit::Time(Dur::from_ms(2))] {
            let params = lossless(Rate(50_000_000), Dur::from_ms(5), QdiscParams::DropTail(limit));
            let mut plain: Link<Item> = Link::new("l".into(), params.clone(), 3);
            let mut general: Link<Item> = Link::new("l".into(), params, 3);
            assert!(plain.plain.is_some());
            general.plain = None;
            let mut rng = crate::rng::Rng::stream(9, "plain-link-test");
            let (mut now, mut drops) = (Time::ZERO, 0);
            let (mut a, mut b) = (Vec::new(), Vec::new());
            for i in 0..20_000 {
                now += Dur(rng.below(150_000));
                let item = Item(i, [1500, 52, 700][rng.below(3) as usize]);
                let offer = plain.offer(now, item);
                assert_eq!(offer, general.offer(now, item), "item {i}");
                drops += u64::from(offer == Offer::QueueDrop);
                plain.advance(now, &mut a);
                general.advance(now, &mut b);
                assert_eq!((&a, plain.next_wake(), plain.tx_end()), (&b, general.next_wake(), general.tx_end()));
            }
            assert!(drops > 100 && a.len() > 5_000, "{limit:?}: {drops} drops, {} delivered", a.len());
        }
    }

    /// TBF in front of a faster device (`sch_tbf`'s `tbf_dequeue`): on an idle 2 Mbit/s link
    /// with Mininet's 15 000 B bucket and a 10 Gbit/s device, ten 1500-byte packets offered at
    /// once leave back to back (each 1.2 µs on the device, then 10 ms of delay); the eleventh
    /// waits the 6 ms its tokens take at 2 Mbit/s. Without the device the link serialises all
    /// eleven at 6 ms each. The TBF limit sees the packets still waiting for tokens: with a
    /// 1500 B limit (`limit`) the twelfth, arriving while the eleventh waits, is refused.
    #[test]
    fn a_tbf_with_a_device_lets_a_full_bucket_leave_back_to_back() {
        use crate::net::qdisc::tbf::{TbfLimit, TbfParams};
        let params = |device: Option<Rate>| {
            let limit = TbfLimit::Bytes(1_500);
            let tbf = TbfParams { hard: QueueLimit::Packets(1000), burst: 15_000, limit, peak: None, device };
            lossless(Rate(2_000_000), Dur::from_ms(10), QdiscParams::Tbf(tbf))
        };
        let t0 = Time(1_000_000_000);
        let device = Rate(10_000_000_000);
        let mut shaped: Link<Item> = Link::new("l".into(), params(Some(device)), 3);
        let offers: Vec<Offer> = (0..12).map(|i| shaped.offer(t0, Item(i, 1500))).collect();
        assert!(offers[..11].iter().all(|o| *o == Offer::Accepted));
        assert_ne!(offers[11], Offer::Accepted);
        let mut out = Vec::new();
        shaped.advance(t0 + Dur::from_ms(10) + device.tx_time(1500 * 10), &mut out);
        assert_eq!(out.len(), 10);
        shaped.advance(t0 + Dur::from_ms(16), &mut out);
        assert_eq!(out.len(), 10);
        shaped.advance(t0 + Dur::from_ms(16) + device.tx_time(1500), &mut out);
        assert_eq!(out.len(), 11);
        // The link's transmitter as the shaper: one packet per 6 ms.
        let mut serial: Link<Item> = Link::new("l".into(), params(None), 3);
        for i in 0..2 {
            assert_eq!(serial.offer(t0, Item(i, 1500)), Offer::Accepted);
        }
        let mut out = Vec::new();
        serial.advance(t0 + Dur::from_ms(16), &mut out);
        assert_eq!(out.len(), 1);
    }
}
