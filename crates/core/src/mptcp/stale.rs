//! Stale subflows (upstream Linux, `net/mptcp/pm.c`, `protocol.c`): a subflow that keeps
//! data outstanding while no ACK arrives on it is set aside, and the connection's
//! unacknowledged data goes out again on the others.
//!
//! When the MPTCP-level retransmission timer fires, Linux looks for a subflow to retransmit
//! on (`mptcp_subflow_get_retrans`). Each active subflow still holding data at TCP level
//! (`!tcp_rtx_and_write_queues_empty`) is checked (`mptcp_pm_subflow_chk_stale`): the first
//! such period records the subflow's last-ACK time (`rcv_tstamp`) and counts 1; a later one
//! that finds the same time counts one more, one that finds a newer time resets the count and
//! makes the subflow active again. Once the count exceeds `net.mptcp.stale_loss_cnt`
//! ([`STALE_LOSS_CNT`], default 4) and another active subflow's count is below
//! `max(stale_loss_cnt − 1, 1)`, the subflow is marked stale and the whole MPTCP-level
//! retransmission queue, every byte written and not DATA_ACKed, is sent again
//! (`__mptcp_retransmit_pending_data`, then `__mptcp_push_pending`). A stale subflow is not
//! active (`mptcp_subflow_active`): schedulers skip it, until an ACK arrives on it (its
//! `rcv_tstamp` moves). A backup subflow is picked for a retransmission only when no regular
//! one is idle and every busy subflow has gone more than one period without progress.
//!
//! Deviations: Linux rewinds the connection's `snd_nxt` and schedules the whole queue again
//! as new data; here it becomes one reinjection entry that the scheduler's
//! [`pick_reinject`](crate::mptcp::sched::Scheduler::pick_reinject) places, which skips the
//! stale subflow as Linux's scheduler does. Linux's `rcv_tstamp` has jiffy resolution; here it
//! is exact, so two ACKs in the same jiffy differ.

use crate::mptcp::connection::Endpoint;
use crate::tcp::subflow::Subflow;

/// Linux `net.mptcp.stale_loss_cnt` (default 4): retransmission periods without progress
/// after which a subflow may be marked stale.
pub const STALE_LOSS_CNT: u8 = 4;

/// Linux `mptcp_subflow_active`: established, and not stale unless an ACK arrived since it
/// was marked (which makes it active again).
pub fn active(s: &mut Subflow) -> bool {
    if s.stale.on {
        if s.stale.rcv == s.rcv_tstamp {
            return false;
        }
        s.stale.on = false;
    }
    s.established()
}

impl Endpoint {
    /// Subflows in the order Linux walks its connection list: the initial subflow, then the
    /// joins in the order they were made (their indices).
    fn list_order(&self) -> std::ops::Range<usize> {
        0..self.subflows.len()
    }

    fn holds_data(&self, j: usize) -> bool {
        self.subflows[j].as_ref().is_some_and(|s| !s.sb.is_empty()) || !self.sfq[j].is_empty()
    }

    /// Linux `mptcp_subflow_get_retrans`: the first active regular subflow with nothing
    /// outstanding; else, if every busy subflow has gone more than one period without
    /// progress, the first idle backup. Busy subflows are checked for staleness on the way
    /// (which may mark one stale and queue the connection's unacknowledged data again).
    pub(crate) fn retrans_subflow(&mut self) -> Option<usize> {
        if !self.mptcp_rtx {
            return None;
        }
        let (mut pick, mut backup, mut min_stale) = (None, None, u32::MAX);
        for j in self.list_order() {
            if !self.subflows[j].as_mut().is_some_and(active) {
                continue;
            }
            if self.holds_data(j) {
                self.chk_stale(j);
                min_stale = min_stale.min(u32::from(self.subflows[j].as_ref().expect("subflow").stale.count));
                continue;
            }
            if self.subflows[j].as_ref().expect("subflow").backup {
                backup.get_or_insert(j);
            } else {
                pick.get_or_insert(j);
            }
        }
        pick.or(if min_stale > 1 { backup } else { None })
    }

    /// Linux `mptcp_pm_subflow_chk_stale`: one more retransmission period of subflow `j`
    /// holding data.
    fn chk_stale(&mut self, j: usize) {
        let s = self.subflows[j].as_mut().expect("subflow");
        if s.stale.count == 0 {
            s.stale.rcv = s.rcv_tstamp;
            s.stale.count = 1;
        } else if s.stale.rcv == s.rcv_tstamp {
            s.stale.count = s.stale.count.saturating_add(1);
            self.subflows_chk_stale(j);
        } else {
            s.stale.count = 0;
            s.stale.on = false;
        }
    }

