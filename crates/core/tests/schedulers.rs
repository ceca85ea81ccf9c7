//! Scenario tests of the packet schedulers: each mechanism against the effect its paper
//! reports, with numbers derived from the setup, plus a property test over all schedulers.
//! Where a paper's effect does not appear in the engine, the test asserts only what the
//! mechanism guarantees and the comment gives the measured values.

mod common;
use common::*;
use mptcplab_core::results::ConnResult;

/// A two-path MPTCP scenario: `(name, rate, one-way delay, queue)` per path.
fn two_paths(duration: &str, paths: [(&str, &str, &str, &str); 2], conn: &str, extra: &str) -> String {
    let mut t = format!("duration = \"{duration}\"\n");
    for (name, rate, delay, queue) in paths {
        t += &format!("[[paths]]\nname = \"{name}\"\nrate = \"{rate}\"\ndelay = \"{delay}\"\nqueue = \"{queue}\"\n");
    }
    let names: Vec<String> = paths.iter().map(|p| format!("\"{}\"", p.0)).collect();
    t += &format!("[[connections]]\nname = \"mp\"\nkind = \"mptcp\"\npaths = [{}]\n{conn}\n", names.join(", "));
    t + extra
}

fn show(label: &str, c: &ConnResult) {
    eprintln!(
        "{label:>28}: goodput {:.3} Mbit/s, rwnd-limited {:.2} s, ooo mean {:.1} ms p99 {:.1} ms, delayed {:.3}, max ooo {} B, dl {:?}",
        c.goodput_bps / 1e6,
        c.rwnd_limited_time_s,
        c.ooo_delay.mean_s * 1e3,
        c.ooo_delay.p99_s * 1e3,
        c.ooo_delay.delayed_fraction,
        c.max_rcv_ooo_bytes,
        c.download_time_s
    );
}

/// NSDI 2012 Fig. 4 (seed 003): WiFi 8 Mbit/s, 20 ms RTT, 80 ms of queue (80 ms × 8 Mbit/s =
/// 80 kB ≈ 53 packets of 1500 B) and 3G 2 Mbit/s, 150 ms RTT, 2 s of queue (500 kB ≈ 333
/// packets); receive buffers of 100 and 200 kB, below Σ bandwidth × RTT_max (10 Mbit/s × up
/// to 2.15 s of 3G RTT under load ≈ 2.7 MB). The 3G subflow's bloated queue holds the
/// window's oldest data and plain minRTT stalls; M1 and M1 + M2 must raise goodput (the
/// paper: from below TCP-over-WiFi to about it). Measured: 100 kB: plain 2.79, M1 5.59,
/// M1+M2 6.49 Mbit/s; 200 kB: 3.09, 3.47, 7.90 Mbit/s (TCP over WiFi alone, 100 kB: 7.67).
/// Asserted: M1 above plain, M1+M2 at least 1.5× plain, and below the summed payload capacity.
#[test]
fn m1_and_m2_raise_goodput_with_a_small_receive_buffer() {
    let cap = payload_capacity(8e6, 1420.0) + payload_capacity(2e6, 1420.0);
    for rcvbuf in ["100KB", "200KB"] {
        let run = |m1: bool, m2: bool| {
            let s = two_paths(
                "30s",
                [("wifi", "8Mbit", "10ms", "53 packets"), ("3g", "2Mbit", "75ms", "333 packets")],
                &format!(
                    "cc = \"lia\"\nrcvbuf = \"{rcvbuf}\"\napp = {{ kind = \"bulk\" }}\n\
                     [connections.sched_params.minrtt]\nopportunistic_retransmission = {m1}\npenalisation = {m2}\n"
                ),
                "[output]\nwarmup = \"5s\"\n",
            );
            sim(&s).summary.connection("mp").clone()
        };
        let plain = run(false, false);
        let m1 = run(true, false);
        let m12 = run(true, true);
        show(&format!("{rcvbuf} minRTT"), &plain);
        show(&format!("{rcvbuf} M1"), &m1);
        show(&format!("{rcvbuf} M1+M2"), &m12);
        assert!(m12.opportunistic_retransmissions > 0 && m12.penalisations > 0, "{m12:?}");
        assert!(m1.goodput_bps > plain.goodput_bps, "{rcvbuf}: M1 {} vs {}", m1.goodput_bps, plain.goodput_bps);
        assert!(
            m12.goodput_bps >= 1.5 * plain.goodput_bps,
            "{rcvbuf}: M1+M2 {} vs {}",
            m12.goodput_bps,
            plain.goodput_bps
        );
        assert!(m12.goodput_bps <= cap, "{rcvbuf}: {} above capacity {cap}", m12.goodput_bps);
    }
}

