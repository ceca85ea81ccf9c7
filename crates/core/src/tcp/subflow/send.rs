//! The sending side of a subflow: the congestion window's use (Linux `tcp_cwnd_validate`,
//! RFC 2861), idle restart, new data, Nagle's rule, retransmissions and the loss probe's
//! retransmission.

use super::Subflow;
use crate::cc::CongestionControl;
use crate::config::CwndLimited;
use crate::tcp::segment::{SegFlags, SentSeg};
use crate::tcp::state::CaState;
use crate::tcp::timer::Slot;
use crate::units::{Dsn, Time};

impl Subflow {
    /// Linux `CA_EVENT_TX_START` (`tcp_event_data_sent`): called before sending new data;
    /// tells the controller when nothing is in flight, and when it last sent. Deviation:
    /// Linux raises the event for retransmissions too; here only new data does (after a
    /// timeout, the one case where a retransmission leaves with nothing in flight, CUBIC's
    /// epoch has been reset and BBR's state is the loss state's).
    pub fn tx_start(&mut self, now: Time, cc: &mut dyn CongestionControl) {
        if self.sb.in_flight() != 0 {
            return;
        }
        cc.on_tx_start(now, self.idx as usize, self.sb.rate.app_limited != 0, self.lsndtime, &mut self.w);
        if self.rate_based {
            self.pacer.rate = cc.pacing_rate(self.idx as usize);
        }
    }

    /// Whether the congestion window counts as used, so that it may grow (`tcp.cwnd_limited`):
    /// - `rounds`: slow start while cwnd < 2 × the largest flight of this or the previous
    ///   round of ACKs; afterwards only if that flight filled the window;
    /// - `linux` (`tcp_is_cwnd_limited`, 6.x): a transmit attempt in the current window found
    ///   it full, or, in slow start, cwnd < 2 × the most bytes outstanding in the current
    ///   window.
    pub(super) fn cwnd_limited(&self) -> bool {
        match self.p.cwnd_limited {
            CwndLimited::Rounds => {
                let m = self.round_max_in_flight.max(self.prev_round_max_in_flight);
                if self.w.in_slow_start() {
                    self.w.cwnd < 2 * m
                } else {
                    m + self.w.smss > self.w.cwnd
                }
            }
            CwndLimited::Linux => self.is_cwnd_limited || (self.w.in_slow_start() && self.w.cwnd < 2 * self.max_out),
        }
    }

    /// Linux `tcp_cwnd_validate` after a transmit attempt of new data (a no-op under the
    /// `rounds` rule): `limited` if the congestion window was full with data waiting to be
    /// sent on this subflow. A new window
    /// starts once everything sent when the last one was recorded is acknowledged; within a
    /// window the record only grows (a larger flight) or becomes cwnd-limited. Called after
    /// every new segment (equivalent to Linux's one call per `tcp_write_xmit`: the flight
    /// only grows during an attempt) and when an attempt is refused by the window.
    pub fn cwnd_validate(&mut self, limited: bool) {
        if self.p.cwnd_limited != CwndLimited::Linux {
            return;
        }
        let out = self.cwnd_out();
        if self.snd_una >= self.cwnd_usage_seq || limited || (!self.is_cwnd_limited && out > self.max_out) {
            self.is_cwnd_limited = limited;
            self.max_out = out;
            self.cwnd_usage_seq = self.snd_nxt;
        }
    }

    /// Whether [`Subflow::cwnd_validate`] records anything (the `linux` rule; under `rounds`
    /// it does nothing).
    #[inline]
    pub fn validates_cwnd(&self) -> bool {
        self.p.cwnd_limited == CwndLimited::Linux
    }

    /// The second half of Linux `tcp_cwnd_validate`, after a push that sent data on this
    /// subflow: a full window ("network is fed fully") resets the record; otherwise the most
    /// bytes outstanding is kept and, once the window has not been full for an RTO, RFC 2861
    /// §3's decay runs (`tcp_cwnd_application_limited`, with `tcp.cwv` and `idle_restart`):
    /// in the Open state and unless the writer waits for send-buffer space (`nospace`,
    /// `SOCK_NOSPACE` on the socket the subflow shares with the connection), cwnd falls
    /// halfway to the larger of that record and the initial window, and ssthresh to at least
    /// ¾ of cwnd (`tcp_current_ssthresh`). The time of the check moves on either way; a full
    /// window, an idle restart, a decay and every ACK of new data outside recovery
    /// (`tcp_cong_avoid`, [`Subflow::on_ack`]) restart the clock, so a subflow whose data
    /// keeps being acknowledged never decays.
    pub fn cwnd_app_check(&mut self, now: Time, nospace: bool) {
        let stamp = *self.cwnd_stamp.get_or_insert(now);
        if self.cwnd_limited() {
            self.cwnd_used = 0;
            self.cwnd_stamp = Some(now);
            return;
        }
        self.cwnd_used = self.cwnd_used.max(self.cwnd_out());
        if !(self.p.cwv && self.p.idle_restart) || now.since(stamp) < self.rtt.rto() {
            return;
        }
        if self.ca == CaState::Open && !nospace {
            let smss = self.w.smss;
            // In whole segments, as Linux counts them.
            let used = self.cwnd_used.div_ceil(smss).max(self.p.iw);
            let cwnd = self.w.cwnd / smss;
            if used < cwnd {
                self.w.ssthresh = self.w.ssthresh.max(self.w.cwnd / 2 + self.w.cwnd / 4);
                self.w.cwnd = ((cwnd + used) / 2) * smss;
                self.stats.cwv_decays += 1;
            }
            self.cwnd_used = 0;
        }
        self.cwnd_stamp = Some(now);
    }

