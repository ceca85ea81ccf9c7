//! How BBR's model becomes a pacing rate and a congestion window (Linux
//! `bbr_set_pacing_rate`, `bbr_bdp`, `bbr_quantization_budget`, `bbr_inflight`,
//! `bbr_set_cwnd` and their helpers), and the window's save and restore around loss recovery.
//!
//! Deviation: windows in segments of `smss` bytes (Linux: packets); see the module above.

use super::{Mode, Path, CWND_MIN_TARGET, HIGH_GAIN, UNIT};
use crate::cc::CaState;
use crate::cc::{RateAck, Window};
use crate::units::{Dur, Time};

/// Initial window when no RTT is known (segments; Linux `TCP_INIT_CWND`).
const INIT_CWND: u64 = 10;
/// Pacing at 1 % below the estimated rate (Linux `bbr_pacing_margin_percent`).
const PACING_MARGIN_PERCENT: u64 = 1;
/// Below this pacing rate a TSO burst is 1 segment, else at least 2 (Linux
/// `bbr_min_tso_rate` = 1.2 Mbit/s, in bytes per second).
const MIN_TSO_RATE: u64 = 1_200_000 / 8;
/// Linux `sk_pacing_shift` (a TSO burst holds about 2^-10 s of data) and the burst cap
/// (`GSO_LEGACY_MAX_SIZE − 1 − MAX_TCP_HEADER`, bytes, x86-64) and segment cap (0x7F).
const PACING_SHIFT: u32 = 10;
const TSO_MAX_BYTES: u64 = 65_536 - 1 - 320;
const TSO_MAX_SEGS: u64 = 0x7F;

impl Path {
    /// Linux `bbr_rate_bytes_per_sec` + `bbr_bw_to_pacing_rate`: `bw` × `gain`, 1 % below.
    pub fn pacing_rate_for(bw: u64, gain: u64) -> u64 {
        (bw as u128 * gain as u128 / UNIT as u128 * (100 - PACING_MARGIN_PERCENT) as u128 / 100) as u64
    }

    /// Linux `bbr_init_pacing_rate_from_rtt`: high gain × cwnd / SRTT (1 ms without SRTT).
    pub(super) fn init_pacing_rate_from_rtt(&mut self, srtt: Option<Dur>, cwnd_bytes: u64) {
        let rtt = match srtt {
            Some(r) => {
                self.has_seen_rtt = true;
                r.0.max(1_000)
            }
            None => 1_000_000,
        };
        let bw = (cwnd_bytes as u128 * 1_000_000_000 / rtt as u128) as u64;
        self.pacing_rate = Self::pacing_rate_for(bw, HIGH_GAIN);
    }

    /// Linux `bbr_set_pacing_rate`: before the pipe is full the rate only grows (a sample
    /// below the start-up rate would slow start-up down).
    pub(super) fn set_pacing_rate(&mut self, bw: u64, gain: u64, srtt: Option<Dur>, cwnd_bytes: u64) {
        if !self.has_seen_rtt && srtt.is_some() {
            self.init_pacing_rate_from_rtt(srtt, cwnd_bytes);
        }
        let rate = Self::pacing_rate_for(bw, gain);
        if self.full_bw_reached || rate > self.pacing_rate {
            self.pacing_rate = rate;
        }
    }

    /// Linux `bbr_tso_segs_goal`: the TSO burst the kernel would build at this pacing rate
    /// (segments).
    pub fn tso_segs_goal(&self) -> u64 {
        let bytes = (self.pacing_rate >> PACING_SHIFT).min(TSO_MAX_BYTES);
        let min = if self.pacing_rate < MIN_TSO_RATE { 1 } else { 2 };
        (bytes / self.smss).max(min).min(TSO_MAX_SEGS)
    }

    /// Linux `bbr_bdp`: `gain` × bw × min_rtt in segments, rounded up; the initial window
    /// while no RTT is known.
    pub fn bdp(&self, bw: u64, gain: u64) -> u64 {
        let Some(rtt) = self.min_rtt else {
            return INIT_CWND;
        };
        let bytes_x_gain = bw as u128 * rtt.0 as u128 * gain as u128 / UNIT as u128;
        bytes_x_gain.div_ceil(1_000_000_000 * self.smss as u128) as u64
    }

