//! ACK processing on the sending side (Linux `tcp_ack` → `tcp_fastretrans_alert`): the
//! cumulative ACK and SACK blocks, loss marking (RFC 6675 DupThresh or RACK), the congestion
//! state machine, PRR, the congestion controller, and the retransmission timer.

use super::{AckOutcome, Subflow};
use crate::cc::{Ack, CongestionControl, PeerView};
use crate::config::{CwndLimited, Recovery, RttSample};
use crate::tcp::prr::Prr;
use crate::tcp::state::{CaState, State};
use crate::tcp::timer::Slot;
use crate::tcp::tlp::TlpAck;
use crate::units::{Seq, Time};

impl Subflow {
    /// Processes the subflow part of an ACK: cumulative ACK, SACK blocks, loss detection,
    /// congestion state, congestion control and the retransmission timer.
    pub fn on_ack(
        &mut self,
        now: Time,
        ack: Seq,
        sack: &[(Seq, Seq)],
        cc: &mut dyn CongestionControl,
        peers: &[PeerView],
    ) -> AckOutcome {
        let mut out = AckOutcome::default();
        if ack > self.snd_nxt || self.state != State::Established {
            return out;
        }
        if ack >= self.snd_una {
            self.rcv_tstamp = now;
        }
        let rack = self.p.recovery == Recovery::RackTlp;
        self.sb.rack.begin_ack(self.rtt.min_rtt());
        let prior_lost = self.sb.lost_total();
        if self.rate_based {
            self.sb.rate.begin_ack(self.sb.in_flight());
        }
        // The ACK's RTT sample and the smoothed RTT's (`tcp.rtt_sample`).
        let (mut rtt, mut rtt_srtt) = (None, None);
        let first = self.p.rtt_sample == RttSample::First;
        // What the controller is told was acknowledged (`tcp.cwnd_unit`): the bytes, or the
        // packets as full segments (Linux `tcp_cong_control`'s `acked_sacked` counts packets).
        let mut acked_for_cc = 0;
        let advanced = ack > self.snd_una;
        // Bytes and segments delivered for the first time by this ACK (Linux `tp->delivered`
        // delta, which counts packets).
        let mut delivered = 0;
        let mut delivered_segs = 0;
        if advanced {
            let a = self.sb.ack(ack, now);
            self.snd_una = ack;
            out.acked_bytes = a.bytes;
            acked_for_cc = self.in_cwnd_units(a.bytes, a.segs);
            delivered += a.delivered;
            delivered_segs += a.delivered_segs;
            self.stats.bytes_acked += a.bytes;
            // Karn: no sample from a cumulative ACK covering retransmitted data.
            if !a.had_retrans {
                (rtt_srtt, rtt) = if first { a.rtt_first_last.unzip() } else { (a.rtt, a.rtt) };
            }
        }
        let mut newly_sacked = 0;
        if !sack.is_empty() {
            let sacked_before = self.sb.sacked_segs();
            let s = self.sb.sack(sack, self.snd_una, now);
            newly_sacked = s.bytes;
            delivered += s.bytes;
            delivered_segs += self.sb.sacked_segs() - sacked_before;
            if first {
                // `tcp_clean_rtx_queue`: `sack_rtt_us` stands in for a missing `seq_rtt_us`,
                // and `ca_rtt_us` is the SACK's when it has one.
                rtt_srtt = rtt_srtt.or(s.rtt_first);
                rtt = s.rtt.or(rtt);
            } else if rtt.is_none() {
                (rtt, rtt_srtt) = (s.rtt, s.rtt);
            }
        }
        if let Some(r) = rtt {
            self.rtt.on_samples(rtt_srtt.unwrap_or(r), r);
            self.rtt.backoff = 0;
        }
        if self.p.cwnd_limited == CwndLimited::Rounds && self.snd_una >= self.round_end {
            self.prev_round_max_in_flight = self.round_max_in_flight;
            self.round_max_in_flight = self.sb.in_flight();
            self.round_end = self.snd_nxt;
        }
        // Congestion state machine. The ACK that ends fast recovery does not grow the window
        // (Linux 3.x `tcp_may_raise_cwnd`): it acknowledges bytes SACKed long before.
        // Loss detection of a tail loss probe (Linux `tcp_process_tlp_ack`): a loss the probe
        // repaired costs one window reduction, done at once (CWR entered and left).
        if self.tlp.on_ack(self.snd_una, advanced, newly_sacked > 0) == TlpAck::Repaired
            && matches!(self.ca, CaState::Open | CaState::Disorder)
        {
            self.w.ssthresh = cc.ssthresh(now, self.idx as usize, &self.w, peers);
            if !self.rate_based {
                self.w.cwnd = self.w.ssthresh.max(self.w.smss);
            }
            self.w.cnt = 0;
        }
        let was_recovery = self.ca == CaState::Recovery;
        if matches!(self.ca, CaState::Recovery | CaState::Loss) && self.snd_una >= self.high_seq {
            if self.ca == CaState::Recovery && !self.rate_based {
                // Linux `tcp_end_cwnd_reduction`.
                self.w.cwnd = self.w.ssthresh.max(self.w.smss);
            }
            self.set_ca_state(now, CaState::Open);
            self.prr = None;
        }
        let newly_lost = if rack {
            if self.sb.rack.take_advanced() {
                self.rack_detect(now)
            } else {
                0
            }
        } else {
            u64::from(self.sb.mark_lost(self.p.dupthresh))
        };
        match self.ca {
            CaState::Open | CaState::Disorder if self.sb.lost_bytes() > 0 => {
                self.enter_recovery(now, cc, peers);
                out.entered_recovery = true;
            }
            CaState::Open if self.sb.sacked_bytes() > 0 => self.set_ca_state(now, CaState::Disorder),
            CaState::Disorder if self.sb.sacked_bytes() == 0 => self.set_ca_state(now, CaState::Open),
            _ => {}
        }
        if self.ca == CaState::Recovery {
            // PRR-SSRB when the ACK advanced snd_una and revealed no new loss, else PRR-CRB.
            // PRR counts what the window counts (Linux `prr_delivered`: packets).
            let (pipe, ssthresh, smss) = (self.cwnd_in_flight(), self.w.ssthresh, self.w.smss);
            let delivered = self.in_cwnd_units(delivered, delivered_segs);
            if let Some(cwnd) =
                self.prr.as_mut().and_then(|p| p.on_ack(delivered, pipe, ssthresh, smss, advanced && newly_lost == 0))
            {
                self.w.cwnd = cwnd;
            }
        }
        if self.rate_based {
            // Linux `tcp_rate_gen` + `tcp_cong_control` → `cong_control`, on every ACK.
            self.sb.rate.delivered += delivered;
            let lost = self.sb.lost_total() - prior_lost;
            let rs = self.sb.rate.gen(now, delivered, lost, rtt, self.rtt.min_rtt());
            let ev = self.rate_ack(now, rs);
            if cc.cong_control(&ev, &mut self.w) {
                self.sb.rate.app_limited = (self.sb.rate.delivered + self.sb.in_flight()).max(1);
            }
            self.pacer.rate = cc.pacing_rate(self.idx as usize);
        } else if out.acked_bytes > 0 || newly_sacked > 0 {
            let ev = Ack {
                now,
                sf: self.idx as usize,
                acked: acked_for_cc,
                rtt,
                snd_una: self.snd_una,
                snd_nxt: self.snd_nxt,
                peers,
            };
            if self.pkts_acked {
                cc.pkts_acked(&ev, &mut self.w);
            }
            if out.acked_bytes > 0 && !was_recovery && self.ca != CaState::Recovery && self.cwnd_limited() {
                cc.on_ack(&ev, &mut self.w);
            }
            // Linux `tcp_cong_avoid` runs for every ACK of new data outside a window
            // reduction (`tcp_may_raise_cwnd`), whether or not the controller then grows the
            // window, and restarts RFC 2861's clock (`snd_cwnd_stamp`).
            if out.acked_bytes > 0 && self.ca != CaState::Recovery {
                self.cwnd_stamp = Some(now);
            }
        }
        // RFC 6298 (5.2)/(5.3).
        if self.sb.is_empty() {
            self.timers.rto.stop();
            self.timers.reorder.stop();
        } else if out.acked_bytes > 0 {
            self.timers.arm(Slot::Rto, now + self.rtt.rto());
        }
        // Linux `tcp_set_xmit_timer` after an ACK that acknowledged new data.
        if out.acked_bytes > 0 {
            self.schedule_tlp(now, true);
        }
        if matches!(self.ca, CaState::Recovery | CaState::Loss) {
            self.timers.probe.stop();
        }
        out
    }

