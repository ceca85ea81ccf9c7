//! BBR v1 (Cardwell, Cheng, Gunn, Hassas Yeganeh, Jacobson, "BBR: Congestion-Based Congestion
//! Control", ACM Queue 14(5), 2016; draft-cardwell-iccrg-bbr-congestion-control-00), computed as
//! Linux `net/ipv4/tcp_bbr.c` does, uncoupled: one independent instance per subflow, as Linux
//! MPTCP runs it (the subflow's own `tcp_congestion_ops`).
//!
//! The model is a windowed maximum of the delivery rate (`bw`, over 10 round trips) and a
//! windowed minimum RTT (`min_rtt`, over 10 s). The sender paces at `pacing_gain × bw` and
//! caps its window at `cwnd_gain × bw × min_rtt` plus a quantization budget. Modes:
//! - STARTUP: both gains 2/ln 2 (Linux's fixed point 739/256 ≈ 2.887) until the pipe is full:
//!   3 rounds in a row without 25 % growth of `bw`;
//! - DRAIN: pacing gain ln 2 / 2 (88/256) until what is in flight is at most one BDP;
//! - PROBE_BW: pacing gain cycles through 5/4, 3/4, 1, 1, 1, 1, 1, 1 (one phase per
//!   min_rtt), starting at a random phase other than 3/4; cwnd gain 2;
//! - PROBE_RTT: when `min_rtt` has not been refreshed for 10 s, cwnd drops to 4 segments for
//!   max(200 ms, one round), then back to the mode the pipe's state calls for.
//!
//! Linux's long-term bandwidth sampling (`bbr_lt_bw_sampling`, policer detection: `lt.rs`)
//! and its ACK-aggregation allowance (`bbr_update_ack_aggregation`, extra cwnd for ACKs that
//! arrive in bursts: `aggregation.rs`) are implemented; both are part of the kernel's
//! `tcp_bbr` that runs on the Linux backend. `window.rs` turns the model into the pacing rate
//! and the window.
//!
//! Units: windows and counters are handed over in bytes and turned into segments of `smss`
//! (Linux counts packets; the simulator sends one segment per packet); `bw` is in payload
//! bytes per second; gains use Linux's fixed point (`BBR_UNIT` = 256) so that every rounding
//! is the kernel's.
//!
//! Deviations from the reference:
//! - the quantization budget is Linux's `bbr_tso_segs_goal` (3 × the TSO burst the kernel
//!   would build at this pacing rate: about 1 ms of data, at least 2 segments, 1 below
//!   1.2 Mbit/s): the simulator paces single segments, but keeps the kernel's window
//!   headroom so that windows match the kernel's (the headroom also absorbs delayed ACKs);
//! - times are the engine's nanoseconds (Linux: microseconds, and jiffies for the min_rtt
//!   filter and PROBE_RTT's 200 ms);
//! - the RTT sample is the host's Karn-filtered sample of the ACK (Linux: the RTT of the most
//!   recently sent newly delivered skb, falling back to timestamps); `is_ack_delayed` is not
//!   known, so an expired min_rtt filter accepts any sample;
//! - no undo (`bbr_undo_cwnd`): the simulator has no D-SACK/undo;
//! - the first segments are paced only after the first ACK (Linux sets the initial pacing rate
//!   at connection set-up; the pacer lets the first 10 segments go unpaced anyway, so with
//!   the default initial window of 10 nothing changes);
//! - the random start phase of PROBE_BW is drawn from the connection's seeded stream
//!   (`cc:<connection>:<side>`), so runs are reproducible.
//! - when PROBE_RTT ends at a restart from idle (`bbr_cwnd_event`), a new PROBE_BW phase is
//!   timed from that moment (Linux: from the last delivery, `delivered_mstamp`, which the
//!   controller is not told there).

mod aggregation;
mod lt;
mod window;

use serde::{Deserialize, Serialize};

use super::minmax::MinMax;
use super::{CcFactory, CongestionControl, PeerView, RateAck, Window};
use crate::cc::CaState;
use crate::registry::AlgorithmParams;
use crate::rng::Rng;
use crate::units::{Dur, Time};

