//! One TCP subflow (or a whole single-path TCP connection): sender and receiver mechanics.
//!
//! Sans-IO: methods take `now` and inputs and return what happened; the connection level
//! (`mptcp::connection`) builds packets and owns the handshake. Mechanics implemented here:
//! - sending (`send.rs`): IW, cwnd in bytes, RFC 6675 pipe (`Scoreboard::in_flight`) gating;
//! - ACK processing (`ack.rs`): cumulative and SACK; loss marking by RFC 6675 DupThresh (the
//!   default, `tcp.recovery = "rfc6675"`) or by RACK (`tcp::rack`, RFC 8985,
//!   `recovery = "rack_tlp"`, which `stack = "linux"` selects); Linux congestion states
//!   `Open / Disorder / Recovery / Loss` (one window reduction per recovery episode, exit at
//!   the recovery point with cwnd = ssthresh), cwnd-limited gate before the congestion
//!   controller is told;
//! - during fast recovery the window follows PRR (`tcp::prr`, RFC 6937), or with `prr = false`
//!   drops to ssthresh when recovery begins;
//! - timers (`timers.rs`, deadlines in [`SubflowTimers`]): tail loss probes (`tcp::tlp`,
//!   RFC 8985 §7) with RACK; the RACK reordering timer; the RTO (RFC 6298, Linux constants,
//!   exponential backoff, Karn's rule): cwnd to 1 SMSS, ssthresh reduced once per loss
//!   episode, every un-SACKed segment marked lost and retransmitted from snd_una;
//! - idle restart (Linux `tcp_cwnd_restart`, RFC 2861): when data is sent with nothing in
//!   flight after more than one RTO of silence, cwnd is halved per elapsed RTO down to
//!   min(cwnd, IW) and ssthresh raised to at least 3/4 of the old cwnd.
//! - with a rate-based congestion controller (BBR, Linux `cong_control`): delivery-rate
//!   samples (`tcp::rate`) and pacing (`tcp::pacing`); the controller sets the window on every
//!   ACK, and, as Linux, neither PRR, nor the window reductions on loss, nor the cwnd-limited
//!   gate, nor the idle restart apply (Linux `tcp_cong_control`, `tcp_end_cwnd_reduction`,
//!   `tcp_slow_start_after_idle_check`).
//!
//! State changes go through [`Subflow::set_state`] and `Subflow::set_ca_state` only (the
//! fields are private), which record each transition as a typed trace event
//! ([`Transition::TcpState`], [`Transition::CaState`]) once [`Subflow::enable_trace`] was
//! called; [`Subflow::trace`] reads them back.

mod ack;
mod send;
mod timers;

use crate::cc::{PeerView, RateAck, Window};
use crate::config::{
    CaCounting, CwndLimited, CwndUnit, DelackCount, OooAck, Recovery, RttSample, SlowStart, SlowStartBound,
    SndbufCheck, TcpCfg, TsqRule,
};
use crate::tcp::pacing::{self, Pacer};
use crate::tcp::prr::Prr;
use crate::tcp::receiver::SubflowReceiver;
use crate::tcp::rtt::RttEstimator;
use crate::tcp::sack_compress::SackCompression;
use crate::tcp::scoreboard::Scoreboard;
use crate::tcp::segment::SegFlags;
use crate::tcp::state::Transition;
pub use crate::tcp::state::{CaState, State};
use crate::tcp::timer::SubflowTimers;
use crate::tcp::tlp::Tlp;
use crate::tcp::tsq::Tsq;
use crate::trace::TraceLog;
use crate::units::{Dsn, Dur, Seq, Time};

