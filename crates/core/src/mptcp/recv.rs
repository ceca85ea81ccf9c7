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
use crate::net::packet::{flags, Packet};
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
        let mut offer = select_window(&self.rcv.space, &s.rcv, free);
        if self.right_edge == RightEdge::PerSubflow {
            // `tcp_select_window`: never less than what the subflow still offers in its own
            // sequence space (`tcp_receive_window`: the window of its last ACK less what
            // arrived on it since), aligned up to the scale's unit.
            let (wnd, at) = self.adv[sf];
            offer = offer.max(self.rcv.space.align(wnd.saturating_sub(s.rcv.rcv_nxt.0.saturating_sub(at.0))));
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
    /// leaves after the read, with the window the read restored.
    fn every_ack_waits_for_read(&self, sf: usize) -> bool {
        let Some(s) = self.subflows[sf].as_ref() else { return false };
        select_window(&self.rcv.space, &s.rcv, self.adv_window_peek()) < self.adv[sf].0
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
            let seg = Arriving { seq: pkt.seq, len: pkt.payload as u64, dsn, full_size: full, psh: pkt.is(flags::PSH) };
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
            // 65536 - 2304 B at ratio 158). A segment queued out of order is not charged yet:
            // `tcp_data_queue_ofo` grows the window before `skb_set_owner_r`. A TCP
            // connection's buffer is the connection's.
            if new_data && s.rcv.quickack {
                let ooo = s.rcv.ooo_bytes();
                let beyond_hole = ooo > ooo_before;
                let clamp = if s.rcv.rcvbuf > 0 {
                    let ratio = sf_ratio(&s.rcv);
                    if beyond_hole {
                        self.rcv.space.subflow_window(s.rcv.rcvbuf, ooo_before, ratio)
                    } else {
                        self.rcv.space.subflow_window_queued(s.rcv.rcvbuf, ooo, pkt.payload as u64, ratio)
                    }
                } else {
                    self.rcv.space.window_for(0)
                };
                if s.rcv.grow_window(pkt.payload as u64, clamp, s.rcv.rcv_mss) {
                    if beyond_hole {
                        s.rcv.grew_out_of_order();
                    }
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
            match drs_rtt(self.drs_rtt, self.rcv_rtt[i].est, self.rcv_rtt.iter().map(|r| r.est)) {
                Some((rtt, DrsRtt::Smallest)) => self.rcv.space.on_rtt(rtt),
                Some((rtt, DrsRtt::Largest)) => self.rcv.space.set_rtt(rtt),
                None => {}
            }
            if self.rcv.space.follows_subflows() {
                // Linux 6.18 `mptcp_rcv_space_adjust`: the subflows' smallest ratio, and the
                // largest receiver RTT as the gate of the next refresh.
                let min_ratio =
                    self.subflows.iter().flatten().map(|s| sf_ratio(&s.rcv)).min().unwrap_or(DEFAULT_SCALING_RATIO);
                let max_rtt = self.rcv_rtt.iter().filter_map(|r| r.est).max();
                self.rcv.space.refresh_ratio(now, min_ratio, max_rtt);
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
            let space = select_window(&self.rcv.space, &s.rcv, space);
            let clamp = sf_clamp(&self.rcv.space, &s.rcv).unwrap_or(clamp);
            if cleanup_acks(doubled, rx_empty, &sub, space, clamp) {
                self.send_ack(now, j, out);
            }
        }
    }
}

/// The window subflow receiver `r` offers for the connection's free space `free`
/// (`__tcp_select_window`, [`RcvSpace::select`]): at most its `rcv_ssthresh`, rounded as the
/// connection rounds windows, within the subflow's own buffer's window where that is
/// modelled.
#[inline(always)]
fn select_window(space: &RcvSpace, r: &SubflowReceiver, free: u64) -> u64 {
    if !space.rounds() {
        return free.min(r.offer_cap());
    }
    select_rounded(space, r, free)
}

/// [`select_window`] with windows rounded as Linux's, out of line: the classic path only
/// tests [`RcvSpace::rounds`].
#[inline(never)]
fn select_rounded(space: &RcvSpace, r: &SubflowReceiver, free: u64) -> u64 {
    let full = sf_clamp(space, r).unwrap_or(u64::MAX);
    space.select(free, r.offer_cap(), full, r.rcv_wnd, r.rcv_mss)
}

/// A subflow socket's `window_clamp` where its own buffer is modelled: its empty buffer's
/// window at its own ratio.
fn sf_clamp(space: &RcvSpace, r: &SubflowReceiver) -> Option<u64> {
    (r.rcvbuf > 0).then(|| space.subflow_window(r.rcvbuf, 0, sf_ratio(r)))
}

/// A subflow socket's `scaling_ratio`: its own once a full-sized segment set it, Linux's
/// default before.
fn sf_ratio(r: &SubflowReceiver) -> u64 {
    r.scaling_ratio.unwrap_or(DEFAULT_SCALING_RATIO)
}

/// `mptcp_cleanup_rbuf`'s gate: the free space is positive and at least twice the window
/// last advertised (`old_wspace`).
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
/// most half the window clamp, and the new window (`space`) is not zero and at least twice
/// that.
fn subflow_window_update(space: u64, clamp: u64, adv_wnd: u64, arrived: u64) -> bool {
    let offered = adv_wnd.saturating_sub(arrived);
    space > 0 && 2 * offered <= clamp && space >= 2 * offered
}

#[cfg(test)]
mod tests;
