//! RACK: time-based loss detection (RFC 8985 §6; Linux `tcp_recovery.c`).
//!
//! The sender remembers the send time of the most recently *sent* segment among those
//! delivered so far (`RACK.xmit_ts`, ties broken by sequence). An outstanding segment sent
//! before it is lost once it has not been delivered within `RACK.rtt + reo_wnd` of its own
//! transmission: `xmit_ts + RACK.rtt + reo_wnd <= now`. A segment still within that window
//! arms the reordering timer. Because send times, not sequence numbers, decide, a
//! retransmission that is lost again is detected like any other segment, and so is a loss
//! with fewer than DupThresh segments SACKed above it.
//!
//! Reordering window (RFC 8985 §6.2 step 4 = Linux `tcp_rack_reo_wnd`): 0 while no reordering
//! has been seen and the sender is in recovery or has at least DupThresh segments SACKed
//! (so the first loss is caught as fast as by DupThresh), otherwise min_RTT/4 capped at SRTT.
//! Reordering is "seen" when a never-retransmitted segment is delivered below the highest
//! sequence delivered before the ACK (RFC 8985 step 3, Linux `tcp_check_sack_reordering`).
//!
//! Cost: as Linux's `tsorted_sent_queue`, every transmission is appended to a queue in send
//! order. Entries are not removed when their segment is SACKed, acknowledged or sent again:
//! the scan from the head drops such stale entries lazily, so each transmission is visited
//! O(1) times and an ACK costs O(1) amortised. The scan stops at the first segment still
//! inside its window (later ones were sent later, so they are not due either).
//!
//! Deviations: the receiver sends no D-SACK, so the reordering window never grows by D-SACK
//! rounds (`reo_wnd_steps` stays 1) and nothing is undone; min_RTT is the minimum over the
//! whole connection (Linux: a windowed minimum over 5 minutes); ACK timestamps are not used
//! to disambiguate retransmissions, only the RFC's "RTT below min_RTT" rule. The reordering
//! timer is armed for the *earliest* pending deadline rather than the latest (the RFC's
//! batching): every segment is declared lost exactly when its own deadline passes, at the
//! cost of one timer event per distinct deadline.

use std::collections::VecDeque;

use crate::tcp::segment::{SegFlags, SentSeg};
use crate::units::{Dur, Seq, Time};

/// RACK state of one sender (kept inside its scoreboard, `tcp::scoreboard`, which reports
/// deliveries and marks the segments RACK finds lost).
#[derive(Clone, Debug, Default)]
pub struct Rack {
    /// Whether transmissions and deliveries are recorded (RACK-TLP mode).
    pub enabled: bool,
    /// RACK.xmit_ts / RACK.end_seq: the most recently sent segment among those delivered.
    pub xmit_ts: Option<Time>,
    pub end_seq: Seq,
    /// RACK.rtt: RTT of the most recently delivered segment with an unambiguous sample.
    pub rtt: Dur,
    /// RACK.fack: the highest end sequence delivered (SACKed or acknowledged).
    pub fack: Seq,
    /// `fack` before the ACK being processed.
    prior_fack: Seq,
    pub reordering_seen: bool,
    /// The connection's minimum RTT, set by the subflow before each ACK.
    pub min_rtt: Option<Dur>,
    /// Set when an ACK delivered a segment that updated RACK (Linux `rack.advanced`).
    advanced: bool,
    /// (send time, absolute queue index) of every transmission, in send order.
    tsorted: VecDeque<(Time, u64)>,
}

/// Outcome of one loss-detection pass.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Detected {
    /// Segments newly marked lost (including retransmissions lost again).
    pub marked: u64,
    /// Earliest time an outstanding segment sent before RACK.xmit_ts becomes lost.
    pub timeout: Option<Time>,
}

/// One step of loss detection ([`Rack::next_lost`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RackStep {
    /// The segment with this absolute queue index is lost now.
    Lost(u64),
    /// Nothing more is lost now; the earliest deadline still pending, if any.
    Wait(Option<Time>),
}

/// RFC 8985 RACK_sent_after(t1, seq1, t2, seq2).
fn sent_after(t1: Time, seq1: Seq, t2: Time, seq2: Seq) -> bool {
    t1 > t2 || (t1 == t2 && seq1 > seq2)
}

impl Rack {
    /// Records a transmission (new or retransmitted) of the segment at absolute index `abs`.
    pub fn on_sent(&mut self, now: Time, abs: u64) {
        if self.enabled {
            self.tsorted.push_back((now, abs));
        }
    }

    /// Called before the blocks of an ACK are applied.
    #[inline]
    pub fn begin_ack(&mut self, min_rtt: Option<Dur>) {
        self.min_rtt = min_rtt;
        self.prior_fack = self.fack;
    }

