//! The sender's retransmission queue and SACK scoreboard (RFC 6675 style, Linux counters).
//!
//! Segments are kept in sequence order with per-segment flags (`tcp::segment`). The counters mirror Linux's
//! `packets_out / sacked_out / lost_out / retrans_out`, in bytes, so the RFC 6675 "pipe" is
//! O(1): `in_flight = out − sacked − lost + retrans`.
//!
//! Loss marking follows RFC 6675 IsLost(): an un-SACKed segment is lost when at least
//! DupThresh SACKed segments lie above it (Linux `tcp_mark_head_lost` with
//! `sacked_out − reordering`). No per-ACK work scans the window: SACK blocks are first
//! reduced to the parts not SACKed before (a merged range set), and the loss-marking and
//! retransmission cursors (`lost_hint`, `retrans_hint`, as Linux's skb hints) only move
//! forward, so every segment is visited O(1) times per recovery episode.
//!
//! With RACK (`tcp::rack`, which lives inside the scoreboard to see every delivery) segments
//! are marked lost by send time instead; a retransmission lost again is marked again and the
//! retransmission cursor moves back to it (Linux `tcp_verify_retransmit_hint`), a rare event
//! (one per lost retransmission). Without RACK, a retransmission that is lost again is
//! repaired by the RTO. Deviation: no D-SACK / undo.
//!
//! With delivery-rate estimation on (`tcp::rate`, for BBR), each segment's transmission
//! snapshot (Linux `tcp_skb_cb.tx`) is kept in a deque parallel to the segments (same index)
//! rather than inside [`SentSeg`]: the segment record stays 32 bytes for the other
//! controllers, which the bufferbloat benchmark (80 000 segments outstanding) showed to
//! matter (+13 % per packet with the snapshot inside each record; see BENCHMARKS.md).

use std::collections::VecDeque;

use crate::tcp::rack::{Detected, Rack, RackStep};
use crate::tcp::rate::{RateEstimator, TxStamp};
use crate::tcp::segment::SegFlags;
pub use crate::tcp::segment::SentSeg;
use crate::units::{Dsn, Dur, Seq, Time};

/// What a cumulative ACK acknowledged.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Acked {
    pub bytes: u64,
    pub segs: u64,
    /// RTT of the segment ending at the new snd_una, if it was never retransmitted.
    pub rtt: Option<Dur>,
    /// RTTs of the first and the last segment the ACK covers that were not SACKed before
    /// (Linux `tcp_clean_rtx_queue`'s `seq_rtt_us` from `first_ackt` and `ca_rtt_us` from
    /// `last_ackt`); the caller applies Karn's rule (`had_retrans`).
    pub rtt_first_last: Option<(Dur, Dur)>,
    /// Whether any acknowledged segment had been retransmitted.
    pub had_retrans: bool,
    /// Bytes delivered by this ACK for the first time (not SACKed before), and the whole
    /// segments among them.
    pub delivered: u64,
    pub delivered_segs: u64,
}

/// What one ACK's SACK blocks changed ([`Scoreboard::sack`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Sacked {
    /// Bytes SACKed for the first time.
    pub bytes: u64,
    /// RTT of the most recently sent newly SACKed segment never retransmitted.
    pub rtt: Option<Dur>,
    /// RTT of the newly SACKed segment never retransmitted that comes first in sequence
    /// (Linux `tcp_sacktag_one`'s `first_sackt`, the blocks walked in sequence order).
    pub rtt_first: Option<Dur>,
}

