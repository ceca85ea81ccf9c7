//! The path manager: when the client opens its MP_JOIN subflows (RFC 8684 §3.2, §3.4).
//!
//! Three rules (`join` in the scenario schema):
//! - `at_once` (the classic model): the client opens one join per other path as soon as its
//!   MP_CAPABLE SYN/ACK arrives; both hosts know every path.
//! - `fully_established`: Linux's in-kernel path manager with `subflow` endpoints on the
//!   client (`mptcp_pm_nl_fully_established` → `mptcp_pm_create_subflow_or_signal_addr`),
//!   which is what the kernel backend configures. The client's path manager acts when the
//!   connection is *fully established* at the client: `check_fully_established` (options.c)
//!   marks it so on the first packet from the server after the handshake that carries a
//!   DATA_ACK (data or a pure ACK) or an ADD_ADDR. For a download that is the server's first
//!   data segment, one path-1 RTT after the SYN/ACK; the joins then open one per path.
//! - `add_addr`: the in-kernel path manager with `signal` endpoints on the server. The
//!   server's path manager runs when the connection is fully established there (the third
//!   ACK, `mptcp_pm_fully_established`), and announces one address at a time
//!   (`mptcp_pm_create_subflow_or_signal_addr` → `mptcp_pm_announce_addr`): the ADD_ADDR
//!   goes out at once on a pure ACK of the initial subflow that carries no other MPTCP
//!   option (`mptcp_pm_nl_addr_send_ack`, `mptcp_pm_add_addr_signal` drops the DSS on a
//!   pure ACK); a data segment has no room for it (12 B timestamps + 24 B DSS + 16 B
//!   ADD_ADDR > 40 B). The client (`mptcp_pm_nl_add_addr_received`) opens a join to the announced
//!   address and echoes the ADD_ADDR on a pure ACK; the echo lets the server announce the
//!   next address (`mptcp_pm_add_addr_echoed`). An ADD_ADDR not echoed is sent again after
//!   `net.mptcp.add_addr_timeout` (120 s), at most `ADD_ADDR_RETRANS_MAX` = 3 times
//!   (`mptcp_pm_add_timer`). Example, path-1 RTT 20 ms: client SYN at 0, SYN/ACK back at
//!   20 ms, third ACK at the server at 30 ms, ADD_ADDR back at the client at 40 ms, join
//!   SYN at 40 ms.
//!
//! Deviations from the reference: the path manager's work queue runs at once (Linux
//! schedules a worker: tens of µs, see `host_jitter`); one announced address per extra path
//! and one join per announced address; kernels that estimate the ADD_ADDR timeout from the
//! RTT instead of the sysctl are not modelled.
//!
//! Checked against Linux 6.18 (kernel backend, two paths of 20 Mbit/s and 20 ms RTT, the
//! join SYN's time after the first SYN in captures of both backends): download, kernel
//! 42.9 ms, simulator 40.7 ms with `fully_established` (20.1 ms with `at_once`, 40.1 ms with
//! `add_addr`); upload, kernel 44.0 ms, simulator 41.3 ms. The kernel's join leaves 0.1–0.3 ms
//! after the packet that establishes the connection (the path manager's worker); the rest is
//! its application's start: the first data leaves the server 2.3 ms (download) or the
//! client 3 ms (upload) after the handshake, where the simulator's leaves at once.

use crate::config::Join;
use crate::units::{Dur, Time};

/// Linux `net.mptcp.add_addr_timeout` default (seconds in the sysctl).
pub const ADD_ADDR_TIMEOUT: Dur = Dur(120_000_000_000);
/// Linux `ADD_ADDR_RETRANS_MAX`.
pub const ADD_ADDR_RETRANS_MAX: u8 = 3;

/// The path manager of one end of a connection.
#[derive(Clone, Debug)]
pub struct PathManager {
    pub rule: Join,
    /// Client: the joins were opened.
    pub joins_opened: bool,
    /// Server (`add_addr`): the next subflow whose address is to be announced (1-based
    /// subflow index; announcements stop past the last subflow).
    pub next_announce: usize,
    /// Server: the address announced and not yet echoed, when it is sent again and how
    /// many times it was.
    pub pending: Option<usize>,
    pub retrans_at: Option<Time>,
    pub retrans: u8,
}

/// What the path manager asks its endpoint to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PmAction {
    None,
    /// Client: open the MP_JOIN subflow of every other path.
    OpenAll,
    /// Server: announce the address of this subflow's path (ADD_ADDR on a pure ACK).
    Announce(usize),
}

impl PathManager {
    pub fn new(rule: Join) -> PathManager {
        PathManager { rule, joins_opened: false, next_announce: 1, pending: None, retrans_at: None, retrans: 0 }
    }