/// STMS (seed 002): 30 Mbit/s per path, 20 ms vs 200 ms RTT, a 30 kB (20 packet) queue on
/// the fast path, one slow-path BDP of queue (30 Mbit/s × 200 ms = 750 kB = 500 packets),
/// 0.01 % loss on the fast path, and 1 MB host buffers — below Σ bandwidth × RTT_max ≈
/// 60 Mbit/s × 0.4 s = 3 MB, the "limited buffer" case where the slides report ≈ 20 % more
/// throughput.
///
/// The mechanism: minRTT keeps putting the oldest unsent data on the slow subflow whenever
/// the fast one is full, and data stays in the send buffer until DATA_ACKed (RFC 8684
/// §3.3.2), so the slow path's in-order hole holds the buffers full while the fast path
/// idles (seed 000 §V-C's flow starvation); STMS sends the slow path data `gap` segments
/// ahead, to arrive when the fast path has delivered what lies before it, so the buffers
/// drain at the fast path's pace. Asserted, for both gap variants: less time limited by the
/// send or receive buffer than minRTT, more goodput than minRTT (the slides' claim; its size,
/// ≈ 20 % on their testbed, is not asserted), and goodput below the summed payload capacity
/// (2 × 30 Mbit/s × 1420 / 1500 = 56.8 Mbit/s). An earlier version asserted at least 1.15 ×
/// minRTT's goodput, fitted just under the calculation variant's measured gain.
/// Measured: minRTT 27.1 Mbit/s, send-buffer-limited 34.0 s and receive-window-limited 4.3 s
/// of 35 (the fast path carries 2.8 % of the data); gap adjustment 33.8 Mbit/s (+25 %;
/// 0.73 s and 0.39 s); gap calculation 31.5 Mbit/s (+16 %; 0.11 s and 0 s). Out-of-order
/// delay mean / p99: minRTT 5.7 / 242 ms, adjustment 20.0 / 263 ms, calculation 14.9 / 99 ms:
/// the slides' lower out-of-order delay does not appear in the mean (more segments wait, each
/// briefly). Without loss the gain is larger (41.3 vs 27.3 Mbit/s, with lower mean and p99
/// delay); with 6 MB buffers there is none (minRTT 47.8, adjustment 47.5, calculation
/// 28.5 Mbit/s).
#[test]
fn stms_raises_throughput_with_limited_buffers() {
    let run = |sched: &str| {
        let s = two_paths(
            "40s",
            [("fast", "30Mbit", "10ms", "20 packets"), ("slow", "30Mbit", "100ms", "500 packets")],
            &format!("cc = \"lia\"\nsndbuf = \"1MB\"\nrcvbuf = \"1MB\"\napp = {{ kind = \"bulk\" }}\n{sched}\n"),
            "[output]\nwarmup = \"5s\"\n",
        );
        let s = s.replacen("queue = \"20 packets\"", "queue = \"20 packets\"\nloss = \"0.01%\"", 1);
        sim(&s).summary.connection("mp").clone()
    };
    let buffer_limited = |c: &ConnResult| c.sndbuf_limited_time_s + c.rwnd_limited_time_s;
    let cap = 2.0 * payload_capacity(30e6, 1420.0);
    let m = run("scheduler = \"minrtt\"");
    show("minRTT", &m);
    for variant in ["adjustment", "calculation"] {
        let c = run(&format!("scheduler = \"stms\"\nsched_params.stms.gap = \"{variant}\""));
        show(variant, &c);
        assert!(
            buffer_limited(&c) < buffer_limited(&m),
            "{variant}: buffer-limited {} s vs minRTT {} s",
            buffer_limited(&c),
            buffer_limited(&m)
        );
        assert!(c.goodput_bps > m.goodput_bps, "{variant}: {} vs minRTT {}", c.goodput_bps, m.goodput_bps);
        assert!(c.goodput_bps <= cap, "{variant}: {} above capacity {cap}", c.goodput_bps);
    }
}

