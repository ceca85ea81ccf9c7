//! Connection-level reassembly on the receiving host and the shared receive buffer.
//!
//! Subflows hand up data in subflow order with its DSS mapping; here it is put back in data
//! sequence order and delivered once, in order, to the application (which reads at once).
//! The receive buffer is shared by all subflows: the advertised window is its free space
//! (buffer minus data held out of order here and in the subflows' queues) and its right
//! edge never moves left (RFC 9293 §3.8.6.2.2: do not shrink the window), so a slow subflow
//! holding the next expected bytes stalls the fast one (head-of-line blocking). With
//! `rcvbuf_window = "full"` (Linux's behaviour, see [`crate::config::RcvbufWindow`]) the
//! window is the whole buffer beyond the next expected byte instead: out-of-order data does
//! not shrink it, and head-of-line blocking bounds the data in flight by one window.
//! The buffer's size and the window it allows come from [`RcvSpace`]: payload bytes as
//! written (classic), or Linux's truesize accounting with receive-buffer auto-tuning.
//! With `buffer_accounting = "truesize"` only the connection-level out-of-order data is
//! charged (Linux's `__mptcp_space` counts the MPTCP socket's memory; data a subflow holds
//! out of order sits in that subflow's own buffer).

use std::collections::VecDeque;

use super::rcvbuf::RcvSpace;
use crate::tcp::receiver::Chunk;
use crate::trace::hist::Histogram;
use crate::units::{Dsn, Time};

pub struct ConnReceiver {
    pub rcv_nxt: Dsn,
    /// Out-of-order data: disjoint (start, end, arrival), sorted. Data usually arrives at
    /// the end (the fast subflow running ahead), so a deque with an append fast path beats a
    /// tree; the holes being filled sit near the front.
    ooo: VecDeque<(u64, u64, Time)>,
    /// The end of the last range in `ooo` (0 without any), kept beside it: every chunk held
    /// compares with it.
    ooo_end: u64,
    ooo_bytes: u64,
    /// The buffer's size and what it allows.
    pub space: RcvSpace,
    /// Charge the data subflows hold out of order too (the classic model).
    pub count_subflow_ooo: bool,
    /// In-order bytes delivered and not read yet by the application (the application reads
    /// right after the acknowledgement of the segment that delivered them).
    pub unread: u64,
    /// Advertise the whole buffer whatever is held out of order (`rcvbuf_window = "full"`).
    pub full_window: bool,
    right_edge: Dsn,
    pub warmup: Time,
    pub delivered: u64,
    pub delivered_after_warmup: u64,
    pub duplicate_bytes: u64,
    pub max_ooo_bytes: u64,
    /// Arrival → in-order delivery, per chunk (ns).
    pub delay: Histogram,
    pub last_delivery: Time,
}

impl ConnReceiver {
    pub fn new(space: RcvSpace, warmup: Time) -> ConnReceiver {
        let initial = space.handshake_window();
        ConnReceiver {
            rcv_nxt: Dsn(0),
            ooo: VecDeque::new(),
            ooo_end: 0,
            ooo_bytes: 0,
            space,
            count_subflow_ooo: true,
            unread: 0,
            full_window: false,
            right_edge: Dsn(initial),
            warmup,
            delivered: 0,
            delivered_after_warmup: 0,
            duplicate_bytes: 0,
            max_ooo_bytes: 0,
            delay: Histogram::default(),
            last_delivery: Time::ZERO,
        }
    }

    /// Advertises the whole buffer whatever is held out of order (or not).
    pub fn full_window(mut self, on: bool) -> ConnReceiver {
        self.full_window = on;
        self
    }

    pub fn ooo_bytes(&self) -> u64 {
        self.ooo_bytes
    }

    /// Bytes from the next expected byte to the end of the data held out of order.
    pub fn ooo_span(&self) -> u64 {
        self.ooo_end.saturating_sub(self.rcv_nxt.0)
    }

    /// Delivers the next `len` bytes in order at `now` (the chunks' delays are recorded by
    /// the caller, one per chunk).
    fn deliver(&mut self, now: Time, len: u64) {
        self.delivered += len;
        if now >= self.warmup {
            self.delivered_after_warmup += len;
        }
        self.rcv_nxt += len;
        self.last_delivery = now;
    }