    /// Client: its MP_CAPABLE SYN/ACK arrived.
    pub fn on_synack(&mut self) -> PmAction {
        self.open_if(self.rule == Join::AtOnce)
    }

    /// Client: a packet from the server after the handshake, on the initial subflow, that
    /// carries a DATA_ACK or an ADD_ADDR (the connection is fully established here).
    pub fn on_fully_established_client(&mut self) -> PmAction {
        self.open_if(self.rule == Join::FullyEstablished)
    }

    fn open_if(&mut self, cond: bool) -> PmAction {
        if cond && !self.joins_opened {
            self.joins_opened = true;
            PmAction::OpenAll
        } else {
            PmAction::None
        }
    }

    /// Server: the connection became fully established (the third ACK arrived); `n` is the
    /// number of subflows the connection has.
    pub fn on_fully_established_server(&mut self, now: Time, n: usize) -> PmAction {
        if self.rule != Join::AddAddr || self.pending.is_some() {
            return PmAction::None;
        }
        self.announce_next(now, n)
    }

    fn announce_next(&mut self, now: Time, n: usize) -> PmAction {
        if self.next_announce >= n {
            return PmAction::None;
        }
        let j = self.next_announce;
        self.next_announce += 1;
        self.pending = Some(j);
        self.retrans = 0;
        self.retrans_at = Some(now + ADD_ADDR_TIMEOUT);
        PmAction::Announce(j)
    }

    /// Server: the client echoed the ADD_ADDR of subflow `j`; the next address follows.
    pub fn on_echo(&mut self, now: Time, j: usize, n: usize) -> PmAction {
        if self.pending != Some(j) {
            return PmAction::None;
        }
        self.pending = None;
        self.retrans_at = None;
        self.announce_next(now, n)
    }

    /// Server: the ADD_ADDR timer; returns the address to announce again, if any.
    pub fn on_timeout(&mut self, now: Time) -> PmAction {
        if self.retrans_at.is_none_or(|t| t > now) {
            return PmAction::None;
        }
        let Some(j) = self.pending else {
            self.retrans_at = None;
            return PmAction::None;
        };
        self.retrans += 1;
        self.retrans_at = (self.retrans < ADD_ADDR_RETRANS_MAX).then(|| now + ADD_ADDR_TIMEOUT);
        PmAction::Announce(j)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn add_addr_is_sent_again_three_times_at_the_sysctl_timeout() {
        // mptcp_pm_add_timer: an ADD_ADDR not echoed is re-sent every add_addr_timeout
        // (120 s) while retrans_times < ADD_ADDR_RETRANS_MAX = 3: at 120, 240 and 360 s.
        let mut pm = PathManager::new(Join::AddAddr);
        let t0 = Time::ZERO;
        assert_eq!(pm.on_fully_established_server(t0, 2), PmAction::Announce(1));
        let mut resent = Vec::new();
        let mut now = t0;
        for _ in 0..10 {
            let Some(t) = pm.retrans_at else { break };
            now = t;
            assert_eq!(pm.on_timeout(now), PmAction::Announce(1));
            resent.push(now.since(t0).ns() / 1_000_000_000);
        }
        assert_eq!(resent, vec![120, 240, 360]);
        // The echo of the only extra address ends the announcements.
        assert_eq!(pm.on_echo(now, 1, 2), PmAction::None);
        assert_eq!(pm.retrans_at, None);
    }

    #[test]
    fn addresses_are_announced_one_at_a_time() {
        let mut pm = PathManager::new(Join::AddAddr);
        assert_eq!(pm.on_fully_established_server(Time::ZERO, 3), PmAction::Announce(1));
        assert_eq!(pm.on_echo(Time::ZERO, 2, 3), PmAction::None, "not the pending address");
        assert_eq!(pm.on_echo(Time::ZERO, 1, 3), PmAction::Announce(2));
        assert_eq!(pm.on_echo(Time::ZERO, 2, 3), PmAction::None);
    }

    #[test]
    fn each_rule_opens_the_joins_once_at_its_own_event() {
        let mut at_once = PathManager::new(Join::AtOnce);
        assert_eq!(at_once.on_synack(), PmAction::OpenAll);
        assert_eq!(at_once.on_fully_established_client(), PmAction::None);
        let mut fe = PathManager::new(Join::FullyEstablished);
        assert_eq!(fe.on_synack(), PmAction::None);
        assert_eq!(fe.on_fully_established_client(), PmAction::OpenAll);
        assert_eq!(fe.on_fully_established_client(), PmAction::None);
    }
}
