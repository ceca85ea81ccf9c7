//! The caller's run options: the work budget stops a run at exactly its event, a cancelled
//! run stops and leaves no capture behind, and a capture that cannot be written is an error,
//! never a panic.

mod common;
use common::*;

use std::sync::atomic::{AtomicBool, Ordering};

use mptcplab_core::{run_with, CaptureOptions, CapturePoint, RunOptions, Stop};

/// A 2-path MPTCP bulk transfer of `secs` seconds (about 3300 events per simulated second).
fn bulk(secs: u32) -> mptcplab_core::Scenario {
    two_paths(secs, "app = { kind = \"bulk\" }")
}

/// An MPTCP connection `mp` over paths `a` (20 Mbit/s, 10 ms) and `b` (10 Mbit/s, 30 ms) for
/// `secs` seconds, with `conn` (TOML) added to it.
fn two_paths(secs: u32, conn: &str) -> mptcplab_core::Scenario {
    scenario(&format!(
        r#"
        duration = "{secs}s"
        [[paths]]
        name = "a"
        rate = "20Mbit"
        delay = "10ms"
        [[paths]]
        name = "b"
        rate = "10Mbit"
        delay = "30ms"
        [[connections]]
        name = "mp"
        kind = "mptcp"
        paths = ["a", "b"]
        {conn}
        "#
    ))
}

fn budget(sc: &mptcplab_core::Scenario, max_events: u64) -> Result<u64, Stop> {
    let opts = RunOptions { max_events: Some(max_events), ..RunOptions::default() };
    run_with(sc, &opts).map(|o| o.summary.events)
}

#[test]
fn the_budget_stops_a_run_at_exactly_its_event() {
    // The options are looked at every 4096 events, and at the budget's own event: the
    // smallest budget that lets the run finish is its event count, or one less when the
    // last event popped lies past the run's end (popped, never handled). One event less
    // than that smallest budget stops the run.
    let sc = bulk(5);
    let events = mptcplab_core::run(&sc).summary.events;
    assert!(events > 3 * 4096, "{events} events: several looks");
    let least = if budget(&sc, events - 1).is_ok() { events - 1 } else { events };
    assert_eq!(budget(&sc, least).ok(), Some(events));
    assert!(matches!(budget(&sc, least - 1), Err(Stop::Budget(_))));
    assert!(matches!(budget(&sc, 4097), Err(Stop::Budget(_))));
}

#[test]
fn a_cancelled_run_stops_and_leaves_no_capture() {
    let dir = std::env::temp_dir().join(format!("mptcplab-cancel-{}", std::process::id()));
    let cancel = AtomicBool::new(false);
    let capture = Some(CaptureOptions { dir: dir.clone(), per: CapturePoint::Host, snaplen: Some(96) });
    let opts = RunOptions { capture, cancel: Some(&cancel), ..RunOptions::default() };
    // A one-hour run (about 10^7 events) cancelled from another thread once its
    // captures have begun: it returns `Cancelled` long before its end, its files removed.
    let sc = bulk(3600);
    let stopped = std::thread::scope(|s| {
        let run = s.spawn(|| run_with(&sc, &opts));
        while !dir.join("mp-client.pcap").exists() {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        cancel.store(true, Ordering::Relaxed);
        run.join().expect("no panic")
    });
    assert!(matches!(stopped, Err(Stop::Cancelled)), "{:?}", stopped.map(|o| o.summary.events));
    assert!(!dir.exists(), "the capture directory it made is removed");
}

#[test]
fn an_unwritable_capture_is_an_error_and_not_a_panic() {
    let file = std::env::temp_dir().join(format!("mptcplab-not-a-dir-{}", std::process::id()));
    std::fs::write(&file, b"a file").unwrap();
    let capture = Some(CaptureOptions { dir: file.join("caps"), per: CapturePoint::Link, snaplen: None });
    let r = run_with(&bulk(1), &RunOptions { capture, ..RunOptions::default() });
    std::fs::remove_file(&file).unwrap();
    match r {
        Err(Stop::Capture(e)) => assert_eq!(e.file, file.join("caps")),
        other => panic!("expected a capture error, got {:?}", other.map(|o| o.summary.events)),
    }
}

/// `sched_log` records every hand-off of data to a subflow, as the kernel's
/// `mptcp_sendmsg_frag` tracepoint lists them: for a 3 000 000-byte download over two paths,
/// on the `linux` stack (the upstream scheduler handing page fragments) and on the classic one
/// (minRTT, segment by segment), the new data handed out covers [0, 3 000 000) exactly once, in
/// order of data sequence, on the scenario's paths; without the option nothing is recorded and
/// the run is the same.
#[test]
fn the_scheduler_log_hands_out_every_byte_once() {
    for stack in ["linux", "classic"] {
        let sc = two_paths(5, &format!("stack = \"{stack}\"\napp = {{ kind = \"download\", size = \"3000000B\" }}"));
        let plain = run_with(&sc, &RunOptions::default()).expect("runs");
        assert!(plain.handoffs.is_empty());
        let logged = run_with(&sc, &RunOptions { sched_log: true, ..RunOptions::default() }).expect("runs");
        assert_eq!(logged.summary, plain.summary, "{stack}: recording changes nothing");
        let mut new: Vec<_> = logged.handoffs.iter().filter(|h| !h.retransmit).collect();
        new.sort_by_key(|h| h.data_seq);
        let mut next = 0;
        for h in &new {
            assert_eq!(h.data_seq, next, "{stack}: a gap or an overlap at {next}");
            assert!(h.connection == "mp" && (h.path == "a" || h.path == "b"), "{stack}: {h:?}");
            next += h.bytes;
        }
        assert_eq!(next, 3_000_000, "{stack}");
        assert!(new.iter().any(|h| h.path == "b"), "{stack}: both paths used");
    }
}