/// Per-subflow TCP parameters (resolved from the scenario).
#[derive(Clone, Debug)]
pub struct TcpParams {
    /// Sender MSS: payload bytes of a full data segment on this subflow.
    pub smss: u64,
    /// Linux `tp->mss_cache` (`tcp_sync_mss`): the MSS without the options that vary per
    /// segment; on an MPTCP subflow `smss` plus the DSS option, else `smss`. It scales the
    /// pacing rate ([`crate::tcp::pacing::linux_rate`]).
    pub mss_cache: u64,
    pub iw: u64,
    pub slow_start: SlowStart,
    pub ca_counting: CaCounting,
    pub slow_start_bound: SlowStartBound,
    /// Delayed-ACK ratio b.
    pub b: u64,
    /// What the delayed-ACK count counts (`tcp.delack_count`).
    pub delack_count: DelackCount,
    pub delack_timeout: Dur,
    pub idle_restart: bool,
    pub dupthresh: u64,
    pub rto_initial: Dur,
    pub rto_min: Dur,
    pub rto_max: Dur,
    pub recovery: Recovery,
    pub prr: bool,
    /// Linux quick-ACK mode at the receiver ([`crate::tcp::receiver`]).
    pub quickack: bool,
    /// How out-of-order data is acknowledged (`tcp.ooo_ack`).
    pub ooo_ack: OooAck,
    pub cwnd_limited: CwndLimited,
    /// What the congestion window counts (`tcp.cwnd_unit`).
    pub cwnd_unit: CwndUnit,
    /// Linux's TSO deferral for data sent from the subflow's queue ([`crate::tcp::tso`]).
    pub tso_defer: bool,
    /// When the subflow's send buffer may grow (`tcp.sndbuf_check`).
    pub sndbuf_check: SndbufCheck,
    /// Which segment an ACK samples the smoothed RTT from (`tcp.rtt_sample`).
    pub rtt_sample: RttSample,
    /// RFC 2861 §3 decay of an application-limited window (`tcp.cwv`).
    pub cwv: bool,
    /// TCP small queues (`tcp.tsq`), acting when the path's queue is in this host.
    pub tsq: TsqRule,
    /// Truesize TCP small queues charge for every packet whatever its payload (the
    /// out-of-tree stack's one-MSS skbs, [`crate::mptcp::sendbuf::v09x_skb_truesize`]); none:
    /// payload plus one skb head ([`TX_SKB_HEAD`]).
    pub tx_skb_truesize: Option<u64>,
}

impl TcpParams {
    /// The parameters a subflow takes from its connection's `tcp` keys, with its sender MSS
    /// and the truesize TCP small queues charge per packet if fixed.
    pub fn new(t: &TcpCfg, smss: u64, tx_skb_truesize: Option<u64>) -> TcpParams {
        TcpParams {
            smss,
            mss_cache: smss,
            iw: t.iw,
            slow_start: t.slow_start,
            ca_counting: t.ca_counting,
            slow_start_bound: t.slow_start_bound,
            b: t.delack_segments,
            delack_count: t.delack_count,
            delack_timeout: t.delack_timeout,
            idle_restart: t.idle_restart,
            dupthresh: t.dupthresh,
            rto_initial: t.rto_initial,
            rto_min: t.rto_min,
            rto_max: t.rto_max,
            recovery: t.recovery,
            prr: t.prr,
            quickack: t.quickack,
            ooo_ack: t.ooo_ack,
            cwnd_limited: t.cwnd_limited,
            cwnd_unit: t.cwnd_unit,
            tso_defer: t.tso_defer,
            sndbuf_check: t.sndbuf_check,
            rtt_sample: t.rtt_sample,
            cwv: t.cwv,
            tsq: t.tsq,
            tx_skb_truesize,
        }
    }
}

/// Truesize of a transmit skb's head without payload: `alloc_skb_fclone(MAX_TCP_HEADER)`
/// from the 640-byte small-head cache, `SKB_TRUESIZE(320)`, that is 320 plus 256
/// (`struct sk_buff`) plus 320 (`struct skb_shared_info`) on x86-64. The payload rides in
/// page fragments and is charged byte for byte.
pub const TX_SKB_HEAD: u64 = 896;

