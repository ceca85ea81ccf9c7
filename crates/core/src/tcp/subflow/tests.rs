//! Unit tests of the subflow: window use, Nagle, the calls a controller gets, and the state
//! transitions recorded through `set_state` / `set_ca_state`.

use super::*;
use crate::cc::{Ack, CongestionControl};
use crate::tcp::state::Transition;
use crate::units::Dur;

fn subflow(rule: CwndLimited) -> Subflow {
    let p = TcpParams {
        smss: 1000,
        mss_cache: 1000,
        iw: 10,
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
        recovery: Recovery::Rfc6675,
        prr: false,
        quickack: false,
        ooo_ack: Default::default(),
        cwnd_limited: rule,
        cwnd_unit: Default::default(),
        tso_defer: false,
        sndbuf_check: Default::default(),
        rtt_sample: Default::default(),
        cwv: false,
        tsq: crate::config::TsqRule::Off,
        tx_skb_truesize: None,
    };
    Subflow::new(0, 0, false, State::Established, p)
}

/// Everything sent so far is acknowledged (the bookkeeping only; no congestion control).
fn ack_all(s: &mut Subflow) {
    s.snd_una = s.snd_nxt;
    s.sb.ack(s.snd_nxt, Time::ZERO);
}

fn send(s: &mut Subflow, n: u64) {
    for _ in 0..n {
        let dsn = Dsn(s.snd_nxt.0);
        s.send_new(Time::ZERO, 1000, dsn);
    }
}

/// Linux `tcp_cwnd_validate` → `tcp_cwnd_application_limited`, worked by hand with
/// 1000-byte segments, IW 10 and the initial RTO of 1 s: a 100-segment window in
/// congestion avoidance (ssthresh 50) of which at most 20 segments are used. The first
/// check starts the clock; one within the RTO changes nothing; one after it sets ssthresh
/// to max(50, ¾ × 100) = 75 and cwnd to (100 + max(20, 10)) / 2 = 60 segments. A writer
/// waiting for send-buffer space (`SOCK_NOSPACE`) keeps the window; a full window resets
/// the clock.
#[test]
fn an_application_limited_window_decays_halfway_to_what_it_used_after_an_rto() {
    let mk = || {
        let mut s = subflow(CwndLimited::Linux);
        s.p.cwv = true;
        s.p.idle_restart = true;
        s.w.cwnd = 100_000;
        s.w.ssthresh = 50_000;
        send(&mut s, 20);
        s
    };
    let t = |ms| Time::ZERO + Dur::from_ms(ms);
    let mut s = mk();
    s.cwnd_app_check(t(0), false);
    s.cwnd_app_check(t(999), false);
    assert_eq!((s.w.cwnd, s.w.ssthresh), (100_000, 50_000));
    s.cwnd_app_check(t(1000), false);
    assert_eq!((s.w.cwnd, s.w.ssthresh, s.stats.cwv_decays), (60_000, 75_000, 1));
    // The clock restarted at the decay: the next one is an RTO later.
    s.cwnd_app_check(t(1999), false);
    assert_eq!(s.w.cwnd, 60_000);
    s.cwnd_app_check(t(2000), false);
    assert_eq!(s.w.cwnd, 40_000, "(60 + 20) / 2 segments");

    let mut s = mk();
    s.cwnd_app_check(t(0), true);
    s.cwnd_app_check(t(1500), true);
    assert_eq!((s.w.cwnd, s.stats.cwv_decays), (100_000, 0), "the writer waits for memory");

    let mut s = mk();
    s.cwnd_app_check(t(0), false);
    s.w.cwnd = 20_000;
    s.w.ssthresh = 10_000;
    s.cwnd_validate(true); // a transmit attempt found the window full
    s.cwnd_app_check(t(900), false);
    s.w.cwnd = 100_000;
    s.w.ssthresh = 50_000;
    s.cwnd_validate(false);
    ack_all(&mut s);
    send(&mut s, 20);
    s.cwnd_app_check(t(1500), false);
    assert_eq!(s.w.cwnd, 100_000, "the clock restarted at 0.9 s, when the window was full");
    s.cwnd_app_check(t(1900), false);
    assert_eq!(s.w.cwnd, 60_000);
}

