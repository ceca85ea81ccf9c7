//! Redundant, the out-of-tree Linux MPTCP's `mptcp_redundant.c` (Frömmgen et al.; v0.92+):
//! every segment on every usable subflow.
//!
//! New data goes to the lowest-RTT subflow with room; every other usable subflow then
//! sends a copy of each segment it has not carried yet, in data-sequence order, when it has
//! room. Each subflow keeps a pointer to the end of the data it has carried; data already
//! DATA_ACKed is never copied (the pointer jumps to `data_una`), which is how the kernel
//! drops skbs that are acknowledged before a slow subflow gets to them.
//!
//! Deviations: the kernel walks the meta send queue per subflow; the pointer is the same
//! state without the queue walk. Backups only when no regular subflow is usable.

use serde::{Deserialize, Serialize};

use super::{Pick, SchedCtx, SchedFactory, Scheduler};
use crate::registry::AlgorithmParams;
use crate::units::Dsn;

/// The redundant scheduler has no parameters (and no `sched_params` table).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RedundantParams;

impl AlgorithmParams for RedundantParams {
    const NAME: &'static str = "redundant";
    const TABLE: bool = false;
}

impl SchedFactory for RedundantParams {
    fn build(&self) -> Box<dyn Scheduler> {
        Box::new(Redundant::default())
    }
}

#[derive(Default)]
pub struct Redundant {
    /// Per subflow: every byte below this was sent on it (or DATA_ACKed before it could be).
    carried: Vec<Dsn>,
}

impl Redundant {
    fn carried(&self, sf: usize) -> Dsn {
        self.carried.get(sf).copied().unwrap_or(Dsn(0))
    }
}

impl Scheduler for Redundant {
    fn name(&self) -> &'static str {
        RedundantParams::NAME
    }

    // Copies and new data go only to subflows with room; state moves only on `on_sent`.
    fn waits_without_room(&self) -> bool {
        true
    }

    fn next(&mut self, ctx: &SchedCtx) -> Pick {
        // Copies first, lagging subflows in index order.
        for sf in ctx.candidates() {
            let from = self.carried(sf).max(ctx.data_una);
            if from < ctx.snd_nxt {
                return Pick::Copy { sf, dsn: from, len: ctx.snd_nxt.dist(from) };
            }
        }
        match ctx.lowest_rtt_with_room(None) {
            Some(sf) if ctx.unsent > 0 => Pick::New { sf, skip: 0 },
            _ => Pick::Wait,
        }
    }

    fn on_sent(&mut self, sf: usize, dsn: Dsn, len: u64) {
        if self.carried.len() <= sf {
            self.carried.resize(sf + 1, Dsn(0));
        }
        // The connection sends copies from the pointer (or from `data_una`, above it).
        self.carried[sf] = self.carried[sf].max(dsn + len);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mptcp::sched::harness::*;

    #[test]
    fn new_data_goes_to_the_fastest_then_every_other_subflow_copies_it() {
        let mut s = Redundant::default();
        let v = [view(100, 10, 0), view(10, 10, 0)];
        let mut c = ctx(&v, 10_000);
        assert_eq!(s.next(&c), Pick::New { sf: 1, skip: 0 });
        s.on_sent(1, Dsn(0), 1000);
        c.snd_nxt = Dsn(1000);
        assert_eq!(s.next(&c), Pick::Copy { sf: 0, dsn: Dsn(0), len: 1000 });
        s.on_sent(0, Dsn(0), 1000);
        assert_eq!(s.next(&c), Pick::New { sf: 1, skip: 0 });
    }

    #[test]
    fn data_acked_before_a_slow_subflow_copies_it_is_skipped() {
        let mut s = Redundant::default();
        for k in 0..5 {
            s.on_sent(1, Dsn(k * 1000), 1000);
        }
        let v = [view(100, 10, 0), view(10, 10, 10)];
        let mut c = ctx(&v, 0);
        c.snd_nxt = Dsn(5000);
        c.data_una = Dsn(3000);
        assert_eq!(s.next(&c), Pick::Copy { sf: 0, dsn: Dsn(3000), len: 2000 });
        // Nothing left to copy and no room on the fast subflow: wait.
        s.on_sent(0, Dsn(3000), 2000);
        assert_eq!(s.next(&c), Pick::Wait);
    }
}
