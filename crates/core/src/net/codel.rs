//! CoDel, Controlled Delay active queue management (RFC 8289 §5, its reference pseudocode).
//!
//! Decisions happen at dequeue: once the sojourn time of dequeued packets has stayed above
//! `target` for at least `interval`, CoDel drops a packet and keeps dropping at intervals
//! shrinking as interval/√count until the sojourn time falls below `target`.
//! Deviations: none intended; MAXPACKET is one 1500-byte MTU.

use crate::units::{Dur, Time};

const MAXPACKET: u64 = 1500;

#[derive(Clone, Debug)]
pub struct Codel {
    pub target: Dur,
    pub interval: Dur,
    first_above_time: Option<Time>,
    drop_next: Time,
    count: u64,
    lastcount: u64,
    dropping: bool,
}

/// What CoDel decided for a packet just taken from the head of the queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Send,
    Drop,
}

impl Codel {
    pub fn new(target: Dur, interval: Dur) -> Codel {
        Codel {
            target,
            interval,
            first_above_time: None,
            drop_next: Time::ZERO,
            count: 0,
            lastcount: 0,
            dropping: false,
        }
    }

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
    pub fn on_dequeue(&mut self, now: Time, sojourn: Dur, backlog_after: u64) -> Verdict {
        let ok = self.ok_to_drop(now, sojourn, backlog_after);
        if self.dropping {
            if !ok {
                self.dropping = false;
                return Verdict::Send;
            }
            if now >= self.drop_next {
                self.count += 1;
                self.drop_next = self.control_law(self.drop_next);
                return Verdict::Drop;
            }
            Verdict::Send
        } else if ok {
            self.dropping = true;
            let delta = self.count.saturating_sub(self.lastcount);
            self.count = if delta > 1 && now.since(self.drop_next) < self.interval.times(16) { delta } else { 1 };
            self.drop_next = self.control_law(now);
            self.lastcount = self.count;
            Verdict::Drop
        } else {
            Verdict::Send
        }
    }

    /// The queue ran empty.
    pub fn on_empty(&mut self) {
        self.first_above_time = None;
        self.dropping = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drops_only_after_a_full_interval_above_target() {
        let mut c = Codel::new(Dur::from_ms(5), Dur::from_ms(100));
        let big = 100_000;
        // Sojourn 20 ms from t = 0: the first drop comes at t = 100 ms, not before.
        assert_eq!(c.on_dequeue(Time(0), Dur::from_ms(20), big), Verdict::Send);
        assert_eq!(c.on_dequeue(Time(99_000_000), Dur::from_ms(20), big), Verdict::Send);
        assert_eq!(c.on_dequeue(Time(100_000_000), Dur::from_ms(20), big), Verdict::Drop);
        // Next drop at 100 ms + 100/sqrt(1) ms... count becomes 2 at 200 ms, then 100/sqrt(2).
        assert_eq!(c.on_dequeue(Time(150_000_000), Dur::from_ms(20), big), Verdict::Send);
        assert_eq!(c.on_dequeue(Time(200_000_000), Dur::from_ms(20), big), Verdict::Drop);
        assert_eq!(c.on_dequeue(Time(270_000_000), Dur::from_ms(20), big), Verdict::Send);
        assert_eq!(c.on_dequeue(Time(271_000_000), Dur::from_ms(20), big), Verdict::Drop);
        // Below target: leaves the dropping state.
        assert_eq!(c.on_dequeue(Time(280_000_000), Dur::from_ms(1), big), Verdict::Send);
        assert_eq!(c.on_dequeue(Time(400_000_000), Dur::from_ms(20), big), Verdict::Send);
    }
}
