//! BLEST, blocking estimation (Ferlin, Alay, Mehani, Boreli, "BLEST: Blocking
//! Estimation-based MPTCP Scheduler for Heterogeneous Networks", IFIP Networking 2016, §3).
//!
//! The fast subflow x_f (lowest SRTT among usable subflows) is used whenever it has room.
//! Otherwise the lowest-RTT subflow x_s with room is considered: during one RTT of x_s the
//! fast subflow could send
//!     X = MSS_f · (CWND_f + (rtt_s / rtt_f − 1) / 2) · rtt_s / rtt_f
//! bytes (its window growing by one segment per RTT in congestion avoidance). If
//! λ · X > |W| − (inflight_s + 1) · MSS_s, with |W| the connection-level send window, a
//! segment sent on x_s would make the fast subflow block on the window: BLEST waits for
//! x_f instead.
//!
//! Deviations from the reference:
//! - λ is fixed (the paper and `mptcp_blest.c` adapt it on spurious retransmissions, which
//!   the engine does not report to schedulers);
//! - |W| is the peer's receive window as last advertised (`mptcp_blest.c` uses the
//!   meta-level `snd_wnd` the same way);
//! - subflows without an RTT estimate are used without the check; backups only when no
//!   regular subflow is usable.

use serde::{Deserialize, Serialize};

use super::{FastOrSlow, Pick, SchedCtx, SchedFactory, Scheduler};
use crate::registry::AlgorithmParams;

/// BLEST parameters (`sched_params.blest`; Ferlin et al. §3).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BlestParams {
    /// λ, the scaling factor of the fast subflow's estimated sending (dimensionless, > 0);
    /// default 1.2, `mptcp_blest.c`'s initial value.
    pub lambda: f64,
}

impl Default for BlestParams {
    fn default() -> Self {
        BlestParams { lambda: 1.2 }
    }
}

impl AlgorithmParams for BlestParams {
    const NAME: &'static str = "blest";
    const TABLE: bool = true;
    fn check(&self) -> Result<(), (&'static str, String)> {
        if !(self.lambda > 0.0 && self.lambda.is_finite()) {
            return Err(("lambda", format!("{} must be > 0", self.lambda)));
        }
        Ok(())
    }
}

impl SchedFactory for BlestParams {
    fn build(&self) -> Box<dyn Scheduler> {
        Box::new(Blest::new(self))
    }
}

pub struct Blest {
    lambda: f64,
}

impl Blest {
    pub fn new(p: &BlestParams) -> Blest {
        Blest { lambda: p.lambda }
    }

    /// Bytes the fast subflow could send during one RTT of the slow one (the paper's X).
    pub fn fast_bytes_per_slow_rtt(mss_f: f64, cwnd_f_segs: f64, rtt_f: f64, rtt_s: f64) -> f64 {
        let ratio = rtt_s / rtt_f;
        mss_f * (cwnd_f_segs + (ratio - 1.0) / 2.0) * ratio
    }
}

impl Scheduler for Blest {
    fn name(&self) -> &'static str {
        BlestParams::NAME
    }

    // Its `on_sent` and `new_round` are the trait's, which do nothing.
    fn notified(&self) -> bool {
        false
    }

    // With no subflow with room `fast_or_slow` decides to wait before any estimate is read.
    fn waits_without_room(&self) -> bool {
        true
    }

    fn next(&mut self, ctx: &SchedCtx) -> Pick {
        let (f, s, rtt_f, rtt_s) = match ctx.fast_or_slow() {
            FastOrSlow::Decided(p) => return p,
            FastOrSlow::Choose { fast, slow, rtt_f, rtt_s } => (fast, slow, rtt_f, rtt_s),
        };
        let (xf, xs) = (&ctx.subflows[f], &ctx.subflows[s]);
        let mss_f = xf.smss as f64;
        let x = Blest::fast_bytes_per_slow_rtt(mss_f, xf.cwnd as f64 / mss_f, rtt_f.max(1e-9), rtt_s);
        let room = ctx.rwnd as f64 - (xs.in_flight + xs.smss) as f64;
        if self.lambda * x > room {
            Pick::Wait
        } else {
            Pick::New { sf: s, skip: 0 }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mptcp::sched::harness::*;

    #[test]
    fn x_counts_one_segment_of_growth_per_fast_rtt() {
        // rtt ratio 4: 10 + 3/2 segments per fast RTT, for 4 fast RTTs.
        let x = Blest::fast_bytes_per_slow_rtt(1000.0, 10.0, 0.01, 0.04);
        assert!((x - 46_000.0).abs() < 1e-6, "{x}");
    }

    #[test]
    fn the_slow_subflow_is_skipped_when_the_window_would_block_the_fast_one() {
        let mut s = Blest::new(&BlestParams::default());
        let v = [view(10, 10, 10), view(40, 10, 0)];
        // X = 46 kB, λX = 55.2 kB; with a 50 kB window 50 − 1 = 49 kB < 55.2 kB: wait.
        let mut c = ctx(&v, 100_000);
        c.rwnd = 50_000;
        assert_eq!(s.next(&c), Pick::Wait);
        // With a 60 kB window, 59 kB > 55.2 kB: the slow subflow is used.
        c.rwnd = 60_000;
        assert_eq!(s.next(&c), Pick::New { sf: 1, skip: 0 });
        // The fast subflow with room is always used.
        let v = [view(10, 10, 9), view(40, 10, 0)];
        c.subflows = &v;
        assert_eq!(s.next(&c), Pick::New { sf: 0, skip: 0 });
    }
}
