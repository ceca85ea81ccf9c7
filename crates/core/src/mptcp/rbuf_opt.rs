//! Opportunistic retransmission (M1) and penalisation (M2) of the out-of-tree Linux MPTCP
//! (Raiciu et al., NSDI 2012 §4.2; `mptcp_rcv_buf_optimization`), which the send loop
//! ([`crate::mptcp::xmit`]) applies when a subflow the scheduler picked has room but no new
//! data may go. The scheduler says whether they are on
//! ([`receive_buffer_optimisation`](crate::mptcp::sched::Scheduler::receive_buffer_optimisation):
//! minRTT's `opportunistic_retransmission` and `penalisation`).

use crate::config::PenalisationRule;
use crate::mptcp::connection::Endpoint;
use crate::net::packet::Packet;
use crate::tcp::subflow::{CaState, Subflow};
use crate::units::{jiffies_between, to_jiffies, Dsn, Time};

impl Endpoint {
    /// M1/M2 of the out-of-tree Linux MPTCP (`mptcp_rcv_buf_optimization`, v0.9x
    /// `mptcp_sched.c`), called when subflow `sf` has room but no new data may go: the
    /// connection's receive window is full while data waits (`mptcp_next_segment`, with
    /// penalisation), or nothing is left to send and the writer waits for send-buffer space
    /// (`__mptcp_next_segment`, penalisation only while the send buffer is still full,
    /// `!sk_stream_memory_free`; only with `send_buffer_path`). Nothing happens unless data is
    /// outstanding. Returns true if it sent something.
    /// - M2: unless a penalisation by `sf` happened less than its SRTT ago (in jiffies, the
    ///   clock starting when the subflow was set up: `defsched_init`), the first other subflow
    ///   holding the oldest unacknowledged data is looked at, and if it has a larger SRTT and
    ///   is in the Open state its cwnd is halved (at least one segment), and its ssthresh
    ///   unless it was in slow start (at least two segments).
    /// - M1: if that data was never sent on `sf`, it is sent there when a holder's window is
    ///   at most 4 segments, or when every holder looked at before has more than 4 × `sf`'s
    ///   SRTT (the first holder within 4 × stops the search).
    ///
    /// Subflows are looked at newest first, as Linux walks its `connection_list`.
    pub(super) fn receive_buffer_optimisation(&mut self, now: Time, sf: usize, out: &mut Vec<Packet>) -> bool {
        let (m1, m2) = self.sched.receive_buffer_optimisation();
        if !(m1 || m2) {
            return false;
        }
        let smss = self.params[sf].smss;
        let full = self.snd.full();
        let penal = if self.snd.unsent() > 0 {
            // Data waits: only a full receive window brings us here with penalisation.
            if !self.snd.rwnd_blocked(smss) {
                return false;
            }
            true
        } else if self.snd.app_blocked() && self.rbuf_opt_send_buffer_path {
            full
        } else {
            return false;
        };
        self.snd.rbuf_calls += 1;
        self.snd.rbuf_calls_full += full as u64;
        let una = self.snd.data_una;
        if self.snd.snd_nxt <= una {
            return false;
        }
        let holds = |s: &Subflow| s.sb.find_dsn(una).is_some();
        let fast = self.subflows[sf].as_ref().expect("picked subflow exists");
        let fast_srtt = fast.rtt.srtt().unwrap_or_default();
        let set_up = fast.stats.established_at.unwrap_or(Time::ZERO);
        let last = *self.last_rbuf_opti[sf].get_or_insert(set_up);
        let n_subflows = self.subflows.len();
        let others = move || (0..n_subflows).rev().filter(move |&j| j != sf);
        if m2 && penal && self.penalisation_rule == PenalisationRule::V088 {
            self.penalise_v088(now, sf, una);
        } else if m2 && penal && jiffies_between(last, now) >= to_jiffies(fast_srtt) {
            if let Some(j) = others().find(|&j| self.subflows[j].as_ref().is_some_and(holds)) {
                let h = self.subflows[j].as_mut().expect("holder exists");
                if h.rtt.srtt().is_some_and(|r| r > fast_srtt) && h.ca() == CaState::Open {
                    let prior = h.w.cwnd;
                    h.w.cwnd = (h.w.cwnd / 2).max(h.w.smss);
                    if prior >= h.w.ssthresh {
                        h.w.ssthresh = (h.w.ssthresh / 2).max(2 * h.w.smss);
                    }
                    self.penalised(now, j);
                    self.last_rbuf_opti[sf] = Some(now);
                }
            }
        }
        if !m1 {
            return false;
        }
        let fast = self.subflows[sf].as_ref().expect("picked subflow exists");
        // Already sent there? Copies made here are remembered explicitly: they break the
        // increasing-DSN order `find_dsn` relies on.
        if holds(fast) || self.snd.m1_copies.contains(&(una, sf as u8)) {
            return false;
        }
        let mut retrans = None;
        for j in others() {
            let Some(h) = self.subflows[j].as_ref() else { continue };
            let Some(seg) = h.sb.find_dsn(una) else { continue };
            if h.w.cwnd <= 4 * h.w.smss {
                retrans = Some(*seg);
                break;
            }
            if h.rtt.srtt().is_none_or(|r| r.0 <= 4 * fast_srtt.0) {
                retrans = None;
                break;
            }
            retrans = Some(*seg);
        }
        let Some(seg) = retrans else {
            return false;
        };
        let n = (seg.dsn + seg.len as u64).dist(una).min(smss);
        self.send_on(now, sf, una, n, false, out);
        self.snd.opportunistic_retransmissions += 1;
        self.snd.m1_copies.push((una, sf as u8));
        true
    }

