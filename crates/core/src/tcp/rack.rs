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

use crate::tcp::scoreboard::{Scoreboard, EVER_RETRANS, LOST, RETRANS, SACKED};
use crate::units::{Dur, Seq, Time};

/// RACK state of one sender (kept inside its [`Scoreboard`], which reports deliveries).
#[derive(Clone, Debug, Default)]
pub struct Rack {
    /// Whether transmissions are recorded (RACK-TLP mode).
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
    pub fn begin_ack(&mut self, min_rtt: Option<Dur>) {
        self.min_rtt = min_rtt;
        self.prior_fack = self.fack;
    }

    /// RFC 8985 steps 2 and 3 for one newly delivered segment.
    pub fn on_delivered(&mut self, seg_seq: Seq, end: Seq, sent_at: Time, flags: u8, now: Time) {
        let retransmitted = flags & EVER_RETRANS != 0;
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

    /// Forgets the queue (RTO: every un-SACKed segment is lost and will be sent again).
    pub fn clear_sent(&mut self) {
        self.tsorted.clear();
    }

    /// Entries waiting in the send-time queue (tests, diagnostics).
    pub fn queued(&self) -> usize {
        self.tsorted.len()
    }
}

impl Scoreboard {
    /// RFC 8985 RACK_detect_loss(): marks every outstanding segment sent before RACK.xmit_ts
    /// whose deadline `xmit_ts + RACK.rtt + reo_wnd` has passed, in send order.
    pub fn rack_detect_loss(&mut self, now: Time, reo_wnd: Dur) -> Detected {
        let mut d = Detected::default();
        let Some(rack_ts) = self.rack.xmit_ts else {
            return d;
        };
        let (rack_end, rack_rtt) = (self.rack.end_seq, self.rack.rtt);
        while let Some(&(t, abs)) = self.rack.tsorted.front() {
            let Some(g) = self.seg_abs(abs) else {
                self.rack.tsorted.pop_front(); // acknowledged
                continue;
            };
            // Stale: sent again since, SACKed, or lost and awaiting its retransmission.
            let lost_waiting = g.flags & LOST != 0 && g.flags & RETRANS == 0;
            if g.sent_at != t || g.flags & SACKED != 0 || lost_waiting {
                self.rack.tsorted.pop_front();
                continue;
            }
            if !sent_after(rack_ts, rack_end, t, g.end()) {
                break;
            }
            let deadline = t + rack_rtt + reo_wnd;
            if deadline > now {
                d.timeout = Some(deadline);
                break;
            }
            self.rack.tsorted.pop_front();
            self.mark_lost_abs(abs);
            d.marked += 1;
        }
        d
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::scoreboard::SentSeg;
    use crate::units::Dsn;

    const MS: u64 = 1_000_000;

    /// Ten segments sent 1 ms apart from t = 0, RACK on, min RTT 100 ms.
    fn board() -> Scoreboard {
        let mut b = Scoreboard::default();
        b.rack.enabled = true;
        for i in 0..10 {
            let t = Time(i * MS);
            let abs = b.push(SentSeg { seq: Seq(i * 100), len: 100, flags: 0, dsn: Dsn(i * 100), sent_at: t });
            b.rack.on_sent(t, abs);
        }
        b
    }

    fn sack(b: &mut Scoreboard, s: u64, e: u64, now: Time) {
        b.rack.begin_ack(Some(Dur(100 * MS)));
        b.sack(&[(Seq(s), Seq(e))], Seq(0), now);
    }

    #[test]
    fn a_hole_is_lost_one_reordering_window_after_the_later_segment_was_delivered() {
        let mut b = board();
        // Segment 1 (sent at 1 ms) is SACKed at 101 ms; segment 0 (sent at 0) is outstanding.
        sack(&mut b, 100, 200, Time(101 * MS));
        assert!(b.rack.take_advanced());
        assert_eq!(b.rack.rtt, Dur(100 * MS));
        let reo = b.rack.reo_wnd(false, b.sacked_segs(), 3, Some(Dur(100 * MS)));
        assert_eq!(reo, Dur(25 * MS), "min_RTT / 4 with one segment SACKed");
        let d = b.rack_detect_loss(Time(101 * MS), reo);
        // Deadline: 0 + 100 ms + 25 ms.
        assert_eq!(d, Detected { marked: 0, timeout: Some(Time(125 * MS)) });
        let d = b.rack_detect_loss(Time(125 * MS), reo);
        assert_eq!(d.marked, 1);
        assert_eq!(b.lost_bytes(), 100);
        assert_eq!(b.next_retransmit(), Some(0));
        b.check().unwrap();
    }

    #[test]
    fn a_lost_retransmission_is_detected_by_a_later_delivery() {
        let mut b = board();
        sack(&mut b, 300, 1000, Time(109 * MS));
        b.rack_detect_loss(Time(200 * MS), Dur::ZERO);
        assert_eq!(b.lost_bytes(), 300, "segments 0..3 were sent before segment 9");
        // Retransmit segment 0 at 200 ms; it is lost again. Everything sent before it was
        // SACKed long ago: only a segment *sent after* the retransmission reveals its loss.
        let p = b.next_retransmit().unwrap();
        let g = b.mark_retransmitted(p, Time(200 * MS));
        b.rack.on_sent(Time(200 * MS), 0);
        assert_eq!(g.seq, Seq(0));
        let abs = b.push(SentSeg { seq: Seq(1000), len: 100, flags: 0, dsn: Dsn(1000), sent_at: Time(201 * MS) });
        b.rack.on_sent(Time(201 * MS), abs);
        sack(&mut b, 1000, 1100, Time(301 * MS));
        let d = b.rack_detect_loss(Time(301 * MS), Dur::ZERO);
        assert_eq!(d.marked, 1, "{d:?}");
        assert_eq!(b.next_retransmit(), Some(0), "the lost retransmission is due again");
        b.check().unwrap();
    }

    #[test]
    fn a_never_retransmitted_segment_delivered_below_fack_is_reordering() {
        let mut b = board();
        sack(&mut b, 200, 300, Time(102 * MS));
        assert!(!b.rack.reordering_seen);
        b.rack.begin_ack(Some(Dur(100 * MS)));
        b.ack(Seq(300), Time(103 * MS));
        assert!(b.rack.reordering_seen);
        // Once reordering was seen, the window stays min_RTT / 4 even in recovery.
        assert_eq!(b.rack.reo_wnd(true, 5, 3, Some(Dur(100 * MS))), Dur(25 * MS));
    }

    #[test]
    fn stale_entries_are_dropped_and_the_queue_drains() {
        let mut b = board();
        b.rack.begin_ack(Some(Dur(100 * MS)));
        b.ack(Seq(1000), Time(110 * MS));
        b.rack_detect_loss(Time(110 * MS), Dur::ZERO);
        assert_eq!(b.rack.queued(), 0);
    }
}
