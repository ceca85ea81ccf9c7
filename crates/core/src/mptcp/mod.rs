//! The MPTCP connection level (RFC 8684): data sequence numbers, DSS mappings and DATA_ACK,
//! the shared send buffer, connection-level reassembly with a shared receive buffer,
//! reinjection, and packet schedulers. A single-path TCP connection is the same machinery
//! with one subflow, no MPTCP options and the identity mapping DSN = subflow sequence.

pub mod connection;
pub mod pm;
pub mod rbuf_opt;
pub mod rcvbuf;
pub mod reassembly;
pub mod recv;
pub mod sched;
pub mod sendbuf;
pub mod sfqueue;
pub mod stale;
#[cfg(test)]
pub(crate) mod testkit;
pub mod timers;
pub mod view;
pub mod wire;
pub mod xmit;

/// A hand-off of data to a subflow as an endpoint records it (`RunOptions::sched_log`): time,
/// subflow index, data sequence, bytes, retransmitted.
pub type HandoffEntry = (crate::units::Time, u8, u64, u64, bool);
