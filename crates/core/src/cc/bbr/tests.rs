//! Unit tests of `cc::bbr`: each expected value follows from a rule of `tcp_bbr.c`, derived
//! in the comment above it. Segments are 1000 B; rates in bytes per second.

use super::*;
use crate::cc::RateSample;
use crate::config::{CaCounting, SlowStart, SlowStartBound};

const SMSS: u64 = 1000;
const MS: u64 = 1_000_000;

fn window(cwnd_segs: u64) -> Window {
    Window {
        cwnd: cwnd_segs * SMSS,
        ssthresh: u64::MAX,
        smss: SMSS,
        cnt: 0,
        slow_start: SlowStart::Linux,
        ca_counting: CaCounting::Bytes,
        bound: SlowStartBound::Below,
    }
}

/// A clean ACK on subflow 0 at `now_ms`: `acked` segments delivered, a rate sample of
/// `bw` B/s over one 40 ms interval, the RTT `rtt_ms`, `in_flight` segments after it,
/// `delivered_total` segments delivered so far with the sample's segment sent when
/// `prior` had been.
fn ack(now_ms: u64, bw: u64, rtt_ms: u64, in_flight: u64, delivered_total: u64, prior: u64) -> RateAck {
    let interval = Dur(40 * MS);
    RateAck {
        now: Time(now_ms * MS),
        sf: 0,
        rs: RateSample {
            prior_delivered: Some(prior * SMSS),
            delivered: Some(bw * 40 / 1000),
            interval: Some(interval),
            acked_sacked: SMSS,
            rtt: Some(Dur(rtt_ms * MS)),
            prior_in_flight: in_flight * SMSS,
            ..Default::default()
        },
        delivered: delivered_total * SMSS,
        delivered_mstamp: Time(now_ms * MS),
        lost: 0,
        in_flight: in_flight * SMSS,
        ca: CaState::Open,
        srtt: Some(Dur(rtt_ms * MS)),
        next_departure: Time(now_ms * MS),
    }
}

fn bbr() -> Bbr {
    Bbr::new(Rng::stream(1, "cc:test"))
}

#[test]
fn the_gains_are_linux_fixed_point_values() {
    // 2/ln 2 = 2.885 → 256 · 2885 / 1000 + 1 = 739; its inverse 256 · 1000 / 2885 = 88;
    // the probing cycle 5/4, 3/4 then six phases of 1.
    assert_eq!(HIGH_GAIN, 739);
    assert_eq!(DRAIN_GAIN, 88);
    assert_eq!(PACING_GAIN, [320, 192, 256, 256, 256, 256, 256, 256]);
    assert_eq!(BW_RTTS, 10);
}

#[test]
fn the_gain_cycle_advances_once_per_min_rtt_through_the_eight_phases() {
    // In PROBE_BW with in flight exactly at the probing target (so the 5/4 phase ends after
    // one min_rtt) and at one BDP (so the 3/4 phase lasts its full min_rtt too), each phase
    // lasts one min_rtt = 40 ms: the sequence from phase 2 is 2, 3, …, 7, 0, 1, 2.
    let mut p = Path::new(SMSS);
    p.mode = Mode::ProbeBw;
    p.min_rtt = Some(Dur(40 * MS));
    p.full_bw_reached = true;
    p.bw.reset(0, 1_000_000); // 1 MB/s × 40 ms = 40 segments BDP
    p.cycle_idx = 2;
    p.cycle_mstamp = Time(0);
    let mut seen = vec![p.cycle_idx];
    for k in 1..=8u64 {
        p.update_gains();
        // 41 ms after the phase began (strictly more than min_rtt).
        let mut a = ack(k * 41, 1_000_000, 40, 40, 1000, 0);
        a.rs.prior_in_flight = p.inflight(1_000_000, p.pacing_gain) * SMSS;
        if p.is_next_cycle_phase(&a) {
            p.advance_cycle_phase(a.delivered_mstamp);
        }
        seen.push(p.cycle_idx);
    }
    assert_eq!(seen, vec![2, 3, 4, 5, 6, 7, 0, 1, 2]);
}