/// BLEST and ECF against minRTT with a limited receive buffer: fast 20 Mbit/s, 10 ms RTT,
/// 30-packet queue; slow 5 Mbit/s, 100 ms RTT, 100-packet queue (240 ms); 128 kB receive
/// buffer, 256 kB send buffer. The fast path's BDP + queue (25 + 45 kB) is below 128 kB, so
/// minRTT spills onto the slow path whose segments then hold the window (head-of-line).
/// Measured: minRTT 6.42 Mbit/s, window-limited 29.7 s of 30; BLEST 18.9 Mbit/s, 0.02 s;
/// ECF 17.3 Mbit/s, 3.1 s. ECF needs a small send buffer: its test compares the data
/// waiting to be sent with what the fast subflow moves in one slow RTT, and with a 4 MB send
/// buffer it never waits (measured: identical to minRTT). Asserted: window-limited time at
/// most half of minRTT's and higher goodput.
#[test]
fn blest_and_ecf_block_less_than_minrtt_with_a_limited_receive_buffer() {
    let run = |sched: &str| {
        let s = two_paths(
            "30s",
            [("fast", "20Mbit", "5ms", "30 packets"), ("slow", "5Mbit", "50ms", "100 packets")],
            &format!("cc = \"lia\"\nsndbuf = \"256KB\"\nrcvbuf = \"128KB\"\napp = {{ kind = \"bulk\" }}\nscheduler = \"{sched}\"\n"),
            "[output]\nwarmup = \"5s\"\n",
        );
        sim(&s).summary.connection("mp").clone()
    };
    let m = run("minrtt");
    show("minrtt", &m);
    for sched in ["blest", "ecf"] {
        let c = run(sched);
        show(sched, &c);
        assert!(c.rwnd_limited_time_s <= 0.5 * m.rwnd_limited_time_s, "{sched}: {c:?} vs {m:?}");
        assert!(c.goodput_bps > m.goodput_bps, "{sched}: {} vs {}", c.goodput_bps, m.goodput_bps);
    }
}

/// DAPS (ICC 2014: receiver buffer occupancy down 77 %, application delay down 63 % against
/// CMT-SCTP's round-robin-like scheduling) and OTIAS (less receive-buffer use, more
/// throughput) against minRTT: a 1 MB download over fast 20 Mbit/s / 10 ms RTT and slow
/// 2 Mbit/s / 100 ms RTT. Measured: minRTT 0.511 s, out-of-order delay mean 37.2 ms, peak
/// out-of-order data 236 kB; DAPS 0.435 s, 5.9 ms, 17 kB; OTIAS 0.443 s, 17.3 ms, 139 kB;
/// ECF 0.534 s (its paper reports shorter downloads; not here), BLEST = minRTT. Asserted for
/// DAPS and OTIAS: completion no later than minRTT's, lower mean out-of-order delay and
/// lower peak out-of-order data.
#[test]
fn daps_and_otias_deliver_in_order_sooner_than_minrtt() {
    let run = |sched: &str| {
        let s = two_paths(
            "30s",
            [("fast", "20Mbit", "5ms", "30 packets"), ("slow", "2Mbit", "50ms", "100 packets")],
            &format!("cc = \"lia\"\napp = {{ kind = \"download\", size = \"1MB\" }}\nscheduler = \"{sched}\"\n"),
            "",
        );
        sim(&s).summary.connection("mp").clone()
    };
    let m = run("minrtt");
    show("minrtt", &m);
    for sched in ["daps", "otias"] {
        let c = run(sched);
        show(sched, &c);
        assert!(c.completed && c.delivered_bytes == 1_000_000, "{c:?}");
        assert!(c.download_time_s.unwrap() <= m.download_time_s.unwrap(), "{sched}: {c:?} vs {m:?}");
        assert!(c.ooo_delay.mean_s < m.ooo_delay.mean_s && c.max_rcv_ooo_bytes < m.max_rcv_ooo_bytes, "{sched}");
    }
}

