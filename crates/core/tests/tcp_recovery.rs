//! Loss recovery: RACK-TLP (RFC 8985) and PRR (RFC 6937) against the RFCs' timing rules, and
//! RFC 6675 alone (`tcp.recovery = "rfc6675"`, the default) for contrast. Expected times are
//! derived in each test from the link parameters and the RFC formulas.

mod common;
use common::*;

use mptcplab_core::cc::{self, PeerView};
use mptcplab_core::config::{CaCounting, CcKind, CcParams, DelackCount, Recovery, SlowStart, SlowStartBound};
use mptcplab_core::tcp::state::Transition;
use mptcplab_core::tcp::subflow::{CaState, State, Subflow, TcpParams};
use mptcplab_core::units::{Dsn, Dur, Seq, Time};

const RATE: f64 = 100e6;
const DELAY: f64 = 0.05;
/// On-wire sizes: data segment (1448 B + 40 B headers + 12 B timestamps), pure ACK.
const DATA: f64 = 1500.0;
const ACK: f64 = 52.0;
/// Linux's recovery: RACK-TLP and PRR.
const LINUX: &str = "recovery = \"rack_tlp\", prr = true";

/// One data packet of a link capture: time (s), TCP sequence number, payload bytes.
struct Cap {
    t: f64,
    seq: u32,
    payload: u32,
}

/// Reads a link capture (nanosecond pcap, Ethernet, IPv4, TCP) in the order packets were
/// offered to the link; index i is the link's packet number i + 1 (as `drop` counts).
fn read_capture(path: &std::path::Path) -> Vec<Cap> {
    let b = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let u32le = |o: usize| u32::from_le_bytes(b[o..o + 4].try_into().unwrap());
    let u16be = |o: usize| u16::from_be_bytes(b[o..o + 2].try_into().unwrap()) as u32;
    assert_eq!(u32le(0), 0xa1b2_3c4d, "nanosecond pcap");
    let mut o = 24;
    let mut out = Vec::new();
    while o + 16 <= b.len() {
        let t = u32le(o) as f64 + u32le(o + 4) as f64 * 1e-9;
        let incl = u32le(o + 8) as usize;
        let ip = o + 16 + 14;
        let ihl = (b[ip] & 0x0f) as u32 * 4;
        let total = u16be(ip + 2);
        let tcp = ip + ihl as usize;
        let seq = u32::from_be_bytes(b[tcp + 4..tcp + 8].try_into().unwrap());
        let doff = (b[tcp + 12] >> 4) as u32 * 4;
        out.push(Cap { t, seq, payload: total - ihl - doff });
        o += 16 + incl;
    }
    out
}

/// Runs `toml` capturing per link, and returns the run and the downlink capture of path `p`.
fn run_captured(name: &str, toml: &str) -> (mptcplab_core::RunOutput, Vec<Cap>) {
    let dir = std::env::temp_dir().join(format!("mptcplab-tcp-recovery-{}-{name}", std::process::id()));
    let capture =
        mptcplab_core::CaptureOptions { dir: dir.clone(), per: mptcplab_core::CapturePoint::Link, snaplen: None };
    let opts = mptcplab_core::RunOptions { capture: Some(capture), ..Default::default() };
    let sc = scenario(toml);
    let out = mptcplab_core::run_with(&sc, &opts).unwrap_or_else(|e| panic!("{e:?}"));
    let cap = read_capture(&dir.join("p.down.pcap"));
    std::fs::remove_dir_all(&dir).ok();
    (out, cap)
}

/// Indices (0-based) of the transmissions of the first data segment sent more than once.
fn first_repeated(cap: &[Cap]) -> Vec<usize> {
    let mut seen: std::collections::HashMap<u32, usize> = std::collections::HashMap::new();
    for (i, c) in cap.iter().enumerate().filter(|(_, c)| c.payload > 0) {
        if let Some(&first) = seen.get(&c.seq) {
            let seq = cap[first].seq;
            return cap.iter().enumerate().filter(|(_, c)| c.payload > 0 && c.seq == seq).map(|(j, _)| j).collect();
        }
        seen.insert(c.seq, i);
    }
    Vec::new()
}