    /// Accepts data handed up by a subflow; returns the bytes that were new at connection
    /// level (attributed to that subflow).
    pub fn on_chunk(&mut self, now: Time, c: Chunk) -> u64 {
        let (mut s, e) = (c.dsn.0, c.dsn.0 + c.len);
        if e <= self.rcv_nxt.0 {
            self.duplicate_bytes += c.len;
            return 0;
        }
        if s < self.rcv_nxt.0 {
            self.duplicate_bytes += self.rcv_nxt.0 - s;
            s = self.rcv_nxt.0;
        }
        if s == self.rcv_nxt.0 {
            // The held chunks this one makes contiguous are delivered with it, each with its
            // own delay; bytes already held out of order beyond s are duplicates of this
            // chunk. The counters are updated once for the whole in-order run.
            self.delay.record(now.since(c.arrival).0);
            let mut end = e;
            let mut overlap = 0;
            while let Some(&(os, oe, arr)) = self.ooo.front() {
                if os > end {
                    break;
                }
                self.ooo.pop_front();
                self.ooo_bytes -= oe - os;
                overlap += end.min(oe) - os;
                if oe > end {
                    end = oe;
                    self.delay.record(now.since(arr).0);
                }
            }
            if self.ooo.is_empty() {
                self.ooo_end = 0;
            }
            self.duplicate_bytes += overlap;
            self.deliver(now, end - s);
            return (e - s) - overlap;
        }
        let new = self.insert_ooo(s, e, c.arrival);
        if self.space.grows_on_ooo() {
            self.space.on_ooo(self.ooo_span());
        }
        new
    }

    /// Inserts [s, e) into the out-of-order queue, keeping only bytes not already held.
    fn insert_ooo(&mut self, s: u64, e: u64, arrival: Time) -> u64 {
        // Fast path: beyond everything held.
        debug_assert_eq!(self.ooo_end, self.ooo.back().map_or(0, |r| r.1));
        let new = if s >= self.ooo_end {
            self.ooo.push_back((s, e, arrival));
            e - s
        } else {
            let mut i = self.ooo.partition_point(|r| r.1 <= s);
            let mut cur = s;
            let mut new = 0;
            while cur < e {
                match self.ooo.get(i) {
                    Some(&(os, oe, _)) if os <= cur => {
                        cur = cur.max(oe);
                        i += 1;
                    }
                    next => {
                        let stop = next.map_or(e, |r| r.0.min(e));
                        self.ooo.insert(i, (cur, stop, arrival));
                        new += stop - cur;
                        cur = stop;
                        i += 1;
                    }
                }
            }
            new
        };
        self.ooo_end = self.ooo_end.max(e);
        self.duplicate_bytes += (e - s) - new;
        self.ooo_bytes += new;
        self.max_ooo_bytes = self.max_ooo_bytes.max(self.ooo_bytes);
        new
    }

    /// The window last advertised at the data level, as this end computed it: its right edge
    /// (Linux `msk->rcv_wnd_sent`) less the next expected byte (`msk->ack_seq`). A header
    /// carries at most [`crate::mptcp::rcvbuf::RcvSpace::max_window`] of it.
    pub fn advertised_window(&self) -> u64 {
        self.right_edge.dist(self.rcv_nxt)
    }

    /// The free space (payload bytes) given the bytes the subflows hold out of order.
    pub fn free(&self, subflow_ooo: u64) -> u64 {
        let held = if self.full_window {
            self.unread
        } else {
            self.ooo_bytes + self.unread + if self.count_subflow_ooo { subflow_ooo } else { 0 }
        };
        self.space.window_for(held)
    }

    /// [`Self::window_from_free`] with the free space computed from the bytes the subflows
    /// hold out of order (for tests; the endpoint computes the free space once per push).
    #[cfg(test)]
    pub fn window(&mut self, subflow_ooo: u64, cap: u64) -> u64 {
        let free = self.free(subflow_ooo);
        self.window_from_free(free, cap)
    }

