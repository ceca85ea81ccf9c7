//! CUBIC's unit tests: the curve, the Reno-friendly region, fast convergence, idle periods,
//! HyStart and the timeout reset, against RFC 9438's equations and Linux's behaviour.

use super::*;
use crate::cc::harness::*;
use crate::config::{CaCounting, SlowStart, SlowStartBound};

const BETA: f64 = 717.0 / 1024.0;
const C: f64 = 0.4;

fn ca_window(segments: u64) -> Window {
    Window {
        cwnd: segments * 1000,
        ssthresh: 1,
        smss: 1000,
        cnt: 0,
        slow_start: SlowStart::Linux,
        ca_counting: CaCounting::Bytes,
        bound: SlowStartBound::Below,
    }
}

/// A loss at `now`, applied as the host does (cwnd = ssthresh).
fn lose(cc: &mut Cubic, now: Time, w: &mut Window) {
    w.ssthresh = cc.ssthresh(now, 0, w, &[]);
    w.cwnd = w.ssthresh;
    w.cnt = 0;
}

/// ACK-clocked congestion avoidance: one full-segment ACK every rtt/cwnd until `until`.
fn run(cc: &mut Cubic, peers: &[PeerView], w: &mut Window, from: Time, until: Time) -> Time {
    let rtt = peers[0].srtt.unwrap();
    let mut now = from;
    while now < until {
        cc.on_ack(&Ack { now, ..ack(0, peers) }, w);
        now += Dur(rtt.ns() * w.smss / w.cwnd);
    }
    now
}

#[test]
fn the_window_returns_to_w_max_after_k_seconds() {
    // RFC 9438 §4.2: after a loss at W_max = 100 segments, cwnd = β·W_max and the curve
    // reaches W_max again after K = ∛(W_max(1 − β)/C) = ∛(100·0.2998/0.4) ≈ 4.22 s.
    let peers = [peer(100, 100)];
    let mut cc = Cubic::new(&CubicParams::default());
    let mut w = ca_window(100);
    let t0 = Time(Dur::from_secs(10).ns());
    lose(&mut cc, t0, &mut w);
    assert_eq!(w.cwnd, (100_000.0 * BETA) as u64);
    let k = (100.0 * (1.0 - BETA) / C).cbrt();
    // Halfway, the concave part is still below the plateau: W(K/2) = 100 − 0.4·(K/2)³ ≈ 96.3.
    let half = run(&mut cc, &peers, &mut w, t0, t0 + Dur::from_secs_f64(k / 2.0));
    let w_half = 100.0 - C * (k / 2.0).powi(3);
    assert!((w.cwnd as f64 / 1000.0 - w_half).abs() <= 1.5, "{} vs {w_half}", w.cwnd);
    run(&mut cc, &peers, &mut w, half, t0 + Dur::from_secs_f64(k));
    assert!(w.cwnd.abs_diff(100_000) <= 1000, "cwnd {} at K = {k:.2} s", w.cwnd);
}

#[test]
fn the_reno_friendly_region_dominates_at_small_bdp() {
    // RFC 9438 §4.3: W_max = 10 segments, RTT 10 ms. K = ∛(10·0.3/0.4) ≈ 1.96 s, so the
    // cubic curve alone would be at 10 − 0.4·(1.96 − 0.5)³ ≈ 8.8 segments after 0.5 s, while
    // W_est = 7 + α_cubic·50 RTTs = 7 + 0.529·50 ≈ 33.5 segments (an AIMD flow with β 0.7).
    let peers = [peer(10, 10)];
    let k = (10.0 * (1.0 - BETA) / C).cbrt();
    let w_cubic = 10.0 - C * (k - 0.5).powi(3);
    let alpha = 3.0 * (1.0 - BETA) / (1.0 + BETA);
    let w_est = 10.0 * BETA + alpha * 50.0;
    let t0 = Time::ZERO;
    let half_second = t0 + Dur::from_ms(500);

    let mut friendly = Cubic::new(&CubicParams::default());
    let mut w = ca_window(10);
    lose(&mut friendly, t0, &mut w);
    run(&mut friendly, &peers, &mut w, t0, half_second);
    let segments = w.cwnd as f64 / 1000.0;
    assert!(segments >= w_est - 2.0, "{segments} vs W_est {w_est:.1}");
    assert!(segments <= w_est + 2.0, "{segments} vs W_est {w_est:.1}");

    let mut pure = Cubic::new(&CubicParams { tcp_friendliness: false, ..CubicParams::default() });
    let mut w = ca_window(10);
    lose(&mut pure, t0, &mut w);
    run(&mut pure, &peers, &mut w, t0, half_second);
    let segments = w.cwnd as f64 / 1000.0;
    assert!((segments - w_cubic).abs() <= 1.0, "{segments} vs W_cubic {w_cubic:.1}");
}

