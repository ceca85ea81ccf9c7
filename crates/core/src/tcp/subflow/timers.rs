//! The subflow's timer handlers: tail loss probe scheduling (Linux
//! `tcp_schedule_loss_probe`), the RACK reordering and probe timers firing, and the RTO
//! (Linux `tcp_retransmit_timer` → `tcp_enter_loss`). The deadlines themselves live in
//! [`Subflow::timers`]; the connection level fires the handshake and delayed-ACK timers.

use super::Subflow;
use crate::cc::{CongestionControl, PeerView};
use crate::config::Recovery;
use crate::tcp::state::CaState;
use crate::tcp::timer::Slot;
use crate::tcp::tlp::Tlp;
use crate::units::Time;

impl Subflow {
    /// Linux `tcp_schedule_loss_probe`: arms the probe timer in the Open state with data
    /// outstanding and no probe outstanding. `advancing`: called for an ACK that moved
    /// snd_una, which restarts the RTO (the cap is then a whole RTO).
    pub(super) fn schedule_tlp(&mut self, now: Time, advancing: bool) {
        let armable = self.p.recovery == Recovery::RackTlp
            && !self.sb.is_empty()
            && self.ca == CaState::Open
            && self.tlp.high_seq.is_none();
        if !armable {
            if advancing {
                self.timers.probe.stop(); // the RTO takes the timer (Linux `tcp_rearm_rto`)
            }
            return;
        }
        let rto_left = match self.timers.rto.deadline() {
            Some(t) if !advancing => t.since(now.min(t)),
            _ => self.rtt.rto(),
        };
        let pto = Tlp::pto(self.rtt.srtt(), self.sb.len() == 1, self.p.rto_min, rto_left, self.p.rto_initial);
        self.timers.arm(Slot::Probe, now + pto);
    }

    /// The earliest of the retransmission, reordering and probe timers (Linux's
    /// `icsk_timeout`; [`crate::tcp::timer::SubflowTimers::earliest_xmit`]).
    pub fn xmit_timer_at(&self) -> Option<Time> {
        self.timers.earliest_xmit()
    }

    /// Fires the RACK reordering timer and the probe timer if due (Linux
    /// `tcp_rack_reo_timeout`, `tcp_send_loss_probe`). Returns true if a loss probe is to be
    /// sent now: the caller sends one segment of new data through [`Subflow::send_new`] if it
    /// has some the receive window admits, else [`Subflow::probe_last`], then calls
    /// [`Subflow::on_probe_sent`].
    pub fn on_recovery_timers(&mut self, now: Time, cc: &mut dyn CongestionControl, peers: &[PeerView]) -> bool {
        if self.timers.reorder.expired(now) {
            self.timers.reorder.stop();
            let marked = self.rack_detect(now);
            if marked > 0 && matches!(self.ca, CaState::Open | CaState::Disorder) {
                self.enter_recovery(now, cc, peers);
                // Linux: `tcp_cwnd_reduction(sk, 1, 0, 0)`, room for the fast retransmit.
                let (pipe, ssthresh, smss) = (self.cwnd_in_flight(), self.w.ssthresh, self.w.smss);
                if let Some(cwnd) = self.prr.as_mut().and_then(|p| p.on_ack(smss, pipe, ssthresh, smss, false)) {
                    self.w.cwnd = cwnd;
                }
            }
        }
        if self.timers.probe.expired(now) {
            self.timers.probe.stop();
            return self.tlp.high_seq.is_none()
                && !self.sb.is_empty()
                && matches!(self.ca, CaState::Open | CaState::Disorder);
        }
        false
    }

    /// Records that a loss probe went out (`retrans`: it was [`Subflow::probe_last`]); the
    /// RTO restarts from now (Linux `tcp_send_loss_probe`).
    pub fn on_probe_sent(&mut self, now: Time, retrans: bool) {
        self.tlp.on_probe(self.snd_nxt, retrans);
        self.timers.probe.stop();
        self.timers.arm(Slot::Rto, now + self.rtt.rto());
    }

    /// The retransmission timer fired with data outstanding: Linux `tcp_enter_loss`. (The
    /// caller reinjects the outstanding data at the MPTCP level.)
    pub fn on_rto(&mut self, now: Time, cc: &mut dyn CongestionControl, peers: &[PeerView]) {
        // Linux `tcp_enter_loss`: reduce ssthresh unless this loss episode already did
        // (a timeout during fast recovery, or a repeated timeout).
        let reduce = matches!(self.ca, CaState::Open | CaState::Disorder) || self.snd_una >= self.high_seq;
        if reduce {
            self.w.ssthresh = cc.ssthresh(now, self.idx as usize, &self.w, peers);
        }
        self.w.cwnd = self.w.smss;
        self.w.cnt = 0;
        self.sb.enter_loss();
        self.set_ca_state(now, CaState::Loss);
        self.prr = None;
        self.timers.reorder.stop();
        self.timers.probe.stop();
        self.tlp.high_seq = None;
        self.high_seq = self.snd_nxt;
        self.stats.rtos += 1;
        self.rtt.backoff += 1;
        self.timers.arm(Slot::Rto, now + self.rtt.rto());
        cc.set_loss_state(now, self.idx as usize, self.snd_nxt);
        if self.rate_based {
            let ev = self.rate_ack(now, Default::default());
            cc.on_rto(&ev);
            self.pacer.rate = cc.pacing_rate(self.idx as usize);
        }
    }
}
