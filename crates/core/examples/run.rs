//! Runs a scenario file and prints the summary as JSON: `cargo run --release --example run -- FILE.toml [SEED]`.
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let Some(path) = args.get(1) else {
        eprintln!("usage: run SCENARIO.toml [SEED]");
        std::process::exit(2);
    };
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| {
        eprintln!("error: {path}: {e}");
        std::process::exit(2);
    });
    let mut sc = mptcplab_core::Scenario::from_toml_str(&text).unwrap_or_else(|e| {
        eprintln!("error: {path}: {e}");
        std::process::exit(2);
    });
    if let Some(seed) = args.get(2) {
        sc.seed = seed.parse().expect("SEED must be an integer");
    }
    let t0 = Instant::now();
    let out = mptcplab_core::run(&sc);
    let wall = t0.elapsed().as_secs_f64();
    println!("{}", serde_json::to_string_pretty(&out.summary).expect("json"));
    eprintln!(
        "wall {wall:.3} s, {} events, {} data packets, {:.0} data packets/s",
        out.summary.events,
        out.summary.data_packets,
        out.summary.data_packets as f64 / wall
    );
}
