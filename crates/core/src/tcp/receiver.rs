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

/// A data segment as it arrives: subflow sequence, payload length, mapping, and whether it
/// is full-sized (only full-sized segments count towards the delayed-ACK ratio).
#[derive(Clone, Copy, Debug)]
pub struct Arriving {
    pub seq: Seq,
    pub len: u64,
    pub dsn: Dsn,
    pub full_size: bool,
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
    /// The window this subflow offered in its last ACK (Linux `tp->rcv_wnd`, bytes), which the
    /// endpoint keeps current; 0 before any (quick-ACK mode then grants the most).
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

    /// An ACK left: it clears the delayed-ACK count, uses one quick ACK and carries every
    /// compressed one (`tcp_event_ack_sent`: `compressed_ack` = 0).
    pub fn on_ack_sent(&mut self) {
        self.unacked_segs = 0;
        self.pushed = false;
        self.quick = self.quick.saturating_sub(1);
        if let Some(c) = self.compressed.as_mut() {
            c.pending = 0;
        }
    }

    /// An out-of-order segment's ACK: at once (entering quick-ACK mode where modelled), or as
    /// SACK compression decides.
    fn ooo_ack(&mut self) -> AckNeed {
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
        if seg.full_size {
            self.unacked_segs += 1;
        } else {
            self.pushed = true;
        }
        if self.unacked_segs >= b {
            AckNeed::Every
        } else {
            AckNeed::Delayed
        }
    }

