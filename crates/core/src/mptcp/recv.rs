//! The receive side of an [`Endpoint`]: data arriving on a subflow, the connection-level
//! reassembly and read, receive-buffer auto-tuning, and the windows advertised.
//!
//! Window updates (`window_update`): in the classic model only the subflow that received data
//! acknowledges it, and the application reads at once. With `all_subflows` (Linux) the
//! segment is acknowledged before the application reads what it delivered, and after the
//! read every subflow may send a window update (`mptcp_cleanup_rbuf`, see `cleanup_rbuf`),
//! so a window opened by data on a slow path reaches the sender over the fastest one.

use crate::config::{DrsRtt, RightEdge, WindowUpdate};
use crate::mptcp::connection::Endpoint;
use crate::mptcp::rcvbuf::{RcvSpace, DEFAULT_SCALING_RATIO};
use crate::net::packet::Packet;
use crate::tcp::receiver::{AckNeed, Arriving, SubflowReceiver};
use crate::tcp::sack_compress::comp_sack_delay;
use crate::tcp::timer::Slot;
use crate::units::{Dsn, Dur, Time};

impl Endpoint {
    /// The receive window to advertise on subflow `sf`: free space of the shared receive
    /// buffer, at most the subflow's `rcv_ssthresh` where `tcp_grow_window` is modelled (Linux
    /// `__tcp_select_window`), the right edge never moving left (for MPTCP, `mptcp_set_rwin`
    /// raises a subflow's window to the connection's right edge); with
    /// [`RightEdge::PerSubflow`] each subflow's own right edge never moves left either.
    pub(super) fn adv_window(&mut self, sf: usize) -> u64 {
        let free = match self.push_free {
            Some(free) => {
                debug_assert_eq!(free, self.adv_window_peek(), "the receive side changed during a push");
                free
            }
            None => self.adv_window_peek(),
        };
        let Some(s) = self.subflows.get_mut(sf).and_then(|s| s.as_mut()) else {
            return self.rcv.window_from_free(free, u64::MAX);
        };
        let mut offer = free.min(s.rcv.offer_cap());
        if self.right_edge == RightEdge::PerSubflow {
            // `tcp_select_window`: never less than what the subflow still offers in its own
            // sequence space (`tcp_receive_window`: the window of its last ACK less what
            // arrived on it since).
            let (wnd, at) = self.adv[sf];
            offer = offer.max(wnd.saturating_sub(s.rcv.rcv_nxt.0.saturating_sub(at.0)));
        }
        let w = self.rcv.window_from_free(offer, u64::MAX);
        // Linux `tp->rcv_wnd`: every segment's `tcp_select_window` sets it.
        s.rcv.rcv_wnd = w;
        w
    }

    /// Whether the ACK owed for `b` full-sized segments on subflow `sf` waits for the
    /// application's read, the data having given it something to read. Linux 6.18: the
    /// segment reaches the MPTCP socket first (`tcp_data_queue` → `subflow_data_ready`), which
    /// asks for the ACK at once when the socket then has nothing to read
    /// (`mptcp_data_avail(msk) < sk_rcvlowat`, 1: the data waits behind a connection-level
    /// hole); otherwise `__tcp_ack_snd_check` sends it at once only if `__tcp_select_window`
    /// is at least `rcv_wnd`, the window the subflow last offered, and "tcp_recvmsg() will
    /// send ACK otherwise" ([`Self::cleanup_rbuf`]'s `mptcp_subflow_could_cleanup`). The data just
    /// delivered is unread, so while it holds the free space below the last offer the ACK
    /// leaves after the read, with the window the read restored. Deviation: Linux rounds both
    /// windows to the window scale.
    fn every_ack_waits_for_read(&self, sf: usize) -> bool {
        let Some(s) = self.subflows[sf].as_ref() else { return false };
        self.adv_window_peek().min(s.rcv.offer_cap()) < self.adv[sf].0
    }

    /// Each MPTCP subflow has a receive buffer of its own (Linux's memory accounting with
    /// `tcp_grow_window` modelled); a TCP connection's one socket is the connection's buffer.
    pub(super) fn subflow_bufs(&self) -> bool {
        self.mptcp && self.truesize && self.params.first().is_some_and(|p| p.quickack)
    }

    /// The free space the next advertised window would offer, without advertising it.
    pub(super) fn adv_window_peek(&self) -> u64 {
        self.rcv.free(self.subflow_ooo())
    }