#[derive(Clone, Debug, Default)]
pub struct Scoreboard {
    segs: VecDeque<SentSeg>,
    /// Absolute index of `segs[0]`.
    base: u64,
    out: u64,
    sacked: u64,
    sacked_segs: u64,
    lost: u64,
    retrans: u64,
    /// Segments lost and not SACKed, and those of them retransmitted and in flight (the
    /// byte counters' packet counts, Linux `lost_out` and `retrans_out`).
    lost_segs: u64,
    retrans_segs: u64,
    /// `out − sacked − lost + retrans`, kept up to date by every method that changes them
    /// (it is read several times per packet).
    pipe: u64,
    /// Bytes ever marked lost, a retransmission lost again included (Linux `tp->lost`).
    lost_total: u64,
    /// Loss-marking cursor (absolute index) and the SACKed segments below it.
    lost_hint: u64,
    lost_hint_cnt: u64,
    /// First candidate for retransmission (absolute index).
    retrans_hint: u64,
    /// Merged SACKed ranges above snd_una (already applied to `segs`).
    sacked_ranges: VecDeque<(u64, u64)>,
    /// Scratch space for the not-yet-SACKed parts of a block.
    pieces: Vec<(u64, u64)>,
    /// Absolute index where the last SACK pass stopped (Linux's SACK skb hint): the next
    /// block usually continues there, so its first segment is found without a search.
    sack_hint: u64,
    /// RACK state (RFC 8985), told about every delivered segment.
    pub rack: Rack,
    /// Delivery-rate estimation (`tcp::rate`), told about every (re)transmission and
    /// delivery when enabled.
    pub rate: RateEstimator,
    /// Each segment's delivery state at its last (re)transmission (Linux `tcp_skb_cb.tx`),
    /// parallel to `segs` (same index) while rate estimation is on, empty otherwise.
    tx: VecDeque<TxStamp>,
    /// Outstanding segments marked [`SegFlags::SKB_END`].
    skb_ends: u64,
}

impl Scoreboard {
    pub fn is_empty(&self) -> bool {
        self.segs.is_empty()
    }
    pub fn len(&self) -> usize {
        self.segs.len()
    }
    /// Bytes sent and not cumulatively acknowledged.
    pub fn out_bytes(&self) -> u64 {
        self.out
    }
    pub fn sacked_bytes(&self) -> u64 {
        self.sacked
    }
    pub fn lost_bytes(&self) -> u64 {
        self.lost
    }
    /// Bytes ever marked lost (Linux `tp->lost`).
    pub fn lost_total(&self) -> u64 {
        self.lost_total
    }
    /// Bytes lost and not retransmitted yet (Linux `lost_out > retrans_out`).
    pub fn lost_not_retransmitted(&self) -> bool {
        self.lost > self.retrans
    }
    /// RFC 6675 pipe / Linux `tcp_packets_in_flight`, in bytes.
    #[inline]
    pub fn in_flight(&self) -> u64 {
        self.pipe
    }
    /// Linux `tcp_packets_in_flight`: segments sent and not acknowledged, SACKed or lost,
    /// plus retransmissions in flight (one segment is one packet).
    #[inline]
    pub fn in_flight_segs(&self) -> u64 {
        self.segs.len() as u64 - self.sacked_segs - self.lost_segs + self.retrans_segs
    }

    /// Recomputes [`Self::in_flight`] after the counters changed.
    #[inline]
    fn update_pipe(&mut self) {
        self.pipe = self.out - self.sacked - self.lost + self.retrans;
    }
    pub fn front(&self) -> Option<&SentSeg> {
        self.segs.front()
    }
    pub fn iter(&self) -> impl Iterator<Item = &SentSeg> {
        self.segs.iter()
    }

    /// Marks the last segment sent as the end of its transmit skb ([`SegFlags::SKB_END`]).
    pub fn end_skb(&mut self) {
        if let Some(b) = self.segs.back_mut().filter(|b| !b.has(SegFlags::SKB_END)) {
            b.flags.insert(SegFlags::SKB_END);
            self.skb_ends += 1;
        }
    }

    /// Transmit skbs holding data not cumulatively acknowledged: those whose last segment is
    /// marked, and one more if the last segment sent is not (a transmission still going on).
    /// Deviation: Linux also splits skbs to retransmit part of one or to SACK part of one, and
    /// merges SACKed ones (`tcp_fragment`, `tcp_shift_skb_data`); the count ignores both.
    pub fn skbs(&self) -> u64 {
        self.skb_ends + self.segs.back().is_some_and(|b| !b.has(SegFlags::SKB_END)) as u64
    }

