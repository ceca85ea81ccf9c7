//! Typed trace events, a digest sink for determinism checks, an event log, and statistics
//! helpers.
//!
//! Two kinds of events: packet events, which the driver sees (a packet offered to a link,
//! dropped, lost, delivered), and endpoint events, which a subflow records (its TCP state and
//! congestion state transitions, from `Subflow::set_state` / `Subflow::set_ca_state`).
//!
//! Tracing costs nothing when off: the driver holds an `Option<TraceDigest>` (on with
//! `output.trace_hash`) and a subflow an `Option<TraceLog>` (on with `Subflow::enable_trace`),
//! and an event is built only inside `if let Some(..)`. The digest folds in packet events
//! only: it is the run's fingerprint, which recording endpoint events must not change.

pub mod hist;
pub mod pcap;

use crate::tcp::state::{CaState, State};
use crate::units::Time;

/// Typed trace events: packet events seen by the driver, endpoint events recorded by a subflow.
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
    /// Subflow `sf` changed its connection-setup state (Linux `tcp_set_state`, trace point
    /// `inet_sock_set_state`).
    TcpState { sf: u8, from: State, to: State },
    /// Subflow `sf` changed its congestion state (Linux `tcp_set_ca_state`, trace point
    /// `tcp_cong_state_set`).
    CaState { sf: u8, from: CaState, to: CaState },
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

    /// Folds in a packet event; endpoint events are not part of the digest (see the module
    /// documentation) and leave it and the event count unchanged.
    pub fn record(&mut self, now: Time, ev: TraceEvent) {
        let (tag, link, uid) = match ev {
            TraceEvent::Enqueue { link, uid } => (1, link, uid),
            TraceEvent::QueueDrop { link, uid } => (2, link, uid),
            TraceEvent::LinkLoss { link, uid } => (3, link, uid),
            TraceEvent::Deliver { link, uid } => (4, link, uid),
            TraceEvent::AqmDrop { link, uid } => (5, link, uid),
            TraceEvent::TcpState { .. } | TraceEvent::CaState { .. } => return,
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
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TraceLog {
    events: Vec<(Time, TraceEvent)>,
}

impl TraceLog {
    pub fn record(&mut self, now: Time, ev: TraceEvent) {
        self.events.push((now, ev));
    }

    pub fn events(&self) -> &[(Time, TraceEvent)] {
        &self.events
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoint_events_leave_the_packet_digest_unchanged() {
        let (mut a, mut b) = (TraceDigest::default(), TraceDigest::default());
        for d in [&mut a, &mut b] {
            d.record(Time(1), TraceEvent::Enqueue { link: 0, uid: 7 });
        }
        b.record(Time(2), TraceEvent::CaState { sf: 0, from: CaState::Open, to: CaState::Disorder });
        b.record(Time(2), TraceEvent::TcpState { sf: 0, from: State::SynSent, to: State::Established });
        assert_eq!((a.hex(), a.events), (b.hex(), b.events));
        a.record(Time(3), TraceEvent::Deliver { link: 0, uid: 7 });
        assert_ne!(a.hex(), b.hex());
    }
}