/// The 14480 B download of 10 segments over a 100 Mbit/s, 2 × 50 ms path with downlink
/// packets `drop` lost (packet 1 is the SYN/ACK, 2..=11 the initial window).
fn ten_segments(drop: &[u64], tcp: &str) -> String {
    format!(
        r#"
        duration = "10s"
        [[paths]]
        name = "p"
        rate = "100Mbit"
        delay = "50ms"
        queue = "100 packets"
        down = {{ drop = {drop:?} }}
        [[connections]]
        name = "tcp"
        kind = "tcp"
        paths = ["p"]
        app = {{ kind = "download", size = "14480B" }}
        tcp = {{ {tcp} }}
        [output]
        timeseries = "100us"
    "#
    )
}

/// When the server sends the initial window, and its handshake RTT sample (test 8a).
fn handshake() -> (f64, f64) {
    let (syn, synack) = (64.0, 72.0);
    let t_send = one_way(syn, RATE, DELAY) + one_way(synack, RATE, DELAY) + one_way(ACK, RATE, DELAY);
    (t_send, one_way(synack, RATE, DELAY) + one_way(ACK, RATE, DELAY))
}

/// A lost initial window with RACK-TLP: nothing is acknowledged, so the probe timer armed
/// when the window was sent fires at 2·SRTT (SRTT = the handshake sample R; 10 segments out,
/// so no delayed-ACK allowance), before the RTO at R + max(2R, 200 ms). The probe's SACK lets
/// RACK mark the other nine lost: one recovery episode and no RTO.
#[test]
fn a_lost_window_is_probed_at_two_srtt_not_repaired_by_the_rto() {
    let out = sim(&ten_segments(&[2, 3, 4, 5, 6, 7, 8, 9, 10, 11], LINUX));
    let s = out.summary.subflow("tcp", "p");
    assert_eq!((s.rtos, s.recovery_episodes, s.retransmitted_segments), (0, 1, 10), "{s:?}");
    assert!(out.summary.connection("tcp").completed);
    let (t_send, r) = handshake();
    let pts = out.timeseries.points("tcp/p", "retransmitted_segments");
    let t_probe = first_reaching(&pts, 1.0).expect("a probe");
    assert!((t_probe - (t_send + 2.0 * r)).abs() <= 0.0002, "probe at {t_probe}, expected {}", t_send + 2.0 * r);
    assert!(t_probe < t_send + r + 0.2, "the probe precedes the RTO");
}

/// Expected state when the last ACK of the initial window arrives, `lost` tail segments
/// dropped (delayed ACKs: every 2nd segment, else the 40 ms timer): its arrival time, SRTT and
/// RTTVAR per RFC 6298 over the handshake and data samples.
fn tail_expectation(lost: usize) -> (f64, f64, f64) {
    let (t_send, r0) = handshake();
    let ser = DATA * 8.0 / RATE;
    let got = 10 - lost;
    let mut acks: Vec<f64> = (2..=got).step_by(2).map(|k| t_send + k as f64 * ser + DELAY).collect();
    if got % 2 == 1 {
        acks.push(t_send + got as f64 * ser + DELAY + 0.04);
    }
    let (mut srtt, mut var) = (r0, r0 / 2.0);
    let mut t_last = 0.0;
    for a in acks {
        t_last = a + one_way(ACK, RATE, DELAY);
        let sample = t_last - t_send;
        var = 0.75 * var + 0.25 * (srtt - sample).abs();
        srtt = 0.875 * srtt + 0.125 * sample;
    }
    (t_last, srtt, var)
}

