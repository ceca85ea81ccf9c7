//! The default scheduler of upstream Linux MPTCP (`net/mptcp/protocol.c`,
//! `mptcp_subflow_get_send` and `__mptcp_push_pending`, kernels 6.7–6.18; the in-kernel
//! "default" of the BPF scheduler framework).
//!
//! The kernel schedules data, not segments: it hands data to a subflow's write queue, and
//! each subflow sends its queue as its congestion window allows. The scheduler works on
//! subflow send queues here too ([`Scheduler::queues`], [`crate::mptcp::sfqueue`]). At
//! each push attempt (after an ACK, a timer or an application write) it picks, among the
//! active subflows (backups only when no regular subflow is active), the one with the
//! shortest linger time: the bytes it holds (queued and unacknowledged, `sk_wmem_queued`)
//! divided by its average pacing rate, the time to flush them. If that subflow's send
//! buffer is full nothing is assigned (no other subflow is tried: `sk_stream_memory_free`
//! of the chosen one). Otherwise it gets a burst of up to 65 428 B (`MPTCP_SEND_BURST_SIZE`:
//! 64 KiB less a TCP header, the option space, an IPv6 header and a fragment header),
//! capped by the room in the peer's data-level window (`mptcp_wnd_end` − `snd_nxt`; data
//! is assigned only inside that window, and assigned data counts as sent at the connection
//! level), ending early if its send buffer fills; then it picks again. The burst does not
//! outlive the push attempt.
//!
//! Pacing rate: Linux's `tcp_update_pacing_rate`, max(cwnd, `packets_out`) · MSS / SRTT times 2
//! while cwnd < ssthresh / 2 (`tcp_pacing_ss_ratio` = 200 %) and 1.2 otherwise
//! (`tcp_pacing_ca_ratio` = 120 %), or the rate a rate-based controller (BBR) sets. The average (`avg_pacing_rate`, kernels >= 6.2) starts at
//! the subflow's pacing rate and, each time the subflow is picked for a burst of b bytes
//! while holding w, becomes (avg · w + rate · b) / (w + b).
//!
//! Deviations from the reference:
//! - with payload accounting (the classic model) bytes are payload bytes, not skb truesize;
//!   with `buffer_accounting = "truesize"` (the `linux` profile) a subflow's held bytes are
//!   charged as Linux charges them, one skb head per autosized skb
//!   ([`crate::mptcp::sfqueue::wmem_truesize`]), for the linger time and the send-buffer test;
//! - with `data_frags = "segments"` data is assigned in segments (whole ones, but for the
//!   window's tail with `window_tail = "fill"`), so a burst ends within one segment of its
//!   size, where the kernel ends it after the data fragment (`dfrag`) that crosses it, as
//!   `data_frags = "pages"` (the `linux` profile) does ([`crate::mptcp::sendbuf::Frags`]);
//! - without an RTT sample the SRTT is taken as 1 s;
//! - reinjections after an RTO go, segment by segment, to a subflow with window room (the
//!   engine's reinjection path), not through the kernel's data-level retransmission timer.

use serde::{Deserialize, Serialize};

use super::{Pick, SchedCtx, SchedFactory, SchedView, Scheduler};
use crate::registry::AlgorithmParams;
use crate::units::ByteSize;
use crate::units::Dsn;

/// `MPTCP_SEND_BURST_SIZE`: 65 536 B less `sizeof(struct tcphdr)` (20),
/// `MAX_TCP_OPTION_SPACE` (40), `sizeof(struct ipv6hdr)` (40) and `sizeof(struct frag_hdr)` (8).
pub const SEND_BURST_SIZE: u64 = 65_536 - 20 - 40 - 40 - 8;

/// Parameters of the upstream Linux scheduler (`sched_params.default`; `net/mptcp/protocol.c`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LinuxDefaultParams {
    /// Bytes sent on a chosen subflow before choosing again (`MPTCP_SEND_BURST_SIZE`, >= 1).
    pub burst: ByteSize,
    /// Pacing rate as a multiple of cwnd / SRTT in slow start (`tcp_pacing_ss_ratio` / 100)
    /// and in congestion avoidance (`tcp_pacing_ca_ratio` / 100); dimensionless, > 0.
    pub pacing_ss_ratio: f64,
    pub pacing_ca_ratio: f64,
}

