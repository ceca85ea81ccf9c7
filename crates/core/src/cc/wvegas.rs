//! wVegas, weighted Vegas (Cao, Xu, Fu, "Delay-based congestion control for multipath TCP",
//! IEEE ICNP 2012, §IV; draft-xu-mptcp-congestion-control-05), as Linux `mptcp_wvegas.c`
//! (multipath-tcp.org kernel) implements it.
//!
//! Once per round (one window of acknowledged data) each subflow compares its average RTT
//! sample of the round, rtt, with its base RTT and estimates its backlog in the bottleneck
//! queue, diff = ⌊w·(rtt − base_rtt)/rtt⌋ packets. A connection-wide backlog target α_total
//! is split between subflows by rate: weight_r = x_r / Σ x_k with x_r = w_r/rtt_r (measured when
//! the backlog reaches the subflow's α), α_r = max(2, ⌊weight_r·α_total⌋).
//! - In slow start, diff > γ ends slow start: cwnd = min(cwnd, w·base_rtt/rtt + 1 segment),
//!   ssthresh below it; otherwise slow start proceeds on every ACK.
//! - In congestion avoidance: diff > α_r → cwnd −1 segment (and ssthresh below it);
//!   diff < α_r → +1 segment; equal → hold. Queue drain: the smallest queueing delay
//!   rtt − base_rtt seen is remembered; when the current one is at least twice that,
//!   cwnd ← cwnd·base_rtt/(2·rtt) and the memory is cleared.
//! - At the end of such a round cwnd ≥ 2 segments and ssthresh ≥ ¾·cwnd (Linux
//!   `tcp_current_ssthresh`). A round with at most two RTT samples falls back to one Reno step.
//! - A loss halves the window as Reno; the next ACK restarts wVegas (α, weight and rate back
//!   to their initial values: Linux re-enables wVegas on returning to `TCP_CA_Open`).
//!
//! Deviations from the reference:
//! - Rounds are counted in acknowledged bytes (a round ends once the window at its start has
//!   been acknowledged) instead of Linux's `snd_nxt` marker; the host only reports ACKs that
//!   arrive while the subflow is cwnd-limited and not in recovery.
//! - base_rtt is the host's `min_rtt` of the subflow over its lifetime; Linux keeps its own
//!   minimum (of samples + 1 µs) and resets it on an idle restart.
//! - The queue drain does not fire when the queueing delay is zero: Linux's test
//!   `q_delay >= 2·queue_delay` holds for 0 ≥ 0 and would halve an unqueued subflow's window
//!   every round (a case real RTT jitter hides but a simulator's constant delays do not).
//! - The weight sums the rates of the usable subflows that have measured one since their last
//!   (re)start; Linux sums those with an RTT sample in their current round.
//! - Rates are in bytes/s (Linux: packets/µs in 2¹⁶ fixed point); the minimum α of 2 packets
//!   is Linux's constant.

use serde::{Deserialize, Serialize};

use super::{halve, reno::Reno, slow_start, Ack, CcFactory, CongestionControl, PeerView, Window};
use crate::registry::AlgorithmParams;
use crate::rng::Rng;
use crate::units::{Dur, Time};

/// wVegas parameters (`cc_params.wvegas`); the defaults are Linux `mptcp_wvegas.c`'s module
/// parameters.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct WvegasParams {
    /// Total backlog target α_total over all subflows (packets), split by rate weights.
    pub alpha_total: u64,
    /// Per-subflow α before weights are known and after each loss (packets).
    pub alpha_initial: u64,
    /// Slow start ends once the backlog exceeds γ (packets).
    pub gamma: u64,
}

impl Default for WvegasParams {
    fn default() -> Self {
        WvegasParams { alpha_total: 10, alpha_initial: 2, gamma: 1 }
    }
}

