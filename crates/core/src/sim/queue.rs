//! The deterministic event queue: integer-nanosecond time, FIFO among equal times.
//!
//! A binary heap of `(time, insertion number, event)`. Timers are not removed from the heap:
//! each owner records the one deadline it currently wants and the driver ignores entries
//! that no longer match it ("lazy cancellation"), so re-arming or cancelling a timer never
//! scans anything. An owner that only moves its deadline later does not push at all: the
//! earlier entry fires, finds nothing due, and re-arms at the new deadline.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use crate::units::Time;

/// What an event wakes up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// The head of a link's delivery pipe has reached the far end.
    LinkArrive(u32),
    /// An endpoint's timer deadline (connection index, side: 0 = client, 1 = server).
    Endpoint(u32, u8),
    /// A connection's client starts (first SYN).
    ConnStart(u32),
    /// Time-series sampling tick.
    Sample,
    /// Warm-up boundary for goodput accounting.
    Warmup,
    /// The head of a host's transmit queue is due to leave (`host_jitter`).
    HostSend(u32),
}

#[derive(Clone, Copy, Debug)]
struct Entry {
    at: Time,
    n: u64,
    ev: Event,
}

impl PartialEq for Entry {
    fn eq(&self, o: &Self) -> bool {
        self.at == o.at && self.n == o.n
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Entry {
    // Reversed: BinaryHeap is a max-heap and we want the earliest (then first-inserted).
    fn cmp(&self, o: &Self) -> Ordering {
        o.at.cmp(&self.at).then(o.n.cmp(&self.n))
    }
}

/// Earliest-first queue of events.
#[derive(Default)]
pub struct EventQueue {
    heap: BinaryHeap<Entry>,
    n: u64,
    popped: u64,
}

impl EventQueue {
    pub fn push(&mut self, at: Time, ev: Event) {
        self.n += 1;
        self.heap.push(Entry { at, n: self.n, ev });
    }
    pub fn pop(&mut self) -> Option<(Time, Event)> {
        let e = self.heap.pop()?;
        self.popped += 1;
        Some((e.at, e.ev))
    }
    pub fn peek_time(&self) -> Option<Time> {
        self.heap.peek().map(|e| e.at)
    }
    /// Events processed so far.
    pub fn popped(&self) -> u64 {
        self.popped
    }
    pub fn len(&self) -> usize {
        self.heap.len()
    }
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_times_pop_in_insertion_order() {
        let mut q = EventQueue::default();
        q.push(Time(5), Event::Sample);
        q.push(Time(3), Event::LinkArrive(1));
        q.push(Time(5), Event::LinkArrive(2));
        q.push(Time(5), Event::ConnStart(0));
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(
            order,
            vec![
                (Time(3), Event::LinkArrive(1)),
                (Time(5), Event::Sample),
                (Time(5), Event::LinkArrive(2)),
                (Time(5), Event::ConnStart(0)),
            ]
        );
    }
}
