//! BBR's allowance for ACK aggregation (Linux `bbr_update_ack_aggregation`,
//! `bbr_ack_aggregation_cwnd`): when ACKs arrive in bursts, more data is acknowledged in an
//! epoch than the bandwidth estimate predicts; the largest such excess over the last 5–10
//! rounds is added to the window, so that the sender is not starved between bursts.
//!
//! Deviation: counters in bytes (Linux: packets), turned into segments.

use super::{Path, UNIT};
use crate::cc::RateAck;
use crate::units::Dur;

/// ACK aggregation: gain 1, max-filter of 5 rounds in two halves, at most 100 ms of data,
/// epoch reset after 2^20 segments (Linux `bbr_extra_acked_*`, `bbr_ack_epoch_acked_reset_thresh`).
const EXTRA_ACKED_GAIN: u64 = UNIT;
const EXTRA_ACKED_WIN_RTTS: u32 = 5;
const EXTRA_ACKED_MAX: Dur = Dur(100_000_000);
const ACK_EPOCH_ACKED_RESET: u64 = 1 << 20;

impl Path {
    /// Linux `bbr_ack_aggregation_cwnd`: extra window for ACKs that arrive in bursts, once
    /// the pipe is full (segments).
    pub(super) fn ack_aggregation_cwnd(&self) -> u64 {
        if !self.full_bw_reached {
            return 0;
        }
        let max_aggr = self.segs_floor(self.bw() as u128 * EXTRA_ACKED_MAX.0 as u128 / 1_000_000_000);
        let aggr = EXTRA_ACKED_GAIN * self.extra_acked[0].max(self.extra_acked[1]) / UNIT;
        aggr.min(max_aggr)
    }

    /// Linux `bbr_update_ack_aggregation`: the largest excess of ACKed data over what `bw`
    /// predicts since the ACK rate last fell to it, max-filtered over 5–10 rounds.
    pub(super) fn update_ack_aggregation(&mut self, a: &RateAck, cwnd: u64) {
        let acked = self.segs(a.rs.acked_sacked);
        if acked == 0 || a.rs.delivered.is_none() || a.rs.interval.is_none() {
            return;
        }
        if self.round_start {
            self.extra_acked_win_rtts = (self.extra_acked_win_rtts + 1).min(0x1F);
            if self.extra_acked_win_rtts >= EXTRA_ACKED_WIN_RTTS {
                self.extra_acked_win_rtts = 0;
                self.extra_acked_win_idx = 1 - self.extra_acked_win_idx;
                self.extra_acked[self.extra_acked_win_idx] = 0;
            }
        }
        let epoch = a.delivered_mstamp.since(self.ack_epoch_mstamp);
        let mut expected = self.segs_floor(self.bw() as u128 * epoch.0 as u128 / 1_000_000_000);
        if self.ack_epoch_acked <= expected || self.ack_epoch_acked + acked >= ACK_EPOCH_ACKED_RESET {
            self.ack_epoch_acked = 0;
            self.ack_epoch_mstamp = a.delivered_mstamp;
            expected = 0;
        }
        self.ack_epoch_acked = (self.ack_epoch_acked + acked).min(0xFFFFF);
        let extra = (self.ack_epoch_acked - expected).min(cwnd);
        let slot = &mut self.extra_acked[self.extra_acked_win_idx];
        *slot = (*slot).max(extra);
    }
}
