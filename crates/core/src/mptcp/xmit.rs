//! The sending loop of an [`Endpoint`] (`xmit`, one push attempt), where every scheduling
//! decision is made: the loop asks the scheduler where each reinjected segment
//! ([`Scheduler::pick_reinject`](crate::mptcp::sched::Scheduler::pick_reinject)) and each new
//! segment ([`Scheduler::next`](crate::mptcp::sched::Scheduler::next)) goes, showing it the
//! subflows as [`crate::mptcp::view`] builds them and the connection's send state
//! (`sched_ctx`); when a pick finds no new data it may send, minRTT's M1/M2 run
//! ([`crate::mptcp::rbuf_opt`]). What is queued for reinjection comes from the timers
//! ([`crate::mptcp::timers`]: a subflow's RTO, the MPTCP-level timer) and from stale
//! subflows ([`crate::mptcp::stale`]). Unit tests drive it with subflows in chosen states
//! (`xmit/tests.rs`, with the harness in `testkit.rs`).
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

use crate::config::SndbufCheck;
use crate::mptcp::connection::Endpoint;
use crate::mptcp::sched::{LowestRttPick, Pick, SchedCtx, SchedView};
use crate::mptcp::sendbuf::ConnSender;
use crate::mptcp::sfqueue::SubflowQueue;
use crate::mptcp::view::set_view_active;
use crate::net::packet::{flags, Packet};
use crate::tcp::subflow::CaState;
use crate::tcp::timer::Slot;
use crate::tcp::tso::{self, Defer, DeferCtx};
use crate::units::{Dsn, Time};

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

/// What one push asks of the scheduler ([`Endpoint::assign`]): the scheduler's hints and the
/// first question's answer when it is known before asking.
#[derive(Clone, Copy)]
struct PushPlan {
    queues: bool,
    waits_without_room: bool,
    repeats_with_room: bool,
    first: Option<usize>,
    notified: bool,
}