impl AlgorithmParams for WvegasParams {
    const NAME: &'static str = "wvegas";
    const TABLE: bool = true;
    fn check(&self) -> Result<(), (&'static str, String)> {
        if self.alpha_total == 0 || self.alpha_initial == 0 {
            return Err(("", "alpha_total and alpha_initial must be >= 1 packet".into()));
        }
        Ok(())
    }
}

impl CcFactory for WvegasParams {
    fn build(&self, _rng: Rng) -> Box<dyn CongestionControl> {
        Box::new(Wvegas::new(self))
    }
}

/// Smallest per-subflow α (packets; Linux's `max(2U, …)`).
const MIN_ALPHA: u64 = 2;

#[derive(Clone, Copy, Debug, Default)]
struct PathState {
    /// Restart wVegas (initial α, weight, rate; new round) at the next ACK.
    restart: bool,
    /// Bytes acknowledged in the current round.
    round_acked: u64,
    /// Length of the current round (bytes: the window when it began); None = not begun.
    round_len: Option<u64>,
    /// RTT samples in this round and their sum.
    cnt_rtt: u64,
    sampled_rtt: Dur,
    /// Sending rate measured when the backlog last reached α (bytes/s; 0 = none yet).
    instant_rate: f64,
    /// Share of the connection's rate (0..=1).
    weight: f64,
    /// Backlog target α_r (packets).
    alpha: u64,
    /// Smallest queueing delay seen since the last drain (zero = none yet).
    queue_delay: Dur,
}

pub struct Wvegas {
    p: WvegasParams,
    paths: Vec<PathState>,
}

impl Wvegas {
    pub fn new(p: &WvegasParams) -> Wvegas {
        Wvegas { p: p.clone(), paths: Vec::new() }
    }

    /// Linux `wvegas_enable`.
    fn fresh(&self) -> PathState {
        PathState { alpha: self.p.alpha_initial, weight: 1.0, ..PathState::default() }
    }

    fn path(&mut self, sf: usize) -> &mut PathState {
        while self.paths.len() <= sf {
            let st = self.fresh();
            self.paths.push(st);
        }
        if self.paths[sf].restart {
            self.paths[sf] = self.fresh();
        }
        &mut self.paths[sf]
    }

    /// Linux `mptcp_wvegas_weight`: this subflow's share of the measured rates.
    fn weight(&self, sf: usize, peers: &[PeerView]) -> f64 {
        let total: f64 = self
            .paths
            .iter()
            .enumerate()
            .filter(|(i, st)| peers.get(*i).is_some_and(|p| p.usable) && !st.restart)
            .map(|(_, st)| st.instant_rate)
            .sum();
        let me = &self.paths[sf];
        if total > 0.0 && me.instant_rate > 0.0 {
            me.instant_rate / total
        } else {
            me.weight
        }
    }

