//! The scheduler's view of the subflows: what a scheduler may read about each subflow
//! ([`SchedView`]), computed from the subflow's state by one function, `view_of`.
//!
//! The endpoint keeps one entry per subflow (`Endpoint::views`), always rebuilt from the
//! subflow, never edited by hand: every entry at the start of a push (in the push's first
//! pass over the subflows, and again by `Endpoint::sched_views` after queued data was sent),
//! and one subflow's entry (`Endpoint::refresh_view`) right after each change the push makes
//! to that subflow: its retransmissions, a transmission (`send_on`, which recomputes only the
//! fields a transmission can change, `Endpoint::refresh_sent`), data assigned to its send
//! queue, a penalisation of its window (M2,
//! [`crate::mptcp::rbuf_opt`]). Nothing else changes a subflow between two scheduler
//! questions, so before each question every entry is what a rebuild from the subflow's state
//! gives, but for the one lag below; debug builds check this before every question
//! (`Endpoint::debug_check_views`).
//!
//! TCP small queues: a transmission's entry is rebuilt after the subflow-level send and before
//! the packet enters this host's queue, where TSQ charges it ([`crate::tcp::tsq`]), so within a
//! push a scheduler sees a subflow's TSQ budget as it was before that subflow's latest packet
//! and may pick it for one packet more than the budget allows (the out-of-tree Linux
//! schedulers likewise see TSQ only through `TSQ_THROTTLED`, which a transmission attempt over
//! the limit sets). Rebuilding after the charge instead changes the packets sent with
//! `queue_at = "host"` (e.g. the Kato et al. send-buffer scenario), so it would be a change of
//! model, not of code.

use crate::mptcp::connection::Endpoint;
use crate::mptcp::sched::SchedView;
use crate::mptcp::sfqueue::{in_flight_units, wmem_truesize, SubflowQueue};
use crate::mptcp::stale;
use crate::tcp::subflow::{CaState, Subflow};
use crate::tcp::tso;
use crate::units::Time;

/// How a subflow's data is charged to its memory: payload bytes, or skb truesize with the
/// largest window the peer offered (which bounds the write-queue buffers).
#[derive(Clone, Copy)]
pub(super) enum Charge {
    Payload,
    Truesize { max_window: u64 },
}

/// Subflow `s`'s view at `now`, with `q` the data assigned to it and not sent yet.
pub(super) fn view_of(now: Time, s: &Subflow, q: &SubflowQueue, charge: Charge) -> SchedView {
    let mut v = SchedView::default();
    set_view(&mut v, now, s, q, charge);
    v
}

/// Writes [`view_of`] into `v` after giving a stale subflow that heard an ACK back to the
/// schedulers ([`crate::mptcp::stale`]), as [`Endpoint::sched_views`] does for each entry.
#[inline(always)]
pub(super) fn set_view_active(v: &mut SchedView, now: Time, s: &mut Subflow, q: &SubflowQueue, charge: Charge) {
    // Schedulers see a stale subflow again once an ACK arrived on it.
    if s.stale.on {
        stale::active(s);
    }
    set_view(v, now, s, q, charge)
}

/// Writes [`view_of`] into `v`, every field (inlined into the callers, which write the
/// endpoint's entries in place).
#[inline(always)]
fn set_view(v: &mut SchedView, now: Time, s: &Subflow, q: &SubflowQueue, charge: Charge) {
    v.usable = s.established() && !s.stale.on;
    v.backup = s.backup;
    v.srtt = s.rtt.srtt();
    v.rttvar = s.rtt.rttvar();
    v.min_rtt = s.rtt.min_rtt();
    v.recovering = matches!(s.ca(), CaState::Recovery | CaState::Loss);
    v.sndbuf = q.sndbuf;
    set_sending_fields(v, now, s, q, charge);
}

/// The fields of subflow `s`'s view that a transmission on it may change: its room, its
/// window (an idle restart or the controller's `on_tx_start` may move it), what it has in
/// flight, outstanding and queued, and its pacing rate. A transmission changes none of the
/// others (the subflow's state, RTT estimates, congestion state, backup flag and send
/// buffer), which [`view_of`] sets.
#[inline(always)]
fn set_sending_fields(v: &mut SchedView, now: Time, s: &Subflow, q: &SubflowQueue, charge: Charge) {
    // Sent and not cumulatively acknowledged (Linux `packets_out`, in bytes).
    let out = s.snd_nxt.dist(s.snd_una);
    v.has_room = s.can_send(now);
    v.cwnd = s.w.cwnd;
    v.ssthresh = s.w.ssthresh;
    v.in_flight = s.cwnd_in_flight();
    v.out = out;
    v.smss = s.w.smss;
    v.mss_cache = s.p.mss_cache;
    v.pacing_rate = s.pacer.rate;
    v.queued = match charge {
        Charge::Payload => out + q.bytes(),
        Charge::Truesize { max_window } => truesize_queued(s, q, out, max_window),
    };
}

