//! The `linux` stack profile's buffer mechanisms against the kernel's arithmetic: the
//! window a fixed `SO_RCVBUF` allows (doubling, `scaling_ratio`, window scale), receive-buffer
//! auto-tuning reaching the bandwidth-delay product, and the MPTCP-level retransmission
//! timer moving data stuck on a dead path to a live one.

mod common;
use common::*;

/// A single TCP flow on a 100 Mbit/s, 50 ms RTT path (BDP 625 KB) whose receive buffer
/// binds: goodput is the window the buffer allows per round trip.
fn tcp_with_rcvbuf(rcvbuf: &str) -> (f64, f64) {
    let out = sim(&format!(
        r#"
        duration = "20s"
        [[paths]]
        name = "p"
        rate = "100Mbit"
        delay = "25ms"
        queue = "1000 packets"
        [[connections]]
        name = "tcp"
        kind = "tcp"
        stack = "linux"
        paths = ["p"]
        rcvbuf = {rcvbuf}
        app = {{ kind = "bulk" }}
        [output]
        warmup = "5s"
    "#
    ));
    let rtt = out.summary.subflow("tcp", "p").min_rtt_s.unwrap();
    (out.summary.connection("tcp").goodput_bps, rtt)
}

/// `SO_RCVBUF` = 128 KiB: `sk_rcvbuf` = 262144 B; the scale chosen at the SYN from the
/// window at the default ratio (131072 B, ilog2 17 − 15 = 2) allows up to 262140 B; the
/// data's ratio is 1448 · 256 / 2304 = 160, so the window is 262144 · 160 / 256 = 163840 B.
/// `SO_RCVBUF` = 64000 B: scale ilog2(64000) − 15 = 0, so the window stops at 65535 B even
/// though the memory (128000 · 160 / 256 = 80000 B) would allow more. The window bounds
/// goodput to window / RTT; the flow, never congested (the path carries 625 KB per RTT),
/// stays within 10 % below it (it loses a little to the delayed ACKs of the last segments
/// of each window).
#[test]
fn a_fixed_receive_buffer_allows_what_linux_advertises() {
    for (rcvbuf, window) in [("\"128KiB\"", 163_840.0), ("\"64000B\"", 65_535.0)] {
        let (goodput, rtt) = tcp_with_rcvbuf(rcvbuf);
        let bound = window * 8.0 / rtt;
        let r = goodput / bound;
        assert!((0.9..=1.0).contains(&r), "rcvbuf {rcvbuf}: goodput {goodput:.0} vs window/RTT {bound:.0} ({r:.3})");
    }
}

/// Auto-tuning (DRS): from `tcp_rmem[1]` = 128 KiB (a 80 KB window) the buffer grows to hold
/// twice what a round trip delivered, so a bulk flow fills a path whose BDP (625 KB) is eight
/// times the initial window: ≥ 90 % of the payload capacity. With `tcp_rmem[2]` = 256 KiB the
/// buffer stops at 262144 B, a window of 262144 · 160 / 256 = 163840 B, and goodput is at
/// most that per RTT (within 10 %).
#[test]
fn receive_buffer_auto_tuning_reaches_the_bdp_and_stops_at_its_maximum() {
    let (goodput, _) = tcp_with_rcvbuf("{ min = \"4KiB\", default = \"128KiB\", max = \"32MiB\" }");
    let cap = payload_capacity(100e6, 1448.0);
    assert!(goodput >= 0.9 * cap, "auto-tuned goodput {goodput:.0} vs capacity {cap:.0}");
    let (goodput, rtt) = tcp_with_rcvbuf("{ min = \"4KiB\", default = \"128KiB\", max = \"256KiB\" }");
    let bound = 163_840.0 * 8.0 / rtt;
    let r = goodput / bound;
    assert!((0.9..=1.0).contains(&r), "capped goodput {goodput:.0} vs window/RTT {bound:.0} ({r:.3})");
}

