//! The timers of an [`Endpoint`]: handshake retransmission, delayed ACKs, pacing, RACK and
//! tail loss probes, the subflows' retransmission timeouts with reinjection, the MPTCP-level
//! retransmission timer, and the persist timer.
//!
//! Reinjection on a subflow's RTO (out-of-tree Linux `mptcp_sub_retransmit_timer` →
//! `mptcp_reinject_data`; `mptcp_retransmit = false`, the classic model): each segment the
//! subflow still holds, and the data queued on it and not sent, is queued once for
//! reinjection on another subflow, which the send loop places with the scheduler's
//! [`pick_reinject`](crate::mptcp::sched::Scheduler::pick_reinject) before any new data
//! ([`crate::mptcp::xmit`]). With the MPTCP-level timer (`mptcp_retransmit = true`, upstream
//! Linux `mptcp_retransmit_timer`) a subflow RTO reinjects nothing; the timer re-sends the
//! oldest data fragment on an idle subflow, and stale subflows
//! ([`crate::mptcp::stale`], `__mptcp_retransmit_pending_data`) have everything not DATA_ACKed
//! reinjected.

use crate::config::SndbufCheck;
use crate::mptcp::connection::Endpoint;
use crate::net::packet::{flags, MpOption, Packet};
use crate::tcp::subflow::State;
use crate::tcp::timer::Slot;
use crate::tcp::tso;
use crate::units::{to_jiffies, Dur, Time, JIFFY};

/// Size of the MPTCP socket's data fragments (`struct mptcp_data_frag`): data is copied
/// into 32 KiB page fragments (`SKB_FRAG_PAGE_ORDER` = 3), one fragment per page.
pub const DFRAG: u64 = 32 * 1024;

impl Endpoint {
    /// Linux `__mptcp_set_timeout` as `mptcp_subflow_get_send` calls it, at a push that has
    /// data to hand out: the MPTCP timer's interval is the longest time any subflow that is
    /// not stale still has until its pending transmit timer (`mptcp_timeout_from_subflow`:
    /// `icsk_timeout - jiffies`, in whole jiffies, the deadline's tick less the current one),
    /// or `TCP_RTO_MIN` (the subflows' `rto_min`) when that is no jiffy at all.
    pub(super) fn set_rtx_ival(&mut self, now: Time) {
        let now_tick = now.0 / JIFFY.0;
        let ticks = self
            .subflows
            .iter()
            .flatten()
            .filter(|s| s.stale.count == 0)
            .filter_map(|s| s.xmit_timer_at())
            .map(|t| t.0.div_ceil(JIFFY.0).saturating_sub(now_tick))
            .max()
            .unwrap_or(0);
        self.rtx_ival = if ticks > 0 { Dur(ticks * JIFFY.0) } else { to_jiffies(self.params[0].rto_min) };
    }

