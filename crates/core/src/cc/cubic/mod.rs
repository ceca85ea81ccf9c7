//! CUBIC (RFC 9438), uncoupled per subflow, computed as Linux `tcp_cubic.c` does.
//!
//! - Window curve (§4.2): W_cubic(t) = C·(t − K)³ + W_max with K = ∛((W_max − cwnd_epoch)/C),
//!   which is ∛(W_max(1 − β)/C) right after a loss; t runs from the first ACK of congestion
//!   avoidance after a reduction (the epoch) and the target is taken one minimum RTT ahead,
//!   W_cubic(t + min_rtt). Each ACK then grows cwnd by one segment per `cnt` acknowledged
//!   segments, cnt = cwnd / (target − cwnd), at least 2 (at most 1.5·cwnd per RTT, §4.2), and
//!   100·cwnd when the target is not above cwnd. Before the first loss (W_max unknown) cnt is
//!   at most 20 (+5 % per RTT), as Linux.
//! - Reno-friendly region (§4.3): W_est starts at cwnd with the epoch and grows by one segment
//!   per cwnd·(1 + β)/(3(1 − β)) bytes acknowledged, i.e. α_cubic = 3(1 − β)/(1 + β) segments
//!   per RTT; when W_est is above cwnd, cnt ≤ cwnd / (W_est − cwnd).
//! - Loss (§4.6, §4.7): ssthresh = β·cwnd (at least two segments); with fast convergence a
//!   loss below the previous W_max sets W_max = cwnd·(1 + β)/2, otherwise W_max = cwnd; the
//!   epoch ends.
//! - Idle restart: the epoch ends, so the curve restarts from the window after the idle period.
//! - A timeout resets all CUBIC state, W_max included, after ssthresh was computed from it
//!   (Linux `tcp_enter_loss`, then `cubictcp_state(TCP_CA_Loss)`;
//!   [`CongestionControl::set_loss_state`]).
//!
//! Deviations from the reference:
//! - HyStart (Ha & Rhee, 2011; Linux `hystart_update`) ends slow start early: `hystart.rs`,
//!   with its own deviations.
//! - Idle periods (`idle`): by default the epoch runs on through them and an idle restart
//!   ends it (Linux before 4.1); with `idle = "shift"` (the `linux` profile) every
//!   transmission that starts with nothing in flight moves the epoch's start forward by the
//!   time since the previous one, in whole 4 ms jiffies (`CONFIG_HZ` = 250 on the measured
//!   hosts), as Linux ≥ 4.1 does (`cubictcp_cwnd_event(CA_EVENT_TX_START)`; RFC 9438 §5.8).
//!   A subflow that idles between bursts, as one whose data-level window is full, then grows
//!   its window by the time it spent sending only.
//! - Real-valued K, target and cnt instead of Linux's fixed point and integer division
//!   (Linux's cube-root table has ≈0.2 % error); W_est's step uses the exact
//!   (1 + β)/(3(1 − β)) instead of Linux's truncated `beta_scale` (15/8 for β = 717/1024).
//! - The minimum RTT of the window growth is the host's `min_rtt` of the subflow (falling back
//!   to srtt, then 0); Linux uses its own `delay_min`, which HyStart keeps here as Linux does
//!   (every sample but those within 1 s of an epoch start).
//! - Linux's once-per-jiffy caching of `cnt` is not modelled (every ACK recomputes it).

mod hystart;

use serde::{Deserialize, Serialize};

use super::{additive_increase_gently, slow_start, Ack, CcFactory, CongestionControl, PeerView, Window};
use crate::registry::AlgorithmParams;
use crate::rng::Rng;
use crate::units::{jiffies_between, Dur, Seq, Time};
use hystart::HyStart;

/// CUBIC parameters (`cc_params.cubic`; RFC 9438 §4); the defaults are Linux `tcp_cubic.c`'s.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CubicParams {
    /// Multiplicative decrease factor β_cubic (dimensionless, strictly between 0 and 1);
    /// default Linux's 717/1024 ≈ 0.7.
    pub beta: f64,
    /// Cubic scaling constant C (segments per second³, > 0); default 0.4.
    pub c: f64,
    /// Fast convergence (RFC 9438 §4.7): a loss below the previous W_max lowers W_max further.
    pub fast_convergence: bool,
    /// Reno-friendly region (RFC 9438 §4.3): grow at least as an AIMD flow with the same β.
    pub tcp_friendliness: bool,
    /// HyStart (Ha & Rhee, 2011; Linux `hystart=1` with ACK-train and delay detection): leave
    /// slow start when a round's ACK train spans half the base RTT or its RTT rises clearly
    /// above the minimum, before the queue overflows.
    pub hystart: bool,
    /// What an idle period does to the curve's epoch ([`CubicIdle`]); default `restart`,
    /// `shift` in the `linux` profile.
    pub idle: CubicIdle,
}

