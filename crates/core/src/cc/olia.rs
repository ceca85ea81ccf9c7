//! OLIA, the Opportunistic Linked Increases Algorithm (Khalili, Gast, Popovic, Le Boudec,
//! "MPTCP is not Pareto-optimal: performance issues and a possible solution", ACM CoNEXT 2012,
//! §5, restated on the "OLIA" backup slide of seed 004), with the bookkeeping of Linux
//! `mptcp_olia.c`.
//!
//! For each ACK on path r in congestion avoidance, w_r grows by
//!
//!   (w_r / rtt_r²) / (Σ_p w_p / rtt_p)²  +  α_r / w_r       (segments per acknowledged segment)
//!
//! where, with ℓ_r the bytes acknowledged between the last two losses on r or since the last
//! one, whichever is larger, B = argmax_r ℓ_r / rtt_r² (the "best" paths), M = argmax_r w_r
//! (the paths of largest window) and P the coupled paths:
//! α_r = (1/|P|)/|B\M| for r ∈ B\M, α_r = −(1/|P|)/|M| for r ∈ M, both only when B\M ≠ ∅,
//! and 0 otherwise. The second term may be negative, so a path in M can shrink on an ACK.
//! A loss halves the path's window as Reno.
//!
//! Deviations from the reference:
//! - ℓ counts the bytes the host reports to [`CongestionControl::on_ack`], i.e. ACKs that arrive
//!   while the subflow is cwnd-limited and not in fast recovery; Linux advances its marker
//!   (`mptcp_loss3 = snd_una`) on every ACK that reaches `cong_avoid`, cwnd-limited or not.
//! - The window change is accumulated in bytes, as a float, keeping the remainder after each
//!   whole-segment step (Linux: a fixed-point counter scaled by 2¹⁰ that is zeroed at each step).
//! - With fewer than two coupled paths (usable, with an RTT estimate) the increase, which is then
//!   exactly 1/w, is applied through Reno's byte counter, so one subflow behaves exactly as Reno.
//! - Slow start hands the bytes left over at ssthresh to congestion avoidance (as Reno here);
//!   Linux OLIA drops them.
//! - Windows below one segment are floored at one SMSS on a decrease (as Linux), at two SMSS
//!   on a loss (the Reno helper here).

use serde::{Deserialize, Serialize};

use super::{
    additive_increase, coupled_paths_into, halve, slow_start, Ack, CcFactory, CongestionControl, CoupledPath, PeerView,
    Window,
};
use crate::registry::AlgorithmParams;
use crate::rng::Rng;
use crate::units::Time;

/// OLIA has no parameters (and no `cc_params` table).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct OliaParams;

impl AlgorithmParams for OliaParams {
    const NAME: &'static str = "olia";
    const TABLE: bool = false;
}

impl CcFactory for OliaParams {
    fn build(&self, _rng: Rng) -> Box<dyn CongestionControl> {
        Box::new(Olia::new())
    }
}

/// Tolerance (bytes) for whole-segment steps, so that float sums of exact per-ACK changes
/// reach them.
const STEP_SLACK: f64 = 1e-6;

#[derive(Clone, Copy, Debug, Default)]
struct PathState {
    /// Bytes acknowledged since the last loss (Linux `loss3 − loss2`).
    since_loss: u64,
    /// Bytes acknowledged between the last two losses (Linux `loss2 − loss1`).
    between_losses: u64,
    /// Window change not yet applied (bytes, signed).
    pending: f64,
}

impl PathState {
    /// ℓ_r (bytes).
    fn ell(&self) -> u64 {
        self.since_loss.max(self.between_losses)
    }
}

#[derive(Default)]
pub struct Olia {
    paths: Vec<PathState>,
    /// Scratch for the coupled paths of an ACK.
    coupled: Vec<CoupledPath>,
}

impl Olia {
    pub fn new() -> Olia {
        Olia::default()
    }

    fn path(&mut self, sf: usize) -> &mut PathState {
        if self.paths.len() <= sf {
            self.paths.resize(sf + 1, PathState::default());
        }
        &mut self.paths[sf]
    }