    /// Linux `mptcp_reset_rtx_timer`: the timer restarts for the interval last set, counted
    /// from the current jiffy (`jiffies + timer_ival`).
    pub(super) fn reset_rtx_timer(&mut self, now: Time) {
        self.rtx_at = Some(Time(now.0 / JIFFY.0 * JIFFY.0) + self.rtx_ival);
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
            self.reset_rtx_timer(now);
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
    /// With the writer's fragments (`data_frags = "pages"`, [`crate::mptcp::sendbuf::Frags`])
    /// the fragment is the kernel's; otherwise (deviation) fragment boundaries are taken at
    /// multiples of [`DFRAG`] in data-sequence space.
    fn on_rtx_timer(&mut self, now: Time, out: &mut Vec<Packet>) {
        self.rtx_at = None;
        let una = self.snd.data_una;
        if self.snd.snd_nxt > una {
            if let Some(j) = self.retrans_subflow() {
                let end = self.snd.frag_end(una, DFRAG).min(self.snd.snd_nxt.0);
                let len = end - una.0;
                let goal = tso::size_goal(self.snd.max_window, self.params[j].smss);
                self.note_handoff(now, j, una, len, true);
                self.sfq[j].push(una, len, goal);
                self.snd.reinjected_bytes += len;
                self.sched_views(now);
                self.flush_queue(now, j, out);
            }
        }
        // `__mptcp_retrans` restarts the timer with the interval the last push set.
        if self.snd.data_una < self.snd.write_seq {
            self.reset_rtx_timer(now);
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
                s.timers.arm(Slot::Rto, now + s.rtt.rto());
                return;
            }
            Some((dsn, len)) => {
                self.snd.mark_sent(dsn, len);
                self.sched_views(now);
                self.send_on(now, i, dsn, len, false, out);
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
    #[inline(never)]
    pub fn poll_timeout(&self, now: Time) -> Option<Time> {
        // The subflows' timers: their minimum in nanoseconds (a stopped timer is `u64::MAX`,
        // the same as none).
        let sub = self.subflows.iter().flatten().map(|s| s.timers.earliest_ns()).fold(u64::MAX, u64::min);
        match self.own_deadline(now) {
            Some(t) => Some(t.min(Time(sub))),
            None => (sub != u64::MAX).then_some(Time(sub)),
        }
    }

    /// [`Self::poll_timeout`] for a driver that holds a wake-up for this endpoint at `held`
    /// and moves it only to an earlier deadline: the earliest pending timer, except that it
    /// may answer None when that is no earlier than `held` (once clamped to `now`), when the
    /// driver would keep its wake-up anyway.
    ///
    /// The driver's side of the contract: `held` is None, or no later than `max(t, then)`,
    /// where `t` is what the previous call answered (or would have, had it not answered None;
    /// `Time::MAX` when there was no deadline) and `then` that call's `now`. A driver that
    /// keeps the earlier of its wake-up and each answer, holds `Time::MAX` after an answer of
    /// no deadline at all, and forgets its wake-up when it fires, keeps it. A deadline at the
    /// end of time (`Time::MAX`) is then the same as none, as for a subflow's timers
    /// ([`crate::tcp::timer::Timer`]).
    ///
    /// Why None is exact then: a deadline pending now was either armed since the previous
    /// call, so it is no earlier than the subflows' [`armed_low`] (or the endpoint's own
    /// deadlines, which are read afresh), or it was pending at the previous call, so it is no
    /// earlier than `t` there, and `max(d, now) >= max(t, then) >= held`. The subflows' six
    /// timers each are then read only when something armed since could come first: the
    /// retransmission timer re-armed by each ACK, the usual case, is later than `held`.
    ///
    /// [`armed_low`]: crate::tcp::timer::SubflowTimers::take_armed_low
    #[inline(always)]
    pub fn poll_timeout_before(&mut self, now: Time, held: Option<Time>) -> Option<Time> {
        // One pass over the subflows: what they armed since, and whether any holds packets in
        // its host (TCP small queues, the one subflow deadline that is not a timer).
        let (mut low, mut in_host) = (u64::MAX, false);
        for s in self.subflows.iter_mut().flatten() {
            low = low.min(s.timers.take_armed_low());
            in_host |= !s.tsq.is_empty();
        }
        if let Some(w) = held {
            // The endpoint's own deadlines, read afresh (as `own_deadline` reads them), each
            // only asked whether it comes before `w`.
            let own = self.own_timers().into_iter().fold(u64::MAX, |m, d| m.min(d.map_or(u64::MAX, |d| d.0)));
            let sooner = |d: Option<Time>| d.is_some_and(|t| t < w);
            let app_or_tsq = self.is_sender
                && ((self.app_started && sooner(self.snd.app.next_write(now)))
                    || in_host && self.tsq_releases_before(now, w));
            if low.min(own) >= w.0 && !app_or_tsq {
                debug_assert!(
                    self.poll_timeout(now).is_none_or(|t| t.max(now) >= w),
                    "a deadline before the held wake-up"
                );
                return None;
            }
        }
        self.poll_timeout(now)
    }

    /// Whether a subflow TCP small queues hold back may send again before `w` (a deadline
    /// of `own_deadline`'s). Out of line: most subflows hold nothing in their host.
    #[inline(never)]
    fn tsq_releases_before(&self, now: Time, w: Time) -> bool {
        self.subflows.iter().flatten().any(|s| s.tsq_release_at(now).is_some_and(|t| t < w))
    }

    /// The endpoint's own timers: persist, MPTCP retransmission, path manager. A new
    /// endpoint-level timer goes here, so that both readers of the deadlines see it.
    #[inline(always)]
    fn own_timers(&self) -> [Option<Time>; 3] {
        [self.persist_at, self.rtx_at, self.pm.retrans_at]
    }

    /// The endpoint's own deadlines, outside the subflows' timers: the persist, MPTCP
    /// retransmission and path manager timers, the application's next write, and when a
    /// subflow TCP small queues hold back may send again.
    #[inline]
    fn own_deadline(&self, now: Time) -> Option<Time> {
        // In nanoseconds, an absent deadline counting as the end of time (a minimum without
        // branches), with whether any deadline was present, to tell "none" from "at the end
        // of time".
        let (mut t, mut any) = (u64::MAX, false);
        let mut add = |d: Option<Time>| {
            any |= d.is_some();
            t = t.min(d.map_or(u64::MAX, |d| d.0));
        };
        for d in self.own_timers() {
            add(d);
        }
        if self.is_sender {
            if self.app_started {
                add(self.snd.app.next_write(now));
            }
            for s in self.subflows.iter().flatten() {
                // A subflow TCP small queues hold back may send once enough has left the host.
                add(s.tsq_release_at(now));
            }
        }
        any.then_some(Time(t))
    }

    /// Fires every timer due at `now`.
    pub fn on_timeout(&mut self, now: Time, out: &mut Vec<Packet>) {
        let due = self.something_due(now);
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
                s.timers.arm(Slot::Handshake, now + base.times(1 << s.hs_backoff.min(10)).min(s.p.rto_max));
                self.handshake_packet(now, i, out);
            }
            let s = self.subflows[i].as_mut().expect("subflow");
            if s.timers.delack.expired(now) {
                self.send_ack(now, i, out);
            }
            // `tcp_compressed_ack_kick`: the compressed ACKs leave as one.
            let s = self.subflows[i].as_mut().expect("subflow");
            if s.timers.comp_sack.expired(now) {
                s.timers.comp_sack.stop();
                if s.rcv.compressed.is_some_and(|c| c.pending > 0) {
                    self.send_ack(now, i, out);
                }
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
        if self.is_sender && due {
            self.xmit(now, out);
        }
    }

    /// Whether a wake-up at `now` has anything to do: a timer due, a subflow holding packets
    /// in its host (TCP small queues), or a writer with data to write and not asleep. The
    /// driver may wake an endpoint at a deadline that has moved since (a timer re-armed
    /// later); such a wake-up is no event of the stack's and pushes nothing. Deviation: only
    /// with `tcp.sndbuf_check = "linux"` (the `linux` profile); the classic and `linux-v0.9x`
    /// models, whose seed reproductions were measured with it, still push at every wake-up.
    fn something_due(&self, now: Time) -> bool {
        if self.params[0].sndbuf_check != SndbufCheck::Linux {
            return true;
        }
        let expired = |d: Option<Time>| d.is_some_and(|t| t <= now);
        self.own_timers().into_iter().any(expired)
            || self.subflows.iter().flatten().any(|s| s.timers.earliest_ns() <= now.0 || !s.tsq.is_empty())
            || (self.app_started && !self.snd.app_blocked() && self.snd.app.wants(now, self.snd.write_seq.0) > 0)
    }
}

#[cfg(test)]
mod tests {
    use crate::mptcp::testkit::{ms, sf, Harness};
    use crate::units::Time;

    /// `poll_timeout_before` as the simulation's driver uses it: it answers the earliest
    /// deadline whenever that comes before the wake-up the driver holds, and may answer None
    /// otherwise. A subflow's RTO is SRTT + max(rto_min, 4 RTTVAR) after its first send
    /// (RFC 6298 (2.2), (5.1), one sample R: RTTVAR = R/2): 10 + max(200, 20) = 210 ms on a
    /// 10 ms subflow, 100 + max(200, 200) = 300 ms on a 100 ms one.
    #[test]
    fn a_held_wake_up_is_moved_only_for_an_earlier_deadline() {
        let mut h = Harness::new("scheduler = \"minrtt\"", &[sf(10, 10), sf(100, 10)]);
        let now = h.now;
        // Nothing in flight, no timer: no deadline; the driver then holds the end of time.
        assert_eq!(h.ep.poll_timeout_before(now, None), None);
        assert_eq!(h.ep.poll_timeout_before(now, Some(Time::MAX)), None);
        h.in_flight(1, 3);
        assert_eq!(h.ep.poll_timeout_before(now, Some(Time::MAX)), Some(ms(300)));
        // Nothing held: the exact answer.
        assert_eq!(h.ep.poll_timeout_before(now, None), Some(ms(300)));
        // Held at that deadline, nothing armed since: no earlier deadline.
        assert_eq!(h.ep.poll_timeout_before(now, Some(ms(300))), None);
        // Subflow 0 arms its RTO for 210 ms: earlier than the held 300 ms.
        h.in_flight(0, 1);
        assert_eq!(h.ep.poll_timeout_before(now, Some(ms(300))), Some(ms(210)));
        assert_eq!(h.ep.poll_timeout_before(now, Some(ms(210))), None);
        // The endpoint's own timers are read afresh: a persist deadline before the held one.
        h.ep.persist_at = Some(ms(100));
        assert_eq!(h.ep.poll_timeout_before(now, Some(ms(210))), Some(ms(100)));
        h.ep.persist_at = None;
        // A deadline armed since the last answer but later than the held wake-up: None, and
        // the full answer agrees that the driver keeps its wake-up.
        h.now = ms(5);
        h.in_flight(1, 1); // subflow 1's RTO is armed already: it stays at 300 ms
        h.in_flight(0, 1);
        assert_eq!(h.ep.poll_timeout(ms(5)), Some(ms(210)));
        assert_eq!(h.ep.poll_timeout_before(ms(5), Some(ms(210))), None);
    }
}
