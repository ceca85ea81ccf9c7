//! TCP mechanics shared by single-path connections and MPTCP subflows.

pub mod metrics;
pub mod pacing;
pub mod prr;
pub mod rack;
pub mod rate;
pub mod receiver;
pub mod rtt;
pub mod sack_compress;
pub mod scoreboard;
pub mod segment;
pub mod state;
pub mod subflow;
pub mod timer;
pub mod tlp;
pub mod tso;
pub mod tsq;