#[test]
fn fast_convergence_lowers_w_max_after_a_loss_below_it() {
    let mut cc = Cubic::new(&CubicParams::default());
    let mut w = ca_window(100);
    lose(&mut cc, Time::ZERO, &mut w);
    assert_eq!(cc.paths[0].w_max, 100.0);
    let mut w = ca_window(80);
    lose(&mut cc, Time::ZERO, &mut w);
    assert!((cc.paths[0].w_max - 80.0 * (1.0 + BETA) / 2.0).abs() < 1e-9);
    assert_eq!(w.cwnd, (80_000.0 * BETA) as u64);

    let mut slow = Cubic::new(&CubicParams { fast_convergence: false, ..CubicParams::default() });
    lose(&mut slow, Time::ZERO, &mut ca_window(100));
    lose(&mut slow, Time::ZERO, &mut ca_window(80));
    assert_eq!(slow.paths[0].w_max, 80.0);
}

#[test]
fn an_idle_restart_starts_a_new_epoch() {
    // Without a restart, 10 s of idling puts t far beyond K, in the convex region, where
    // cwnd grows by half a segment per ACK; after a restart the curve starts again from the
    // current window, on its flat concave part.
    let peers = [peer(100, 100)];
    let grow_after_idle = |restart: bool| {
        let mut cc = Cubic::new(&CubicParams::default());
        let mut w = ca_window(100);
        lose(&mut cc, Time::ZERO, &mut w);
        let t = run(&mut cc, &peers, &mut w, Time::ZERO, Time(Dur::from_secs(1).ns()));
        let back = t + Dur::from_secs(10);
        if restart {
            cc.on_idle_restart(back, 0);
        }
        let before = w.cwnd;
        for _ in 0..20 {
            cc.on_ack(&Ack { now: back, ..ack(0, &peers) }, &mut w);
        }
        (w.cwnd - before) / 1000
    };
    // 20 ACKs at cnt = 2 give 10 segments (+1 for credit left from the larger cnt before).
    assert!((10..=11).contains(&grow_after_idle(false)));
    assert!(grow_after_idle(true) <= 1);
}

#[test]
fn with_idle_shift_the_curve_does_not_count_idle_time() {
    // Linux >= 4.1 (`cubictcp_cwnd_event(CA_EVENT_TX_START)`): a subflow that idles for
    // 2 s between bursts resumes on its curve where it left it. After a loss at W_max = 100
    // segments (K = 4.217 s), 1 s of ACKs at RTT 100 ms, then 2 s idle, then half a second
    // of ACKs. With `shift` the target moves along the curve from t = 1.1 s to 1.6 s
    // (one minimum RTT ahead): W = 100 − 0.4·(K − t)³ goes from 87.9 to 92.8, about 5
    // segments, the same as without the pause. With `restart` (no idle restart: that is
    // the host's, after an RTO) the pause counts: the target is W(3.1 s) = 99.4 and the
    // window, near 88, climbs to it at up to half a segment per ACK, about 12 segments.
    let peers = [peer(100, 100)];
    let after_pause = |idle: CubicIdle, pause: bool| {
        let mut cc = Cubic::new(&CubicParams { idle, ..CubicParams::default() });
        let mut w = ca_window(100);
        lose(&mut cc, Time::ZERO, &mut w);
        let t = run(&mut cc, &peers, &mut w, Time::ZERO, Time(Dur::from_secs(1).ns()));
        let back = if pause { t + Dur::from_secs(2) } else { t };
        cc.on_tx_start(back, 0, true, t, &mut w);
        let before = w.cwnd;
        run(&mut cc, &peers, &mut w, back, back + Dur::from_ms(500));
        (w.cwnd - before) / 1000
    };
    assert_eq!(after_pause(CubicIdle::Shift, false), 5);
    // The shift is counted in whole 4 ms jiffies: at most one jiffy of the pause counts.
    assert_eq!(after_pause(CubicIdle::Shift, true), 5);
    assert!((11..=14).contains(&after_pause(CubicIdle::Restart, true)));
}

