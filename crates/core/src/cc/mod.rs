//! Congestion control: one file per algorithm behind [`CongestionControl`].
//!
//! A controller is created per connection and drives the windows of all its subflows, but it
//! may change only the window of the subflow an event belongs to (`w: &mut Window`); the
//! others are visible through a read-only snapshot (`peers`), which is how coupled
//! algorithms (LIA, ...) see their siblings. The host decides *when* a controller is told
//! (only for ACKs that advance snd_una while the subflow is cwnd-limited and not in fast
//! recovery, as Linux's `tcp_cong_avoid` gate); the controller decides *how* to react.
//!
//! Windows are in bytes; `smss` is the subflow's sender MSS (payload bytes per full segment).
//!
//! A rate-based controller (Linux `tcp_congestion_ops.cong_control`: BBR) says so through
//! [`CongestionControl::rate_based`]. The host then estimates delivery rates (`tcp::rate`),
//! hands it every ACK with a rate sample ([`CongestionControl::cong_control`]) instead of the
//! gated `on_ack`, paces each subflow at [`CongestionControl::pacing_rate`] (`tcp::pacing`),
//! and, as Linux's `tcp_cong_control` and `tcp_end_cwnd_reduction` do for such controllers,
//! leaves PRR, the window reductions on loss and the idle restart out.
//!
//! Each controller's parameters live in its file, in a type that builds it ([`CcFactory`]);
//! the list below ([`CcKind`], [`CcConfig`], [`CcParams`]) registers it with the schema. A new
//! controller is one new file, its `pub mod` line and one line in that list.

pub mod balia;
pub mod bbr;
pub mod counting;
pub mod cubic;
pub mod input;
pub mod lia;
pub mod minmax;
pub mod olia;
pub mod reno;
pub mod wvegas;

use crate::cc::counting::{CaCounting, SlowStart, SlowStartBound};
use crate::registry::AlgorithmParams;
use crate::rng::Rng;
use crate::units::{Dur, Time};
pub use input::{CaState, RateSample};

/// The congestion state of the subflow an event belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    /// Congestion window (bytes).
    pub cwnd: u64,
    /// Slow-start threshold (bytes); `u64::MAX` = infinite.
    pub ssthresh: u64,
    /// Sender maximum segment size (bytes).
    pub smss: u64,
    /// Bytes acknowledged towards the next additive increase.
    pub cnt: u64,
    pub slow_start: SlowStart,
    pub ca_counting: CaCounting,
    pub bound: SlowStartBound,
}

impl Window {
    pub fn new(iw_segments: u64, smss: u64, slow_start: SlowStart, ca_counting: CaCounting) -> Window {
        Window {
            cwnd: iw_segments * smss,
            ssthresh: u64::MAX,
            smss,
            cnt: 0,
            slow_start,
            ca_counting,
            bound: SlowStartBound::Below,
        }
    }
    pub fn in_slow_start(&self) -> bool {
        match self.bound {
            SlowStartBound::Below => self.cwnd < self.ssthresh,
            SlowStartBound::AtOrBelow => self.cwnd <= self.ssthresh,
        }
    }
}

/// What a controller may read about one subflow of its connection.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PeerView {
    pub cwnd: u64,
    pub ssthresh: u64,
    pub smss: u64,
    pub srtt: Option<Dur>,
    /// Smallest RTT seen (the base RTT delay-based algorithms use).
    pub min_rtt: Option<Dur>,
    /// Most recent RTT sample.
    pub latest_rtt: Option<Dur>,
    /// Bytes in flight (RFC 6675 pipe).
    pub in_flight: u64,
    /// Established and allowed to send (Linux `mptcp_ccc_sk_can_send`).
    pub usable: bool,
}