    /// Linux `bbr_quantization_budget`: room for 3 TSO bursts (send, receive and ACK
    /// hosts may each hold one), rounded up to even, and 2 more segments in the probing phase.
    pub(super) fn quantization_budget(&self, cwnd: u64) -> u64 {
        let mut cwnd = cwnd + 3 * self.tso_segs_goal();
        cwnd = (cwnd + 1) & !1;
        if self.mode == Mode::ProbeBw && self.cycle_idx == 0 {
            cwnd += 2;
        }
        cwnd
    }

    /// Linux `bbr_inflight`: the data in flight `gain` calls for (segments).
    pub fn inflight(&self, bw: u64, gain: u64) -> u64 {
        self.quantization_budget(self.bdp(bw, gain))
    }

    /// Linux `bbr_packets_in_net_at_edt`: what will still be in the network when the next
    /// segment departs (segments): the pacing delay delivers some in the meantime; probing
    /// counts the next burst in.
    pub(super) fn packets_in_net_at_edt(&self, inflight: u64, now: Time, next_departure: Time) -> u64 {
        let wait = next_departure.max(now).since(now);
        let interval_delivered = self.segs_floor(self.bw() as u128 * wait.0 as u128 / 1_000_000_000);
        let mut at_edt = inflight;
        if self.pacing_gain > UNIT {
            at_edt += self.tso_segs_goal();
        }
        at_edt.saturating_sub(interval_delivered)
    }

    pub(super) fn segs_floor(&self, bytes: u128) -> u64 {
        (bytes / self.smss as u128) as u64
    }

    /// Linux `bbr_save_cwnd`: remember the window before recovery or PROBE_RTT.
    pub(super) fn save_cwnd(&mut self, cwnd: u64) {
        if self.prev_ca_state < CaState::Recovery && self.mode != Mode::ProbeRtt {
            self.prior_cwnd = cwnd;
        } else {
            self.prior_cwnd = self.prior_cwnd.max(cwnd);
        }
    }

    /// Linux `bbr_set_cwnd_to_recover_or_restore`: losses shrink the window at once; the
    /// first round of fast recovery conserves packets (one out per one delivered); leaving
    /// recovery or loss restores the window from before. Returns the window (segments) and
    /// whether packet conservation decides it.
    pub(super) fn recover_or_restore(&mut self, a: &RateAck, acked: u64, cwnd: u64) -> (u64, bool) {
        let mut cwnd = cwnd;
        let losses = self.segs(a.rs.losses);
        if losses > 0 {
            cwnd = cwnd.saturating_sub(losses).max(1);
        }
        let in_flight = self.segs(a.in_flight);
        let (state, prev) = (a.ca, self.prev_ca_state);
        if state == CaState::Recovery && prev != CaState::Recovery {
            self.packet_conservation = true;
            self.next_rtt_delivered = a.delivered;
            cwnd = in_flight + acked;
        } else if prev >= CaState::Recovery && state < CaState::Recovery {
            cwnd = cwnd.max(self.prior_cwnd);
            self.packet_conservation = false;
        }
        self.prev_ca_state = state;
        if self.packet_conservation {
            return (cwnd.max(in_flight + acked), true);
        }
        (cwnd, false)
    }

    /// Linux `bbr_set_cwnd`: towards cwnd_gain × BDP + ACK-aggregation allowance +
    /// quantization budget, growing by what was delivered (before the pipe is full, only
    /// upwards); at least 4 segments, exactly 4 in PROBE_RTT.
    pub(super) fn set_cwnd(&mut self, a: &RateAck, bw: u64, w: &mut Window) {
        let acked = self.segs(a.rs.acked_sacked);
        let mut cwnd = self.segs(w.cwnd);
        if acked > 0 {
            let (c, conserving) = self.recover_or_restore(a, acked, cwnd);
            cwnd = c;
            if !conserving {
                let mut target = self.bdp(bw, self.cwnd_gain);
                target += self.ack_aggregation_cwnd();
                target = self.quantization_budget(target);
                if self.full_bw_reached {
                    cwnd = (cwnd + acked).min(target);
                } else if cwnd < target || a.delivered < INIT_CWND * self.smss {
                    cwnd += acked;
                }
                cwnd = cwnd.max(CWND_MIN_TARGET);
            }
        }
        if self.mode == Mode::ProbeRtt {
            cwnd = cwnd.min(CWND_MIN_TARGET);
        }
        w.cwnd = cwnd * self.smss;
    }
}