#[test]
fn the_draining_phase_ends_early_once_in_flight_is_down_to_one_bdp() {
    // Phase 1 (3/4) ends before a full min_rtt when in flight ≤ bbr_inflight(bw, 1):
    // BDP 40 segments + 3 × 2 (TSO goal at 1.2 MB/s: 1 200 000 >> 10 = 1171 B → 1 segment,
    // at least 2) = 46, already even.
    let mut p = Path::new(SMSS);
    p.mode = Mode::ProbeBw;
    p.min_rtt = Some(Dur(40 * MS));
    p.bw.reset(0, 1_000_000);
    p.pacing_rate = 1_200_000;
    p.cycle_idx = 1;
    p.update_gains();
    assert_eq!(p.inflight(1_000_000, UNIT), 46);
    let mut a = ack(10, 1_000_000, 40, 46, 1000, 0);
    a.rs.prior_in_flight = 47 * SMSS;
    assert!(!p.is_next_cycle_phase(&a));
    a.rs.prior_in_flight = 46 * SMSS;
    assert!(p.is_next_cycle_phase(&a));
}

#[test]
fn the_random_start_phase_is_never_the_draining_one_and_is_seeded() {
    // Linux: cycle_idx = 8 − 1 − rand(7) ∈ {1..7}, then advanced: {2..7, 0}, never 1.
    let draw = |seed| {
        let mut rng = Rng::stream(seed, "cc:test");
        (0..200)
            .map(|_| {
                let mut p = Path::new(SMSS);
                p.reset_probe_bw_mode(&mut rng, Time::ZERO);
                p.cycle_idx
            })
            .collect::<Vec<_>>()
    };
    let a = draw(1);
    assert!(a.iter().all(|&i| i != 1));
    for phase in [0, 2, 3, 4, 5, 6, 7] {
        assert!(a.contains(&phase), "phase {phase} never drawn");
    }
    assert_eq!(a, draw(1), "same seed, same phases");
    assert_ne!(a, draw(2));
}

#[test]
fn full_pipe_is_detected_after_exactly_three_rounds_without_25_percent_growth() {
    // Rounds with bw 1.0, 2.0 (+100 %), then 2.4 (+20 % of 2.0 < 25 %), 2.4, 2.4: full_bw
    // is set to 2.0 at the second round and the three following rounds each count one.
    let mut b = bbr();
    let mut w = window(10);
    let mut delivered = 0;
    for (round, bw) in [1_000_000u64, 2_000_000, 2_400_000, 2_400_000, 2_400_000].into_iter().enumerate() {
        // One ACK per round whose sample segment was sent after the previous round ended.
        let a = ack(40 * (round as u64 + 1), bw, 40, 10, delivered + 10, delivered);
        delivered += 10;
        b.cong_control(&a, &mut w);
        let p = b.state(0).unwrap();
        let expect_cnt = [0, 0, 1, 2, 3][round];
        assert_eq!(p.full_bw_cnt, expect_cnt, "round {round}");
        assert_eq!(p.full_bw_reached, round == 4, "round {round}");
    }
    // Full pipe: STARTUP ends; the same ACK enters DRAIN and, since 10 segments in flight
    // are below one BDP, PROBE_BW at once.
    assert_eq!(b.state(0).unwrap().mode, Mode::ProbeBw);
}

#[test]
fn the_probe_bw_window_is_twice_the_bdp_plus_the_budget() {
    // bw 2.5 MB/s (20 Mbit/s), min_rtt 20 ms: BDP = 2 500 000 × 0.02 / 1000 = 50 segments.
    // PROBE_BW cwnd gain 2 → 100; TSO goal: pacing 2.5 MB/s × 0.99 >> 10 = 2416 B → 2
    // segments, budget 3 × 2 = 6 → 106, even; in phase 0 two more.
    let mut p = Path::new(SMSS);
    p.mode = Mode::ProbeBw;
    p.min_rtt = Some(Dur(20 * MS));
    p.pacing_rate = Path::pacing_rate_for(2_500_000, UNIT);
    assert_eq!(p.pacing_rate, 2_475_000);
    assert_eq!(p.tso_segs_goal(), 2);
    assert_eq!(p.bdp(2_500_000, UNIT), 50);
    p.cycle_idx = 3;
    assert_eq!(p.inflight(2_500_000, CWND_GAIN), 106);
    p.cycle_idx = 0;
    assert_eq!(p.inflight(2_500_000, CWND_GAIN), 108);
}