    /// The window to advertise, given the free space ([`Self::free`], which counts the bytes
    /// the subflows hold out of order) and the advertising subflow's own bound on it
    /// (`rcv_ssthresh`; `u64::MAX` for none).
    #[inline]
    pub fn window_from_free(&mut self, free: u64, cap: u64) -> u64 {
        let free = free.min(cap);
        let right = Dsn(self.rcv_nxt.0 + free).max(self.right_edge);
        self.right_edge = right;
        right.dist(self.rcv_nxt)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{BufSize, BufferAccounting, ByteSize};

    fn buf(n: u64) -> RcvSpace {
        RcvSpace::new(BufSize::Fixed(ByteSize(n)), BufferAccounting::Payload, 1448)
    }

    fn ch(dsn: u64, len: u64, t: u64) -> Chunk {
        Chunk { dsn: Dsn(dsn), len, arrival: Time(t) }
    }

    #[test]
    fn a_full_window_ignores_what_is_held_out_of_order() {
        let mut free = ConnReceiver::new(buf(10_000), Time(0));
        let mut full = ConnReceiver::new(buf(10_000), Time(0)).full_window(true);
        for r in [&mut free, &mut full] {
            r.on_chunk(Time(1), ch(1000, 4000, 1)); // 4000 B wait for [0, 1000)
            r.on_chunk(Time(2), ch(0, 1000, 2)); // delivered: 5000 B in order
            r.on_chunk(Time(3), ch(6000, 3000, 3)); // 3000 B held, [5000, 6000) missing
        }
        // Free space: 10000 - 3000 held beyond rcv_nxt = 5000, i.e. right edge 12000 (it
        // never moves left of the first 10000); full: 5000 + 10000.
        assert_eq!(free.window(0, u64::MAX), 7000);
        assert_eq!(full.window(0, u64::MAX), 10_000);
    }

    #[test]
    fn out_of_order_chunks_are_delivered_once_in_order_with_their_wait() {
        let mut r = ConnReceiver::new(buf(10_000), Time(0));
        assert_eq!(r.on_chunk(Time(10), ch(1000, 1000, 10)), 1000);
        assert_eq!(r.window(0, u64::MAX), 10_000); // 1000 B held, but the right edge never shrinks
        assert_eq!(r.on_chunk(Time(11), ch(1000, 1000, 11)), 0); // duplicate
        assert_eq!(r.on_chunk(Time(50), ch(0, 1000, 50)), 1000);
        assert_eq!(r.delivered, 2000);
        assert_eq!(r.rcv_nxt, Dsn(2000));
        assert_eq!(r.duplicate_bytes, 1000);
        assert_eq!(r.delay.max(), 40);
        assert_eq!(r.ooo_bytes(), 0);
    }

    #[test]
    fn the_window_is_free_space_and_never_shrinks() {
        let mut r = ConnReceiver::new(buf(4000), Time(0));
        assert_eq!(r.window(0, u64::MAX), 4000);
        r.on_chunk(Time(1), ch(1000, 3000, 1));
        // 3000 B held: free 1000, but the right edge stays at 4000.
        assert_eq!(r.window(0, u64::MAX), 4000);
        r.on_chunk(Time(2), ch(0, 1000, 2));
        assert_eq!(r.rcv_nxt, Dsn(4000));
        assert_eq!(r.window(0, u64::MAX), 4000);
    }

    /// Linux `__tcp_select_window` bounds a subflow's offer by its `rcv_ssthresh` (`cap`), and
    /// the offered right edge never moves left (`mptcp_set_rwin` raises a smaller offer to
    /// the connection's right edge).
    #[test]
    fn a_subflows_offer_is_capped_by_its_threshold_but_the_edge_never_recedes() {
        let mut r = ConnReceiver::new(buf(10_000), Time(0));
        // 9000 B delivered and read: the edge offered at the start (10000) is 1000 B ahead.
        r.on_chunk(Time(1), ch(0, 9000, 1));
        assert_eq!(r.window(0, 4000), 4000);
        assert_eq!(r.window(0, 8000), 8000);
        assert_eq!(r.window(0, 2000), 8000);
        // 1000 B more: a 2000 B offer would end at 12000, the edge stays at 17000.
        r.on_chunk(Time(2), ch(9000, 1000, 2));
        assert_eq!(r.window(0, 2000), 7000);
        assert_eq!(r.window(0, u64::MAX), 10_000);
    }
}
