//! The sending loop and the timers of an [`Endpoint`].
//!
//! Order of transmission (Linux: `tcp_xmit_retransmit_queue` per subflow, then
//! `mptcp_write_xmit` for the connection): first each subflow's lost segments within its
//! window (RFC 6675 NextSeg rule 1), then connection-level reinjections on a subflow other
//! than the one they were stuck on, then new data, each segment on the subflow the
//! scheduler picks. A scheduler that queues (the upstream Linux `default`) assigns new data
//! to subflow send queues instead; each subflow sends its queue, after its retransmissions,
//! as its window allows, and its send buffer grows as Linux's does (`tcp_new_space`): after
//! an ACK, once the push attempt leaves its congestion window not full. With Linux's TSO
//! deferral (`tcp.tso_defer`, [`crate::tcp::tso`]) the subflows transmit once, after the
//! scheduler has assigned the push's data (Linux `__mptcp_push_pending` assigns, then
//! `tcp_push` transmits), in transmit units the deferral may hold back. Persist timer: when
//! the peer's window admits nothing and nothing is in flight, a zero-window probe is sent
//! with exponential backoff.
//!
//! Pacing (`tcp::pacing`, subflows of a rate-based controller only): a subflow whose pacing
//! gate is closed sends nothing — neither retransmissions (Linux `tcp_xmit_retransmit_queue`
//! checks `tcp_pacing_check`, the fast retransmit included) nor queued or new data
//! (`tcp_write_xmit`), nor reinjections or copies — and schedulers see it without room, so
//! unqueued data stays at the connection level until the gate opens. A tail loss probe with
//! new data is paced too (Linux sends it through `tcp_write_xmit`; when the gate is closed
//! no probe goes and the retransmission timer is re-armed, as `tcp_send_loss_probe` does),
//! while a probe that retransmits the last segment and the RTO's retransmission are not
//! (Linux `__tcp_retransmit_skb` from the timers). Every transmission moves the gate. When
//! the gate, not the window, stops a subflow, the pacing timer is armed for the moment it
//! opens (Linux arms it in `tcp_pacing_check`). Deviation: Linux's out-of-tree schedulers (minRTT, ...) hand a
//! segment to a subflow whose pacing gate is closed, where it waits (TCP small queues let
//! about 1 ms of data wait); here it goes to another subflow with room, or waits at the
//! connection level.

use crate::config::PenalisationRule;
use crate::mptcp::connection::Endpoint;
use crate::mptcp::sched::{Pick, SchedCtx, SchedView};
use crate::mptcp::sendbuf::ConnSender;
use crate::mptcp::sfqueue::{wmem_truesize, SubflowQueue};
use crate::net::packet::{flags, MpOption, Packet};
use crate::tcp::subflow::{CaState, State, Subflow};
use crate::tcp::tso::{self, Defer, DeferCtx};
use crate::units::{jiffies_between, to_jiffies, Dsn, Time};

/// Size of the MPTCP socket's data fragments (`struct mptcp_data_frag`): data is copied
/// into 32 KiB page fragments (`SKB_FRAG_PAGE_ORDER` = 3), one fragment per page.
pub const DFRAG: u64 = 32 * 1024;

/// The scheduler's view of the connection.
fn sched_ctx<'a>(now: Time, views: &'a [SchedView], snd: &ConnSender) -> SchedCtx<'a> {
    SchedCtx {
        now,
        subflows: views,
        unsent: snd.unsent(),
        data_una: snd.data_una,
        snd_nxt: snd.snd_nxt,
        rwnd_room: snd.rwnd_right.dist(snd.snd_nxt),
        rwnd: snd.rwnd_right.dist(snd.data_una),
    }
}

// Linux's default `tcp_pacing_ss_ratio` and `tcp_pacing_ca_ratio`, which size its transmit
// skbs (`tcp_tso_autosize`).
use crate::tcp::pacing::{CA_RATIO as PACING_CA_RATIO, SS_RATIO as PACING_SS_RATIO};

/// How a subflow's data is charged to its memory: payload bytes, or skb truesize with the
/// largest window the peer offered (which bounds the write-queue buffers).
#[derive(Clone, Copy)]
enum Charge {
    Payload,
    Truesize { max_window: u64 },
}

