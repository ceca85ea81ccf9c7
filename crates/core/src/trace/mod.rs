//! Typed trace events, a digest sink for determinism checks, and statistics helpers.
//!
//! Tracing costs nothing when off: the driver holds an `Option<TraceDigest>` and builds an
//! event only inside `if let Some(..)`.

pub mod hist;
pub mod pcap;

use crate::units::Time;

/// Packet-level events seen by the driver.
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

    pub fn record(&mut self, now: Time, ev: TraceEvent) {
        self.events += 1;
        self.mix(now.0);
        let (tag, link, uid) = match ev {
            TraceEvent::Enqueue { link, uid } => (1, link, uid),
            TraceEvent::QueueDrop { link, uid } => (2, link, uid),
            TraceEvent::LinkLoss { link, uid } => (3, link, uid),
            TraceEvent::Deliver { link, uid } => (4, link, uid),
            TraceEvent::AqmDrop { link, uid } => (5, link, uid),
        };
        self.mix(tag);
        self.mix(link as u64);
        self.mix(uid);
    }

    pub fn hex(&self) -> String {
        format!("{:016x}", self.h)
    }
}