    /// Linux `tcp_init_cwnd_reduction` + `tcp_enter_recovery`: one window reduction for the
    /// episode, which ends when snd_una reaches the current snd_nxt.
    pub(super) fn enter_recovery(&mut self, now: Time, cc: &mut dyn CongestionControl, peers: &[PeerView]) {
        self.high_seq = self.snd_nxt;
        self.w.ssthresh = cc.ssthresh(now, self.idx as usize, &self.w, peers);
        // A rate-based controller keeps the window (Linux: no `tcp_cwnd_reduction` with
        // `cong_control`).
        if !self.rate_based {
            if self.p.prr {
                self.prr = Some(Prr::start(self.w.cwnd));
            } else {
                self.w.cwnd = self.w.ssthresh;
            }
        }
        self.w.cnt = 0;
        self.set_ca_state(now, CaState::Recovery);
        self.stats.recoveries += 1;
        self.tlp.high_seq = None;
        self.timers.probe.stop();
    }

    /// One RACK loss-detection pass; re-arms the reordering timer. Returns the segments
    /// newly marked lost.
    pub(super) fn rack_detect(&mut self, now: Time) -> u64 {
        let in_recovery = matches!(self.ca, CaState::Recovery | CaState::Loss);
        let (dupthresh, srtt) = (self.p.dupthresh, self.rtt.srtt());
        let d =
            self.sb.rack_detect_loss(now, |rack, sacked_segs| rack.reo_wnd(in_recovery, sacked_segs, dupthresh, srtt));
        self.timers.set(Slot::Reorder, d.timeout);
        d.marked
    }
}