#[inline]
fn view_of(now: Time, s: &Subflow, q: &SubflowQueue, charge: Charge) -> SchedView {
    // Sent and not cumulatively acknowledged (Linux `packets_out`, in bytes).
    let out = s.snd_nxt.dist(s.snd_una);
    let mut v = SchedView {
        usable: s.established() && !s.stale.on,
        has_room: s.can_send(now),
        backup: s.backup,
        srtt: s.rtt.srtt(),
        rttvar: s.rtt.rttvar(),
        min_rtt: s.rtt.min_rtt(),
        cwnd: s.w.cwnd,
        ssthresh: s.w.ssthresh,
        in_flight: s.sb.in_flight(),
        out,
        smss: s.w.smss,
        recovering: matches!(s.ca(), CaState::Recovery | CaState::Loss),
        queued: out + q.bytes(),
        sndbuf: q.sndbuf,
        pacing_rate: s.pacer.rate,
    };
    if let Charge::Truesize { max_window } = charge {
        let unit = tso::autosize_segs(v.linux_pacing_rate(PACING_SS_RATIO, PACING_CA_RATIO), v.min_rtt, s.w.smss);
        v.queued = wmem_truesize(out, q.bytes(), s.w.smss, unit, tso::size_goal(max_window, s.w.smss));
    }
    v
}

impl Endpoint {
    fn charge(&self) -> Charge {
        if self.truesize {
            Charge::Truesize { max_window: self.snd.max_window }
        } else {
            Charge::Payload
        }
    }

    fn sched_views(&mut self, now: Time) {
        self.refresh_stale();
        self.views.clear();
        let charge = self.charge();
        for (s, q) in self.subflows.iter().zip(&self.sfq) {
            self.views.push(s.as_ref().map(|s| view_of(now, s, q, charge)).unwrap_or_default());
        }
    }

    fn can_use(&self, sf: usize) -> bool {
        self.views.get(sf).is_some_and(|v| v.usable && v.has_room)
    }