impl Default for CubicParams {
    fn default() -> Self {
        CubicParams {
            beta: 717.0 / 1024.0,
            c: 0.4,
            fast_convergence: true,
            tcp_friendliness: true,
            hystart: true,
            idle: CubicIdle::Restart,
        }
    }
}

/// How CUBIC's congestion-avoidance epoch treats time a subflow spends with nothing in flight.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CubicIdle {
    /// The epoch runs on through idle periods and a new one starts at an idle restart
    /// (RFC 2861's window restart; Linux before 4.1).
    #[default]
    Restart,
    /// Each time the subflow sends with nothing in flight, the epoch's start moves forward by
    /// the time since its last transmission, counted in jiffies, so the curve does not count
    /// idle time; an idle restart leaves the epoch alone (Linux >= 4.1,
    /// `cubictcp_cwnd_event(CA_EVENT_TX_START)`).
    Shift,
}

impl AlgorithmParams for CubicParams {
    const NAME: &'static str = "cubic";
    const TABLE: bool = true;
    fn check(&self) -> Result<(), (&'static str, String)> {
        if !(self.beta > 0.0 && self.beta < 1.0) {
            return Err(("beta", format!("{} must lie strictly between 0 and 1", self.beta)));
        }
        if !(self.c > 0.0 && self.c.is_finite()) {
            return Err(("c", format!("{} must be > 0", self.c)));
        }
        Ok(())
    }
}

impl CcFactory for CubicParams {
    const UNCOUPLED: bool = true;
    fn build(&self, _rng: Rng) -> Box<dyn CongestionControl> {
        Box::new(Cubic::new(self))
    }
}

/// cnt when the target is not above cwnd (segments acknowledged per segment of increase, per
/// segment of cwnd): "very small increment".
const FLAT_CNT_PER_SEGMENT: f64 = 100.0;
/// Largest cnt before the first loss (Linux: +5 % per RTT while W_max is unknown).
const MAX_CNT_WITHOUT_WMAX: f64 = 20.0;
/// Smallest cnt: cwnd grows by at most half a segment per acknowledged segment.
const MIN_CNT: f64 = 2.0;

#[derive(Clone, Copy, Debug, Default)]
struct PathState {
    /// W_max (segments); 0 until the first loss.
    w_max: f64,
    /// Start of the current congestion-avoidance epoch; None = starts at the next ACK.
    epoch_start: Option<Time>,
    /// K (seconds).
    k: f64,
    /// The plateau of the current epoch's curve (segments; Linux `bic_origin_point`).
    origin: f64,
    /// Bytes acknowledged in this epoch not yet turned into W_est growth.
    ack_cnt: u64,
    /// W_est, the Reno-friendly window (bytes).
    w_est: u64,
    hystart: HyStart,
}

pub struct Cubic {
    p: CubicParams,
    paths: Vec<PathState>,
}

impl Cubic {
    /// `p.beta` must lie strictly between 0 and 1 and `p.c` be positive.
    pub fn new(p: &CubicParams) -> Cubic {
        Cubic { p: p.clone(), paths: Vec::new() }
    }

    #[inline]
    fn path(&mut self, sf: usize) -> &mut PathState {
        if self.paths.len() <= sf {
            self.paths.resize(sf + 1, PathState::default());
        }
        &mut self.paths[sf]
    }

    /// Linux `bictcp_update`: segments to acknowledge per one-segment increase.
    fn cnt(&mut self, sf: usize, now: Time, w: &Window, acked: u64, min_rtt: Dur) -> f64 {
        let CubicParams { beta, c, tcp_friendliness, .. } = self.p;
        let smss = w.smss as f64;
        let cwnd = w.cwnd as f64 / smss;
        let st = self.path(sf);
        st.ack_cnt += acked;
        let epoch = match st.epoch_start {
            Some(t) => t,
            None => {
                st.epoch_start = Some(now);
                st.ack_cnt = acked;
                st.w_est = w.cwnd;
                if st.w_max <= cwnd {
                    st.k = 0.0;
                    st.origin = cwnd;
                } else {
                    // RFC 9438 eq. 2 with the window the epoch starts from.
                    st.k = ((st.w_max - cwnd) / c).cbrt();
                    st.origin = st.w_max;
                }
                now
            }
        };
        // RFC 9438 eq. 1, one minimum RTT ahead.
        let t = now.since(epoch).secs_f64() + min_rtt.secs_f64();
        let target = st.origin + c * (t - st.k).powi(3);
        let mut cnt = if target > cwnd { cwnd / (target - cwnd) } else { FLAT_CNT_PER_SEGMENT * cwnd };
        if st.w_max == 0.0 {
            cnt = cnt.min(MAX_CNT_WITHOUT_WMAX);
        }
        if tcp_friendliness {
            // RFC 9438 eq. 4: W_est += α_cubic per cwnd of acknowledged bytes.
            let per_segment = ((w.cwnd as f64 * (1.0 + beta) / (3.0 * (1.0 - beta))) as u64).max(1);
            if st.ack_cnt > per_segment {
                let steps = (st.ack_cnt - 1) / per_segment;
                st.ack_cnt -= steps * per_segment;
                st.w_est += steps * w.smss;
            }
            if st.w_est > w.cwnd {
                let behind = (st.w_est - w.cwnd) as f64 / smss;
                cnt = cnt.min(cwnd / behind);
            }
        }
        cnt.max(MIN_CNT)
    }
}

