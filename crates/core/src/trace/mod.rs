//! Typed trace events, a digest sink for determinism checks, an event log, and statistics
//! helpers.
//!
//! Two kinds of events: packet events ([`TraceEvent`]), which the driver sees (a packet
//! offered to a link, dropped, lost, delivered), and endpoint events, which a subflow records
//! in a [`TraceLog`] (its TCP state and congestion state transitions,
//! `crate::tcp::state::Transition`, from `Subflow::set_state` / `Subflow::set_ca_state`).
//! The log is generic over its event type, so this module names no endpoint types: it sits
//! below `tcp` (the crate's layering is checked by `tests/architecture.rs`).
//!
//! Tracing costs nothing when off: the driver holds an `Option<TraceDigest>` (on with
//! `output.trace_hash`) and a subflow an `Option<TraceLog<_>>` (on with
//! `Subflow::enable_trace`), and an event is built only inside `if let Some(..)`. The digest
//! takes packet events only (by type): it is the run's fingerprint, which recording endpoint
//! events cannot change.

pub mod hist;
pub mod pcap;

use crate::units::Time;

/// Packet events, seen by the driver.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TraceEvent {
    /// A packet was offered to a link.
    Enqueue { link: u32, uid: u64 },
    /// A packet was dropped because the queue was full.
    QueueDrop { link: u32, uid: u64 },
    /// A packet was dropped on arrival by the AQM (RED).
    AqmDrop { link: u32, uid: u64 },
    /// A packet was lost on the link (random loss).
    LinkLoss { link: u32, uid: u64 },
    /// A packet reached the far end of a link.
    Deliver { link: u32, uid: u64 },
}

/// Folds events into a 64-bit FNV-1a digest.
#[derive(Clone, Debug)]
pub struct TraceDigest {
    h: u64,
    pub events: u64,
}

impl Default for TraceDigest {
    fn default() -> Self {
        TraceDigest { h: 0xcbf2_9ce4_8422_2325, events: 0 }
    }
}

impl TraceDigest {
    fn mix(&mut self, x: u64) {
        for b in x.to_le_bytes() {
            self.h ^= b as u64;
            self.h = self.h.wrapping_mul(0x0000_0100_0000_01B3);
        }
    }

    /// Folds in a packet event.
    pub fn record(&mut self, now: Time, ev: TraceEvent) {
        let (tag, link, uid) = match ev {
            TraceEvent::Enqueue { link, uid } => (1, link, uid),
            TraceEvent::QueueDrop { link, uid } => (2, link, uid),
            TraceEvent::LinkLoss { link, uid } => (3, link, uid),
            TraceEvent::Deliver { link, uid } => (4, link, uid),
            TraceEvent::AqmDrop { link, uid } => (5, link, uid),
        };
        self.events += 1;
        self.mix(now.0);
        self.mix(tag);
        self.mix(link as u64);
        self.mix(uid);
    }

    pub fn hex(&self) -> String {
        format!("{:016x}", self.h)
    }
}

/// Events in the order recorded, with their times (a subflow's transitions; tests and
/// diagnostics read them back with [`TraceLog::events`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceLog<E> {
    events: Vec<(Time, E)>,
}

impl<E> Default for TraceLog<E> {
    fn default() -> Self {
        TraceLog { events: Vec::new() }
    }
}

impl<E> TraceLog<E> {
    pub fn record(&mut self, now: Time, ev: E) {
        self.events.push((now, ev));
    }

    pub fn events(&self) -> &[(Time, E)] {
        &self.events
    }
}