/// Tail drops of the last 1, 2 or 3 segments: the probe goes out PTO after the last ACK that
/// acknowledged new data (RFC 8985 §7.2: the timer restarts on such an ACK), PTO = 2·SRTT,
/// plus 200 ms (Linux's WCDelAckT, rto_min) when one segment is outstanding, capped by the
/// RTO = SRTT + max(4·RTTVAR, 200 ms). The probe (the last segment again) is SACKed or
/// acknowledged and RACK repairs the rest: no RTO. With RFC 6675 alone the RTO repairs it.
#[test]
fn a_tail_drop_is_repaired_by_a_loss_probe_at_two_srtt() {
    for lost in 1..=3usize {
        let drop: Vec<u64> = (12 - lost as u64..=11).collect();
        let out = sim(&ten_segments(&drop, LINUX));
        let s = out.summary.subflow("tcp", "p");
        assert_eq!((s.rtos, s.retransmitted_segments), (0, lost as u64), "{lost} lost: {s:?}");
        assert!(out.summary.connection("tcp").completed);
        let (t_ack, srtt, var) = tail_expectation(lost);
        let rto = srtt + (4.0 * var).max(0.2);
        let pto = 2.0 * srtt + if lost == 1 { 0.2 } else { 0.0 };
        let expected = t_ack + pto.min(rto);
        let pts = out.timeseries.points("tcp/p", "retransmitted_segments");
        let t_probe = first_reaching(&pts, 1.0).expect("a probe");
        assert!((t_probe - expected).abs() <= 0.0003, "{lost} lost: probe at {t_probe}, expected {expected}");
        if lost > 1 {
            assert!(t_probe + 0.09 < t_ack + rto, "{lost} lost: the probe comes well before the RTO");
        }

        let old = sim(&ten_segments(&drop, "recovery = \"rfc6675\""));
        let s = old.summary.subflow("tcp", "p");
        assert_eq!(s.rtos, 1, "{lost} lost, RFC 6675: {s:?}");
        let t_rtx = first_reaching(&old.timeseries.points("tcp/p", "retransmitted_segments"), 1.0).unwrap();
        assert!(
            (t_rtx - (t_ack + rto)).abs() <= 0.0003,
            "{lost} lost, RFC 6675: RTO at {t_rtx}, expected {}",
            t_ack + rto
        );
    }
}

/// A retransmission lost a second time. RFC 6675 cannot see it (the SACKs above the hole were
/// all counted before), so only the RTO repairs it. RACK declares it lost as soon as a segment
/// sent after it is delivered and the reordering window (0 in recovery before any reordering
/// was seen) has passed: one round trip after the retransmission, plus at most the queueing
/// of the flight ahead of that segment (at most 2·IW segments in the second round).
#[test]
fn a_retransmission_lost_again_is_repaired_by_rack_without_an_rto() {
    let base = r#"
        duration = "20s"
        [[paths]]
        name = "p"
        rate = "50Mbit"
        delay = "20ms"
        queue = "500 packets"
        down = { drop = DROPS }
        [[connections]]
        name = "tcp"
        kind = "tcp"
        paths = ["p"]
        app = { kind = "download", size = "1MB" }
        tcp = { TCP }
        [output]
    "#;
    let scenario = |drops: &str, tcp: &str| base.replace("DROPS", drops).replace("TCP", tcp);
    // Segment 7 of the initial window is lost; find where its retransmission goes.
    let (_, cap) = run_captured("once", &scenario("[8]", LINUX));
    let tx = first_repeated(&cap);
    assert_eq!(tx.len(), 2, "sent twice");
    let second = tx[1] as u64 + 1;
    let (out, cap) = run_captured("twice", &scenario(&format!("[8, {second}]"), LINUX));
    let s = out.summary.subflow("tcp", "p");
    assert_eq!((s.rtos, s.recovery_episodes), (0, 1), "{s:?}");
    assert!(out.summary.connection("tcp").completed);
    let tx = first_repeated(&cap);
    assert_eq!(tx.len(), 3, "sent three times");
    // The first segment sent after the lost retransmission is what reveals its loss.
    let next = (tx[1] + 1..cap.len()).find(|&j| cap[j].payload > 0).expect("data after the retransmission");
    let gap = cap[tx[2]].t - cap[next].t;
    let ser = DATA * 8.0 / 50e6;
    let rtt_min = 2.0 * 0.02 + ser + ACK * 8.0 / 50e6;
    assert!(
        gap >= rtt_min && gap <= rtt_min + 20.0 * ser,
        "second retransmission {gap} s after the next segment sent (RTT {rtt_min}); retransmissions at {} and {}",
        cap[tx[1]].t,
        cap[tx[2]].t
    );

    let (old, _) = run_captured("rfc6675", &scenario(&format!("[8, {second}]"), "recovery = \"rfc6675\""));
    let s = old.summary.subflow("tcp", "p");
    assert_eq!(s.rtos, 1, "RFC 6675 waits for the RTO: {s:?}");
}