impl CongestionControl for Cubic {
    fn name(&self) -> &'static str {
        CubicParams::NAME
    }

    fn on_ack(&mut self, ack: &Ack, w: &mut Window) {
        let mut acked = ack.acked;
        if w.in_slow_start() {
            acked = slow_start(w, acked);
            if acked == 0 {
                return;
            }
        }
        let min_rtt = ack.peers.get(ack.sf).and_then(|p| p.min_rtt.or(p.srtt)).unwrap_or(Dur::ZERO);
        let cnt = self.cnt(ack.sf, ack.now, w, acked, min_rtt);
        let per = ((cnt * w.smss as f64).round() as u64).max(1);
        additive_increase_gently(w, acked, per);
    }

    fn ssthresh(&mut self, _now: Time, sf: usize, w: &Window, _peers: &[PeerView]) -> u64 {
        let CubicParams { beta, fast_convergence, .. } = self.p;
        let cwnd = w.cwnd as f64 / w.smss as f64;
        let st = self.path(sf);
        st.epoch_start = None;
        st.w_max = if cwnd < st.w_max && fast_convergence { cwnd * (1.0 + beta) / 2.0 } else { cwnd };
        ((w.cwnd as f64 * beta) as u64).max(2 * w.smss)
    }

    fn on_idle_restart(&mut self, _now: Time, sf: usize) {
        // Linux >= 4.1 ignores `CA_EVENT_CWND_RESTART`: the idle time is taken out of the
        // epoch at the next transmission instead (`on_tx_start`).
        if self.p.idle == CubicIdle::Restart {
            self.path(sf).epoch_start = None;
        }
    }

    /// Linux `cubictcp_cwnd_event(CA_EVENT_TX_START)` with `idle = "shift"`: the epoch's start
    /// moves forward by the jiffies elapsed since the last transmission, never beyond now.
    fn on_tx_start(&mut self, now: Time, sf: usize, _app_limited: bool, last_sent: Time, _w: &mut Window) {
        if self.p.idle != CubicIdle::Shift {
            return;
        }
        let st = self.path(sf);
        let Some(epoch) = st.epoch_start else { return };
        let idle = jiffies_between(last_sent, now);
        if idle > Dur::ZERO {
            st.epoch_start = Some((epoch + idle).min(now));
        }
    }

    fn has_pkts_acked(&self) -> bool {
        true
    }

    /// Linux `cubictcp_acked`: every RTT sample updates the lowest RTT seen (but for the
    /// first second of a congestion-avoidance epoch, "right after fast recovery") and, in
    /// slow start, feeds HyStart, whether or not the window is in use.
    fn pkts_acked(&mut self, ack: &Ack, w: &mut Window) {
        let Some(rtt) = ack.rtt else { return };
        let st = self.path(ack.sf);
        if st.epoch_start.is_some_and(|e| ack.now.since(e) < Dur::from_secs(1)) {
            return;
        }
        let may_fire = st.hystart.on_rtt_sample(rtt);
        if self.p.hystart && may_fire && w.in_slow_start() {
            self.path(ack.sf).hystart.update(ack, rtt, w);
        }
    }

    /// Linux `cubictcp_state(TCP_CA_Loss)`: `bictcp_reset` clears all of CUBIC's state, W_max
    /// (after `ssthresh` used it: `tcp_enter_loss` asks for ssthresh first), the epoch, and
    /// HyStart's `found` and lowest RTT; `bictcp_hystart_reset` starts a round at the timeout.
    /// So the window after a timeout grows from the curve's plateau, capped at 5 % per RTT
    /// while W_max is unknown, and the slow start before it runs HyStart afresh.
    fn set_loss_state(&mut self, now: Time, sf: usize, snd_nxt: Seq) {
        *self.path(sf) = PathState { hystart: HyStart::restarted(now, snd_nxt), ..PathState::default() };
    }
}

#[cfg(test)]
mod tests;
