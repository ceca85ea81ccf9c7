//! Packet schedulers: which subflow carries the next segment, and which data it carries
//! (Linux `mptcp_sched_ops` `get_send` / `get_retrans`). One file per algorithm, with its
//! parameters in a type that builds it ([`SchedFactory`]); the list below ([`SchedKind`],
//! [`SchedConfig`], [`SchedParams`]) registers it with the schema. A new scheduler is one new
//! file, its `pub mod` line and one line in that list.
//!
//! The connection calls [`Scheduler::next`] while it has something to send. A scheduler
//! answers with the subflow for the oldest unsent data, for unsent data further ahead
//! (out-of-order sending, e.g. STMS), for a copy of data already sent elsewhere (redundant),
//! or asks to wait (e.g. BLEST, ECF keep a slow subflow idle on purpose). It may only pick
//! subflows that are usable and have congestion-window room; the connection checks this.
//!
//! A scheduler whose [`Scheduler::queues`] is true (the upstream Linux `default`) works one
//! level up, as the kernel does: it assigns data to a subflow's send queue
//! ([`crate::mptcp::sfqueue`]) whether or not the subflow's congestion window has room, as
//! long as the subflow's send buffer is not full; each subflow then sends its queue as its
//! window allows. Such a scheduler may pick any usable subflow; the connection checks that.

pub mod blest;
pub mod daps;
pub mod ecf;
pub mod linux_default;
pub mod minrtt;
pub mod otias;
pub mod redundant;
pub mod roundrobin;
pub mod stms;

use crate::registry::AlgorithmParams;
use crate::units::{Dsn, Dur, Time};

/// What a scheduler may read about one subflow.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SchedView {
    /// Established (data may be sent on it).
    pub usable: bool,
    /// Room in the congestion window for a full segment.
    pub has_room: bool,
    pub backup: bool,
    pub srtt: Option<Dur>,
    pub rttvar: Dur,
    pub min_rtt: Option<Dur>,
    /// Congestion window and slow-start threshold (bytes).
    pub cwnd: u64,
    pub ssthresh: u64,
    /// Bytes in flight (RFC 6675 pipe).
    pub in_flight: u64,
    /// Bytes sent and not cumulatively acknowledged, SACKed and lost ones included (Linux
    /// `packets_out`, in bytes).
    pub out: u64,
    /// Payload bytes of a full segment.
    pub smss: u64,
    /// Linux `tp->mss_cache`: the MSS without the options that vary per segment (on an MPTCP
    /// subflow `smss` plus the DSS option), which scales the pacing rate.
    pub mss_cache: u64,
    /// In fast recovery or loss recovery (Linux `icsk_ca_state` beyond Disorder).
    pub recovering: bool,
    /// Bytes handed to the subflow and not yet acknowledged on it: sent and outstanding plus
    /// waiting in its send queue (Linux `sk_wmem_queued`, in payload bytes).
    pub queued: u64,
    /// The subflow's send buffer (bytes); see [`crate::mptcp::sfqueue`].
    pub sndbuf: u64,
    /// Pacing rate a rate-based congestion controller sets (bytes/s; 0 = none: unpaced).
    pub pacing_rate: u64,
}

impl SchedView {
    /// Free congestion-window space (bytes).
    pub fn space(&self) -> u64 {
        self.cwnd.saturating_sub(self.in_flight)
    }

    /// The subflow's pacing rate (bytes/s) with the given ratios
    /// ([`crate::tcp::pacing::linux_rate`]).
    pub fn linux_pacing_rate(&self, ss_ratio: f64, ca_ratio: f64) -> f64 {
        crate::tcp::pacing::linux_rate(
            self.pacing_rate,
            self.cwnd,
            self.ssthresh,
            self.out,
            self.srtt,
            (ss_ratio, ca_ratio),
            (self.smss, self.mss_cache),
        )
    }

    /// Smoothed RTT (seconds), if measured.
    pub fn srtt_s(&self) -> Option<f64> {
        self.srtt.map(|d| d.secs_f64())
    }