/// Redundant: a 100 kB download over WiFi (20 Mbit/s, 20 ms RTT, 3 % loss) and LTE
/// (10 Mbit/s, 60 ms RTT, no loss), averaged over 20 seeds, against single-path TCP on each
/// path. Every segment also travels on the other path, so a loss on one costs nothing when
/// the copy arrives; the download cannot be faster than the handshake on the first path.
/// Measured means: redundant 0.233 s, TCP over WiFi 0.243 s, TCP over LTE 0.292 s. (Single
/// seeds differ: a SYN lost on WiFi delays both WiFi TCP and MPTCP by the 1 s initial RTO;
/// and the runs' loss draws differ packet by packet.) Asserted: the mean is at most the best
/// single path's mean.
#[test]
fn redundant_download_is_no_slower_than_the_best_single_path() {
    let n = 20;
    let mut sums = [0.0f64; 3];
    for seed in 1..=n {
        let paths = format!(
            "seed = {seed}\nduration = \"30s\"\n[[paths]]\nname = \"wifi\"\nrate = \"20Mbit\"\ndelay = \"10ms\"\nqueue = \"100 packets\"\nloss = \"3%\"\n\
             [[paths]]\nname = \"lte\"\nrate = \"10Mbit\"\ndelay = \"30ms\"\nqueue = \"100 packets\"\n"
        );
        let app = "app = { kind = \"download\", size = \"100KB\" }\n";
        let mp = format!("{paths}[[connections]]\nname = \"c\"\nkind = \"mptcp\"\npaths = [\"wifi\", \"lte\"]\nscheduler = \"redundant\"\n{app}");
        let tcp = |p: &str| format!("{paths}[[connections]]\nname = \"c\"\nkind = \"tcp\"\npaths = [\"{p}\"]\n{app}");
        let t = [sim(&mp), sim(&tcp("wifi")), sim(&tcp("lte"))]
            .map(|o| o.summary.connection("c").download_time_s.expect("the download completes"));
        for k in 0..3 {
            sums[k] += t[k] / n as f64;
        }
    }
    eprintln!("mean completion: redundant {:.4} s, TCP WiFi {:.4} s, TCP LTE {:.4} s", sums[0], sums[1], sums[2]);
    assert!(sums[0] <= sums[1].min(sums[2]), "{sums:?}");
}

/// LIA's α per ACK against per RTT (seed 000 §V-B: α updated once per RTT lags when a path's
/// RTT inflates). WiFi 10 Mbit/s, 20 ms RTT, 50 packets; cellular 10 Mbit/s, 40 ms RTT,
/// 1000 packets of queue; a bulk TCP connection joins the cellular path at 20 s and its
/// queue, hence the cellular RTT, grows (measured SRTT 663 ms at 22 s, 846 ms at 25 s).
/// Measured α (per RTT / per ACK): 2.555 before, peak 4.520 / 4.523 after; the midpoint is
/// reached at 22.85 / 22.70 s; WiFi goodput 8.693 / 8.692 Mbit/s: per-ACK α responds 150 ms
/// earlier (a quarter of the inflated cellular RTT) but gives no more WiFi throughput, since
/// the engine's SRTT already lags the true RTT and LIA's per-RTT update runs on every
/// whole-MSS increase of any subflow. Asserted: both run, α rises after the RTT jump in both,
/// and per-ACK α first reaches the midpoint of its pre- and post-jump levels no later than
/// per-RTT α does.
#[test]
fn per_ack_alpha_follows_an_rtt_jump_no_later_than_per_rtt_alpha() {
    let mut first = Vec::new();
    for upd in ["per_rtt", "per_ack"] {
        let s = format!(
            "duration = \"30s\"\n[[paths]]\nname = \"wifi\"\nrate = \"10Mbit\"\ndelay = \"10ms\"\nqueue = \"50 packets\"\n\
             [[paths]]\nname = \"cell\"\nrate = \"10Mbit\"\ndelay = \"20ms\"\nqueue = \"1000 packets\"\n\
             [[connections]]\nname = \"mp\"\nkind = \"mptcp\"\npaths = [\"wifi\", \"cell\"]\ncc = \"lia\"\n\
             cc_params.lia.alpha_update = \"{upd}\"\napp = {{ kind = \"bulk\" }}\n\
             [[connections]]\nname = \"tcp\"\nkind = \"tcp\"\npaths = [\"cell\"]\nstart = \"20s\"\napp = {{ kind = \"bulk\" }}\n\
             [output]\ntimeseries = \"50ms\"\n"
        );
        let out = sim(&s);
        let a = out.timeseries.points("mp", "alpha");
        let before = at(&a, 20.0);
        let after = a.iter().filter(|p| p.0 >= 22.5 && p.0 <= 25.0).map(|p| p.1).fold(0.0, f64::max);
        assert!(after > 1.3 * before, "{upd}: α {before} before, {after} after");
        let mid = 0.5 * (before + after);
        let t = a.iter().find(|p| p.0 >= 20.0 && p.1 >= mid).map(|p| p.0).expect("α reaches the midpoint");
        eprintln!("{upd}: α {before:.3} -> {after:.3}, midpoint at {t:.2} s");
        first.push(t);
    }
    assert!(first[1] <= first[0], "per-ACK at {} s, per-RTT at {} s", first[1], first[0]);
}