    /// Sends everything the windows, the buffers and the scheduler allow.
    pub fn xmit(&mut self, now: Time, out: &mut Vec<Packet>) {
        if !self.app_started {
            return;
        }
        if !self.mptcp {
            // Linux `tcp_sendmsg` → `tcp_rate_check_app_limited`, before the write (the MPTCP
            // data path does not call it on subflows).
            // The socket's unsent data (`write_seq - snd_nxt`): what the connection holds and
            // what a queueing scheduler already handed to the subflow.
            let unsent = self.snd.unsent() + self.sfq[0].bytes();
            if let Some(s) = self.subflows[0].as_mut().filter(|s| s.rate_based) {
                s.check_app_limited(unsent);
            }
        }
        self.snd.app_write(now);
        self.sent_before.clear();
        self.sent_before.extend(self.subflows.iter().map(|s| s.as_ref().map_or(0, |s| s.stats.segments_sent)));
        for i in 0..self.subflows.len() {
            while let Some(s) = self.subflows[i].as_mut().filter(|s| s.established() && s.pacer.open(now)) {
                let Some(seg) = s.retransmit_next(now, false) else {
                    break;
                };
                self.data_packet(now, i, seg, out);
            }
        }
        let queues = self.sched.queues();
        // With TSO deferral the subflows transmit once the push has assigned its data, as
        // Linux's `tcp_push` after `__mptcp_push_pending` (what a subflow may defer depends on
        // how much it holds); otherwise queued data goes out before new data is assigned and
        // after every assignment.
        if !self.tso_defer {
            self.flush_queues(now, queues, out);
        }
        self.sched_views(now);
        self.sched.new_round();
        loop {
            // Reinjections first; those already DATA_ACKed are dropped.
            if let Some(&(dsn, len, from)) = self.snd.reinject.front() {
                let end = dsn + len;
                if end <= self.snd.data_una {
                    self.snd.reinject.pop_front();
                    continue;
                }
                let ctx = sched_ctx(now, &self.views, &self.snd);
                if let Some(j) = self.sched.pick_reinject(&ctx, from as usize).filter(|&j| self.can_use(j)) {
                    self.snd.reinject.pop_front();
                    let start = dsn.max(self.snd.data_una);
                    let n = end.dist(start).min(self.params[j].smss);
                    if end.dist(start) > n {
                        self.snd.reinject.push_front((start + n, end.dist(start) - n, from));
                    }
                    self.send_on(now, j, start, n, out);
                    self.snd.reinjected_bytes += n;
                    continue;
                }
            }
            let ctx = sched_ctx(now, &self.views, &self.snd);
            match self.sched.next(&ctx) {
                Pick::Wait => break,
                Pick::New { sf, skip } if queues => {
                    if !self.views.get(sf).is_some_and(|v| v.usable) {
                        debug_assert!(false, "{} picked subflow {sf}, which is not usable", self.sched.name());
                        break;
                    }
                    let Some((dsn, len)) = self.snd.next_new(skip, self.params[sf].smss) else {
                        break;
                    };
                    self.snd.mark_sent(dsn, len);
                    self.sfq[sf].push(dsn, len);
                    self.sched.on_sent(sf, dsn, len);
                    if !self.tso_defer {
                        self.flush_queue(now, sf, out);
                    }
                    let charge = self.charge();
                    let s = self.subflows[sf].as_ref().expect("picked subflow exists");
                    self.views[sf] = view_of(now, s, &self.sfq[sf], charge);
                }
                Pick::New { sf, skip } => {
                    if !self.can_use(sf) {
                        debug_assert!(false, "{} picked subflow {sf}, which cannot send", self.sched.name());
                        break;
                    }
                    match self.snd.next_new(skip, self.params[sf].smss) {
                        Some((dsn, len)) => {
                            self.snd.mark_sent(dsn, len);
                            self.send_on(now, sf, dsn, len, out);
                            self.sched.on_sent(sf, dsn, len);
                        }
                        None => {
                            if !self.receive_buffer_optimisation(now, sf, out) {
                                break;
                            }
                        }
                    }
                }
                Pick::Copy { sf, dsn, len } => {
                    if !self.can_use(sf) {
                        debug_assert!(false, "{} picked subflow {sf}, which cannot send", self.sched.name());
                        break;
                    }
                    let start = dsn.max(self.snd.data_una);
                    let end = (dsn + len).min(self.snd.snd_nxt);
                    if end > start {
                        let n = end.dist(start).min(self.params[sf].smss);
                        self.send_on(now, sf, start, n, out);
                        self.sched.on_sent(sf, start, n);
                    } else {
                        self.sched.on_sent(sf, dsn, len);
                    }
                }
            }
        }
        if self.tso_defer {
            self.flush_queues(now, queues, out);
        }
        // One pass over the subflows, in Linux's order for each:
        // - per-segment schedulers keep unsent data at the connection level: a subflow whose
        //   window is full while data waits that the peer's window admits is cwnd-limited, as
        //   a TCP socket with data in its write queue (`tcp_cwnd_validate`);
        // - Linux `tcp_cwnd_validate` closing each push that sent on a subflow
        //   (`tcp_write_xmit`, and `mptcp_write_xmit` for the subflows it pushed): RFC 2861's
        //   record and decay;
        // - Linux `tcp_new_space` after an ACK freed data: the send buffer grows unless the
        //   congestion window is full.
        let full_limits = !queues && self.snd.unsent() > 0 && !self.snd.rwnd_blocked(self.params[0].smss);
        let nospace = self.snd.app_blocked();
        let cap = self.subflow_sndbuf_cap();
        let mut grew = false;
        for ((s, q), &before) in self.subflows.iter_mut().zip(self.sfq.iter_mut()).zip(&self.sent_before) {
            let Some(s) = s.as_mut() else { continue };
            if full_limits && s.established() && !s.has_room() {
                s.cwnd_validate(true);
            }
            if s.stats.segments_sent > before {
                s.cwnd_app_check(now, nospace);
            }
            if q.acked {
                q.acked = false;
                if s.has_room() {
                    let before = q.sndbuf;
                    q.expand(s.w.smss, s.w.cwnd, cap);
                    grew |= q.sndbuf != before;
                }
            }
            if s.pacer.rate != 0 {
                s.timers.pace.set((!s.pacer.open(now) && s.has_room()).then_some(s.pacer.next_at));
            }
        }
        if grew {
            self.sync_sndbuf();
        }
        if self.mptcp_rtx {
            self.set_rtx_ival(now);
            if self.rtx_at.is_none() && self.snd.snd_nxt > self.snd.data_una {
                self.rtx_at = Some(now + self.rtx_ival);
            }
        }
        let could_send = self.views.iter().any(|v| v.usable && v.has_room);
        let smss = self.params[0].smss;
        self.snd.account(now, could_send, smss);
        // Persist timer (RFC 9293 §3.8.6.1).
        let nothing_in_flight = self.subflows.iter().flatten().all(|s| s.sb.is_empty());
        if self.snd.rwnd_blocked(smss) && nothing_in_flight {
            if self.persist_at.is_none() {
                let rto = self.subflows.iter().flatten().map(|s| s.rtt.rto()).min().unwrap_or_default();
                self.persist_at = Some(now + rto.times(1 << self.persist_backoff.min(10)).min(self.params[0].rto_max));
            }
        } else {
            self.persist_at = None;
            self.persist_backoff = 0;
        }
    }