    /// RTT variation (seconds).
    pub fn rttvar_s(&self) -> f64 {
        self.rttvar.secs_f64()
    }
}

/// The connection-level state a scheduler may read.
#[derive(Clone, Copy, Debug)]
pub struct SchedCtx<'a> {
    pub now: Time,
    pub subflows: &'a [SchedView],
    /// Bytes written by the application and never sent on any subflow.
    pub unsent: u64,
    /// Oldest byte not DATA_ACKed and the end of the highest data sent.
    pub data_una: Dsn,
    pub snd_nxt: Dsn,
    /// Bytes the peer's receive window still admits beyond `snd_nxt`.
    pub rwnd_room: u64,
    /// The peer's whole receive window as last advertised (bytes).
    pub rwnd: u64,
}

impl SchedCtx<'_> {
    /// Usable subflows, room or not, honouring backups: backups only when no regular subflow
    /// is usable at all.
    pub fn active(&self) -> impl Iterator<Item = usize> + '_ {
        let regular = self.subflows.iter().any(|s| s.usable && !s.backup);
        self.subflows.iter().enumerate().filter(move |(_, s)| s.usable && s.backup != regular).map(|(i, _)| i)
    }

    /// Usable subflows with room, honouring backups: backups only when no regular subflow
    /// is usable at all.
    pub fn candidates(&self) -> impl Iterator<Item = usize> + '_ {
        self.active().filter(move |&i| self.subflows[i].has_room)
    }

    /// The usable (non-backup unless only backups remain) subflow with the lowest SRTT,
    /// whether or not it has room.
    pub fn fastest(&self) -> Option<usize> {
        self.lowest_srtt(|_, _| true)
    }

    /// Whether the unsent data after skipping `skip` bytes surely lies in the peer's window
    /// for a segment of `smss` bytes. Skipped unsent bytes may lie below `snd_nxt` or above
    /// it, so beyond the head this is conservative: `skip + smss <= rwnd_room`. (The head
    /// is always allowed: if it does not fit, nothing does.) Out-of-order schedulers check
    /// it because the connection stops asking once a pick finds no data it may send.
    pub fn fits_window(&self, skip: u64, smss: u64) -> bool {
        skip == 0 || skip + smss <= self.rwnd_room
    }

    /// The candidate with the lowest SRTT (minRTT's choice).
    pub fn lowest_rtt_with_room(&self, exclude: Option<usize>) -> Option<usize> {
        self.lowest_srtt(|i, s| s.has_room && Some(i) != exclude)
    }

    /// Among the usable subflows (honouring backups, as [`SchedCtx::active`]) that `admit`,
    /// the one with the lowest SRTT, unmeasured last, ties to the lowest index.
    #[inline]
    fn lowest_srtt(&self, admit: impl Fn(usize, &SchedView) -> bool) -> Option<usize> {
        let regular = self.subflows.iter().any(|s| s.usable && !s.backup);
        let (mut best, mut best_key) = (None, 0);
        for (i, s) in self.subflows.iter().enumerate() {
            if s.usable && s.backup != regular && admit(i, s) {
                let key = s.srtt.map_or(u64::MAX, |d| d.0);
                if best.is_none() || key < best_key {
                    (best, best_key) = (Some(i), key);
                }
            }
        }
        best
    }
}

/// The question blocking-aware schedulers (BLEST, ECF) answer: the fastest subflow has no
/// room; should the next segment go to a slower one now, or wait for the fast one?
pub enum FastOrSlow {
    /// Settled without a choice to make: the fast subflow has room, nothing else can send,
    /// or RTTs are not known yet.
    Decided(Pick),
    /// Subflow `fast` is full, `slow` (the fastest other subflow with room) could send; their
    /// smoothed RTTs in seconds.
    Choose { fast: usize, slow: usize, rtt_f: f64, rtt_s: f64 },
}

