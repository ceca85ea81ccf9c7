//! DAPS, delay-aware packet scheduling (Kuhn, Lochin, Mifdaoui, Sarwar, Mehani, Boreli,
//! "DAPS: Intelligent Delay-Aware Packet Scheduling For Multipath Transport", ICC 2014,
//! §III; after Sarwar et al., 2013).
//!
//! DAPS plans a "scheduling run" lasting one RTT of the slowest subflow: with
//! η_i = RTT_max / RTT_i (rounded, >= 1), subflow i sends η_i · CWND_i segments in it, and the
//! data sequence is cut into consecutive blocks in RTT order — the fastest subflow's
//! η_f · CWND_f segments first, the slowest subflow's CWND_s segments last — so that data
//! sent at the start of the run on the slow path arrives when the fast path has delivered
//! everything before it.
//!
//! Deviations from the reference:
//! - the original assigns every segment of a run to its subflow's queue when the run is
//!   planned; here a run is a list of blocks (subflow, bytes left) over the unsent data, and
//!   a subflow with room sends, at send time, the first unsent byte of its first block:
//!   `Pick::New { skip }` with `skip` the bytes left in the blocks before it;
//! - a new run is planned (appended after the unfinished blocks) when a subflow with room
//!   has no block left; at most four blocks per subflow are outstanding, beyond that a subflow with room
//!   and no block sends the oldest unsent data (taken from the first block), so a stalled
//!   subflow cannot hold the connection indefinitely;
//! - a block that lies beyond the peer's receive window (conservatively: its skip plus a
//!   segment exceeds the window room above `snd_nxt`) is not sent yet;
//! - more than two subflows: blocks in increasing RTT order; backups only when no regular
//!   subflow is usable; subflows without an RTT estimate join once they have one.

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

use super::{Pick, SchedCtx, SchedFactory, Scheduler};
use crate::registry::AlgorithmParams;
use crate::units::Dsn;

/// DAPS has no parameters (and no `sched_params` table).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DapsParams;

impl AlgorithmParams for DapsParams {
    const NAME: &'static str = "daps";
    const TABLE: bool = false;
}

impl SchedFactory for DapsParams {
    fn build(&self) -> Box<dyn Scheduler> {
        Box::new(Daps::default())
    }
}

/// Outstanding runs (blocks per subflow) after which a subflow without a block takes the
/// oldest unsent data.
const MAX_RUNS: usize = 4;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Block {
    sf: usize,
    /// Unsent bytes of this block (its tail; a block is sent from its start).
    left: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Pending {
    /// Sending from the start of block `i`'s unsent bytes.
    Block(usize),
    /// Sending the oldest unsent data.
    Head,
}

#[derive(Default)]
pub struct Daps {
    /// The unsent data in sequence order, cut into blocks; data past the last block is
    /// unplanned.
    plan: VecDeque<Block>,
    pending: Option<Pending>,
    /// Candidates in RTT order (reused between calls).
    order: Vec<usize>,
}

impl Daps {
    /// Appends one scheduling run for the usable subflows with an RTT estimate.
    fn plan_run(&mut self, ctx: &SchedCtx) -> bool {
        let regular = ctx.subflows.iter().any(|s| s.usable && !s.backup);
        let mut subs: Vec<(f64, usize)> = ctx
            .subflows
            .iter()
            .enumerate()
            .filter(|(_, s)| s.usable && s.backup != regular)
            .filter_map(|(i, s)| s.srtt_s().map(|r| (r.max(1e-9), i)))
            .collect();
        subs.sort_by(|a, b| a.partial_cmp(b).expect("no NaN"));
        let Some(&(rtt_max, _)) = subs.last() else { return false };
        for (rtt, sf) in subs {
            let v = &ctx.subflows[sf];
            let eta = (rtt_max / rtt).round().max(1.0) as u64;
            self.plan.push_back(Block { sf, left: eta * v.cwnd.max(v.smss) });
        }
        true
    }

    /// Drops finished blocks and blocks of subflows that can no longer send.
    fn tidy(&mut self, ctx: &SchedCtx) {
        while self.plan.front().is_some_and(|b| b.left == 0) {
            self.plan.pop_front();
        }
        let usable = |sf: usize| ctx.subflows.get(sf).is_some_and(|s| s.usable);
        if self.plan.iter().any(|b| b.left == 0 || !usable(b.sf)) {
            self.plan.retain(|b| b.left > 0 && usable(b.sf));
        }
    }

    /// Marks `len` unsent bytes starting at block `i` as sent.
    fn consume(&mut self, mut i: usize, mut len: u64) {
        while len > 0 && i < self.plan.len() {
            let take = len.min(self.plan[i].left);
            self.plan[i].left -= take;
            len -= take;
            i += 1;
        }
    }

    fn first_block_of(&self, sf: usize) -> Option<(usize, u64)> {
        let mut skip = 0;
        for (i, b) in self.plan.iter().enumerate() {
            if b.sf == sf && b.left > 0 {
                return Some((i, skip));
            }
            skip += b.left;
        }
        None
    }
}

impl Scheduler for Daps {
    fn name(&self) -> &'static str {
        DapsParams::NAME
    }

    fn next(&mut self, ctx: &SchedCtx) -> Pick {
        self.tidy(ctx);
        let mut order = std::mem::take(&mut self.order);
        order.clear();
        order.extend(ctx.candidates());
        order.sort_by_key(|&i| (ctx.subflows[i].srtt.map_or(u64::MAX, |d| d.0), i));
        let pick = self.pick(ctx, &order);
        self.order = order;
        pick
    }

    fn on_sent(&mut self, _sf: usize, _dsn: Dsn, len: u64) {
        match self.pending.take() {
            Some(Pending::Block(i)) => self.consume(i, len),
            Some(Pending::Head) => self.consume(0, len),
            None => {}
        }
    }
}