    /// Bytes all subflows hold out of order.
    fn subflow_ooo(&self) -> u64 {
        debug_assert_eq!(self.sub_ooo, self.subflows.iter().flatten().map(|s| s.rcv.ooo_bytes()).sum::<u64>());
        self.sub_ooo
    }

    pub(super) fn on_data(&mut self, now: Time, i: usize, pkt: &Packet, out: &mut Vec<Packet>) {
        let s = self.subflows[i].as_mut().expect("subflow");
        let mut need = AckNeed::Now;
        let delivered_before = self.rcv.delivered;
        if pkt.payload > 0 {
            let dsn = if self.mptcp { pkt.dsn } else { Dsn(pkt.seq.0) };
            let full = pkt.payload as u64 >= s.p.smss;
            self.chunks.clear();
            let seg = Arriving { seq: pkt.seq, len: pkt.payload as u64, dsn, full_size: full };
            let new_data = pkt.seq.0 + pkt.payload as u64 > s.rcv.rcv_nxt.0;
            let ooo_before = s.rcv.ooo_bytes();
            need = s.rcv.on_segment(seg, s.p.b, now, &mut self.chunks);
            self.sub_ooo = self.sub_ooo - ooo_before + s.rcv.ooo_bytes();
            if s.rcv.rcvbuf > 0 && s.rcv.ooo_bytes() > ooo_before {
                // `tcp_data_queue_ofo` → `tcp_rcvbuf_grow(ssk, space)`: the subflow's buffer
                // grows to hold the span it now holds out of order.
                let (record, span, ratio) = (s.rcv.rcvq_space, s.rcv.ooo_span(), sf_ratio(&s.rcv));
                self.rcv.space.grow_subflow(&mut s.rcv.rcvbuf, &mut s.rcv.rcvq_space, record, span, ratio);
            }
            if s.stats.first_data_at.is_none() {
                s.stats.first_data_at = Some(now);
            }
            if full {
                self.rcv.space.on_segment(pkt.payload as u64);
                if self.rcv.space.ratio != 256 && s.rcv.scaling_ratio.is_none() {
                    // The subflow's own first full-sized segment sets its ratio
                    // (`tcp_measure_rcv_mss` → `tcp_set_window_clamp`).
                    let ratio = RcvSpace::segment_ratio(pkt.payload as u64);
                    s.rcv.scaling_ratio = Some(ratio);
                    if s.rcv.rcvbuf > 0 {
                        let old = (s.rcv.rcvbuf * DEFAULT_SCALING_RATIO) >> 8;
                        let new = self.rcv.space.subflow_window(s.rcv.rcvbuf, 0, ratio);
                        s.rcv.raise_window_clamp(old, new, self.adv[i].0);
                    }
                }
            }
            // `tcp_event_data_recv`, after `tcp_measure_rcv_mss`: `tcp_grow_window` sends the
            // segment's ACK at once while the window this socket's buffer allows is above
            // `rcv_ssthresh` (the peer's MSS taken as the largest segment received, where
            // Linux uses this end's `advmss`). An MPTCP subflow's buffer is its own, less what
            // it holds: out of order, and an in-order segment itself, which `tcp_queue_rcv`
            // charged to it before (it moves to the connection only at `tcp_data_ready`; with
            // a 64 KiB buffer a 6.18 subflow's `rcv_ssthresh` stops at 39026 B, the window of
            // 65536 - 2304 B at ratio 158). A TCP connection's buffer is the connection's.
            if new_data && s.rcv.quickack {
                let clamp = if s.rcv.rcvbuf > 0 {
                    let queued = if s.rcv.ooo_bytes() > ooo_before { 0 } else { pkt.payload as u64 };
                    self.rcv.space.subflow_window(s.rcv.rcvbuf, s.rcv.ooo_bytes() + queued, sf_ratio(&s.rcv))
                } else {
                    self.rcv.space.window_for(0)
                };
                if s.rcv.grow_window(pkt.payload as u64, clamp, s.rcv.rcv_mss) {
                    need = AckNeed::Now;
                }
            }
            self.rcv_rtt[i].on_data(now, pkt.ts_echo);
            for k in 0..self.chunks.len() {
                let c = self.chunks[k];
                let new = self.rcv.on_chunk(now, c);
                let s = self.subflows[i].as_mut().expect("subflow");
                s.stats.data_bytes_received += new;
                if now >= self.rcv.warmup {
                    s.stats.data_bytes_after_warmup += new;
                }
            }
        }
        if self.completed_at.is_none() && self.snd.app.size().is_some_and(|n| self.rcv.delivered >= n) {
            self.completed_at = Some(now);
        }
        let read = self.rcv.delivered - delivered_before;
        let linux_read = self.window_update == WindowUpdate::AllSubflows;
        if linux_read {
            // The segment is acknowledged before the application reads what it delivered.
            self.rcv.unread = read;
        }
        if need == AckNeed::Every {
            need = if linux_read && self.mptcp && read > 0 && self.every_ack_waits_for_read(i) {
                AckNeed::Delayed
            } else {
                AckNeed::Now
            };
        }
        let s = self.subflows[i].as_mut().expect("subflow");
        match need {
            AckNeed::Every | AckNeed::Now => self.push_ack(now, i, out),
            AckNeed::Delayed => {
                if !s.timers.delack.is_armed() {
                    s.timers.arm(Slot::Delack, now + s.p.delack_timeout);
                }
            }
            AckNeed::Compressed => {
                if !s.timers.comp_sack.is_armed() {
                    // `rtt = rcv_rtt_est`, or `srtt` if smaller.
                    let rtt = match (self.rcv_rtt[i].est, s.rtt.srtt()) {
                        (Some(a), Some(b)) => Some(a.min(b)),
                        (a, b) => a.or(b),
                    };
                    s.timers.arm(Slot::CompSack, now + comp_sack_delay(rtt));
                }
            }
        }
        self.rcv.unread = 0;
        if read > 0 {
            if self.rcv.space.follows_subflows() {
                // Linux 6.18 `mptcp_rcv_space_adjust`: the subflows' smallest ratio, and the
                // largest receiver RTT as the gate of the next refresh.
                let min_ratio =
                    self.subflows.iter().flatten().map(|s| sf_ratio(&s.rcv)).min().unwrap_or(DEFAULT_SCALING_RATIO);
                let max_rtt = self.rcv_rtt.iter().filter_map(|r| r.est).max();
                self.rcv.space.refresh_ratio(now, min_ratio, max_rtt);
            }
            match drs_rtt(self.drs_rtt, self.rcv_rtt[i].est, self.rcv_rtt.iter().map(|r| r.est)) {
                Some((rtt, DrsRtt::Smallest)) => self.rcv.space.on_rtt(rtt),
                Some((rtt, DrsRtt::Largest)) => self.rcv.space.set_rtt(rtt),
                None => {}
            }
            let span = self.rcv.ooo_span();
            if let Some(copied) = self.rcv.space.on_read(now, read, span) {
                // `mptcp_rcv_space_adjust`: the subflows follow the connection's buffer.
                for s in self.subflows.iter_mut().flatten().filter(|s| s.rcv.rcvbuf > 0 && s.established()) {
                    let (span, ratio) = (s.rcv.ooo_span(), sf_ratio(&s.rcv));
                    self.rcv.space.grow_subflow(&mut s.rcv.rcvbuf, &mut s.rcv.rcvq_space, copied, span, ratio);
                }
            }
            if linux_read {
                self.cleanup_rbuf(now, out);
            }
        }
    }

