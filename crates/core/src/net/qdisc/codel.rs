//! CoDel, Controlled Delay active queue management (RFC 8289 §5, its reference pseudocode).
//!
//! Decisions happen at dequeue: once the sojourn time of dequeued packets has stayed above
//! `target` for at least `interval`, CoDel drops a packet and keeps dropping at intervals
//! shrinking as interval/√count until the sojourn time falls below `target`.
//! The link's hard limit (`queue`) applies at enqueue, as drop-tail on an event-driven link.
//! Deviations: none intended; MAXPACKET is one 1500-byte MTU.

use super::{Arrival, DecidesAt, Dequeue, Enqueue, Occupancy, Qdisc, QueueLimit};
use crate::units::{Dur, Time};

const MAXPACKET: u64 = 1500;

/// CoDel's configuration.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CodelParams {
    /// The hard limit in front of CoDel.
    pub limit: QueueLimit,
    pub target: Dur,
    pub interval: Dur,
}

#[derive(Clone, Debug)]
pub struct Codel {
    limit: QueueLimit,
    target: Dur,
    interval: Dur,
    first_above_time: Option<Time>,
    drop_next: Time,
    count: u64,
    lastcount: u64,
    dropping: bool,
}

impl Codel {
    fn control_law(&self, t: Time) -> Time {
        t + Dur((self.interval.0 as f64 / (self.count.max(1) as f64).sqrt()) as u64)
    }

    /// RFC 8289 `dodequeue`: is it OK to drop, given this packet's sojourn time and the
    /// bytes left in the queue after taking it?
    fn ok_to_drop(&mut self, now: Time, sojourn: Dur, backlog_after: u64) -> bool {
        if sojourn < self.target || backlog_after <= MAXPACKET {
            self.first_above_time = None;
            return false;
        }
        match self.first_above_time {
            None => {
                self.first_above_time = Some(now + self.interval);
                false
            }
            Some(t) => now >= t,
        }
    }

    /// Decides for the head packet (sojourn time, bytes still queued after it). The caller
    /// drops and asks again for the next head while the verdict is `Drop`.
    pub fn on_dequeue(&mut self, now: Time, sojourn: Dur, backlog_after: u64) -> Dequeue {
        let ok = self.ok_to_drop(now, sojourn, backlog_after);
        if self.dropping {
            if !ok {
                self.dropping = false;
                return Dequeue::Send;
            }
            if now >= self.drop_next {
                self.count += 1;
                self.drop_next = self.control_law(self.drop_next);
                return Dequeue::Drop;
            }
            Dequeue::Send
        } else if ok {
            self.dropping = true;
            let delta = self.count.saturating_sub(self.lastcount);
            self.count = if delta > 1 && now.since(self.drop_next) < self.interval.times(16) { delta } else { 1 };
            self.drop_next = self.control_law(now);
            self.lastcount = self.count;
            Dequeue::Drop
        } else {
            Dequeue::Send
        }
    }
}

impl Qdisc for Codel {
    type Params = CodelParams;
    const DECIDES_AT: DecidesAt = DecidesAt::Dequeue;

    fn new(p: &CodelParams, _link: &str, _seed: u64) -> Codel {
        Codel {
            limit: p.limit,
            target: p.target,
            interval: p.interval,
            first_above_time: None,
            drop_next: Time::ZERO,
            count: 0,
            lastcount: 0,
            dropping: false,
        }
    }

    /// Only the hard limit: CoDel decides at dequeue.
    #[inline(always)]
    fn enqueue(&mut self, a: &Arrival<'_>) -> Enqueue {
        if self.limit.admits(a) {
            Enqueue::Accept
        } else {
            Enqueue::TailDrop
        }
    }

    #[inline]
    fn dequeue(&mut self, now: Time, sojourn: Dur, left: Occupancy) -> Dequeue {
        self.on_dequeue(now, sojourn, left.bytes)
    }

    /// The queue ran empty: leave the dropping state (RFC 8289 `dequeue`, empty queue).
    fn on_empty(&mut self) {
        self.first_above_time = None;
        self.dropping = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn codel() -> Codel {
        let p = CodelParams { limit: QueueLimit::Packets(1000), target: Dur::from_ms(5), interval: Dur::from_ms(100) };
        Codel::new(&p, "l", 1)
    }

    /// RFC 8289 §5: the first drop comes once the sojourn time has stayed above `target` for
    /// a whole `interval`; then drops follow at `interval`/√count until it falls below.
    #[test]
    fn drops_only_after_a_full_interval_above_target() {
        let mut c = codel();
        let big = 100_000;
        // Sojourn 20 ms from t = 0: the first drop comes at t = 100 ms, not before.
        assert_eq!(c.on_dequeue(Time(0), Dur::from_ms(20), big), Dequeue::Send);
        assert_eq!(c.on_dequeue(Time(99_000_000), Dur::from_ms(20), big), Dequeue::Send);
        assert_eq!(c.on_dequeue(Time(100_000_000), Dur::from_ms(20), big), Dequeue::Drop);
        // Next drop at 100 ms + 100/sqrt(1) ms... count becomes 2 at 200 ms, then 100/sqrt(2).
        assert_eq!(c.on_dequeue(Time(150_000_000), Dur::from_ms(20), big), Dequeue::Send);
        assert_eq!(c.on_dequeue(Time(200_000_000), Dur::from_ms(20), big), Dequeue::Drop);
        assert_eq!(c.on_dequeue(Time(270_000_000), Dur::from_ms(20), big), Dequeue::Send);
        assert_eq!(c.on_dequeue(Time(271_000_000), Dur::from_ms(20), big), Dequeue::Drop);
        // Below target: leaves the dropping state.
        assert_eq!(c.on_dequeue(Time(280_000_000), Dur::from_ms(1), big), Dequeue::Send);
        assert_eq!(c.on_dequeue(Time(400_000_000), Dur::from_ms(20), big), Dequeue::Send);
    }

    /// RFC 8289 §5 (`dodequeue`): no drop while the queue holds at most one MAXPACKET
    /// behind the head, however long the sojourn; and an empty queue ends the dropping
    /// state, so the next drop again waits a full interval above target.
    #[test]
    fn a_nearly_empty_queue_or_an_empty_one_resets_the_interval() {
        let mut c = codel();
        let left = |bytes| Occupancy { packets: bytes / 1500, bytes };
        let ms = |m: u64| Time(m * 1_000_000);
        assert_eq!(c.dequeue(ms(0), Dur::from_ms(50), left(1500)), Dequeue::Send);
        assert_eq!(c.dequeue(ms(200), Dur::from_ms(50), left(1500)), Dequeue::Send);
        assert_eq!(c.dequeue(ms(200), Dur::from_ms(50), left(30_000)), Dequeue::Send);
        assert_eq!(c.dequeue(ms(300), Dur::from_ms(50), left(30_000)), Dequeue::Drop);
        c.on_empty();
        assert_eq!(c.dequeue(ms(301), Dur::from_ms(50), left(30_000)), Dequeue::Send);
        assert_eq!(c.dequeue(ms(400), Dur::from_ms(50), left(30_000)), Dequeue::Send);
        assert_eq!(c.dequeue(ms(401), Dur::from_ms(50), left(30_000)), Dequeue::Drop);
    }
}