impl Daps {
    /// The first candidate, in RTT order, with something it may send.
    fn pick(&mut self, ctx: &SchedCtx, order: &[usize]) -> Pick {
        for &sf in order {
            let mut found = self.first_block_of(sf);
            let room_for_a_run = self.plan.len() < MAX_RUNS * ctx.subflows.len();
            if found.is_none() && room_for_a_run && ctx.subflows[sf].srtt.is_some() && self.plan_run(ctx) {
                found = self.first_block_of(sf);
            }
            match found {
                Some((i, skip)) if skip < ctx.unsent && ctx.fits_window(skip, ctx.subflows[sf].smss) => {
                    self.pending = Some(Pending::Block(i));
                    return Pick::New { sf, skip };
                }
                Some(_) => {} // its block lies beyond the data written so far or the window
                None if ctx.unsent > 0 => {
                    self.pending = Some(Pending::Head);
                    return Pick::New { sf, skip: 0 };
                }
                None => {}
            }
        }
        Pick::Wait
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mptcp::sched::harness::*;

    /// Sends while the scheduler picks, updating in-flight counts; returns (sf, skip) picks.
    fn drain(s: &mut Daps, v: &mut [crate::mptcp::sched::SchedView], unsent: &mut u64) -> Vec<(usize, u64)> {
        let mut picks = Vec::new();
        loop {
            let p = s.next(&ctx(v, *unsent));
            let Pick::New { sf, skip } = p else { break };
            picks.push((sf, skip));
            s.on_sent(sf, Dsn(0), 1000);
            v[sf].in_flight += 1000;
            v[sf].has_room = v[sf].in_flight < v[sf].cwnd;
            *unsent -= 1000;
        }
        picks
    }

    #[test]
    fn a_run_gives_the_fast_subflow_eta_windows_before_the_slow_block() {
        let mut s = Daps::default();
        // RTTs 10 and 40 ms: η = 4; fast cwnd 2, slow cwnd 3 → blocks of 8 and 3 segments.
        let mut v = [view(10, 2, 0), view(40, 3, 0)];
        let mut unsent = 100_000;
        let picks = drain(&mut s, &mut v, &mut unsent);
        // Fast sends the first two segments; the slow subflow starts 8 − 2 = 6 segments ahead.
        assert_eq!(picks, vec![(0, 0), (0, 0), (1, 6000), (1, 6000), (1, 6000)]);
        assert_eq!(s.plan.iter().map(|b| b.left).collect::<Vec<_>>(), vec![6000]);
    }

    #[test]
    fn the_fast_subflow_continues_its_block_and_then_the_next_run() {
        let mut s = Daps::default();
        let mut v = [view(10, 2, 0), view(40, 3, 0)];
        let mut unsent = 100_000;
        drain(&mut s, &mut v, &mut unsent);
        // Its window is acknowledged: the fast subflow sends the rest of its block at skip 0.
        v[0].in_flight = 0;
        v[0].has_room = true;
        let picks = drain(&mut s, &mut v, &mut unsent);
        assert_eq!(picks, vec![(0, 0), (0, 0)]);
    }

    #[test]
    fn a_block_beyond_the_written_data_is_not_sent() {
        let mut s = Daps::default();
        let mut v = [view(10, 10, 10), view(40, 3, 0)];
        // Fast block 40 segments ahead of the slow one, but only 5 segments are written.
        assert_eq!(s.next(&ctx(&v, 5000)), Pick::Wait);
        v[0].in_flight = 0;
        v[0].has_room = true;
        assert_eq!(s.next(&ctx(&v, 5000)), Pick::New { sf: 0, skip: 0 });
    }
}