    /// The once-per-round update (Linux `mptcp_wvegas_cong_avoid` past `beg_snd_nxt`).
    fn end_of_round(&mut self, ack: &Ack, w: &mut Window, base_rtt: Option<Dur>) {
        let sf = ack.sf;
        let st = self.paths[sf];
        if st.cnt_rtt <= 2 {
            Reno.on_ack(ack, w);
            return;
        }
        let rtt = Dur(st.sampled_rtt.ns() / st.cnt_rtt);
        let base = base_rtt.map_or(rtt, |b| b.min(rtt));
        let q_delay = rtt.saturating_sub(base);
        let rtt_f = rtt.ns().max(1) as f64;
        let cwnd_pkts = w.cwnd as f64 / w.smss as f64;
        let diff = (cwnd_pkts * q_delay.ns() as f64 / rtt_f).floor() as u64;
        if w.in_slow_start() {
            if diff > self.p.gamma {
                let target = (w.cwnd as f64 * base.ns() as f64 / rtt_f) as u64;
                w.cwnd = w.cwnd.min(target + w.smss);
                w.ssthresh = w.ssthresh.min(w.cwnd.saturating_sub(w.smss));
            } else {
                slow_start(w, ack.acked);
            }
        } else {
            if diff >= st.alpha {
                self.paths[sf].instant_rate = w.cwnd as f64 / rtt.secs_f64().max(1e-9);
                let weight = self.weight(sf, ack.peers);
                let st = &mut self.paths[sf];
                st.weight = weight;
                st.alpha = ((weight * self.p.alpha_total as f64) as u64).max(MIN_ALPHA);
            }
            let st = &mut self.paths[sf];
            if diff > st.alpha {
                w.cwnd = w.cwnd.saturating_sub(w.smss);
                w.ssthresh = w.ssthresh.min(w.cwnd.saturating_sub(w.smss));
            } else if diff < st.alpha {
                w.cwnd += w.smss;
            }
            // Drain the queue if the queueing delay doubled since its minimum.
            if st.queue_delay == Dur::ZERO || st.queue_delay > q_delay {
                st.queue_delay = q_delay;
            }
            if q_delay > Dur::ZERO && q_delay.ns() >= 2 * st.queue_delay.ns() {
                w.cwnd = (w.cwnd as f64 * base.ns() as f64 / (2.0 * rtt_f)) as u64;
                st.queue_delay = Dur::ZERO;
            }
        }
        w.cwnd = w.cwnd.max(2 * w.smss);
        // Linux `tcp_current_ssthresh` in the Open state.
        w.ssthresh = w.ssthresh.max(w.cwnd / 2 + w.cwnd / 4);
    }
}