    /// After the application read data: Linux `mptcp_cleanup_rbuf`. A subflow runs
    /// `tcp_cleanup_rbuf` when the free space has at least doubled since the last advertised
    /// window (`old_wspace`), or when it owes a delayed ACK that the read lets go out
    /// (`mptcp_subflow_could_cleanup`: more than one segment unacknowledged, or a short segment
    /// and the read emptied the connection's receive queue, out-of-order data included). See
    /// [`cleanup_acks`] for what `tcp_cleanup_rbuf` then sends.
    fn cleanup_rbuf(&mut self, now: Time, out: &mut Vec<Packet>) {
        let space = self.adv_window_peek();
        let doubled = space_doubled(space, self.old_space);
        let rx_empty = self.rcv.ooo_bytes() == 0 && self.rcv.unread == 0;
        let clamp = self.rcv.space.window_for(0);
        for j in 0..self.subflows.len() {
            let Some(s) = self.subflows[j].as_ref().filter(|s| s.established()) else { continue };
            let (wnd, at) = self.adv[j];
            let sub = PendingAck {
                scheduled: s.timers.delack.is_armed(),
                arrived: s.rcv.rcv_nxt.0.saturating_sub(at.0),
                rcv_mss: s.rcv.rcv_mss,
                pushed: s.rcv.pushed,
                subflow_empty: s.rcv.ooo_bytes() == 0,
                adv_wnd: wnd,
            };
            // The subflow's own `window_clamp` and `__tcp_select_window` (capped at its
            // `rcv_ssthresh`) where they are modelled.
            let space = space.min(s.rcv.offer_cap());
            let clamp =
                if s.rcv.rcvbuf > 0 { self.rcv.space.subflow_window(s.rcv.rcvbuf, 0, sf_ratio(&s.rcv)) } else { clamp };
            if cleanup_acks(doubled, rx_empty, &sub, space, clamp) {
                self.send_ack(now, j, out);
            }
        }
    }
}

