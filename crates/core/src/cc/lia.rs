//! LIA, the Linked Increases Algorithm (RFC 6356 §3, "coupled" in Linux MPTCP).
//!
//! For each ACK on subflow i acknowledging `acked` bytes in congestion avoidance:
//! cwnd_i += min(α·acked·MSS_i / cwnd_total, acked·MSS_i / cwnd_i), with
//! α = cwnd_total · max_i(cwnd_i / rtt_i²) / (Σ_i cwnd_i / rtt_i)², over the established
//! subflows with an RTT estimate. Implemented as the reference Linux code does
//! (`mptcp_coupled.c`): +1 MSS once max(cwnd_total/α, cwnd_i) bytes have been acknowledged.
//! Losses halve the subflow's window as Reno.
//!
//! α update policy (`alpha_update`):
//! - `per_rtt` (reference Linux, the slowness seed 000 §V-B analyses): α is recomputed at
//!   every ACK in slow start, when a subflow's window grows by one MSS in congestion
//!   avoidance (≈ once per RTT of that subflow), and at the first ACK after a loss; it is
//!   shared by all subflows in between.
//! - `per_ack`: recomputed before every increase.
//!
//! Deviations: byte counting (RFC 6356 in bytes) instead of Linux 3.x's one count per ACK;
//! floating-point α instead of Linux's fixed-point scaling.

use serde::{Deserialize, Serialize};

use super::{additive_increase, ai_credit, halve, slow_start, Ack, CcFactory, CongestionControl, PeerView, Window};
use crate::registry::AlgorithmParams;
use crate::rng::Rng;
use crate::units::Time;

/// LIA's parameters (`cc_params.lia`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LiaParams {
    #[serde(default)]
    pub alpha_update: AlphaUpdate,
}

/// When LIA recomputes α.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum AlphaUpdate {
    /// As the reference Linux implementation: on a whole-MSS window increase (≈ once per
    /// RTT in congestion avoidance), during slow start, and after a loss.
    #[default]
    PerRtt,
    /// On every ACK.
    PerAck,
}

impl AlgorithmParams for LiaParams {
    const NAME: &'static str = "lia";
    const TABLE: bool = true;
}

impl CcFactory for LiaParams {
    fn build(&self, _rng: Rng) -> Box<dyn CongestionControl> {
        Box::new(Lia::new(self.alpha_update))
    }
}

pub struct Lia {
    alpha: f64,
    update: AlphaUpdate,
    forced: bool,
    /// The last bound cwnd_total / α computed: (cwnd_total, α's bits, bound). Both change
    /// far less often than ACKs arrive, and the bound is a function of them alone.
    bound: Option<(u64, u64, u64)>,
}

impl Lia {
    pub fn new(update: AlphaUpdate) -> Lia {
        Lia { alpha: 1.0, update, forced: true, bound: None }
    }

    /// cwnd_total / α in bytes (the acknowledged bytes that buy one MSS on every subflow
    /// before the TCP cap), recomputed only when the total or α changed.
    fn bound(&mut self, total: u64) -> u64 {
        let bits = self.alpha.to_bits();
        match self.bound {
            Some((t, a, bound)) if (t, a) == (total, bits) => bound,
            _ => {
                let bound = (total as f64 / self.alpha.max(1e-12)) as u64;
                self.bound = Some((total, bits, bound));
                bound
            }
        }
    }

    /// RFC 6356 α over the usable subflows (1 when fewer than two can send).
    pub fn compute_alpha(peers: &[PeerView]) -> f64 {
        let mut total = 0.0;
        let mut best = 0.0f64;
        let mut sum = 0.0;
        let mut n = 0;
        for p in peers.iter().filter(|p| p.usable) {
            let Some(rtt) = p.srtt else { continue };
            let r = rtt.secs_f64().max(1e-9);
            let w = p.cwnd as f64;
            total += w;
            best = best.max(w / (r * r));
            sum += w / r;
            n += 1;
        }
        if n < 2 || sum == 0.0 {
            1.0
        } else {
            total * best / (sum * sum)
        }
    }
}

