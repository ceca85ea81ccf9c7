//! Engine throughput benchmark on the reference scenario (see BENCHMARKS.md).
//!
//! 2-path MPTCP with LIA, bulk transfer for 60 s simulated:
//! path `fast` = 480 Mbit/s, 10 ms base RTT; path `slow` = 2 Mbit/s, 150 ms base RTT
//! (the classic WiFi + 3G setup). Every fidelity feature is on (SACK, delayed ACKs,
//! timestamps, idle restart, send/receive buffers — all engine defaults); time series and
//! trace hashing are off. Send and receive buffers are 1 GiB so they never limit.
//!
//! Variants:
//! * `base`  — drop-tail queues of 1 × BDP: fast 400 packets (600 KB), slow 25 packets (37.5 KB);
//! * `bloat` — queues of 2 s at each link's rate: fast 120 MB, slow 500 KB;
//! * `jitter` — `base` with 1 ms of Pareto jitter on every link (order kept);
//! * `trace` — `base` with both capacities given as Mahimahi traces of the same rates
//!   (480 Mbit/s = 40 opportunities per ms; 2 Mbit/s = one every 6 ms), generated at start;
//! * `pcap` — `base` with packet captures on (one file per host, headers only: snap length
//!   128 B, written to a temp dir);
//! * `rack`, `rack-bloat` — `base` and `bloat` with Linux's loss recovery (RACK-TLP and
//!   PRR: `tcp = { recovery = "rack_tlp", prr = true }`).
//!
//! Usage: `cargo run --release -p mptcplab-core --example bench -- [VARIANT|all] [REPS] [SECONDS] [SCHED[/CC]]`
//! (defaults: all, 5 repetitions, 60 s simulated, minrtt/lia); SCHED is a scheduler name
//! and CC a congestion controller name as in scenario files.

use std::time::Instant;

use mptcplab_core::{CaptureOptions, CapturePoint, RunOptions, Scenario};

const VARIANTS: &[(&str, &str, &str, &str)] = &[
    // name, fast queue, slow queue, description
    ("base", "400 packets", "25 packets", "1 x BDP queues (fast 400 pkt = 600 KB, slow 25 pkt = 37.5 KB)"),
    ("bloat", "120MB", "500KB", "2 s queues (fast 120 MB, slow 500 KB)"),
    ("jitter", "400 packets", "25 packets", "base + 1 ms Pareto jitter on every link"),
    ("trace", "400 packets", "25 packets", "base with Mahimahi traces of the same capacities"),
    ("pcap", "400 packets", "25 packets", "base with packet captures written (snap length 128 B)"),
    ("rack", "400 packets", "25 packets", "base with RACK-TLP and PRR"),
    ("rack-bloat", "120MB", "500KB", "bloat with RACK-TLP and PRR"),
];