/// Fixed-point unit of gains (Linux `BBR_UNIT`).
const UNIT: u64 = 256;
/// STARTUP gain 2/ln 2 (Linux `bbr_high_gain` = 256 · 2885 / 1000 + 1).
const HIGH_GAIN: u64 = UNIT * 2885 / 1000 + 1;
/// DRAIN pacing gain, the inverse of the high gain (Linux `bbr_drain_gain`).
const DRAIN_GAIN: u64 = UNIT * 1000 / 2885;
/// PROBE_BW cwnd gain (Linux `bbr_cwnd_gain`).
const CWND_GAIN: u64 = UNIT * 2;
/// The PROBE_BW pacing-gain cycle (Linux `bbr_pacing_gain`).
pub const PACING_GAIN: [u64; 8] = [UNIT * 5 / 4, UNIT * 3 / 4, UNIT, UNIT, UNIT, UNIT, UNIT, UNIT];
/// Phases the random start may skip (Linux `bbr_cycle_rand`).
const CYCLE_RAND: u64 = 7;
/// Window of the bandwidth filter (round trips; Linux `bbr_bw_rtts` = cycle length + 2).
const BW_RTTS: u64 = PACING_GAIN.len() as u64 + 2;
/// Window of the min_rtt filter (Linux `bbr_min_rtt_win_sec`).
const MIN_RTT_WIN: Dur = Dur(10_000_000_000);
/// Time spent at the minimum window in PROBE_RTT (Linux `bbr_probe_rtt_mode_ms`).
const PROBE_RTT_TIME: Dur = Dur(200_000_000);
/// Minimum window (segments; Linux `bbr_cwnd_min_target`).
const CWND_MIN_TARGET: u64 = 4;
/// Full-pipe detection: growth below 5/4 for 3 rounds (Linux `bbr_full_bw_thresh`, `_cnt`).
const FULL_BW_THRESH: u64 = UNIT * 5 / 4;
const FULL_BW_CNT: u32 = 3;
/// BBR has no parameters (and no `cc_params` table; the kernel's are module-wide).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BbrParams;

impl AlgorithmParams for BbrParams {
    const NAME: &'static str = "bbr";
    const TABLE: bool = false;
}

impl CcFactory for BbrParams {
    const UNCOUPLED: bool = true;
    fn build(&self, rng: Rng) -> Box<dyn CongestionControl> {
        Box::new(Bbr::new(rng))
    }
}

/// BBR's modes (Linux `enum bbr_mode`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Mode {
    #[default]
    Startup,
    Drain,
    ProbeBw,
    ProbeRtt,
}

/// One subflow's BBR state (Linux `struct bbr`).
#[derive(Clone, Debug)]
pub struct Path {
    pub mode: Mode,
    /// Segment size the windows are counted in (bytes).
    smss: u64,
    /// Windowed minimum RTT and when it was taken (None: no sample yet, Linux `~0U`).
    pub min_rtt: Option<Dur>,
    min_rtt_stamp: Time,
    probe_rtt_done_stamp: Option<Time>,
    probe_rtt_round_done: bool,
    /// Max filter of the delivery rate (bytes/s) over `BW_RTTS` rounds.
    bw: MinMax,
    /// Round trips counted (Linux `rtt_cnt`), and `delivered` at the end of the current one.
    pub rtt_cnt: u64,
    next_rtt_delivered: u64,
    round_start: bool,
    /// Linux `prev_ca_state`, `packet_conservation`, `prior_cwnd` (segments).
    prev_ca_state: CaState,
    packet_conservation: bool,
    prior_cwnd: u64,
    idle_restart: bool,
    /// Full-pipe detection (Linux `full_bw`, `full_bw_cnt`, `full_bw_reached`).
    full_bw: u64,
    pub full_bw_cnt: u32,
    pub full_bw_reached: bool,
    /// PROBE_BW phase and when it began (`delivered_mstamp`).
    pub cycle_idx: usize,
    cycle_mstamp: Time,
    /// Current gains (fixed point, `UNIT` = 1).
    pub pacing_gain: u64,
    pub cwnd_gain: u64,
    /// Linux `sk_pacing_rate` (bytes/s) and whether it was set from a real RTT.
    pub pacing_rate: u64,
    has_seen_rtt: bool,
    /// ACK aggregation (Linux `extra_acked[2]`, its window, and the ACK epoch).
    extra_acked: [u64; 2],
    extra_acked_win_rtts: u32,
    extra_acked_win_idx: usize,
    ack_epoch_mstamp: Time,
    ack_epoch_acked: u64,
    /// Long-term sampling (Linux `lt_*`); `lt_last_stamp` in ms as Linux.
    lt_is_sampling: bool,
    lt_rtt_cnt: u32,
    pub lt_use_bw: bool,
    pub lt_bw: u64,
    lt_last_delivered: u64,
    lt_last_stamp: u64,
    lt_last_lost: u64,
}

