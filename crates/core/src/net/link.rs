//! A unidirectional link: drop-tail FIFO queue, transmitter with a bit rate charged on the
//! full on-wire size, propagation delay, Bernoulli loss on the wire.
//!
//! Sans-IO: the link never owns a clock. Because the queue is FIFO and the service rate is
//! known when a packet arrives, its transmission start, end and arrival at the far end are
//! computed at enqueue time; the link keeps the packets in one arrival-ordered pipe and the
//! driver needs a single pending event per link (for the pipe's head), not one per packet.
//! Packets waiting for the transmitter are the ones whose transmission has not started yet:
//! that is the queue the limit applies to (the packet being serialised has left the queue,
//! as in a Linux qdisc).

use std::collections::VecDeque;

use crate::config::{LinkParams, QueueLimit};
use crate::net::packet::Packet;
use crate::rng::Rng;
use crate::units::{Amount, Dur, Time};

/// Per-link counters.
#[derive(Clone, Debug, Default)]
pub struct LinkStats {
    pub arrived: u64,
    pub delivered: u64,
    pub delivered_bytes: u64,
    pub queue_drops: u64,
    pub loss_drops: u64,
    pub max_queue_packets: u64,
    pub max_queue_bytes: u64,
    /// Serialisation time of every accepted packet (ns).
    pub busy_ns: u64,
}

/// What happened to a packet offered to the link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Offer {
    /// Accepted; `Some(t)` if it became the pipe's head (the driver must wake the link at t).
    Accepted(Option<Time>),
    /// Dropped at the tail of a full queue.
    QueueDrop,
    /// Serialised, then lost on the wire.
    Lost,
}

pub struct Link {
    pub name: String,
    pub params: LinkParams,
    /// When the transmitter finishes the last packet accepted so far.
    free_at: Time,
    /// Transmission start times and sizes of accepted packets, oldest first (pruned lazily).
    waiting: VecDeque<(Time, u32)>,
    waiting_bytes: u64,
    /// Accepted packets with their arrival time at the far end (non-decreasing).
    pipe: VecDeque<(Time, Packet)>,
    loss_rng: Rng,
    /// Next entry of `params.drop` to apply.
    drop_next: usize,
    pub stats: LinkStats,
}

impl Link {
    pub fn new(name: String, params: LinkParams, seed: u64) -> Link {
        let loss_rng = Rng::stream(seed, &format!("link:{name}:loss"));
        Link {
            name,
            params,
            free_at: Time::ZERO,
            waiting: VecDeque::new(),
            waiting_bytes: 0,
            pipe: VecDeque::new(),
            loss_rng,
            drop_next: 0,
            stats: LinkStats::default(),
        }
    }

    fn prune_waiting(&mut self, now: Time) {
        while let Some(&(start, len)) = self.waiting.front() {
            if start > now {
                break;
            }
            self.waiting.pop_front();
            self.waiting_bytes -= len as u64;
        }
    }

    /// Packets and bytes waiting for the transmitter at `now`.
    pub fn backlog(&mut self, now: Time) -> (u64, u64) {
        self.prune_waiting(now);
        (self.waiting.len() as u64, self.waiting_bytes)
    }

    fn fits(&self, len: u32) -> bool {
        match self.params.queue {
            QueueLimit(Amount::Packets(p)) => (self.waiting.len() as u64) < p,
            QueueLimit(Amount::Bytes(b)) => self.waiting_bytes + len as u64 <= b,
        }
    }

    /// Offers a packet to the link at `now`.
    pub fn offer(&mut self, now: Time, pkt: Packet) -> Offer {
        self.stats.arrived += 1;
        self.prune_waiting(now);
        let start = self.free_at.max(now);
        if start > now && !self.fits(pkt.wire_len) {
            self.stats.queue_drops += 1;
            return Offer::QueueDrop;
        }
        let tx = self.params.rate.tx_time(pkt.wire_len as u64);
        self.free_at = start + tx;
        self.stats.busy_ns += tx.0;
        if start > now {
            self.waiting.push_back((start, pkt.wire_len));
            self.waiting_bytes += pkt.wire_len as u64;
            self.stats.max_queue_packets = self.stats.max_queue_packets.max(self.waiting.len() as u64);
            self.stats.max_queue_bytes = self.stats.max_queue_bytes.max(self.waiting_bytes);
        }
        let listed = self.params.drop.get(self.drop_next) == Some(&self.stats.arrived);
        if listed {
            self.drop_next += 1;
        }
        if listed || self.loss_rng.bernoulli(self.params.loss) {
            self.stats.loss_drops += 1;
            return Offer::Lost;
        }
        let arrive = self.free_at + self.params.delay;
        let was_empty = self.pipe.is_empty();
        self.pipe.push_back((arrive, pkt));
        Offer::Accepted(was_empty.then_some(arrive))
    }

    /// Removes the pipe's head if it has arrived by `now`.
    pub fn pop_arrived(&mut self, now: Time) -> Option<Packet> {
        match self.pipe.front() {
            Some(&(t, _)) if t <= now => {
                let (_, p) = self.pipe.pop_front().expect("front exists");
                self.stats.delivered += 1;
                self.stats.delivered_bytes += p.wire_len as u64;
                Some(p)
            }
            _ => None,
        }
    }