/// MIB-style counters of one subflow.
#[derive(Clone, Debug, Default)]
pub struct SubflowStats {
    pub bytes_sent: u64,
    pub bytes_acked: u64,
    pub segments_sent: u64,
    pub retrans_segments: u64,
    pub rtos: u64,
    pub recoveries: u64,
    pub idle_restarts: u64,
    /// Times RFC 2861's decay shrank an application-limited window (`tcp.cwv`).
    pub cwv_decays: u64,
    /// Times the minRTT penalisation (M2) halved this subflow's congestion window.
    pub penalisations: u64,
    /// Times the MPTCP connection marked this subflow stale ([`crate::mptcp::stale`]).
    pub stale: u64,
    pub syn_retransmits: u64,
    pub established_at: Option<Time>,
    pub first_data_at: Option<Time>,
    /// Connection-level bytes first delivered through this subflow (total / after warm-up).
    pub data_bytes_received: u64,
    pub data_bytes_after_warmup: u64,
    /// End of the highest data sequence mapped onto this subflow.
    pub dsn_sent_end: u64,
}

/// What an ACK did on the sending side.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AckOutcome {
    pub acked_bytes: u64,
    pub entered_recovery: bool,
}

pub struct Subflow {
    pub idx: u8,
    /// Index of the path (in the scenario) the subflow runs over.
    pub path: usize,
    pub backup: bool,
    /// Connection-setup state; changed only by [`Subflow::set_state`].
    state: State,
    pub p: TcpParams,
    // --- sender ---
    pub snd_una: Seq,
    pub snd_nxt: Seq,
    /// End of the last short (sub-MSS) segment sent (Linux `snd_sml`, `tcp_minshall_update`).
    pub snd_sml: Seq,
    pub sb: Scoreboard,
    pub w: Window,
    /// Congestion state; changed only by [`Subflow::set_ca_state`].
    ca: CaState,
    /// Recovery point (RFC 6675 RecoveryPoint / Linux high_seq).
    pub high_seq: Seq,
    pub rtt: RttEstimator,
    /// Every timer of the subflow: handshake, delayed ACK, retransmission, reordering, probe
    /// and pacing.
    pub timers: SubflowTimers,
    /// Tail loss probe state (its timer is `timers.probe`).
    pub tlp: Tlp,
    /// PRR state while in fast recovery (with `prr` on).
    pub prr: Option<Prr>,
    /// Last transmission of data (Linux `lsndtime`).
    pub lsndtime: Time,
    /// The congestion controller is rate-based (see `cc`): rate samples, pacing.
    pub rate_based: bool,
    /// The congestion controller's `pkts_acked` is called on every ACK that acknowledged or
    /// SACKed data (controllers that are not rate-based). True unless whoever creates the
    /// subflow knows the controller does not implement it
    /// (`cc::CongestionControl::has_pkts_acked`): the endpoint clears it then, and calling a
    /// controller's no-op would be harmless.
    pub pkts_acked: bool,
    /// Pacing gate (rate 0 = unpaced; its timer is `timers.pace`).
    pub pacer: Pacer,
    /// `CwndLimited::Rounds`: the largest flight of this and of the previous round of ACKs.
    round_end: Seq,
    round_max_in_flight: u64,
    prev_round_max_in_flight: u64,
    /// `CwndLimited::Linux`, `tcp_cwnd_validate` bookkeeping: the end of the window tracked
    /// (`cwnd_usage_seq`), the most bytes outstanding in it (`max_packets_out`), and whether
    /// a transmit attempt in it found the congestion window full with data waiting.
    cwnd_usage_seq: Seq,
    max_out: u64,
    is_cwnd_limited: bool,
    /// RFC 2861 §3 bookkeeping (Linux `snd_cwnd_used`, `snd_cwnd_stamp`): the most bytes
    /// outstanding since the window was last full, and when it was last full, restarted or
    /// decayed (None before the first check).
    cwnd_used: u64,
    cwnd_stamp: Option<Time>,
    /// What the subflow holds in its host's queues (TCP small queues).
    pub tsq: Tsq,
    // --- handshake (its retransmission timer is `timers.handshake`) ---
    pub hs_sent_at: Time,
    pub hs_retransmitted: bool,
    pub hs_backoff: u32,
    /// When the last acceptable ACK arrived (Linux `tp->rcv_tstamp`, set by `tcp_ack` for
    /// every ACK not older than `snd_una`).
    pub rcv_tstamp: Time,
    /// The MPTCP connection's stale-subflow state (Linux `subflow->stale`, `stale_count`,
    /// `stale_rcv_tstamp`; see [`crate::mptcp::stale`]).
    pub stale: Stale,
    // --- receiver ---
    pub rcv: SubflowReceiver,
    pub stats: SubflowStats,
    /// State transitions recorded since [`Subflow::enable_trace`]; None: not recorded.
    trace: Option<TraceLog<Transition>>,
}

