//! Reno (RFC 5681), uncoupled: what upstream Linux MPTCP runs on each subflow when the
//! congestion control is `reno`.
//!
//! Slow start by the selected rule, congestion avoidance +1 SMSS per cwnd of acknowledged
//! bytes (RFC 3465 byte counting, as Linux since 3.18), ssthresh = max(cwnd/2, 2 SMSS).
//! Deviation: ssthresh halves cwnd (Linux) rather than FlightSize (RFC 5681 eq. 4).

use serde::{Deserialize, Serialize};

use super::{additive_increase, halve, slow_start, Ack, CcFactory, CongestionControl, PeerView, Window};
use crate::registry::AlgorithmParams;
use crate::rng::Rng;
use crate::units::Time;

/// Reno has no parameters (and no `cc_params` table).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RenoParams;

impl AlgorithmParams for RenoParams {
    const NAME: &'static str = "reno";
    const TABLE: bool = false;
}

impl CcFactory for RenoParams {
    const UNCOUPLED: bool = true;
    fn build(&self, _rng: Rng) -> Box<dyn CongestionControl> {
        Box::new(Reno)
    }
}

pub struct Reno;

impl CongestionControl for Reno {
    fn name(&self) -> &'static str {
        RenoParams::NAME
    }

    fn on_ack(&mut self, ack: &Ack, w: &mut Window) {
        let mut acked = ack.acked;
        if w.in_slow_start() {
            acked = slow_start(w, acked);
            if acked == 0 {
                return;
            }
        }
        let per = w.cwnd;
        additive_increase(w, acked, per);
    }

    fn ssthresh(&mut self, _now: Time, _sf: usize, w: &Window, _peers: &[PeerView]) -> u64 {
        halve(w)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::counting::{CaCounting, SlowStart, SlowStartBound};
    use crate::cc::harness::*;

    #[test]
    fn congestion_avoidance_adds_one_segment_per_window_of_acks() {
        let mut w = Window {
            cwnd: 10_000,
            ssthresh: 5_000,
            smss: 1000,
            cnt: 0,
            slow_start: SlowStart::Linux,
            ca_counting: CaCounting::Bytes,
            bound: SlowStartBound::Below,
        };
        let p = [peer(10, 100)];
        for _ in 0..10 {
            Reno.on_ack(&ack(0, &p), &mut w);
        }
        assert_eq!(w.cwnd, 11_000);
    }

    #[test]
    fn slow_start_rules_differ_with_delayed_acks() {
        // One ACK for two segments: Linux adds both, the per-ACK rule one SMSS.
        let mut a = Window::new(10, 1000, SlowStart::Linux, CaCounting::Bytes);
        let mut b = Window::new(10, 1000, SlowStart::PerAck, CaCounting::Bytes);
        let p = [peer(10, 100)];
        let two = Ack { acked: 2000, ..ack(0, &p) };
        Reno.on_ack(&two, &mut a);
        Reno.on_ack(&two, &mut b);
        assert_eq!((a.cwnd, b.cwnd), (12_000, 11_000));
    }

    #[test]
    fn an_ack_at_cwnd_equal_to_ssthresh_grows_the_window_only_under_the_3x_bound() {
        // Linux 3.11 / MPTCP v0.88: slow start while cwnd <= ssthresh, +1 SMSS per ACK
        // (`tcp_slow_start`, no cap), so an ACK at cwnd = ssthresh = 10 segments gives 11, and
        // the next ACK (11 > 10) is congestion avoidance, counting 1 of the 11 ACKs a segment
        // needs: 11 still. Linux >= 4.3: cwnd < ssthresh is false at 10, so the first ACK is
        // already congestion avoidance, 1 of 10 ACKs: 10.
        let w = Window {
            cwnd: 10_000,
            ssthresh: 10_000,
            smss: 1000,
            cnt: 0,
            slow_start: SlowStart::PerAck,
            ca_counting: CaCounting::PerAck,
            bound: SlowStartBound::AtOrBelow,
        };
        let p = [peer(10, 100)];
        let two = Ack { acked: 2000, ..ack(0, &p) };
        let (mut old, mut new) = (w, Window { bound: SlowStartBound::Below, ..w });
        assert!(old.in_slow_start() && !new.in_slow_start());
        Reno.on_ack(&two, &mut old);
        Reno.on_ack(&two, &mut new);
        assert_eq!((old.cwnd, new.cwnd), (11_000, 10_000));
        Reno.on_ack(&two, &mut old);
        assert_eq!(old.cwnd, 11_000);
        assert!(!old.in_slow_start());
    }

    #[test]
    fn a_stretch_ack_at_ssthresh_under_the_3x_bound_stops_one_segment_above_it() {
        // Linux 3.18-4.2 `tcp_slow_start(tp, acked)`: cwnd + acked, capped at ssthresh + 1,
        // the rest of `acked` left for congestion avoidance. At cwnd = ssthresh = 10 segments
        // an ACK of 3 segments gives 11 (not 13), and 2 segments go on to `tcp_cong_avoid_ai`,
        // which at 11 segments and 2 of 11 counted grows nothing yet.
        let w = Window {
            cwnd: 10_000,
            ssthresh: 10_000,
            smss: 1000,
            cnt: 0,
            slow_start: SlowStart::Linux,
            ca_counting: CaCounting::Bytes,
            bound: SlowStartBound::AtOrBelow,
        };
        let mut ss = w;
        assert_eq!(crate::cc::slow_start(&mut ss, 3000), 2000);
        assert_eq!(ss.cwnd, 11_000);
        let p = [peer(10, 100)];
        let three = Ack { acked: 3000, ..ack(0, &p) };
        let mut w = w;
        Reno.on_ack(&three, &mut w);
        assert_eq!(w.cwnd, 11_000);
    }

    #[test]
    fn loss_halves_with_a_two_segment_floor() {
        let w = Window {
            cwnd: 30_000,
            ssthresh: u64::MAX,
            smss: 1000,
            cnt: 0,
            slow_start: SlowStart::Linux,
            ca_counting: CaCounting::Bytes,
            bound: SlowStartBound::Below,
        };
        assert_eq!(Reno.ssthresh(Time::ZERO, 0, &w, &[]), 15_000);
        let w = Window { cwnd: 3_000, ..w };
        assert_eq!(Reno.ssthresh(Time::ZERO, 0, &w, &[]), 2_000);
    }
}
