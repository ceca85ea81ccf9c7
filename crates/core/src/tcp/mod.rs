//! TCP mechanics shared by single-path connections and MPTCP subflows.

pub mod receiver;
pub mod rtt;
pub mod scoreboard;
pub mod subflow;