    /// RFC 2861 / Linux `tcp_cwnd_restart`, checked before sending data.
    /// Returns true if the window was restarted.
    pub fn maybe_idle_restart(&mut self, now: Time) -> bool {
        if !self.p.idle_restart || !self.sb.is_empty() || self.stats.segments_sent == 0 || self.rate_based {
            return false;
        }
        let rto = self.rtt.rto();
        let idle = now.since(self.lsndtime);
        if idle <= rto {
            return false;
        }
        let restart = (self.p.iw * self.w.smss).min(self.w.cwnd);
        self.w.ssthresh = self.w.ssthresh.max(self.w.cwnd / 4 * 3);
        let mut cwnd = self.w.cwnd;
        let mut delta = idle.0 as i128;
        loop {
            delta -= rto.0 as i128;
            if delta <= 0 || cwnd <= restart {
                break;
            }
            cwnd /= 2;
        }
        self.w.cwnd = cwnd.max(restart);
        self.w.cnt = 0;
        self.cwnd_stamp = Some(now);
        self.stats.idle_restarts += 1;
        true
    }

    /// Records the transmission of new data `[snd_nxt, snd_nxt + len)` mapped to `dsn`.
    pub fn send_new(&mut self, now: Time, len: u64, dsn: Dsn) -> SentSeg {
        let seg = SentSeg { seq: self.snd_nxt, len: len as u32, flags: SegFlags::NONE, dsn, sent_at: now };
        let abs = self.sb.push(seg);
        self.sb.rack.on_sent(now, abs);
        self.snd_nxt += len;
        if len < self.w.smss {
            self.snd_sml = self.snd_nxt;
        }
        self.stats.dsn_sent_end = self.stats.dsn_sent_end.max(dsn.0 + len);
        self.note_sent(now, len);
        match self.p.cwnd_limited {
            CwndLimited::Rounds => self.round_max_in_flight = self.round_max_in_flight.max(self.sb.in_flight()),
            CwndLimited::Linux => self.cwnd_validate(!self.has_room()),
        }
        // Linux `tcp_write_xmit` → `tcp_schedule_loss_probe(sk, false)`.
        self.schedule_tlp(now, false);
        seg
    }

    /// Nagle's rule with Minshall's variant (Linux `tcp_nagle_check` with `nonagle` = 0): a
    /// short segment that would be the last queued one waits while data is outstanding and
    /// an earlier short segment is not yet acknowledged (`tcp_minshall_check`).
    pub fn nagle_holds(&self, len: u64, last: bool) -> bool {
        len < self.w.smss
            && last
            && self.snd_nxt > self.snd_una
            && self.snd_sml > self.snd_una
            && self.snd_sml <= self.snd_nxt
    }

    #[inline]
    fn note_sent(&mut self, now: Time, len: u64) {
        // PRR counts what the window counts (Linux `prr_out`: packets).
        let sent = self.in_cwnd_units(len, 1);
        if let Some(prr) = self.prr.as_mut() {
            prr.on_sent(sent);
        }
        self.pacer.on_sent(now, len);
        self.stats.bytes_sent += len;
        self.stats.segments_sent += 1;
        self.lsndtime = now;
        if !self.timers.rto.is_armed() {
            self.timers.arm(Slot::Rto, now + self.rtt.rto());
        }
    }

    /// RFC 6675 NextSeg() rule 1 within the window: the next lost segment to retransmit.
    /// `force` (the fast retransmit and the RTO) ignores the window, not the pacing gate:
    /// Linux's `tcp_xmit_retransmit_queue` checks pacing; only the RTO's retransmission
    /// (`tcp_retransmit_timer`), sent with `force` from the timer, bypasses it.
    ///
    /// Every push asks, so the common answers come first and inline: no room in the window,
    /// or nothing lost waiting (the scoreboard's lost bytes are all retransmitted ones: no
    /// segment is lost, un-SACKed and not retransmitted, so `next_retransmit` would find none).
    #[inline]
    pub fn retransmit_next(&mut self, now: Time, force: bool) -> Option<SentSeg> {
        if !force && self.cwnd_in_flight() + self.w.smss > self.w.cwnd {
            return None;
        }
        if !self.sb.lost_not_retransmitted() {
            return None;
        }
        self.retransmit_lost(now)
    }

    /// `retransmit_next` once a lost segment may be waiting.
    fn retransmit_lost(&mut self, now: Time) -> Option<SentSeg> {
        let pos = self.sb.next_retransmit()?;
        let seg = self.sb.mark_retransmitted(pos, now);
        self.stats.retrans_segments += 1;
        self.note_sent(now, seg.len as u64);
        if pos == 0 {
            // Linux re-arms the timer when it retransmits the head.
            self.timers.arm(Slot::Rto, now + self.rtt.rto());
        }
        Some(seg)
    }

    /// A loss probe without new data: the last segment again (RFC 8985 §7.3).
    pub fn probe_last(&mut self, now: Time) -> Option<SentSeg> {
        let seg = self.sb.probe_last(now)?;
        self.stats.retrans_segments += 1;
        self.note_sent(now, seg.len as u64);
        Some(seg)
    }
}