/// The MPTCP-level retransmission timer: the slow path loses everything during [4 s, 6 s]
/// (99 %, the most the schema allows), so DATA_ACK stops at the first byte it lost and the
/// fast subflow, blocked by the window behind that hole, empties. The slow subflow's own
/// retransmissions go into the dead path, with its RTO doubling (about 0.3, 0.6, 1.2 s), so
/// the timer, whose interval is the longest time a subflow timer still has to run, fires
/// within the outage at least once; each time the oldest unacknowledged fragment goes again
/// on the idle fast subflow. So data is reinjected and in-order delivery moves during the
/// outage, though the slow subflow itself delivers nothing.
#[test]
fn the_mptcp_timer_moves_data_stuck_behind_an_outage() {
    let run = |timer: bool| {
        sim(&format!(
            r#"
            duration = "8s"
            [[paths]]
            name = "fast"
            rate = "20Mbit"
            delay = "10ms"
            queue = "100 packets"
            [[paths]]
            name = "slow"
            rate = "5Mbit"
            delay = "40ms"
            queue = "100 packets"
            schedule = [{{ at = "4s", loss = "99%" }}, {{ at = "6s", loss = "0%" }}]
            [[connections]]
            name = "mp"
            kind = "mptcp"
            stack = "linux"
            paths = ["fast", "slow"]
            mptcp_retransmit = {timer}
            app = {{ kind = "bulk" }}
            [output]
            timeseries = "10ms"
        "#
        ))
    };
    let during = |out: &mptcplab_core::RunOutput| {
        let d = out.timeseries.points("mp", "delivered_bytes");
        at(&d, 5.99) - at(&d, 4.5)
    };
    let on = run(true);
    assert!(on.summary.connection("mp").reinjected_bytes > 0, "the timer resent nothing");
    assert!(during(&on) > 0.0, "nothing delivered during the outage with the timer");
}