/// Linux `tcp_cong_avoid` restarts RFC 2861's clock (`snd_cwnd_stamp`) at every ACK of new
/// data outside a window reduction, whether or not the window then grows: the window of a
/// subflow whose data keeps being acknowledged never decays. The same 100-segment window
/// with 20 segments used: the first check at 0 starts the clock; an ACK of 5 segments at
/// 0.5 s (an RTT sample of 500 ms: RTO 500 + 4 × 250 = 1500 ms) restarts it, so a check at
/// 1.999 s changes nothing and one at 2 s decays cwnd to (100 + 20) / 2 = 60 segments.
#[test]
fn an_ack_of_new_data_restarts_the_clock_of_the_decay() {
    let mut s = subflow(CwndLimited::Linux);
    (s.p.cwv, s.p.idle_restart) = (true, true);
    s.set_state(Time::ZERO, State::Established);
    (s.w.cwnd, s.w.ssthresh) = (100_000, 50_000);
    send(&mut s, 20);
    let t = |ms| Time::ZERO + Dur::from_ms(ms);
    s.cwnd_app_check(t(0), false);
    s.on_ack(t(500), Seq(5_000), &[], &mut Calls::default(), &[]);
    assert_eq!(s.rtt.rto(), Dur::from_ms(1500));
    s.cwnd_app_check(t(1999), false);
    assert_eq!(s.w.cwnd, 100_000);
    s.cwnd_app_check(t(2000), false);
    assert_eq!(s.w.cwnd, 60_000);
}

#[test]
fn nagle_with_minshall_holds_a_short_segment_while_an_earlier_short_one_is_unacknowledged() {
    // Linux `tcp_nagle_check` with nonagle = 0: partial && packets_out && tcp_minshall_check.
    let mut s = subflow(CwndLimited::Linux);
    // Nothing outstanding: a short segment goes.
    assert!(!s.nagle_holds(300, true));
    send(&mut s, 2);
    // Full segments outstanding, no short one: it goes (Minshall's variant, not RFC 896).
    assert!(!s.nagle_holds(300, true));
    s.send_new(Time::ZERO, 300, Dsn(2000));
    assert_eq!(s.snd_sml, Seq(2300));
    // A second short segment waits while the first is unacknowledged; a full one, or a
    // short one with more data queued behind it (not the last), does not.
    assert!(s.nagle_holds(124, true));
    assert!(!s.nagle_holds(1000, true));
    assert!(!s.nagle_holds(124, false));
    // The first short segment acknowledged: the next may go.
    ack_all(&mut s);
    assert!(!s.nagle_holds(124, true));
}

/// Counts the calls a controller gets.
#[derive(Default)]
struct Calls {
    pkts_acked: u32,
    on_ack: u32,
}

impl CongestionControl for Calls {
    fn name(&self) -> &'static str {
        "calls"
    }
    fn on_ack(&mut self, _ack: &Ack, _w: &mut Window) {
        self.on_ack += 1;
    }
    fn pkts_acked(&mut self, ack: &Ack, _w: &mut Window) {
        assert!(ack.rtt.is_some(), "an in-order first transmission gives an RTT sample");
        self.pkts_acked += 1;
    }
    fn has_pkts_acked(&self) -> bool {
        true
    }
    fn ssthresh(&mut self, _now: Time, _sf: usize, w: &Window, _peers: &[PeerView]) -> u64 {
        w.cwnd / 2
    }
}

