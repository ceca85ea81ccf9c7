//! BBR's long-term bandwidth sampling (Linux `bbr_lt_bw_sampling` and helpers): detects a
//! token-bucket policer from two sampling intervals of equal delivery rate with high loss,
//! and then uses that rate (`lt_bw`) with a pacing gain of 1 for 48 rounds.
//!
//! Deviation: counters in bytes (Linux: packets), turned into segments for the loss ratio.

use super::{Mode, Path, UNIT};
use crate::cc::RateAck;
use crate::rng::Rng;

/// Long-term sampling (Linux `bbr_lt_*`): intervals of 4–16 rounds, ended by a loss rate of
/// ≥ 50/256 ≈ 20 %; two intervals within 1/8 or 4 kbit/s of each other mean a policer; its
/// rate is then used for 48 rounds.
const LT_INTVL_MIN_RTTS: u32 = 4;
const LT_LOSS_THRESH: u64 = 50;
const LT_BW_RATIO: u64 = UNIT / 8;
const LT_BW_DIFF: u64 = 4000 / 8;
const LT_BW_MAX_RTTS: u32 = 48;

impl Path {
    /// Linux `bbr_reset_lt_bw_sampling_interval`.
    pub(super) fn reset_lt_bw_sampling_interval(&mut self, a: &RateAck) {
        self.lt_last_stamp = a.delivered_mstamp.0 / 1_000_000;
        self.lt_last_delivered = a.delivered;
        self.lt_last_lost = a.lost;
        self.lt_rtt_cnt = 0;
    }

    /// Linux `bbr_reset_lt_bw_sampling`.
    pub(super) fn reset_lt_bw_sampling(&mut self, a: &RateAck) {
        self.lt_bw = 0;
        self.lt_use_bw = false;
        self.lt_is_sampling = false;
        self.reset_lt_bw_sampling_interval(a);
    }

    /// Linux `bbr_lt_bw_interval_done`: two consistent intervals mean a policer.
    pub(super) fn lt_bw_interval_done(&mut self, bw: u64, a: &RateAck) {
        if self.lt_bw > 0 {
            let diff = bw.abs_diff(self.lt_bw);
            if diff * UNIT <= LT_BW_RATIO * self.lt_bw || Self::pacing_rate_for(diff, UNIT) <= LT_BW_DIFF {
                self.lt_bw = (bw + self.lt_bw) / 2;
                self.lt_use_bw = true;
                self.pacing_gain = UNIT;
                self.lt_rtt_cnt = 0;
                return;
            }
        }
        self.lt_bw = bw;
        self.reset_lt_bw_sampling_interval(a);
    }

    /// Linux `bbr_lt_bw_sampling`: token-bucket policer detection. Sampling starts at a loss
    /// and measures the delivery rate over 4–16 rounds ending at a loss, when the interval's
    /// loss rate is at least 20 %.
    pub(super) fn lt_bw_sampling(&mut self, a: &RateAck, rng: &mut Rng) {
        if self.lt_use_bw {
            if self.mode == Mode::ProbeBw && self.round_start {
                self.lt_rtt_cnt += 1;
                if self.lt_rtt_cnt >= LT_BW_MAX_RTTS {
                    self.reset_lt_bw_sampling(a);
                    self.reset_probe_bw_mode(rng, a.delivered_mstamp);
                }
            }
            return;
        }
        if !self.lt_is_sampling {
            if a.rs.losses == 0 {
                return;
            }
            self.reset_lt_bw_sampling_interval(a);
            self.lt_is_sampling = true;
        }
        if a.rs.is_app_limited {
            self.reset_lt_bw_sampling(a);
            return;
        }
        if self.round_start {
            self.lt_rtt_cnt += 1;
        }
        if self.lt_rtt_cnt < LT_INTVL_MIN_RTTS {
            return;
        }
        if self.lt_rtt_cnt > 4 * LT_INTVL_MIN_RTTS {
            self.reset_lt_bw_sampling(a);
            return;
        }
        if a.rs.losses == 0 {
            return;
        }
        let lost = self.segs(a.lost - self.lt_last_lost);
        let delivered = self.segs(a.delivered - self.lt_last_delivered);
        if delivered == 0 || lost * UNIT < LT_LOSS_THRESH * delivered {
            return;
        }
        let t_ms = (a.delivered_mstamp.0 / 1_000_000).saturating_sub(self.lt_last_stamp);
        if t_ms < 1 {
            return;
        }
        let bw = ((a.delivered - self.lt_last_delivered) as u128 * 1000 / t_ms as u128) as u64;
        self.lt_bw_interval_done(bw, a);
    }
}