    /// ℓ of subflow `sf` (bytes).
    fn ell(&self, sf: usize) -> f64 {
        self.paths.get(sf).map_or(0, PathState::ell) as f64
    }

    /// α_r of path `sf` among `paths` (the case analysis of seed 004's OLIA slide).
    fn alpha(&self, paths: &[CoupledPath], sf: usize) -> f64 {
        let quality = |p: &CoupledPath| self.ell(p.sf) / (p.rtt * p.rtt);
        let best_q = paths.iter().map(quality).fold(f64::NEG_INFINITY, f64::max);
        let max_w = paths.iter().map(|p| p.w).fold(f64::NEG_INFINITY, f64::max);
        let in_m = |p: &CoupledPath| p.w == max_w;
        let in_b_not_m = |p: &CoupledPath| quality(p) == best_q && !in_m(p);
        let n_m = paths.iter().filter(|p| in_m(p)).count() as f64;
        let n_b_not_m = paths.iter().filter(|p| in_b_not_m(p)).count() as f64;
        let n_p = paths.len() as f64;
        let Some(me) = paths.iter().find(|p| p.sf == sf) else { return 0.0 };
        if n_b_not_m == 0.0 {
            0.0
        } else if in_b_not_m(me) {
            (1.0 / n_p) / n_b_not_m
        } else if in_m(me) {
            -(1.0 / n_p) / n_m
        } else {
            0.0
        }
    }

    /// The OLIA change of path `sf`'s window per acknowledged segment (segments, signed).
    fn increase(&self, paths: &[CoupledPath], sf: usize) -> f64 {
        let Some(me) = paths.iter().find(|p| p.sf == sf) else { return 0.0 };
        let sum: f64 = paths.iter().map(|p| p.w / p.rtt).sum();
        (me.w / (me.rtt * me.rtt)) / (sum * sum) + self.alpha(paths, sf) / me.w
    }
}

