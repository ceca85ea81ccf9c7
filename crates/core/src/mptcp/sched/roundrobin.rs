//! Round-robin, the out-of-tree Linux MPTCP's `mptcp_rr.c` (v0.89–0.95, module parameters
//! `num_segments` and `cwnd_limited`).
//!
//! Subflows take turns in index order; each turn sends up to `num_segments` segments. Only
//! subflows with congestion-window room take part (`cwnd_limited = 1`, the module default);
//! backups only when no regular subflow is usable.
//!
//! Deviations: a subflow whose turn comes while it has no room is skipped (the kernel walks
//! to the next available subflow the same way); the turn counter advances per segment sent,
//! not per skb of up to 64 KB.

use serde::{Deserialize, Serialize};

use super::{Pick, SchedCtx, SchedFactory, Scheduler};
use crate::registry::AlgorithmParams;
use crate::units::Dsn;

/// Round-robin parameters (`sched_params.roundrobin`); the default is `mptcp_rr.c`'s module
/// parameter.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RoundRobinParams {
    /// Consecutive segments sent on a subflow before moving to the next (segments, >= 1).
    pub num_segments: u64,
}

impl Default for RoundRobinParams {
    fn default() -> Self {
        RoundRobinParams { num_segments: 1 }
    }
}

impl AlgorithmParams for RoundRobinParams {
    const NAME: &'static str = "roundrobin";
    const TABLE: bool = true;
    fn check(&self) -> Result<(), (&'static str, String)> {
        if self.num_segments == 0 {
            return Err(("num_segments", "must be >= 1".into()));
        }
        Ok(())
    }
}

impl SchedFactory for RoundRobinParams {
    fn build(&self) -> Box<dyn Scheduler> {
        Box::new(RoundRobin::new(self))
    }
}

pub struct RoundRobin {
    num_segments: u64,
    /// Subflow whose turn it is and segments it has sent in this turn.
    turn: usize,
    sent_in_turn: u64,
}

impl RoundRobin {
    pub fn new(p: &RoundRobinParams) -> RoundRobin {
        RoundRobin { num_segments: p.num_segments.max(1), turn: 0, sent_in_turn: 0 }
    }
}

impl Scheduler for RoundRobin {
    fn name(&self) -> &'static str {
        RoundRobinParams::NAME
    }

    // The turn moves only when a segment is sent (`on_sent`); picks need room.
    fn waits_without_room(&self) -> bool {
        true
    }

    fn next(&mut self, ctx: &SchedCtx) -> Pick {
        let n = ctx.subflows.len();
        // The first candidate at or after the subflow whose turn it is, cyclically.
        match ctx.candidates().min_by_key(|&i| (i + n - self.turn.min(n)) % n.max(1)) {
            Some(sf) => Pick::New { sf, skip: 0 },
            None => Pick::Wait,
        }
    }

    fn on_sent(&mut self, sf: usize, _dsn: Dsn, _len: u64) {
        if sf != self.turn {
            self.turn = sf;
            self.sent_in_turn = 0;
        }
        self.sent_in_turn += 1;
        if self.sent_in_turn >= self.num_segments {
            self.turn = sf + 1;
            self.sent_in_turn = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mptcp::sched::harness::*;

    fn send(s: &mut RoundRobin, v: &[crate::mptcp::sched::SchedView]) -> Pick {
        let p = s.next(&ctx(v, 100_000));
        if let Pick::New { sf, .. } = p {
            s.on_sent(sf, Dsn(0), 1000);
        }
        p
    }

    #[test]
    fn subflows_take_turns_one_segment_each() {
        let mut s = RoundRobin::new(&RoundRobinParams::default());
        let v = [view(10, 10, 0), view(100, 10, 0), view(50, 10, 0)];
        let order: Vec<Pick> = (0..4).map(|_| send(&mut s, &v)).collect();
        let sfs: Vec<usize> = order.iter().map(|p| if let Pick::New { sf, .. } = p { *sf } else { 99 }).collect();
        assert_eq!(sfs, vec![0, 1, 2, 0]);
    }

    #[test]
    fn a_turn_lasts_num_segments_and_full_subflows_are_skipped() {
        let mut s = RoundRobin::new(&RoundRobinParams { num_segments: 2 });
        let v = [view(10, 10, 0), view(100, 10, 10), view(50, 10, 0)];
        let sfs: Vec<Pick> = (0..4).map(|_| send(&mut s, &v)).collect();
        let want = [0, 0, 2, 2].map(|sf| Pick::New { sf, skip: 0 });
        assert_eq!(sfs, want);
        assert_eq!(s.next(&ctx(&[view(10, 1, 1), view(10, 1, 1)], 1000)), Pick::Wait);
    }
}