/// Reordering without loss: uniform jitter of ±1 ms with overtaking on a path with 40 ms base
/// RTT reorders packets by up to 2 ms, i.e. up to 2 ms / 0.24 ms ≈ 8 positions at 50 Mbit/s.
/// Every retransmission is spurious. 3-dupACK (RFC 6675) fires whenever 3 later segments
/// overtake one; RACK's window (min_RTT/4 ≈ 10 ms once reordering was seen) covers 2 ms, so
/// at most the first reordering event, seen before RACK knows the path reorders, can cost a
/// recovery.
#[test]
fn reordering_within_the_rack_window_causes_no_spurious_retransmissions() {
    let run = |recovery: &str| {
        sim(&format!(
            r#"
            duration = "20s"
            [[paths]]
            name = "p"
            rate = "50Mbit"
            delay = "20ms"
            queue = "1000 packets"
            down = {{ jitter = {{ amount = "1ms", reorder = true }} }}
            [[connections]]
            name = "tcp"
            kind = "tcp"
            paths = ["p"]
            app = {{ kind = "bulk" }}
            rcvbuf = "400KB"
            tcp = {{ recovery = "{recovery}", prr = true }}
        "#
        ))
    };
    let rack = run("rack_tlp");
    let old = run("rfc6675");
    let (sr, so) = (rack.summary.subflow("tcp", "p"), old.summary.subflow("tcp", "p"));
    assert_eq!(rack.summary.links.iter().map(|l| l.loss_drops + l.queue_drops).sum::<u64>(), 0);
    assert!(sr.recovery_episodes <= 1 && sr.rtos == 0, "RACK: {sr:?}");
    assert!(so.recovery_episodes >= 10 && so.retransmitted_segments >= so.recovery_episodes, "3-dupACK: {so:?}");
    // The receive buffer (400 KB) exceeds the BDP (250 KB): without spurious reductions the
    // link is full.
    let cap = payload_capacity(50e6, 1448.0);
    let (gr, go) = (rack.summary.connection("tcp").goodput_bps, old.summary.connection("tcp").goodput_bps);
    assert!(gr >= 0.95 * cap, "RACK goodput {gr} < 95 % of {cap}");
    assert!(go < 0.5 * cap, "RFC 6675 goodput {go}: spurious reductions should keep the window small");
}

/// A sender's parameters for driving a [`Subflow`] by hand: IW 100, Linux slow start, byte
/// counting, the RFC 6298 / Linux timer constants.
fn params(mss: u64, recovery: Recovery, prr: bool) -> TcpParams {
    TcpParams {
        smss: mss,
        mss_cache: mss,
        iw: 100,
        slow_start: SlowStart::Linux,
        ca_counting: CaCounting::Bytes,
        slow_start_bound: SlowStartBound::Below,
        b: 2,
        delack_count: DelackCount::Segments,
        delack_timeout: Dur::from_ms(40),
        idle_restart: false,
        dupthresh: 3,
        rto_initial: Dur::from_secs(1),
        rto_min: Dur::from_ms(200),
        rto_max: Dur::from_secs(120),
        recovery,
        prr,
        quickack: false,
        ooo_ack: Default::default(),
        cwnd_limited: Default::default(),
        cwnd_unit: Default::default(),
        tso_defer: false,
        sndbuf_check: Default::default(),
        rtt_sample: Default::default(),
        cwv: false,
        tsq: mptcplab_core::config::TsqRule::Off,
        tx_skb_truesize: None,
    }
}

