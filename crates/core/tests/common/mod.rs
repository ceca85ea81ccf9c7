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