impl Path {
    fn new(smss: u64) -> Path {
        Path {
            mode: Mode::Startup,
            smss: smss.max(1),
            min_rtt: None,
            min_rtt_stamp: Time::ZERO,
            probe_rtt_done_stamp: None,
            probe_rtt_round_done: false,
            bw: MinMax::default(),
            rtt_cnt: 0,
            next_rtt_delivered: 0,
            round_start: false,
            prev_ca_state: CaState::Open,
            packet_conservation: false,
            prior_cwnd: 0,
            idle_restart: false,
            full_bw: 0,
            full_bw_cnt: 0,
            full_bw_reached: false,
            cycle_idx: 0,
            cycle_mstamp: Time::ZERO,
            pacing_gain: HIGH_GAIN,
            cwnd_gain: HIGH_GAIN,
            pacing_rate: 0,
            has_seen_rtt: false,
            extra_acked: [0; 2],
            extra_acked_win_rtts: 0,
            extra_acked_win_idx: 0,
            ack_epoch_mstamp: Time::ZERO,
            ack_epoch_acked: 0,
            lt_is_sampling: false,
            lt_rtt_cnt: 0,
            lt_use_bw: false,
            lt_bw: 0,
            lt_last_delivered: 0,
            lt_last_stamp: 0,
            lt_last_lost: 0,
        }
    }

    /// Bytes to whole segments, rounding up (a short last segment is a packet too).
    fn segs(&self, bytes: u64) -> u64 {
        bytes.div_ceil(self.smss)
    }

    /// Linux `bbr_max_bw`: the windowed maximum delivery rate (bytes/s).
    pub fn max_bw(&self) -> u64 {
        self.bw.get()
    }

    /// Linux `bbr_bw`: the rate the model uses, the policed long-term rate if detected.
    pub fn bw(&self) -> u64 {
        if self.lt_use_bw {
            self.lt_bw
        } else {
            self.max_bw()
        }
    }

    /// Linux `bbr_reset_mode`: STARTUP until the pipe was found full, then PROBE_BW.
    fn reset_mode(&mut self, rng: &mut Rng, delivered_mstamp: Time) {
        if self.full_bw_reached {
            self.reset_probe_bw_mode(rng, delivered_mstamp);
        } else {
            self.mode = Mode::Startup;
        }
    }

    /// Linux `bbr_reset_probe_bw_mode`: PROBE_BW at a random phase other than the draining
    /// 3/4 (the phase before a uniform draw among the other 7, then advanced).
    fn reset_probe_bw_mode(&mut self, rng: &mut Rng, delivered_mstamp: Time) {
        self.mode = Mode::ProbeBw;
        let r = rng.next_u64() % CYCLE_RAND;
        self.cycle_idx = PACING_GAIN.len() - 1 - r as usize;
        self.advance_cycle_phase(delivered_mstamp);
    }

    /// Linux `bbr_advance_cycle_phase`.
    fn advance_cycle_phase(&mut self, delivered_mstamp: Time) {
        self.cycle_idx = (self.cycle_idx + 1) % PACING_GAIN.len();
        self.cycle_mstamp = delivered_mstamp;
    }

    /// Linux `bbr_is_next_cycle_phase`: a phase lasts one min_rtt; probing (5/4) lasts until
    /// a loss or until in flight reaches 5/4 BDP, draining (3/4) ends early once in flight is
    /// down to one BDP.
    fn is_next_cycle_phase(&self, a: &RateAck) -> bool {
        let full_length = a.delivered_mstamp.since(self.cycle_mstamp) > self.min_rtt.unwrap_or(Dur(u64::MAX));
        if self.pacing_gain == UNIT {
            return full_length;
        }
        let inflight = self.packets_in_net_at_edt(self.segs(a.rs.prior_in_flight), a.now, a.next_departure);
        let bw = self.max_bw();
        if self.pacing_gain > UNIT {
            return full_length && (a.rs.losses > 0 || inflight >= self.inflight(bw, self.pacing_gain));
        }
        full_length || inflight <= self.inflight(bw, UNIT)
    }

    /// Linux `bbr_update_bw`: round counting and the bandwidth filter. A round ends when a
    /// segment sent after the previous round's end is delivered. Application-limited samples
    /// enter the filter only if they do not lower it.
    fn update_bw(&mut self, a: &RateAck, rng: &mut Rng) {
        self.round_start = false;
        let (Some(delivered), Some(interval), Some(prior)) = (a.rs.delivered, a.rs.interval, a.rs.prior_delivered)
        else {
            return;
        };
        if interval == Dur::ZERO {
            return;
        }
        if prior >= self.next_rtt_delivered {
            self.next_rtt_delivered = a.delivered;
            self.rtt_cnt += 1;
            self.round_start = true;
            self.packet_conservation = false;
        }
        self.lt_bw_sampling(a, rng);
        let bw = (delivered as u128 * 1_000_000_000 / interval.0 as u128) as u64;
        if !a.rs.is_app_limited || bw >= self.max_bw() {
            self.bw.running_max(BW_RTTS, self.rtt_cnt, bw);
        }
    }