impl Default for LinuxDefaultParams {
    fn default() -> Self {
        LinuxDefaultParams { burst: ByteSize(SEND_BURST_SIZE), pacing_ss_ratio: 2.0, pacing_ca_ratio: 1.2 }
    }
}

impl AlgorithmParams for LinuxDefaultParams {
    const NAME: &'static str = "default";
    const TABLE: bool = true;
    fn check(&self) -> Result<(), (&'static str, String)> {
        let positive = |v: f64| v > 0.0 && v.is_finite();
        if self.burst.0 == 0 {
            return Err(("burst", "must be >= 1 B".into()));
        }
        if !positive(self.pacing_ss_ratio) || !positive(self.pacing_ca_ratio) {
            return Err(("pacing_ss_ratio", "both pacing ratios must be > 0".into()));
        }
        Ok(())
    }
}

impl SchedFactory for LinuxDefaultParams {
    fn build(&self) -> Box<dyn Scheduler> {
        Box::new(LinuxDefault::new(self))
    }
}

pub struct LinuxDefault {
    burst: u64,
    ss_ratio: f64,
    ca_ratio: f64,
    /// Subflow of the current burst and the bytes it may still take.
    last: Option<usize>,
    burst_left: u64,
    /// Average pacing rate of each subflow (bytes/s; 0 = not set yet).
    avg_pace: Vec<f64>,
}

impl LinuxDefault {
    pub fn new(p: &LinuxDefaultParams) -> LinuxDefault {
        LinuxDefault {
            burst: p.burst.0,
            ss_ratio: p.pacing_ss_ratio,
            ca_ratio: p.pacing_ca_ratio,
            last: None,
            burst_left: 0,
            avg_pace: Vec::new(),
        }
    }

    /// The subflow's current pacing rate (bytes/s): its congestion controller's if it sets
    /// one (BBR's `sk_pacing_rate`; Linux then skips `tcp_update_pacing_rate`).
    pub fn pacing_rate(&self, v: &SchedView) -> f64 {
        v.linux_pacing_rate(self.ss_ratio, self.ca_ratio)
    }

    /// Time to flush the subflow's queued bytes at its average pacing rate (seconds).
    pub fn linger_time(&self, sf: usize, v: &SchedView) -> f64 {
        let avg = self.avg_pace.get(sf).copied().unwrap_or(0.0);
        let pace = if avg > 0.0 { avg } else { self.pacing_rate(v) };
        v.queued as f64 / pace
    }
}

