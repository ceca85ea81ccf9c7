//! The cumulative ACK on the scoreboard: the whole segments it covers leave the queue, the
//! head is trimmed if the ACK ends inside it, and the counters, cursors and SACKed ranges
//! follow.

use super::{Acked, Scoreboard};
use crate::tcp::rack::Rack;
use crate::tcp::rate::{RateEstimator, TxStamp};
use crate::tcp::segment::{SegFlags, SentSeg};
use crate::units::{Seq, Time};

/// RACK's and the delivery-rate estimator's records of a segment delivered for the first
/// time (out of line: only RACK-TLP and rate-based controllers keep them).
#[inline(never)]
fn record_delivery(rack: &mut Rack, rate: &mut RateEstimator, stamp: Option<&TxStamp>, s: &SentSeg, now: Time) {
    rack.on_delivered(s.seq, s.end(), s.sent_at, s.flags, now);
    if let Some(stamp) = stamp {
        rate.on_delivered(s.end(), s.sent_at, stamp, s.has(SegFlags::EVER_RETRANS));
    }
}

/// What the whole segments a cumulative ACK covers held, summed while they are walked.
#[derive(Default)]
struct Dropped {
    segs: u64,
    skb_ends: u64,
    bytes: u64,
    sacked: u64,
    sacked_segs: u64,
    lost: u64,
    retrans: u64,
    lost_segs: u64,
    retrans_segs: u64,
    /// SACKed segments below the loss-marking cursor (`lost_hint_cnt` counts them).
    below_lost_hint: u64,
    /// The flags and send time of the last of them.
    last: (SegFlags, Time),
    /// The send times of the first and the last of them not SACKed before.
    unsacked: Option<(Time, Time)>,
}

impl Scoreboard {
    /// Processes a cumulative ACK up to `ack` (exclusive).
    pub fn ack(&mut self, ack: Seq, now: Time) -> Acked {
        let mut r = Acked::default();
        // The whole segments the ACK covers, in one pass over the queue's two contiguous
        // parts with the counters kept in locals; the segments are dropped afterwards.
        let mut t = Dropped::default();
        let (lost_hint, base) = (self.lost_hint, self.base);
        let Scoreboard { segs, rack, rate, tx, .. } = self;
        let record = rack.enabled || !tx.is_empty();
        let (front, back) = segs.as_slices();
        for part in [front, back] {
            let stop = part.iter().try_for_each(|s| {
                if s.end() > ack {
                    return Err(());
                }
                let len = s.len as u64;
                if s.has(SegFlags::SACKED) {
                    t.sacked += len;
                    t.sacked_segs += 1;
                    if base + t.segs < lost_hint {
                        t.below_lost_hint += 1;
                    }
                } else {
                    t.unsacked = Some((t.unsacked.map_or(s.sent_at, |(f, _)| f), s.sent_at));
                    if s.has(SegFlags::LOST) {
                        t.lost += len;
                        t.lost_segs += 1;
                        if s.has(SegFlags::RETRANS) {
                            t.retrans += len;
                            t.retrans_segs += 1;
                        }
                    }
                    r.delivered += len;
                    r.delivered_segs += 1;
                    if record {
                        record_delivery(rack, rate, tx.get(t.segs as usize), s, now);
                    }
                }
                t.bytes += len;
                t.segs += 1;
                t.skb_ends += s.has(SegFlags::SKB_END) as u64;
                r.had_retrans |= s.has(SegFlags::EVER_RETRANS);
                t.last = (s.flags, s.sent_at);
                Ok(())
            });
            if stop.is_err() {
                break;
            }
        }
        if t.segs > 0 {
            // The RTT of the segment ending at the new snd_una, if never retransmitted.
            let (flags, sent_at) = t.last;
            r.rtt = (!flags.intersects(SegFlags::EVER_RETRANS | SegFlags::SACKED)).then(|| now.since(sent_at));
            r.rtt_first_last = t.unsacked.map(|(f, l)| (now.since(f), now.since(l)));
            self.out -= t.bytes;
            self.sacked -= t.sacked;
            self.sacked_segs -= t.sacked_segs;
            self.lost -= t.lost;
            self.retrans -= t.retrans;
            self.lost_segs -= t.lost_segs;
            self.retrans_segs -= t.retrans_segs;
            self.lost_hint_cnt -= t.below_lost_hint;
            self.skb_ends -= t.skb_ends;
            self.base += t.segs;
            self.segs.drain(..t.segs as usize);
            if !self.tx.is_empty() {
                self.tx.drain(..t.segs as usize);
            }
            r.bytes = t.bytes;
            r.segs = t.segs;
        }
        if let Some(f) = self.segs.front_mut().filter(|f| f.seq < ack) {
            // Partial acknowledgement of the head: trim it.
            let n = ack.dist(f.seq);
            f.seq = ack;
            f.len -= n as u32;
            f.dsn += n;
            let flags = f.flags;
            self.out -= n;
            if flags.contains(SegFlags::SACKED) {
                self.sacked -= n;
            } else {
                r.delivered += n;
                if flags.contains(SegFlags::LOST) {
                    self.lost -= n;
                    if flags.contains(SegFlags::RETRANS) {
                        self.retrans -= n;
                    }
                }
            }
            r.bytes += n;
        }
        self.update_pipe();
        if self.lost_hint < self.base {
            self.lost_hint = self.base;
            self.lost_hint_cnt = 0;
        }
        self.retrans_hint = self.retrans_hint.max(self.base);
        // The ranges the ACK covers are the first ones; each is dropped once.
        while self.sacked_ranges.front().is_some_and(|r| r.1 <= ack.0) {
            self.sacked_ranges.pop_front();
        }
        if let Some(first) = self.sacked_ranges.front_mut() {
            first.0 = first.0.max(ack.0);
        }
        r
    }
}