#[test]
fn the_idle_shift_counts_whole_jiffies_and_never_passes_now() {
    let ms = |x: f64| Time((x * 1e6) as u64);
    // 1.0021 s and 1.0039 s lie in the same 4 ms tick: no shift.
    assert_eq!(jiffies_between(ms(1002.1), ms(1003.9)), Dur::ZERO);
    // 1.0039 s and 1.0041 s straddle a tick: a whole jiffy.
    assert_eq!(jiffies_between(ms(1003.9), ms(1004.1)), Dur::from_ms(4));
    let mut cc = Cubic::new(&CubicParams { idle: CubicIdle::Shift, ..CubicParams::default() });
    let mut w = ca_window(50);
    cc.path(0).epoch_start = Some(ms(1003.0));
    cc.on_tx_start(ms(1004.1), 0, true, ms(1003.9), &mut w);
    // epoch + 4 ms = 1.007 s lies after now: the epoch starts now (`after(epoch_start, now)`).
    assert_eq!(cc.paths[0].epoch_start, Some(ms(1004.1)));
}

#[test]
fn growth_before_the_first_loss_is_capped_at_five_percent_per_rtt() {
    // W_max unknown: cnt ≤ 20, so a 40-segment window gains 2 segments per window of ACKs.
    let peers = [peer(40, 100)];
    let mut cc = Cubic::new(&CubicParams { tcp_friendliness: false, ..CubicParams::default() });
    let mut w = ca_window(40);
    for _ in 0..40 {
        cc.on_ack(&ack(0, &peers), &mut w);
    }
    assert_eq!(w.cwnd, 42_000);
}

#[test]
fn hystart_ack_train_ends_slow_start_once_a_round_spans_half_the_base_rtt() {
    // Base RTT 40 ms, cwnd 20 segments, SRTT 40 ms: Linux's pacing rate 2·cwnd/SRTT makes
    // the ack delay min(1 ms, 4·64 KB / rate) = 1 ms, so the threshold is (40 + 1)/2 =
    // 20.5 ms after the round's first ACK. ACKs 1 ms apart (a train) end slow start at
    // the ACK 21 ms in, not at 20 ms; ACKs 3 ms apart break the train and never do (their
    // RTT stays at the minimum, so delay detection stays quiet too).
    for (gap_ms, acks, exits) in [(1u64, 20u64, false), (1, 21, true), (3, 40, false)] {
        let mut cubic = Cubic::new(&CubicParams::default());
        let p = [PeerView { srtt: Some(Dur::from_ms(40)), ..peer(20, 40) }];
        let mut w = Window { ssthresh: u64::MAX, cwnd: 20 * 1000, ..window_of(&p[0]) };
        let first = Ack { rtt: Some(Dur::from_ms(40)), snd_una: Seq(0), snd_nxt: Seq(1_000_000), ..ack(0, &p) };
        cubic.pkts_acked(&first, &mut w);
        for k in 1..=acks {
            let a = Ack {
                now: Time::ZERO + Dur::from_ms(k * gap_ms),
                rtt: Some(Dur::from_ms(40)),
                snd_una: Seq(k),
                snd_nxt: Seq(1_000_000),
                ..ack(0, &p)
            };
            w.cwnd = 20 * 1000; // hold the window, as if the growth were not applied
            cubic.pkts_acked(&a, &mut w);
        }
        assert_eq!(!w.in_slow_start(), exits, "gap {gap_ms} ms, {acks} ACKs: ssthresh {}", w.ssthresh);
    }
}

