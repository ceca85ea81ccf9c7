//! mptcplab-core: a deterministic packet-level simulator of TCP and Multipath TCP.
//!
//! Layout (each folder one concern):
//! - [`units`]: `Time`/`Dur` (integer ns), `Rate`, `Seq`, `Dsn`, human-unit parsing;
//! - [`rng`]: per-component seeded random streams;
//! - [`sim`]: the event queue and the driver that moves packets between endpoints and links;
//! - [`net`]: packets, links (rate, delay, queue disciplines, loss) and the topology;
//! - [`tcp`]: the sans-IO subflow endpoint (handshake, SACK recovery, RTO, delayed ACK, ...);
//! - [`cc`]: congestion control, one file per algorithm;
//! - [`mptcp`]: the connection level (DSN, DATA_ACK, buffers, reassembly) and schedulers;
//! - [`app`]: applications (bulk, download);
//! - [`trace`]: typed trace events, digests and statistics helpers;
//! - [`config`]: the one scenario schema; [`results`]: what a run returns;
//! - [`registry`]: how a family of algorithms is declared from one list.
//!
//! Layers, top to bottom (a module uses only those below it; `tests/architecture.rs` checks
//! this, the absence of import cycles between files and the 600-line limit): `sim` →
//! `results` → `mptcp` → `app`, `tcp` → `config` → `mptcp::sched`, `cc` → `registry`,
//! `tcp::pacing` → `trace` → `net` → `rng` → `units`. The schema sits below the endpoints
//! that read it and above the algorithms it builds from their own parameter types.
//!
//! A new congestion controller or scheduler is one new file plus two lines: the file holds
//! the algorithm and its parameters, in a type that builds it; the lines are its `pub mod`
//! and its arm in its family's registry (`cc/mod.rs`, `mptcp/sched/mod.rs`), from which its name, its parameter table in the schema, their checks and its
//! construction follow ([`registry::AlgorithmParams`]).

pub mod app;
pub mod cc;
pub mod config;
pub mod mptcp;
pub mod net;
pub mod registry;
pub mod results;
pub mod rng;
pub mod sim;
pub mod tcp;
pub mod trace;
pub mod units;

pub use config::{ConfigError, Scenario};
pub use results::{Handoff, RunOutput, Summary, TimeSeries};

/// The engine's version (results of different versions are not comparable run for run).
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

pub use sim::{RunOptions, Stop};
pub use trace::pcap::{CaptureError, CaptureOptions, CapturePoint};

/// Runs a validated scenario to completion with the scenario's own seed.
pub fn run(scenario: &Scenario) -> RunOutput {
    sim::Simulation::new(scenario).run()
}

/// Runs a validated scenario with the caller's options (work budget, captures, cancellation).
pub fn run_with(scenario: &Scenario, opts: &RunOptions) -> Result<RunOutput, Stop> {
    sim::Simulation::new(scenario).run_with(opts)
}

/// Parses, validates and runs a scenario given as JSON; `seed` overrides the scenario's.
pub fn run_json(scenario_json: &str, seed: Option<u64>) -> Result<RunOutput, ConfigError> {
    let sc = prepare(scenario_json, seed)?;
    Ok(run(&sc))
}

/// Why a run given as JSON produced no result.
#[derive(Debug)]
pub enum RunError {
    Config(ConfigError),
    /// More than the budget's events were needed; the simulated time reached (seconds).
    Budget {
        max_events: u64,
        reached_s: f64,
    },
    /// A capture file could not be written (the run's capture files are removed).
    Capture(CaptureError),
    /// The caller's cancellation flag was set.
    Cancelled,
}

/// As [`run_json`], giving up after `max_events` events (see [`sim::Simulation::run_with`]).
pub fn run_json_within(scenario_json: &str, seed: Option<u64>, max_events: u64) -> Result<RunOutput, RunError> {
    run_json_with(scenario_json, seed, &RunOptions { max_events: Some(max_events), ..RunOptions::default() })
}

/// As [`run_json`], with the caller's options (see [`sim::Simulation::run_with`]).
pub fn run_json_with(scenario_json: &str, seed: Option<u64>, opts: &RunOptions) -> Result<RunOutput, RunError> {
    let sc = prepare(scenario_json, seed).map_err(RunError::Config)?;
    run_with(&sc, opts).map_err(|stop| match stop {
        Stop::Budget(t) => {
            RunError::Budget { max_events: opts.max_events.unwrap_or(u64::MAX), reached_s: t.secs_f64() }
        }
        Stop::Capture(e) => RunError::Capture(e),
        Stop::Cancelled => RunError::Cancelled,
    })
}

fn prepare(scenario_json: &str, seed: Option<u64>) -> Result<Scenario, ConfigError> {
    let mut sc = Scenario::from_json_str(scenario_json)?;
    if let Some(s) = seed {
        sc.seed = s;
    }
    Ok(sc)
}