impl CongestionControl for Lia {
    fn name(&self) -> &'static str {
        LiaParams::NAME
    }

    fn on_ack(&mut self, ack: &Ack, w: &mut Window) {
        let peers = ack.peers;
        let mut acked = ack.acked;
        if w.in_slow_start() {
            acked = slow_start(w, acked);
            self.alpha = Lia::compute_alpha(peers);
            if acked == 0 {
                return;
            }
        }
        if self.forced || self.update == AlphaUpdate::PerAck {
            self.alpha = Lia::compute_alpha(peers);
            self.forced = false;
        }
        // The increase needs max(cwnd_total/α, cwnd_i) bytes counted: while fewer than
        // cwnd_i are, there is none whatever the other subflows' windows, so they are not
        // summed (the count grows as `additive_increase` would grow it).
        let credit = ai_credit(w, acked);
        if w.cnt + credit < w.cwnd {
            w.cnt += credit;
            return;
        }
        let (usable, total) = peers
            .iter()
            .filter(|p| p.usable && p.srtt.is_some())
            .fold((0usize, 0u64), |(n, total), p| (n + 1, total + p.cwnd));
        let per = if usable > 1 { self.bound(total).max(w.cwnd) } else { w.cwnd };
        let before = w.cwnd;
        additive_increase(w, acked, per);
        if w.cwnd > before && self.update == AlphaUpdate::PerRtt {
            self.alpha = Lia::compute_alpha(peers);
        }
    }

    fn ssthresh(&mut self, _now: Time, _sf: usize, w: &Window, _peers: &[PeerView]) -> u64 {
        self.forced = true;
        halve(w)
    }

    fn alpha(&self) -> Option<f64> {
        Some(self.alpha)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::harness::*;

    #[test]
    fn alpha_and_increase_match_rfc6356_by_hand() {
        // w = (10, 20) pkts, rtt = (100, 200) ms: max w/rtt² = max(1000, 500) = 1000;
        // Σ w/rtt = 100 + 100 = 200; α = 30 · 1000 / 200² = 0.75.
        let peers = [peer(10, 100), peer(20, 200)];
        assert!((Lia::compute_alpha(&peers) - 0.75).abs() < 1e-12);
        // Per ACK: min(α/w_total, 1/w_i) = min(0.75/30, 1/10 | 1/20) = 0.025 on both paths.
        for sf in 0..2 {
            let mut lia = Lia::new(AlphaUpdate::PerAck);
            let inc = increase_per_ack(&mut lia, sf, &peers, 4000);
            assert!((inc - 0.025).abs() < 0.001, "path {sf}: {inc}");
        }
    }

    #[test]
    fn the_tcp_cap_binds_on_the_slow_large_window_path() {
        // w = (10, 40), rtt = (10, 200) ms: α = 50·max(10/1e-4, 40/0.04)/(1000+200)² = 3.47;
        // α/w_total = 0.0694 > 1/w₂ = 0.025, so path 2 grows as a TCP would: 1/40.
        let peers = [peer(10, 10), peer(40, 200)];
        let alpha = Lia::compute_alpha(&peers);
        assert!((alpha - 50.0 * 100_000.0 / 1_440_000.0).abs() < 1e-9);
        let mut lia = Lia::new(AlphaUpdate::PerAck);
        let inc = increase_per_ack(&mut lia, 1, &peers, 4000);
        assert!((inc - 1.0 / 40.0).abs() < 0.001, "{inc}");
    }

    #[test]
    fn one_subflow_lia_is_reno() {
        assert_single_subflow_is_reno(&mut Lia::new(AlphaUpdate::PerRtt));
    }

    #[test]
    fn seed000_eq12_increment_efficiency() {
        // Flow 1 is the better path (w₁/R₁² largest). β = w₂/w₁ = 2, γ = R₂/R₁ from 2 to 8:
        // α = (1+β)·1/(1+β/γ)², and flow 1's increase per ACK is α/w = 1/(1+β/γ)² · 1/w₁.
        for gamma in [2.0f64, 3.0, 4.0, 6.0, 8.0] {
            let (w1, r1) = (10u64, 50u64);
            let peers = [peer(w1, r1), peer(2 * w1, (gamma * r1 as f64) as u64)];
            let mut lia = Lia::new(AlphaUpdate::PerAck);
            let inc = increase_per_ack(&mut lia, 0, &peers, 4000);
            let want = 1.0 / (1.0 + 2.0 / gamma).powi(2) / w1 as f64;
            assert!((inc - want).abs() < 0.02 * want + 0.0005, "γ={gamma}: {inc} vs {want}");
        }
    }
}