#[test]
fn hystart_leaves_slow_start_when_the_rtt_rises_by_the_threshold() {
    // Base RTT 40 ms: the threshold is clamp(40/8 = 5 ms, 4, 16) = 5 ms. A round whose
    // first 8 samples are all >= 46 ms ends slow start at the 9th sample; 44 ms does not.
    for (rtt_ms, exits) in [(44u64, false), (46, true)] {
        let mut cubic = Cubic::new(&CubicParams::default());
        let p = [peer(20, 40)];
        let mut w = Window { ssthresh: u64::MAX, ..window_of(&p[0]) };
        let base = Ack { rtt: Some(Dur::from_ms(40)), snd_una: Seq(0), snd_nxt: Seq(20_000), ..ack(0, &p) };
        cubic.pkts_acked(&base, &mut w);
        // Next round: snd_una passes 20 000.
        for k in 0..9u64 {
            let a =
                Ack { rtt: Some(Dur::from_ms(rtt_ms)), snd_una: Seq(20_001 + k), snd_nxt: Seq(60_000), ..ack(0, &p) };
            cubic.pkts_acked(&a, &mut w);
        }
        assert_eq!(!w.in_slow_start(), exits, "rtt {rtt_ms} ms: cwnd {} ssthresh {}", w.cwnd, w.ssthresh);
    }
}

/// Linux's `ca->found`: once HyStart has ended slow start it stays quiet through later
/// window reductions (cwnd held below ssthresh by PRR in a fast recovery does not re-arm
/// it), until a timeout (`cubictcp_state` with `TCP_CA_Loss`) resets it, lowest RTT
/// included.
#[test]
fn hystart_fires_once_until_a_timeout_resets_it() {
    let mut cubic = Cubic::new(&CubicParams::default());
    let p = [peer(20, 40)];
    let mut w = Window { ssthresh: u64::MAX, ..window_of(&p[0]) };
    // Base RTT 40 ms (threshold 5 ms); a round whose first 9 samples are 46 ms ends slow
    // start at cwnd 20 segments.
    let round = |cubic: &mut Cubic, w: &mut Window, una0: u64, rtt_ms: u64| {
        let base = Ack { rtt: Some(Dur::from_ms(40)), snd_una: Seq(una0), snd_nxt: Seq(una0 + 20_000), ..ack(0, &p) };
        cubic.pkts_acked(&base, w);
        for k in 0..9u64 {
            let a = Ack {
                rtt: Some(Dur::from_ms(rtt_ms)),
                snd_una: Seq(una0 + 20_001 + k),
                snd_nxt: Seq(una0 + 60_000),
                ..ack(0, &p)
            };
            cubic.pkts_acked(&a, w);
        }
    };
    round(&mut cubic, &mut w, 0, 46);
    assert_eq!(w.ssthresh, 20_000);
    // During a fast recovery PRR holds cwnd (17 segments) below ssthresh (18): slow
    // start by Linux's test, but HyStart stays quiet however high the RTT.
    w.cwnd = 17 * 1000; // at least HyStart's low window of 16 segments
    w.ssthresh = 18_000;
    round(&mut cubic, &mut w, 100_000, 60);
    assert_eq!(w.ssthresh, 18_000);
    // A timeout resets it: the next slow start's round ends it again.
    cubic.set_loss_state(Time::ZERO, 0, Seq(200_000));
    w.ssthresh = u64::MAX;
    round(&mut cubic, &mut w, 200_000, 46);
    assert_eq!(w.ssthresh, 17_000);
}

