//! Behaviour fingerprints: a digest of every packet event for a grid of scenarios, to show that
//! a change meant as a refactor changes no behaviour (see CONTRIBUTING.md).
//!
//! The grid covers every scheduler × every congestion controller with binding send and
//! receive buffers on paths of different RTTs, the three stack profiles, every queue
//! discipline and link feature (drop-tail in packets, bytes and time, RED, CoDel, jitter,
//! random and bursty loss, explicit drops, schedules, host queues, Mahimahi and
//! second-by-second capacity files), the applications, the scenario files in `scenarios/`
//! and every complete scenario in `docs/scenarios.md`. Each line is
//! `case  data_packets  events  digest` (or `case  error: …` for a scenario the engine
//! refuses, which a refactor must refuse the same way).
//!
//! Usage, from the repository root (the scenario files name traces relative to it):
//! `cargo run --release -p mptcplab-core --example fingerprint > before.txt`, change,
//! run again, `diff before.txt after.txt`. Runs are capped at 20 s of simulated time after
//! any warm-up.

use std::path::Path;

use mptcplab_core::Scenario;

const CAP_S: f64 = 20.0;
/// Every scheduler and congestion controller, by the names scenario files use (written out,
/// not taken from the engine, so that a refactor of the registries cannot shrink the grid).
const SCHEDULERS: &[&str] = &["minrtt", "roundrobin", "redundant", "blest", "ecf", "daps", "otias", "stms", "default"];
const CONTROLLERS: &[&str] = &["reno", "lia", "cubic", "olia", "balia", "wvegas", "bbr"];

/// A two-path download: fast 20 Mbit/s at 10 ms base RTT, slow 5 Mbit/s at 80 ms with 0.2 %
/// loss, 200 KB buffers (less than the paths' bandwidth-delay product plus queues, so the
/// buffers bind as in the seed papers).
fn two_paths(conn: &str, fast: &str, slow: &str) -> String {
    let queue = |extra: &str, default: &str| {
        if extra.contains("queue =") {
            String::new()
        } else {
            format!("queue = \"{default}\"")
        }
    };
    let (fast_queue, slow_queue) = (queue(fast, "60 packets"), queue(slow, "30 packets"));
    format!(
        r#"
name = "fp"
duration = "8s"
seed = 7
[[paths]]
name = "fast"
rate = "20Mbit"
delay = "5ms"
{fast_queue}
{fast}
[[paths]]
name = "slow"
rate = "5Mbit"
delay = "40ms"
{slow_queue}
loss = "0.2%"
{slow}
[[connections]]
name = "mp"
kind = "mptcp"
paths = ["fast", "slow"]
sndbuf = "200KB"
rcvbuf = "200KB"
{conn}
"#
    )
}

fn algo(sched: &str, cc: &str, extra: &str) -> String {
    two_paths(&format!("scheduler = \"{sched}\"\ncc = \"{cc}\"\napp = {{ kind = \"bulk\" }}\n{extra}"), "", "")
}

fn cases(traces: &(String, String)) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for sched in SCHEDULERS {
        for cc in CONTROLLERS {
            out.push((format!("algo/{sched}/{cc}"), algo(sched, cc, "")));
        }
    }
    for stack in ["classic", "linux", "linux-v0.9x"] {
        for (sched, cc) in [("minrtt", "lia"), ("default", "cubic"), ("blest", "olia"), ("redundant", "balia")] {
            out.push((format!("stack/{stack}/{sched}/{cc}"), algo(sched, cc, &format!("stack = \"{stack}\""))));
        }
    }
    out.push((
        "minrtt-m1-m2".into(),
        algo("minrtt", "lia", "sched_params.minrtt = { opportunistic_retransmission = true, penalisation = true }"),
    ));
    out.push(("rack-prr".into(), algo("minrtt", "lia", "tcp = { recovery = \"rack_tlp\", prr = true }")));
    let bulk = "scheduler = \"minrtt\"\ncc = \"lia\"\napp = { kind = \"bulk\" }";
    let links: &[(&str, &str, &str)] = &[
        ("queue-bytes", "queue = \"75KB\"", ""),
        ("queue-time", "queue = \"20ms\"", "queue = \"50ms\""),
        ("red", "aqm = { kind = \"red\", min = \"10 packets\", max = \"40 packets\", max_p = \"2%\", gentle = true }", ""),
        ("codel", "aqm = { kind = \"codel\", target = \"5ms\", interval = \"100ms\" }", ""),
        ("jitter-uniform", "jitter = { amount = \"3ms\" }", ""),
        ("jitter-pareto-reorder", "", "jitter = { amount = \"10ms\", distribution = \"pareto\", reorder = true }"),
        ("loss-burst", "loss = \"1%\"\nloss_burst = 3", ""),
        ("drop", "drop = [20, 21, 22, 400]", ""),
        (
            "schedule",
            "schedule = [{ at = \"2s\", rate = \"5Mbit\", delay = \"20ms\" }, { at = \"5s\", rate = \"30Mbit\", loss = \"0.5%\" }]",
            "",
        ),
        ("schedule-period", "schedule = [{ at = \"1s\", rate = \"2Mbit\" }, { at = \"2s\", rate = \"20Mbit\" }]\nschedule_period = \"3s\"", ""),
        ("queue-at-host", "queue_at = \"host\"", "queue_at = \"host\""),
        ("up-down", "down = { rate = \"30Mbit\" }\nup = { rate = \"1Mbit\", queue = \"10 packets\" }", ""),
    ];
    for (name, fast, slow) in links {
        out.push((format!("link/{name}"), two_paths(bulk, fast, slow)));
    }
    let (trace, rate_trace) = traces;
    out.push((
        "link/traces".into(),
        two_paths(
            bulk,
            &format!("down = {{ trace = \"{trace}\" }}"),
            &format!("down = {{ rate_trace = \"{rate_trace}\" }}"),
        ),
    ));
    for (name, app) in [
        ("download", "{ kind = \"download\", size = \"1MB\" }"),
        ("periodic", "{ kind = \"periodic\", size = \"200KB\", period = \"1s\", count = 5 }"),
        ("bulk-stop", "{ kind = \"bulk\", stop = \"3s\" }"),
    ] {
        out.push((format!("app/{name}"), two_paths(&format!("app = {app}"), "", "")));
    }
    // Two downloads one after another over the same paths, with each TCP metrics cache setting.
    for metrics in ["off", "no_ssthresh", "all"] {
        let dl = "app = { kind = \"download\", size = \"1MB\" }";
        let conns = format!(
            "{dl}\ntcp = {{ metrics = \"{metrics}\" }}\n[[connections]]\nname = \"mp2\"\nkind = \"mptcp\"\n\
             paths = [\"fast\", \"slow\"]\nafter = \"mp\"\nstart = \"500ms\"\n{dl}\ntcp = {{ metrics = \"{metrics}\" }}"
        );
        out.push((format!("after/metrics-{metrics}"), two_paths(&conns, "", "")));
    }
    out
}

