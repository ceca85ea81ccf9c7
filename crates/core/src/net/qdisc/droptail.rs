//! Drop-tail: the queue admits an arriving packet while its limit holds, and drops it
//! otherwise. The limit is one of:
//! - packets, as Linux `pfifo` (`sch_fifo.c`): admitted while fewer than `limit` packets
//!   wait;
//! - bytes, as Linux `bfifo`: admitted if the bytes waiting plus its own are at most `limit`;
//! - time, as tc-tbf's `latency`: admitted if its wait for the transmitter is at most
//!   `limit`. On an event-driven link the wait is not known on arrival: admitted if the
//!   bytes waiting plus its own drain within `limit` at the link's nominal rate.
//!
//! A packet that goes straight to an idle transmitter never enters the queue, so no limit
//! applies to it (when the link knows on arrival; an event-driven link queues every packet
//! first). Every discipline checks its hard limit this way.
//! Deviations: none intended.

use super::{Arrival, DecidesAt, Enqueue, Qdisc};
use crate::units::Dur;

/// A queue limit: packets, bytes, or time at the link rate (like tc-tbf's `latency`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueLimit {
    Packets(u64),
    /// Wire bytes.
    Bytes(u64),
    Time(Dur),
}

impl QueueLimit {
    /// Whether the queue has room for the arriving packet.
    #[inline(always)]
    pub fn admits(self, a: &Arrival<'_>) -> bool {
        match (self, a.wait) {
            // Straight to the transmitter: never queued.
            (_, Some(Dur::ZERO)) => true,
            (QueueLimit::Packets(p), _) => a.queued.packets < p,
            (QueueLimit::Bytes(b), _) => a.bytes_after() <= b,
            (QueueLimit::Time(t), Some(wait)) => wait <= t,
            (QueueLimit::Time(t), None) => a.bytes_after() as f64 * 8.0 <= a.rate_bps() * t.secs_f64(),
        }
    }
}

/// Drop-tail with its limit.
#[derive(Clone, Debug)]
pub struct DropTail {
    limit: QueueLimit,
}

impl DropTail {
    /// The limit.
    pub fn limit(&self) -> QueueLimit {
        self.limit
    }
}

impl Qdisc for DropTail {
    type Params = QueueLimit;
    const DECIDES_AT: DecidesAt = DecidesAt::Enqueue;

    fn new(limit: &QueueLimit, _link: &str, _seed: u64) -> DropTail {
        DropTail { limit: *limit }
    }

    #[inline(always)]
    fn enqueue(&mut self, a: &Arrival<'_>) -> Enqueue {
        if self.limit.admits(a) {
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
    use crate::units::Time;

    fn decide(limit: QueueLimit, packets: u64, wait: Option<Dur>) -> Enqueue {
        let s = service();
        DropTail::new(&limit, "l", 1).enqueue(&arrival(&s, Time(5), packets, wait))
    }

    /// pfifo: admitted while fewer than `limit` packets wait.
    #[test]
    fn a_packet_limit_admits_while_fewer_packets_wait() {
        let l = QueueLimit::Packets(10);
        assert_eq!(decide(l, 9, Some(Dur::from_ms(9))), Enqueue::Accept);
        assert_eq!(decide(l, 10, Some(Dur::from_ms(10))), Enqueue::TailDrop);
        assert_eq!(decide(l, 10, None), Enqueue::TailDrop);
    }

    /// bfifo: admitted if the bytes waiting plus the packet's own fit (1500-byte packets).
    #[test]
    fn a_byte_limit_counts_the_arriving_packet() {
        let l = QueueLimit::Bytes(15_000);
        assert_eq!(decide(l, 9, None), Enqueue::Accept);
        assert_eq!(decide(l, 10, None), Enqueue::TailDrop);
        assert_eq!(decide(QueueLimit::Bytes(14_999), 9, None), Enqueue::TailDrop);
    }

    /// tc-tbf `latency`: the known wait, or else the drain time at the nominal rate
    /// (12 Mbit/s: 1 ms per 1500-byte packet).
    #[test]
    fn a_time_limit_bounds_the_wait() {
        let l = QueueLimit::Time(Dur::from_ms(10));
        assert_eq!(decide(l, 50, Some(Dur::from_ms(10))), Enqueue::Accept);
        assert_eq!(decide(l, 0, Some(Dur(10_000_001))), Enqueue::TailDrop);
        // Event-driven: 9 packets queued + this one drain in 10 ms; 10 + 1 in 11 ms.
        assert_eq!(decide(l, 9, None), Enqueue::Accept);
        assert_eq!(decide(l, 10, None), Enqueue::TailDrop);
    }

    #[test]
    fn a_packet_that_goes_straight_to_the_transmitter_is_never_refused() {
        for l in [QueueLimit::Packets(1), QueueLimit::Bytes(64), QueueLimit::Time(Dur(1))] {
            assert_eq!(decide(l, 1000, Some(Dur::ZERO)), Enqueue::Accept, "{l:?}");
        }
    }
}
