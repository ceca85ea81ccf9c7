//! A path whose queue sits in the sending host (`queue_at = "host"`, a `tc` rate limit on
//! the sender's own interface) with TCP small queues, against the rule's arithmetic
//! (`tcp_small_queue_check`, [`mptcplab_core::tcp::tsq`]), and the `linux-v0.9x` stack's
//! receive-buffer optimisation deciding which subflow it penalises.

mod common;
use common::*;

/// One Reno flow on a 100 Mbit/s path with 1 ms of propagation each way and a 1000-packet
/// queue. In a router the queue fills until it drops (Reno probes until a loss). In the
/// sending host, TCP small queues let the flow hold at most
/// `min(max(2 · truesize, pacing_rate / 1024), 262 144 B)` there, and one more packet (the
/// check comes before each transmission): the queue never holds more than 262 144 B plus one
/// 1500-byte packet, so it never drops, and the RTT stays within that backlog's 21 ms of the
/// base RTT. The link stays busy: what the host holds always covers the next transmission,
/// so goodput reaches 95 % of the payload capacity.
#[test]
fn tcp_small_queues_keep_a_host_queue_short_without_starving_the_link() {
    let run = |at: &str| {
        sim(&format!(
            r#"
            duration = "20s"
            [[paths]]
            name = "p"
            rate = "100Mbit"
            delay = "1ms"
            queue = "1000 packets"
            queue_at = "{at}"
            [[connections]]
            name = "tcp"
            kind = "tcp"
            paths = ["p"]
            cc = "reno"
            app = {{ kind = "bulk" }}
            [output]
            warmup = "2s"
            "#
        ))
    };
    let host = run("host");
    let router = run("router");
    let l = host.summary.link("p.down");
    assert!(l.max_queue_bytes <= 262_144 + 1500, "host queue held {} B", l.max_queue_bytes);
    assert_eq!(l.queue_drops, 0);
    let cap = payload_capacity(100e6, 1448.0);
    let gp = host.summary.connection("tcp").goodput_bps;
    assert!(gp >= 0.95 * cap, "goodput {gp} of {cap}");
    let srtt = host.summary.subflow("tcp", "p").mean_rtt_s.unwrap();
    assert!(srtt <= 0.002 + 0.021 + 0.001, "mean RTT {srtt} s");
    // The same queue in a router fills to its limit and drops.
    let r = router.summary.link("p.down");
    assert!(r.queue_drops > 0 && r.max_queue_packets >= 999, "router queue {:?}", (r.queue_drops, r.max_queue_packets));
}

/// A scenario with no host queue is unchanged by the TSQ rule (it only counts packets that
/// wait in the sender's host).
#[test]
fn tsq_does_nothing_without_a_host_queue() {
    let run = |tsq: &str| {
        sim(&format!(
            r#"
            duration = "5s"
            [[paths]]
            name = "p"
            rate = "100Mbit"
            delay = "1ms"
            [[connections]]
            name = "tcp"
            kind = "tcp"
            paths = ["p"]
            app = {{ kind = "bulk" }}
            tcp = {{ tsq = "{tsq}" }}
            "#
        ))
    };
    let (a, b) = (run("linux_4"), run("off"));
    assert_eq!(a.summary.events, b.summary.events);
    assert_eq!(a.summary.connection("tcp").delivered_bytes, b.summary.connection("tcp").delivered_bytes);
}

/// `mptcp_rcv_buf_optimization` (v0.9x): a subflow with room and nothing it may send
/// penalises the subflow holding the oldest unacknowledged data only if that one has the
/// larger SRTT. A 5 Mbit/s path with 10 ms of propagation and a 10-packet queue (RTT at most
/// 10 + 10 × 2.4 = 34 ms) beside a 20 Mbit/s one with 200 ms (RTT at least 200 ms), and a
/// 256 KiB receive buffer: the fast subflow's window holds at most about 20 segments
/// (30 KB), so the slow subflow carries the rest of the window and holds the oldest data.
/// Whenever the window is full the fast subflow calls with penalisation and halves the slow
/// subflow's window (at most once per fast SRTT); the slow subflow, when it calls, has the
/// larger SRTT and penalises nobody. So the slow subflow is penalised many times in 10 s,
/// the fast one never.
#[test]
fn only_the_subflow_with_the_larger_srtt_is_penalised() {
    let out = sim(r#"
        duration = "10s"
        [[paths]]
        name = "fast"
        rate = "5Mbit"
        delay = "5ms"
        queue = "10 packets"
        [[paths]]
        name = "slow"
        rate = "20Mbit"
        delay = "100ms"
        queue = "100 packets"
        [[connections]]
        name = "mp"
        kind = "mptcp"
        stack = "linux-v0.9x"
        paths = ["fast", "slow"]
        cc = "lia"
        rcvbuf = "256KiB"
        app = { kind = "bulk" }
        "#);
    let fast = out.summary.subflow("mp", "fast");
    let slow = out.summary.subflow("mp", "slow");
    assert_eq!(fast.penalisations, 0);
    assert!(slow.penalisations >= 10, "slow subflow penalised {} times", slow.penalisations);
}