    /// Linux `bbr_check_full_bw_reached`: once per round, unless application-limited, the
    /// pipe is full after 3 rounds in a row without 25 % growth of the maximum bandwidth.
    fn check_full_bw_reached(&mut self, a: &RateAck) {
        if self.full_bw_reached || !self.round_start || a.rs.is_app_limited {
            return;
        }
        let thresh = (self.full_bw as u128 * FULL_BW_THRESH as u128 / UNIT as u128) as u64;
        if self.max_bw() >= thresh {
            self.full_bw = self.max_bw();
            self.full_bw_cnt = 0;
            return;
        }
        self.full_bw_cnt += 1;
        self.full_bw_reached = self.full_bw_cnt >= FULL_BW_CNT;
    }

    /// Linux `bbr_check_drain`: STARTUP → DRAIN when the pipe is full (ssthresh set to one
    /// BDP, as Linux, though nothing here reads it); DRAIN → PROBE_BW once in flight is down
    /// to one BDP.
    fn check_drain(&mut self, a: &RateAck, w: &mut Window, rng: &mut Rng) {
        if self.mode == Mode::Startup && self.full_bw_reached {
            self.mode = Mode::Drain;
            w.ssthresh = self.inflight(self.max_bw(), UNIT) * self.smss;
        }
        if self.mode == Mode::Drain
            && self.packets_in_net_at_edt(self.segs(a.in_flight), a.now, a.next_departure)
                <= self.inflight(self.max_bw(), UNIT)
        {
            self.reset_probe_bw_mode(rng, a.delivered_mstamp);
        }
    }

    /// Linux `bbr_check_probe_rtt_done`: after 200 ms and a round at the minimum window,
    /// restore the window and leave PROBE_RTT.
    fn check_probe_rtt_done(&mut self, now: Time, delivered_mstamp: Time, w: &mut Window, rng: &mut Rng) {
        if self.probe_rtt_done_stamp.is_none_or(|t| now <= t) {
            return;
        }
        self.min_rtt_stamp = now;
        w.cwnd = w.cwnd.max(self.prior_cwnd * self.smss);
        self.reset_mode(rng, delivered_mstamp);
    }

    /// Linux `bbr_update_min_rtt`: the 10 s min_rtt filter, and PROBE_RTT — entered when the
    /// filter expires, kept at 4 segments in flight for max(200 ms, one round). Returns true
    /// while in PROBE_RTT (the host marks the subflow application-limited so that the low
    /// rate samples of this mode do not lower the bandwidth filter).
    fn update_min_rtt(&mut self, a: &RateAck, w: &mut Window, rng: &mut Rng) -> bool {
        let expired = a.now > self.min_rtt_stamp + MIN_RTT_WIN;
        if let Some(rtt) = a.rs.rtt {
            if self.min_rtt.is_none_or(|m| rtt < m) || expired {
                self.min_rtt = Some(rtt);
                self.min_rtt_stamp = a.now;
            }
        }
        if expired && !self.idle_restart && self.mode != Mode::ProbeRtt {
            self.mode = Mode::ProbeRtt;
            self.save_cwnd(self.segs(w.cwnd));
            self.probe_rtt_done_stamp = None;
        }
        let probing = self.mode == Mode::ProbeRtt;
        if probing {
            if self.probe_rtt_done_stamp.is_none() && self.segs(a.in_flight) <= CWND_MIN_TARGET {
                self.probe_rtt_done_stamp = Some(a.now + PROBE_RTT_TIME);
                self.probe_rtt_round_done = false;
                self.next_rtt_delivered = a.delivered;
            } else if self.probe_rtt_done_stamp.is_some() {
                if self.round_start {
                    self.probe_rtt_round_done = true;
                }
                if self.probe_rtt_round_done {
                    self.check_probe_rtt_done(a.now, a.delivered_mstamp, w, rng);
                }
            }
        }
        if a.rs.delivered.is_some_and(|d| d > 0) {
            self.idle_restart = false;
        }
        probing
    }

    /// Linux `bbr_update_gains`.
    fn update_gains(&mut self) {
        (self.pacing_gain, self.cwnd_gain) = match self.mode {
            Mode::Startup => (HIGH_GAIN, HIGH_GAIN),
            Mode::Drain => (DRAIN_GAIN, HIGH_GAIN),
            Mode::ProbeBw => (if self.lt_use_bw { UNIT } else { PACING_GAIN[self.cycle_idx] }, CWND_GAIN),
            Mode::ProbeRtt => (UNIT, UNIT),
        };
    }
}