/// Everything a controller is told about one ACK.
#[derive(Clone, Copy, Debug)]
pub struct Ack<'a> {
    pub now: Time,
    /// The subflow the ACK arrived on.
    pub sf: usize,
    /// Bytes newly acknowledged (cumulatively).
    pub acked: u64,
    /// RTT sample taken from this ACK, if any (Karn's rule applied).
    pub rtt: Option<Dur>,
    /// The subflow's cumulative ACK after this ACK, and its snd_nxt (round tracking, e.g.
    /// HyStart: a round ends when the ACK passes the snd_nxt recorded at its start).
    pub snd_una: crate::units::Seq,
    pub snd_nxt: crate::units::Seq,
    /// Snapshot of every subflow of the connection (index = subflow).
    pub peers: &'a [PeerView],
}

/// Everything a rate-based controller is told about one ACK (or, from
/// [`CongestionControl::on_rto`], about a retransmission timeout) on subflow `sf`.
#[derive(Clone, Copy, Debug)]
pub struct RateAck {
    pub now: Time,
    pub sf: usize,
    /// The ACK's rate sample (`tcp::rate`; Linux `struct rate_sample`).
    pub rs: RateSample,
    /// Bytes delivered on the subflow so far, and when that count last grew (Linux
    /// `delivered`, `delivered_mstamp`).
    pub delivered: u64,
    pub delivered_mstamp: Time,
    /// Bytes ever marked lost on the subflow (Linux `tp->lost`).
    pub lost: u64,
    /// Bytes in flight after the ACK (RFC 6675 pipe).
    pub in_flight: u64,
    /// The subflow's congestion state after the ACK.
    pub ca: CaState,
    pub srtt: Option<Dur>,
    /// Earliest departure of the subflow's next segment (pacing; Linux `tcp_wstamp_ns`).
    pub next_departure: Time,
}

pub trait CongestionControl {
    fn name(&self) -> &'static str;
    /// An ACK newly acknowledged bytes on subflow `ack.sf` while it may raise its window.
    fn on_ack(&mut self, ack: &Ack, w: &mut Window);
    /// Every ACK that acknowledged or SACKed data on subflow `ack.sf`, whether or not the
    /// window is in use and in any congestion state, before [`Self::on_ack`] (Linux
    /// `pkts_acked`, which `tcp_clean_rtx_queue` calls for each such ACK, where `cong_avoid`
    /// only runs while the window may grow); e.g. CUBIC's HyStart takes its RTT samples here.
    fn pkts_acked(&mut self, _ack: &Ack, _w: &mut Window) {}
    /// Whether [`Self::pkts_acked`] is implemented (not the trait's no-op): the host calls it
    /// only then, asking once per subflow when it creates it.
    fn has_pkts_acked(&self) -> bool {
        false
    }
    /// Subflow `sf` timed out and entered loss recovery with `snd_nxt` sent (Linux
    /// `tcp_set_ca_state(TCP_CA_Loss)` → `set_state`), after the host reduced its window;
    /// e.g. CUBIC restarts HyStart.
    fn set_loss_state(&mut self, _now: Time, _sf: usize, _snd_nxt: crate::units::Seq) {}
    /// A loss event (fast recovery or RTO) on subflow `sf`: the new ssthresh (bytes).
    fn ssthresh(&mut self, now: Time, sf: usize, w: &Window, peers: &[PeerView]) -> u64;
    /// The subflow restarted its window after idling (RFC 2861); e.g. CUBIC resets its epoch.
    fn on_idle_restart(&mut self, _now: Time, _sf: usize) {}
    /// Algorithm-specific coupling parameter, for time series (LIA's α).
    fn alpha(&self) -> Option<f64> {
        None
    }
    /// Linux `cong_control` is set: the controller sets the window and the pacing rate
    /// itself from rate samples, on every ACK (see the module documentation).
    fn rate_based(&self) -> bool {
        false
    }
    /// A rate-based controller's ACK, after loss detection (Linux `tcp_cong_control` →
    /// `cong_control`). Returns true to mark the subflow application-limited now (Linux
    /// controllers write `tp->app_limited`, e.g. BBR in PROBE_RTT).
    fn cong_control(&mut self, _ack: &RateAck, _w: &mut Window) -> bool {
        false
    }
    /// A rate-based controller's subflow timed out (Linux `set_state(TCP_CA_Loss)`), after the
    /// host set its window to one segment.
    fn on_rto(&mut self, _ack: &RateAck) {}
    /// The subflow sends data with nothing in flight (Linux `CA_EVENT_TX_START`, from
    /// `tcp_event_data_sent`); `app_limited`: it had run out of data; `last_sent`: its
    /// previous data transmission (`lsndtime`).
    fn on_tx_start(&mut self, _now: Time, _sf: usize, _app_limited: bool, _last_sent: Time, _w: &mut Window) {}
    /// Pacing rate of subflow `sf` (payload bytes per second); 0 = unpaced.
    fn pacing_rate(&self, _sf: usize) -> u64 {
        0
    }
}