/// `queued` under [`Charge::Truesize`] (out of line: its floating-point constants would
/// otherwise be loaded at every pass over the views, whichever the charge).
#[inline(never)]
fn truesize_queued(s: &Subflow, q: &SubflowQueue, out: u64, max_window: u64) -> u64 {
    let skbs = if q.skbs { s.sb.skbs() } else { in_flight_units(out, s.w.smss, s.tx_unit_segs()) };
    wmem_truesize(out, skbs, q.bytes(), q.unsent_buffers(tso::size_goal(max_window, s.w.smss)))
}

impl Endpoint {
    /// Subflow `i`'s send buffer and what its data is charged against it at `now` (Linux
    /// `sk_sndbuf` and `sk_wmem_queued`, as `ss -m` shows them: `tb` and `w`), if it exists.
    pub fn subflow_memory(&self, now: Time, i: usize) -> Option<(u64, u64)> {
        let s = self.subflows.get(i)?.as_ref()?;
        let q = &self.sfq[i];
        Some((q.sndbuf, view_of(now, s, q, self.charge()).queued))
    }

    /// How subflows' data is charged (see [`Charge`]).
    pub(super) fn charge(&self) -> Charge {
        if self.truesize {
            Charge::Truesize { max_window: self.snd.max_window }
        } else {
            Charge::Payload
        }
    }

    /// Rebuilds every subflow's entry (within a push after queued data was sent, and before
    /// the timers' transmissions), after giving stale subflows that heard an ACK back to the
    /// schedulers ([`crate::mptcp::stale`]); the push's first pass does the same per subflow
    /// ([`set_view_active`]).
    #[inline]
    pub(super) fn sched_views(&mut self, now: Time) {
        let charge = self.charge();
        // Entries are overwritten in place (the vector only grows when a subflow is added).
        self.views.resize(self.subflows.len(), SchedView::default());
        for ((v, s), q) in self.views.iter_mut().zip(&mut self.subflows).zip(&self.sfq) {
            match s {
                Some(s) => set_view_active(v, now, s, q, charge),
                None => *v = SchedView::default(),
            }
        }
    }

    /// Rebuilds subflow `j`'s entry from its state, after the push changed that state.
    #[inline]
    pub(super) fn refresh_view(&mut self, now: Time, j: usize) {
        let charge = self.charge();
        if let Some(s) = self.subflows[j].as_ref() {
            self.views[j] = view_of(now, s, &self.sfq[j], charge);
        }
    }

    /// Rebuilds subflow `j`'s entry after a transmission on it (`send_on`): only the fields a
    /// transmission may change are computed again, the others are already what a rebuild gives.
    #[inline]
    pub(super) fn refresh_sent(&mut self, now: Time, j: usize) {
        let charge = self.charge();
        if let Some(s) = self.subflows[j].as_ref() {
            set_sending_fields(&mut self.views[j], now, s, &self.sfq[j], charge);
        }
    }

    /// Subflow `sf` is usable and may send now, as the scheduler sees it.
    pub(super) fn can_use(&self, sf: usize) -> bool {
        self.views.get(sf).is_some_and(|v| v.usable && v.has_room)
    }

    /// Debug builds, before each scheduler question: every entry is what a rebuild from its
    /// subflow's state gives, but for the TSQ lag of the module documentation (an entry may
    /// still show room that its latest packet's TSQ charge took, if it sent in this push).
    pub(super) fn debug_check_views(&self, now: Time) {
        let charge = self.charge();
        for (j, (s, q)) in self.subflows.iter().zip(&self.sfq).enumerate() {
            let fresh = s.as_ref().map(|s| view_of(now, s, q, charge)).unwrap_or_default();
            let v = self.views[j];
            let sent = s.as_ref().is_some_and(|s| self.sent_before.get(j).is_some_and(|&b| s.stats.segments_sent > b));
            let tsq_lag = sent && v.has_room && !fresh.has_room && SchedView { has_room: true, ..fresh } == v;
            assert!(v == fresh || tsq_lag, "subflow {j}: the scheduler's view {v:?} is not its state's {fresh:?}");
        }
    }
}