#[test]
fn once_the_pipe_is_full_cwnd_grows_by_what_is_acked_up_to_the_target() {
    // Target 106 segments (previous test). From 100, an ACK of 1 segment gives 101; from
    // 106, it stays at 106; from 120 (after PROBE_RTT's restore, say) it falls to 106.
    let mut p = Path::new(SMSS);
    p.mode = Mode::ProbeBw;
    p.cycle_idx = 3;
    p.cwnd_gain = CWND_GAIN;
    p.full_bw_reached = true;
    p.min_rtt = Some(Dur(20 * MS));
    p.pacing_rate = 2_475_000;
    for (from, to) in [(100, 101), (106, 106), (120, 106)] {
        let mut w = window(from);
        let a = ack(0, 2_500_000, 20, from - 1, 1000, 0);
        p.set_cwnd(&a, 2_500_000, &mut w);
        assert_eq!(w.cwnd, to * SMSS, "from {from}");
    }
}

#[test]
fn the_first_recovery_round_conserves_packets_and_leaving_restores_the_window() {
    // Entering Recovery with 30 segments in flight: cwnd = in flight + acked = 31 whatever
    // the model says; on leaving, cwnd = max(cwnd, prior_cwnd) = 80 saved at ssthresh(), and
    // the same ACK then grows it by the acked segment towards the STARTUP-gain target
    // (2.887 × 50 + budget, far above): 81.
    let mut b = bbr();
    let mut w = window(80);
    b.path(0, SMSS);
    b.ssthresh(Time::ZERO, 0, &w, &[]);
    let p = b.paths[0].as_mut().unwrap();
    p.full_bw_reached = true;
    p.mode = Mode::ProbeBw;
    p.cycle_idx = 3;
    p.min_rtt = Some(Dur(20 * MS));
    let mut a = ack(100, 2_500_000, 20, 30, 1000, 900);
    a.ca = CaState::Recovery;
    p.set_cwnd(&a, 2_500_000, &mut w);
    assert_eq!(w.cwnd, 31 * SMSS);
    assert!(p.packet_conservation);
    a.ca = CaState::Open;
    p.set_cwnd(&a, 2_500_000, &mut w);
    assert_eq!(w.cwnd, 81 * SMSS);
}

#[test]
fn probe_rtt_starts_after_10_s_without_a_lower_rtt_and_holds_4_segments_for_200_ms() {
    // min_rtt 40 ms measured at t = 0; later samples are all 50 ms, higher. The filter
    // expires strictly after 10 s: at 10.000 s still PROBE_BW, at 10.001 s PROBE_RTT with a
    // window of 4 segments. Once in flight ≤ 4, 200 ms and a round later PROBE_RTT ends and
    // the window before it (100 segments) comes back.
    let mut b = bbr();
    let mut w = window(100);
    let mut a = ack(0, 1_000_000, 40, 50, 100, 90);
    b.cong_control(&a, &mut w);
    let p = b.paths[0].as_mut().unwrap();
    p.full_bw_reached = true;
    p.mode = Mode::ProbeBw;
    p.cycle_idx = 3;
    a = ack(10_000, 1_000_000, 50, 50, 200, 190);
    w = window(100);
    b.cong_control(&a, &mut w);
    assert_eq!(b.state(0).unwrap().mode, Mode::ProbeBw);
    w = window(100);
    a = ack(10_001, 1_000_000, 50, 50, 300, 290);
    assert!(b.cong_control(&a, &mut w), "PROBE_RTT marks the subflow application-limited");
    assert_eq!(b.state(0).unwrap().mode, Mode::ProbeRtt);
    assert_eq!(w.cwnd, 4 * SMSS);
    // The expired filter took the 50 ms sample as the new min_rtt.
    assert_eq!(b.state(0).unwrap().min_rtt, Some(Dur(50 * MS)));
    // In flight drops to 4 at 10.050 s: the 200 ms clock starts (done at 10.250 s).
    a = ack(10_050, 1_000_000, 50, 4, 340, 335);
    b.cong_control(&a, &mut w);
    // A new round (sample sent after that point) at 10.251 s ends it.
    a = ack(10_251, 1_000_000, 50, 4, 360, 345);
    b.cong_control(&a, &mut w);
    let p = b.state(0).unwrap();
    assert_eq!(p.mode, Mode::ProbeBw);
    assert!(w.cwnd >= 100 * SMSS, "cwnd {} restored", w.cwnd);
}

