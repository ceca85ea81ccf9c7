//! minRTT, the default scheduler of the out-of-tree Linux MPTCP (`mptcp_sched.c`, v0.88–0.92)
//! as the seeds used it.
//!
//! Among usable subflows with room in their congestion window, the one with the lowest
//! smoothed RTT; backup subflows only when no regular subflow is usable at all. Two
//! independent add-ons (Raiciu et al., NSDI 2012 §4.2; Linux `mptcp_rcv_buf_optimization`),
//! applied by the connection when the receive window or a full send buffer blocks new data:
//! - opportunistic retransmission (M1): re-send the oldest un-DATA_ACKed segment on the
//!   subflow picked, if it was not sent there;
//! - penalisation (M2): at most once per SRTT of that subflow, halve the congestion window
//!   of the subflow holding the segment (and its ssthresh unless it is in slow start), if it
//!   has a larger SRTT and is not recovering from a loss.
//!
//! Deviations: subflows without an RTT estimate rank last; ties go to the lowest index.

use serde::{Deserialize, Serialize};

use super::{Pick, SchedCtx, SchedFactory, Scheduler};
use crate::registry::AlgorithmParams;

/// minRTT's add-ons from the out-of-tree Linux MPTCP (NSDI 2012 §4.2; `sched_params.minrtt`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MinRttParams {
    /// M1: when the receive window or a full send buffer blocks new data, re-send the
    /// oldest un-DATA_ACKed segment on the fastest subflow with room.
    #[serde(default)]
    pub opportunistic_retransmission: bool,
    /// M2: then halve the congestion window of the subflow holding that segment (at most
    /// once per SRTT of the fast subflow).
    #[serde(default)]
    pub penalisation: bool,
    /// Which release's penalisation test M2 applies.
    #[serde(default)]
    pub penalisation_rule: PenalisationRule,
    /// Whether M1/M2 also run when nothing is left to send and the writer waits for
    /// send-buffer space (`mptcp_next_segment`), besides a full receive window. v0.86–v0.88
    /// run that path only while `meta_sk->sk_write_pending`, which Linux raises only for a
    /// writer asleep in `sk_stream_wait_memory`: a writer on a non-blocking socket (Apache2
    /// through APR, which waits in `poll()`) never raises it, and the path never runs (false).
    #[serde(default = "yes")]
    pub send_buffer_path: bool,
}

fn yes() -> bool {
    true
}

impl Default for MinRttParams {
    fn default() -> MinRttParams {
        MinRttParams {
            opportunistic_retransmission: false,
            penalisation: false,
            penalisation_rule: PenalisationRule::default(),
            send_buffer_path: true,
        }
    }
}

/// The out-of-tree stack changed M2's test between releases (`mptcp_rcv_buf_optimization`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
pub enum PenalisationRule {
    /// v0.89 onwards (`mptcp_sched.c`): the holder is halved if its SRTT is above the calling
    /// subflow's and it is in the Open state, its ssthresh too unless it is in slow start; at
    /// most once per SRTT of the calling subflow.
    #[default]
    #[serde(rename = "v0.9x")]
    V09x,
    /// v0.86–v0.88 (`mptcp_output.c`, Linux 3.x): the holder is halved if its rate
    /// cwnd / SRTT is below the calling subflow's, whatever its state, and its ssthresh is
    /// set to the halved window; at most once per SRTT of the holder.
    #[serde(rename = "v0.88")]
    V088,
}

impl AlgorithmParams for MinRttParams {
    const NAME: &'static str = "minrtt";
    const TABLE: bool = true;
}

impl SchedFactory for MinRttParams {
    fn build(&self) -> Box<dyn Scheduler> {
        Box::new(MinRtt::new(self))
    }
}

pub struct MinRtt {
    m1: bool,
    m2: bool,
}

impl MinRtt {
    pub fn new(p: &MinRttParams) -> MinRtt {
        MinRtt { m1: p.opportunistic_retransmission, m2: p.penalisation }
    }
}

impl Scheduler for MinRtt {
    fn name(&self) -> &'static str {
        MinRttParams::NAME
    }

    // Its `on_sent` and `new_round` are the trait's, which do nothing.
    fn notified(&self) -> bool {
        false
    }

    // Keeps no state: its pick is the lowest-SRTT subflow with room.
    fn waits_without_room(&self) -> bool {
        true
    }

    // Its pick stays the lowest-SRTT candidate while that one keeps room.
    fn repeats_with_room(&self) -> bool {
        true
    }

    // Its pick is exactly that, and asking changes nothing.
    fn picks_lowest_rtt(&self) -> bool {
        true
    }

    fn next(&mut self, ctx: &SchedCtx) -> Pick {
        match ctx.lowest_rtt_with_room(None) {
            Some(sf) => Pick::New { sf, skip: 0 },
            None => Pick::Wait,
        }
    }

    fn receive_buffer_optimisation(&self) -> (bool, bool) {
        (self.m1, self.m2)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mptcp::sched::harness::*;

    fn minrtt() -> MinRtt {
        MinRtt::new(&MinRttParams::default())
    }

    #[test]
    fn picks_the_lowest_rtt_with_room() {
        let mut s = minrtt();
        let v = [view(100, 10, 0), view(10, 10, 0)];
        assert_eq!(s.next(&ctx(&v, 10_000)), Pick::New { sf: 1, skip: 0 });
        let v = [view(100, 10, 0), view(10, 10, 10)];
        assert_eq!(s.next(&ctx(&v, 10_000)), Pick::New { sf: 0, skip: 0 });
        assert_eq!(s.pick_reinject(&ctx(&[view(100, 10, 0), view(10, 10, 0)], 0), 1), Some(0));
    }

    #[test]
    fn backups_only_when_no_regular_subflow_is_usable() {
        let mut s = minrtt();
        let mut backup = view(10, 10, 0);
        backup.backup = true;
        // The regular subflow is full: wait rather than use the backup.
        assert_eq!(s.next(&ctx(&[view(100, 10, 10), backup], 0)), Pick::Wait);
        let mut down = view(100, 10, 0);
        down.usable = false;
        assert_eq!(s.next(&ctx(&[down, backup], 0)), Pick::New { sf: 1, skip: 0 });
    }
}
