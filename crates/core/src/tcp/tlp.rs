//! Tail Loss Probe (RFC 8985 §7; Linux `tcp_schedule_loss_probe`, `tcp_send_loss_probe`,
//! `tcp_process_tlp_ack`).
//!
//! When the last segments of a flight are lost no later segment can reveal the loss, and
//! without a probe only the RTO (>= 200 ms) repairs it. With data outstanding and the sender
//! in the Open state, a probe timeout PTO = 2·SRTT (plus a worst-case delayed-ACK allowance
//! when only one segment is in flight; Linux uses rto_min, 200 ms by default, as the RFC's
//! WCDelAckT) is armed after new data is sent and after an ACK that acknowledges new data,
//! never beyond the RTO deadline (without an RTT sample: the initial RTO). When it fires the
//! sender transmits one segment regardless of cwnd: new data if the receive window admits
//! some, else the last segment again. Its ACK (SACK) lets RACK detect whatever was lost
//! before it; at most one probe is outstanding per episode (`high_seq`).
//!
//! Loss detection of the probe itself (§7.4): once the cumulative ACK passes `high_seq` after
//! a retransmitted probe, the probe repaired a loss and the window is reduced once (Linux
//! enters CWR and ends it at once: cwnd = ssthresh). A pure duplicate ACK means the original
//! and the probe both arrived. Deviation: the receiver sends no D-SACK, so a probe that
//! duplicated a segment which was merely late also counts as a repaired loss if the ACK
//! passes `high_seq` (RFC 8985 relies on D-SACK there).

use crate::units::{Dur, Seq};

/// Loss-probe state of one sender (its timer is the subflow's, `tcp::timer::SubflowTimers`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tlp {
    /// snd_nxt when the outstanding probe was sent (Linux `tlp_high_seq`).
    pub high_seq: Option<Seq>,
    /// The outstanding probe retransmitted old data.
    pub retrans: bool,
    /// Probes sent.
    pub probes: u64,
    /// Probes that repaired a loss (window reduced).
    pub recoveries: u64,
}

/// What an ACK says about the outstanding probe.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TlpAck {
    /// Nothing decided yet (or no probe outstanding).
    Pending,
    /// The probe episode is over without a loss.
    Done,
    /// The retransmitted probe repaired a loss: reduce the window once.
    Repaired,
}

impl Tlp {
    /// RFC 8985 §7.2 PTO: 2·SRTT, + `delack_allowance` if only one segment is in flight,
    /// capped at `rto_left` (the time to the RTO deadline); `initial` without an RTT sample.
    pub fn pto(srtt: Option<Dur>, one_segment: bool, delack_allowance: Dur, rto_left: Dur, initial: Dur) -> Dur {
        let pto = match srtt {
            Some(s) => Dur(2 * s.0) + if one_segment { delack_allowance } else { Dur::ZERO },
            None => initial,
        };
        pto.min(rto_left)
    }

    /// Records a probe sent with `snd_nxt` after it.
    pub fn on_probe(&mut self, snd_nxt: Seq, retrans: bool) {
        self.high_seq = Some(snd_nxt);
        self.retrans = retrans;
        self.probes += 1;
    }

    /// Linux `tcp_process_tlp_ack` for an ACK up to `ack`; `advanced`: snd_una moved;
    /// `sacked`: the ACK SACKed new data.
    pub fn on_ack(&mut self, ack: Seq, advanced: bool, sacked: bool) -> TlpAck {
        let Some(high) = self.high_seq else {
            return TlpAck::Pending;
        };
        if ack < high {
            return TlpAck::Pending;
        }
        let verdict = if !self.retrans {
            TlpAck::Done
        } else if ack > high {
            self.recoveries += 1;
            TlpAck::Repaired
        } else if !advanced && !sacked {
            TlpAck::Done
        } else {
            TlpAck::Pending
        };
        if verdict != TlpAck::Pending {
            self.high_seq = None;
        }
        verdict
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pto_is_two_srtt_with_a_delayed_ack_allowance_for_one_segment_and_capped_by_the_rto() {
        let ms = Dur::from_ms;
        assert_eq!(Tlp::pto(Some(ms(50)), false, ms(200), ms(300), ms(1000)), ms(100));
        assert_eq!(Tlp::pto(Some(ms(50)), true, ms(200), ms(1000), ms(1000)), ms(300));
        assert_eq!(Tlp::pto(Some(ms(50)), true, ms(200), ms(250), ms(1000)), ms(250));
        assert_eq!(Tlp::pto(None, false, ms(200), ms(3000), ms(1000)), ms(1000));
    }

    #[test]
    fn a_retransmitted_probe_acknowledged_beyond_its_high_seq_repaired_a_loss() {
        let mut t = Tlp::default();
        t.on_probe(Seq(1000), true);
        assert_eq!(t.on_ack(Seq(900), true, false), TlpAck::Pending);
        assert_eq!(t.on_ack(Seq(1000), true, false), TlpAck::Pending);
        assert_eq!(t.on_ack(Seq(1000), false, false), TlpAck::Done, "pure duplicate: both arrived");
        t.on_probe(Seq(2000), true);
        assert_eq!(t.on_ack(Seq(2100), true, false), TlpAck::Repaired);
        assert_eq!(t.high_seq, None);
        t.on_probe(Seq(3000), false);
        assert_eq!(t.on_ack(Seq(3000), true, false), TlpAck::Done, "a new-data probe");
    }
}