/// `mptcp_cleanup_rbuf`'s gate: the free space is positive and at least twice the window
/// last advertised (`old_wspace`).
/// A subflow socket's `scaling_ratio`: its own once a full-sized segment set it, Linux's
/// default before.
fn sf_ratio(r: &SubflowReceiver) -> u64 {
    r.scaling_ratio.unwrap_or(DEFAULT_SCALING_RATIO)
}

fn space_doubled(space: u64, old_space: u64) -> bool {
    space > 0 && space >= 2 * old_space
}

/// The RTT a read reports to receive-buffer auto-tuning ([`DrsRtt`]): the estimate of the
/// subflow that delivered (the interval keeps the smallest, Linux 7.0), or the largest
/// estimate of all subflows (the 6.18 sources' `mptcp_rcv_space_adjust`: `max(sf_rtt_us)` over
/// `mptcp_for_each_subflow`, whoever delivered).
fn drs_rtt(rule: DrsRtt, delivering: Option<Dur>, all: impl Iterator<Item = Option<Dur>>) -> Option<(Dur, DrsRtt)> {
    match rule {
        DrsRtt::Smallest => delivering.map(|r| (r, rule)),
        DrsRtt::Largest => all.flatten().max().map(|r| (r, rule)),
    }
}

/// One subflow's receive state as `mptcp_cleanup_rbuf` reads it.
struct PendingAck {
    /// A delayed ACK is pending (`ICSK_ACK_SCHED`).
    scheduled: bool,
    /// Bytes that arrived since its last ACK (`rcv_nxt - rcv_wup`).
    arrived: u64,
    /// Its estimate of the peer's segment size (`icsk_ack.rcv_mss`).
    rcv_mss: u64,
    /// A short segment arrived since its last ACK (`ICSK_ACK_PUSHED`).
    pushed: bool,
    /// Nothing waits in its own receive queues (`sk_rmem_alloc` of the subflow).
    subflow_empty: bool,
    /// The window of its last ACK.
    adv_wnd: u64,
}

/// Whether a subflow acknowledges after a read (Linux 6.18 `mptcp_cleanup_rbuf`,
/// `mptcp_subflow_could_cleanup`, `tcp_cleanup_rbuf`). It runs `tcp_cleanup_rbuf` if the free
/// space doubled (`doubled`) or it could clean up: a delayed ACK is pending and more than one
/// segment arrived since its last ACK, or a short one did and the read emptied the
/// connection's receive queue (`rx_empty`). `tcp_cleanup_rbuf` then sends the pending ACK if
/// more than one segment arrived, or a short one did and the subflow holds nothing
/// (`ICSK_ACK_PUSHED` with the receiver not in ping-pong mode, which a bulk receiver never
/// enters), and otherwise a window update if the window grew enough ([`subflow_window_update`]).
fn cleanup_acks(doubled: bool, rx_empty: bool, a: &PendingAck, space: u64, clamp: u64) -> bool {
    let more_than_one = a.arrived > a.rcv_mss;
    let could = a.scheduled && (more_than_one || (rx_empty && a.pushed));
    if !(doubled || could) {
        return false;
    }
    let time_to_ack = a.scheduled && (more_than_one || (a.pushed && a.subflow_empty));
    time_to_ack || subflow_window_update(space, clamp, a.adv_wnd, a.arrived)
}