    /// Records a newly transmitted segment (must follow the previous one in sequence).
    /// Returns its absolute index.
    pub fn push(&mut self, seg: SentSeg) -> u64 {
        debug_assert!(self.segs.back().is_none_or(|b| b.end() == seg.seq));
        if self.rate.enabled {
            let stamp = self.rate.on_sent(seg.sent_at, self.segs.is_empty());
            self.tx.push_back(stamp);
        }
        self.out += seg.len as u64;
        self.pipe += seg.len as u64;
        self.segs.push_back(seg);
        self.base + self.segs.len() as u64 - 1
    }

    /// The outstanding segment with absolute index `abs`, if not yet acknowledged.
    pub fn seg_abs(&self, abs: u64) -> Option<&SentSeg> {
        self.segs.get(abs.checked_sub(self.base)? as usize)
    }

    /// Marks the un-SACKed segment `abs` lost; a retransmission of it in flight counts as
    /// lost too, and it becomes due for retransmission again.
    pub fn mark_lost_abs(&mut self, abs: u64) {
        let g = &mut self.segs[(abs - self.base) as usize];
        debug_assert!(!g.flags.contains(SegFlags::SACKED));
        let len = g.len as u64;
        if !g.flags.contains(SegFlags::LOST) {
            g.flags.insert(SegFlags::LOST);
            self.lost += len;
            self.lost_segs += 1;
            self.lost_total += len;
        } else if g.flags.contains(SegFlags::RETRANS) {
            g.flags.remove(SegFlags::RETRANS);
            self.retrans -= len;
            self.retrans_segs -= 1;
            self.lost_total += len;
        }
        self.update_pipe();
        self.retrans_hint = self.retrans_hint.min(abs);
    }

    /// Tail loss probe without new data (RFC 8985 §7.3): sends the last segment again
    /// without marking it lost; it becomes ever-retransmitted (no RTT sample) and its send
    /// time moves to `now`. Returns it, or None if it is SACKed or lost.
    pub fn probe_last(&mut self, now: Time) -> Option<SentSeg> {
        let abs = self.base + self.segs.len().checked_sub(1)? as u64;
        let g = self.segs.back_mut()?;
        if g.flags.intersects(SegFlags::SACKED | SegFlags::LOST) {
            return None;
        }
        g.flags.insert(SegFlags::EVER_RETRANS);
        g.sent_at = now;
        let g = *g;
        if let Some(stamp) = self.tx.back_mut() {
            *stamp = self.rate.on_sent(now, false);
        }
        self.rack.on_sent(now, abs);
        Some(g)
    }

