//! Shared helpers for the scenario tests: build scenarios from TOML, derive link timings.
#![allow(dead_code)]

use mptcplab_core::{run, RunOutput, Scenario};

pub fn scenario(toml: &str) -> Scenario {
    Scenario::from_toml_str(toml).unwrap_or_else(|e| panic!("test scenario invalid: {e}"))
}

pub fn sim(toml: &str) -> RunOutput {
    run(&scenario(toml))
}

/// Payload capacity of a link (bit/s): rate × payload / on-wire size of a full segment.
pub fn payload_capacity(rate_bps: f64, payload: f64) -> f64 {
    rate_bps * payload / (payload + 40.0 + 12.0 + if payload < 1448.0 { 28.0 } else { 0.0 })
}

/// One-way delay of a `bytes`-long packet over an idle link: serialisation + propagation (s).
pub fn one_way(bytes: f64, rate_bps: f64, delay_s: f64) -> f64 {
    bytes * 8.0 / rate_bps + delay_s
}

/// The value of a sampled series at time t (the last sample at or before t).
pub fn at(points: &[(f64, f64)], t: f64) -> f64 {
    points.iter().take_while(|(x, _)| *x <= t + 1e-12).last().map(|p| p.1).unwrap_or(0.0)
}

/// First sample time at which the series reaches `v`.
pub fn first_reaching(points: &[(f64, f64)], v: f64) -> Option<f64> {
    points.iter().find(|p| p.1 >= v).map(|p| p.0)
}

pub fn jain(x: &[f64]) -> f64 {
    let s: f64 = x.iter().sum();
    let q: f64 = x.iter().map(|v| v * v).sum();
    s * s / (x.len() as f64 * q)
}

/// Reno with Bernoulli loss `p` on a 100 Mbit/s, 100 ms RTT path with a large buffer, with
/// the TCP settings `tcp` (inline-table body): goodput within ±25 % of Mathis et al.,
/// MSS·sqrt(3/2) / (RTT·sqrt(p)).
pub fn assert_reno_follows_mathis(tcp: &str, losses: &[(f64, &str)]) {
    for &(p, label) in losses {
        let out = sim(&format!(
            r#"
            duration = "400s"
            [[paths]]
            name = "p"
            rate = "100Mbit"
            delay = "50ms"
            queue = "2000 packets"
            down = {{ loss = "{label}" }}
            [[connections]]
            name = "tcp"
            kind = "tcp"
            paths = ["p"]
            app = {{ kind = "bulk" }}
            tcp = {{ {tcp} }}
            [output]
            warmup = "20s"
        "#
        ));
        let c = out.summary.connection("tcp");
        // RTT: 100 ms propagation + serialisation of a data packet and an ACK (~0.13 ms).
        let rtt = out.summary.subflow("tcp", "p").mean_rtt_s.unwrap();
        assert!((rtt - 0.1).abs() < 0.005, "RTT {rtt}");
        let mathis = 1448.0 * 8.0 * (1.5f64).sqrt() / (rtt * p.sqrt());
        let ratio = c.goodput_bps / mathis;
        assert!(
            (0.75..=1.25).contains(&ratio),
            "{tcp} p = {p}: goodput {} vs Mathis {mathis} (ratio {ratio:.3})",
            c.goodput_bps
        );
    }
}