impl SchedCtx<'_> {
    /// See [`FastOrSlow`].
    pub fn fast_or_slow(&self) -> FastOrSlow {
        let Some(f) = self.fastest() else { return FastOrSlow::Decided(Pick::Wait) };
        let xf = &self.subflows[f];
        if xf.has_room {
            return FastOrSlow::Decided(Pick::New { sf: f, skip: 0 });
        }
        let Some(s) = self.lowest_rtt_with_room(Some(f)) else { return FastOrSlow::Decided(Pick::Wait) };
        match (xf.srtt_s(), self.subflows[s].srtt_s()) {
            (Some(rtt_f), Some(rtt_s)) => FastOrSlow::Choose { fast: f, slow: s, rtt_f, rtt_s },
            _ => FastOrSlow::Decided(Pick::New { sf: s, skip: 0 }),
        }
    }
}

/// A scheduling decision.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pick {
    /// Send new data on `sf`: the unsent bytes after skipping the first `skip` of them.
    New { sf: usize, skip: u64 },
    /// Send `[dsn, dsn + len)`, already sent on another subflow, on `sf`.
    Copy { sf: usize, dsn: Dsn, len: u64 },
    /// Send nothing now.
    Wait,
}

/// What the connection may assume about a scheduler's answers ([`Scheduler::hints`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SchedHints {
    /// [`Scheduler::queues`].
    pub queues: bool,
    /// [`Scheduler::waits_without_room`].
    pub waits_without_room: bool,
    /// [`Scheduler::repeats_with_room`].
    pub repeats_with_room: bool,
    /// [`Scheduler::notified`].
    pub notified: bool,
    /// [`Scheduler::picks_lowest_rtt`].
    pub picks_lowest_rtt: bool,
}

/// [`SchedCtx::lowest_rtt_with_room`] (no exclusion) found in one pass as the entries are
/// built in order: the lowest-SRTT entry with room among the regular and among the backup
/// subflows, and whether any regular subflow is usable (which decides between them).
#[derive(Clone, Copy, Debug, Default)]
pub struct LowestRttPick {
    regular: bool,
    /// (index, SRTT key) of the best regular and the best backup entry with room.
    best: [Option<(usize, u64)>; 2],
}

impl LowestRttPick {
    /// Entry `i`, the next in order.
    #[inline(always)]
    pub fn add(&mut self, i: usize, v: &SchedView) {
        if !v.usable {
            return;
        }
        self.regular |= !v.backup;
        if v.has_room {
            // Unmeasured last; ties to the lowest index (the first seen).
            let key = v.srtt.map_or(u64::MAX, |d| d.0);
            let b = &mut self.best[v.backup as usize];
            if b.is_none_or(|(_, k)| key < k) {
                *b = Some((i, key));
            }
        }
    }

    /// The pick: among the regular subflows if any is usable, else among the backups.
    pub fn pick(&self) -> Option<usize> {
        self.best[!self.regular as usize].map(|(i, _)| i)
    }
}

