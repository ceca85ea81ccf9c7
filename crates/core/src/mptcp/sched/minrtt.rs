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

use super::{Pick, SchedCtx, Scheduler};
use crate::config::MinRttParams;

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
        "minrtt"
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