/// Linux's stale-subflow bookkeeping of an MPTCP subflow (`struct mptcp_subflow_context`):
/// whether it is marked stale, how many MPTCP retransmission periods in a row found it holding
/// data without receiving an ACK, and the ACK time those periods saw.
#[derive(Clone, Copy, Debug, Default)]
pub struct Stale {
    pub on: bool,
    pub count: u8,
    pub rcv: Time,
}

impl Subflow {
    pub fn new(idx: u8, path: usize, backup: bool, state: State, p: TcpParams) -> Subflow {
        let w = Window { bound: p.slow_start_bound, ..Window::new(p.iw, p.smss, p.slow_start, p.ca_counting) };
        let rtt = RttEstimator::new(p.rto_initial, p.rto_min, p.rto_max);
        let mut sb = Scoreboard::default();
        sb.rack.enabled = p.recovery == Recovery::RackTlp;
        let mut rcv = SubflowReceiver::default();
        rcv.quickack = p.quickack;
        rcv.count_bytes = p.delack_count == DelackCount::Bytes;
        rcv.compressed = (p.ooo_ack == OooAck::Compressed).then(SackCompression::default);
        let tsq_rule = p.tsq;
        Subflow {
            idx,
            path,
            backup,
            state,
            p,
            snd_una: Seq(0),
            snd_nxt: Seq(0),
            snd_sml: Seq(0),
            sb,
            w,
            ca: CaState::Open,
            high_seq: Seq(0),
            rtt,
            timers: SubflowTimers::default(),
            tlp: Tlp::default(),
            prr: None,
            lsndtime: Time::ZERO,
            rate_based: false,
            pkts_acked: true,
            pacer: Pacer::default(),
            round_end: Seq(0),
            round_max_in_flight: 0,
            prev_round_max_in_flight: 0,
            cwnd_usage_seq: Seq(0),
            max_out: 0,
            is_cwnd_limited: false,
            cwnd_used: 0,
            cwnd_stamp: None,
            tsq: Tsq::new(tsq_rule),
            hs_sent_at: Time::ZERO,
            hs_retransmitted: false,
            hs_backoff: 0,
            rcv_tstamp: Time::ZERO,
            stale: Stale::default(),
            rcv,
            stats: SubflowStats::default(),
            trace: None,
        }
    }

    /// Connection-setup state.
    pub fn state(&self) -> State {
        self.state
    }

    /// Congestion state.
    pub fn ca(&self) -> CaState {
        self.ca
    }

    /// The one place the connection-setup state changes (Linux `tcp_set_state`), called by
    /// the connection level as the handshake proceeds; a change is recorded as
    /// [`Transition::TcpState`] when the trace is on. (The state given to [`Subflow::new`] is
    /// where the subflow starts, not a transition.)
    pub fn set_state(&mut self, now: Time, to: State) {
        if to == self.state {
            return;
        }
        if let Some(log) = self.trace.as_mut() {
            log.record(now, Transition::TcpState { sf: self.idx, from: self.state, to });
        }
        self.state = to;
    }