    /// Linux `mptcp_pm_subflows_chk_stale`: marks `j` stale if it went more than
    /// [`STALE_LOSS_CNT`] periods without progress and another active subflow is making
    /// progress; then the connection's unacknowledged data is queued again.
    fn subflows_chk_stale(&mut self, j: usize) {
        let s = self.subflows[j].as_ref().expect("subflow");
        if s.stale.on || STALE_LOSS_CNT == 0 || s.stale.count <= STALE_LOSS_CNT {
            return;
        }
        let active_max = STALE_LOSS_CNT.saturating_sub(1).max(1);
        for it in self.list_order() {
            if it == j {
                continue;
            }
            let alive = self.subflows[it].as_mut().is_some_and(|o| active(o) && o.stale.count < active_max);
            if !alive {
                continue;
            }
            if self.holds_data(j) {
                let s = self.subflows[j].as_mut().expect("subflow");
                s.stale.on = true;
                s.stats.stale += 1;
                self.retransmit_pending_data(j);
            }
            return;
        }
    }

    /// Linux `__mptcp_retransmit_pending_data`: everything written and not DATA_ACKed goes
    /// out again (see the module's deviations).
    fn retransmit_pending_data(&mut self, from: usize) {
        let (una, nxt) = (self.snd.data_una, self.snd.snd_nxt);
        if nxt <= una {
            return;
        }
        self.snd.reinject.clear();
        self.snd.reinject.push_back((una, nxt.dist(una), from as u8));
    }
}

#[cfg(test)]
mod tests {
    use crate::mptcp::testkit::{run, sf, Harness, Sent};
    use crate::units::{Dsn, Dur, Time};

    /// Subflow 1 (100 ms) holds DSN [0, 3 S) and more, and nothing it sends arrives (a path
    /// that died); subflow 0 (10 ms) keeps sending, and the peer acknowledges everything it
    /// sent 1 ms before each firing of the MPTCP timer, the DATA_ACK held at 0 by the hole.
    /// The timer's interval is set by each push with data to hand out: the longest time a
    /// subflow not being counted stale (`stale_count` 0) still has until its pending timer, in
    /// jiffies (`mptcp_timeout_from_subflow`), else `TCP_RTO_MIN`; a firing restarts it with
    /// the interval set last (`mptcp_reset_rtx_timer`). The push at 0 sees subflow 1's RTO due
    /// at 300 ms (75 jiffies): the timer fires at 300 ms. The push at 299 ms sees it due in one
    /// jiffy: the 1st firing (subflow 1's count 1) restarts the timer for 4 ms. From then on
    /// subflow 1 is being counted, so its RTO no longer sets the interval, and subflow 0 has
    /// nothing pending when its ACK makes the push: `TCP_RTO_MIN`, 200 ms. Firings at 300,
    /// 304, 504, 704 and 904 ms; subflow 1's own RTO retransmits DSN 0 at 300 and 900 ms (its
    /// RTO doubled, RFC 6298 (5.5)). At the 5th firing its count exceeds `stale_loss_cnt` = 4
    /// while subflow 0's is below 3: subflow 1 is marked stale, schedulers stop seeing it, and
    /// everything sent and not DATA_ACKed, [0, snd_nxt), is queued to go again
    /// (`__mptcp_retransmit_pending_data`), ahead of new data on the next push subflow 0's ACK
    /// makes.
    #[test]
    fn a_subflow_without_acks_for_five_periods_is_set_aside_and_its_data_resent() {
        let mut h = Harness::new("scheduler = \"minrtt\"\nmptcp_retransmit = true", &[sf(10, 4), sf(100, 10)]);
        let s = h.smss;
        h.in_flight(1, 3);
        h.push();
        for (k, at_ms) in [(1u32, 300), (2, 304), (3, 504), (4, 704), (5, 904)] {
            let t = Time::ZERO + Dur::from_ms(at_ms);
            assert_eq!(h.ep.rtx_at, Some(t), "firing {k}");
            h.now = Time(t.0 - Dur::from_ms(1).0);
            let acked = h.ep.subflow(0).expect("subflow 0").snd_nxt.0;
            h.ack(0, acked, 0, 1 << 22);
            let rto = if k == 1 || k == 5 { vec![Sent { sf: 1, dsn: 0, len: s }] } else { vec![] };
            assert_eq!(h.fire(t), rto, "firing {k}: subflow 1's RTO at 300 and 900 ms only");
            let s1 = h.ep.subflow(1).expect("subflow 1");
            assert_eq!((s1.stale.count, s1.stale.on), (k as u8, k == 5), "firing {k}");
            assert_eq!(h.ep.snd.reinject.is_empty(), k < 5, "firing {k}");
        }
        let nxt = h.ep.snd.snd_nxt;
        assert_eq!(h.ep.snd.reinject.front(), Some(&(Dsn(0), nxt.0, 1)));
        assert_eq!(h.ep.subflow(1).map(|s| s.stats.stale), Some(1));
        assert!(!h.ep.views[1].usable, "the schedulers skip a stale subflow");
        // Subflow 0's next ACK opens its window: the resent data goes first, from DSN 0.
        h.now += Dur::from_ms(10);
        let acked = h.ep.subflow(0).expect("subflow 0").snd_nxt.0;
        let sent = h.ack(0, acked, 0, 1 << 22);
        assert!(sent.len() >= 3, "{sent:?}");
        assert_eq!(sent[..3], run(0, 0, 3, s)[..]);
    }
}
