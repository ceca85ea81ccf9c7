//! Queue disciplines: what a link's queue admits and what it lets through to the
//! transmitter (Linux's `Qdisc_ops` `enqueue` / `dequeue`, without owning the packets).
//!
//! A discipline decides; the link keeps the packets. Each discipline says where it takes
//! its decisions ([`DecidesAt`]):
//! - at enqueue ([`droptail`], [`red`], [`tbf`]): service order is fixed, so the link computes a
//!   packet's transmission start, end and arrival the moment it is admitted, and only keeps
//!   a ledger of the packets waiting for the transmitter (the FIFO fast path);
//! - at dequeue ([`codel`]): the decision needs the packet's sojourn time, so the link keeps
//!   the packets and the driver wakes it whenever a transmission ends.
//!
//! Every discipline keeps the link's hard limit (`queue`, a [`QueueLimit`]) and checks it as
//! drop-tail does; an AQM adds its own drops (counted apart, as `aqm_drops`).
//!
//! Adding a discipline: one file here implementing [`Qdisc`], one line in the
//! `disciplines!` list below, and one arm in the scenario schema that builds its parameters.

pub mod codel;
pub mod droptail;
pub mod red;
pub mod tbf;

pub use droptail::QueueLimit;

use crate::net::service::Service;
use crate::units::{Dur, Time};

/// Where a discipline takes its decisions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DecidesAt {
    /// On arrival only: the link may schedule the packet's departure at once.
    Enqueue,
    /// Also when the transmitter takes the head packet: the link is event-driven.
    Dequeue,
}

/// What waits for the transmitter (the packet being serialised has left the queue, as in a
/// Linux qdisc).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Occupancy {
    pub packets: u64,
    /// Wire bytes.
    pub bytes: u64,
}

/// A packet arriving at the queue, and the queue it finds.
pub struct Arrival<'a> {
    pub now: Time,
    /// The packet's wire bytes.
    pub len: u32,
    /// What waits for the transmitter before this packet.
    pub queued: Occupancy,
    /// How long the packet will wait for the transmitter, when the link knows on arrival
    /// (disciplines deciding at enqueue); zero when it goes straight to the transmitter and
    /// so is never queued. `None` on an event-driven link.
    pub wait: Option<Dur>,
    /// The link's service, for limits and thresholds given in time.
    pub service: &'a Service,
}

impl Arrival<'_> {
    /// The link's nominal rate now (bit/s): the rate in effect, or a trace's mean capacity.
    #[inline]
    pub fn rate_bps(&self) -> f64 {
        self.service.nominal_bps(self.now)
    }

    /// The queue after this packet joins it.
    #[inline]
    pub fn bytes_after(&self) -> u64 {
        self.queued.bytes + self.len as u64
    }
}

/// The decision for an arriving packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Enqueue {
    Accept,
    /// The hard limit is reached (counted as a queue drop).
    TailDrop,
    /// Dropped early by the AQM (counted as an AQM drop).
    EarlyDrop,
}

/// The decision for the head packet, taken by the transmitter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dequeue {
    Send,
    /// Dropped by the AQM; the transmitter asks again for the next head.
    Drop,
}

/// A queue discipline.
pub trait Qdisc {
    /// What the scenario configures (built by the schema, compared in tests).
    type Params: Clone + std::fmt::Debug + PartialEq;

    /// Where the discipline decides; an enqueue-only discipline keeps the fast path.
    const DECIDES_AT: DecidesAt;

    /// A fresh discipline for link `link` of a run seeded with `seed` (a random discipline
    /// draws from its own stream, `link:<link>:<discipline>`).
    fn new(params: &Self::Params, link: &str, seed: u64) -> Self;