impl Scheduler for LinuxDefault {
    fn name(&self) -> &'static str {
        LinuxDefaultParams::NAME
    }

    fn queues(&self) -> bool {
        true
    }

    fn new_round(&mut self) {
        self.last = None;
        self.burst_left = 0;
    }

    fn next(&mut self, ctx: &SchedCtx) -> Pick {
        if self.avg_pace.len() < ctx.subflows.len() {
            self.avg_pace.resize(ctx.subflows.len(), 0.0);
        }
        if let Some(l) = self.last.filter(|_| self.burst_left > 0) {
            let v = &ctx.subflows[l];
            if v.usable && v.queued < v.sndbuf {
                return Pick::New { sf: l, skip: 0 };
            }
        }
        self.last = None;
        for i in ctx.active() {
            if self.avg_pace[i] == 0.0 {
                self.avg_pace[i] = self.pacing_rate(&ctx.subflows[i]);
            }
        }
        let best = ctx
            .active()
            .map(|i| (self.linger_time(i, &ctx.subflows[i]), i))
            .min_by(|a, b| a.partial_cmp(b).expect("no NaN"));
        let Some((_, sf)) = best else { return Pick::Wait };
        let v = &ctx.subflows[sf];
        if v.queued >= v.sndbuf {
            return Pick::Wait;
        }
        let burst = self.burst.min(ctx.rwnd_room);
        if burst > 0 {
            let (w, b) = (v.queued as f64, burst as f64);
            self.avg_pace[sf] = (self.avg_pace[sf] * w + self.pacing_rate(v) * b) / (w + b);
        }
        self.last = Some(sf);
        self.burst_left = burst.max(1);
        Pick::New { sf, skip: 0 }
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
        // Slow start (pacing ×2): 10 ms, cwnd 10, 9 kB queued: 9 kB at 2 MB/s = 4.5 ms;
        // 100 ms, cwnd 100, 10 kB queued: 10 kB at 2 MB/s = 5 ms. In congestion avoidance
        // (×1.2) the fast subflow's 9 kB take 7.5 ms.
        let fast = view(10, 10, 9);
        let slow = view(100, 100, 10);
        assert!((s.linger_time(1, &fast) - 0.0045).abs() < 1e-12);
        assert!((s.linger_time(0, &slow) - 0.005).abs() < 1e-12);
        let mut s = sched();
        assert_eq!(s.next(&ctx(&[slow, fast], 100_000)), Pick::New { sf: 1, skip: 0 });
        let mut ca = fast;
        ca.ssthresh = 10_000;
        let mut s = sched();
        assert_eq!(s.next(&ctx(&[slow, ca], 100_000)), Pick::New { sf: 0, skip: 0 });
    }

    #[test]
    fn a_full_window_does_not_stop_a_subflow_from_taking_data_but_a_full_send_buffer_does() {
        // The fast subflow's window is full (10 of 10 segments in flight) and 20 kB more wait
        // in its queue: 30 kB at 2 MB/s = 15 ms, still shorter than the idle-window slow
        // subflow's 50 kB at 2 MB/s = 25 ms, so the fast one is picked.
        let mut fast = view(10, 10, 10);
        fast.queued = 30_000;
        let slow = view(100, 100, 50);
        let mut s = sched();
        assert_eq!(s.next(&ctx(&[slow, fast], 100_000)), Pick::New { sf: 1, skip: 0 });
        // With its send buffer full it is still the shortest to flush, so nothing is sent
        // (the kernel does not fall back to another subflow).
        fast.sndbuf = 30_000;
        let mut s = sched();
        assert_eq!(s.next(&ctx(&[slow, fast], 100_000)), Pick::Wait);
    }

    #[test]
    fn a_burst_of_64_kb_stays_on_the_chosen_subflow_within_a_push_attempt() {
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
        // A new push attempt chooses afresh.
        s.new_round();
        assert_eq!(s.next(&ctx(&[idle_slow, busy], 1_000_000)), Pick::New { sf: 0, skip: 0 });
    }

    #[test]
    fn the_average_pacing_rate_weighs_the_new_rate_by_the_burst() {
        // Picked idle at 2 MB/s (10 segments / 10 ms × 2): the average starts there. Later,
        // holding w = 64 kB with the rate doubled to 4 MB/s and a 64 kB burst: average
        // (2 · 64 + 4 · 64) / 128 = 3 MB/s, so 64 kB linger 21.3 ms instead of 16 ms.
        let mut s = sched();
        let v = view(10, 10, 0);
        assert_eq!(s.next(&ctx(&[v], 1_000_000)), Pick::New { sf: 0, skip: 0 });
        s.new_round();
        let mut v2 = view(10, 20, 0);
        v2.queued = 64_000;
        let views = [v2];
        let mut c = ctx(&views, 1_000_000);
        c.rwnd_room = 64_000;
        assert_eq!(s.next(&c), Pick::New { sf: 0, skip: 0 });
        assert!((s.avg_pace[0] - 3e6).abs() < 1e-6, "{}", s.avg_pace[0]);
        assert!((s.linger_time(0, &v2) - 64_000.0 / 3e6).abs() < 1e-12);
    }

    #[test]
    fn the_pacing_rate_counts_packets_out_not_the_pipe() {
        // In recovery: window 10 segments, 5 in the pipe, 40 sent and not cumulatively
        // acknowledged (SACKed ones included). Linux multiplies by max(cwnd, packets_out):
        // 1.2 × 40 000 B / 0.1 s = 480 kB/s (ssthresh 20 segments: congestion avoidance),
        // not 1.2 × 10 000 / 0.1 = 120 kB/s.
        let mut v = view(100, 10, 5);
        v.out = 40_000;
        v.ssthresh = 20_000;
        assert!((sched().pacing_rate(&v) - 480_000.0).abs() < 1e-6);
        v.out = 4_000;
        assert!((sched().pacing_rate(&v) - 120_000.0).abs() < 1e-6);
    }
}