/// Property test: random paths, buffers, loss, applications and every scheduler: runs
/// complete (the engine panics on invariant violations and the connection debug-asserts that
/// every pick is usable with room), delivered <= written, completed downloads deliver
/// exactly their size.
mod properties {
    use super::common::scenario;
    use mptcplab_core::config::SchedKind;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 48, .. ProptestConfig::default() })]
        #[test]
        fn every_scheduler_keeps_the_invariants(
            sched in 0..SchedKind::NAMES.len(),
            rates in prop::collection::vec(1u32..100, 2..4),
            delays in prop::collection::vec(1u32..150, 3),
            queues in prop::collection::vec(2u32..300, 3),
            loss in prop::collection::vec(0u32..30, 3),
            size in 1u64..2_000_000,
            app in 0u8..3,
            rcvbuf in 3_000u64..2_000_000,
            sndbuf in 3_000u64..2_000_000,
            seed in 0u64..1000,
            m1m2 in any::<bool>(),
        ) {
            let n = rates.len();
            let mut toml = format!("duration = \"6s\"\nseed = {seed}\n");
            for i in 0..n {
                toml += &format!(
                    "[[paths]]\nname = \"p{i}\"\nrate = \"{}Mbit\"\ndelay = \"{}ms\"\nqueue = \"{} packets\"\nloss = \"{}%\"\n",
                    rates[i], delays[i], queues[i], loss[i] as f64 / 10.0
                );
            }
            let paths: Vec<String> = (0..n).map(|i| format!("\"p{i}\"")).collect();
            let app_s = match app {
                0 => "{ kind = \"bulk\" }".to_string(),
                1 => format!("{{ kind = \"download\", size = \"{size}B\" }}"),
                _ => format!("{{ kind = \"periodic\", size = \"{}B\", period = \"300ms\" }}", size / 10 + 1),
            };
            toml += &format!(
                "[[connections]]\nname = \"c\"\nkind = \"mptcp\"\npaths = [{}]\ncc = \"lia\"\nscheduler = \"{}\"\nrcvbuf = \"{rcvbuf}B\"\nsndbuf = \"{sndbuf}B\"\napp = {app_s}\n\
                 sched_params.minrtt.opportunistic_retransmission = {m1m2}\nsched_params.minrtt.penalisation = {m1m2}\n",
                paths.join(", "),
                SchedKind::NAMES[sched],
            );
            let out = mptcplab_core::run(&scenario(&toml));
            let c = &out.summary.connections[0];
            prop_assert!(c.delivered_bytes <= c.written_bytes);
            if app == 1 && c.completed {
                prop_assert_eq!(c.delivered_bytes, size);
            }
        }
    }
}

