//! The data receiver of one subflow: subflow-level reassembly, SACK blocks (RFC 2018) and the
//! delayed-ACK decision (RFC 1122 / RFC 5681 §4.2).
//!
//! In-order segments are handed up immediately with their DSS mapping; out-of-order ones wait
//! here (as in Linux's subflow out-of-order queue) and are handed up when the hole fills.
//! ACK policy: every `b`-th full-sized segment, or when the delayed-ACK timer fires;
//! immediately on out-of-order data, on a segment that fills (part of) a hole, and on a
//! duplicate; with `tcp.ooo_ack = "compressed"` (the `linux` profile) out-of-order data is
//! acknowledged as Linux since 4.18 does ([`crate::tcp::sack_compress`]). With `tcp.quickack`
//! (the `linux` profile), Linux's quick-ACK mode (`tcp_incr_quickack`,
//! `tcp_enter_quickack_mode`, `tcp_dec_quickack_mode`): the first data segment and, unless
//! their ACKs are compressed, out-of-order ones set the count of immediate ACKs to at least
//! TCP_MAX_QUICKACKS = 16 (Linux bounds it by half the receive window in segments, which
//! is above 16 for any window over 46 KB, so the bound is not modelled); while it is
//! positive every segment is acknowledged at once, and each ACK sent lowers it by one.
//! While the receive window the subflow may offer grows (receive-buffer auto-tuning),
//! `tcp_grow_window` asks for one quick ACK per segment ([`SubflowReceiver::grow_window`]).
//! Not modelled: the re-entry after an idle gap longer than the RTO (`tcp_event_data_recv`).
//! Without it (the classic default) delayed ACKs start with the first segment, as the
//! seeds' slow-start model assumes.

use std::collections::VecDeque;

use crate::tcp::sack_compress::SackCompression;
use crate::units::{Dsn, Seq, Time};

/// A run of data handed up to the connection level.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Chunk {
    pub dsn: Dsn,
    pub len: u64,
    /// When the bytes reached the host.
    pub arrival: Time,
}

#[derive(Clone, Copy, Debug)]
struct OooSeg {
    start: u64,
    end: u64,
    dsn: Dsn,
    arrival: Time,
}

/// A data segment as it arrives: subflow sequence, payload length, mapping, whether it is
/// full-sized (only full-sized segments count towards the delayed-ACK ratio) and whether it
/// carries PSH.
#[derive(Clone, Copy, Debug)]
pub struct Arriving {
    pub seq: Seq,
    pub len: u64,
    pub dsn: Dsn,
    pub full_size: bool,
    pub psh: bool,
}

/// Whether the caller must acknowledge right away.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AckNeed {
    Now,
    /// `b` full-sized segments are unacknowledged: at once, unless the endpoint leaves the ACK
    /// to the application's read (Linux `__tcp_ack_snd_check` sends it at once only when the
    /// window it would offer is no smaller than the last one, "tcp_recvmsg() will send ACK
    /// otherwise").
    Every,
    /// The caller arms the compressed-ACK timer if it is not armed, to the delay
    /// [`crate::tcp::sack_compress::comp_sack_delay`] gives (SACK compression).
    Compressed,
    /// The caller arms the delayed-ACK timer if it is not armed.
    Delayed,
}