    /// Linux `__mptcp_set_timeout` as `mptcp_subflow_get_send` calls it: the MPTCP timer's
    /// interval is the longest time any subflow's pending retransmission timer still has to
    /// run, or `TCP_RTO_MIN` (the subflows' `rto_min`) when none is pending.
    fn set_rtx_ival(&mut self, now: Time) {
        let tout = self.subflows.iter().flatten().filter_map(|s| s.xmit_timer_at()).map(|t| t.since(now)).max();
        self.rtx_ival = tout.filter(|d| *d > crate::units::Dur::ZERO).unwrap_or(self.params[0].rto_min);
    }

    /// DATA_ACK moved (Linux `__mptcp_clean_una`): the MPTCP timer stops when everything
    /// written was acknowledged, and restarts otherwise.
    pub(crate) fn on_data_acked(&mut self, now: Time) {
        if !self.mptcp_rtx {
            return;
        }
        if self.snd.data_una >= self.snd.write_seq {
            self.rtx_at = None;
        } else {
            self.rtx_at = Some(now + self.rtx_ival);
        }
    }

    /// The MPTCP-level retransmission timer fired (Linux `mptcp_retransmit_timer` →
    /// `__mptcp_retrans`): the oldest data not DATA_ACKed, up to the end of its data fragment
    /// (`mptcp_rtx_head`, the page-fragment chunk of at most [`DFRAG`] bytes it was written
    /// in) and to what was already sent, goes again on the first subflow whose
    /// retransmission and write queues are empty (`mptcp_subflow_get_retrans`, backup
    /// subflows only when no regular one qualifies and no busy one progressed); the busy
    /// subflows are checked for staleness on the way ([`crate::mptcp::stale`]). If none is
    /// idle, nothing is sent. The timer is restarted either way.
    /// Deviation: fragment boundaries are taken at multiples of [`DFRAG`] in data-sequence
    /// space (the kernel's follow its page fragments).
    fn on_rtx_timer(&mut self, now: Time, out: &mut Vec<Packet>) {
        self.rtx_at = None;
        let una = self.snd.data_una;
        if self.snd.snd_nxt > una {
            if let Some(j) = self.retrans_subflow() {
                let frag_end = (una.0 / DFRAG + 1) * DFRAG;
                let end = frag_end.min(self.snd.snd_nxt.0);
                let len = end - una.0;
                self.sfq[j].push(una, len);
                self.snd.reinjected_bytes += len;
                self.sched_views(now);
                self.flush_queue(now, j, out);
            }
        }
        self.set_rtx_ival(now);
        if self.snd.data_una < self.snd.write_seq {
            self.rtx_at = Some(now + self.rtx_ival);
        }
    }

    /// Sends `[dsn, dsn + len)` as a new segment of subflow `j`.
    fn send_on(&mut self, now: Time, j: usize, dsn: Dsn, len: u64, out: &mut Vec<Packet>) {
        let s = self.subflows[j].as_mut().expect("picked subflow exists");
        if s.maybe_idle_restart(now) {
            self.cc.on_idle_restart(now, j);
        }
        let charge = self.charge();
        let s = self.subflows[j].as_mut().expect("picked subflow exists");
        s.tx_start(now, self.cc.as_mut());
        let seg = s.send_new(now, len, dsn);
        self.views[j] = view_of(now, s, &self.sfq[j], charge);
        self.data_packet(now, j, seg, out);
    }

    /// Sends every subflow's queued data (every subflow's when the scheduler queues, else only
    /// those holding data).
    fn flush_queues(&mut self, now: Time, queues: bool, out: &mut Vec<Packet>) {
        for i in 0..self.subflows.len() {
            if queues || !self.sfq[i].is_empty() {
                self.flush_queue(now, i, out);
            }
        }
    }