    /// RFC 8985 steps 2 and 3 for one newly delivered segment. Nothing is recorded unless
    /// RACK is enabled: only its loss detection reads this state.
    #[inline]
    pub fn on_delivered(&mut self, seg_seq: Seq, end: Seq, sent_at: Time, flags: SegFlags, now: Time) {
        if !self.enabled {
            return;
        }
        let retransmitted = flags.contains(SegFlags::EVER_RETRANS);
        if end > self.fack {
            self.fack = end;
        }
        if !retransmitted && seg_seq < self.prior_fack {
            self.reordering_seen = true;
        }
        let rtt = now.since(sent_at);
        // A retransmitted segment acknowledged faster than the path's minimum RTT was most
        // likely delivered by its original transmission: no RACK update.
        if retransmitted && self.min_rtt.is_some_and(|m| rtt < m) {
            return;
        }
        self.advanced = true;
        self.rtt = rtt;
        if self.xmit_ts.is_none_or(|t| sent_after(sent_at, end, t, self.end_seq)) {
            self.xmit_ts = Some(sent_at);
            self.end_seq = end;
        }
    }

    /// Whether the last ACK advanced RACK (and clears the flag).
    pub fn take_advanced(&mut self) -> bool {
        std::mem::take(&mut self.advanced)
    }

    /// RFC 8985 RACK_update_reo_wnd() without D-SACK rounds (see the module deviations).
    pub fn reo_wnd(&self, in_recovery: bool, sacked_segs: u64, dupthresh: u64, srtt: Option<Dur>) -> Dur {
        if !self.reordering_seen && (in_recovery || sacked_segs >= dupthresh) {
            return Dur::ZERO;
        }
        let quarter = Dur(self.min_rtt.unwrap_or_default().0 / 4);
        srtt.map_or(quarter, |s| quarter.min(s))
    }

    /// One step of RFC 8985 RACK_detect_loss(), in send order: drops stale entries from the
    /// head of the send-time queue and returns the next transmission whose deadline
    /// `xmit_ts + RACK.rtt + reo_wnd` has passed (its segment is to be marked lost), or the
    /// first deadline still pending. `seg(abs)` looks up the outstanding segment with
    /// absolute index `abs` (None once acknowledged); `reo_wnd` gives the reordering window,
    /// asked only when a deadline is computed (most passes find no candidate).
    #[inline]
    pub fn next_lost<'a>(
        &mut self,
        now: Time,
        reo_wnd: impl FnOnce(&Rack) -> Dur,
        seg: impl Fn(u64) -> Option<&'a SentSeg>,
    ) -> RackStep {
        let Some(rack_ts) = self.xmit_ts else {
            return RackStep::Wait(None);
        };
        while let Some(&(t, abs)) = self.tsorted.front() {
            let Some(g) = seg(abs) else {
                self.tsorted.pop_front(); // acknowledged
                continue;
            };
            // Stale: sent again since, SACKed, or lost and awaiting its retransmission.
            let lost_waiting = g.has(SegFlags::LOST) && !g.has(SegFlags::RETRANS);
            if g.sent_at != t || g.has(SegFlags::SACKED) || lost_waiting {
                self.tsorted.pop_front();
                continue;
            }
            if !sent_after(rack_ts, self.end_seq, t, g.end()) {
                return RackStep::Wait(None);
            }
            let deadline = t + self.rtt + reo_wnd(self);
            if deadline > now {
                return RackStep::Wait(Some(deadline));
            }
            self.tsorted.pop_front();
            return RackStep::Lost(abs);
        }
        RackStep::Wait(None)
    }

    /// Forgets the queue (RTO: every un-SACKed segment is lost and will be sent again).
    pub fn clear_sent(&mut self) {
        self.tsorted.clear();
    }

    /// Entries waiting in the send-time queue (tests, diagnostics).
    pub fn queued(&self) -> usize {
        self.tsorted.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::Dsn;

    const MS: u64 = 1_000_000;

    /// Four segments sent 1 ms apart; the third is delivered at 101 ms (RACK.rtt 99 ms).
    /// The first two were sent before it and become lost at their own send time + RACK.rtt
    /// + reo_wnd; the fourth was sent after it and is not judged.
    #[test]
    fn segments_sent_before_the_last_delivered_one_are_lost_at_their_deadlines() {
        let segs: Vec<SentSeg> = (0..4)
            .map(|i| SentSeg {
                seq: Seq(i * 100),
                len: 100,
                flags: SegFlags::NONE,
                dsn: Dsn(i * 100),
                sent_at: Time((i + 1) * MS),
            })
            .collect();
        let mut r = Rack { enabled: true, ..Rack::default() };
        for (i, g) in segs.iter().enumerate() {
            r.on_sent(g.sent_at, i as u64);
        }
        let mut delivered = segs.clone();
        delivered[2].flags.insert(SegFlags::SACKED);
        r.begin_ack(Some(Dur(99 * MS)));
        r.on_delivered(delivered[2].seq, delivered[2].end(), delivered[2].sent_at, SegFlags::NONE, Time(102 * MS));
        let seg = |abs: u64| delivered.get(abs as usize);
        let reo = |_: &Rack| Dur(10 * MS);
        assert_eq!(r.next_lost(Time(105 * MS), reo, seg), RackStep::Wait(Some(Time(110 * MS))));
        assert_eq!(r.next_lost(Time(111 * MS), reo, seg), RackStep::Lost(0));
        assert_eq!(r.next_lost(Time(111 * MS), reo, seg), RackStep::Lost(1));
        assert_eq!(
            r.next_lost(Time(111 * MS), reo, seg),
            RackStep::Wait(None),
            "the SACKed one is dropped, the last not judged"
        );
    }
}