    #[inline(never)]
    fn on_segment_inner(&mut self, seg: Arriving, b: u64, now: Time, up: &mut Vec<Chunk>) -> AckNeed {
        let Arriving { seq, len, dsn, full_size } = seg;
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
            if full_size {
                self.unacked_segs += 1;
            } else {
                self.pushed = true;
            }
            return if self.unacked_segs >= b { AckNeed::Every } else { AckNeed::Delayed };
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
mod tests {
    use super::*;

    /// Linux `tcp_grow_window`, worked by hand: rcv_ssthresh, unset, starts at the first
    /// call's window (64 000 B); the buffer then allows 70 000 B, so each 1 424-byte segment
    /// raises it by max(2 × 1 448, 2 × 1 424) = 2 896 B and is acknowledged at once: 2 896 × 2
    /// = 5 792 < 6 000 of room, the third step stops at the room (70 000). Then nothing grows
    /// and delayed ACKs resume.
    #[test]
    fn a_growing_window_acknowledges_each_segment_at_once() {
        let mut r = SubflowReceiver { quickack: true, ..Default::default() };
        assert!(!r.grow_window(1424, 64_000, 1448));
        assert_eq!(r.rcv_ssthresh, 64_000);
        r.quick = 0;
        for (k, want) in [(1, 66_896), (2, 69_792), (3, 70_000)] {
            assert!(r.grow_window(1424, 70_000, 1448), "segment {k}");
            assert_eq!((r.rcv_ssthresh, r.quick), (want, 1), "segment {k}");
            r.on_ack_sent();
        }
        assert!(!r.grow_window(1424, 70_000, 1448));
        assert_eq!(r.quick, 0);
        // `quick |= 1` is a bit set: 16 owed quick ACKs become 17, 15 stay 15.
        r.quick = 16;
        assert!(r.grow_window(1424, 80_000, 1448));
        assert_eq!(r.quick, 17);
        r.quick = 15;
        assert!(r.grow_window(1424, 80_000, 1448));
        assert_eq!(r.quick, 15);
        // Segments under 128 bytes, and receivers without quick-ACK mode, never grow it.
        assert!(!r.grow_window(100, 90_000, 1448));
        let mut c = SubflowReceiver::default();
        assert!(!c.grow_window(1424, 90_000, 1448));
    }

    /// Linux `tcp_set_window_clamp` when a socket's ratio rises at its first full-sized
    /// segment: rcv_ssthresh becomes at least min(rcv_wnd, new clamp). A second MPTCP subflow
    /// offers the connection's window (`mptcp_set_rwin` raised its `rcv_wnd`), so its
    /// threshold jumps to the clamp, 62552 -> 79000 B on the measured 6.18.44 host, and
    /// `tcp_grow_window` has no room left; a first subflow or TCP socket still offers its
    /// handshake window and keeps growing one segment at a time.
    #[test]
    fn a_rising_ratio_lifts_rcv_ssthresh_to_the_offered_window() {
        let mut join = SubflowReceiver { quickack: true, rcv_ssthresh: 62_552, ..Default::default() };
        join.raise_window_clamp(64_000, 79_000, 300_000);
        assert_eq!(join.rcv_ssthresh, 79_000);
        assert!(!join.grow_window(1424, 79_000, 1448));
        let mut first = SubflowReceiver { quickack: true, rcv_ssthresh: 64_000, ..Default::default() };
        first.raise_window_clamp(64_000, 79_000, 64_000);
        assert_eq!(first.rcv_ssthresh, 64_000);
        assert!(first.grow_window(1424, 79_000, 1448));
        // A falling clamp does not lift it.
        let mut r = SubflowReceiver { rcv_ssthresh: 50_000, ..Default::default() };
        r.raise_window_clamp(79_000, 64_000, 300_000);
        assert_eq!(r.rcv_ssthresh, 50_000);
    }

    #[test]
    fn quick_ack_mode_acks_the_first_16_segments_and_after_out_of_order_data() {
        let seg = |i: u64| Arriving { seq: Seq(i * 1000), len: 1000, dsn: Dsn(i * 1000), full_size: true };
        let mut up = Vec::new();
        let mut r = SubflowReceiver { quickack: true, ..Default::default() };
        // TCP_MAX_QUICKACKS = 16: segments 0..16 are each acknowledged at once.
        for i in 0..16 {
            assert_eq!(r.on_segment(seg(i), 2, Time(i), &mut up), AckNeed::Now, "segment {i}");
            r.on_ack_sent();
        }
        // Then every second segment (b = 2), at once unless the endpoint leaves it to a read.
        assert_eq!(r.on_segment(seg(16), 2, Time(16), &mut up), AckNeed::Delayed);
        assert_eq!(r.on_segment(seg(17), 2, Time(17), &mut up), AckNeed::Every);
        r.on_ack_sent();
        // A hole (segment 18 lost): out-of-order data re-enters quick-ACK mode, so the
        // in-order segments after the repair are acknowledged one by one again.
        assert_eq!(r.on_segment(seg(19), 2, Time(19), &mut up), AckNeed::Now);
        r.on_ack_sent();
        assert_eq!(r.on_segment(seg(18), 2, Time(20), &mut up), AckNeed::Now);
        r.on_ack_sent();
        assert_eq!(r.on_segment(seg(20), 2, Time(21), &mut up), AckNeed::Now);
        // Off (the classic model): the first segment already waits for a second one.
        let mut c = SubflowReceiver::default();
        assert_eq!(c.on_segment(seg(0), 2, Time(0), &mut up), AckNeed::Delayed);
    }

    #[test]
    fn out_of_order_acks_are_compressed_after_three_as_linux_since_4_18() {
        // `__tcp_ack_snd_check`: segment 1 lost, 2..=50 arrive out of order. The first three
        // (TCP_FASTRETRANS_THRESH) for rcv_nxt 1000 are acknowledged at once, the next ones
        // counted into one compressed ACK; no quick-ACK mode is entered.
        let seg = |i: u64| Arriving { seq: Seq(i * 1000), len: 1000, dsn: Dsn(i * 1000), full_size: true };
        let mut up = Vec::new();
        let mut r = SubflowReceiver::default();
        (r.quickack, r.compressed) = (true, Some(SackCompression::default()));
        r.on_segment(seg(0), 2, Time(0), &mut up);
        r.quick = 0; // past the connection's first 16 quick ACKs
        r.on_ack_sent();
        for i in 2..5 {
            assert_eq!(r.on_segment(seg(i), 2, Time(i), &mut up), AckNeed::Now, "segment {i}");
            r.on_ack_sent();
        }
        assert_eq!(r.on_segment(seg(5), 2, Time(5), &mut up), AckNeed::Compressed);
        assert_eq!(r.on_segment(seg(6), 2, Time(6), &mut up), AckNeed::Compressed);
        assert_eq!(r.quick, 0);
        assert_eq!(r.compressed.map(|c| c.pending), Some(2));
        // The timer's ACK carries both; tcp_comp_sack_nr = 44 more are counted, the 45th
        // goes at once.
        r.on_ack_sent();
        for i in 7..51 {
            assert_eq!(r.on_segment(seg(i), 2, Time(i), &mut up), AckNeed::Compressed, "segment {i}");
        }
        assert_eq!(r.on_segment(seg(51), 2, Time(51), &mut up), AckNeed::Now);
        r.on_ack_sent();
        // The hole filled: in order again (filling acknowledges at once); a new hole starts a
        // new count of three immediate ones.
        assert_eq!(r.on_segment(seg(1), 2, Time(52), &mut up), AckNeed::Now);
        r.on_ack_sent();
        assert_eq!(r.rcv_nxt, Seq(52_000));
        assert_eq!(r.on_segment(seg(53), 2, Time(53), &mut up), AckNeed::Now);
    }

    #[test]
    fn a_short_segment_waits_for_the_delayed_ack_and_is_marked_pushed() {
        // Linux `tcp_measure_rcv_mss`: a segment shorter than the peer's MSS sets
        // ICSK_ACK_PUSHED; alone (rcv_nxt - rcv_wup <= rcv_mss) it is acknowledged by the
        // delayed-ACK timer or by a read (`tcp_cleanup_rbuf`). The ACK clears the mark.
        let mut up = Vec::new();
        let mut r = SubflowReceiver::default();
        let short = Arriving { seq: Seq(0), len: 124, dsn: Dsn(0), full_size: false };
        assert_eq!(r.on_segment(short, 2, Time(0), &mut up), AckNeed::Delayed);
        assert!(r.pushed);
        r.on_ack_sent();
        assert!(!r.pushed);
        let full = Arriving { seq: Seq(124), len: 1000, dsn: Dsn(124), full_size: true };
        assert_eq!(r.on_segment(full, 2, Time(1), &mut up), AckNeed::Delayed);
        assert!(!r.pushed);
        // The peer's segment size is what arrives (1000 B here), whatever this end's own is.
        assert_eq!(r.rcv_mss, 1000);
    }

    #[test]
    fn quick_ack_mode_grants_as_many_acks_as_the_last_window_holds_segment_pairs() {
        // Linux `tcp_incr_quickack`: rcv_wnd / (2 * rcv_mss) quick ACKs, 2 where that is 0, at
        // most 16, the segment's own size measured first (`tcp_measure_rcv_mss`). A 64 KiB
        // buffer's first window, 32768 B, and 1424-byte MPTCP segments: 32768 / 2848 = 11
        // immediate ACKs (a 6.18 kernel in virtual time acknowledges the first 11 segments
        // one by one, then every second one). A 2000-byte window: 0 pairs, 2 quick ACKs.
        let seg = |i: u64| Arriving { seq: Seq(i * 1424), len: 1424, dsn: Dsn(i * 1424), full_size: true };
        for (wnd, grant) in [(32_768, 11), (2_000, 2), (1_000_000, 16), (0, 16)] {
            let mut r = SubflowReceiver { quickack: true, rcv_wnd: wnd, rcv_mss: 536, ..Default::default() };
            let mut up = Vec::new();
            for i in 0..grant {
                assert_eq!(r.on_segment(seg(i), 2, Time(i), &mut up), AckNeed::Now, "window {wnd}, segment {i}");
                r.on_ack_sent();
            }
            assert_eq!(r.on_segment(seg(grant), 2, Time(grant), &mut up), AckNeed::Delayed, "window {wnd}");
        }
    }

    #[test]
    fn in_order_segments_are_acked_every_second_one() {
        let mut r = SubflowReceiver::default();
        let mut up = Vec::new();
        assert_eq!(
            r.on_segment(Arriving { seq: Seq(0), len: 100, dsn: Dsn(0), full_size: true }, 2, Time(1), &mut up),
            AckNeed::Delayed
        );
        assert_eq!(
            r.on_segment(Arriving { seq: Seq(100), len: 100, dsn: Dsn(100), full_size: true }, 2, Time(2), &mut up),
            AckNeed::Every
        );
        assert_eq!(up.len(), 2);
        assert_eq!(r.rcv_nxt, Seq(200));
    }

    #[test]
    fn holes_are_sacked_then_filled_in_order() {
        let mut r = SubflowReceiver::default();
        let mut up = Vec::new();
        r.on_segment(Arriving { seq: Seq(0), len: 100, dsn: Dsn(1000), full_size: true }, 2, Time(1), &mut up);
        assert_eq!(
            r.on_segment(Arriving { seq: Seq(200), len: 100, dsn: Dsn(1200), full_size: true }, 2, Time(2), &mut up),
            AckNeed::Now
        );
        r.on_segment(Arriving { seq: Seq(400), len: 100, dsn: Dsn(1400), full_size: true }, 2, Time(3), &mut up);
        r.on_segment(Arriving { seq: Seq(300), len: 100, dsn: Dsn(1300), full_size: true }, 2, Time(4), &mut up);
        let blocks: Vec<_> = r.sack_blocks(4).collect();
        assert_eq!(blocks, vec![(Seq(200), Seq(500))]);
        assert_eq!(r.ooo_bytes(), 300);
        up.clear();
        assert_eq!(
            r.on_segment(Arriving { seq: Seq(100), len: 100, dsn: Dsn(1100), full_size: true }, 2, Time(5), &mut up),
            AckNeed::Now
        );
        assert_eq!(r.rcv_nxt, Seq(500));
        assert_eq!(up.iter().map(|c| c.dsn.0).collect::<Vec<_>>(), vec![1100, 1200, 1300, 1400]);
        assert_eq!(up[1].arrival, Time(2));
        assert_eq!(r.sack_blocks(4).count(), 0);
        assert_eq!(r.ooo_bytes(), 0);
    }

    #[test]
    fn duplicates_ask_for_an_immediate_ack_and_deliver_nothing() {
        let mut r = SubflowReceiver::default();
        let mut up = Vec::new();
        r.on_segment(Arriving { seq: Seq(0), len: 100, dsn: Dsn(0), full_size: true }, 2, Time(1), &mut up);
        up.clear();
        assert_eq!(
            r.on_segment(Arriving { seq: Seq(0), len: 100, dsn: Dsn(0), full_size: true }, 2, Time(2), &mut up),
            AckNeed::Now
        );
        assert!(up.is_empty());
    }
}
