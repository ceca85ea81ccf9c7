//! What the caller of a run decides, apart from the scenario: a bound on the work, packet
//! captures (the only files a run writes) and cancellation.
//!
//! A scenario says what to simulate; where files go is the caller's choice alone (the
//! command line's `--pcap`, the Python API's `pcap_dir`), so a scenario file a user was sent
//! cannot write anywhere. The run loop looks at these options once every [`CHECK_EVERY`]
//! events, so they cost one comparison per event.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::config::{RouteTable, Scenario};
use crate::net::Topology;
use crate::trace::pcap::{file_component, Capture, CaptureError, CaptureOptions, CapturePoint, Point};
use crate::units::Time;

/// Events handled between two looks at the cancellation flag and the capture's health.
/// The engine handles a few million events per second (BENCHMARKS.md), so a cancelled run
/// stops within a few milliseconds; the look costs nothing measurable at this spacing.
pub const CHECK_EVERY: u64 = 4096;

/// How a run is carried out, beyond its scenario.
#[derive(Clone, Debug, Default)]
pub struct RunOptions<'a> {
    /// Give up after this many events (`None`: no bound).
    pub max_events: Option<u64>,
    /// Write packet captures.
    pub capture: Option<CaptureOptions>,
    /// Stop as soon as this flag is set (checked every [`CHECK_EVERY`] events).
    pub cancel: Option<&'a AtomicBool>,
    /// Record every hand-off of data to a subflow ([`crate::results::Handoff`]): the
    /// scheduler's decisions, as the kernel's `mptcp_sendmsg_frag` tracepoint lists them.
    pub sched_log: bool,
}

impl RunOptions<'_> {
    fn cancelled(&self) -> bool {
        self.cancel.is_some_and(|c| c.load(Ordering::Relaxed))
    }

    /// The event count after which the run loop next looks at the options, having looked
    /// after `popped` events: never past the budget, so the budget stops the run at exactly
    /// its event.
    pub(super) fn next_look(&self, popped: u64) -> u64 {
        popped.saturating_add(CHECK_EVERY).min(self.max_events.unwrap_or(u64::MAX))
    }
}

/// Why a run ended without a result.
#[derive(Debug)]
pub enum Stop {
    /// More than `max_events` events were needed; the simulated time reached.
    Budget(Time),
    /// The caller's cancellation flag was set.
    Cancelled,
    /// A capture file could not be written (its partial files are removed).
    Capture(CaptureError),
}

/// Whether a run must stop after `popped` events, at simulated time `now`: past its budget,
/// cancelled, or its capture failed (the capture's error is handed over). If not, the event
/// count of the next look.
#[cold]
pub(super) fn look(popped: u64, now: Time, opts: &RunOptions, pcap: Option<&mut Capture>) -> Result<u64, Stop> {
    if popped > opts.max_events.unwrap_or(u64::MAX) {
        return Err(Stop::Budget(now));
    }
    if opts.cancelled() {
        return Err(Stop::Cancelled);
    }
    match pcap.and_then(Capture::take_error) {
        Some(e) => Err(Stop::Capture(e)),
        None => Ok(opts.next_look(popped)),
    }
}

/// The file stem of every capture point for captures `per` host, interface or link.
pub(super) fn capture_names(
    sc: &Scenario,
    table: &RouteTable,
    topo: &Topology,
    per: CapturePoint,
) -> HashMap<Point, String> {
    let mut names = HashMap::new();
    if per == CapturePoint::Link {
        for (l, link) in topo.links.iter().enumerate() {
            names.insert(Point::Link(l as u32), file_component(&link.name));
        }
        return names;
    }
    for (c, conn) in sc.connections.iter().enumerate() {
        for &(route, _) in &table.subflows[c] {
            let label = file_component(&table.routes[route].0);
            let conn_name = file_component(&conn.name);
            for (client, side) in [(true, "client"), (false, "server")] {
                let stem = match per {
                    CapturePoint::Interface => format!("{conn_name}-{side}-{label}"),
                    _ => format!("{conn_name}-{side}"),
                };
                names.insert(Point::Host(c as u32, client, route), stem);
            }
        }
    }
    names
}