/// Writes Mahimahi traces of 480 and 2 Mbit/s (1500-byte opportunities) for the `trace` variant.
fn traces() -> (String, String) {
    let dir = std::env::temp_dir().join(format!("mptcplab-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let fast = dir.join("fast.trace");
    let slow = dir.join("slow.trace");
    let mut f = String::new();
    for ms in 1..=1000 {
        for _ in 0..40 {
            f += &format!("{ms}\n");
        }
    }
    std::fs::write(&fast, f).expect("write trace");
    let s: String = (1..=500).map(|k| format!("{}\n", 6 * k)).collect();
    std::fs::write(&slow, s).expect("write trace");
    (fast.display().to_string(), slow.display().to_string())
}

/// The per-variant lines added to the fast and slow paths and the output table.
fn extras(name: &str) -> (String, String, String) {
    match name {
        "jitter" => {
            let j = "jitter = { amount = \"1ms\", distribution = \"pareto\" }".to_string();
            (j.clone(), j, String::new())
        }
        "trace" => {
            let (f, s) = traces();
            (format!("trace = \"{f}\""), format!("trace = \"{s}\""), String::new())
        }
        _ => (String::new(), String::new(), String::new()),
    }
}

/// The captures of the `pcap` variant (one file per host, snap length 128 B), in a fresh
/// temporary directory; captures are a run option, not part of the scenario.
fn capture(name: &str) -> Option<CaptureOptions> {
    let dir = std::env::temp_dir().join(format!("mptcplab-bench-pcap-{}", std::process::id()));
    (name == "pcap").then_some(CaptureOptions { dir, per: CapturePoint::Host, snaplen: Some(128) })
}

fn scenario(name: &str, fast_q: &str, slow_q: &str, secs: f64, sched: &str, cc: &str) -> Scenario {
    let (fast_extra, slow_extra, output) = extras(name);
    let tcp = if name.starts_with("rack") { "tcp = { recovery = \"rack_tlp\", prr = true }" } else { "" };
    let fast_cap =
        if fast_extra.starts_with("trace") { fast_extra.clone() } else { format!("rate = \"480Mbit\"\n{fast_extra}") };
    let slow_cap =
        if slow_extra.starts_with("trace") { slow_extra.clone() } else { format!("rate = \"2Mbit\"\n{slow_extra}") };
    let toml = format!(
        r#"
name = "bench"
duration = "{secs}s"
seed = 1
[[paths]]
name = "fast"
{fast_cap}
delay = "5ms"
queue = "{fast_q}"
[[paths]]
name = "slow"
{slow_cap}
delay = "75ms"
queue = "{slow_q}"
[[connections]]
name = "mp"
kind = "mptcp"
paths = ["fast", "slow"]
cc = "{cc}"
scheduler = "{sched}"
sndbuf = "1GiB"
rcvbuf = "1GiB"
app = {{ kind = "bulk" }}
{tcp}
{output}
"#
    );
    Scenario::from_toml_str(&toml).unwrap_or_else(|e| panic!("bench scenario: {e}"))
}

/// `VmHWM` (peak resident set) of this process in KiB, if /proc is available.
fn vm_hwm_kib() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Resets the peak-RSS counter (Linux >= 4.0) so each variant's peak is measured on its own.
fn reset_hwm() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

struct Rep {
    wall: f64,
    packets: u64,
    events: u64,
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).expect("no NaN"));
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        0.5 * (v[n / 2 - 1] + v[n / 2])
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let which = args.first().map(String::as_str).unwrap_or("all");
    let reps: usize = args.get(1).map_or(5, |s| s.parse().expect("REPS must be a positive integer"));
    let secs: f64 = args.get(2).map_or(60.0, |s| s.parse().expect("SECONDS must be a number"));
    assert!(reps >= 1, "REPS must be >= 1");
    let algos = args.get(3).map_or("minrtt/lia", String::as_str);
    let (sched, cc) = algos.split_once('/').unwrap_or((algos, "lia"));
    let selected: Vec<_> = VARIANTS.iter().filter(|v| which == "all" || which == v.0).collect();
    if selected.is_empty() {
        eprintln!(
            "unknown variant `{which}`; choose one of: all, {}",
            VARIANTS.iter().map(|v| v.0).collect::<Vec<_>>().join(", ")
        );
        std::process::exit(2);
    }
    if cfg!(debug_assertions) {
        eprintln!("warning: debug build; run with --release for meaningful numbers");
    }

    println!("mptcplab engine benchmark: 2-path MPTCP bulk, scheduler {sched}, cc {cc}, {secs} s simulated, {reps} repetitions per variant");
    println!();
    let mut summaries = Vec::new();
    let mut total_packets = 0u64;
    for &&(name, fq, sq, desc) in &selected {
        let sc = scenario(name, fq, sq, secs, sched, cc);
        let hwm_reset = reset_hwm();
        println!("variant `{name}`: {desc}");
        println!(
            "{:>4} {:>8} {:>12} {:>12} {:>8} {:>10} {:>8} {:>11} {:>11} {:>9} {:>9}",
            "rep",
            "wall s",
            "data pkts",
            "events",
            "Mpkt/s",
            "Mevents/s",
            "ns/pkt",
            "fast Mbit/s",
            "slow Mbit/s",
            "drops",
            "rto"
        );
        let mut runs = Vec::new();
        for r in 0..reps {
            let capture = capture(name);
            let t0 = Instant::now();
            let out = match &capture {
                None => mptcplab_core::run(&sc),
                Some(c) => {
                    let opts = RunOptions { capture: Some(c.clone()), ..RunOptions::default() };
                    mptcplab_core::run_with(&sc, &opts).unwrap_or_else(|e| panic!("bench capture: {e:?}"))
                }
            };
            let wall = t0.elapsed().as_secs_f64();
            if let Some(c) = &capture {
                std::fs::remove_dir_all(&c.dir).ok();
            }
            let s = &out.summary;
            let fast = s.subflow("mp", "fast");
            let slow = s.subflow("mp", "slow");
            let drops: u64 = s.links.iter().map(|l| l.queue_drops + l.loss_drops).sum();
            println!(
                "{:>4} {:>8.3} {:>12} {:>12} {:>8.3} {:>10.3} {:>8.1} {:>11.2} {:>11.3} {:>9} {:>9}",
                r + 1,
                wall,
                s.data_packets,
                s.events,
                s.data_packets as f64 / wall / 1e6,
                s.events as f64 / wall / 1e6,
                wall * 1e9 / s.data_packets as f64,
                fast.goodput_bps / 1e6,
                slow.goodput_bps / 1e6,
                drops,
                fast.rtos + slow.rtos,
            );
            if r == 0 {
                let c = s.connection("mp");
                let mq: Vec<String> =
                    s.links.iter().map(|l| format!("{} {} pkt", l.name, l.max_queue_packets)).collect();
                println!(
                    "     sanity: connection goodput {:.2} Mbit/s; max out-of-order {:.1} MB; rwnd-limited {:.3} s, sndbuf-limited {:.3} s; max queue: {}",
                    c.goodput_bps / 1e6,
                    c.max_rcv_ooo_bytes as f64 / 1e6,
                    c.rwnd_limited_time_s,
                    c.sndbuf_limited_time_s,
                    mq.join(", ")
                );
            }
            total_packets += s.data_packets;
            runs.push(Rep { wall, packets: s.data_packets, events: s.events });
        }
        let hwm = vm_hwm_kib();
        let mut walls: Vec<f64> = runs.iter().map(|r| r.wall).collect();
        let med = median(&mut walls);
        let best = walls[0];
        let (p, e) = (runs[0].packets, runs[0].events);
        let deterministic = runs.iter().all(|r| r.packets == p && r.events == e);
        println!(
            " med {:>8.3} {:>12} {:>12} {:>8.3} {:>10.3} {:>8.1}   (best wall {:.3} s = {:.3} Mpkt/s){}",
            med,
            p,
            e,
            p as f64 / med / 1e6,
            e as f64 / med / 1e6,
            med * 1e9 / p as f64,
            best,
            p as f64 / best / 1e6,
            if deterministic { "" } else { "  [WARNING: counts differ between repetitions]" }
        );
        match hwm {
            Some(k) => println!(
                "     peak RSS (VmHWM) {:.1} MiB{}",
                k as f64 / 1024.0,
                if hwm_reset { "" } else { " (cumulative: could not reset the counter)" }
            ),
            None => println!("     peak RSS: unavailable (no /proc/self/status)"),
        }
        println!();
        summaries.push((name, med * 1e9 / p as f64, p as f64 / med / 1e6));
    }
    if summaries.len() > 1 {
        let base = summaries[0].1;
        for (name, ns, mpps) in &summaries {
            println!(
                "{name:>6}: {ns:.1} ns/data packet, {mpps:.3} Mpkt/s (median), {:+.1} % vs {}",
                (ns / base - 1.0) * 100.0,
                summaries[0].0
            );
        }
    }
    // Whole-process accounting (for side-by-side timing against another simulator): every data
    // segment this process simulated, over all variants and repetitions.
    println!("data_packets: {total_packets}");
}