    /// Sends subflow `j`'s queued data as far as its congestion window allows, in transmit
    /// units that Linux's TSO deferral may hold back ([`crate::tcp::tso`], with
    /// `tcp.tso_defer`).
    fn flush_queue(&mut self, now: Time, j: usize, out: &mut Vec<Packet>) {
        // Segments left in the current transmit unit: the deferral test runs where a unit
        // would start (Linux `tcp_write_xmit` tests every skb it is about to send).
        let mut unit_left = 0;
        let mut cwnd_limited = false;
        while self.subflows[j].as_ref().is_some_and(|s| s.can_send(now)) {
            if self.tso_defer && unit_left == 0 && !self.sfq[j].is_empty() {
                match self.tso_unit(now, j) {
                    Ok(segs) => unit_left = segs,
                    Err(Defer::CwndLimited) => {
                        cwnd_limited = true;
                        break;
                    }
                    Err(_) => break,
                }
            }
            // A short piece that is all the subflow holds waits under Nagle's rule.
            if self.snd.fill_tail {
                let (queued, smss) = (self.sfq[j].bytes(), self.params[j].smss);
                if self.subflows[j].as_ref().is_some_and(|s| s.nagle_holds(queued.min(smss), queued <= smss)) {
                    break;
                }
            }
            let Some((dsn, len)) = self.sfq[j].pop(self.params[j].smss) else {
                break;
            };
            unit_left = unit_left.saturating_sub(1);
            self.send_on(now, j, dsn, len, out);
        }
        // Data left waiting behind a full window: Linux `tcp_write_xmit` stops at
        // `tcp_cwnd_test` (or a deferral for want of window) and records the window as used
        // (`tcp_cwnd_validate`).
        if !self.sfq[j].is_empty() {
            if let Some(s) = self.subflows[j].as_mut().filter(|s| s.established() && (cwnd_limited || !s.has_room())) {
                s.cwnd_validate(true);
            }
        }
    }

    /// The segments of the next transmit unit of subflow `j`, or why Linux would wait
    /// (`tcp_tso_should_defer`). A head buffer of one segment is never deferred (Linux tests
    /// it with Nagle instead, which a full segment passes).
    fn tso_unit(&self, now: Time, j: usize) -> Result<u64, Defer> {
        let s = self.subflows[j].as_ref().expect("subflow exists");
        let v = &self.views[j];
        let smss = s.w.smss;
        let max_segs = tso::autosize_segs(v.linux_pacing_rate(PACING_SS_RATIO, PACING_CA_RATIO), s.rtt.min_rtt(), smss);
        let goal = tso::size_goal(self.snd.max_window, smss);
        let queued = self.sfq[j].bytes();
        let skb_len = queued.min(goal);
        if skb_len <= smss {
            return Ok(max_segs);
        }
        let c = DeferCtx {
            now,
            recovering: matches!(s.ca(), CaState::Recovery | CaState::Loss),
            last_xmit: s.lsndtime,
            cwnd: s.w.cwnd,
            in_flight: s.sb.in_flight(),
            smss,
            max_segs,
            skb_len,
            more_after: queued > goal,
            head_sent_at: s.sb.front().map(|g| g.sent_at),
            srtt: s.rtt.srtt(),
        };
        match tso::should_defer(&c) {
            Defer::Send => Ok(max_segs),
            d => Err(d),
        }
    }