/// HyStart as the kernel runs it: one path of 20 Mbit/s, 20 ms RTT and a 1-BDP queue (34
/// packets), cubic. Linux 6.18 on the kernel backend leaves slow start by the ACK train at
/// cwnd = 38 segments (`TcpExtTCPHystartTrainCwnd`, 3 of 3 runs). The `linux` profile's
/// receiver acknowledges the first 16 segments one by one (quick-ACK mode), which gives the
/// flights the ACK spacing the kernel's train detection sees; the exit window must be the
/// kernel's to within one segment. (Without quick-ACK mode the simulator leaves at 55–60.)
#[test]
fn hystart_leaves_slow_start_at_the_kernels_window() {
    let out = sim(r#"
        duration = "1s"
        [[paths]]
        name = "p"
        rate = "20Mbit"
        delay = "10ms"
        queue = "34 packets"
        [[connections]]
        name = "tcp"
        kind = "tcp"
        stack = "linux"
        paths = ["p"]
        app = { kind = "bulk" }
        [output]
        timeseries = "1ms"
    "#);
    let ss = out.timeseries.points("tcp/p", "ssthresh_bytes");
    let exit = ss.iter().find(|p| p.1 < 1e12).expect("slow start ended").1 / 1448.0;
    assert!((exit - 38.0).abs() <= 1.0, "left slow start at {exit:.1} segments (kernel: 38)");
}

/// The receive side's time series follow Linux's buffer rules. MPTCP over 50 Mbit/s 10 ms +
/// 10 Mbit/s 100 ms with `tcp_rmem` = 4 KB 128 KB 1 MB (`rcvbuf-auto-max-1mb` of the
/// validation grid):
/// - the connection's buffer (`sk_rcvbuf` of the MPTCP socket) starts at `tcp_rmem[1]`, never
///   shrinks and never passes `tcp_rmem[2]`;
/// - the data-level window it advertises is at most the payload its buffer holds,
///   `sk_rcvbuf` · ratio / 256 with ratio ≤ 1448 · 256 / 2304 = 160 (`tcp_win_from_space`);
/// - each subflow's `rcv_ssthresh` is at most the window its own buffer allows
///   (`tcp_grow_window` stops at `window_clamp` = `tcp_win_from_space(sk_rcvbuf)`);
/// - the cellular subflow joins one handshake later, after the connection's buffer reached its
///   maximum, so it never follows it (`mptcp_rcv_space_adjust` makes the subflows follow only
///   when the connection's buffer grows): its own buffer stays below the connection's.
#[test]
fn the_receive_side_series_follow_linuxs_buffer_rules() {
    let out = sim(r#"
        duration = "3s"
        [[paths]]
        name = "wifi"
        rate = "50Mbit"
        delay = "10ms"
        queue = "84 packets"
        [[paths]]
        name = "cell"
        rate = "10Mbit"
        delay = "100ms"
        queue = "167 packets"
        [[connections]]
        name = "mp"
        kind = "mptcp"
        stack = "linux"
        paths = ["wifi", "cell"]
        app = { kind = "bulk" }
        rcvbuf = { min = "4KB", default = "128KB", max = "1MB" }
        [output]
        timeseries = "10ms"
    "#);
    let ts = &out.timeseries;
    let buf = ts.points("mp", "rcvbuf_bytes");
    assert_eq!(buf.first().map(|p| p.1), Some(128_000.0));
    assert!(buf.windows(2).all(|w| w[1].1 >= w[0].1), "the buffer never shrinks");
    assert_eq!(buf.last().map(|p| p.1), Some(1_000_000.0), "auto-tuning reaches tcp_rmem[2] here");
    let wnd = ts.points("mp", "rcv_wnd_bytes");
    assert!(wnd.iter().any(|p| p.1 > 0.0));
    for (p, b) in wnd.iter().zip(&buf) {
        assert!(p.1 <= b.1 * 160.0 / 256.0, "window {} at {} s over the buffer's payload {}", p.1, p.0, b.1);
    }
    for sf in ["mp/wifi", "mp/cell"] {
        let own = ts.points(sf, "rcvbuf_bytes");
        let ssth = ts.points(sf, "rcv_ssthresh_bytes");
        assert!(!own.is_empty() && own.len() == ssth.len(), "{sf}");
        for (b, s) in own.iter().zip(&ssth) {
            assert!(s.1.is_nan() || s.1 <= b.1 * 160.0 / 256.0, "{sf}: rcv_ssthresh {} over {} at {} s", s.1, b.1, b.0);
        }
        assert!(ts.points(sf, "rcv_wnd_bytes").iter().any(|p| p.1 > 0.0), "{sf}");
    }
    let cell = ts.points("mp/cell", "rcvbuf_bytes");
    assert!(cell.last().unwrap().1 < buf.last().unwrap().1, "the late subflow keeps a buffer of its own");
    assert!(cell.first().unwrap().1 == 128_000.0, "created with tcp_rmem[1]");
}

/// The server's first push is the client's first window. On the `linux` stack the client
/// offers its empty buffer's window (`tcp_rmem[1]` = 131072 B at the default ratio: 65536 B)
/// rounded down to its MSS in the handshake, 44 × 1460 = 64240 B, and its third ACK carries
/// that aligned up to the window scale's unit (1024 B): 64512 B, which the server takes as
/// its first window. The writer has two fresh 32 KB page fragments queued by then (65456 B),
/// so the first push hands out exactly 64512 B, as UML 7.3.4 and the 6.18.44 host did on
/// `download-2mb` (`--trace-kernel`: 64512 B at 30 ms). With exact windows (`window_rounding
/// = "exact"`) the window is 65536 B and both fragments fit.
#[test]
fn the_first_push_is_the_clients_first_window_rounded_as_linux() {
    use mptcplab_core::{run_with, RunOptions};
    for (rounding, first) in [("scaled", 64_512), ("exact", 65_456)] {
        let sc = scenario(&format!(
            r#"
            duration = "1s"
            [[paths]]
            name = "wifi"
            rate = "20Mbit"
            delay = "10ms"
            [[connections]]
            name = "mp"
            kind = "mptcp"
            stack = "linux"
            window_rounding = "{rounding}"
            paths = ["wifi"]
            app = {{ kind = "download", size = "2000000B" }}
            "#
        ));
        let out = run_with(&sc, &RunOptions { sched_log: true, ..RunOptions::default() }).expect("runs");
        let t0 = out.handoffs[0].time_s;
        let pushed: u64 = out.handoffs.iter().take_while(|h| h.time_s == t0).map(|h| h.bytes).sum();
        assert_eq!(pushed, first, "window_rounding = {rounding}");
    }
}