    /// Applies SACK blocks: the newly SACKed bytes and their RTT samples ([`Sacked`]).
    pub fn sack(&mut self, blocks: &[(Seq, Seq)], snd_una: Seq, now: Time) -> Sacked {
        let mut newly = 0;
        let mut rtt: Option<(Time, Dur)> = None;
        let mut first: Option<(Seq, Dur)> = None;
        for &(s, e) in blocks {
            let (s, e) = (s.0.max(snd_una.0), e.0);
            if s >= e {
                continue;
            }
            // Parts of [s, e) not covered by earlier SACKs.
            let mut pieces = std::mem::take(&mut self.pieces);
            pieces.clear();
            let mut cur = s;
            let from = self.first_range_ending_after(s);
            for &(rs, re) in self.sacked_ranges.range(from..) {
                if re <= cur {
                    continue;
                }
                if rs >= e {
                    break;
                }
                if rs > cur {
                    pieces.push((cur, rs));
                }
                cur = cur.max(re);
                if cur >= e {
                    break;
                }
            }
            if cur < e {
                pieces.push((cur, e));
            }
            for &(ps, pe) in &pieces {
                let mut i = self.first_seg_from(ps);
                while i < self.segs.len() && self.segs[i].end().0 <= pe {
                    let abs = self.base + i as u64;
                    let g = &mut self.segs[i];
                    if !g.flags.contains(SegFlags::SACKED) {
                        let len = g.len as u64;
                        if g.flags.contains(SegFlags::LOST) {
                            self.lost -= len;
                            self.lost_segs -= 1;
                            if g.flags.contains(SegFlags::RETRANS) {
                                self.retrans -= len;
                                self.retrans_segs -= 1;
                            }
                        }
                        g.flags.insert(SegFlags::SACKED);
                        g.flags.remove(SegFlags::LOST | SegFlags::RETRANS);
                        self.sacked += len;
                        self.sacked_segs += 1;
                        newly += len;
                        if abs < self.lost_hint {
                            self.lost_hint_cnt += 1;
                        }
                        if !g.flags.contains(SegFlags::EVER_RETRANS) {
                            if rtt.is_none_or(|(t, _)| g.sent_at > t) {
                                rtt = Some((g.sent_at, now.since(g.sent_at)));
                            }
                            if first.is_none_or(|(s, _)| g.seq < s) {
                                first = Some((g.seq, now.since(g.sent_at)));
                            }
                        }
                        let g = *g;
                        self.rack.on_delivered(g.seq, g.end(), g.sent_at, g.flags, now);
                        if let Some(stamp) = self.tx.get(i) {
                            self.rate.on_delivered(g.end(), g.sent_at, stamp, g.flags.contains(SegFlags::EVER_RETRANS));
                        }
                    }
                    i += 1;
                }
                self.sack_hint = self.base + i as u64;
            }
            self.pieces = pieces;
            self.insert_range(s, e);
        }
        self.update_pipe();
        Sacked { bytes: newly, rtt: rtt.map(|(_, d)| d), rtt_first: first.map(|(_, d)| d) }
    }

    /// The position of the first segment starting at or after `seq`: the SACK hint when it
    /// is that position (checked against its neighbours), else found by binary search.
    fn first_seg_from(&self, seq: u64) -> usize {
        let k = (self.sack_hint.saturating_sub(self.base) as usize).min(self.segs.len());
        let after_prev = k == 0 || self.segs[k - 1].seq.0 < seq;
        let at_or_after = self.segs.get(k).is_none_or(|g| g.seq.0 >= seq);
        if after_prev && at_or_after {
            k
        } else {
            self.segs.partition_point(|g| g.seq.0 < seq)
        }
    }

    /// The position of the first SACKed range ending after `seq`; a new block usually
    /// extends the last range, so the last two are looked at before searching.
    fn first_range_ending_after(&self, seq: u64) -> usize {
        let v = &self.sacked_ranges;
        let n = v.len();
        match (n.checked_sub(2).map(|k| v[k]), v.back()) {
            (_, None) => 0,
            (_, Some(last)) if last.1 <= seq => n,
            (None, Some(_)) => 0,
            (Some(prev), Some(_)) if prev.1 <= seq => n - 1,
            _ => v.partition_point(|r| r.1 <= seq),
        }
    }

    fn insert_range(&mut self, s: u64, e: u64) {
        let v = &mut self.sacked_ranges;
        // Fast path: the block extends or follows the last range (new data SACKed).
        if let Some(last) = v.back_mut() {
            if s >= last.0 && s <= last.1 {
                last.1 = last.1.max(e);
                return;
            }
            if s > last.1 {
                v.push_back((s, e));
                return;
            }
        }
        let i = v.partition_point(|r| r.1 < s);
        let mut j = i;
        let (mut ns, mut ne) = (s, e);
        while j < v.len() && v[j].0 <= ne {
            ns = ns.min(v[j].0);
            ne = ne.max(v[j].1);
            j += 1;
        }
        if j == i {
            v.insert(i, (ns, ne));
        } else {
            v[i] = (ns, ne);
            v.drain(i + 1..j);
        }
    }

    /// SACKed segments above which un-SACKed ones count as lost.
    pub fn sacked_segs(&self) -> u64 {
        self.sacked_segs
    }