/// PRR (RFC 6937) on one subflow driven by hand: 100 segments in flight, the first lost, each
/// later segment SACKed by its own ACK. Reno halves: ssthresh = 50, RecoverFS = 100 segments.
/// During recovery PRR sends ⌈ssthresh · delivered / RecoverFS⌉ segments (the fast
/// retransmit included) while the flight exceeds ssthresh — half a segment per segment
/// delivered, spread over the round — where the plain RFC 6675 sender (cwnd = ssthresh at
/// once) sends nothing until the flight has fallen to ssthresh. When the retransmission is
/// acknowledged, recovery ends with cwnd = ssthresh.
#[test]
fn prr_spreads_the_reduction_over_the_recovery_round() {
    const MSS: u64 = 1000;
    let run = |prr: bool| {
        let mut s = Subflow::new(0, 0, false, State::Established, params(MSS, Recovery::RackTlp, prr));
        let mut cc = cc::build(CcKind::Reno, &CcParams::default(), mptcplab_core::rng::Rng::stream(1, "cc"));
        let peers = [PeerView::default()];
        s.rtt.on_sample(Dur::from_ms(100));
        s.w.ssthresh = 1000 * MSS; // congestion avoidance: no growth surprises
        let t0 = Time::ZERO;
        for i in 0..100 {
            s.send_new(t0, MSS, Dsn(i * MSS));
        }
        let mut next_dsn = 100 * MSS;
        let mut sent_after = Vec::new(); // segments sent during recovery after k deliveries
        let mut sent = 0u64;
        for k in 1..100u64 {
            let now = Time::ZERO + Dur::from_ms(100) + Dur(k * 10_000);
            s.on_ack(now, Seq(0), &[(Seq(MSS), Seq((k + 1) * MSS))], cc.as_mut(), &peers);
            if s.ca() == CaState::Recovery {
                while s.retransmit_next(now, sent == 0).is_some() {
                    sent += 1;
                }
                while s.has_room() {
                    s.send_new(now, MSS, Dsn(next_dsn));
                    next_dsn += MSS;
                    sent += 1;
                }
            }
            sent_after.push((k, sent));
        }
        assert_eq!(s.stats.recoveries, 1);
        assert_eq!(s.w.ssthresh, 50 * MSS);
        // The retransmission arrives: everything up to the highest SACK is acknowledged.
        let now = Time::ZERO + Dur::from_ms(300);
        s.on_ack(now, Seq(100 * MSS), &[], cc.as_mut(), &peers);
        assert_eq!(s.ca(), CaState::Open);
        assert_eq!(s.w.cwnd, s.w.ssthresh, "cwnd = ssthresh when recovery ends");
        sent_after
    };
    let prr = run(true);
    let plain = run(false);
    // Recovery starts on the 3rd SACK (RACK's window is 0 once DupThresh segments are SACKed).
    for &(k, sent) in prr.iter().filter(|(k, _)| *k >= 3) {
        let pipe = 100 - 1 - k + sent; // segments in flight after this ACK's sending
        if pipe > 50 {
            let expect = (50 * (k - 2)).div_ceil(100);
            assert!(sent.abs_diff(expect) <= 1, "PRR after {k} delivered: {sent} sent, expected {expect}");
        }
    }
    let at = |v: &[(u64, u64)], k: u64| v.iter().find(|p| p.0 == k).unwrap().1;
    assert!(at(&prr, 50).abs_diff(25) <= 1, "PRR: {} sent after 50 delivered", at(&prr, 50));
    assert_eq!(at(&plain, 50), 1, "cwnd = ssthresh at once: only the fast retransmit");
    // Both end the round with about ssthresh in flight: ssthresh − 1 segments sent for the
    // 99 delivered.
    assert!(at(&prr, 99).abs_diff(50) <= 1 && at(&plain, 99).abs_diff(50) <= 1, "{prr:?} {plain:?}");
}