pub trait Scheduler {
    fn name(&self) -> &'static str;
    /// The next segment to send.
    fn next(&mut self, ctx: &SchedCtx) -> Pick;
    /// The subflow for a reinjected segment stuck on `from` (default: lowest RTT among the
    /// others with room).
    fn pick_reinject(&mut self, ctx: &SchedCtx, from: usize) -> Option<usize> {
        ctx.lowest_rtt_with_room(Some(from))
    }
    /// Data `[dsn, dsn + len)` was sent on `sf` (new data or a copy); for a scheduler that
    /// [`queues`](Scheduler::queues), assigned to `sf`'s send queue.
    fn on_sent(&mut self, _sf: usize, _dsn: Dsn, _len: u64) {}
    /// Whether picks assign new data to subflow send queues, bounded by each subflow's send
    /// buffer, instead of sending a segment on a subflow with congestion-window room.
    fn queues(&self) -> bool {
        false
    }
    /// Whether [`Scheduler::next`] answers [`Pick::Wait`] and changes nothing when no usable
    /// subflow has room (every pick needs one with room, and nothing is recorded on the way):
    /// then the connection does not ask. Default: no.
    fn waits_without_room(&self) -> bool {
        false
    }
    /// Whether, right after a [`Pick::New`] without skip was sent on subflow `sf` while `sf`
    /// still has room (its entry refreshed, no other entry changed), [`Scheduler::next`]
    /// would pick `sf` again without skip and change nothing by being asked: then the
    /// connection does not ask. Holds for a pick that depends only on which subflows are
    /// usable and have room and on their fixed properties (minRTT: the candidates, their SRTTs
    /// and the backup rule are as they were), by a scheduler that keeps no state. Default: no.
    fn repeats_with_room(&self) -> bool {
        false
    }
    /// Whether [`Scheduler::next`] answers exactly `Pick::New { sf, skip: 0 }` with `sf`
    /// [`SchedCtx::lowest_rtt_with_room`] (no exclusion), or [`Pick::Wait`] when there is none,
    /// and changes nothing by being asked (minRTT): then the connection may find that pick
    /// itself while it builds the entries ([`LowestRttPick`]). Default: no.
    fn picks_lowest_rtt(&self) -> bool {
        false
    }
    /// Whether [`Scheduler::on_sent`] and [`Scheduler::new_round`] may change anything; if
    /// not, the push may leave them uncalled. Default: yes.
    fn notified(&self) -> bool {
        true
    }
    /// [`Scheduler::queues`], [`Scheduler::waits_without_room`],
    /// [`Scheduler::repeats_with_room`], [`Scheduler::notified`] and
    /// [`Scheduler::picks_lowest_rtt`] in one call (asked once per push).
    fn hints(&self) -> SchedHints {
        SchedHints {
            queues: self.queues(),
            waits_without_room: self.waits_without_room(),
            repeats_with_room: self.repeats_with_room(),
            notified: self.notified(),
            picks_lowest_rtt: self.picks_lowest_rtt(),
        }
    }
    /// The connection starts a new attempt to push data (after an ACK, a timer or an
    /// application write); Linux's `__mptcp_push_pending` asks its scheduler afresh then.
    fn new_round(&mut self) {}
    /// A DATA_ACK advanced the connection from `prev` to `data_ack`.
    fn on_data_ack(&mut self, _now: Time, _prev: Dsn, _data_ack: Dsn) {}
    /// Opportunistic retransmission (M1) and penalisation (M2) of the out-of-tree Linux
    /// MPTCP, applied by the connection when new data is blocked.
    fn receive_buffer_optimisation(&self) -> (bool, bool) {
        (false, false)
    }
}

crate::registry::algorithm_registry! {
    /// Packet schedulers, by the name scenarios give them (`scheduler = "minrtt"`).
    pub enum SchedKind {}
    /// A scheduler with its parameters: the configuration that builds it.
    pub enum SchedConfig: SchedFactory {
        /// The scheduler of one connection.
        fn build(&self) -> Box<dyn Scheduler>;
    }
    /// Every scheduler's parameters: the schema's `sched_params`, one table per scheduler
    /// that has parameters (each read only by its own scheduler).
    pub struct SchedParams;
    {
        /// Lowest smoothed RTT among subflows with congestion-window space.
        Minrtt => minrtt::MinRttParams,
        /// Subflows in turn (out-of-tree Linux `mptcp_rr.c`).
        Roundrobin => roundrobin::RoundRobinParams,
        /// Every segment on every usable subflow (out-of-tree Linux `mptcp_redundant.c`).
        Redundant => redundant::RedundantParams,
        /// Blocking estimation (Ferlin et al., IFIP Networking 2016).
        Blest => blest::BlestParams,
        /// Earliest completion first (Lim et al., CoNEXT 2017).
        Ecf => ecf::EcfParams,
        /// Delay-aware packet scheduling (Kuhn et al., ICC 2014).
        Daps => daps::DapsParams,
        /// Out-of-order transmission for in-order arrival (Yang, Wang, Amer, 2014).
        Otias => otias::OtiasParams,
        /// Out-of-order sending for in-order arrival with a gap (Shi et al., STMS).
        Stms => stms::StmsParams,
        /// The scheduler of today's upstream Linux kernels (`mptcp_subflow_get_send`).
        LinuxDefault => linux_default::LinuxDefaultParams,
    }
}