crate::registry::algorithm_registry! {
    /// Congestion control algorithms, by the name scenarios give them (`cc = "lia"`).
    pub enum CcKind {
        /// Whether the controller runs each subflow on its own ([`CcFactory::UNCOUPLED`]), so
        /// that single-path TCP may use it.
        const UNCOUPLED: bool => fn uncoupled;
    }
    /// A congestion controller with its parameters: the configuration that builds it.
    pub enum CcConfig: CcFactory {
        /// The controller of one connection; `rng` is its own random stream.
        fn build(&self, rng: Rng) -> Box<dyn CongestionControl>;
    }
    /// Every controller's parameters: the schema's `cc_params`, one table per controller
    /// that has parameters (each read only by its own controller).
    pub struct CcParams;
    {
        /// Uncoupled Reno per subflow.
        Reno => reno::RenoParams,
        /// RFC 6356 Linked Increases.
        Lia => lia::LiaParams,
        /// CUBIC (RFC 9438), uncoupled per subflow.
        Cubic => cubic::CubicParams,
        /// Opportunistic Linked Increases (Khalili et al., CoNEXT 2012).
        Olia => olia::OliaParams,
        /// Balanced Linked Adaptation (Peng et al., IEEE/ACM ToN 2016).
        Balia => balia::BaliaParams,
        /// Weighted Vegas, delay-based (Cao, Xu, Fu, ICNP 2012).
        Wvegas => wvegas::WvegasParams,
        /// BBR v1 (Cardwell et al., ACM Queue 2016), uncoupled per subflow, as the Linux
        /// kernel's `tcp_bbr`, with delivery-rate estimation and pacing; the Linux backend
        /// runs the kernel's own.
        Bbr => bbr::BbrParams,
    }
}

/// A controller's parameters, which build it (the config-as-factory pattern, as quinn's
/// `ControllerFactory`): one type per controller, in the controller's file.
pub trait CcFactory: AlgorithmParams {
    /// Whether the controller runs each subflow on its own, without coupling; only such a
    /// controller may drive single-path TCP.
    const UNCOUPLED: bool = false;
    /// The controller of one connection; `rng` is its own random stream (BBR draws its first
    /// gain-cycle phase from it).
    fn build(&self, rng: Rng) -> Box<dyn CongestionControl>;
}

/// Builds the controller a connection's configuration names with its parameters.
pub fn build(kind: CcKind, params: &CcParams, rng: Rng) -> Box<dyn CongestionControl> {
    params.config(kind).build(rng)
}

/// One subflow as coupled algorithms (OLIA, BALIA) see it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CoupledPath {
    /// Subflow index.
    pub sf: usize,
    /// Congestion window (segments of that subflow's SMSS).
    pub w: f64,
    /// Smoothed RTT (seconds).
    pub rtt: f64,
}

