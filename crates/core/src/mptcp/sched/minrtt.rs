//! minRTT, the default scheduler of the out-of-tree Linux MPTCP (`mptcp_sched.c`, v0.88–0.92)
//! and of upstream Linux (`mptcp_subflow_get_send`, in spirit).
//!
//! Among usable subflows with room in their congestion window, the one with the lowest
//! smoothed RTT; backup subflows only when no regular subflow is usable at all.
//! Deviations: subflows without an RTT estimate rank last; ties go to the lowest index.

use super::{SchedView, Scheduler};

pub struct MinRtt;

impl Scheduler for MinRtt {
    fn name(&self) -> &'static str {
        "minrtt"
    }

    fn pick(&mut self, subflows: &[SchedView], exclude: Option<usize>) -> Option<usize> {
        let regular_usable = subflows.iter().any(|s| s.usable && !s.backup);
        subflows
            .iter()
            .enumerate()
            .filter(|(i, s)| s.usable && s.has_room && Some(*i) != exclude && s.backup != regular_usable)
            .min_by_key(|(i, s)| (s.srtt.map_or(u64::MAX, |d| d.0), *i))
            .map(|(i, _)| i)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::Dur;

    fn v(ms: u64, room: bool, backup: bool) -> SchedView {
        SchedView { usable: true, has_room: room, backup, srtt: Some(Dur::from_ms(ms)), cwnd: 0, in_flight: 0 }
    }

    #[test]
    fn picks_the_lowest_rtt_with_room() {
        let mut s = MinRtt;
        assert_eq!(s.pick(&[v(100, true, false), v(10, true, false)], None), Some(1));
        assert_eq!(s.pick(&[v(100, true, false), v(10, false, false)], None), Some(0));
        assert_eq!(s.pick(&[v(100, true, false), v(10, true, false)], Some(1)), Some(0));
    }

    #[test]
    fn backups_only_when_no_regular_subflow_is_usable() {
        let mut s = MinRtt;
        // The regular subflow is full: wait rather than use the backup.
        assert_eq!(s.pick(&[v(100, false, false), v(10, true, true)], None), None);
        let mut down = v(100, true, false);
        down.usable = false;
        assert_eq!(s.pick(&[down, v(10, true, true)], None), Some(1));
    }
}