/// Linux `tcp_enter_loss`: ssthresh first (cubictcp_recalc_ssthresh, which records W_max),
/// then `cubictcp_state(TCP_CA_Loss)` → `bictcp_reset` zeroes W_max and the epoch. The
/// next epoch therefore starts on its plateau (K = 0, origin = cwnd), where after a fast
/// recovery it starts below W_max (K > 0).
#[test]
fn a_timeout_forgets_w_max_after_ssthresh_used_it() {
    let p = [peer(20, 40)];
    let w = ca_window(100);
    let mut fr = Cubic::new(&CubicParams::default());
    let ss = fr.ssthresh(Time::ZERO, 0, &w, &p);
    assert_eq!(ss, (100_000.0 * BETA) as u64);
    assert_eq!(fr.paths[0].w_max, 100.0);
    let mut rto = Cubic::new(&CubicParams::default());
    assert_eq!(rto.ssthresh(Time::ZERO, 0, &w, &p), ss);
    rto.set_loss_state(Time::ZERO, 0, Seq(0));
    assert_eq!(rto.paths[0].w_max, 0.0);
    // The first congestion-avoidance ACK at cwnd = ssthresh opens an epoch.
    let w70 = ca_window(70);
    fr.cnt(0, Time::ZERO, &w70, 1000, Dur::from_ms(40));
    rto.cnt(0, Time::ZERO, &w70, 1000, Dur::from_ms(40));
    assert!(fr.paths[0].k > 0.0 && fr.paths[0].origin == 100.0);
    assert_eq!((rto.paths[0].k, rto.paths[0].origin), (0.0, 70.0));
}

#[test]
fn hystart_rounds_end_when_the_ack_passes_their_end_so_a_flight_is_one_train() {
    // Base RTT 20 ms, SRTT 20 ms, cwnd 20 segments: the ack delay is min(1 ms, 4·64 KB /
    // (2·20 000 B / 20 ms)) = 1 ms, so the train threshold is (20 + 1)/2 = 10.5 ms after
    // the round's first ACK. Flight 1: ACKs 1 ms apart from 0 to 9 ms, the last one
    // reaching the round's end (snd_una = 20 000 = snd_nxt at the round's start). An idle
    // gap, then flight 2: its first ACK at 20 ms passes the end and starts a round; its ACKs
    // 1 ms apart form one train, which ends slow start at the first ACK more than 10.5 ms
    // in: at 31 ms (11 ms), not at 30 ms (10 ms). Had the round restarted at the ACK that
    // reached its end (9 ms), the 11 ms gap would have broken the train for the whole round.
    for (last_ms, exits) in [(30u64, false), (31, true)] {
        let mut cubic = Cubic::new(&CubicParams::default());
        let p = [PeerView { srtt: Some(Dur::from_ms(20)), ..peer(20, 20) }];
        let mut w = Window { ssthresh: u64::MAX, cwnd: 20 * 1000, ..window_of(&p[0]) };
        let mut on = |t_ms: u64, una: u64, nxt: u64, w: &mut Window| {
            let a = Ack {
                now: Time::ZERO + Dur::from_ms(t_ms),
                rtt: Some(Dur::from_ms(20)),
                snd_una: Seq(una),
                snd_nxt: Seq(nxt),
                ..ack(0, &p)
            };
            w.cwnd = 20 * 1000; // hold the window, as if the growth were not applied
            cubic.pkts_acked(&a, w);
        };
        // Flight 1: each ACK acknowledges 2 000 B; slow start had sent 2 B for each byte
        // acknowledged before it, so snd_nxt has grown past the round's end by then.
        on(0, 2_000, 20_000, &mut w);
        for k in 1..=9u64 {
            on(k, 2_000 * (k + 1), 20_000 + 4_000 * k, &mut w);
        }
        assert!(w.in_slow_start());
        for t in 20..=last_ms {
            on(t, 20_000 + 1_000 * (t - 19), 60_000, &mut w);
        }
        assert_eq!(!w.in_slow_start(), exits, "last ACK at {last_ms} ms: ssthresh {}", w.ssthresh);
    }
}