/// The subflows coupled algorithms sum over: usable and with an RTT estimate (Linux
/// `mptcp_sk_can_send` and `srtt != 0`). Subflow `sf`'s window is taken from `own_cwnd`
/// (bytes), which may already be ahead of the snapshot within this ACK.
pub fn coupled_paths(peers: &[PeerView], sf: usize, own_cwnd: u64) -> Vec<CoupledPath> {
    let mut paths = Vec::new();
    coupled_paths_into(peers, sf, own_cwnd, &mut paths);
    paths
}

/// [`coupled_paths`] into `paths` (cleared first), for the per-ACK path: no allocation once
/// the buffer has grown to the number of subflows.
pub fn coupled_paths_into(peers: &[PeerView], sf: usize, own_cwnd: u64, paths: &mut Vec<CoupledPath>) {
    paths.clear();
    paths.extend(peers.iter().enumerate().filter(|(_, p)| p.usable && p.smss > 0).filter_map(|(i, p)| {
        let rtt = p.srtt?.secs_f64().max(1e-9);
        let cwnd = if i == sf { own_cwnd } else { p.cwnd };
        Some(CoupledPath { sf: i, w: cwnd as f64 / p.smss as f64, rtt })
    }));
}

/// Slow start (RFC 5681 §3.1) with the selected growth rule, never above ssthresh.
/// Returns the acknowledged bytes left over for congestion avoidance (Linux
/// `tcp_slow_start`).
pub fn slow_start(w: &mut Window, acked: u64) -> u64 {
    let inc = match w.slow_start {
        // Linux: cwnd += packets newly acknowledged — doubles per RTT.
        SlowStart::Linux => acked,
        // Classic: +1 SMSS per ACK — ψ = 1 + 1/b per round with delayed ACKs.
        SlowStart::PerAck => w.smss,
    };
    // Linux >= 4.3 stops slow start at ssthresh. Up to 4.2 the test is cwnd <= ssthresh and
    // `tcp_slow_start` ends at ssthresh + 1 segment: 3.18-4.2 cap a stretch ACK's bytes there
    // (`if (cwnd > tp->snd_ssthresh) cwnd = tp->snd_ssthresh + 1`), and before 3.18 the window
    // grows by one segment per ACK, so an ACK taken at cwnd = ssthresh takes it one step past.
    let cap = match w.bound {
        SlowStartBound::Below => w.ssthresh,
        SlowStartBound::AtOrBelow => w.ssthresh.saturating_add(w.smss),
    };
    let new = w.cwnd.saturating_add(inc).min(cap);
    let used = new - w.cwnd;
    w.cwnd = new;
    match w.slow_start {
        SlowStart::Linux => acked - used.min(acked),
        SlowStart::PerAck => {
            if used < inc {
                acked
            } else {
                0
            }
        }
    }
}

/// Additive increase: +1 SMSS per `per_increase` bytes acknowledged (Linux
/// `tcp_cong_avoid_ai` with w = per_increase / smss), counting bytes as RFC 3465 does.
pub fn additive_increase(w: &mut Window, acked: u64, per_increase: u64) {
    let per = per_increase.max(1);
    w.cnt += ai_credit(w, acked);
    if w.cnt >= per {
        let delta = w.cnt / per;
        w.cnt -= delta * per;
        w.cwnd += delta * w.smss;
    }
}

/// What an ACK of `acked` bytes adds to the additive-increase count `w.cnt`.
#[inline]
pub fn ai_credit(w: &Window, acked: u64) -> u64 {
    match w.ca_counting {
        CaCounting::Bytes => acked,
        // Linux <= 3.17: one count per ACK, whatever it acknowledged.
        CaCounting::PerAck => w.smss,
    }
}

/// [`additive_increase`] as Linux's `tcp_cong_avoid_ai` does it when `per_increase` can
/// shrink between ACKs (CUBIC, BALIA): credit accumulated while it was larger buys one
/// segment, not a burst.
pub fn additive_increase_gently(w: &mut Window, acked: u64, per_increase: u64) {
    if w.cnt >= per_increase.max(1) {
        w.cnt = 0;
        w.cwnd += w.smss;
    }
    additive_increase(w, acked, per_increase);
}