/// The upstream Linux `default` scheduler assigns data to subflow send queues, not to
/// window room: on the receive-buffer-limited heterogeneous pair (50 Mbit/s, 20 ms RTT +
/// 10 Mbit/s, 200 ms RTT, W = 256 kB advertised whole, as Linux does) the slow subflow gets
/// a burst of B = 64 KiB when its linger time (queued / pacing rate) is the shortest, i.e.
/// once its previous burst is acknowledged and its queue empty; the fast subflow takes the
/// rest of the window beyond its congestion window. Derived bounds on the slow subflow:
/// - at most one burst per slow round trip (the burst holds the window's head for that
///   long): <= (B + MSS) · 8 / 200 ms = 2.68 Mbit/s, +10 % for the acknowledgement clock;
/// - at least one burst per slow round trip + the burst's serialisation B · 8 / 10 Mbit/s
///   = 52 ms + a fast round trip for the window to reopen = 272 ms: >= 1.93 Mbit/s, -10 %.
///
/// The whole window turns over at least once per such cycle: goodput >= W · 8 / 272 ms =
/// 7.5 Mbit/s. Advertising the free space instead (`rcvbuf_window = "free"`) can only lower
/// goodput. Measured: 17.45 Mbit/s, slow 2.27 Mbit/s (share 0.13); Linux 6.18 on the same
/// emulated links: 17–19.6 Mbit/s, slow 2.5–2.7 Mbit/s (share 0.12–0.15). The per-segment
/// picking the engine did before (a subflow with window room) gave 9.6 Mbit/s, slow 5.4.
#[test]
fn the_linux_default_scheduler_queues_beyond_the_window_and_feeds_the_slow_path_in_bursts() {
    let run = |window: &str| {
        let s = two_paths(
            "10s",
            [("fast", "50Mbit", "10ms", "84 packets"), ("slow", "10Mbit", "100ms", "167 packets")],
            &format!(
                "cc = \"cubic\"\nscheduler = \"default\"\nrcvbuf = \"256KB\"\nrcvbuf_window = \"{window}\"\napp = {{ kind = \"bulk\" }}\n"
            ),
            "[output]\nwarmup = \"3s\"\n",
        );
        sim(&s).summary
    };
    let full = run("full");
    let free = run("free");
    let c = full.connection("mp");
    let slow = full.subflow("mp", "slow").goodput_bps;
    show("default, full window", c);
    show("default, free window", free.connection("mp"));
    let (w, b, mss) = (256_000.0, 65_536.0, 1448.0);
    let most = (b + mss) * 8.0 / 0.2;
    let cycle = 0.2 + b * 8.0 / 10e6 + 0.02;
    let least = b * 8.0 / cycle;
    assert!(slow <= 1.1 * most, "slow subflow {slow} bit/s above one burst per round trip ({most})");
    assert!(slow >= 0.9 * least, "slow subflow {slow} bit/s below one burst per cycle ({least})");
    assert!(c.goodput_bps >= w * 8.0 / cycle, "goodput {} bit/s", c.goodput_bps);
    assert!(c.goodput_bps >= free.connection("mp").goodput_bps);
}