    /// M1/M2 of the out-of-tree Linux MPTCP (`mptcp_rcv_buf_optimization`, v0.9x
    /// `mptcp_sched.c`), called when subflow `sf` has room but no new data may go: the
    /// connection's receive window is full while data waits (`mptcp_next_segment`, with
    /// penalisation), or nothing is left to send and the writer waits for send-buffer space
    /// (`__mptcp_next_segment`, penalisation only while the send buffer is still full,
    /// `!sk_stream_memory_free`). Nothing happens unless data is outstanding. Returns true if
    /// it sent something.
    /// - M2: unless a penalisation by `sf` happened less than its SRTT ago (in jiffies, the
    ///   clock starting when the subflow was set up: `defsched_init`), the first other subflow
    ///   holding the oldest unacknowledged data is looked at, and if it has a larger SRTT and
    ///   is in the Open state its cwnd is halved (at least one segment), and its ssthresh
    ///   unless it was in slow start (at least two segments).
    /// - M1: if that data was never sent on `sf`, it is sent there when a holder's window is
    ///   at most 4 segments, or when every holder looked at before has more than 4 × `sf`'s
    ///   SRTT (the first holder within 4 × stops the search).
    ///
    /// Subflows are looked at newest first, as Linux walks its `connection_list`.
    fn receive_buffer_optimisation(&mut self, now: Time, sf: usize, out: &mut Vec<Packet>) -> bool {
        let (m1, m2) = self.sched.receive_buffer_optimisation();
        if !(m1 || m2) {
            return false;
        }
        let smss = self.params[sf].smss;
        let full = self.snd.full();
        let penal = if self.snd.unsent() > 0 {
            // Data waits: only a full receive window brings us here with penalisation.
            if !self.snd.rwnd_blocked(smss) {
                return false;
            }
            true
        } else if self.snd.app_blocked() {
            full
        } else {
            return false;
        };
        self.snd.rbuf_calls += 1;
        self.snd.rbuf_calls_full += full as u64;
        let una = self.snd.data_una;
        if self.snd.snd_nxt <= una {
            return false;
        }
        let holds = |s: &Subflow| s.sb.find_dsn(una).is_some();
        let fast = self.subflows[sf].as_ref().expect("picked subflow exists");
        let fast_srtt = fast.rtt.srtt().unwrap_or_default();
        let set_up = fast.stats.established_at.unwrap_or(Time::ZERO);
        let last = *self.last_rbuf_opti[sf].get_or_insert(set_up);
        let n_subflows = self.subflows.len();
        let others = move || (0..n_subflows).rev().filter(move |&j| j != sf);
        if m2 && penal && self.penalisation_rule == PenalisationRule::V088 {
            self.penalise_v088(now, sf, una);
        } else if m2 && penal && jiffies_between(last, now) >= to_jiffies(fast_srtt) {
            let charge = self.charge();
            if let Some(j) = others().find(|&j| self.subflows[j].as_ref().is_some_and(holds)) {
                let h = self.subflows[j].as_mut().expect("holder exists");
                if h.rtt.srtt().is_some_and(|r| r > fast_srtt) && h.ca() == CaState::Open {
                    let prior = h.w.cwnd;
                    h.w.cwnd = (h.w.cwnd / 2).max(h.w.smss);
                    if prior >= h.w.ssthresh {
                        h.w.ssthresh = (h.w.ssthresh / 2).max(2 * h.w.smss);
                    }
                    h.stats.penalisations += 1;
                    self.views[j] = view_of(now, h, &self.sfq[j], charge);
                    self.snd.penalisations += 1;
                    self.last_rbuf_opti[sf] = Some(now);
                }
            }
        }
        if !m1 {
            return false;
        }
        let fast = self.subflows[sf].as_ref().expect("picked subflow exists");
        // Already sent there? Copies made here are remembered explicitly: they break the
        // increasing-DSN order `find_dsn` relies on.
        if holds(fast) || self.snd.m1_copies.contains(&(una, sf as u8)) {
            return false;
        }
        let mut retrans = None;
        for j in others() {
            let Some(h) = self.subflows[j].as_ref() else { continue };
            let Some(seg) = h.sb.find_dsn(una) else { continue };
            if h.w.cwnd <= 4 * h.w.smss {
                retrans = Some(*seg);
                break;
            }
            if h.rtt.srtt().is_none_or(|r| r.0 <= 4 * fast_srtt.0) {
                retrans = None;
                break;
            }
            retrans = Some(*seg);
        }
        let Some(seg) = retrans else {
            return false;
        };
        let n = (seg.dsn + seg.len as u64).dist(una).min(smss);
        self.send_on(now, sf, una, n, out);
        self.snd.opportunistic_retransmissions += 1;
        self.snd.m1_copies.push((una, sf as u8));
        true
    }