#[derive(Clone, Debug, Default)]
pub struct SubflowReceiver {
    pub rcv_nxt: Seq,
    /// Out-of-order segments, disjoint and sorted; they usually arrive past the last one
    /// (the sender keeps sending while a hole is repaired), hence a deque with an append
    /// fast path.
    segs: VecDeque<OooSeg>,
    /// Merged out-of-order ranges, sorted.
    ranges: VecDeque<(u64, u64)>,
    ooo_bytes: u64,
    /// SACK blocks, most recently changed first.
    recent: Vec<(u64, u64)>,
    /// Full-sized segments received since the last ACK.
    pub unacked_segs: u64,
    /// Bytes received in order since the last ACK (Linux `rcv_nxt - rcv_wup`).
    pub unacked_bytes: u64,
    /// The delayed ACK counts bytes, not full-sized segments (`tcp.delack_count = "bytes"`,
    /// [`Self::delayed_ack`]).
    pub count_bytes: bool,
    /// A segment shorter than a full one arrived since the last ACK (Linux
    /// `ICSK_ACK_PUSHED`, set by `tcp_measure_rcv_mss`): a read that empties the receive
    /// queue then acknowledges at once (`tcp_cleanup_rbuf`).
    pub pushed: bool,
    /// The largest segment received (Linux `icsk_ack.rcv_mss`, `tcp_measure_rcv_mss`): the
    /// peer's segment size, which may differ from this end's own (MPTCP options differ by
    /// direction).
    pub rcv_mss: u64,
    /// Quick-ACK mode is modelled; immediate ACKs still owed; data seen yet.
    pub quickack: bool,
    pub quick: u32,
    seen_data: bool,
    /// Linux `rcv_ssthresh` (bytes; the endpoint sets it when the subflow is created, 0 until
    /// then), see [`Self::grow_window`].
    pub rcv_ssthresh: u64,
    /// This subflow socket's own receive buffer (`sk_rcvbuf`, memory bytes) and receive-space
    /// record (`rcvq_space.space`), where the endpoint models them (an MPTCP subflow with
    /// Linux's memory accounting; 0 otherwise): see [`crate::mptcp::rcvbuf::RcvSpace::grow_subflow`].
    pub rcvbuf: u64,
    pub rcvq_space: u64,
    /// This socket's own `scaling_ratio` (payload / memory in 1/256), once a full-sized
    /// segment has set it (`tcp_measure_rcv_mss`); None before (Linux's default, 128), and
    /// where the endpoint does not use Linux's memory accounting.
    pub scaling_ratio: Option<u64>,
    /// The window this subflow offered in the last segment it sent (Linux `tp->rcv_wnd`,
    /// bytes), which the endpoint keeps current; 0 before any (quick-ACK mode then grants the
    /// most).
    pub rcv_wnd: u64,
    /// SACK compression, where modelled (`tcp.ooo_ack = "compressed"`).
    pub compressed: Option<SackCompression>,
}

/// Linux `TCP_MAX_QUICKACKS`.
pub const MAX_QUICKACKS: u32 = 16;

impl SubflowReceiver {
    /// Payload bytes held out of order.
    pub fn ooo_bytes(&self) -> u64 {
        self.ooo_bytes
    }

    /// Bytes from the next expected one to the end of the last out-of-order range (Linux
    /// `ooo_last_skb->end_seq - rcv_nxt`), 0 without any.
    pub fn ooo_span(&self) -> u64 {
        self.ranges.back().map_or(0, |r| r.1.saturating_sub(self.rcv_nxt.0))
    }

    /// The most this subflow may offer (`__tcp_select_window`: `rcv_ssthresh`) where
    /// `tcp_grow_window` is modelled; unbounded otherwise.
    pub fn offer_cap(&self) -> u64 {
        if self.quickack && self.rcv_ssthresh > 0 {
            self.rcv_ssthresh
        } else {
            u64::MAX
        }
    }

    /// Linux `tcp_set_window_clamp` when the socket's first full-sized segment raised its
    /// `scaling_ratio` (`tcp_measure_rcv_mss`): the clamp grows from `old_clamp` to
    /// `new_clamp`, and `rcv_ssthresh` rises to at least min(`rcv_wnd`, new clamp), `rcv_wnd`
    /// being the window this subflow last offered (`adv_wnd`).
    pub fn raise_window_clamp(&mut self, old_clamp: u64, new_clamp: u64, adv_wnd: u64) {
        if new_clamp > old_clamp {
            self.rcv_ssthresh = self.rcv_ssthresh.max(adv_wnd.min(new_clamp));
        }
    }