    /// The one place the congestion state changes (Linux `tcp_set_ca_state`); a change is
    /// recorded as [`Transition::CaState`] when the trace is on. Only the subflow's own
    /// mechanics (ACK processing, the timers) call it.
    #[inline]
    fn set_ca_state(&mut self, now: Time, to: CaState) {
        if to == self.ca {
            return;
        }
        if let Some(log) = self.trace.as_mut() {
            log.record(now, Transition::CaState { sf: self.idx, from: self.ca, to });
        }
        self.ca = to;
    }

    /// Starts recording state transitions (off by default: recording costs nothing then).
    pub fn enable_trace(&mut self) {
        self.trace.get_or_insert_with(TraceLog::default);
    }

    /// The state transitions recorded since [`Subflow::enable_trace`] (empty if never enabled).
    pub fn trace(&self) -> &[(Time, Transition)] {
        self.trace.as_ref().map_or(&[], TraceLog::events)
    }

    pub fn established(&self) -> bool {
        self.state == State::Established
    }

    /// The read-only view congestion controllers and schedulers get.
    pub fn view(&self) -> PeerView {
        PeerView {
            cwnd: self.w.cwnd,
            ssthresh: self.w.ssthresh,
            smss: self.w.smss,
            srtt: self.rtt.srtt(),
            min_rtt: self.rtt.min_rtt(),
            latest_rtt: self.rtt.latest(),
            in_flight: self.cwnd_in_flight(),
            usable: self.established(),
        }
    }

    /// [`Self::view`] written over `p` field by field (the endpoint's snapshot, refreshed
    /// on every ACK, is overwritten in place).
    #[inline]
    pub fn view_into(&self, p: &mut PeerView) {
        p.cwnd = self.w.cwnd;
        p.ssthresh = self.w.ssthresh;
        p.smss = self.w.smss;
        p.srtt = self.rtt.srtt();
        p.min_rtt = self.rtt.min_rtt();
        p.latest_rtt = self.rtt.latest();
        p.in_flight = self.cwnd_in_flight();
        p.usable = self.established();
    }

    /// Room in the congestion window for one more full segment.
    pub fn has_room(&self) -> bool {
        self.established() && self.cwnd_in_flight() + self.w.smss <= self.w.cwnd
    }

    /// `bytes` in `segs` segments as the congestion window counts them (`tcp.cwnd_unit`): the
    /// bytes, or the segments as full ones (Linux counts packets).
    #[inline]
    pub(super) fn in_cwnd_units(&self, bytes: u64, segs: u64) -> u64 {
        match self.p.cwnd_unit {
            CwndUnit::Bytes => bytes,
            CwndUnit::Packets => segs * self.w.smss,
        }
    }

    /// What the congestion window's test counts in flight: the bytes in flight, or the packets
    /// in flight (Linux `tcp_packets_in_flight`).
    #[inline]
    pub fn cwnd_in_flight(&self) -> u64 {
        self.in_cwnd_units(self.sb.in_flight(), self.sb.in_flight_segs())
    }

    /// Sent and not cumulatively acknowledged, as the congestion window counts it (Linux
    /// `packets_out`).
    #[inline]
    pub fn cwnd_out(&self) -> u64 {
        self.in_cwnd_units(self.snd_nxt.dist(self.snd_una), self.sb.len() as u64)
    }

    /// Room in the window, the pacing gate open and TCP small queues not throttling at
    /// `now`: a segment may leave.
    #[inline]
    pub fn can_send(&self, now: Time) -> bool {
        self.has_room() && self.pacer.open(now) && !self.tsq_throttled(now)
    }

    /// The TSQ limit for the next transmission ([`crate::tcp::tsq`]): one segment is one skb,
    /// the pacing rate Linux's with its default ratios.
    pub fn tsq_limit(&self) -> u64 {
        self.tsq.limit(self.linux_pacing_rate(), self.tx_truesize(self.w.smss))
    }