/// RACK enters recovery from its reordering timer, not from an ACK (RFC 8985 §6.2 step 5,
/// Linux `tcp_rack_reo_timeout`), and the recorded transitions carry the timer's time.
/// Ten segments leave at t = 0 on a path of 100 ms RTT; segment 0 is lost. The SACK of
/// segment 1 at 100 ms puts the sender in Disorder (one segment SACKed, fewer than
/// DupThresh: RACK's reordering window is min_RTT / 4 = 25 ms) and arms the timer for
/// 0 + RACK.rtt (100 ms) + 25 ms = 125 ms, when segment 0 is declared lost and recovery
/// starts. The retransmission's ACK at 250 ms ends it.
#[test]
fn rack_enters_recovery_when_the_reordering_timer_fires() {
    const MSS: u64 = 1000;
    let ms = |m: u64| Time::ZERO + Dur::from_ms(m);
    let mut s = Subflow::new(0, 0, false, State::Established, params(MSS, Recovery::RackTlp, false));
    s.enable_trace();
    let mut cc = cc::build(CcKind::Reno, &CcParams::default(), mptcplab_core::rng::Rng::stream(1, "cc"));
    let peers = [PeerView::default()];
    s.rtt.on_sample(Dur::from_ms(100));
    for i in 0..10 {
        s.send_new(Time::ZERO, MSS, Dsn(i * MSS));
    }
    s.on_ack(ms(100), Seq(0), &[(Seq(MSS), Seq(2 * MSS))], cc.as_mut(), &peers);
    assert_eq!((s.ca(), s.timers.reorder.deadline()), (CaState::Disorder, Some(ms(125))));
    assert!(!s.on_recovery_timers(ms(125), cc.as_mut(), &peers), "no loss probe in recovery");
    assert_eq!(s.retransmit_next(ms(125), true).map(|g| g.seq), Some(Seq(0)));
    s.on_ack(ms(250), Seq(10 * MSS), &[], cc.as_mut(), &peers);
    let ca = |t, from, to| (ms(t), Transition::CaState { sf: 0, from, to });
    assert_eq!(
        s.trace(),
        [
            ca(100, CaState::Open, CaState::Disorder),
            ca(125, CaState::Disorder, CaState::Recovery),
            ca(250, CaState::Recovery, CaState::Open)
        ]
    );
}

/// Mathis et al. with Linux's recovery: Bernoulli losses are single losses per window, which
/// RACK detects like DupThresh and PRR ends at the same ssthresh, so Reno's goodput stays
/// within ±25 % of MSS·sqrt(3/2) / (RTT·sqrt(p)) (the RFC 6675 check is in tcp_physics).
#[test]
fn reno_with_rack_tlp_and_prr_follows_the_mathis_formula() {
    assert_reno_follows_mathis(LINUX, &[(0.005, "0.5%"), (0.02, "2%")]);
}

/// MPTCP over two lossy paths (random and bursty loss, jitter with reordering) with RACK-TLP
/// and PRR: the download completes (the engine checks its end-of-run invariants: scoreboard
/// counters, sequence spaces, delivered bytes), and the run is deterministic.
#[test]
fn mptcp_with_rack_tlp_and_prr_is_deterministic_and_keeps_the_invariants() {
    let run = |seed: u64| {
        sim(&format!(
            r#"
            duration = "60s"
            seed = {seed}
            [[paths]]
            name = "wifi"
            rate = "20Mbit"
            delay = "10ms"
            queue = "60 packets"
            loss = "2%"
            loss_burst = 3.0
            [[paths]]
            name = "lte"
            rate = "10Mbit"
            delay = "30ms"
            queue = "200 packets"
            loss = "0.5%"
            jitter = {{ amount = "2ms", reorder = true }}
            [[connections]]
            name = "mp"
            kind = "mptcp"
            paths = ["wifi", "lte"]
            app = {{ kind = "download", size = "8MB" }}
            tcp = {{ {LINUX} }}
            [output]
            trace_hash = true
        "#
        ))
    };
    let (a, b, c) = (run(1), run(1), run(2));
    assert!(a.summary.connection("mp").completed, "{:?}", a.summary.connection("mp"));
    assert_eq!(a.summary.trace_hash, b.summary.trace_hash);
    assert_eq!(a.summary.connection("mp").download_time_s, b.summary.connection("mp").download_time_s);
    assert_ne!(a.summary.trace_hash, c.summary.trace_hash);
    let rtx: u64 = a.summary.subflows.iter().map(|s| s.retransmitted_segments).sum();
    assert!(rtx > 0, "the losses were repaired");
}