/// minRTT's penalisation (M2, `mptcp_rcv_buf_optimization`) halves the window of each
/// subflow that holds the blocking segment (the oldest unacknowledged data) and whose SRTT is
/// above that of the subflow the scheduler picked; it never halves the picked one. The
/// counts are kept per subflow as well as per connection, and the two must agree.
///
/// Setup (the NSDI 2012 pair above, 100 kB receive buffer, M1 + M2): WiFi 8 Mbit/s, 10 ms
/// one way, 53 packets of queue; 3G 2 Mbit/s, 100 ms one way. Every WiFi RTT sample is at
/// most 20 ms of propagation + 53 · 1500 B · 8 / 8 Mbit/s = 79.5 ms of queue + 1.5 ms of
/// serialisation + a 40 ms delayed ACK = 141 ms; every 3G sample is at least 200 ms of
/// propagation + 6 ms of serialisation. SRTT is a weighted mean of samples, so WiFi's SRTT
/// stays below 3G's throughout: M2 picked on WiFi may halve 3G, M2 picked on 3G has nobody
/// slower to halve. Expected: every penalisation on the 3G subflow, none on WiFi — whichever
/// subflow is the initial one (the rule follows the SRTTs, not the order of the paths). The
/// cumulative `penalisations` series ends at the summary's count.
#[test]
fn penalisations_are_counted_on_the_subflow_whose_window_m2_halved() {
    for order in [["wifi", "3g"], ["3g", "wifi"]] {
        let wifi = ("wifi", "8Mbit", "10ms", "53 packets");
        let g3 = ("3g", "2Mbit", "100ms", "333 packets");
        let paths = if order[0] == "wifi" { [wifi, g3] } else { [g3, wifi] };
        let s = two_paths(
            "30s",
            paths,
            "cc = \"lia\"\nrcvbuf = \"100KB\"\napp = { kind = \"bulk\" }\n\
             [connections.sched_params.minrtt]\nopportunistic_retransmission = true\npenalisation = true\n",
            "[output]\ntimeseries = \"100ms\"\n",
        );
        let out = sim(&s);
        let total = out.summary.connection("mp").penalisations;
        let (w, g) = (out.summary.subflow("mp", "wifi").penalisations, out.summary.subflow("mp", "3g").penalisations);
        eprintln!("{order:?}: connection {total}, wifi {w}, 3g {g}");
        assert!(total > 0, "{order:?}: M2 never acted");
        assert_eq!(w + g, total, "{order:?}: per-subflow counts do not sum to the connection's");
        assert_eq!((w, g), (0, total), "{order:?}: M2 must halve only the slower (3G) subflow");
        for (p, n) in [("wifi", w), ("3g", g)] {
            let pts = out.timeseries.points(&format!("mp/{p}"), "penalisations");
            assert!(pts.windows(2).all(|x| x[1].1 >= x[0].1), "{p}: a cumulative count fell");
            assert!(pts.last().is_some_and(|x| x.1 <= n as f64), "{p}: the series passed the summary's count");
        }
    }
}

/// The rule compares SRTTs, not propagation delays: a low-delay path whose queue lifts its
/// SRTT above the other path's is the one penalised (what the Kato et al. reproduction sees
/// with 1000-packet queues). "near": 10 Mbit/s, 1 ms one way, 1000 packets of queue (up to
/// 1.2 s); "far": 10 Mbit/s, 20 ms one way, 5 packets (every sample at most 40 ms + 6 ms of
/// queue + 1.2 ms of serialisation + a 40 ms delayed ACK = 87 ms). A 256 KiB send buffer
/// limits the connection. Once more than 87 ms of data (73 packets) wait in near's queue its
/// SRTT is above far's, so M2 can then halve only near. Expected: the counts sum to the
/// connection's, and near, the path with less propagation delay, is penalised.
#[test]
fn m2_penalises_the_subflow_with_the_larger_srtt_even_on_the_low_delay_path() {
    let s = two_paths(
        "20s",
        [("near", "10Mbit", "1ms", "1000 packets"), ("far", "10Mbit", "20ms", "5 packets")],
        "cc = \"lia\"\nsndbuf = \"256KiB\"\napp = { kind = \"bulk\" }\n\
         [connections.sched_params.minrtt]\nopportunistic_retransmission = true\npenalisation = true\n",
        "",
    );
    let out = sim(&s);
    let total = out.summary.connection("mp").penalisations;
    let (n, f) = (out.summary.subflow("mp", "near").penalisations, out.summary.subflow("mp", "far").penalisations);
    eprintln!("connection {total}, near {n}, far {f}");
    assert_eq!(n + f, total, "per-subflow counts do not sum to the connection's");
    assert!(n > 0, "the low-delay path with the larger SRTT was never penalised");
}