/// A scheduler's parameters, which build it (the config-as-factory pattern): one type per
/// scheduler, in the scheduler's file.
pub trait SchedFactory: AlgorithmParams {
    /// The scheduler of one connection.
    fn build(&self) -> Box<dyn Scheduler>;
}

/// Builds the scheduler a connection's configuration names with its parameters.
pub fn build(kind: SchedKind, params: &SchedParams) -> Box<dyn Scheduler> {
    params.config(kind).build()
}

#[cfg(test)]
pub(crate) mod harness {
    //! Builds scheduler contexts by hand.
    use super::*;

    pub fn view(rtt_ms: u64, cwnd_segs: u64, in_flight_segs: u64) -> SchedView {
        SchedView {
            usable: true,
            has_room: in_flight_segs < cwnd_segs,
            backup: false,
            srtt: Some(Dur::from_ms(rtt_ms)),
            rttvar: Dur::from_ms(rtt_ms / 4),
            min_rtt: Some(Dur::from_ms(rtt_ms)),
            cwnd: cwnd_segs * 1000,
            ssthresh: u64::MAX,
            in_flight: in_flight_segs * 1000,
            out: in_flight_segs * 1000,
            smss: 1000,
            mss_cache: 1000,
            recovering: false,
            queued: in_flight_segs * 1000,
            sndbuf: u64::MAX,
            pacing_rate: 0,
        }
    }