/// Linux calls `pkts_acked` (CUBIC's HyStart sampling) from `tcp_clean_rtx_queue` for every
/// ACK of new data, and `cong_avoid` only while the window may grow: in congestion
/// avoidance with 5 of 50 segments in flight, two ACKs reach the one and not the other.
#[test]
fn every_ack_reaches_pkts_acked_but_only_a_used_window_grows() {
    let mut s = subflow(CwndLimited::Linux);
    s.w.cwnd = 50_000;
    s.w.ssthresh = 20_000;
    s.set_state(Time::ZERO, State::Established);
    send(&mut s, 5);
    let mut cc = Calls::default();
    // As the endpoint sets it when it creates the subflow.
    s.pkts_acked = cc.has_pkts_acked();
    let now = Time::ZERO + Dur::from_ms(30);
    s.on_ack(now, Seq(2_000), &[], &mut cc, &[]);
    s.on_ack(now, Seq(5_000), &[], &mut cc, &[]);
    assert_eq!((cc.pkts_acked, cc.on_ack), (2, 0));
    // A full window (50 of 50 in flight): the next ACK may grow it.
    send(&mut s, 50);
    s.on_ack(now, Seq(7_000), &[], &mut cc, &[]);
    assert_eq!((cc.pkts_acked, cc.on_ack), (3, 1));
}

/// Linux 6.x `tcp_cwnd_validate` / `tcp_is_cwnd_limited`, worked by hand. Slow start,
/// cwnd 50: a window of 40 segments, all acknowledged, then a window of 10. The kernel
/// forgets the 40 (`max_packets_out` restarts with the new window), so slow start may
/// grow cwnd only while it is below 2 × 10 segments.
#[test]
fn linux_counts_the_flight_of_the_current_window_only() {
    let mut s = subflow(CwndLimited::Linux);
    s.w.cwnd = 50_000;
    send(&mut s, 40);
    assert!(s.cwnd_limited(), "slow start: 50 < 2 × 40");
    ack_all(&mut s);
    send(&mut s, 10);
    assert_eq!(s.max_out, 10_000);
    s.w.cwnd = 30_000;
    assert!(!s.cwnd_limited(), "30 >= 2 × 10: the window is not used");
    s.w.cwnd = 15_000;
    assert!(s.cwnd_limited(), "15 < 2 × 10");
}

/// Congestion avoidance (cwnd above ssthresh): the window counts as used once a send
/// filled it, until a window passes in which no attempt filled it.
#[test]
fn linux_counts_a_filled_window_until_the_next_window() {
    let mut s = subflow(CwndLimited::Linux);
    s.w.ssthresh = 5_000;
    s.w.cwnd = 10_000;
    send(&mut s, 9);
    assert!(!s.cwnd_limited(), "9 of 10 segments: not full");
    send(&mut s, 1);
    assert!(s.cwnd_limited(), "the tenth segment filled the window");
    s.snd_una = Seq(s.snd_nxt.0 - 5_000);
    s.sb.ack(s.snd_una, Time::ZERO);
    assert!(s.cwnd_limited(), "the window of the filling send has not passed");
    ack_all(&mut s);
    send(&mut s, 3);
    assert!(!s.cwnd_limited(), "a new window with 3 of 10 segments");
    // A transmit attempt refused by the full window records it as used at once.
    s.cwnd_validate(true);
    assert!(s.cwnd_limited());
}

/// A controller that halves the window on a loss and never grows it.
struct Halving;

impl CongestionControl for Halving {
    fn name(&self) -> &'static str {
        "halving"
    }
    fn on_ack(&mut self, _ack: &Ack, _w: &mut Window) {}
    fn ssthresh(&mut self, _now: Time, _sf: usize, w: &Window, _peers: &[PeerView]) -> u64 {
        w.cwnd / 2
    }
}

