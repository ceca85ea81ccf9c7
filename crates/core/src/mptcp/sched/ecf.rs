//! ECF, earliest completion first (Lim, Nahum, Towsley, Gibbens, "ECF: An MPTCP Path
//! Scheduler to Manage Heterogeneous Paths", CoNEXT 2017, §4 and Algorithm 1).
//!
//! The fast subflow x_f (lowest SRTT among usable subflows) is used whenever it has room.
//! Otherwise, with x_s the lowest-RTT subflow with room, k the segments waiting in the
//! connection-level send buffer, n = 1 + k / CWND_f and δ = max(σ_f, σ_s) (RTT variations):
//! if n · RTT_f < (1 + waiting · β)(RTT_s + δ), sending everything on x_f would finish
//! before one segment over x_s arrives; then if also (k / CWND_s) · RTT_s ≥ 2 RTT_f + δ
//! (x_s would not help finish), ECF waits for x_f and sets `waiting`; otherwise it uses x_s.
//! When the first inequality fails, `waiting` is cleared and x_s is used.
//!
//! Deviations from the reference: windows are counted in full segments of each subflow's
//! SMSS; subflows without an RTT estimate are used without the check; backups only when no
//! regular subflow is usable.

use serde::{Deserialize, Serialize};

use super::{FastOrSlow, Pick, SchedCtx, SchedFactory, Scheduler};
use crate::registry::AlgorithmParams;

/// ECF parameters (`sched_params.ecf`; Lim et al. §4).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EcfParams {
    /// β, the hysteresis margin once ECF has started waiting for the fast subflow
    /// (fraction of the slow subflow's RTT, >= 0); default 0.25 as in the paper.
    pub beta: f64,
}

impl Default for EcfParams {
    fn default() -> Self {
        EcfParams { beta: 0.25 }
    }
}

impl AlgorithmParams for EcfParams {
    const NAME: &'static str = "ecf";
    const TABLE: bool = true;
    fn check(&self) -> Result<(), (&'static str, String)> {
        if !(self.beta >= 0.0 && self.beta.is_finite()) {
            return Err(("beta", format!("{} must be >= 0", self.beta)));
        }
        Ok(())
    }
}

impl SchedFactory for EcfParams {
    fn build(&self) -> Box<dyn Scheduler> {
        Box::new(Ecf::new(self))
    }
}

pub struct Ecf {
    beta: f64,
    waiting: bool,
}

impl Ecf {
    pub fn new(p: &EcfParams) -> Ecf {
        Ecf { beta: p.beta, waiting: false }
    }
}

impl Scheduler for Ecf {
    fn name(&self) -> &'static str {
        EcfParams::NAME
    }

    // Its `on_sent` and `new_round` are the trait's, which do nothing.
    fn notified(&self) -> bool {
        false
    }

    // With no subflow with room `fast_or_slow` decides to wait before `waiting` is touched.
    fn waits_without_room(&self) -> bool {
        true
    }

    fn next(&mut self, ctx: &SchedCtx) -> Pick {
        let (f, s, rtt_f, rtt_s) = match ctx.fast_or_slow() {
            FastOrSlow::Decided(p) => return p,
            FastOrSlow::Choose { fast, slow, rtt_f, rtt_s } => (fast, slow, rtt_f, rtt_s),
        };
        let (xf, xs) = (&ctx.subflows[f], &ctx.subflows[s]);
        let k = ctx.unsent as f64 / xf.smss as f64;
        let cwnd_f = (xf.cwnd as f64 / xf.smss as f64).max(1.0);
        let cwnd_s = (xs.cwnd as f64 / xs.smss as f64).max(1.0);
        let n = 1.0 + k / cwnd_f;
        let delta = xf.rttvar_s().max(xs.rttvar_s());
        let margin = if self.waiting { 1.0 + self.beta } else { 1.0 };
        if n * rtt_f < margin * (rtt_s + delta) {
            if k / cwnd_s * rtt_s >= 2.0 * rtt_f + delta {
                self.waiting = true;
                return Pick::Wait;
            }
            Pick::New { sf: s, skip: 0 }
        } else {
            self.waiting = false;
            Pick::New { sf: s, skip: 0 }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mptcp::sched::harness::*;

    #[test]
    fn waits_for_the_fast_subflow_when_it_finishes_first() {
        let mut s = Ecf::new(&EcfParams::default());
        // Fast: 10 ms, cwnd 10 full; slow: 100 ms, cwnd 4 free; rttvar 2.5 / 25 ms, δ = 25 ms.
        let v = [view(10, 10, 10), view(100, 4, 0)];
        // k = 20: n = 3, 30 ms < 125 ms; k / cwnd_s · RTT_s = 500 ms >= 45 ms: wait.
        assert_eq!(s.next(&ctx(&v, 20_000)), Pick::Wait);
        assert!(s.waiting);
        // k = 200: n = 21, 210 ms > 1.25 · 125 ms: use the slow subflow, stop waiting.
        assert_eq!(s.next(&ctx(&v, 200_000)), Pick::New { sf: 1, skip: 0 });
        assert!(!s.waiting);
    }

    #[test]
    fn waiting_adds_the_beta_hysteresis() {
        let mut s = Ecf::new(&EcfParams::default());
        let v = [view(10, 10, 10), view(100, 4, 0)];
        // k = 130: n = 14, 140 ms: above 125 ms (not waiting) but below 156.25 ms (waiting).
        assert_eq!(s.next(&ctx(&v, 130_000)), Pick::New { sf: 1, skip: 0 });
        s.waiting = true;
        assert_eq!(s.next(&ctx(&v, 130_000)), Pick::Wait);
    }

    #[test]
    fn the_slow_subflow_helps_with_a_tiny_backlog_it_can_finish() {
        let mut s = Ecf::new(&EcfParams::default());
        // k = 1 on a 10-segment slow window: 0.1 · 100 ms = 10 ms < 2 · 10 + 25 ms.
        let v = [view(10, 10, 10), view(100, 10, 0)];
        assert_eq!(s.next(&ctx(&v, 1000)), Pick::New { sf: 1, skip: 0 });
    }
}