/// Writes a Mahimahi trace (10 Mbit/s, with a 200 ms gap every second) and a capacity file
/// (second by second, with a second of 0 B/s) for the `link/traces` case.
fn traces() -> (String, String) {
    let dir = std::env::temp_dir().join(format!("mptcplab-fingerprint-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let trace = dir.join("link.trace");
    let mut t = String::new();
    for ms in 1..=1000 {
        if ms % 1000 < 800 {
            t += &format!("{ms}\n");
        }
    }
    std::fs::write(&trace, t).expect("write trace");
    let rates = dir.join("rates.csv");
    let r: String =
        [400_000, 900_000, 0, 250_000, 600_000].iter().enumerate().map(|(s, b)| format!("{},{b}\n", s + 1)).collect();
    std::fs::write(&rates, r).expect("write capacity file");
    (trace.display().to_string(), rates.display().to_string())
}

/// The complete scenarios (those with a `duration`) among the TOML blocks of a Markdown file.
fn doc_blocks(path: &Path) -> Vec<(String, String)> {
    let Ok(text) = std::fs::read_to_string(path) else { return Vec::new() };
    let mut out = Vec::new();
    let mut block: Option<String> = None;
    for line in text.lines() {
        match (&mut block, line.trim_start()) {
            (None, l) if l.starts_with("```toml") => block = Some(String::new()),
            (Some(b), l) if l.starts_with("```") => {
                if b.lines().any(|l| l.starts_with("duration")) {
                    out.push((format!("doc/{}#{}", path.display(), out.len() + 1), b.clone()));
                }
                block = None;
            }
            (Some(b), _) => {
                b.push_str(line);
                b.push('\n');
            }
            _ => {}
        }
    }
    out
}

fn files(dir: &Path) -> Vec<(String, String)> {
    let mut paths: Vec<_> = std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.extension().is_some_and(|x| x == "toml")).collect()
        })
        .unwrap_or_default();
    paths.sort();
    paths
        .into_iter()
        .filter_map(|p| Some((format!("file/{}", p.display()), std::fs::read_to_string(&p).ok()?)))
        .collect()
}

/// Caps the measured time (after any warm-up) at [`CAP_S`] and switches the trace digest on.
fn prepare(toml_text: &str) -> Result<Scenario, String> {
    let mut v: toml::Table = toml_text.parse().map_err(|e: toml::de::Error| e.message().to_string())?;
    let output = v.entry("output").or_insert_with(|| toml::Value::Table(toml::Table::new()));
    if let Some(o) = output.as_table_mut() {
        o.insert("trace_hash".into(), toml::Value::Boolean(true));
    }
    let build = |v: &toml::Table| {
        Scenario::from_toml_str(&toml::to_string(v).map_err(|e| e.to_string())?).map_err(|e| e.to_string())
    };
    let sc = build(&v)?;
    let cap = sc.output.warmup.secs_f64() + CAP_S;
    if sc.duration.secs_f64() <= cap {
        return Ok(sc);
    }
    v.insert("duration".into(), toml::Value::String(format!("{cap}s")));
    build(&v)
}

fn main() {
    let traces = traces();
    let mut all = cases(&traces);
    all.extend(files(Path::new("scenarios")));
    all.extend(files(Path::new("scenarios/validation")));
    all.extend(doc_blocks(Path::new("docs/scenarios.md")));
    for (name, text) in all {
        match prepare(&text) {
            Ok(sc) => {
                let out = mptcplab_core::run(&sc);
                let s = &out.summary;
                println!("{name}  {}  {}  {}", s.data_packets, s.events, s.trace_hash.as_deref().unwrap_or("-"));
            }
            Err(e) => println!("{name}  error: {}", e.lines().next().unwrap_or("")),
        }
    }
}