/// The v0.86–v0.88 penalisation test (`penalisation_rule = "v0.88"`) compares rates, not
/// SRTTs (its arithmetic: `rbuf_opt::v088_slower`'s unit test). WiFi: 20 Mbit/s, 15 ms one way,
/// 1 % loss, 50 packets of queue; cellular: 10 Mbit/s, 60 ms one way, 300 packets; a 256 KiB
/// receive buffer blocks the window. WiFi's SRTT stays below cellular's: every WiFi sample is
/// at most 30 ms of propagation + 50 · 1500 B · 8 / 20 Mbit/s = 30 ms of queue + a 40 ms
/// delayed ACK = 100 ms, every cellular one at least 120 ms. So v0.9x's test (the holder's
/// SRTT above the caller's) never halves WiFi. Expected: no WiFi halving under v0.9x; under
/// both rules, the per-subflow counts sum to the connection's, and the rules differ in what
/// they do (different counts or a different subflow halved).
#[test]
fn v088_and_v09x_penalisation_rules_differ_and_v09x_never_halves_the_low_srtt_subflow() {
    let run = |rule: &str| {
        let s = format!(
            "duration = \"30s\"\nseed = 3\n\
             [[paths]]\nname = \"wifi\"\nrate = \"20Mbit\"\ndelay = \"15ms\"\nqueue = \"50 packets\"\nloss = \"1%\"\n\
             [[paths]]\nname = \"cell\"\nrate = \"10Mbit\"\ndelay = \"60ms\"\nqueue = \"300 packets\"\n\
             [[connections]]\nname = \"mp\"\nkind = \"mptcp\"\npaths = [\"wifi\", \"cell\"]\ncc = \"lia\"\n\
             rcvbuf = \"256KiB\"\napp = {{ kind = \"bulk\" }}\n\
             [connections.sched_params.minrtt]\nopportunistic_retransmission = true\npenalisation = true\n\
             penalisation_rule = \"{rule}\"\n"
        );
        let out = sim(&s);
        let total = out.summary.connection("mp").penalisations;
        let (w, c) = (out.summary.subflow("mp", "wifi").penalisations, out.summary.subflow("mp", "cell").penalisations);
        eprintln!("{rule}: connection {total}, wifi {w}, cell {c}");
        assert_eq!(w + c, total, "{rule}: per-subflow counts do not sum to the connection's");
        (w, c)
    };
    let (new, old) = (run("v0.9x"), run("v0.88"));
    assert_eq!(new.0, 0, "v0.9x halved the subflow with the lower SRTT");
    assert_ne!(new, old, "the two rules acted identically");
}

/// `send_buffer_path = false` (v0.86–v0.88 with a non-blocking writer: `mptcp_next_segment`
/// runs M1/M2 only while `sk_write_pending`, which such a writer never raises) leaves M1/M2
/// only the receive-window path. Setup: WiFi 8 Mbit/s, 20 ms RTT beside a 2 Mbit/s path with
/// 2 s of queue; a 200 kB send buffer and a 4 MB receive buffer. The data outstanding never
/// exceeds the send buffer, so the peer's window (4 MB) never blocks: with the path off, no
/// opportunistic retransmission and no penalisation can happen (0 and 0), and the
/// receive-window-limited time is 0. With the path on (the default) the full send buffer
/// triggers both.
#[test]
fn without_the_send_buffer_path_m1_and_m2_need_a_full_receive_window() {
    let run = |path: bool| {
        let s = two_paths(
            "20s",
            [("wifi", "8Mbit", "10ms", "53 packets"), ("3g", "2Mbit", "75ms", "333 packets")],
            &format!(
                "cc = \"lia\"\nsndbuf = \"200KB\"\nrcvbuf = \"4MB\"\napp = {{ kind = \"bulk\" }}\n\
                 [connections.sched_params.minrtt]\nopportunistic_retransmission = true\npenalisation = true\n\
                 send_buffer_path = {path}\n"
            ),
            "",
        );
        sim(&s).summary.connection("mp").clone()
    };
    let off = run(false);
    let on = run(true);
    show("send-buffer path off", &off);
    show("send-buffer path on", &on);
    assert_eq!(off.rwnd_limited_time_s, 0.0, "{off:?}");
    assert_eq!((off.opportunistic_retransmissions, off.penalisations), (0, 0), "{off:?}");
    assert!(on.sndbuf_limited_time_s > 0.0 && on.opportunistic_retransmissions > 0, "{on:?}");
}