    /// `tcp_grow_window` put an out-of-order segment just received in quick-ACK mode
    /// (`tcp_data_queue_ofo` grows the window before the ACK is decided): its immediate ACK
    /// is not one of SACK compression's counted duplicates.
    pub fn grew_out_of_order(&mut self) {
        if let Some(c) = self.compressed.as_mut() {
            c.uncount();
        }
    }

    /// An ACK left: it clears the delayed-ACK count, uses one quick ACK and carries every
    /// compressed one (`tcp_event_ack_sent`: `compressed_ack` = 0).
    pub fn on_ack_sent(&mut self) {
        self.unacked_segs = 0;
        self.unacked_bytes = 0;
        self.pushed = false;
        self.quick = self.quick.saturating_sub(1);
        if let Some(c) = self.compressed.as_mut() {
            c.pending = 0;
        }
    }

    /// An out-of-order segment's ACK: at once (entering quick-ACK mode where modelled), or as
    /// SACK compression decides, after quick-ACK mode (`__tcp_ack_snd_check` tests
    /// `tcp_in_quickack_mode` before it counts duplicates).
    fn ooo_ack(&mut self) -> AckNeed {
        if self.quick > 0 && self.compressed.is_some() {
            return AckNeed::Now;
        }
        let rcv_nxt = self.rcv_nxt;
        match self.compressed.as_mut().map(|c| c.on_out_of_order(rcv_nxt)) {
            Some(true) => AckNeed::Now,
            Some(false) => AckNeed::Compressed,
            None => {
                self.enter_quickack(self.rcv_mss);
                AckNeed::Now
            }
        }
    }

    /// Linux `tcp_grow_window` for a new data segment of `len` >= 128 bytes
    /// (`tcp_event_data_recv`), with quick-ACK mode modelled: while the window the subflow may
    /// offer (`clamp`, Linux min(`window_clamp`, `tcp_space`)) is above `rcv_ssthresh`, the
    /// threshold grows by max(2 × `advmss`, 2 × `len`), at most to `clamp`, and the segment is
    /// acknowledged at once (`icsk_ack.quick |= 1`). The threshold starts at the window offered
    /// in the handshake (the endpoint sets it; Linux `tcp_select_initial_window`), or at `clamp`
    /// if nobody did. Returns whether it grew.
    ///
    /// The endpoint caps the window it offers on this subflow at `rcv_ssthresh`
    /// (`__tcp_select_window`). Deviation: the growth step assumes the segment's truesize is no
    /// worse than the ratio the window is computed with (Linux's `__tcp_grow_window` branch
    /// for bloated skbs is not modelled).
    pub fn grow_window(&mut self, len: u64, clamp: u64, advmss: u64) -> bool {
        if !self.quickack || len < 128 {
            return false;
        }
        if self.rcv_ssthresh == 0 {
            self.rcv_ssthresh = clamp;
        }
        let room = clamp.saturating_sub(self.rcv_ssthresh);
        if room == 0 {
            return false;
        }
        self.rcv_ssthresh += room.min((2 * advmss).max(2 * len));
        self.quick |= 1;
        true
    }

    /// Linux `tcp_enter_quickack_mode` → `tcp_incr_quickack`: as many quick ACKs as the last
    /// window offered holds pairs of `mss`-byte segments (`rcv_wnd / (2 * rcv_mss)`, 2 where
    /// that is 0), at most `TCP_MAX_QUICKACKS`; never fewer than are left.
    fn enter_quickack(&mut self, mss: u64) {
        if self.quickack {
            let pairs = if self.rcv_wnd == 0 { MAX_QUICKACKS as u64 } else { self.rcv_wnd / (2 * mss.max(1)) };
            let grant = if pairs == 0 { 2 } else { pairs.min(MAX_QUICKACKS as u64) as u32 };
            self.quick = self.quick.max(grant);
        }
    }