impl Endpoint {
    /// Sends everything the windows, the buffers and the scheduler allow.
    pub fn xmit(&mut self, now: Time, out: &mut Vec<Packet>) {
        if !self.app_started {
            return;
        }
        // The receive side does not change during the push: its packets advertise the free
        // space computed once here (`Endpoint::push_free`).
        self.push_free = Some(self.adv_window_peek());
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
        self.note_pages_held();
        self.snd.app_write(now);
        let hints = self.sched.hints();
        let queues = hints.queues;
        // One pass over the subflows, for each: its `segments_sent` as the push begins and the
        // scheduler's entry for it (`sched_views`' work), and whether it holds lost segments
        // not yet retransmitted (most pushes find none) or queued data.
        let n = self.subflows.len();
        // Resized only when the number of subflows changed (a subflow was added).
        if self.views.len() != n || self.sent_before.len() != n {
            self.sent_before.resize(n, 0);
            self.views.resize(n, SchedView::default());
        }
        let charge = self.charge();
        let (mut any_lost, mut any_queued) = (false, queues);
        // The scheduler's first pick, if it is the lowest-SRTT one with room.
        let mut lowest = LowestRttPick::default();
        let entries = self.subflows.iter_mut().zip(&mut self.sent_before).zip(&mut self.views).zip(&self.sfq);
        for (i, (((s, before), v), q)) in entries.enumerate() {
            match s {
                Some(s) => {
                    *before = s.stats.segments_sent;
                    any_lost |= s.sb.lost_not_retransmitted();
                    set_view_active(v, now, s, q, charge);
                    if hints.picks_lowest_rtt {
                        lowest.add(i, v);
                    }
                }
                None => {
                    *before = 0;
                    *v = SchedView::default();
                }
            }
            any_queued |= !q.is_empty();
        }
        // Each subflow's lost segments within its window first (its entry rebuilt if it sent).
        let retransmitted = any_lost && self.retransmit_lost(now, out);
        // With TSO deferral the subflows transmit once the push has assigned its data, as
        // Linux's `tcp_push` after `__mptcp_push_pending` (what a subflow may defer depends on
        // how much it holds); otherwise queued data goes out before new data is assigned and
        // after every assignment.
        let flush = !self.tso_defer && any_queued;
        if flush {
            self.flush_queues(now, queues, out);
            // Entries are rebuilt after those transmissions.
            self.sched_views(now);
        }
        let mut plan = PushPlan {
            queues,
            // Not asked when no usable subflow has room, if its answer is then known to be Wait.
            waits_without_room: !queues && hints.waits_without_room,
            // Not asked again after sending new data on the subflow it picked while that
            // subflow keeps room, if its answer is then known to be the same.
            repeats_with_room: !queues && hints.repeats_with_room,
            // The first question's answer, known from the entries as built above if nothing
            // was sent since (and there is a subflow to pick).
            first: (hints.picks_lowest_rtt && !queues && !retransmitted && !flush).then(|| lowest.pick()).flatten(),
            notified: hints.notified,
        };
        if plan.notified {
            self.sched.new_round();
        }
        // With the writer's fragments each `send()` call is followed by its push
        // (`mptcp_sendmsg` → `__mptcp_push_pending` → `tcp_push`): the push is repeated after
        // every further call the writer makes.
        let none_had_room = loop {
            // The scheduler's first call of a push with data to hand out sets the MPTCP
            // timer's interval (Linux `mptcp_subflow_get_send`), before the subflows transmit.
            if self.mptcp_rtx && self.snd.unsent() > 0 {
                self.set_rtx_ival(now);
            }
            let none_had_room = self.assign(now, &mut plan, out);
            if queues && self.mptcp {
                // `mptcp_push_release` → `tcp_push` on each subflow the push handed data to.
                self.sfq.iter_mut().for_each(SubflowQueue::end_push);
            }
            if self.tso_defer {
                self.flush_queues(now, queues, out);
            }
            if !(self.snd.frags.is_some() && self.snd.app_write(now)) {
                break none_had_room;
            }
            self.sched_views(now);
            if plan.notified {
                self.sched.new_round();
            }
        };
        // One pass over the subflows, in Linux's order for each:
        // - per-segment schedulers keep unsent data at the connection level: a subflow whose
        //   window is full while data waits that the peer's window admits is cwnd-limited, as
        //   a TCP socket with data in its write queue (`tcp_cwnd_validate`);
        // - Linux `tcp_cwnd_validate` closing each push that sent on a subflow
        //   (`tcp_write_xmit`, and `mptcp_write_xmit` for the subflows it pushed): RFC 2861's
        //   record and decay;
        // - Linux `tcp_new_space` ([`SndbufCheck`]): the send buffer grows unless the
        //   congestion window is full, after an ACK freed data; with `"linux"` only while the
        //   writer waits for space (`SOCK_NOSPACE`), and also after each transmit unit of new
        //   data: a push that sent more than one unit found the window open after its first.
        // Nothing below changes the unsent data or the peer's window: one answer serves the
        // cwnd-limited test, the time accounting and the persist timer.
        let smss = self.params[0].smss;
        let rwnd_blocked = self.snd.rwnd_blocked(smss);
        let full_limits = !queues && self.snd.unsent() > 0 && !rwnd_blocked;
        // `SOCK_NOSPACE`: set while the writer sleeps for send-buffer space, clear in the push
        // of what its `send()` call just copied (`ConnSender::sendmsg_copied`).
        let nospace = self.snd.app_blocked() && !std::mem::take(&mut self.snd.sendmsg_copied);
        // `tcp_check_space`'s `SOCK_NOSPACE` through the push: set by a `send()` that filled
        // the buffer before it pushes (`mptcp_sendmsg`'s `wait_for_memory`), still set where the
        // writer was not woken; so whether the writer waits once the push's writes are done.
        // Deviation: `nospace` above reads the flag in the out-of-tree order (`tcp_sendmsg`
        // pushes what it copied before setting it) for RFC 2861's check.
        let waiting = self.snd.app_blocked();
        let cap = self.subflow_sndbuf_cap();
        let mut grew = false;
        for ((s, q), &before) in self.subflows.iter_mut().zip(self.sfq.iter_mut()).zip(&self.sent_before) {
            let Some(s) = s.as_mut() else { continue };
            if full_limits && s.validates_cwnd() && s.established() && !s.has_room() {
                s.cwnd_validate(true);
            }
            if s.stats.segments_sent > before {
                s.cwnd_app_check(now, nospace);
            }
            let (acked, sent) = (std::mem::take(&mut q.acked), std::mem::take(&mut q.new_sent));
            let room = match s.p.sndbuf_check {
                SndbufCheck::Acked => acked && s.has_room(),
                SndbufCheck::Linux => waiting && (acked || sent > 0) && (s.has_room() || sent > s.tx_unit_segs()),
            };
            if room {
                let before = q.sndbuf;
                q.expand(s.w.smss, s.w.cwnd, cap);
                grew |= q.sndbuf != before;
            }
            if s.pacer.rate != 0 {
                s.timers.set(Slot::Pace, (!s.pacer.open(now) && s.has_room()).then_some(s.pacer.next_at));
            }
        }
        if grew {
            self.sync_sndbuf();
        }
        if self.mptcp_rtx && self.rtx_at.is_none() && self.snd.snd_nxt > self.snd.data_una {
            self.reset_rtx_timer(now);
        }
        // Some usable subflow has room, as the scheduler saw them: known to be none when the
        // loop ended for that reason and the entries are as it left them (TSO deferral
        // transmits after the loop).
        let known_none = none_had_room && !self.tso_defer;
        let could_send = !known_none && self.views.iter().any(|v| v.usable && v.has_room);
        self.snd.account(now, could_send, rwnd_blocked);
        // Persist timer (RFC 9293 §3.8.6.1).
        if rwnd_blocked && self.subflows.iter().flatten().all(|s| s.sb.is_empty()) {
            if self.persist_at.is_none() {
                let rto = self.subflows.iter().flatten().map(|s| s.rtt.rto()).min().unwrap_or_default();
                self.persist_at = Some(now + rto.times(1 << self.persist_backoff.min(10)).min(self.params[0].rto_max));
            }
        } else {
            self.persist_at = None;
            self.persist_backoff = 0;
        }
        self.push_free = None;
        // `tcp_new_space` → `subflow_write_space` → `mptcp_write_space`: a send buffer that
        // grew wakes the writer asleep for space, whose `send()` pushes again at once.
        if grew && self.params[0].sndbuf_check == SndbufCheck::Linux && self.snd.woken() {
            self.xmit(now, out);
        }
    }