impl CongestionControl for Olia {
    fn name(&self) -> &'static str {
        OliaParams::NAME
    }

    fn on_ack(&mut self, ack: &Ack, w: &mut Window) {
        self.path(ack.sf).since_loss += ack.acked;
        let mut acked = ack.acked;
        if w.in_slow_start() {
            acked = slow_start(w, acked);
            if acked == 0 {
                return;
            }
        }
        let mut paths = std::mem::take(&mut self.coupled);
        coupled_paths_into(ack.peers, ack.sf, w.cwnd, &mut paths);
        let coupled = paths.len() >= 2 && paths.iter().any(|p| p.sf == ack.sf);
        let inc = coupled.then(|| self.increase(&paths, ack.sf));
        self.coupled = paths;
        let Some(inc) = inc else {
            let per = w.cwnd;
            additive_increase(w, acked, per);
            return;
        };
        let smss = w.smss as f64;
        let st = self.path(ack.sf);
        // Segments per acknowledged segment × acknowledged bytes = bytes.
        st.pending += inc * acked as f64;
        let steps = ((st.pending.abs() + STEP_SLACK) / smss).floor();
        if steps >= 1.0 {
            let bytes = steps as u64 * w.smss;
            if st.pending > 0.0 {
                w.cwnd += bytes;
                st.pending -= steps * smss;
            } else {
                w.cwnd = w.cwnd.saturating_sub(bytes).max(w.smss);
                st.pending += steps * smss;
            }
        }
    }

    fn ssthresh(&mut self, _now: Time, sf: usize, w: &Window, _peers: &[PeerView]) -> u64 {
        let st = self.path(sf);
        if st.since_loss > 0 {
            st.between_losses = st.since_loss;
            st.since_loss = 0;
        }
        st.pending = 0.0;
        halve(w)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::coupled_paths;
    use crate::cc::harness::*;

    /// An OLIA controller whose paths have seen `ell[i]` bytes between their last two losses.
    fn with_inter_loss(peers: &[PeerView], ell: &[u64]) -> Olia {
        let mut olia = Olia::new();
        for (sf, &bytes) in ell.iter().enumerate() {
            let mut scratch = window_of(&peers[sf]);
            olia.on_ack(&Ack { acked: bytes, ..ack(sf, peers) }, &mut scratch);
            olia.ssthresh(Time::ZERO, sf, &scratch, peers);
        }
        olia
    }

    #[test]
    fn per_ack_change_matches_the_paper_by_hand() {
        // w = (10, 20) pkts, rtt = (0.1, 0.2) s, ℓ = (50 000, 40 000) B.
        // ℓ/rtt² = 50 000/0.01 = 5e6 and 40 000/0.04 = 1e6 → B = {1}; M = {2}; |P| = 2;
        // B\M = {1} ≠ ∅ → α₁ = (1/2)/1 = 0.5, α₂ = −(1/2)/1 = −0.5.
        // Σ w/rtt = 10/0.1 + 20/0.2 = 200.
        // path 1: (10/0.01)/200² + 0.5/10 = 0.025 + 0.05 = 0.075
        // path 2: (20/0.04)/200² − 0.5/20 = 0.0125 − 0.025 = −0.0125
        let peers = [peer(10, 100), peer(20, 200)];
        let olia = with_inter_loss(&peers, &[50_000, 40_000]);
        let paths = coupled_paths(&peers, 0, peers[0].cwnd);
        assert!((olia.alpha(&paths, 0) - 0.5).abs() < 1e-12);
        assert!((olia.alpha(&paths, 1) + 0.5).abs() < 1e-12);
        assert!((olia.increase(&paths, 0) - 0.075).abs() < 1e-12);
        assert!((olia.increase(&paths, 1) + 0.0125).abs() < 1e-12);

        // And on_ack applies it. Path 2's own ACKs raise ℓ₂ by 1000 B each; after 160 of them
        // ℓ₂/rtt₂² = 160 000/0.04 = 4e6 is still below path 1's 5e6, so B and M do not move.
        let mut olia = with_inter_loss(&peers, &[50_000, 40_000]);
        let down = change_per_ack(&mut olia, 1, &peers, 160);
        assert!((down + 0.0125).abs() < 1e-9, "path 2: {down}");
        let up = change_per_ack(&mut olia, 0, &peers, 4000);
        assert!((up - 0.075).abs() < 1e-9, "path 1: {up}");
    }

    #[test]
    fn equal_paths_get_no_opportunistic_term() {
        // Same window, RTT and ℓ: B = M = both paths, B\M = ∅, α = 0; the increase is the
        // "optimal" term alone: (20/0.01)/(2·20/0.1)² = 2000/160 000 = 0.0125.
        let peers = [peer(20, 100), peer(20, 100)];
        let olia = with_inter_loss(&peers, &[30_000, 30_000]);
        let paths = coupled_paths(&peers, 0, peers[0].cwnd);
        for sf in 0..2 {
            assert_eq!(olia.alpha(&paths, sf), 0.0);
            assert!((olia.increase(&paths, sf) - 0.0125).abs() < 1e-12);
        }
    }

    #[test]
    fn the_larger_of_the_last_two_inter_loss_distances_counts() {
        let peers = [peer(10, 100), peer(20, 200)];
        let mut olia = with_inter_loss(&peers, &[50_000]);
        assert_eq!(olia.ell(0), 50_000.0);
        // 20 000 B since: ℓ stays at the previous interval's 50 000 B ...
        let mut w = window_of(&peers[0]);
        olia.on_ack(&Ack { acked: 20_000, ..ack(0, &peers) }, &mut w);
        assert_eq!(olia.ell(0), 50_000.0);
        // ... a loss makes the short interval the last one, but the one before still counts.
        olia.ssthresh(Time::ZERO, 0, &w, &peers);
        assert_eq!(olia.paths[0].between_losses, 20_000);
        olia.on_ack(&Ack { acked: 70_000, ..ack(0, &peers) }, &mut w);
        assert_eq!(olia.ell(0), 70_000.0);
    }

    #[test]
    fn a_loss_halves_the_window() {
        let peers = [peer(10, 100), peer(30, 100)];
        let mut olia = Olia::new();
        let w = window_of(&peers[1]);
        assert_eq!(olia.ssthresh(Time::ZERO, 1, &w, &peers), 15_000);
    }

    #[test]
    fn one_subflow_olia_is_reno() {
        assert_single_subflow_is_reno(&mut Olia::new());
    }
}