    /// M2 as v0.86–v0.88 wrote it (`mptcp_rcv_buf_optimization` in `mptcp_output.c`): the
    /// first other subflow holding the oldest unacknowledged data (newest first), unless it
    /// was penalised less than its own SRTT ago (in jiffies), is halved (at least one segment)
    /// with its ssthresh set to the halved window (at least two segments) if its rate
    /// cwnd / SRTT is below that of the calling subflow `sf`, in whatever state it is.
    fn penalise_v088(&mut self, now: Time, sf: usize, una: Dsn) {
        let caller = self.subflows[sf].as_ref().expect("picked subflow exists");
        let (c_cwnd, c_srtt) = (caller.w.cwnd, caller.rtt.srtt().unwrap_or_default().0);
        let Some(j) = (0..self.subflows.len())
            .rev()
            .filter(|&j| j != sf)
            .find(|&j| self.subflows[j].as_ref().is_some_and(|s| s.sb.find_dsn(una).is_some()))
        else {
            return;
        };
        let charge = self.charge();
        let h = self.subflows[j].as_mut().expect("holder exists");
        let h_srtt = h.rtt.srtt().unwrap_or_default();
        if self.last_penalised[j].is_some_and(|t| jiffies_between(t, now) < to_jiffies(h_srtt)) {
            return;
        }
        if v088_slower(h.w.cwnd, h_srtt.0, c_cwnd, c_srtt) {
            h.w.cwnd = (h.w.cwnd / 2).max(h.w.smss);
            h.w.ssthresh = h.w.cwnd.max(2 * h.w.smss);
            h.stats.penalisations += 1;
            self.views[j] = view_of(now, h, &self.sfq[j], charge);
            self.snd.penalisations += 1;
            self.last_penalised[j] = Some(now);
        }
    }

    /// RACK reordering and tail-loss-probe timers of subflow `i` (`tcp::rack`, `tcp::tlp`).
    /// A probe carries new data when the receive window admits some, else the last segment.
    fn recovery_timers(&mut self, now: Time, i: usize, out: &mut Vec<Packet>) {
        let Some(s) = self.subflows[i].as_ref() else { return };
        if !s.timers.reorder.expired(now) && !s.timers.probe.expired(now) {
            return;
        }
        self.snapshot_peers();
        let s = self.subflows[i].as_mut().expect("subflow");
        if !s.on_recovery_timers(now, self.cc.as_mut(), &self.peers) {
            return;
        }
        let paced_out = !s.pacer.open(now);
        let retrans = match self.snd.next_new(0, self.params[i].smss) {
            Some(_) if paced_out => {
                // Linux `tcp_send_loss_probe`: `tcp_write_xmit` sent nothing; re-arm the RTO.
                s.timers.rto.arm(now + s.rtt.rto());
                return;
            }
            Some((dsn, len)) => {
                self.snd.mark_sent(dsn, len);
                self.sched_views(now);
                self.send_on(now, i, dsn, len, out);
                self.sched.on_sent(i, dsn, len);
                false
            }
            None => match s.probe_last(now) {
                Some(seg) => {
                    self.data_packet(now, i, seg, out);
                    true
                }
                None => return,
            },
        };
        self.subflows[i].as_mut().expect("subflow").on_probe_sent(now, retrans);
    }

    /// The earliest pending timer.
    pub fn poll_timeout(&self, now: Time) -> Option<Time> {
        // In nanoseconds, an absent deadline counting as the end of time (a minimum without
        // branches), with whether any deadline was present, to tell "none" from "at the end
        // of time".
        let (mut t, mut any) = (u64::MAX, false);
        let mut add = |d: Option<Time>| {
            any |= d.is_some();
            t = t.min(d.map_or(u64::MAX, |d| d.0));
        };
        add(self.persist_at);
        add(self.rtx_at);
        add(self.pm.retrans_at);
        if self.is_sender && self.app_started {
            add(self.snd.app.next_write(now));
        }
        for s in self.subflows.iter().flatten() {
            s.timers.deadlines().into_iter().for_each(&mut add);
            // A subflow TCP small queues hold back may send once enough has left the host.
            if self.is_sender && s.tsq_throttled(now) {
                add(s.tsq.unthrottle_at(now, s.tsq_limit()));
            }
        }
        any.then_some(Time(t))
    }