    /// The pacing rate Linux computes for this subflow (`tcp_update_pacing_rate`) with its
    /// default ratios, which sizes its transmit units and its TSQ limit (bytes per second).
    pub fn linux_pacing_rate(&self) -> f64 {
        pacing::linux_rate(
            self.pacer.rate,
            self.w.cwnd,
            self.w.ssthresh,
            self.cwnd_out(),
            self.rtt.srtt(),
            (pacing::SS_RATIO, pacing::CA_RATIO),
            (self.w.smss, self.p.mss_cache),
        )
    }

    /// Segments in one of this subflow's transmit units (Linux `tcp_tso_autosize` at
    /// [`Self::linux_pacing_rate`]).
    pub fn tx_unit_segs(&self) -> u64 {
        crate::tcp::tso::autosize_segs(self.linux_pacing_rate(), self.rtt.min_rtt(), self.w.smss)
    }

    /// The truesize TCP small queues charge for a packet of `payload` bytes.
    pub fn tx_truesize(&self, payload: u64) -> u64 {
        self.p.tx_skb_truesize.unwrap_or(payload + TX_SKB_HEAD)
    }

    /// TCP small queues hold this subflow's next transmission back.
    #[inline]
    pub fn tsq_throttled(&self, now: Time) -> bool {
        // Most subflows never hold anything in their host: skip the limit's arithmetic.
        !self.tsq.is_empty() && self.tsq_holds_back(now)
    }

    /// When a subflow TCP small queues hold back may send again (`Tsq::unthrottle_at`), or
    /// None if it is not held back or that depends on departures not known yet.
    pub fn tsq_release_at(&self, now: Time) -> Option<Time> {
        if self.tsq_throttled(now) {
            self.tsq.unthrottle_at(now, self.tsq_limit())
        } else {
            None
        }
    }

    /// [`Subflow::tsq_throttled`] for a subflow holding something in its host.
    #[inline(never)]
    fn tsq_holds_back(&self, now: Time) -> bool {
        self.tsq.throttled(now, self.tsq_limit(), self.sb.len() as u64)
    }

    /// Makes the subflow's congestion control rate-based (`cc::CongestionControl::rate_based`):
    /// delivery-rate estimation on, pacing at the rate the controller sets.
    pub fn set_rate_based(&mut self) {
        self.rate_based = true;
        self.sb.rate.enabled = true;
    }

    /// What a rate-based controller is told about the subflow now, with rate sample `rs`.
    fn rate_ack(&self, now: Time, rs: crate::tcp::rate::RateSample) -> RateAck {
        RateAck {
            now,
            sf: self.idx as usize,
            rs,
            delivered: self.sb.rate.delivered,
            delivered_mstamp: self.sb.rate.delivered_mstamp,
            lost: self.sb.lost_total(),
            in_flight: self.sb.in_flight(),
            ca: self.ca,
            srtt: self.rtt.srtt(),
            next_departure: self.pacer.next_at,
        }
    }

    /// Linux `tcp_rate_check_app_limited` at an application write, with `unsent` bytes the
    /// subflow could still send.
    pub fn check_app_limited(&mut self, unsent: u64) {
        let (smss, in_flight, cwnd, lost) =
            (self.w.smss, self.sb.in_flight(), self.w.cwnd, self.sb.lost_not_retransmitted());
        self.sb.rate.check_app_limited(unsent, smss, in_flight, cwnd, lost);
    }

    /// Marks the un-SACKed outstanding segments not reinjected before and returns their
    /// mappings (dsn, len), for reinjection on another subflow (Linux `mptcp_reinject_data`
    /// with its `path_mask`: a segment is reinjected from this subflow at most once).
    pub fn take_for_reinjection(&mut self, out: &mut Vec<(Dsn, u64)>) {
        self.sb.take_for_reinjection(out);
    }

    /// Whether the head segment was ever retransmitted (diagnostics).
    pub fn head_retransmitted(&self) -> bool {
        self.sb.front().is_some_and(|s| s.has(SegFlags::EVER_RETRANS))
    }
}

#[cfg(test)]
mod tests;
