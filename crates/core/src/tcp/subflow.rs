//! One TCP subflow (or a whole single-path TCP connection): sender and receiver mechanics.
//!
//! Sans-IO: methods take `now` and inputs and return what happened; the connection level
//! (`mptcp::connection`) builds packets and owns the handshake. Mechanics implemented here:
//! - sending: IW, cwnd in bytes, RFC 6675 pipe (`Scoreboard::in_flight`) gating;
//! - ACK processing: cumulative and SACK; loss marking by RACK (`tcp::rack`, RFC 8985, the
//!   default) or by RFC 6675 DupThresh (`recovery = "rfc6675"`); Linux congestion states
//!   `Open / Disorder / Recovery / Loss` (one window reduction per recovery episode, exit at
//!   the recovery point with cwnd = ssthresh), cwnd-limited gate before the congestion
//!   controller is told;
//! - during fast recovery the window follows PRR (`tcp::prr`, RFC 6937), or with `prr = false`
//!   drops to ssthresh when recovery begins;
//! - tail loss probes (`tcp::tlp`, RFC 8985 §7) with RACK; the RACK reordering timer;
//! - RTO (RFC 6298, Linux constants, exponential backoff, Karn's rule): cwnd to 1 SMSS,
//!   ssthresh reduced once per loss episode, every un-SACKed segment marked lost and
//!   retransmitted from snd_una;
//! - idle restart (Linux `tcp_cwnd_restart`, RFC 2861): when data is sent with nothing in
//!   flight after more than one RTO of silence, cwnd is halved per elapsed RTO down to
//!   min(cwnd, IW) and ssthresh raised to at least 3/4 of the old cwnd.
//! - with a rate-based congestion controller (BBR, Linux `cong_control`): delivery-rate
//!   samples (`tcp::rate`) and pacing (`tcp::pacing`); the controller sets the window on every
//!   ACK, and, as Linux, neither PRR, nor the window reductions on loss, nor the cwnd-limited
//!   gate, nor the idle restart apply (Linux `tcp_cong_control`, `tcp_end_cwnd_reduction`,
//!   `tcp_slow_start_after_idle_check`).

use crate::cc::{Ack, CongestionControl, PeerView, RateAck, Window};
use crate::config::{CaCounting, CwndLimited, Recovery, SlowStart, TsqRule};
use crate::tcp::pacing::{self, Pacer};
use crate::tcp::prr::Prr;
use crate::tcp::receiver::SubflowReceiver;
use crate::tcp::rtt::RttEstimator;
use crate::tcp::scoreboard::Scoreboard;
use crate::tcp::segment::{SegFlags, SentSeg};
use crate::tcp::tlp::{Tlp, TlpAck};
use crate::tcp::tsq::Tsq;
use crate::units::{earliest, Dsn, Dur, Seq, Time};

/// Per-subflow TCP parameters (resolved from the scenario).
#[derive(Clone, Debug)]
pub struct TcpParams {
    /// Sender MSS: payload bytes of a full data segment on this subflow.
    pub smss: u64,
    pub iw: u64,
    pub slow_start: SlowStart,
    pub ca_counting: CaCounting,
    /// Delayed-ACK ratio b.
    pub b: u64,
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
    pub cwnd_limited: CwndLimited,
    /// Linux's TSO deferral for data sent from the subflow's queue ([`crate::tcp::tso`]).
    pub tso_defer: bool,
    /// RFC 2861 §3 decay of an application-limited window (`tcp.cwv`).
    pub cwv: bool,
    /// TCP small queues (`tcp.tsq`), acting when the path's queue is in this host.
    pub tsq: TsqRule,
    /// Truesize TCP small queues charge for every packet whatever its payload (the
    /// out-of-tree stack's one-MSS skbs, [`crate::mptcp::sendbuf::v09x_skb_truesize`]); none:
    /// payload plus one skb head ([`crate::mptcp::sfqueue::TX_SKB_HEAD`]).
    pub tx_skb_truesize: Option<u64>,
}

/// Connection-setup state of the subflow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    /// Client: SYN sent.
    SynSent,
    /// Server: SYN received, SYN/ACK sent.
    SynRcvd,
    /// Client of an MP_JOIN: third ACK sent, waiting for the fourth before sending data.
    PreEstablished,
    Established,
}