/// The Reno loss response: half the window, at least two segments.
pub fn halve(w: &Window) -> u64 {
    (w.cwnd / 2).max(2 * w.smss)
}

#[cfg(test)]
pub(crate) mod harness {
    //! Drives a controller with synthetic ACKs and losses (no network).
    use super::*;

    pub fn peer(cwnd_pkts: u64, rtt_ms: u64) -> PeerView {
        let rtt = Some(Dur::from_ms(rtt_ms));
        PeerView {
            cwnd: cwnd_pkts * 1000,
            ssthresh: 1,
            smss: 1000,
            srtt: rtt,
            min_rtt: rtt,
            latest_rtt: rtt,
            in_flight: cwnd_pkts * 1000,
            usable: true,
        }
    }

    /// An ACK of one full segment on `sf` at time zero.
    pub fn ack(sf: usize, peers: &[PeerView]) -> Ack<'_> {
        Ack {
            now: Time::ZERO,
            sf,
            acked: peers[sf].smss,
            rtt: peers[sf].latest_rtt,
            snd_una: Default::default(),
            snd_nxt: Default::default(),
            peers,
        }
    }

    pub fn window_of(p: &PeerView) -> Window {
        Window {
            cwnd: p.cwnd,
            ssthresh: p.ssthresh,
            smss: p.smss,
            cnt: 0,
            slow_start: SlowStart::Linux,
            ca_counting: CaCounting::Bytes,
            bound: SlowStartBound::Below,
        }
    }

    /// Drives `cc` and Reno side by side with one subflow through 5000 ACKs of varying size
    /// and a loss every 700 ACKs, asserting identical windows throughout.
    pub fn assert_single_subflow_is_reno(cc: &mut dyn CongestionControl) {
        let peers = [peer(17, 50)];
        let mut a = window_of(&peers[0]);
        let mut b = a;
        for i in 0..5000 {
            let ev = Ack { acked: 1000 + (i % 3) * 500, ..ack(0, &peers) };
            cc.on_ack(&ev, &mut a);
            reno::Reno.on_ack(&ev, &mut b);
            assert_eq!(a, b, "{} after {i} ACKs", cc.name());
            if i % 700 == 0 {
                let (x, y) = (cc.ssthresh(Time::ZERO, 0, &a, &peers), reno::Reno.ssthresh(Time::ZERO, 0, &b, &peers));
                assert_eq!(x, y, "{} loss response", cc.name());
                a.cwnd = x;
                b.cwnd = y;
            }
        }
    }

    /// Average window increase per full-segment ACK on `sf` (in segments), measured over
    /// `n` ACKs with the peers' windows held fixed.
    pub fn increase_per_ack(cc: &mut dyn CongestionControl, sf: usize, peers: &[PeerView], n: u64) -> f64 {
        let mut w = window_of(&peers[sf]);
        let start = w.cwnd;
        let mut total = 0;
        for _ in 0..n {
            w.cwnd = start; // keep the operating point fixed
            cc.on_ack(&ack(sf, peers), &mut w);
            total += w.cwnd - start;
        }
        total as f64 / w.smss as f64 / n as f64
    }

    /// Like [`increase_per_ack`], but signed, for algorithms that may shrink a window on an
    /// ACK (OLIA's paths of maximum window).
    pub fn change_per_ack(cc: &mut dyn CongestionControl, sf: usize, peers: &[PeerView], n: u64) -> f64 {
        let mut w = window_of(&peers[sf]);
        let start = w.cwnd;
        let mut total = 0i64;
        for _ in 0..n {
            w.cwnd = start;
            cc.on_ack(&ack(sf, peers), &mut w);
            total += w.cwnd as i64 - start as i64;
        }
        total as f64 / w.smss as f64 / n as f64
    }
}
