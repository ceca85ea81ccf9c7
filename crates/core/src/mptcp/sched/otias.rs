//! OTIAS, out-of-order transmission for in-order arrival scheduling (Yang, Wang, Amer,
//! "Out-of-order transmission for in-order arrival scheduling for multipath TCP", AINA
//! Workshops 2014, §III).
//!
//! OTIAS gives each segment, in data-sequence order, to the subflow on which it would
//! arrive first, even if that subflow's window is full: a segment queued behind q segments
//! on subflow j (counting those in flight) leaves after ⌊q / CWND_j⌋ more round trips and
//! arrives after about
//!     T_j(q) = ⌊q / CWND_j⌋ · RTT_j + RTT_j / 2.
//! Segments given to a full subflow wait in its queue; a subflow with room sends its queue
//! head, which may lie ahead of unsent data given to faster subflows.
//!
//! Deviations from the reference: OTIAS fills per-subflow queues when data is written; here
//! the queues are implicit and the choice is made at send time. A subflow s with room sends
//! its first segment, T_s(q_s) = RTT_s / 2; every other subflow j takes the segments with
//! T_j(q) < T_s (ties to the lower index), i.e. max(0, CWND_j · R_j − inflight_j) segments
//! with R_j = ⌈(T_s − RTT_j / 2) / RTT_j⌉ rounds; s sends `Pick::New { skip }` past them all.
//! Among subflows with room, the one with the smallest skip sends (the queue holding the
//! oldest unsent data); a subflow whose segment would lie beyond the peer's receive window
//! (conservatively: skip plus a segment exceeds the window room above `snd_nxt`) does not
//! send. Windows and in-flight data in full segments of each subflow's SMSS;
//! subflows without an RTT estimate are used only when none has one; backups only when no
//! regular subflow is usable.

use serde::{Deserialize, Serialize};

use super::{Pick, SchedCtx, SchedFactory, Scheduler};
use crate::registry::AlgorithmParams;

/// OTIAS has no parameters (and no `sched_params` table).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct OtiasParams;

impl AlgorithmParams for OtiasParams {
    const NAME: &'static str = "otias";
    const TABLE: bool = false;
}

impl SchedFactory for OtiasParams {
    fn build(&self) -> Box<dyn Scheduler> {
        Box::new(Otias)
    }
}

pub struct Otias;

impl Otias {
    /// Unsent bytes that other subflows would deliver before the first segment of `s`.
    fn skip_for(ctx: &SchedCtx, s: usize) -> Option<u64> {
        let rtt_s = ctx.subflows[s].srtt_s()?;
        let t_s = rtt_s / 2.0;
        let regular = ctx.subflows.iter().any(|v| v.usable && !v.backup);
        let mut skip = 0;
        for (j, v) in ctx.subflows.iter().enumerate() {
            if j == s || !v.usable || v.backup == regular {
                continue;
            }
            let Some(rtt_j) = v.srtt_s() else { continue };
            let rtt_j = rtt_j.max(1e-9);
            let ahead = t_s - rtt_j / 2.0;
            let rounds = if ahead > 0.0 || (ahead == 0.0 && j < s) {
                // Rounds r >= 0 with r · RTT_j + RTT_j / 2 < T_s (<= for a lower index).
                let r = ahead / rtt_j;
                if j < s {
                    r.floor() as u64 + 1
                } else {
                    r.ceil() as u64
                }
            } else {
                0
            };
            let cwnd = (v.cwnd / v.smss.max(1)).max(1);
            let in_flight = v.in_flight.div_ceil(v.smss.max(1));
            skip += (cwnd * rounds).saturating_sub(in_flight) * v.smss;
        }
        Some(skip)
    }
}

impl Scheduler for Otias {
    fn name(&self) -> &'static str {
        OtiasParams::NAME
    }

    // Its `on_sent` and `new_round` are the trait's, which do nothing.
    fn notified(&self) -> bool {
        false
    }

    // Picks only among subflows with room and keeps no state in `next`.
    fn waits_without_room(&self) -> bool {
        true
    }

    fn next(&mut self, ctx: &SchedCtx) -> Pick {
        let best = ctx
            .candidates()
            .filter_map(|sf| Otias::skip_for(ctx, sf).map(|skip| (skip, ctx.subflows[sf].srtt, sf)))
            .filter(|&(skip, _, sf)| ctx.fits_window(skip, ctx.subflows[sf].smss))
            .min();
        match best {
            Some((skip, _, sf)) if skip < ctx.unsent => Pick::New { sf, skip },
            Some(_) => Pick::Wait,
            None => match ctx.candidates().next() {
                Some(sf) if ctx.subflows.iter().all(|v| v.srtt.is_none()) => Pick::New { sf, skip: 0 },
                _ => Pick::Wait,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mptcp::sched::harness::*;

    #[test]
    fn the_fast_subflow_with_room_sends_the_oldest_data() {
        let v = [view(100, 10, 0), view(10, 10, 0)];
        assert_eq!(Otias.next(&ctx(&v, 100_000)), Pick::New { sf: 1, skip: 0 });
    }

    #[test]
    fn the_slow_subflow_sends_past_what_the_full_fast_queue_delivers_first() {
        // Fast 10 ms, cwnd 10, 10 in flight; slow 100 ms: T_s = 50 ms; the fast subflow's
        // rounds r with 10r + 5 < 50 ms: r = 0..4, 5 rounds × 10 − 10 in flight = 40 segments.
        let v = [view(10, 10, 10), view(100, 10, 0)];
        assert_eq!(Otias.next(&ctx(&v, 100_000)), Pick::New { sf: 1, skip: 40_000 });
        // Less unsent data than the fast subflow delivers first: the slow subflow waits.
        assert_eq!(Otias.next(&ctx(&v, 40_000)), Pick::Wait);
    }

    #[test]
    fn equal_arrival_times_go_to_the_lower_index() {
        let v = [view(10, 10, 10), view(10, 10, 0)];
        // Subflow 0's segments at 5 ms (round 0, full) arrive together with subflow 1's first:
        // the tie goes to subflow 0, whose queue holds the next 10 − 10 = 0 segments of round 0.
        assert_eq!(Otias.next(&ctx(&v, 100_000)), Pick::New { sf: 1, skip: 0 });
    }
}
