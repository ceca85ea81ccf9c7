//! Packet schedulers: which subflow carries the next segment (Linux `mptcp_sched_ops`
//! `get_send`). One file per algorithm, built from [`SchedKind`].

pub mod minrtt;

use crate::config::SchedKind;
use crate::units::Dur;

/// What a scheduler may read about one subflow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SchedView {
    /// Established (data may be sent on it).
    pub usable: bool,
    /// Room in the congestion window for a full segment.
    pub has_room: bool,
    pub backup: bool,
    pub srtt: Option<Dur>,
    pub cwnd: u64,
    pub in_flight: u64,
}

pub trait Scheduler {
    fn name(&self) -> &'static str;
    /// The subflow for the next segment, or None to wait; `exclude` is a subflow the segment
    /// must not go to (a reinjection's original subflow).
    fn pick(&mut self, subflows: &[SchedView], exclude: Option<usize>) -> Option<usize>;
}

pub fn build(kind: SchedKind) -> Box<dyn Scheduler> {
    match kind {
        SchedKind::Minrtt => Box::new(minrtt::MinRtt),
    }
}