    /// When the next packet reaches the far end.
    pub fn next_arrival(&self) -> Option<Time> {
        self.pipe.front().map(|&(t, _)| t)
    }

    /// Packets accepted and not yet delivered (queued, being serialised or propagating).
    pub fn in_pipe(&self) -> u64 {
        self.pipe.len() as u64
    }

    /// Fraction of `[0, end]` the transmitter was busy.
    pub fn utilisation(&self, end: Time) -> f64 {
        if end.0 == 0 {
            return 0.0;
        }
        let busy = self.stats.busy_ns.saturating_sub(self.free_at.0.saturating_sub(end.0));
        busy as f64 / end.0 as f64
    }

    /// Packet conservation: offered = delivered + dropped + still in the link.
    pub fn check_conservation(&self) -> Result<(), String> {
        let s = &self.stats;
        let rhs = s.delivered + s.queue_drops + s.loss_drops + self.in_pipe();
        if s.arrived != rhs {
            return Err(format!(
                "link {}: {} packets arrived but {} delivered + {} queue drops + {} lost + {} in the link = {}",
                self.name,
                s.arrived,
                s.delivered,
                s.queue_drops,
                s.loss_drops,
                self.in_pipe(),
                rhs
            ));
        }
        Ok(())
    }

    /// The base one-way delay of an idle link for a packet of `bytes`.
    pub fn idle_delay(&self, bytes: u64) -> Dur {
        self.params.rate.tx_time(bytes) + self.params.delay
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::Rate;

    fn pkt(len: u32) -> Packet {
        Packet {
            uid: 0,
            conn: 0,
            subflow: 0,
            to_server: true,
            hop: 0,
            flags: 0,
            mp: Default::default(),
            wire_len: len,
            payload: 0,
            seq: Default::default(),
            ack: Default::default(),
            wnd: 0,
            sack: Default::default(),
            dsn: Default::default(),
            data_ack: Default::default(),
            sent_at: Time::ZERO,
        }
    }

    fn link_dropping(limit: QueueLimit, drop: Vec<u64>) -> Link {
        // 12 Mbit/s: a 1500 B packet takes exactly 1 ms; 10 ms propagation.
        Link::new(
            "l".into(),
            LinkParams { rate: Rate(12_000_000), delay: Dur::from_ms(10), queue: limit, loss: 0.0, drop },
            1,
        )
    }

    fn link(limit: QueueLimit) -> Link {
        link_dropping(limit, Vec::new())
    }

    #[test]
    fn back_to_back_packets_are_spaced_by_serialisation_time() {
        let mut l = link(QueueLimit(Amount::Packets(10)));
        assert_eq!(l.offer(Time::ZERO, pkt(1500)), Offer::Accepted(Some(Time(11_000_000))));
        assert_eq!(l.offer(Time::ZERO, pkt(1500)), Offer::Accepted(None));
        assert!(l.pop_arrived(Time(10_999_999)).is_none());
        assert!(l.pop_arrived(Time(11_000_000)).is_some());
        assert_eq!(l.next_arrival(), Some(Time(12_000_000)));
    }

    #[test]
    fn drop_tail_counts_waiting_packets_only() {
        // Limit 2: the first packet is on the wire, two wait, the fourth is dropped.
        let mut l = link(QueueLimit(Amount::Packets(2)));
        for _ in 0..3 {
            assert!(matches!(l.offer(Time::ZERO, pkt(1500)), Offer::Accepted(_)));
        }
        assert_eq!(l.offer(Time::ZERO, pkt(1500)), Offer::QueueDrop);
        // After 1 ms the second packet is on the wire: one waits, room for one more.
        assert!(matches!(l.offer(Time(1_000_000), pkt(1500)), Offer::Accepted(_)));
        assert_eq!(l.offer(Time(1_000_000), pkt(1500)), Offer::QueueDrop);
        assert_eq!(l.stats.max_queue_packets, 2);
        l.check_conservation().unwrap();
    }

    #[test]
    fn listed_packets_are_dropped_after_using_the_wire() {
        let mut l = link_dropping(QueueLimit(Amount::Packets(10)), vec![2]);
        assert!(matches!(l.offer(Time::ZERO, pkt(1500)), Offer::Accepted(_)));
        assert_eq!(l.offer(Time::ZERO, pkt(1500)), Offer::Lost);
        // The third packet still waits for the lost one's serialisation: arrives at 3 ms + 10 ms.
        assert_eq!(l.offer(Time::ZERO, pkt(1500)), Offer::Accepted(None));
        l.pop_arrived(Time(11_000_000)).unwrap();
        assert_eq!(l.next_arrival(), Some(Time(13_000_000)));
        l.check_conservation().unwrap();
    }

    #[test]
    fn byte_limits_apply_to_waiting_bytes() {
        let mut l = link(QueueLimit(Amount::Bytes(3000)));
        for _ in 0..3 {
            assert!(matches!(l.offer(Time::ZERO, pkt(1500)), Offer::Accepted(_)));
        }
        assert_eq!(l.offer(Time::ZERO, pkt(100)), Offer::QueueDrop);
    }
}