/// `tcp_cleanup_rbuf`'s test for one subflow: the window it still offers (`tcp_receive_window`:
/// the window it last advertised, `adv_wnd`, less the bytes that arrived on it since) is at
/// most half the window clamp, and the new window (`space`) is at least twice that.
fn subflow_window_update(space: u64, clamp: u64, adv_wnd: u64, arrived: u64) -> bool {
    let offered = adv_wnd.saturating_sub(arrived);
    2 * offered <= clamp && space >= 2 * offered
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mptcp::testkit::{ms, Harness};

    /// The windows of the pure ACKs among `out`, by subflow.
    fn acks(out: &[Packet]) -> Vec<(usize, u64)> {
        out.iter().filter(|p| p.payload == 0).map(|p| (p.subflow as usize, p.wnd)).collect()
    }

    #[test]
    fn a_subflows_window_moves_with_a_data_ack_jump_as_tcp_select_window_keeps_it() {
        // A 40 000-byte buffer counted in payload bytes (no `rcv_ssthresh` cap), two subflows,
        // full segments of s bytes, the application reading at once. Subflow 0 brings data
        // sequence [0, s): the read's window update (nothing advertised before, on both
        // subflows) offers R, at subflow 0's sequence s. It brings [s, 2s) (an ACK owed);
        // subflow 1 brings [3s, 7s) beyond the hole [2s, 3s) and [8s, 11s) beyond a second one,
        // [7s, 8s). Subflow 0's [2s, 3s) fills the first hole, the second segment since its
        // last ACK, and 5s bytes become readable: the ACK leaves after the read
        // (`__tcp_ack_snd_check`'s window test fails with them unread), DATA_ACK 7s, with 3s
        // bytes still held beyond the second hole.
        //
        // The connection's right edge only: the free space, R - 3s (the edge offered before,
        // s + R, lies behind 7s + R - 3s).
        // Per subflow (`tcp_select_window`): subflow 0 still offers what is left of its last
        // window in its own sequence space, R - (3s - s), more than the free space: the window
        // is R - 2s, and the connection's right edge moves with the DATA_ACK's jump.
        let r = 40_000;
        for (edge, expect) in [("connection", 3), ("per_subflow", 2)] {
            let conn = format!("rcvbuf = {r}\nwindow_update = \"all_subflows\"\nright_edge = \"{edge}\"");
            let mut h = Harness::receiver(&conn, 2);
            let s = h.smss;
            assert_eq!(acks(&h.deliver(ms(1), 0, 0, 0)), vec![(0, r), (1, r)]);
            assert!(acks(&h.deliver(ms(2), 0, s, s)).is_empty());
            for (k, d) in [3, 4, 5, 6, 8, 9, 10].into_iter().enumerate() {
                h.deliver(ms(3 + k as u64), 1, k as u64 * s, d * s);
            }
            let sent: Vec<_> = acks(&h.deliver(ms(20), 0, 2 * s, 2 * s)).into_iter().filter(|a| a.0 == 0).collect();
            assert_eq!(sent, vec![(0, r - expect * s)], "{edge}");
        }
    }

    #[test]
    fn the_window_scale_bounds_the_header_not_the_right_edge_the_receiver_keeps() {
        // Linux `tcp_select_window` keeps the window it computed in `tp->rcv_wnd` and writes at
        // most `65535 << rcv_wscale` into the header; `mptcp_set_rwin` records the right edge
        // `ack_seq + tp->rcv_wnd` (`msk->rcv_wnd_sent`). A fixed 256000-byte buffer: `sk_rcvbuf`
        // = 2 x 256000 = 512000; the scale, chosen at the SYN at the default ratio, is
        // ilog2(512000 x 128 / 256 = 256000) - 15 = 2, so the header carries at most H = 65535
        // << 2 = 262140 B. Segments of 1424 B set the ratio 1424 x 256 / 2304 = 158 (here at
        // the first segment, `scaling_ratio = "segment"`), and the empty buffer's window is
        // W = 512000 x 158 / 256 = 316000 B (the largest `tp->rcv_wnd` 6.18.44 reports there).
        let conn = "stack = \"linux\"\nrcvbuf = \"256000B\"\nscaling_ratio = \"segment\"";
        let mut h = Harness::receiver(conn, 2);
        h.smss = 1424;
        let s = h.smss;
        let (rcvbuf, ratio) = (2 * 256_000, (1424 << 8) / 2304);
        let w = (rcvbuf * ratio) >> 8;
        let hdr = 65_535 << 2;
        assert_eq!((ratio, w, h.ep.rcv.space.max_window), (158, 316_000, hdr));
        // In order on subflow 0 until its `rcv_ssthresh` has grown to W, an odd number of
        // segments so that the last one is acknowledged. Each second segment's ACK is computed
        // with that segment charged, unread (`__tcp_ack_snd_check` runs before the application's
        // read; the segment before it was read already): K = (512000 - 2304) x 158 / 256 =
        // 314578 B. The receiver keeps the edge K beyond the DATA_ACK, the header says H.
        let n = 59;
        let mut last = Vec::new();
        for k in 0..n {
            last = h.deliver(ms(1 + k), 0, k * s, k * s);
        }
        let a = n * s;
        let kept = ((rcvbuf - 2304) * ratio) >> 8;
        assert_eq!(h.ep.rcv.rcv_nxt, Dsn(a));
        assert_eq!(h.ep.rcv.advertised_window(), kept);
        assert_eq!(acks(&last).last(), Some(&(0, hdr)));
        // A hole [a, a + 2s); subflow 0 brings m segments beyond it, held. Subflow 1 fills
        // [a, a + s): the DATA_ACK moves by s with m·s still held, whose charge leaves a
        // free-space window F = (512000 - m x 2304) x 158 / 256 below what the edge kept
        // leaves, K - s; the header carries min(K - s, H) = H: the edge the sender knows moves
        // with the DATA_ACK. (Bounded at H, the edge kept would be a + H and the header's
        // window H - s.)
        let m = 60;
        for k in 0..m {
            h.deliver(ms(100 + k), 0, (n + k) * s, a + (2 + k) * s);
        }
        let f = ((rcvbuf - m * 2304) * ratio) >> 8;
        assert!(f < hdr - s && hdr < kept - s, "F = {f}");
        let sent = acks(&h.deliver(ms(200), 1, 0, a));
        assert_eq!(h.ep.rcv.rcv_nxt, Dsn(a + s));
        assert_eq!(sent.iter().rfind(|x| x.0 == 1), Some(&(1, hdr)));
        assert_eq!(h.ep.rcv.advertised_window(), kept - s);
    }

    #[test]
    fn compressed_out_of_order_acks_leave_together_when_the_timer_fires() {
        // `tcp.ooo_ack = "compressed"` (Linux `__tcp_ack_snd_check`, `tcp_compressed_ack_kick`):
        // segment 1 lost, 2..=6 arrive 1 ms apart. 2, 3 and 4 are acknowledged at once; 5
        // arms the timer (no RTT estimate yet: the 1 ms cap, plus 100 µs of slack) and 6 is
        // counted too; one ACK leaves at 5 ms + 1.1 ms, none before.
        let mut h = Harness::receiver("tcp = { ooo_ack = \"compressed\" }", 1);
        let s = h.smss;
        h.deliver(ms(1), 0, 0, 0);
        for k in 2..5 {
            assert_eq!(acks(&h.deliver(ms(k), 0, k * s, k * s)).len(), 1, "segment {k}");
        }
        assert!(acks(&h.deliver(ms(5), 0, 5 * s, 5 * s)).is_empty());
        assert!(acks(&h.deliver(ms(6), 0, 6 * s, 6 * s)).is_empty());
        let at = ms(5) + Dur::from_us(1100);
        assert_eq!(h.ep.subflows[0].as_ref().expect("subflow").timers.comp_sack.deadline(), Some(at));
        let mut out = Vec::new();
        h.ep.on_timeout(Time(at.0 - 1), &mut out);
        assert!(acks(&out).is_empty());
        h.ep.on_timeout(at, &mut out);
        assert_eq!(acks(&out).len(), 1);
        assert_eq!(out[0].sack.n, 1, "the ACK carries the SACK block of 2..=6");
    }

    #[test]
    fn grow_window_counts_the_arriving_segment_in_the_subflows_buffer() {
        // Linux `tcp_rcv_established` → `tcp_queue_rcv` charges the segment to the subflow
        // before `tcp_event_data_recv` → `tcp_grow_window`, whose room is min(window_clamp,
        // tcp_space(ssk)) - rcv_ssthresh: with a locked 64 KiB triple, a 2304-byte truesize and
        // ratio 1424 * 256 / 2304 = 158, rcv_ssthresh stops at (65536 - 2304) * 158 / 256 =
        // 39026 B (what a 6.18 subflow reports), below the window the empty buffer allows
        // (40448 B).
        let conn = "stack = \"linux\"\nrcvbuf = { min = \"65536B\", default = \"65536B\", max = \"65536B\" }";
        let mut h = Harness::receiver(conn, 1);
        // The server's segments: 1500 - 40 - 12 - 24 (its DSS with a 32-bit DATA_ACK).
        h.smss = 1424;
        let s = h.smss;
        for k in 0..64 {
            h.deliver(ms(1 + k), 0, k * s, k * s);
        }
        let sf = h.ep.subflows[0].as_ref().expect("subflow");
        assert_eq!(sf.rcv.rcv_ssthresh, 39_026);
        assert_eq!(h.ep.rcv.space.subflow_window(sf.rcv.rcvbuf, 0, sf_ratio(&sf.rcv)), 40_448);
    }

    #[test]
    fn the_connections_ratio_is_the_subflows_smallest_from_the_first_read_after_each_has_data() {
        // Linux 6.18 `mptcp_rcv_space_adjust`: at a read, `msk->scaling_ratio` = min over the
        // subflows of `tp->scaling_ratio`, which `tcp_measure_rcv_mss` sets at a socket's first
        // full-sized segment (1424 * 256 / 2304 = 158) and is `TCP_DEFAULT_SCALING_RATIO` (128)
        // before. No receiver RTT estimate (the harness's segments echo no timestamp): the gate
        // (`rcvq_space.rtt_us` 0) lets every read refresh. A locked 64 KiB triple, nothing
        // held after a read: the connection offers 65536 * ratio / 256, 32768 B at 128, 40448
        // B at 158. With `scaling_ratio = "segment"` the first segment sets 158 at once.
        let buf = "rcvbuf = { min = \"65536B\", default = \"65536B\", max = \"65536B\" }";
        for (rule, after_first, after_both) in [("subflow_min", 128, 158), ("segment", 158, 158)] {
            let conn = format!("stack = \"linux\"\n{buf}\nscaling_ratio = \"{rule}\"");
            let mut h = Harness::receiver(&conn, 2);
            h.smss = 1424;
            let s = h.smss;
            for k in 0..4 {
                h.deliver(ms(1 + k), 0, k * s, k * s);
            }
            assert_eq!(h.ep.rcv.space.ratio, after_first, "{rule}: subflow 1 has no data yet");
            assert_eq!(h.ep.rcv.space.window_for(0), (65_536 * after_first) >> 8, "{rule}");
            h.deliver(ms(10), 1, 0, 4 * s);
            assert_eq!(h.ep.rcv.space.ratio, after_both, "{rule}: both subflows measured");
            assert_eq!(h.ep.rcv.space.window_for(0), 40_448, "{rule}");
        }
    }

    #[test]
    fn a_second_segments_ack_waits_for_the_read_unless_nothing_is_readable() {
        // Linux 6.18, out of quick-ACK mode, the ACK owed after two full segments:
        // - in-order data the application can read: `__tcp_ack_snd_check` sends it at once
        //   only if the window it would offer now (the free space, the unread segment still
        //   charged) is no smaller than the last one offered; here the last offer was the
        //   whole buffer's window (W = 65536 * 128 / 256 = 32768 B), so the ACK leaves after
        //   the read (`mptcp_cleanup_rbuf`), offering W again, not W - one segment's charge;
        // - data behind a connection-level hole: `subflow_data_ready` finds nothing to read
        //   (`mptcp_data_avail` < `sk_rcvlowat` = 1) and asks for the ACK at once
        //   (`ICSK_ACK_NOW`);
        // - the classic model (`window_update = "receiving_subflow"`) sends it at once.
        // (The harness's segments are full-sized for this end: its own MSS.)
        let buf = "rcvbuf = { min = \"65536B\", default = \"65536B\", max = \"65536B\" }";
        // 20 segments first (quick-ACK mode and the window's growth over), read at once, and
        // an ACK for them; then the last offer is set to the whole window.
        const WARM: u64 = 20;
        let setup = |update: &str| {
            let conn = format!("stack = \"linux\"\n{buf}\nwindow_update = \"{update}\"");
            let mut h = Harness::receiver(&conn, 2);
            let s = h.smss;
            for k in 0..WARM {
                h.deliver(ms(1 + k), 0, k * s, k * s);
            }
            assert_eq!(h.ep.subflows[0].as_ref().expect("subflow").rcv.quick, 0);
            // Nothing owed: an ACK for whatever the warm-up left unacknowledged.
            h.ep.send_ack(ms(WARM + 1), 0, &mut Vec::new());
            let full = h.ep.rcv.space.window_for(0);
            h.ep.adv[0].0 = full;
            (h, full)
        };
        let (mut h, full) = setup("all_subflows");
        let s = h.smss;
        let w = WARM * s;
        assert!(acks(&h.deliver(ms(30), 0, w, w)).is_empty());
        assert_eq!(acks(&h.deliver(ms(31), 0, w + s, w + s)), vec![(0, full)], "after the read, the whole window");
        assert!(h.ep.rcv.space.window_for(s) < full);
        // Behind a hole at [w, w + s): nothing to read, so no read would send it; it leaves at
        // once (its window is the right edge kept, the free space being smaller).
        let (mut h, _) = setup("all_subflows");
        assert!(acks(&h.deliver(ms(30), 0, w, w + s)).is_empty());
        assert_eq!(acks(&h.deliver(ms(31), 0, w + s, w + 2 * s)).len(), 1);
        assert_eq!(h.ep.rcv.delivered, w, "nothing was read");
        // The classic model reads before it acknowledges: the whole window, at once.
        let (mut h, full) = setup("receiving_subflow");
        assert!(acks(&h.deliver(ms(30), 0, w, w)).is_empty());
        assert_eq!(acks(&h.deliver(ms(31), 0, w + s, w + s)), vec![(0, full)]);
    }

    #[test]
    fn window_updates_follow_mptcp_cleanup_rbuf_and_tcp_cleanup_rbuf() {
        // A 3G hole filled: the ACK on 3G advertised 56 KB (most of the buffer still
        // unread), the application read, and 300 KB are free now: 300 >= 2 * 56.
        assert!(space_doubled(300_000, 56_000));
        assert!(!space_doubled(100_000, 56_000));
        assert!(!space_doubled(0, 0));
        // WiFi last advertised 60 KB and received 40 KB since: it still offers 20 KB;
        // clamp 320 KB: 40 <= 320 and 300 >= 40 -> update.
        assert!(subflow_window_update(300_000, 320_000, 60_000, 40_000));
        // A subflow still offering 200 KB: 400 > 320 (more than half the clamp) -> none.
        assert!(!subflow_window_update(300_000, 320_000, 200_000, 0));
        // Offering 160 KB with 300 KB free: 300 < 320 -> none.
        assert!(!subflow_window_update(300_000, 640_000, 160_000, 0));
    }

    #[test]
    fn a_read_that_empties_the_queue_sends_a_pending_ack_for_a_short_segment() {
        // The fast subflow's last segment was the window's 124-byte tail, its ACK delayed
        // (`ICSK_ACK_PUSHED`); it still offers 262 140 B, so the window-update test fails
        // (2 x 262 140 > clamp 262 140).
        let fast = PendingAck {
            scheduled: true,
            arrived: 124,
            rcv_mss: 1424,
            pushed: true,
            subflow_empty: true,
            adv_wnd: 262_140,
        };
        // The slow path's segment filled the hole and the application read everything:
        // `rx_empty`, so `mptcp_subflow_could_cleanup` holds and `tcp_cleanup_rbuf` sends the
        // pending ACK, whether or not the space doubled.
        assert!(cleanup_acks(false, true, &fast, 262_140, 262_140));
        assert!(cleanup_acks(true, true, &fast, 262_140, 262_140));
        // Data still held out of order at the connection level: not empty, no doubling -> none.
        assert!(!cleanup_acks(false, false, &fast, 100_000, 262_140));
        // With doubling, `tcp_cleanup_rbuf` runs and its PUSHED test needs only the subflow's
        // own queues empty.
        assert!(cleanup_acks(true, false, &fast, 262_140, 262_140));
        // No ACK pending: only the window-update test, which fails here.
        let idle = PendingAck { scheduled: false, pushed: false, ..fast };
        assert!(!cleanup_acks(true, true, &idle, 262_140, 262_140));
        // More than one segment unacknowledged with an ACK pending: sent on any read
        // (`rcv_nxt - rcv_wup > rcv_mss`).
        let two = PendingAck { arrived: 1424 + 124, pushed: false, ..fast };
        assert!(cleanup_acks(false, false, &two, 0, 262_140));
    }

    #[test]
    fn drs_takes_the_delivering_subflows_rtt_or_the_largest_of_all_subflows() {
        let ms = |x: u64| Some(Dur::from_ms(x));
        // WiFi (20 ms) delivered; 3G (200 ms) has an estimate too; a third subflow none yet.
        let all = [ms(20), ms(200), None];
        assert_eq!(drs_rtt(DrsRtt::Largest, ms(20), all.into_iter()), Some((Dur::from_ms(200), DrsRtt::Largest)));
        assert_eq!(drs_rtt(DrsRtt::Smallest, ms(20), all.into_iter()), Some((Dur::from_ms(20), DrsRtt::Smallest)));
        // No estimate anywhere: no interval can close.
        assert_eq!(drs_rtt(DrsRtt::Largest, None, [None, None].into_iter()), None);
    }
}