    /// RFC 6675 IsLost(): marks every un-SACKed segment with at least `dupthresh` SACKed
    /// segments above it. Returns true if any segment was newly marked.
    pub fn mark_lost(&mut self, dupthresh: u64) -> bool {
        if self.sacked_segs < dupthresh {
            return false;
        }
        let limit = self.sacked_segs - dupthresh;
        let mut i = self.lost_hint.max(self.base);
        let mut cnt = self.lost_hint_cnt;
        let mut marked = false;
        let end = self.base + self.segs.len() as u64;
        while i < end {
            let g = &mut self.segs[(i - self.base) as usize];
            if g.flags.contains(SegFlags::SACKED) {
                if cnt + 1 > limit {
                    break;
                }
                cnt += 1;
            } else if !g.flags.contains(SegFlags::LOST) {
                g.flags.insert(SegFlags::LOST);
                self.lost += g.len as u64;
                self.lost_segs += 1;
                self.lost_total += g.len as u64;
                marked = true;
            }
            i += 1;
        }
        self.lost_hint = i;
        self.lost_hint_cnt = cnt;
        self.update_pipe();
        marked
    }

    /// RTO: every un-SACKed segment is lost and no retransmission is in flight any more
    /// (Linux `tcp_enter_loss`). SACK information is kept.
    pub fn enter_loss(&mut self) {
        for g in self.segs.iter_mut() {
            if !g.flags.contains(SegFlags::SACKED) {
                // Linux `tcp_mark_skb_lost`: counted unless already lost and not retransmitted.
                if !g.flags.contains(SegFlags::LOST) || g.flags.contains(SegFlags::RETRANS) {
                    self.lost_total += g.len as u64;
                }
                g.flags.insert(SegFlags::LOST);
                g.flags.remove(SegFlags::RETRANS);
            }
        }
        self.lost = self.out - self.sacked;
        self.lost_segs = self.segs.len() as u64 - self.sacked_segs;
        self.retrans = 0;
        self.retrans_segs = 0;
        self.update_pipe();
        self.rack.clear_sent();
        self.lost_hint = self.base + self.segs.len() as u64;
        self.lost_hint_cnt = self.sacked_segs;
        self.retrans_hint = self.base;
    }

    /// RFC 8985 RACK_detect_loss(): marks every outstanding segment sent before RACK.xmit_ts
    /// whose deadline `xmit_ts + RACK.rtt + reo_wnd` has passed, in send order (the rule is
    /// [`Rack::next_lost`]'s; the scoreboard marks). `reo_wnd(rack, sacked_segs)` gives the
    /// reordering window, asked only when a deadline is computed.
    pub fn rack_detect_loss(&mut self, now: Time, reo_wnd: impl Fn(&Rack, u64) -> Dur) -> Detected {
        let mut marked = 0;
        loop {
            let (segs, base, sacked_segs) = (&self.segs, self.base, self.sacked_segs);
            let reo = |rack: &Rack| reo_wnd(rack, sacked_segs);
            match self.rack.next_lost(now, reo, |abs| segs.get(abs.checked_sub(base)? as usize)) {
                RackStep::Lost(abs) => {
                    self.mark_lost_by_rack(abs);
                    marked += 1;
                }
                RackStep::Wait(timeout) => return Detected { marked, timeout },
            }
        }
    }

    /// [`Self::mark_lost_abs`] for [`Self::rack_detect_loss`], out of line: most passes mark
    /// nothing, and the scan then needs none of the counters in registers.
    #[inline(never)]
    fn mark_lost_by_rack(&mut self, abs: u64) {
        self.mark_lost_abs(abs);
    }

    /// RFC 6675 NextSeg() rule 1: the first lost, un-SACKed segment not yet retransmitted.
    /// Returns its position in the queue.
    pub fn next_retransmit(&mut self) -> Option<usize> {
        if !self.lost_not_retransmitted() {
            // No lost segment awaits its retransmission. (The cursor stays: the segments it
            // would skip are SACKed or retransmitted, and those that stop being so move it
            // back anyway.)
            return None;
        }
        let end = self.base + self.segs.len() as u64;
        let mut i = self.retrans_hint.max(self.base);
        while i < end {
            let g = &self.segs[(i - self.base) as usize];
            if g.flags.intersects(SegFlags::SACKED | SegFlags::RETRANS) {
                i += 1;
                continue;
            }
            self.retrans_hint = i;
            return g.flags.contains(SegFlags::LOST).then_some((i - self.base) as usize);
        }
        self.retrans_hint = end;
        None
    }