    /// Admits or drops an arriving packet.
    fn enqueue(&mut self, a: &Arrival<'_>) -> Enqueue;

    /// Lets the head packet through or drops it, given how long it waited and what stays
    /// queued behind it. Called only when [`Qdisc::DECIDES_AT`] is `Dequeue`.
    fn dequeue(&mut self, _now: Time, _sojourn: Dur, _left: Occupancy) -> Dequeue {
        Dequeue::Send
    }

    /// The transmitter found the queue empty. Called only when deciding at dequeue.
    fn on_empty(&mut self) {}
}

/// The list of disciplines: one `Variant(module::Type)` line each. It makes
/// [`QdiscParams`] (any discipline's parameters, what the schema builds) and [`AnyQdisc`]
/// (any discipline, dispatched with a `match`: no indirect call on a packet's path).
macro_rules! disciplines {
    ($($(#[$doc:meta])* $name:ident($ty:ty),)*) => {
        /// The parameters of any discipline.
        #[derive(Clone, Debug, PartialEq)]
        pub enum QdiscParams {
            $($(#[$doc])* $name(<$ty as Qdisc>::Params),)*
        }

        impl QdiscParams {
            /// Where this discipline decides.
            pub fn decides_at(&self) -> DecidesAt {
                match self {
                    $(QdiscParams::$name(_) => <$ty as Qdisc>::DECIDES_AT,)*
                }
            }
        }

        /// Any discipline, with its state.
        #[derive(Clone, Debug)]
        pub enum AnyQdisc {
            $($(#[$doc])* $name($ty),)*
        }

        impl AnyQdisc {
            /// A fresh discipline (see [`Qdisc::new`]).
            pub fn new(params: &QdiscParams, link: &str, seed: u64) -> AnyQdisc {
                match params {
                    $(QdiscParams::$name(p) => AnyQdisc::$name(<$ty as Qdisc>::new(p, link, seed)),)*
                }
            }

            pub fn decides_at(&self) -> DecidesAt {
                match self {
                    $(AnyQdisc::$name(_) => <$ty as Qdisc>::DECIDES_AT,)*
                }
            }

            /// The limit of a drop-tail discipline (it has no other state).
            pub fn drop_tail_limit(&self) -> Option<QueueLimit> {
                match self {
                    AnyQdisc::DropTail(q) => Some(q.limit()),
                    _ => None,
                }
            }

            // Always inlined: the link's per-packet path would otherwise pay a call.
            #[inline(always)]
            pub fn enqueue(&mut self, a: &Arrival<'_>) -> Enqueue {
                match self {
                    $(AnyQdisc::$name(q) => q.enqueue(a),)*
                }
            }

            #[inline]
            pub fn dequeue(&mut self, now: Time, sojourn: Dur, left: Occupancy) -> Dequeue {
                match self {
                    $(AnyQdisc::$name(q) => q.dequeue(now, sojourn, left),)*
                }
            }

            #[inline]
            pub fn on_empty(&mut self) {
                match self {
                    $(AnyQdisc::$name(q) => q.on_empty(),)*
                }
            }
        }
    };
}

disciplines! {
    /// Drop-tail (a limit in packets, bytes or time).
    DropTail(droptail::DropTail),
    /// RED (Floyd & Jacobson 1993) in front of the hard limit.
    Red(red::Red),
    /// CoDel (RFC 8289) behind the hard limit.
    Codel(codel::Codel),
    /// TBF (Linux `sch_tbf`): its byte limit and largest packet, the link's rate as its rate.
    Tbf(tbf::Tbf),
}

#[cfg(test)]
pub(crate) mod testing {
    //! Arrivals for the disciplines' unit tests.
    use super::*;

    /// A 12 Mbit/s service: a 1500-byte packet takes 1 ms.
    pub fn service() -> Service {
        Service::Constant { bps: 12_000_000, last: (0, Dur::ZERO) }
    }

    /// A 1500-byte arrival at `now` finding `packets` full-sized packets queued.
    pub fn arrival(s: &Service, now: Time, packets: u64, wait: Option<Dur>) -> Arrival<'_> {
        Arrival { now, len: 1500, queued: Occupancy { packets, bytes: packets * 1500 }, wait, service: s }
    }
}
