//! mptcplab-core: a deterministic packet-level simulator of TCP and Multipath TCP.
//!
//! Layout (each folder one concern; a new algorithm touches one new file and one enum arm):
//! - [`units`]: `Time`/`Dur` (integer ns), `Rate`, `Seq`, `Dsn`, human-unit parsing;
//! - [`rng`]: per-component seeded random streams;
//! - [`sim`]: the event queue and the driver that moves packets between endpoints and links;
//! - [`net`]: packets, links (rate, delay, queue, loss) and the topology;
//! - [`tcp`]: the sans-IO subflow endpoint (handshake, SACK recovery, RTO, delayed ACK, ...);
//! - [`cc`]: congestion control, one file per algorithm;
//! - [`mptcp`]: the connection level (DSN, DATA_ACK, buffers, reassembly) and schedulers;
//! - [`app`]: applications (bulk, download);
//! - [`trace`]: typed trace events, digests and statistics helpers;
//! - [`config`]: the one scenario schema; [`results`]: what a run returns.

pub mod app;
pub mod cc;
pub mod config;
pub mod mptcp;
pub mod net;
pub mod results;
pub mod rng;
pub mod sim;
pub mod tcp;
pub mod trace;
pub mod units;

pub use config::{ConfigError, Scenario};
pub use results::{RunOutput, Summary, TimeSeries};

/// The engine's version (results of different versions are not comparable run for run).
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Runs a validated scenario to completion with the scenario's own seed.
pub fn run(scenario: &Scenario) -> RunOutput {
    sim::Simulation::new(scenario).run()
}

/// Parses, validates and runs a scenario given as JSON; `seed` overrides the scenario's.
pub fn run_json(scenario_json: &str, seed: Option<u64>) -> Result<RunOutput, ConfigError> {
    let mut sc = Scenario::from_json_str(scenario_json)?;
    if let Some(s) = seed {
        sc.seed = s;
    }
    if let Some(cap) = &sc.output.pcap {
        // Refuse an unwritable capture directory before simulating anything.
        trace::pcap::check_dir(std::path::Path::new(&cap.dir)).map_err(|e| ConfigError::new("output.pcap.dir", e))?;
    }
    Ok(run(&sc))
}