    /// Records the retransmission of the segment at `pos`.
    pub fn mark_retransmitted(&mut self, pos: usize, now: Time) -> SentSeg {
        let g = &mut self.segs[pos];
        debug_assert!(g.flags.contains(SegFlags::LOST) && !g.flags.intersects(SegFlags::RETRANS | SegFlags::SACKED));
        g.flags.insert(SegFlags::RETRANS | SegFlags::EVER_RETRANS);
        g.sent_at = now;
        if let Some(stamp) = self.tx.get_mut(pos) {
            *stamp = self.rate.on_sent(now, false);
        }
        self.retrans += g.len as u64;
        self.retrans_segs += 1;
        self.pipe += g.len as u64;
        let g = *g;
        let abs = self.base + pos as u64;
        if self.retrans_hint == abs {
            self.retrans_hint += 1;
        }
        self.rack.on_sent(now, abs);
        g
    }

    /// The outstanding segment whose mapping contains `dsn`, assuming mappings increase
    /// along the subflow (true for data the connection sends in order; a reinjected or
    /// out-of-order segment may be missed, which only costs an M1/M2 opportunity).
    pub fn find_dsn(&self, dsn: Dsn) -> Option<&SentSeg> {
        let i = self.segs.partition_point(|g| g.dsn <= dsn);
        let g = self.segs.get(i.checked_sub(1)?)?;
        (g.dsn + g.len as u64 > dsn).then_some(g)
    }

    /// Collects (dsn, len) of un-SACKed segments not reinjected before, marking them.
    pub fn take_for_reinjection(&mut self, out: &mut Vec<(Dsn, u64)>) {
        for g in self.segs.iter_mut() {
            if !g.flags.intersects(SegFlags::SACKED | SegFlags::REINJECTED) {
                g.flags.insert(SegFlags::REINJECTED);
                out.push((g.dsn, g.len as u64));
            }
        }
    }

    /// Internal consistency of the counters (used by tests and the end-of-run checks).
    pub fn check(&self) -> Result<(), String> {
        let (mut out, mut sacked, mut lost, mut retrans, mut ns) = (0, 0, 0, 0, 0);
        let (mut nl, mut nr) = (0, 0);
        for g in &self.segs {
            let l = g.len as u64;
            out += l;
            if g.has(SegFlags::SACKED) {
                sacked += l;
                ns += 1;
            } else if g.has(SegFlags::LOST) {
                lost += l;
                nl += 1;
                if g.has(SegFlags::RETRANS) {
                    retrans += l;
                    nr += 1;
                }
            }
        }
        if (nl, nr) != (self.lost_segs, self.retrans_segs) {
            return Err(format!(
                "scoreboard segment counters (lost {}, retrans {}) differ from its segments ({nl}, {nr})",
                self.lost_segs, self.retrans_segs
            ));
        }
        if self.rate.enabled && self.tx.len() != self.segs.len() {
            return Err(format!("{} rate stamps for {} segments", self.tx.len(), self.segs.len()));
        }
        if (out, sacked, lost, retrans, ns) != (self.out, self.sacked, self.lost, self.retrans, self.sacked_segs) {
            return Err(format!(
                "scoreboard counters (out {}, sacked {}, lost {}, retrans {}, sacked segs {}) differ from its segments ({out}, {sacked}, {lost}, {retrans}, {ns})",
                self.out, self.sacked, self.lost, self.retrans, self.sacked_segs
            ));
        }
        if self.pipe != out - sacked - lost + retrans {
            return Err(format!("pipe {} differs from the segments' {}", self.pipe, out - sacked - lost + retrans));
        }
        Ok(())
    }
}

mod cumulative;
#[cfg(test)]
mod tests;