/// Linux congestion states (`tcp_ca_state`), in Linux's order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum CaState {
    Open,
    /// SACKs seen, nothing marked lost yet.
    Disorder,
    /// Fast recovery (RFC 6675) until snd_una reaches `high_seq`.
    Recovery,
    /// After an RTO until snd_una reaches `high_seq`.
    Loss,
}

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
    pub state: State,
    pub p: TcpParams,
    // --- sender ---
    pub snd_una: Seq,
    pub snd_nxt: Seq,
    /// End of the last short (sub-MSS) segment sent (Linux `snd_sml`, `tcp_minshall_update`).
    pub snd_sml: Seq,
    pub sb: Scoreboard,
    pub w: Window,
    pub ca: CaState,
    /// Recovery point (RFC 6675 RecoveryPoint / Linux high_seq).
    pub high_seq: Seq,
    pub rtt: RttEstimator,
    pub rto_at: Option<Time>,
    /// RACK reordering timer (RFC 8985 §6.2 step 5).
    pub reo_at: Option<Time>,
    /// Tail loss probe state and timer.
    pub tlp: Tlp,
    /// PRR state while in fast recovery (with `prr` on).
    pub prr: Option<Prr>,
    /// Last transmission of data (Linux `lsndtime`).
    pub lsndtime: Time,
    /// The congestion controller is rate-based (see `cc`): rate samples, pacing.
    pub rate_based: bool,
    /// Pacing gate (rate 0 = unpaced) and the pacing timer (Linux `pacing_timer`).
    pub pacer: Pacer,
    pub pace_at: Option<Time>,
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
    // --- handshake ---
    /// Handshake retransmission timer (SYN, SYN/ACK, MP_JOIN third ACK).
    pub hs_at: Option<Time>,
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
    pub delack_at: Option<Time>,
    pub stats: SubflowStats,
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
        let w = Window::new(p.iw, p.smss, p.slow_start, p.ca_counting);
        let rtt = RttEstimator::new(p.rto_initial, p.rto_min, p.rto_max);
        let mut sb = Scoreboard::default();
        sb.rack.enabled = p.recovery == Recovery::RackTlp;
        let mut rcv = SubflowReceiver::default();
        rcv.quickack = p.quickack;
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
            rto_at: None,
            reo_at: None,
            tlp: Tlp::default(),
            prr: None,
            lsndtime: Time::ZERO,
            rate_based: false,
            pacer: Pacer::default(),
            pace_at: None,
            round_end: Seq(0),
            round_max_in_flight: 0,
            prev_round_max_in_flight: 0,
            cwnd_usage_seq: Seq(0),
            max_out: 0,
            is_cwnd_limited: false,
            cwnd_used: 0,
            cwnd_stamp: None,
            tsq: Tsq::new(tsq_rule),
            hs_at: None,
            hs_sent_at: Time::ZERO,
            hs_retransmitted: false,
            hs_backoff: 0,
            rcv_tstamp: Time::ZERO,
            stale: Stale::default(),
            rcv,
            delack_at: None,
            stats: SubflowStats::default(),
        }
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
            in_flight: self.sb.in_flight(),
            usable: self.established(),
        }
    }

    /// Room in the congestion window for one more full segment.
    pub fn has_room(&self) -> bool {
        self.established() && self.sb.in_flight() + self.w.smss <= self.w.cwnd
    }

    /// Room in the window, the pacing gate open and TCP small queues not throttling at
    /// `now`: a segment may leave.
    pub fn can_send(&self, now: Time) -> bool {
        self.has_room() && self.pacer.open(now) && !self.tsq_throttled(now)
    }

    /// The TSQ limit for the next transmission ([`crate::tcp::tsq`]): one segment is one skb,
    /// the pacing rate Linux's with its default ratios.
    pub fn tsq_limit(&self) -> u64 {
        let out = self.snd_nxt.dist(self.snd_una);
        let rate = pacing::linux_rate(
            self.pacer.rate,
            self.w.cwnd,
            self.w.ssthresh,
            out,
            self.rtt.srtt(),
            (pacing::SS_RATIO, pacing::CA_RATIO),
        );
        self.tsq.limit(rate, self.tx_truesize(self.w.smss))
    }

    /// The truesize TCP small queues charge for a packet of `payload` bytes.
    pub fn tx_truesize(&self, payload: u64) -> u64 {
        self.p.tx_skb_truesize.unwrap_or(payload + crate::mptcp::sfqueue::TX_SKB_HEAD)
    }

    /// TCP small queues hold this subflow's next transmission back.
    pub fn tsq_throttled(&self, now: Time) -> bool {
        // Most subflows never hold anything in their host: skip the limit's arithmetic.
        !self.tsq.is_empty() && self.tsq.throttled(now, self.tsq_limit(), self.sb.len() as u64)
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

    /// Linux `CA_EVENT_TX_START` (`tcp_event_data_sent`): called before sending new data;
    /// tells the controller when nothing is in flight, and when it last sent. Deviation:
    /// Linux raises the event for retransmissions too; here only new data does (after a
    /// timeout, the one case where a retransmission leaves with nothing in flight, CUBIC's
    /// epoch has been reset and BBR's state is the loss state's).
    pub fn tx_start(&mut self, now: Time, cc: &mut dyn CongestionControl) {
        if self.sb.in_flight() != 0 {
            return;
        }
        cc.on_tx_start(now, self.idx as usize, self.sb.rate.app_limited != 0, self.lsndtime, &mut self.w);
        if self.rate_based {
            self.pacer.rate = cc.pacing_rate(self.idx as usize);
        }
    }

    /// Whether the congestion window counts as used, so that it may grow (`tcp.cwnd_limited`):
    /// - `rounds`: slow start while cwnd < 2 × the largest flight of this or the previous
    ///   round of ACKs; afterwards only if that flight filled the window;
    /// - `linux` (`tcp_is_cwnd_limited`, 6.x): a transmit attempt in the current window found
    ///   it full, or, in slow start, cwnd < 2 × the most bytes outstanding in the current
    ///   window.
    fn cwnd_limited(&self) -> bool {
        match self.p.cwnd_limited {
            CwndLimited::Rounds => {
                let m = self.round_max_in_flight.max(self.prev_round_max_in_flight);
                if self.w.in_slow_start() {
                    self.w.cwnd < 2 * m
                } else {
                    m + self.w.smss > self.w.cwnd
                }
            }
            CwndLimited::Linux => self.is_cwnd_limited || (self.w.in_slow_start() && self.w.cwnd < 2 * self.max_out),
        }
    }

    /// Linux `tcp_cwnd_validate` after a transmit attempt of new data (a no-op under the
    /// `rounds` rule): `limited` if the congestion window was full with data waiting to be
    /// sent on this subflow. A new window
    /// starts once everything sent when the last one was recorded is acknowledged; within a
    /// window the record only grows (a larger flight) or becomes cwnd-limited. Called after
    /// every new segment (equivalent to Linux's one call per `tcp_write_xmit`: the flight
    /// only grows during an attempt) and when an attempt is refused by the window.
    pub fn cwnd_validate(&mut self, limited: bool) {
        if self.p.cwnd_limited != CwndLimited::Linux {
            return;
        }
        let out = self.snd_nxt.dist(self.snd_una);
        if self.snd_una >= self.cwnd_usage_seq || limited || (!self.is_cwnd_limited && out > self.max_out) {
            self.is_cwnd_limited = limited;
            self.max_out = out;
            self.cwnd_usage_seq = self.snd_nxt;
        }
    }

    /// The second half of Linux `tcp_cwnd_validate`, after a push that sent data on this
    /// subflow: a full window ("network is fed fully") resets the record; otherwise the most
    /// bytes outstanding is kept and, once the window has not been full for an RTO, RFC 2861
    /// §3's decay runs (`tcp_cwnd_application_limited`, with `tcp.cwv` and `idle_restart`):
    /// in the Open state and unless the writer waits for send-buffer space (`nospace`,
    /// `SOCK_NOSPACE` on the socket the subflow shares with the connection), cwnd falls
    /// halfway to the larger of that record and the initial window, and ssthresh to at least
    /// ¾ of cwnd (`tcp_current_ssthresh`). The time of the check moves on either way.
    /// Deviation: Linux also restarts the clock when a recovery ends; here only a full
    /// window, an idle restart or a decay does.
    pub fn cwnd_app_check(&mut self, now: Time, nospace: bool) {
        let stamp = *self.cwnd_stamp.get_or_insert(now);
        if self.cwnd_limited() {
            self.cwnd_used = 0;
            self.cwnd_stamp = Some(now);
            return;
        }
        self.cwnd_used = self.cwnd_used.max(self.snd_nxt.dist(self.snd_una));
        if !(self.p.cwv && self.p.idle_restart) || now.since(stamp) < self.rtt.rto() {
            return;
        }
        if self.ca == CaState::Open && !nospace {
            let smss = self.w.smss;
            // In whole segments, as Linux counts them.
            let used = self.cwnd_used.div_ceil(smss).max(self.p.iw);
            let cwnd = self.w.cwnd / smss;
            if used < cwnd {
                self.w.ssthresh = self.w.ssthresh.max(self.w.cwnd / 2 + self.w.cwnd / 4);
                self.w.cwnd = ((cwnd + used) / 2) * smss;
                self.stats.cwv_decays += 1;
            }
            self.cwnd_used = 0;
        }
        self.cwnd_stamp = Some(now);
    }

    /// RFC 2861 / Linux `tcp_cwnd_restart`, checked before sending data.
    /// Returns true if the window was restarted.
    pub fn maybe_idle_restart(&mut self, now: Time) -> bool {
        if !self.p.idle_restart || !self.sb.is_empty() || self.stats.segments_sent == 0 || self.rate_based {
            return false;
        }
        let rto = self.rtt.rto();
        let idle = now.since(self.lsndtime);
        if idle <= rto {
            return false;
        }
        let restart = (self.p.iw * self.w.smss).min(self.w.cwnd);
        self.w.ssthresh = self.w.ssthresh.max(self.w.cwnd / 4 * 3);
        let mut cwnd = self.w.cwnd;
        let mut delta = idle.0 as i128;
        loop {
            delta -= rto.0 as i128;
            if delta <= 0 || cwnd <= restart {
                break;
            }
            cwnd /= 2;
        }
        self.w.cwnd = cwnd.max(restart);
        self.w.cnt = 0;
        self.cwnd_stamp = Some(now);
        self.stats.idle_restarts += 1;
        true
    }

    /// Records the transmission of new data `[snd_nxt, snd_nxt + len)` mapped to `dsn`.
    pub fn send_new(&mut self, now: Time, len: u64, dsn: Dsn) -> SentSeg {
        let seg = SentSeg { seq: self.snd_nxt, len: len as u32, flags: SegFlags::NONE, dsn, sent_at: now };
        let abs = self.sb.push(seg);
        self.sb.rack.on_sent(now, abs);
        self.snd_nxt += len;
        if len < self.w.smss {
            self.snd_sml = self.snd_nxt;
        }
        self.stats.dsn_sent_end = self.stats.dsn_sent_end.max(dsn.0 + len);
        self.note_sent(now, len);
        match self.p.cwnd_limited {
            CwndLimited::Rounds => self.round_max_in_flight = self.round_max_in_flight.max(self.sb.in_flight()),
            CwndLimited::Linux => self.cwnd_validate(!self.has_room()),
        }
        // Linux `tcp_write_xmit` → `tcp_schedule_loss_probe(sk, false)`.
        self.schedule_tlp(now, false);
        seg
    }

    /// Nagle's rule with Minshall's variant (Linux `tcp_nagle_check` with `nonagle` = 0): a
    /// short segment that would be the last queued one waits while data is outstanding and
    /// an earlier short segment is not yet acknowledged (`tcp_minshall_check`).
    pub fn nagle_holds(&self, len: u64, last: bool) -> bool {
        len < self.w.smss
            && last
            && self.snd_nxt > self.snd_una
            && self.snd_sml > self.snd_una
            && self.snd_sml <= self.snd_nxt
    }

    fn note_sent(&mut self, now: Time, len: u64) {
        if let Some(prr) = self.prr.as_mut() {
            prr.on_sent(len);
        }
        self.pacer.on_sent(now, len);
        self.stats.bytes_sent += len;
        self.stats.segments_sent += 1;
        self.lsndtime = now;
        if self.rto_at.is_none() {
            self.rto_at = Some(now + self.rtt.rto());
        }
    }

    /// RFC 6675 NextSeg() rule 1 within the window: the next lost segment to retransmit.
    /// `force` (the fast retransmit and the RTO) ignores the window, not the pacing gate:
    /// Linux's `tcp_xmit_retransmit_queue` checks pacing; only the RTO's retransmission
    /// (`tcp_retransmit_timer`), sent with `force` from the timer, bypasses it.
    pub fn retransmit_next(&mut self, now: Time, force: bool) -> Option<SentSeg> {
        if !force && self.sb.in_flight() + self.w.smss > self.w.cwnd {
            return None;
        }
        let pos = self.sb.next_retransmit()?;
        let seg = self.sb.mark_retransmitted(pos, now);
        self.stats.retrans_segments += 1;
        self.note_sent(now, seg.len as u64);
        if pos == 0 {
            // Linux re-arms the timer when it retransmits the head.
            self.rto_at = Some(now + self.rtt.rto());
        }
        Some(seg)
    }

    /// Processes the subflow part of an ACK: cumulative ACK, SACK blocks, loss detection,
    /// congestion state, congestion control and the retransmission timer.
    pub fn on_ack(
        &mut self,
        now: Time,
        ack: Seq,
        sack: &[(Seq, Seq)],
        cc: &mut dyn CongestionControl,
        peers: &[PeerView],
    ) -> AckOutcome {
        let mut out = AckOutcome::default();
        if ack > self.snd_nxt || self.state != State::Established {
            return out;
        }
        if ack >= self.snd_una {
            self.rcv_tstamp = now;
        }
        let rack = self.p.recovery == Recovery::RackTlp;
        self.sb.rack.begin_ack(self.rtt.min_rtt());
        let prior_lost = self.sb.lost_total();
        if self.rate_based {
            self.sb.rate.begin_ack(self.sb.in_flight());
        }
        let mut rtt = None;
        let advanced = ack > self.snd_una;
        // Bytes delivered for the first time by this ACK (Linux `tp->delivered` delta).
        let mut delivered = 0;
        if advanced {
            let a = self.sb.ack(ack, now);
            self.snd_una = ack;
            out.acked_bytes = a.bytes;
            delivered += a.delivered;
            self.stats.bytes_acked += a.bytes;
            // Karn: no sample from a cumulative ACK covering retransmitted data.
            rtt = if a.had_retrans { None } else { a.rtt };
        }
        let mut newly_sacked = 0;
        if !sack.is_empty() {
            let (n, srtt) = self.sb.sack(sack, self.snd_una, now);
            newly_sacked = n;
            delivered += n;
            rtt = rtt.or(srtt);
        }
        if let Some(r) = rtt {
            self.rtt.on_sample(r);
            self.rtt.backoff = 0;
        }
        if self.p.cwnd_limited == CwndLimited::Rounds && self.snd_una >= self.round_end {
            self.prev_round_max_in_flight = self.round_max_in_flight;
            self.round_max_in_flight = self.sb.in_flight();
            self.round_end = self.snd_nxt;
        }
        // Congestion state machine. The ACK that ends fast recovery does not grow the window
        // (Linux 3.x `tcp_may_raise_cwnd`): it acknowledges bytes SACKed long before.
        // Loss detection of a tail loss probe (Linux `tcp_process_tlp_ack`): a loss the probe
        // repaired costs one window reduction, done at once (CWR entered and left).
        if self.tlp.on_ack(self.snd_una, advanced, newly_sacked > 0) == TlpAck::Repaired
            && matches!(self.ca, CaState::Open | CaState::Disorder)
        {
            self.w.ssthresh = cc.ssthresh(now, self.idx as usize, &self.w, peers);
            if !self.rate_based {
                self.w.cwnd = self.w.ssthresh.max(self.w.smss);
            }
            self.w.cnt = 0;
        }
        let was_recovery = self.ca == CaState::Recovery;
        if matches!(self.ca, CaState::Recovery | CaState::Loss) && self.snd_una >= self.high_seq {
            if self.ca == CaState::Recovery && !self.rate_based {
                // Linux `tcp_end_cwnd_reduction`.
                self.w.cwnd = self.w.ssthresh.max(self.w.smss);
            }
            self.ca = CaState::Open;
            self.prr = None;
        }
        let newly_lost = if rack {
            if self.sb.rack.take_advanced() {
                self.rack_detect(now)
            } else {
                0
            }
        } else {
            u64::from(self.sb.mark_lost(self.p.dupthresh))
        };
        match self.ca {
            CaState::Open | CaState::Disorder if self.sb.lost_bytes() > 0 => {
                self.enter_recovery(now, cc, peers);
                out.entered_recovery = true;
            }
            CaState::Open if self.sb.sacked_bytes() > 0 => self.ca = CaState::Disorder,
            CaState::Disorder if self.sb.sacked_bytes() == 0 => self.ca = CaState::Open,
            _ => {}
        }
        if self.ca == CaState::Recovery {
            // PRR-SSRB when the ACK advanced snd_una and revealed no new loss, else PRR-CRB.
            let (pipe, ssthresh, smss) = (self.sb.in_flight(), self.w.ssthresh, self.w.smss);
            if let Some(cwnd) =
                self.prr.as_mut().and_then(|p| p.on_ack(delivered, pipe, ssthresh, smss, advanced && newly_lost == 0))
            {
                self.w.cwnd = cwnd;
            }
        }
        if self.rate_based {
            // Linux `tcp_rate_gen` + `tcp_cong_control` → `cong_control`, on every ACK.
            self.sb.rate.delivered += delivered;
            let lost = self.sb.lost_total() - prior_lost;
            let rs = self.sb.rate.gen(now, delivered, lost, rtt, self.rtt.min_rtt());
            let ev = self.rate_ack(now, rs);
            if cc.cong_control(&ev, &mut self.w) {
                self.sb.rate.app_limited = (self.sb.rate.delivered + self.sb.in_flight()).max(1);
            }
            self.pacer.rate = cc.pacing_rate(self.idx as usize);
        } else if out.acked_bytes > 0 || newly_sacked > 0 {
            let ev = Ack {
                now,
                sf: self.idx as usize,
                acked: out.acked_bytes,
                rtt,
                snd_una: self.snd_una,
                snd_nxt: self.snd_nxt,
                peers,
            };
            cc.pkts_acked(&ev, &mut self.w);
            if out.acked_bytes > 0 && !was_recovery && self.ca != CaState::Recovery && self.cwnd_limited() {
                cc.on_ack(&ev, &mut self.w);
            }
        }
        // RFC 6298 (5.2)/(5.3).
        if self.sb.is_empty() {
            self.rto_at = None;
            self.reo_at = None;
        } else if out.acked_bytes > 0 {
            self.rto_at = Some(now + self.rtt.rto());
        }
        // Linux `tcp_set_xmit_timer` after an ACK that acknowledged new data.
        if out.acked_bytes > 0 {
            self.schedule_tlp(now, true);
        }
        if matches!(self.ca, CaState::Recovery | CaState::Loss) {
            self.tlp.at = None;
        }
        out
    }

    /// Linux `tcp_init_cwnd_reduction` + `tcp_enter_recovery`: one window reduction for the
    /// episode, which ends when snd_una reaches the current snd_nxt.
    fn enter_recovery(&mut self, now: Time, cc: &mut dyn CongestionControl, peers: &[PeerView]) {
        self.high_seq = self.snd_nxt;
        self.w.ssthresh = cc.ssthresh(now, self.idx as usize, &self.w, peers);
        // A rate-based controller keeps the window (Linux: no `tcp_cwnd_reduction` with
        // `cong_control`).
        if !self.rate_based {
            if self.p.prr {
                self.prr = Some(Prr::start(self.w.cwnd));
            } else {
                self.w.cwnd = self.w.ssthresh;
            }
        }
        self.w.cnt = 0;
        self.ca = CaState::Recovery;
        self.stats.recoveries += 1;
        self.tlp.high_seq = None;
        self.tlp.at = None;
    }

    /// One RACK loss-detection pass; re-arms the reordering timer. Returns the segments
    /// newly marked lost.
    fn rack_detect(&mut self, now: Time) -> u64 {
        let in_recovery = matches!(self.ca, CaState::Recovery | CaState::Loss);
        let reo = self.sb.rack.reo_wnd(in_recovery, self.sb.sacked_segs(), self.p.dupthresh, self.rtt.srtt());
        let d = self.sb.rack_detect_loss(now, reo);
        self.reo_at = d.timeout;
        d.marked
    }

    /// Linux `tcp_schedule_loss_probe`: arms the probe timer in the Open state with data
    /// outstanding and no probe outstanding. `advancing`: called for an ACK that moved
    /// snd_una, which restarts the RTO (the cap is then a whole RTO).
    fn schedule_tlp(&mut self, now: Time, advancing: bool) {
        let armable = self.p.recovery == Recovery::RackTlp
            && !self.sb.is_empty()
            && self.ca == CaState::Open
            && self.tlp.high_seq.is_none();
        if !armable {
            if advancing {
                self.tlp.at = None; // the RTO takes the timer (Linux `tcp_rearm_rto`)
            }
            return;
        }
        let rto_left = match self.rto_at {
            Some(t) if !advancing => t.since(now.min(t)),
            _ => self.rtt.rto(),
        };
        let pto = Tlp::pto(self.rtt.srtt(), self.sb.len() == 1, self.p.rto_min, rto_left, self.p.rto_initial);
        self.tlp.at = Some(now + pto);
    }

    /// Every timer of the subflow: handshake, delayed ACK, retransmission, reordering, probe
    /// and pacing (the endpoint's next wake-up is the earliest of all its subflows').
    pub fn timers(&self) -> [Option<Time>; 6] {
        [self.hs_at, self.delack_at, self.rto_at, self.reo_at, self.tlp.at, self.pace_at]
    }

    /// The earliest of the retransmission, reordering, probe and pacing timers (all of
    /// [`Subflow::timers`] but the handshake and delayed-ACK ones).
    pub fn xmit_timer_at(&self) -> Option<Time> {
        self.timers()[2..].iter().fold(None, |t, &d| earliest(t, d))
    }

    /// Fires the RACK reordering timer and the probe timer if due (Linux
    /// `tcp_rack_reo_timeout`, `tcp_send_loss_probe`). Returns true if a loss probe is to be
    /// sent now: the caller sends one segment of new data through [`Subflow::send_new`] if it
    /// has some the receive window admits, else [`Subflow::probe_last`], then calls
    /// [`Subflow::on_probe_sent`].
    pub fn on_recovery_timers(&mut self, now: Time, cc: &mut dyn CongestionControl, peers: &[PeerView]) -> bool {
        if self.reo_at.is_some_and(|t| t <= now) {
            self.reo_at = None;
            let marked = self.rack_detect(now);
            if marked > 0 && matches!(self.ca, CaState::Open | CaState::Disorder) {
                self.enter_recovery(now, cc, peers);
                // Linux: `tcp_cwnd_reduction(sk, 1, 0, 0)`, room for the fast retransmit.
                let (pipe, ssthresh, smss) = (self.sb.in_flight(), self.w.ssthresh, self.w.smss);
                if let Some(cwnd) = self.prr.as_mut().and_then(|p| p.on_ack(smss, pipe, ssthresh, smss, false)) {
                    self.w.cwnd = cwnd;
                }
            }
        }
        if self.tlp.at.is_some_and(|t| t <= now) {
            self.tlp.at = None;
            return self.tlp.high_seq.is_none()
                && !self.sb.is_empty()
                && matches!(self.ca, CaState::Open | CaState::Disorder);
        }
        false
    }

    /// A loss probe without new data: the last segment again (RFC 8985 §7.3).
    pub fn probe_last(&mut self, now: Time) -> Option<SentSeg> {
        let seg = self.sb.probe_last(now)?;
        self.stats.retrans_segments += 1;
        self.note_sent(now, seg.len as u64);
        Some(seg)
    }

    /// Records that a loss probe went out (`retrans`: it was [`Subflow::probe_last`]); the
    /// RTO restarts from now (Linux `tcp_send_loss_probe`).
    pub fn on_probe_sent(&mut self, now: Time, retrans: bool) {
        self.tlp.on_probe(self.snd_nxt, retrans);
        self.rto_at = Some(now + self.rtt.rto());
    }

    /// The retransmission timer fired with data outstanding: Linux `tcp_enter_loss`.
    /// Returns true if this starts a new loss episode (the caller reinjects at MPTCP level).
    pub fn on_rto(&mut self, now: Time, cc: &mut dyn CongestionControl, peers: &[PeerView]) {
        // Linux `tcp_enter_loss`: reduce ssthresh unless this loss episode already did
        // (a timeout during fast recovery, or a repeated timeout).
        let reduce = matches!(self.ca, CaState::Open | CaState::Disorder) || self.snd_una >= self.high_seq;
        if reduce {
            self.w.ssthresh = cc.ssthresh(now, self.idx as usize, &self.w, peers);
        }
        self.w.cwnd = self.w.smss;
        self.w.cnt = 0;
        self.sb.enter_loss();
        self.ca = CaState::Loss;
        self.prr = None;
        self.reo_at = None;
        self.tlp.at = None;
        self.tlp.high_seq = None;
        self.high_seq = self.snd_nxt;
        self.stats.rtos += 1;
        self.rtt.backoff += 1;
        self.rto_at = Some(now + self.rtt.rto());
        cc.set_loss_state(now, self.idx as usize, self.snd_nxt);
        if self.rate_based {
            let ev = self.rate_ack(now, Default::default());
            cc.on_rto(&ev);
            self.pacer.rate = cc.pacing_rate(self.idx as usize);
        }
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
mod tests {
    use super::*;

    fn subflow(rule: CwndLimited) -> Subflow {
        let p = TcpParams {
            smss: 1000,
            iw: 10,
            slow_start: SlowStart::Linux,
            ca_counting: CaCounting::Bytes,
            b: 2,
            delack_timeout: Dur::from_ms(40),
            idle_restart: false,
            dupthresh: 3,
            rto_initial: Dur::from_secs(1),
            rto_min: Dur::from_ms(200),
            rto_max: Dur::from_secs(120),
            recovery: Recovery::Rfc6675,
            prr: false,
            quickack: false,
            cwnd_limited: rule,
            tso_defer: false,
            cwv: false,
            tsq: crate::config::TsqRule::Off,
            tx_skb_truesize: None,
        };
        Subflow::new(0, 0, false, State::Established, p)
    }

    /// Everything sent so far is acknowledged (the bookkeeping only; no congestion control).
    fn ack_all(s: &mut Subflow) {
        s.snd_una = s.snd_nxt;
        s.sb.ack(s.snd_nxt, Time::ZERO);
    }

    fn send(s: &mut Subflow, n: u64) {
        for _ in 0..n {
            let dsn = Dsn(s.snd_nxt.0);
            s.send_new(Time::ZERO, 1000, dsn);
        }
    }

    /// Linux `tcp_cwnd_validate` → `tcp_cwnd_application_limited`, worked by hand with
    /// 1000-byte segments, IW 10 and the initial RTO of 1 s: a 100-segment window in
    /// congestion avoidance (ssthresh 50) of which at most 20 segments are used. The first
    /// check starts the clock; one within the RTO changes nothing; one after it sets ssthresh
    /// to max(50, ¾ × 100) = 75 and cwnd to (100 + max(20, 10)) / 2 = 60 segments. A writer
    /// waiting for send-buffer space (`SOCK_NOSPACE`) keeps the window; a full window resets
    /// the clock.
    #[test]
    fn an_application_limited_window_decays_halfway_to_what_it_used_after_an_rto() {
        let mk = || {
            let mut s = subflow(CwndLimited::Linux);
            s.p.cwv = true;
            s.p.idle_restart = true;
            s.w.cwnd = 100_000;
            s.w.ssthresh = 50_000;
            send(&mut s, 20);
            s
        };
        let t = |ms| Time::ZERO + Dur::from_ms(ms);
        let mut s = mk();
        s.cwnd_app_check(t(0), false);
        s.cwnd_app_check(t(999), false);
        assert_eq!((s.w.cwnd, s.w.ssthresh), (100_000, 50_000));
        s.cwnd_app_check(t(1000), false);
        assert_eq!((s.w.cwnd, s.w.ssthresh, s.stats.cwv_decays), (60_000, 75_000, 1));
        // The clock restarted at the decay: the next one is an RTO later.
        s.cwnd_app_check(t(1999), false);
        assert_eq!(s.w.cwnd, 60_000);
        s.cwnd_app_check(t(2000), false);
        assert_eq!(s.w.cwnd, 40_000, "(60 + 20) / 2 segments");

        let mut s = mk();
        s.cwnd_app_check(t(0), true);
        s.cwnd_app_check(t(1500), true);
        assert_eq!((s.w.cwnd, s.stats.cwv_decays), (100_000, 0), "the writer waits for memory");

        let mut s = mk();
        s.cwnd_app_check(t(0), false);
        s.w.cwnd = 20_000;
        s.w.ssthresh = 10_000;
        s.cwnd_validate(true); // a transmit attempt found the window full
        s.cwnd_app_check(t(900), false);
        s.w.cwnd = 100_000;
        s.w.ssthresh = 50_000;
        s.cwnd_validate(false);
        ack_all(&mut s);
        send(&mut s, 20);
        s.cwnd_app_check(t(1500), false);
        assert_eq!(s.w.cwnd, 100_000, "the clock restarted at 0.9 s, when the window was full");
        s.cwnd_app_check(t(1900), false);
        assert_eq!(s.w.cwnd, 60_000);
    }

    #[test]
    fn nagle_with_minshall_holds_a_short_segment_while_an_earlier_short_one_is_unacknowledged() {
        // Linux `tcp_nagle_check` with nonagle = 0: partial && packets_out && tcp_minshall_check.
        let mut s = subflow(CwndLimited::Linux);
        // Nothing outstanding: a short segment goes.
        assert!(!s.nagle_holds(300, true));
        send(&mut s, 2);
        // Full segments outstanding, no short one: it goes (Minshall's variant, not RFC 896).
        assert!(!s.nagle_holds(300, true));
        s.send_new(Time::ZERO, 300, Dsn(2000));
        assert_eq!(s.snd_sml, Seq(2300));
        // A second short segment waits while the first is unacknowledged; a full one, or a
        // short one with more data queued behind it (not the last), does not.
        assert!(s.nagle_holds(124, true));
        assert!(!s.nagle_holds(1000, true));
        assert!(!s.nagle_holds(124, false));
        // The first short segment acknowledged: the next may go.
        ack_all(&mut s);
        assert!(!s.nagle_holds(124, true));
    }

    /// Counts the calls a controller gets.
    #[derive(Default)]
    struct Calls {
        pkts_acked: u32,
        on_ack: u32,
    }

    impl CongestionControl for Calls {
        fn name(&self) -> &'static str {
            "calls"
        }
        fn on_ack(&mut self, _ack: &Ack, _w: &mut Window) {
            self.on_ack += 1;
        }
        fn pkts_acked(&mut self, ack: &Ack, _w: &mut Window) {
            assert!(ack.rtt.is_some(), "an in-order first transmission gives an RTT sample");
            self.pkts_acked += 1;
        }
        fn ssthresh(&mut self, _now: Time, _sf: usize, w: &Window, _peers: &[PeerView]) -> u64 {
            w.cwnd / 2
        }
    }

    /// Linux calls `pkts_acked` (CUBIC's HyStart sampling) from `tcp_clean_rtx_queue` for every
    /// ACK of new data, and `cong_avoid` only while the window may grow: in congestion
    /// avoidance with 5 of 50 segments in flight, two ACKs reach the one and not the other.
    #[test]
    fn every_ack_reaches_pkts_acked_but_only_a_used_window_grows() {
        let mut s = subflow(CwndLimited::Linux);
        s.w.cwnd = 50_000;
        s.w.ssthresh = 20_000;
        s.state = State::Established;
        send(&mut s, 5);
        let mut cc = Calls::default();
        let now = Time::ZERO + Dur::from_ms(30);
        s.on_ack(now, Seq(2_000), &[], &mut cc, &[]);
        s.on_ack(now, Seq(5_000), &[], &mut cc, &[]);
        assert_eq!((cc.pkts_acked, cc.on_ack), (2, 0));
        // A full window (50 of 50 in flight): the next ACK may grow it.
        send(&mut s, 50);
        s.on_ack(now, Seq(7_000), &[], &mut cc, &[]);
        assert_eq!((cc.pkts_acked, cc.on_ack), (3, 1));
    }

    /// Linux 6.x `tcp_cwnd_validate` / `tcp_is_cwnd_limited`, worked by hand. Slow start,
    /// cwnd 50: a window of 40 segments, all acknowledged, then a window of 10. The kernel
    /// forgets the 40 (`max_packets_out` restarts with the new window), so slow start may
    /// grow cwnd only while it is below 2 × 10 segments.
    #[test]
    fn linux_counts_the_flight_of_the_current_window_only() {
        let mut s = subflow(CwndLimited::Linux);
        s.w.cwnd = 50_000;
        send(&mut s, 40);
        assert!(s.cwnd_limited(), "slow start: 50 < 2 × 40");
        ack_all(&mut s);
        send(&mut s, 10);
        assert_eq!(s.max_out, 10_000);
        s.w.cwnd = 30_000;
        assert!(!s.cwnd_limited(), "30 >= 2 × 10: the window is not used");
        s.w.cwnd = 15_000;
        assert!(s.cwnd_limited(), "15 < 2 × 10");
    }

    /// Congestion avoidance (cwnd above ssthresh): the window counts as used once a send
    /// filled it, until a window passes in which no attempt filled it.
    #[test]
    fn linux_counts_a_filled_window_until_the_next_window() {
        let mut s = subflow(CwndLimited::Linux);
        s.w.ssthresh = 5_000;
        s.w.cwnd = 10_000;
        send(&mut s, 9);
        assert!(!s.cwnd_limited(), "9 of 10 segments: not full");
        send(&mut s, 1);
        assert!(s.cwnd_limited(), "the tenth segment filled the window");
        s.snd_una = Seq(s.snd_nxt.0 - 5_000);
        s.sb.ack(s.snd_una, Time::ZERO);
        assert!(s.cwnd_limited(), "the window of the filling send has not passed");
        ack_all(&mut s);
        send(&mut s, 3);
        assert!(!s.cwnd_limited(), "a new window with 3 of 10 segments");
        // A transmit attempt refused by the full window records it as used at once.
        s.cwnd_validate(true);
        assert!(s.cwnd_limited());
    }
}