    /// M2 as v0.86–v0.88 wrote it (`mptcp_rcv_buf_optimization` in `mptcp_output.c`): the
    /// first other subflow holding the oldest unacknowledged data (newest first), unless it
    /// was penalised less than its own SRTT ago (in jiffies), is halved (at least one segment)
    /// with its ssthresh set to the halved window (at least two segments) if its rate
    /// cwnd / SRTT is below that of the calling subflow `sf`, in whatever state it is.
    fn penalise_v088(&mut self, now: Time, sf: usize, una: Dsn) {
        let caller = self.subflows[sf].as_ref().expect("picked subflow exists");
        let (c_cwnd, c_srtt) = (caller.w.cwnd, caller.rtt.srtt().unwrap_or_default().0);
        let Some(j) = (0..self.subflows.len())
            .rev()
            .filter(|&j| j != sf)
            .find(|&j| self.subflows[j].as_ref().is_some_and(|s| s.sb.find_dsn(una).is_some()))
        else {
            return;
        };
        let h = self.subflows[j].as_mut().expect("holder exists");
        let h_srtt = h.rtt.srtt().unwrap_or_default();
        if self.last_penalised[j].is_some_and(|t| jiffies_between(t, now) < to_jiffies(h_srtt)) {
            return;
        }
        if v088_slower(h.w.cwnd, h_srtt.0, c_cwnd, c_srtt) {
            h.w.cwnd = (h.w.cwnd / 2).max(h.w.smss);
            h.w.ssthresh = h.w.cwnd.max(2 * h.w.smss);
            self.penalised(now, j);
            self.last_penalised[j] = Some(now);
        }
    }

    /// Subflow `j`'s window was just halved by M2: counted, and its view rebuilt.
    fn penalised(&mut self, now: Time, j: usize) {
        self.subflows[j].as_mut().expect("holder exists").stats.penalisations += 1;
        self.snd.penalisations += 1;
        self.refresh_view(now, j);
    }
}

/// v0.88's penalisation test: the holder's rate `cwnd / srtt` is below the caller's, compared
/// crosswise without division (`tp_it->snd_cwnd * tp->srtt < tp->snd_cwnd * tp_it->srtt`).
/// A window of 0 SRTT (no sample yet) compares as a rate of nothing.
pub(crate) fn v088_slower(holder_cwnd: u64, holder_srtt_ns: u64, caller_cwnd: u64, caller_srtt_ns: u64) -> bool {
    (holder_cwnd as u128) * (caller_srtt_ns as u128) < (caller_cwnd as u128) * (holder_srtt_ns as u128)
}

#[cfg(test)]
mod v088_tests {
    use super::v088_slower;

    /// Chen & Towsley's case: WiFi (30 ms, a loss-limited 10-segment window: 10 · 1448 B /
    /// 30 ms = 3.9 Mbit/s) holds the oldest data, cellular (600 ms under bufferbloat, 800
    /// segments: 15.4 Mbit/s) calls. v0.88 halves WiFi although its SRTT is 20 times lower;
    /// v0.9x's test (holder SRTT above the caller's) would not. The other way round, cellular
    /// holding and WiFi calling, cellular's rate is higher: not halved.
    #[test]
    fn the_holder_is_halved_when_its_rate_is_below_the_callers() {
        let (wifi, cell) = ((10 * 1448, 30_000_000), (800 * 1448, 600_000_000));
        assert!(v088_slower(wifi.0, wifi.1, cell.0, cell.1));
        assert!(!v088_slower(cell.0, cell.1, wifi.0, wifi.1));
        // Equal rates (twice the window over twice the SRTT): not below, not halved.
        assert!(!v088_slower(20 * 1448, 60_000_000, 10 * 1448, 30_000_000));
        // Windows of a few GB and SRTTs of minutes do not overflow the products.
        assert!(v088_slower(u32::MAX as u64, 120_000_000_000, u32::MAX as u64 + 1, 120_000_000_000));
    }
}