    /// One push's scheduling decisions: reinjections, then new data, each where the scheduler
    /// picks, until it waits or nothing is left. Returns whether it stopped because no usable
    /// subflow had room (known without asking the scheduler).
    fn assign(&mut self, now: Time, plan: &mut PushPlan, out: &mut Vec<Packet>) -> bool {
        let PushPlan { queues, waits_without_room, repeats_with_room, notified, .. } = *plan;
        let mut repeat = None;
        let mut none_had_room = false;
        loop {
            if cfg!(debug_assertions) {
                self.debug_check_views(now);
            }
            // Only right after the transmission that set it, or at the first question.
            let repeat_sf: Option<usize> = repeat.take();
            let first_sf: Option<usize> = plan.first.take();
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
                    self.note_handoff(now, j, start, n, true);
                    self.send_on(now, j, start, n, false, out);
                    self.snd.reinjected_bytes += n;
                    continue;
                }
            }
            let known = match repeat_sf {
                Some(sf) if self.views[sf].has_room => Some(sf),
                _ => first_sf,
            };
            let pick = match known {
                Some(sf) => {
                    debug_assert_eq!(
                        self.sched.next(&sched_ctx(now, &self.views, &self.snd)),
                        Pick::New { sf, skip: 0 },
                        "{} picked another subflow",
                        self.sched.name()
                    );
                    Pick::New { sf, skip: 0 }
                }
                None => {
                    if waits_without_room && !self.views.iter().any(|v| v.usable && v.has_room) {
                        debug_assert_eq!(
                            self.sched.next(&sched_ctx(now, &self.views, &self.snd)),
                            Pick::Wait,
                            "{} picked with no room",
                            self.sched.name()
                        );
                        none_had_room = true;
                        break;
                    }
                    self.sched.next(&sched_ctx(now, &self.views, &self.snd))
                }
            };
            match pick {
                Pick::Wait => break,
                Pick::New { sf, skip } if queues => {
                    if !self.views.get(sf).is_some_and(|v| v.usable) {
                        debug_assert!(false, "{} picked subflow {sf}, which is not usable", self.sched.name());
                        break;
                    }
                    let smss = self.params[sf].smss;
                    let Some((dsn, len, new_frag)) = self.snd.next_piece(skip, smss) else {
                        break;
                    };
                    self.snd.mark_sent(dsn, len);
                    self.note_handoff(now, sf, dsn, len, false);
                    if self.sfq[sf].skbs {
                        let goal = tso::size_goal(self.snd.max_window, smss);
                        self.sfq[sf].push_skb(dsn, len, goal, new_frag);
                    } else {
                        self.sfq[sf].push(dsn, len, 0);
                    }
                    self.sched.on_sent(sf, dsn, len);
                    if !self.tso_defer {
                        self.flush_queue(now, sf, out);
                    }
                    self.refresh_view(now, sf);
                }
                Pick::New { sf, skip } => {
                    // A known pick is usable with room (tested above).
                    if known.is_none() && !self.can_use(sf) {
                        debug_assert!(false, "{} picked subflow {sf}, which cannot send", self.sched.name());
                        break;
                    }
                    match self.snd.take_new(skip, self.params[sf].smss) {
                        Some((dsn, len)) => {
                            self.note_handoff(now, sf, dsn, len, false);
                            self.send_on(now, sf, dsn, len, false, out);
                            if notified {
                                self.sched.on_sent(sf, dsn, len);
                            }
                            if repeats_with_room && skip == 0 {
                                repeat = Some(sf);
                            }
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
                        self.note_handoff(now, sf, start, n, true);
                        self.send_on(now, sf, start, n, false, out);
                        self.sched.on_sent(sf, start, n);
                    } else {
                        self.sched.on_sent(sf, dsn, len);
                    }
                }
            }
        }
        none_had_room
    }

    /// Records a hand-off of `[dsn, dsn + len)` to subflow `sf` when asked to
    /// (`RunOptions::sched_log`).
    #[inline]
    pub(super) fn note_handoff(&mut self, now: Time, sf: usize, dsn: Dsn, len: u64, retransmit: bool) {
        if let Some(log) = self.handoffs.as_mut() {
            log.push((now, sf as u8, dsn.0, len, retransmit));
        }
    }

    /// Tells the writer whether a subflow still holds data of its pages (buffers sent and not
    /// acknowledged keep their page referenced), with [`crate::mptcp::sendbuf::Frags`].
    pub(super) fn note_pages_held(&mut self) {
        if self.snd.frags.is_some() {
            self.snd.pages_held = self.subflows.iter().flatten().any(|s| !s.sb.is_empty());
        }
    }

    /// Retransmits each subflow's lost segments within its window (RFC 6675 NextSeg rule 1),
    /// subflow by subflow, and rebuilds the entry of each subflow that sent (its
    /// retransmissions change no other entry). Returns whether any subflow sent.
    #[inline(never)]
    fn retransmit_lost(&mut self, now: Time, out: &mut Vec<Packet>) -> bool {
        let mut any = false;
        for i in 0..self.subflows.len() {
            let mut sent = false;
            while let Some(s) = self.subflows[i]
                .as_mut()
                .filter(|s| s.sb.lost_not_retransmitted() && s.established() && s.pacer.open(now))
            {
                let Some(seg) = s.retransmit_next(now, false) else {
                    break;
                };
                self.data_packet(now, i, seg, out);
                sent = true;
            }
            if sent {
                self.refresh_view(now, i);
                any = true;
            }
        }
        any
    }

    /// Sends `[dsn, dsn + len)` as a new segment of subflow `j`, with PSH if `psh`.
    pub(super) fn send_on(&mut self, now: Time, j: usize, dsn: Dsn, len: u64, psh: bool, out: &mut Vec<Packet>) {
        let s = self.subflows[j].as_mut().expect("picked subflow exists");
        if s.maybe_idle_restart(now) {
            self.cc.on_idle_restart(now, j);
        }
        let s = self.subflows[j].as_mut().expect("picked subflow exists");
        s.tx_start(now, self.cc.as_mut());
        let seg = s.send_new(now, len, dsn);
        self.sfq[j].new_sent += 1;
        // Before the packet enters the host's queue: see `view`'s note on TCP small queues.
        self.refresh_sent(now, j);
        self.push_data_packet(now, j, seg, psh, out);
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
    ///
    /// With write-queue buffers, PSH as Linux sets it: on the last segment of a buffer a push
    /// marked ([`SubflowQueue::end_push`]), and on the last segment of every transmission of
    /// more than one segment at once (`__tcp_transmit_skb`: "Force a PSH flag on all (GSO)
    /// packets to expedite GRO flush at receiver"), a transmission ending with its unit, its
    /// buffer or the window. Deviations: retransmissions carry no PSH (Linux resends the skb's
    /// flags), and without `tcp.tso_defer` a segment leaves as it is queued, before its push
    /// ends and marks it (Linux transmits at the push's end, `tcp_push`).
    pub(super) fn flush_queue(&mut self, now: Time, j: usize, out: &mut Vec<Packet>) {
        // Segments left in the current transmit unit: the deferral test runs where a unit
        // would start (Linux `tcp_write_xmit` tests every skb it is about to send).
        let mut unit_left = 0;
        let mut cwnd_limited = false;
        // The current transmission (one GSO skb): its segments so far and where its last
        // packet is in `out`.
        let gso = self.sfq[j].skbs;
        let mut burst = (0u32, 0usize);
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
            // A short piece that ends what the subflow holds waits under Nagle's rule: the
            // last segment of its last buffer (Linux `tcp_mss_split_point` and `tcp_nagle_test`
            // test only the write queue's tail), or of all it holds without buffers.
            if self.snd.fill_tail {
                let (q, smss) = (&self.sfq[j], self.params[j].smss);
                let (piece, last) = if q.skbs {
                    (q.head_len().min(smss), q.runs() == 1 && q.head_len() <= smss)
                } else {
                    (q.bytes().min(smss), q.bytes() <= smss)
                };
                if self.subflows[j].as_ref().is_some_and(|s| s.nagle_holds(piece, last)) {
                    break;
                }
            }
            let Some(piece) = self.sfq[j].pop(self.params[j].smss) else {
                break;
            };
            unit_left = unit_left.saturating_sub(1);
            self.send_on(now, j, piece.dsn, piece.len, piece.psh, out);
            if gso {
                burst = (burst.0 + 1, out.len() - 1);
                if piece.ends || unit_left == 0 {
                    gso_push(out, std::mem::take(&mut burst));
                    self.end_skb(j);
                }
                // `tcp_write_xmit` takes the write queue one buffer at a time: the next
                // buffer is tested for deferral and starts a unit of its own.
                if piece.ends {
                    unit_left = 0;
                }
            }
        }
        gso_push(out, burst);
        if burst.0 > 0 {
            self.end_skb(j);
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

    /// The transmission subflow `j` just made is one skb of its retransmission queue.
    fn end_skb(&mut self, j: usize) {
        if let Some(s) = self.subflows[j].as_mut() {
            s.sb.end_skb();
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
        let q = &self.sfq[j];
        // The head buffer: its own length with buffers, else the unsent data up to a goal.
        let (skb_len, more_after) =
            if q.skbs { (q.head_len(), q.runs() > 1) } else { (q.bytes().min(goal), q.bytes() > goal) };
        if skb_len <= smss {
            return Ok(max_segs);
        }
        let c = DeferCtx {
            now,
            recovering: matches!(s.ca(), CaState::Recovery | CaState::Loss),
            last_xmit: s.lsndtime,
            cwnd: s.w.cwnd,
            in_flight: s.cwnd_in_flight(),
            smss,
            max_segs,
            skb_len,
            more_after,
            head_sent_at: s.sb.front().map(|g| g.sent_at),
            srtt: s.rtt.srtt(),
        };
        match tso::should_defer(&c) {
            Defer::Send => Ok(max_segs),
            d => Err(d),
        }
    }
}

/// `__tcp_transmit_skb`'s PSH on a transmission of `segs` segments at once, on its last
/// packet (`out[last]`); a single segment is left as it is.
fn gso_push(out: &mut [Packet], (segs, last): (u32, usize)) {
    if segs > 1 {
        out[last].flags |= flags::PSH;
    }
}

#[cfg(test)]
mod tests;
