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
///
/// The earliest entry is kept out of the heap when it arrives as the new minimum (the usual
/// case: a link's next arrival, pushed just before it is due): popping it then costs no
/// sift. The order is exactly the heap's, `(time, insertion number)`.
#[derive(Default)]
pub struct EventQueue {
    heap: BinaryHeap<Entry>,
    /// Earlier than every entry in `heap`.
    first: Option<Entry>,
    n: u64,
    popped: u64,
}

impl EventQueue {
    #[inline]
    pub fn push(&mut self, at: Time, ev: Event) {
        self.n += 1;
        let e = Entry { at, n: self.n, ev };
        // `Entry`'s order is the max-heap's: greater is due earlier.
        match self.first {
            Some(f) if e > f => {
                self.heap.push(f);
                self.first = Some(e);
            }
            Some(_) => self.heap.push(e),
            None if self.heap.peek().is_none_or(|h| e > *h) => self.first = Some(e),
            None => self.heap.push(e),
        }
    }
    #[inline]
    pub fn pop(&mut self) -> Option<(Time, Event)> {
        let e = match self.first.take() {
            Some(e) => e,
            None => self.heap.pop()?,
        };
        self.popped += 1;
        Some((e.at, e.ev))
    }
    pub fn peek_time(&self) -> Option<Time> {
        self.first.as_ref().or_else(|| self.heap.peek()).map(|e| e.at)
    }
    /// Events processed so far.
    pub fn popped(&self) -> u64 {
        self.popped
    }
    pub fn len(&self) -> usize {
        self.heap.len() + usize::from(self.first.is_some())
    }
    pub fn is_empty(&self) -> bool {
        self.first.is_none() && self.heap.is_empty()
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

    #[test]
    fn interleaved_pushes_and_pops_follow_time_then_insertion_order() {
        // Against a reference that sorts by (time, insertion number): pushes at earlier,
        // equal and later times than the current head, interleaved with pops.
        let mut q = EventQueue::default();
        let mut reference: Vec<(u64, u64)> = Vec::new();
        let mut rng = crate::rng::Rng::stream(1, "queue-test");
        let mut n = 0;
        for step in 0..5000u64 {
            if rng.below(16) < 10 {
                n += 1;
                let at = rng.below(50) + step / 10;
                q.push(Time(at), Event::LinkArrive(n as u32));
                reference.push((at, n));
            } else {
                reference.sort();
                let want = (!reference.is_empty()).then(|| reference.remove(0));
                let got = q.pop().map(|(t, e)| match e {
                    Event::LinkArrive(k) => (t.0, k as u64),
                    _ => unreachable!(),
                });
                assert_eq!(got, want);
            }
            assert_eq!(q.len(), reference.len());
        }
    }
}