    pub fn ctx(subflows: &[SchedView], unsent: u64) -> SchedCtx<'_> {
        SchedCtx {
            now: Time::ZERO,
            subflows,
            unsent,
            data_una: Dsn(0),
            snd_nxt: Dsn(0),
            rwnd_room: u64::MAX / 4,
            rwnd: u64::MAX / 4,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::harness::{ctx, view};
    use super::*;

    /// A scheduler that claims [`Scheduler::waits_without_room`] waits when no subflow has room
    /// and is left as it was: its next pick with room is a fresh scheduler's.
    #[test]
    fn schedulers_that_wait_without_room_change_nothing_by_waiting() {
        let full = [view(10, 10, 10), view(100, 10, 10)];
        let open = [view(10, 10, 10), view(100, 10, 0)];
        for &kind in SchedKind::ALL {
            let mut s = build(kind, &SchedParams::default());
            if !s.waits_without_room() {
                continue;
            }
            let mut fresh = build(kind, &SchedParams::default());
            for c in [ctx(&full, 10_000), ctx(&full, 0)] {
                s.new_round();
                assert_eq!(s.next(&c), Pick::Wait, "{}", s.name());
            }
            s.new_round();
            fresh.new_round();
            assert_eq!(s.next(&ctx(&open, 10_000)), fresh.next(&ctx(&open, 10_000)), "{}", s.name());
        }
    }

    /// [`LowestRttPick`] answers as [`SchedCtx::lowest_rtt_with_room`], and a scheduler that
    /// claims [`Scheduler::picks_lowest_rtt`] picks what it answers.
    #[test]
    fn the_one_pass_lowest_rtt_pick_is_the_contexts() {
        let mut backup = view(5, 10, 0);
        backup.backup = true;
        let mut full_backup = backup;
        full_backup.has_room = false;
        let mut down = view(1, 10, 0);
        down.usable = false;
        let mut unmeasured = view(1, 10, 0);
        unmeasured.srtt = None;
        let sets = [
            vec![view(10, 10, 0), view(100, 10, 0)],
            vec![view(100, 10, 0), view(10, 10, 10), view(50, 3, 0)],
            vec![down, backup, view(20, 4, 1), view(20, 4, 0)],
            vec![backup, view(30, 10, 10)],
            vec![down, backup, full_backup],
            vec![down, full_backup, backup],
            vec![unmeasured, view(30, 10, 0)],
            vec![unmeasured, unmeasured],
            vec![down],
            vec![],
        ];
        for set in &sets {
            let mut p = LowestRttPick::default();
            for (i, v) in set.iter().enumerate() {
                p.add(i, v);
            }
            let c = ctx(set, 10_000);
            assert_eq!(p.pick(), c.lowest_rtt_with_room(None), "{set:?}");
            for &kind in SchedKind::ALL {
                let mut s = build(kind, &SchedParams::default());
                if s.picks_lowest_rtt() {
                    let want = p.pick().map_or(Pick::Wait, |sf| Pick::New { sf, skip: 0 });
                    assert_eq!(s.next(&c), want, "{}", s.name());
                }
            }
        }
    }

    /// A scheduler that is not [`Scheduler::notified`] picks as a fresh one does after being
    /// told of transmissions and new rounds.
    #[test]
    fn schedulers_not_notified_are_not_changed_by_notices() {
        let sets = [
            vec![view(10, 10, 0), view(100, 10, 0)],
            vec![view(10, 10, 10), view(100, 10, 0)],
            vec![view(10, 10, 10), view(100, 10, 10)],
            vec![view(100, 10, 3), view(10, 10, 8), view(50, 3, 0)],
        ];
        for &kind in SchedKind::ALL {
            let mut s = build(kind, &SchedParams::default());
            if s.notified() {
                continue;
            }
            for (i, set) in sets.iter().enumerate() {
                for unsent in [0, 100_000] {
                    s.new_round();
                    s.on_sent(i % set.len(), Dsn(1000 * i as u64), 1000);
                    s.new_round();
                    let mut fresh = build(kind, &SchedParams::default());
                    assert_eq!(s.next(&ctx(set, unsent)), fresh.next(&ctx(set, unsent)), "{}", s.name());
                }
            }
        }
    }

    /// A scheduler that claims [`Scheduler::repeats_with_room`] picks the same subflow again
    /// after a transmission on it that leaves it room, as a fresh scheduler does.
    #[test]
    fn schedulers_that_repeat_with_room_pick_the_same_subflow_again() {
        let mut backup = view(5, 10, 0);
        backup.backup = true;
        let mut down = view(1, 10, 0);
        down.usable = false;
        let sets = [
            vec![view(10, 10, 0), view(100, 10, 0)],
            vec![view(100, 10, 0), view(10, 10, 8), view(50, 3, 0)],
            vec![down, backup, view(20, 4, 1), view(20, 4, 0)],
            vec![backup, view(30, 10, 0)],
        ];
        for &kind in SchedKind::ALL {
            let mut s = build(kind, &SchedParams::default());
            if !s.repeats_with_room() {
                continue;
            }
            for set in &sets {
                let mut v = set.clone();
                s.new_round();
                let mut picks = 0;
                let mut pick = s.next(&ctx(&v, 100_000));
                while let Pick::New { sf, skip: 0 } = pick {
                    s.on_sent(sf, Dsn(0), 1000);
                    // The transmission's fields, as the connection refreshes them.
                    let e = &mut v[sf];
                    e.in_flight += e.smss;
                    e.out += e.smss;
                    e.queued += e.smss;
                    e.has_room = e.in_flight + e.smss <= e.cwnd;
                    if !e.has_room {
                        break;
                    }
                    let mut fresh = build(kind, &SchedParams::default());
                    fresh.new_round();
                    assert_eq!(fresh.next(&ctx(&v, 100_000)), Pick::New { sf, skip: 0 }, "{}", s.name());
                    pick = s.next(&ctx(&v, 100_000));
                    assert_eq!(pick, Pick::New { sf, skip: 0 }, "{}", s.name());
                    picks += 1;
                }
                assert!(picks > 0, "{}: some repeated pick", s.name());
            }
        }
    }
}