    /// Accepts a data segment; in-order data (including what it unblocks) goes to `up`.
    #[inline]
    pub fn on_segment(&mut self, seg: Arriving, b: u64, now: Time, up: &mut Vec<Chunk>) -> AckNeed {
        if !self.seen_data {
            // `tcp_event_data_recv`: `tcp_measure_rcv_mss` takes the segment's size first.
            self.seen_data = true;
            self.enter_quickack(self.rcv_mss.max(seg.len));
        }
        let need = if seg.seq == self.rcv_nxt && seg.len > 0 && self.segs.is_empty() {
            self.in_order(seg, b, now, up)
        } else {
            self.on_segment_inner(seg, b, now, up)
        };
        if need != AckNeed::Now && self.quick > 0 {
            return AckNeed::Now;
        }
        need
    }

    /// The usual case, inline: a segment at `rcv_nxt` with nothing held out of order is handed
    /// up at once and acknowledged every `b` full-sized segments (what [`Self::on_segment_inner`]
    /// does for it).
    #[inline]
    fn in_order(&mut self, seg: Arriving, b: u64, now: Time, up: &mut Vec<Chunk>) -> AckNeed {
        self.rcv_mss = self.rcv_mss.max(seg.len);
        up.push(Chunk { dsn: seg.dsn, len: seg.len, arrival: now });
        self.rcv_nxt = seg.seq + seg.len;
        self.delayed_ack(seg.len, seg.full_size, seg.psh, b)
    }

    /// Counts `len` in-order bytes towards the delayed ACK and says whether one is owed now,
    /// acknowledging every `b`-th segment: `b` full-sized segments, or with
    /// [`Self::count_bytes`] Linux's rule, more than `b - 1` times the peer's segment size
    /// (`__tcp_ack_snd_check`: `rcv_nxt - rcv_wup > rcv_mss` at b = 2). A short segment marks
    /// `pushed`, and so does a full-sized one with PSH (Linux `tcp_measure_rcv_mss`: "the end
    /// of an application write", so that a read that empties the queue acknowledges it).
    #[inline]
    fn delayed_ack(&mut self, len: u64, full_size: bool, psh: bool, b: u64) -> AckNeed {
        if full_size {
            self.unacked_segs += 1;
            self.pushed |= psh;
        } else {
            self.pushed = true;
        }
        self.unacked_bytes += len;
        let owed = if self.count_bytes { self.unacked_bytes > (b - 1) * self.rcv_mss } else { self.unacked_segs >= b };
        if owed {
            AckNeed::Every
        } else {
            AckNeed::Delayed
        }
    }

    #[inline(never)]
    fn on_segment_inner(&mut self, seg: Arriving, b: u64, now: Time, up: &mut Vec<Chunk>) -> AckNeed {
        let Arriving { seq, len, dsn, full_size, psh } = seg;
        self.rcv_mss = self.rcv_mss.max(len);
        let (mut s, e) = (seq.0, seq.0 + len);
        let mut dsn = dsn;
        if e <= self.rcv_nxt.0 {
            return AckNeed::Now; // duplicate: tell the sender where we are
        }
        if s < self.rcv_nxt.0 {
            dsn += self.rcv_nxt.0 - s;
            s = self.rcv_nxt.0;
        }
        if s == self.rcv_nxt.0 {
            let had_ooo = !self.segs.is_empty();
            up.push(Chunk { dsn, len: e - s, arrival: now });
            self.rcv_nxt = Seq(e);
            if had_ooo {
                self.pull(up);
                return AckNeed::Now; // filled (part of) a hole
            }
            return self.delayed_ack(e - s, full_size, psh, b);
        }
        self.insert_ooo(s, e, dsn, now);
        self.ooo_ack()
    }

