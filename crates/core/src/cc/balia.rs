//! BALIA, the Balanced Linked Adaptation algorithm (Peng, Walid, Hwang, Low, "Multipath TCP:
//! Analysis, Design, and Implementation", IEEE/ACM ToN 24(1), 2016, §VI, Algorithm "Balia"),
//! checked against Linux `mptcp_balia.c` (multipath-tcp.org kernel).
//!
//! With x_k = w_k / rtt_k (segments/s) over the coupled paths and α_r = max_k x_k / x_r:
//! - each ACK on path r in congestion avoidance increases w_r by
//!   (x_r / rtt_r) / (Σ_k x_k)² · (1 + α_r)/2 · (4 + α_r)/5   segments per acknowledged segment,
//!   which equals (x_r + x_max)(4·x_r + x_max) / (10 · w_r · (Σ_k x_k)²), the form Linux
//!   computes (`ai` = acknowledgements per one-segment increase);
//! - each loss on path r sets w_r ← w_r − (w_r/2) · min(α_r, 1.5).
//!
//! With one coupled path α = 1 and both rules are Reno's; like Linux (`cnt_established <= 1`),
//! the Reno code path is then used.
//!
//! Deviations from the reference:
//! - α_r is a real number; Linux divides integers (`max_rate / rate`), so for its loss rule
//!   min(α_r, 1.5) is either 1 or 1.5.
//! - The increase is recomputed on every ACK from the current snapshot; Linux caches `ai` and
//!   recomputes it on slow-start ACKs, after each one-segment increase and after state changes.
//! - Byte counting (+1 SMSS per `smss / increase` bytes acknowledged) instead of Linux's one
//!   count per ACK; the loss decrease is computed at the loss from the current windows (Linux
//!   uses `md` from its last recomputation).
//! - The window after a loss is at least two segments (the Reno helper's floor; Linux: one).

use serde::{Deserialize, Serialize};

use super::{
    additive_increase, additive_increase_gently, coupled_paths, coupled_paths_into, halve, slow_start, Ack, CcFactory,
    CongestionControl, CoupledPath, PeerView, Window,
};
use crate::registry::AlgorithmParams;
use crate::rng::Rng;
use crate::units::Time;

/// BALIA has no parameters (and no `cc_params` table).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BaliaParams;

impl AlgorithmParams for BaliaParams {
    const NAME: &'static str = "balia";
    const TABLE: bool = false;
}

impl CcFactory for BaliaParams {
    fn build(&self, _rng: Rng) -> Box<dyn CongestionControl> {
        Box::new(Balia::new())
    }
}

/// The largest multiple of w_r/2 a loss removes (ToN 2016: min(α_r, 1.5)).
const MAX_DECREASE_FACTOR: f64 = 1.5;

#[derive(Default)]
pub struct Balia {
    /// Scratch for the coupled paths of an ACK.
    coupled: Vec<CoupledPath>,
}

impl Balia {
    pub fn new() -> Balia {
        Balia::default()
    }

    /// α_r = max_k x_k / x_r for path `sf` (None if `sf` is not a coupled path).
    fn alpha(paths: &[CoupledPath], sf: usize) -> Option<f64> {
        let me = paths.iter().find(|p| p.sf == sf)?;
        let x_max = paths.iter().map(|p| p.w / p.rtt).fold(0.0, f64::max);
        Some(x_max / (me.w / me.rtt))
    }

    /// The increase of path `sf`'s window per acknowledged segment (segments).
    fn increase(paths: &[CoupledPath], sf: usize) -> Option<f64> {
        let me = paths.iter().find(|p| p.sf == sf)?;
        let alpha = Balia::alpha(paths, sf)?;
        let sum: f64 = paths.iter().map(|p| p.w / p.rtt).sum();
        let x = me.w / me.rtt;
        Some((x / me.rtt) / (sum * sum) * (1.0 + alpha) / 2.0 * (4.0 + alpha) / 5.0)
    }
}

