//! The two state machines of a TCP sender: connection setup (`State`) and the Linux
//! congestion states (`CaState`, `tcp_ca_state`; defined with the controllers, which are
//! told of it, in `cc::input`).
//!
//! A subflow changes either only through `Subflow::set_state` / `Subflow::set_ca_state`
//! (Linux `tcp_set_state` / `tcp_set_ca_state`), which record every transition as a typed
//! trace event when the subflow's trace is on ([`Transition`], kept in a
//! `crate::trace::TraceLog`). The events are endpoint events: they never enter the packet
//! digest (`output.trace_hash`), whose type takes packet events only.

pub use crate::cc::input::CaState;

/// Connection-setup state of a subflow (the RFC 9293 states a simulated subflow passes
/// through; closing is not modelled).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    /// Client: SYN sent.
    SynSent,
    /// Server: SYN received, SYN/ACK sent.
    SynRcvd,
    /// Client of an MP_JOIN: third ACK sent, waiting for the fourth before sending data.
    PreEstablished,
    Established,
}

/// A recorded state transition of subflow `sf` (its index in the connection).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transition {
    /// Connection-setup state (Linux `tcp_set_state`, trace point `inet_sock_set_state`).
    TcpState { sf: u8, from: State, to: State },
    /// Congestion state (Linux `tcp_set_ca_state`, trace point `tcp_cong_state_set`).
    CaState { sf: u8, from: CaState, to: CaState },
}
