//! The default scheduler of upstream Linux MPTCP (`net/mptcp/protocol.c`,
//! `mptcp_subflow_get_send`, kernels 5.19–6.x; the in-kernel "default" of the BPF
//! scheduler framework).
//!
//! Among active subflows with send space, the one with the shortest linger time — the
//! bytes it has queued divided by its pacing rate, i.e. the time to flush its queue — is
//! picked, and then kept for a burst of up to 64 KB (`MPTCP_SEND_BURST_SIZE`, further capped
//! by the peer's window) before choosing again. Backup subflows are used only when no
//! regular subflow is active. The pacing rate is Linux's `tcp_update_pacing_rate`:
//! cwnd · MSS / SRTT times 2 while cwnd < ssthresh / 2 (`tcp_pacing_ss_ratio` = 200 %) and
//! 1.2 otherwise (`tcp_pacing_ca_ratio` = 120 %).
//!
//! Deviations from the reference:
//! - "send space" is congestion-window room (the engine keeps no per-subflow send queue,
//!   so a subflow's queued bytes are its bytes in flight);
//! - the pacing rate is the instantaneous one (kernels >= 6.2 average it over the bytes
//!   queued, `avg_pacing_rate`); without an RTT sample the SRTT is taken as 1 s;
//! - the burst ends early when its subflow runs out of window room, as the kernel's
//!   `sk_stream_memory_free` test ends it when the subflow's send buffer is full.

use super::{Pick, SchedCtx, SchedView, Scheduler};
use crate::config::LinuxDefaultParams;
use crate::units::Dsn;

pub struct LinuxDefault {
    burst: u64,
    ss_ratio: f64,
    ca_ratio: f64,
    /// Subflow of the current burst and the bytes it may still send.
    last: Option<usize>,
    burst_left: u64,
}

impl LinuxDefault {
    pub fn new(p: &LinuxDefaultParams) -> LinuxDefault {
        LinuxDefault {
            burst: p.burst.0,
            ss_ratio: p.pacing_ss_ratio,
            ca_ratio: p.pacing_ca_ratio,
            last: None,
            burst_left: 0,
        }
    }

    /// Time to flush the subflow's queued bytes at its pacing rate (seconds).
    pub fn linger_time(&self, v: &SchedView) -> f64 {
        let srtt = v.srtt_s().unwrap_or(1.0).max(1e-9);
        let ratio = if v.cwnd < v.ssthresh / 2 { self.ss_ratio } else { self.ca_ratio };
        let pace = ratio * v.cwnd.max(1) as f64 / srtt;
        v.in_flight as f64 / pace
    }
}

impl Scheduler for LinuxDefault {
    fn name(&self) -> &'static str {
        "default"
    }

    fn next(&mut self, ctx: &SchedCtx) -> Pick {
        if let Some(l) = self.last.filter(|_| self.burst_left > 0) {
            if ctx.candidates().any(|i| i == l) {
                return Pick::New { sf: l, skip: 0 };
            }
        }
        let best = ctx
            .candidates()
            .map(|i| (self.linger_time(&ctx.subflows[i]), i))
            .min_by(|a, b| a.partial_cmp(b).expect("no NaN"));
        match best {
            Some((_, sf)) => {
                self.last = Some(sf);
                self.burst_left = self.burst.min(ctx.rwnd_room).max(1);
                Pick::New { sf, skip: 0 }
            }
            None => Pick::Wait,
        }
    }

    fn on_sent(&mut self, sf: usize, _dsn: Dsn, len: u64) {
        if Some(sf) == self.last {
            self.burst_left = self.burst_left.saturating_sub(len);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mptcp::sched::harness::*;

    fn sched() -> LinuxDefault {
        LinuxDefault::new(&LinuxDefaultParams::default())
    }

    #[test]
    fn picks_the_shortest_time_to_flush_not_the_lowest_rtt() {
        let s = sched();
        // Slow start (pacing ×2): 10 ms, cwnd 10, 9 in flight: 9 kB at 2 MB/s = 4.5 ms;
        // 100 ms, cwnd 100, 10 in flight: 10 kB at 2 MB/s = 5 ms. In congestion avoidance
        // (×1.2) the fast subflow's 9 kB take 7.5 ms.
        let fast = view(10, 10, 9);
        let slow = view(100, 100, 10);
        assert!((s.linger_time(&fast) - 0.0045).abs() < 1e-12);
        assert!((s.linger_time(&slow) - 0.005).abs() < 1e-12);
        let mut s = sched();
        assert_eq!(s.next(&ctx(&[slow, fast], 100_000)), Pick::New { sf: 1, skip: 0 });
        let mut ca = fast;
        ca.ssthresh = 10_000;
        let mut s = sched();
        assert_eq!(s.next(&ctx(&[slow, ca], 100_000)), Pick::New { sf: 0, skip: 0 });
    }

    #[test]
    fn a_burst_of_64_kb_stays_on_the_chosen_subflow() {
        let mut s = sched();
        let idle_fast = view(10, 100, 0);
        let idle_slow = view(100, 100, 0);
        assert_eq!(s.next(&ctx(&[idle_slow, idle_fast], 1_000_000)), Pick::New { sf: 0, skip: 0 });
        for _ in 0..65 {
            s.on_sent(0, Dsn(0), 1000);
            // The slow subflow now has more queued but the burst continues.
            let busy = view(100, 100, 50);
            assert_eq!(s.next(&ctx(&[busy, idle_fast], 1_000_000)), Pick::New { sf: 0, skip: 0 });
        }
        s.on_sent(0, Dsn(0), 1000);
        let busy = view(100, 100, 66);
        assert_eq!(s.next(&ctx(&[busy, idle_fast], 1_000_000)), Pick::New { sf: 1, skip: 0 });
    }
}