#[test]
fn startup_paces_at_the_high_gain_and_never_slows_down_before_the_pipe_is_full() {
    // bw sample 1 MB/s: pacing 1 000 000 × 739/256 × 0.99 = 2 857 851 B/s (integer steps:
    // 1e6 × 739 / 256 = 2 886 718, × 99 / 100 = 2 857 850). A lower sample next round does not
    // lower it (the max filter keeps 1 MB/s anyway, and before full pipe the rate only grows).
    let mut b = bbr();
    let mut w = window(10);
    b.cong_control(&ack(40, 1_000_000, 40, 10, 10, 0), &mut w);
    assert_eq!(b.pacing_rate(0), 2_857_850);
    b.cong_control(&ack(80, 500_000, 40, 10, 20, 10), &mut w);
    assert_eq!(b.pacing_rate(0), 2_857_850);
}

#[test]
fn a_policer_is_detected_from_two_lossy_intervals_of_equal_rate() {
    // Long-term sampling starts at a loss; two intervals of ≥ 4 rounds, each ending with a
    // loss rate ≥ 20 % (here 25 %: 25 lost per 100 delivered) at the same delivery rate
    // (100 segments per 400 ms = 250 000 B/s), make lt_bw that rate and PROBE_BW use it.
    let mut p = Path::new(SMSS);
    p.mode = Mode::ProbeBw;
    let mut rng = Rng::stream(1, "cc:test");
    let mut lost = 0;
    let mut delivered = 0;
    let mut t = 0;
    let mut step = |p: &mut Path, round_start: bool, loss: bool, d: u64, l: u64, dt: u64| {
        delivered += d;
        lost += l;
        t += dt;
        let mut a = ack(t, 250_000, 40, 10, delivered, delivered);
        a.lost = lost * SMSS;
        a.rs.losses = if loss { SMSS } else { 0 };
        p.round_start = round_start;
        p.lt_bw_sampling(&a, &mut rng);
    };
    step(&mut p, false, true, 0, 1, 0); // first loss: sampling starts
    assert!(p.lt_is_sampling);
    for _ in 0..2 {
        for _ in 0..3 {
            step(&mut p, true, false, 25, 0, 100);
        }
        step(&mut p, true, true, 25, 25, 100);
    }
    assert!(p.lt_use_bw);
    assert_eq!(p.lt_bw, 250_000);
    p.update_gains();
    assert_eq!(p.pacing_gain, UNIT);
}

#[test]
fn an_rto_restarts_full_pipe_detection() {
    let mut b = bbr();
    let mut w = window(10);
    b.cong_control(&ack(40, 1_000_000, 40, 10, 10, 0), &mut w);
    assert!(b.state(0).unwrap().full_bw > 0);
    let a = ack(50, 0, 40, 0, 10, 0);
    b.on_rto(&a);
    let p = b.state(0).unwrap();
    assert_eq!((p.full_bw, p.prev_ca_state), (0, CaState::Loss));
}

#[test]
fn restarting_from_idle_in_probe_bw_paces_at_the_estimated_rate() {
    // bbr_cwnd_event(CA_EVENT_TX_START) after running out of data: in PROBE_BW the pacing
    // rate becomes bw × 1 × 0.99 whatever the phase's gain: 1 MB/s → 990 000 B/s. Without
    // application-limited data nothing changes.
    let mut b = bbr();
    let mut w = window(50);
    b.cong_control(&ack(40, 1_000_000, 40, 10, 10, 0), &mut w);
    let p = b.paths[0].as_mut().unwrap();
    p.full_bw_reached = true;
    p.mode = Mode::ProbeBw;
    p.cycle_idx = 0;
    p.pacing_rate = Path::pacing_rate_for(1_000_000, PACING_GAIN[0]);
    b.on_tx_start(Time(2_000 * MS), 0, false, Time::ZERO, &mut w);
    assert_eq!(b.pacing_rate(0), 1_237_500);
    b.on_tx_start(Time(2_000 * MS), 0, true, Time::ZERO, &mut w);
    assert_eq!(b.pacing_rate(0), 990_000);
    assert!(b.state(0).unwrap().idle_restart);
}