    /// Fires every timer due at `now`.
    pub fn on_timeout(&mut self, now: Time, out: &mut Vec<Packet>) {
        let act = self.pm.on_timeout(now);
        self.pm_act(now, act, out);
        for i in 0..self.subflows.len() {
            let Some(s) = self.subflows[i].as_mut() else {
                continue;
            };
            if s.timers.handshake.expired(now) {
                s.hs_backoff += 1;
                s.hs_retransmitted = true;
                s.stats.syn_retransmits += 1;
                s.hs_sent_at = now;
                let base = if s.state() == State::PreEstablished { s.rtt.rto() } else { s.p.rto_initial };
                s.timers.handshake.arm(now + base.times(1 << s.hs_backoff.min(10)).min(s.p.rto_max));
                self.handshake_packet(now, i, out);
            }
            let s = self.subflows[i].as_mut().expect("subflow");
            if s.timers.delack.expired(now) {
                self.send_ack(now, i, out);
            }
            // The pacing timer: the gate is open now; `xmit` below sends.
            let s = self.subflows[i].as_mut().expect("subflow");
            if s.timers.pace.expired(now) {
                s.timers.pace.stop();
            }
            // Linux keeps one timer slot: a due probe or reordering timer goes first (a probe
            // restarts the RTO).
            self.recovery_timers(now, i, out);
            let s = self.subflows[i].as_mut().expect("subflow");
            if s.timers.rto.expired(now) {
                if s.sb.is_empty() {
                    s.timers.rto.stop();
                    continue;
                }
                self.snapshot_peers();
                let s = self.subflows[i].as_mut().expect("subflow");
                s.on_rto(now, self.cc.as_mut(), &self.peers);
                // Reinject on every RTO (Linux `mptcp_sub_retransmit_timer`), each segment once.
                let n_subflows = self.subflows.len();
                if self.mptcp && n_subflows > 1 && !self.mptcp_rtx {
                    let mut taken = Vec::new();
                    self.subflows[i].as_mut().expect("subflow").take_for_reinjection(&mut taken);
                    // Data queued on the subflow and not sent yet goes with it.
                    self.sfq[i].drain_into(&mut taken);
                    let una = self.snd.data_una;
                    for (dsn, len) in taken {
                        if dsn + len > una {
                            self.snd.reinject.push_back((dsn, len, i as u8));
                        }
                    }
                }
                let s = self.subflows[i].as_mut().expect("subflow");
                if let Some(seg) = s.retransmit_next(now, true) {
                    self.data_packet(now, i, seg, out);
                }
            }
        }
        if self.rtx_at.is_some_and(|t| t <= now) {
            self.on_rtx_timer(now, out);
        }
        if self.persist_at.is_some_and(|t| t <= now) {
            self.persist_at = None;
            self.persist_backoff += 1;
            if let Some(i) = (0..self.subflows.len()).find(|&i| self.subflow(i).is_some_and(|s| s.established())) {
                let mut p = self.packet(now, i, flags::ACK | flags::PROBE, MpOption::Dss);
                p.seq = self.subflows[i].as_ref().expect("subflow").snd_nxt;
                out.push(p);
            }
        }
        if self.is_sender {
            self.xmit(now, out);
        }
    }
}

/// v0.88's penalisation test: the holder's rate `cwnd / srtt` is below the caller's, compared
/// crosswise without division (`tp_it->snd_cwnd * tp->srtt < tp->snd_cwnd * tp_it->srtt`).
/// A window of 0 SRTT (no sample yet) compares as a rate of nothing.
pub(crate) fn v088_slower(holder_cwnd: u64, holder_srtt_ns: u64, caller_cwnd: u64, caller_srtt_ns: u64) -> bool {
    (holder_cwnd as u128) * (caller_srtt_ns as u128) < (caller_cwnd as u128) * (holder_srtt_ns as u128)
}

#[cfg(test)]
mod v088_tests {
    use super::v088_slower;

    /// Chen & Towsley's case: WiFi (30 ms, a loss-limited 10-segment window: 10 · 1448 B /
    /// 30 ms = 3.9 Mbit/s) holds the oldest data, cellular (600 ms under bufferbloat, 800
    /// segments: 15.4 Mbit/s) calls. v0.88 halves WiFi although its SRTT is 20 times lower;
    /// v0.9x's test (holder SRTT above the caller's) would not. The other way round, cellular
    /// holding and WiFi calling, cellular's rate is higher: not halved.
    #[test]
    fn the_holder_is_halved_when_its_rate_is_below_the_callers() {
        let (wifi, cell) = ((10 * 1448, 30_000_000), (800 * 1448, 600_000_000));
        assert!(v088_slower(wifi.0, wifi.1, cell.0, cell.1));
        assert!(!v088_slower(cell.0, cell.1, wifi.0, wifi.1));
        // Equal rates (twice the window over twice the SRTT): not below, not halved.
        assert!(!v088_slower(20 * 1448, 60_000_000, 10 * 1448, 30_000_000));
        // Windows of a few GB and SRTTs of minutes do not overflow the products.
        assert!(v088_slower(u32::MAX as u64, 120_000_000_000, u32::MAX as u64 + 1, 120_000_000_000));
    }
}