    fn insert_ooo(&mut self, mut s: u64, mut e: u64, mut dsn: Dsn, now: Time) {
        // The first segment starting after `s`; usually none (data arriving past the last
        // segment held), which the back alone tells without searching the whole queue.
        let i = if self.segs.back().is_none_or(|g| g.start <= s) {
            self.segs.len()
        } else {
            self.segs.partition_point(|g| g.start <= s)
        };
        if let Some(p) = i.checked_sub(1).map(|k| self.segs[k]) {
            if p.end >= e {
                // Already held: report the whole block that contains it (RFC 2018).
                let k = self.ranges.partition_point(|r| r.0 <= p.start);
                let (bs, be) = self.ranges[k - 1];
                self.touch(bs, be);
                return;
            }
            if p.end > s {
                dsn += p.end - s;
                s = p.end;
            }
        }
        if let Some(n) = self.segs.get(i) {
            e = e.min(n.start);
        }
        if s >= e {
            return;
        }
        let seg = OooSeg { start: s, end: e, dsn, arrival: now };
        if i == self.segs.len() {
            self.segs.push_back(seg); // the usual case: past the last segment held
        } else {
            self.segs.insert(i, seg);
        }
        self.ooo_bytes += e - s;
        // Merge into the range set (fast path: extends or follows the last range).
        let (rs, re) = match self.ranges.back_mut() {
            Some(last) if s >= last.0 && s <= last.1 => {
                last.1 = last.1.max(e);
                *last
            }
            Some(last) if s > last.1 => {
                self.ranges.push_back((s, e));
                (s, e)
            }
            _ => {
                let k = self.ranges.partition_point(|r| r.1 < s);
                let mut j = k;
                let (mut rs, mut re) = (s, e);
                while j < self.ranges.len() && self.ranges[j].0 <= re {
                    rs = rs.min(self.ranges[j].0);
                    re = re.max(self.ranges[j].1);
                    j += 1;
                }
                if j == k {
                    self.ranges.insert(k, (rs, re));
                } else {
                    self.ranges[k] = (rs, re);
                    self.ranges.drain(k + 1..j);
                }
                (rs, re)
            }
        };
        self.touch(rs, re);
    }

    /// Makes [s, e) the most recent SACK block, dropping blocks it absorbed.
    fn touch(&mut self, s: u64, e: u64) {
        let absorbed = |&(bs, be): &(u64, u64)| be >= s && bs <= e;
        // Usually the block grows the most recent one and absorbs no other: it takes its place.
        if self.recent.first().is_some_and(absorbed) && !self.recent[1..].iter().any(absorbed) {
            self.recent[0] = (s, e);
            return;
        }
        self.recent.retain(|&(bs, be)| be < s || bs > e);
        self.recent.insert(0, (s, e));
        self.recent.truncate(4);
    }

    fn pull(&mut self, up: &mut Vec<Chunk>) {
        while let Some(&seg) = self.segs.front() {
            if seg.start > self.rcv_nxt.0 {
                break;
            }
            self.segs.pop_front();
            self.ooo_bytes -= seg.end - seg.start;
            if seg.end > self.rcv_nxt.0 {
                let skip = self.rcv_nxt.0 - seg.start;
                up.push(Chunk { dsn: seg.dsn + skip, len: seg.end - self.rcv_nxt.0, arrival: seg.arrival });
                self.rcv_nxt = Seq(seg.end);
            }
        }
        let nxt = self.rcv_nxt.0;
        while let Some(&(s, e)) = self.ranges.front() {
            if s > nxt {
                break;
            }
            if e > nxt {
                self.ranges[0].0 = nxt;
                break;
            }
            self.ranges.pop_front();
        }
        self.recent.retain_mut(|b| {
            b.0 = b.0.max(nxt);
            b.0 < b.1
        });
    }

    /// Up to `max` SACK blocks, most recent first.
    pub fn sack_blocks(&self, max: usize) -> impl Iterator<Item = (Seq, Seq)> + '_ {
        self.recent.iter().take(max).map(|&(s, e)| (Seq(s), Seq(e)))
    }
}

#[cfg(test)]
mod tests;