impl CongestionControl for Wvegas {
    fn name(&self) -> &'static str {
        WvegasParams::NAME
    }

    fn on_ack(&mut self, ack: &Ack, w: &mut Window) {
        let base_rtt = ack.peers.get(ack.sf).and_then(|p| p.min_rtt);
        let st = self.path(ack.sf);
        if let Some(r) = ack.rtt {
            st.sampled_rtt += r;
            st.cnt_rtt += 1;
        }
        st.round_acked += ack.acked;
        let round_over = match st.round_len {
            None => {
                st.round_len = Some(w.cwnd);
                false
            }
            Some(len) => st.round_acked >= len,
        };
        if !round_over {
            if w.in_slow_start() {
                slow_start(w, ack.acked);
            }
            return;
        }
        self.end_of_round(ack, w, base_rtt);
        let st = &mut self.paths[ack.sf];
        st.cnt_rtt = 0;
        st.sampled_rtt = Dur::ZERO;
        st.round_acked = 0;
        st.round_len = Some(w.cwnd);
    }

    fn ssthresh(&mut self, _now: Time, sf: usize, w: &Window, _peers: &[PeerView]) -> u64 {
        let st = self.path(sf);
        st.instant_rate = 0.0;
        st.restart = true;
        halve(w)
    }

    fn on_idle_restart(&mut self, _now: Time, sf: usize) {
        self.path(sf).restart = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::harness::*;

    fn queued(cwnd_pkts: u64, base_ms: u64, rtt_ms: u64) -> PeerView {
        PeerView {
            min_rtt: Some(Dur::from_ms(base_ms)),
            latest_rtt: Some(Dur::from_ms(rtt_ms)),
            ..peer(cwnd_pkts, rtt_ms)
        }
    }

    /// Feeds full-segment ACKs on `sf` until one round ends (the window changes or a round's
    /// worth of bytes has been acknowledged); returns the window after it.
    fn one_round(cc: &mut Wvegas, sf: usize, peers: &[PeerView], w: &mut Window) -> u64 {
        let len = w.cwnd;
        let mut acked = 0;
        while acked < len + w.smss {
            let before = w.cwnd;
            cc.on_ack(&ack(sf, peers), w);
            acked += w.smss;
            if w.cwnd != before {
                break;
            }
        }
        w.cwnd
    }

    #[test]
    fn without_queueing_the_window_grows_one_segment_per_round() {
        // base_rtt = rtt → diff = 0 < α: +1 segment at the end of each round.
        let peers = [peer(20, 100)];
        let mut cc = Wvegas::new(&WvegasParams::default());
        let mut w = window_of(&peers[0]);
        for expected in 21..=30 {
            assert_eq!(one_round(&mut cc, 0, &peers, &mut w), expected * 1000);
        }
    }

    #[test]
    fn a_backlog_above_alpha_shrinks_the_window_to_the_target() {
        // 30 pkts, base 100 ms, rtt 200 ms: diff = 30·100/200 = 15 ≥ α = 2, so α is
        // re-weighted: one subflow has weight 1, α = α_total = 10; 15 > 10 → −1 segment.
        // It keeps shrinking while ⌊w/2⌋ > 10 and holds at w = 21 (diff = 10 = α).
        let peers = [queued(30, 100, 200)];
        let mut cc = Wvegas::new(&WvegasParams::default());
        let mut w = window_of(&peers[0]);
        assert_eq!(one_round(&mut cc, 0, &peers, &mut w), 29_000);
        assert_eq!(cc.paths[0].alpha, 10);
        for _ in 0..20 {
            one_round(&mut cc, 0, &peers, &mut w);
        }
        assert_eq!(w.cwnd, 21_000);
    }

    #[test]
    fn alpha_total_is_split_by_rate() {
        // Subflow 0: 40 pkts over 200 ms (rate 200 pkt/s), subflow 1: 20 pkts over 200 ms
        // (100 pkt/s), both with base 100 ms. Subflow 0 measures first and alone: weight 1,
        // α₀ = 10. Subflow 1: weight 100/300, α₁ = ⌊10/3⌋ = 3. Subflow 0 again (now 39 pkts,
        // 195 pkt/s): weight 195/295, α₀ = ⌊6.6⌋ = 6.
        let peers = [queued(40, 100, 200), queued(20, 100, 200)];
        let mut cc = Wvegas::new(&WvegasParams::default());
        let mut w0 = window_of(&peers[0]);
        let mut w1 = window_of(&peers[1]);
        one_round(&mut cc, 0, &peers, &mut w0);
        assert_eq!(cc.paths[0].alpha, 10);
        one_round(&mut cc, 1, &peers, &mut w1);
        assert_eq!(cc.paths[1].alpha, 3);
        one_round(&mut cc, 0, &peers, &mut w0);
        assert_eq!(cc.paths[0].alpha, 6);
    }

    #[test]
    fn queueing_ends_slow_start_near_the_target_window() {
        // Slow start from 40 segments, rtt 110 ms over a 100 ms base. The first round ends at
        // the 40th ACK with cwnd = 40 + 39 = 79 segments (each ACK added its bytes):
        // diff = ⌊79·10/110⌋ = 7 > γ = 1 → cwnd = ⌊79 000·100/110⌋ + 1000 = 72 818 B, and
        // ssthresh = 71 818 B ends slow start.
        let peers = [queued(40, 100, 110)];
        let mut cc = Wvegas::new(&WvegasParams::default());
        let mut w = Window { ssthresh: u64::MAX, ..window_of(&peers[0]) };
        for _ in 0..40 {
            cc.on_ack(&ack(0, &peers), &mut w);
        }
        assert_eq!((w.cwnd, w.ssthresh), (72_818, 71_818));
        assert!(!w.in_slow_start());
    }

    #[test]
    fn a_loss_halves_and_restarts_the_weights() {
        let peers = [queued(30, 100, 200)];
        let mut cc = Wvegas::new(&WvegasParams::default());
        let mut w = window_of(&peers[0]);
        one_round(&mut cc, 0, &peers, &mut w);
        assert_eq!(cc.ssthresh(Time::ZERO, 0, &w, &peers), 14_500);
        cc.on_ack(&ack(0, &peers), &mut w);
        assert_eq!(cc.paths[0].alpha, 2);
        assert_eq!(cc.paths[0].weight, 1.0);
    }
}
