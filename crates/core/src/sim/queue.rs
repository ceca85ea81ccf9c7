//! The deterministic event queue: integer-nanosecond time, FIFO among equal times.
//!
//! Entries are ordered by `(time, insertion number)`. Timers are not removed from the queue:
//! each owner records the one deadline it currently wants and the driver ignores entries
//! that no longer match it ("lazy cancellation"), so re-arming or cancelling a timer never
//! scans anything. An owner that only moves its deadline later does not push at all: the
//! earlier entry fires, finds nothing due, and re-arms at the new deadline.
//!
//! Two representations, one order. A run usually has a handful of pending events (one per
//! busy link, a timer or two per endpoint): they are kept sorted latest first in a small
//! array (called the ring), where a push finds its place from the earliest end and moves the
//! entries due at or before it (a link's next arrival is usually due before most of the
//! others, so it moves few) and a pop takes the earliest. The ring's entries need no
//! insertion number: a push goes behind every entry due at or before its time, so the ring's order is the insertion order among equal
//! times. When more than `RING` are pending they move to a binary heap, numbered in the
//! ring's order as they go (every later push is numbered after them), and back to the ring
//! once at most `RING` / 4 remain, in the heap's order (the gap keeps a queue that hovers
//! around one size from moving back and forth).

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

/// Capacity of the sorted array.
const RING: usize = 16;

/// An entry of the sorted array: its place gives its order among equal times.
#[derive(Clone, Copy, Debug)]
struct Slot {
    at: Time,
    ev: Event,
}

/// Up to `RING` entries, sorted latest first: the next to pop is the last.
struct Ring {
    buf: [Slot; RING],
    len: usize,
}

impl Default for Ring {
    fn default() -> Self {
        Ring { buf: [Slot { at: Time::ZERO, ev: Event::Sample }; RING], len: 0 }
    }
}

impl Ring {
    /// Inserts `e`, the latest pushed: it goes behind every entry due at or before its
    /// time, which move up by one slot. A new event is usually due before most others (a
    /// link's next arrival, beside timers and slower links), so it mostly moves none or one.
    #[inline]
    fn insert(&mut self, e: Slot) {
        assert!(self.len < RING, "the ring is full");
        let mut j = self.len;
        while j > 0 && self.buf[j - 1].at <= e.at {
            self.buf[j] = self.buf[j - 1];
            j -= 1;
        }
        self.buf[j] = e;
        self.len += 1;
    }

    #[inline]
    fn pop(&mut self) -> Option<Slot> {
        if self.len == 0 {
            return None;
        }
        self.len -= 1;
        Some(self.buf[self.len])
    }

    fn front(&self) -> Option<&Slot> {
        self.len.checked_sub(1).map(|i| &self.buf[i])
    }
}

/// Earliest-first queue of events (see the module documentation). Exactly one of the
/// ring and the heap holds the pending entries (or neither, when none are pending).
#[derive(Default)]
pub struct EventQueue {
    ring: Ring,
    heap: BinaryHeap<Entry>,
    /// The insertion number of the last entry that went into the heap.
    n: u64,
    popped: u64,
}

impl EventQueue {
    /// Queues `ev` at `at`, behind the entries already queued for that time. Inlined at
    /// every call site: a push is made per link wake, and the usual one (ring not full, few
    /// entries to pass) is a handful of instructions beside a call's.
    #[inline(always)]
    pub fn push(&mut self, at: Time, ev: Event) {
        let e = Slot { at, ev };
        if !self.heap.is_empty() {
            self.push_heap(e);
        } else if self.ring.len < RING {
            self.ring.insert(e);
        } else {
            self.spill(e);
        }
    }

    /// Pushes `e` onto the heap, numbered after every entry already queued.
    #[inline]
    fn push_heap(&mut self, e: Slot) {
        self.n += 1;
        self.heap.push(Entry { at: e.at, n: self.n, ev: e.ev });
    }

    /// The ring is full: its entries, in order, and `e` move to the heap.
    #[cold]
    fn spill(&mut self, e: Slot) {
        self.heap.reserve(RING + 1);
        while let Some(x) = self.ring.pop() {
            self.push_heap(x);
        }
        self.push_heap(e);
    }

    #[inline]
    pub fn pop(&mut self) -> Option<(Time, Event)> {
        let e = if self.heap.is_empty() { self.ring.pop()? } else { self.pop_heap() };
        self.popped += 1;
        Some((e.at, e.ev))
    }

    /// Pops from the heap; few entries left move back to the ring, in order.
    fn pop_heap(&mut self) -> Slot {
        let e = self.heap.pop().expect("heap not empty");
        if self.heap.len() <= RING / 4 {
            while let Some(x) = self.heap.pop() {
                self.ring.insert(Slot { at: x.at, ev: x.ev });
            }
        }
        Slot { at: e.at, ev: e.ev }
    }

    pub fn peek_time(&self) -> Option<Time> {
        self.ring.front().map(|e| e.at).or_else(|| self.heap.peek().map(|e| e.at))
    }
    /// Events processed so far.
    pub fn popped(&self) -> u64 {
        self.popped
    }
    pub fn len(&self) -> usize {
        self.heap.len() + self.ring.len
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
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
    #[test]
    fn growing_past_the_ring_and_shrinking_back_keeps_the_order() {
        // Phases that fill the queue well past the ring's capacity and drain it to a few
        // entries, several times, with many equal times: the order never changes.
        let mut q = EventQueue::default();
        let mut reference: Vec<(u64, u64)> = Vec::new();
        let mut rng = crate::rng::Rng::stream(2, "queue-phases");
        let mut n = 0;
        for phase in 0..12u64 {
            let target = if phase % 2 == 0 { 3 * RING as u64 + phase } else { phase % 3 };
            while reference.len() as u64 != target {
                if (reference.len() as u64) < target {
                    n += 1;
                    let at = phase * 100 + rng.below(8);
                    q.push(Time(at), Event::LinkArrive(n as u32));
                    reference.push((at, n));
                } else {
                    reference.sort();
                    let want = reference.remove(0);
                    let got = q.pop().map(|(t, e)| match e {
                        Event::LinkArrive(k) => (t.0, k as u64),
                        _ => unreachable!(),
                    });
                    assert_eq!(got, Some(want));
                }
                assert_eq!(q.len(), reference.len());
            }
        }
    }
}