impl CongestionControl for Balia {
    fn name(&self) -> &'static str {
        BaliaParams::NAME
    }

    fn on_ack(&mut self, ack: &Ack, w: &mut Window) {
        let mut acked = ack.acked;
        if w.in_slow_start() {
            acked = slow_start(w, acked);
            if acked == 0 {
                return;
            }
        }
        let mut paths = std::mem::take(&mut self.coupled);
        coupled_paths_into(ack.peers, ack.sf, w.cwnd, &mut paths);
        let inc = Balia::increase(&paths, ack.sf).filter(|_| paths.len() > 1);
        self.coupled = paths;
        match inc {
            Some(inc) if inc > 0.0 => {
                let per = ((w.smss as f64 / inc).round() as u64).max(1);
                additive_increase_gently(w, acked, per);
            }
            _ => {
                let per = w.cwnd;
                additive_increase(w, acked, per);
            }
        }
    }

    fn ssthresh(&mut self, _now: Time, sf: usize, w: &Window, peers: &[PeerView]) -> u64 {
        let paths = coupled_paths(peers, sf, w.cwnd);
        match Balia::alpha(&paths, sf) {
            Some(alpha) if paths.len() > 1 => {
                let decrease = w.cwnd as f64 / 2.0 * alpha.min(MAX_DECREASE_FACTOR);
                (w.cwnd.saturating_sub(decrease as u64)).max(2 * w.smss)
            }
            _ => halve(w),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::harness::*;

    #[test]
    fn per_ack_increase_matches_the_paper_by_hand() {
        // w = (10, 20) pkts, rtt = (0.05, 0.2) s: x = (200, 100) pkts/s, Σx = 300, x_max = 200;
        // α = (1, 2).
        // path 1: (200/0.05)/300² · (1+1)/2 · (4+1)/5 = 4000/90 000 · 1 · 1 = 0.0444…
        // path 2: (100/0.2)/300² · (1+2)/2 · (4+2)/5 = 500/90 000 · 1.5 · 1.2 = 0.01
        let peers = [peer(10, 50), peer(20, 200)];
        let paths = coupled_paths(&peers, 0, peers[0].cwnd);
        assert!((Balia::increase(&paths, 0).unwrap() - 4000.0 / 90_000.0).abs() < 1e-12);
        assert!((Balia::increase(&paths, 1).unwrap() - 0.01).abs() < 1e-12);
        // The Linux form (x_r + x_max)(4x_r + x_max)/(10 w_r (Σx)²) agrees: path 2:
        // (100+200)(400+200)/(10·20·90 000) = 180 000/18 000 000 = 0.01.
        let mut balia = Balia::new();
        let inc = increase_per_ack(&mut balia, 1, &peers, 4000);
        assert!((inc - 0.01).abs() < 0.001, "path 2: {inc}");
        let inc = increase_per_ack(&mut balia, 0, &peers, 4000);
        assert!((inc - 4000.0 / 90_000.0).abs() < 0.001, "path 1: {inc}");
    }

    #[test]
    fn a_loss_removes_more_on_the_slower_path() {
        // Same example: α = (1, 2). Path 1 halves: 10 − 5·1 = 5 pkts;
        // path 2 loses w/2 · min(2, 1.5): 20 − 10·1.5 = 5 pkts.
        let peers = [peer(10, 50), peer(20, 200)];
        let mut balia = Balia::new();
        assert_eq!(balia.ssthresh(Time::ZERO, 0, &window_of(&peers[0]), &peers), 5_000);
        assert_eq!(balia.ssthresh(Time::ZERO, 1, &window_of(&peers[1]), &peers), 5_000);
    }

    #[test]
    fn equal_rates_give_a_quarter_of_reno_per_path() {
        // x₁ = x₂ → α = 1, increase = (x/rtt)/(2x)² = 1/(4w): 1/40 at w = 10.
        let peers = [peer(10, 100), peer(10, 100)];
        let paths = coupled_paths(&peers, 0, peers[0].cwnd);
        assert!((Balia::increase(&paths, 0).unwrap() - 0.025).abs() < 1e-12);
    }

    #[test]
    fn one_subflow_balia_is_reno() {
        assert_single_subflow_is_reno(&mut Balia::new());
    }
}
