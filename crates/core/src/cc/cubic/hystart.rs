//! HyStart (Ha & Rhee, "Taming the elephants", 2011; Linux `hystart_update` with its
//! default `hystart_detect` = ACK train + delay). From a window of 16 segments on, slow start
//! ends (ssthresh = cwnd) when either
//! - ACK train: the ACKs of a round keep arriving at most 2 ms apart (`hystart_ack_delta_us`)
//!   for longer than (min RTT + ack delay)/2 after the round's first ACK — the round's
//!   data already spans half the base RTT at the bottleneck, i.e. cwnd ≥ BDP/2. The ack delay
//!   is min(1 ms, 4 × 64 KB / pacing rate), the pacing rate Linux computes in slow start,
//!   2·cwnd/SRTT (`hystart_ack_delay` with a 64 KB GSO size); the halving is Linux's for an
//!   unpaced socket (no fq qdisc, not BBR);
//! - delay: the round's minimum RTT over its first 8 samples exceeds the lowest RTT seen by
//!   clamp(min/8, 4 ms, 16 ms).
//!
//! A round ends when the cumulative ACK passes the snd_nxt recorded at its start (Linux
//! `after(snd_una, end_seq)`); the next ACK starts the next round.
//!
//! HyStart samples every ACK that acknowledges data ([`crate::cc::CongestionControl::pkts_acked`],
//! Linux `cubictcp_acked`), not only those that may grow the window: a subflow fed in
//! bursts by the MPTCP scheduler, not cwnd-limited between them, would otherwise sample
//! only the ACKs of its queued bursts and leave slow start by delay where the kernel does
//! not (docs/validation-findings.md, "HyStart's samples and its latch"). As Linux's
//! (`ca->found`), HyStart stays quiet once it has ended slow start, whatever window
//! reductions follow, until a timeout resets it ([`crate::cc::CongestionControl::set_loss_state`]).
//!
//! Comparison with Linux 6.18 (kernel backend; one path, 20 Mbit/s, 20 ms RTT, a 1-BDP
//! queue of 34 packets; cubic; `TcpExtTCPHystartTrainCwnd`): the kernel leaves slow start
//! by the ACK train at cwnd = 38 segments in 3 of 3 runs. The simulator left it at 86
//! (by delay, once the queue had built up) while its rounds ended when the ACK *reached*
//! the round's end: the round then began at the last ACK of a flight, the idle gap before
//! the next flight exceeded 2 ms and broke every train. With Linux's `after` it leaves by
//! the ACK train at 60 segments, one flight later than the kernel. The rest is the
//! receiver: early in a connection Linux acknowledges every segment (quick-ACK mode, and
//! an ACK whenever the growing receive window would grow), the simulator's receiver every
//! second one (`delack_segments = 2`). The flight of 20 segments that the kernel's train
//! detects then spans 10.8 ms of ACKs, below the threshold of (21.2 + 1)/2 = 11.1 ms, where
//! the kernel's per-segment ACKs span 11.4 ms against (20.6 + 1)/2 = 10.8 ms. With
//! `delack_segments = 1` the simulator leaves at 39 segments, and with the receiver's
//! quick-ACK mode (`tcp.quickack`, on in the `linux` profile: the first 16 segments are
//! acknowledged one by one) at 38 segments, the kernel's window.

use crate::cc::{Ack, Window};
use crate::units::{Dur, Seq, Time};

/// HyStart's minimum samples per round and the window (segments) below which it is off.
const HYSTART_MIN_SAMPLES: u32 = 8;
const HYSTART_LOW_WINDOW: u64 = 16;
/// Largest gap between ACKs of one train (Linux `hystart_ack_delta_us`).
const HYSTART_ACK_DELTA: Dur = Dur(2_000_000);
/// GSO size in Linux's `hystart_ack_delay` (bytes; the 64 KB legacy maximum).
const GSO_MAX_SIZE: f64 = 65_536.0;

/// HyStart's state on one subflow (Linux `struct bictcp`'s `end_seq`, `round_start`,
/// `last_ack`, `curr_rtt`, `sample_cnt`, `delay_min` and `found`).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct HyStart {
    /// End of the current round (snd_nxt at its start), its minimum RTT over the first
    /// samples, their number, and the lowest RTT seen.
    round_end: Option<Seq>,
    /// ACK train: the round's first ACK and the last ACK of its unbroken train.
    round_start: Time,
    last_ack: Time,
    curr_rtt: Option<Dur>,
    samples: u32,
    delay_min: Option<Dur>,
    /// HyStart has ended slow start (Linux `ca->found`): it stays quiet until the subflow
    /// times out, whatever window reductions come in between.
    found: bool,
}

impl HyStart {
    /// The state after a timeout (Linux `bictcp_reset`, then `bictcp_hystart_reset`): a
    /// round starts now, ending at `snd_nxt`.
    pub(super) fn restarted(now: Time, snd_nxt: Seq) -> HyStart {
        HyStart { round_end: Some(snd_nxt), round_start: now, last_ack: now, ..HyStart::default() }
    }

    /// An RTT sample of Linux `cubictcp_acked` updates the lowest RTT seen; whether HyStart
    /// may still end slow start (it has not yet), for [`Self::update`].
    pub(super) fn on_rtt_sample(&mut self, rtt: Dur) -> bool {
        self.delay_min = Some(self.delay_min.map_or(rtt, |m| m.min(rtt)));
        !self.found
    }

    /// Linux `hystart_update` (ACK-train and delay detection) for one ACK in slow start.
    pub(super) fn update(&mut self, ack: &Ack, rtt: Dur, w: &mut Window) {
        let srtt = ack.peers.get(ack.sf).and_then(|p| p.srtt);
        // A new round once the ACK passes (`after`, not reaches) the round's end: the ACK
        // that reaches it is the last of the flight sent in the previous round, and a round
        // started there would see the idle gap before the next flight and break its train.
        if self.round_end.is_none_or(|end| ack.snd_una > end) {
            self.round_end = Some(ack.snd_nxt);
            self.round_start = ack.now;
            self.last_ack = ack.now;
            self.curr_rtt = None;
            self.samples = 0;
        }
        if w.cwnd < HYSTART_LOW_WINDOW * w.smss {
            return;
        }
        if ack.now.since(self.last_ack) <= HYSTART_ACK_DELTA {
            self.last_ack = ack.now;
            // Linux's slow-start pacing rate, 2·cwnd/SRTT (bytes/s), sets the ack delay.
            let pacing = srtt.map(|s| 2.0 * w.cwnd as f64 / s.secs_f64().max(1e-9));
            let ack_delay =
                pacing.map_or(Dur::ZERO, |r| Dur::from_ms(1).min(Dur::from_secs_f64(4.0 * GSO_MAX_SIZE / r)));
            let threshold = Dur((self.delay_min.expect("set above") + ack_delay).0 / 2);
            if ack.now.since(self.round_start) > threshold {
                self.found = true;
                w.ssthresh = w.cwnd;
                return;
            }
        }
        self.curr_rtt = Some(self.curr_rtt.map_or(rtt, |c| c.min(rtt)));
        if self.samples < HYSTART_MIN_SAMPLES {
            self.samples += 1;
            return;
        }
        let min = self.delay_min.expect("set above");
        let thresh = Dur((min.0 / 8).clamp(4_000_000, 16_000_000));
        if self.curr_rtt.is_some_and(|c| c > min + thresh) {
            self.found = true;
            w.ssthresh = w.cwnd;
        }
    }
}