/// BBR for every subflow of a connection (independent instances).
pub struct Bbr {
    paths: Vec<Option<Path>>,
    rng: Rng,
}

impl Bbr {
    pub fn new(rng: Rng) -> Bbr {
        Bbr { paths: Vec::new(), rng }
    }

    /// Subflow `sf`'s state, created at its first event (Linux `bbr_init`).
    fn path(&mut self, sf: usize, smss: u64) -> &mut Path {
        if self.paths.len() <= sf {
            self.paths.resize(sf + 1, None);
        }
        self.paths[sf].get_or_insert_with(|| Path::new(smss))
    }

    /// The state of subflow `sf`, if it has seen an event (tests and diagnostics).
    pub fn state(&self, sf: usize) -> Option<&Path> {
        self.paths.get(sf)?.as_ref()
    }
}

impl CongestionControl for Bbr {
    fn name(&self) -> &'static str {
        BbrParams::NAME
    }

    /// Not called for a rate-based controller (the host calls `cong_control`).
    fn on_ack(&mut self, _ack: &super::Ack, _w: &mut Window) {}

    /// Linux `bbr_ssthresh`: remember the window (restored after recovery), leave ssthresh.
    fn ssthresh(&mut self, _now: Time, sf: usize, w: &Window, _peers: &[PeerView]) -> u64 {
        let p = self.path(sf, w.smss);
        let cwnd = p.segs(w.cwnd);
        p.save_cwnd(cwnd);
        w.ssthresh
    }

    fn rate_based(&self) -> bool {
        true
    }

    /// Linux `bbr_main`: update the model (`bbr_update_model`), then the pacing rate and the
    /// window.
    fn cong_control(&mut self, a: &RateAck, w: &mut Window) -> bool {
        let Bbr { paths, rng } = self;
        if paths.len() <= a.sf {
            paths.resize(a.sf + 1, None);
        }
        let p = paths[a.sf].get_or_insert_with(|| Path::new(w.smss));
        p.update_bw(a, rng);
        p.update_ack_aggregation(a, p.segs(w.cwnd));
        if p.mode == Mode::ProbeBw && p.is_next_cycle_phase(a) {
            p.advance_cycle_phase(a.delivered_mstamp);
        }
        p.check_full_bw_reached(a);
        p.check_drain(a, w, rng);
        let probe_rtt = p.update_min_rtt(a, w, rng);
        p.update_gains();
        let bw = p.bw();
        p.set_pacing_rate(bw, p.pacing_gain, a.srtt, w.cwnd);
        p.set_cwnd(a, bw, w);
        probe_rtt
    }

    /// Linux `bbr_set_state(TCP_CA_Loss)`: an RTO ends the round, restarts full-pipe
    /// detection and counts as a loss for long-term sampling.
    fn on_rto(&mut self, a: &RateAck) {
        let Bbr { paths, rng } = self;
        if paths.len() <= a.sf {
            paths.resize(a.sf + 1, None);
        }
        let Some(p) = paths[a.sf].as_mut() else { return };
        p.prev_ca_state = CaState::Loss;
        p.full_bw = 0;
        p.round_start = true;
        let mut loss = *a;
        loss.rs = Default::default();
        loss.rs.losses = p.smss;
        p.lt_bw_sampling(&loss, rng);
    }

    /// Linux `bbr_cwnd_event(CA_EVENT_TX_START)`: restarting from idle after running out of
    /// data, PROBE_BW paces at the estimated rate (gain 1) and PROBE_RTT may end.
    fn on_tx_start(&mut self, now: Time, sf: usize, app_limited: bool, _last_sent: Time, w: &mut Window) {
        let Bbr { paths, rng } = self;
        let Some(p) = paths.get_mut(sf).and_then(|p| p.as_mut()) else { return };
        if !app_limited {
            return;
        }
        p.idle_restart = true;
        p.ack_epoch_mstamp = now;
        p.ack_epoch_acked = 0;
        match p.mode {
            Mode::ProbeBw => {
                let bw = p.bw();
                p.set_pacing_rate(bw, UNIT, None, w.cwnd);
            }
            Mode::ProbeRtt => p.check_probe_rtt_done(now, now, w, rng),
            _ => {}
        }
    }

    fn pacing_rate(&self, sf: usize) -> u64 {
        self.state(sf).map_or(0, |p| p.pacing_rate)
    }
}

#[cfg(test)]
mod tests;