/// A loss episode, then a timeout, on an RFC 6675 sender (DupThresh 3), and the transitions
/// recorded. Expected from RFC 6675 §5 and Linux `tcp_fastretrans_alert`:
/// - setup: SYN_SENT → ESTABLISHED when the SYN/ACK arrives (the connection level calls
///   `set_state`, Linux `tcp_finish_connect`);
/// - the first SACK with no segment lost: Open → Disorder (Linux `tcp_try_to_open`);
/// - DupThresh segments SACKed above the hole: the hole is lost (RFC 6675 IsLost), fast
///   recovery starts with RecoveryPoint = snd_nxt: Disorder → Recovery (Linux
///   `tcp_time_to_recover` → `tcp_enter_recovery`);
/// - a partial ACK below RecoveryPoint keeps Recovery (RFC 6675 §5 step (C));
/// - the cumulative ACK reaching RecoveryPoint ends it: Recovery → Open (Linux: snd_una at
///   `high_seq` → `tcp_end_cwnd_reduction`, `tcp_try_to_open`);
/// - the retransmission timer fires: Open → Loss (RFC 6298 §5.5, Linux `tcp_enter_loss`);
///   a second timeout stays in Loss (no transition recorded);
/// - the cumulative ACK reaching snd_nxt as of the timeout: Loss → Open.
#[test]
fn a_loss_episode_and_a_timeout_record_each_state_transition_once() {
    let ms = |m: u64| Time::ZERO + Dur::from_ms(m);
    let mut s = subflow(CwndLimited::Linux);
    s.state = State::SynSent;
    s.enable_trace();
    s.set_state(ms(0), State::Established);
    let mut cc = Halving;
    send(&mut s, 10);
    // Segment 0 is lost; 1 arrives: one SACKed segment, nothing lost yet.
    s.on_ack(ms(100), Seq(0), &[(Seq(1000), Seq(2000))], &mut cc, &[]);
    // 2 and 3 arrive: three SACKed above the hole.
    s.on_ack(ms(101), Seq(0), &[(Seq(1000), Seq(4000))], &mut cc, &[]);
    assert_eq!(s.retransmit_next(ms(101), true).map(|g| g.seq), Some(Seq(0)));
    s.on_ack(ms(102), Seq(4000), &[], &mut cc, &[]);
    assert_eq!(s.ca(), CaState::Recovery, "a partial ACK");
    s.on_ack(ms(103), Seq(10_000), &[], &mut cc, &[]);
    send(&mut s, 5);
    s.on_rto(ms(1500), &mut cc, &[]);
    s.on_rto(ms(3500), &mut cc, &[]);
    s.on_ack(ms(3600), Seq(15_000), &[], &mut cc, &[]);

    use CaState::*;
    let ca = |t, from, to| (ms(t), Transition::CaState { sf: 0, from, to });
    assert_eq!(
        s.trace(),
        [
            (ms(0), Transition::TcpState { sf: 0, from: State::SynSent, to: State::Established }),
            ca(100, Open, Disorder),
            ca(101, Disorder, Recovery),
            ca(103, Recovery, Open),
            ca(1500, Open, Loss),
            ca(3600, Loss, Open),
        ]
    );
}

#[test]
fn without_a_trace_nothing_is_recorded() {
    let mut s = subflow(CwndLimited::Linux);
    send(&mut s, 2);
    s.on_rto(Time::ZERO + Dur::from_ms(1000), &mut Halving, &[]);
    assert_eq!(s.ca(), CaState::Loss);
    assert!(s.trace().is_empty());
}

/// Linux counts the congestion window in packets (`tcp.cwnd_unit = "packets"`):
/// `tcp_cwnd_test` lets a segment leave while fewer packets than cwnd are in flight, whatever
/// their size, and `tcp_slow_start` adds the packets an ACK acknowledged. With 500-byte
/// segments (a writer's short pieces) and an initial window of 10 packets of 1000 B: 10
/// segments leave, and their ACK grows the window to 20 packets (20 000 B). Counted in bytes
/// (RFC 5681 with byte counting), 19 leave (the 19th while 9 000 + 1 000 <= 10 000 B) and
/// their ACK adds their 9 500 bytes (19 500 B).
#[test]
fn a_window_counted_in_packets_admits_and_grows_by_segments() {
    for (unit, sent, cwnd) in [(CwndUnit::Packets, 10, 20_000), (CwndUnit::Bytes, 19, 19_500)] {
        let mut s = subflow(CwndLimited::Linux);
        s.p.cwnd_unit = unit;
        let mut n = 0;
        while s.has_room() {
            let dsn = Dsn(s.snd_nxt.0);
            s.send_new(Time::ZERO, 500, dsn);
            n += 1;
        }
        assert_eq!(n, sent, "{unit:?}");
        let t = Time::ZERO + Dur::from_ms(100);
        s.on_ack(t, s.snd_nxt, &[], &mut crate::cc::reno::Reno, &[]);
        assert_eq!(s.w.cwnd, cwnd, "{unit:?}");
    }
}
