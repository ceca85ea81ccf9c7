//! STMS, out-of-order sending for in-order arrival (Shi, Cui, Wang, Hu, Dai, Wang, Zheng,
//! "STMS: Improving MPTCP Throughput Under Heterogeneous Networks", USENIX ATC 2018; seed
//! 002, the talk's slides "Out-of-order sending algorithm", "How to get GAP value", "Gap
//! adjustment").
//!
//! The fast subflow (lowest SRTT among usable subflows) sends `unsent[0]`; a slower subflow
//! with room sends `unsent[Gap]`, leaving Gap bytes for the fast subflow so that both
//! arrive in order: Gap / bw_fast + delay_fast = delay_slow. Two ways to get Gap:
//! - gap calculation: Gap = bw_fast × (delay_slow − delay_fast), with one-way delays
//!   ≈ SRTT / 2 and bw_fast = CWND_fast / SRTT_fast;
//! - gap adjustment: out-of-order arrival shows up as a burst of data acknowledged by one
//!   DATA_ACK. When a DATA_ACK advances by Δ segments (more than the 2 an in-order delayed
//!   ACK covers) the segment that was at `data_una` arrived last: if a slow subflow carried
//!   it, the slow data came late and Gap grows by Δ − 2 segments; if the fast subflow carried
//!   it, the slow data came early and Gap shrinks by Δ − 2. The samples are averaged with an
//!   EWMA and applied at most once per `adjust_interval_rtts` SRTTs of the slow subflow.
//!
//! Interpretation and deviations (the slides leave these open):
//! - "Δdata_ack" is read as the DATA_ACK's advance in segments of the fast subflow's SMSS;
//!   one adjustment applies the EWMA of the samples since the previous one, which is then
//!   reset (so a balanced gap stops moving); Gap never goes below zero;
//! - a slow subflow whose `unsent[Gap]` does not exist yet (less unsent data than Gap)
//!   waits rather than sending the head: the fast subflow will deliver that data sooner;
//! - a slow subflow whose `unsent[Gap]` would lie beyond the peer's receive window
//!   (conservatively: Gap plus a segment exceeds the window room above `snd_nxt`) waits;
//! - with more than two subflows every non-fastest subflow uses the same Gap.

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

use super::{Pick, SchedCtx, SchedFactory, SchedView, Scheduler};
use crate::registry::AlgorithmParams;
use crate::units::{Dsn, Dur, Time};

/// STMS parameters (`sched_params.stms`; seed 002, "Gap adjustment" slide).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct StmsParams {
    pub gap: StmsGap,
    /// Starting gap of the adjustment variant (segments).
    pub initial_gap: u64,
    /// Weight of a new DATA_ACK-burst sample in the EWMA of adjustments (0 < w <= 1).
    pub ewma_weight: f64,
    /// Minimum time between two gap adjustments (slow subflow's SRTTs, > 0).
    pub adjust_interval_rtts: f64,
}

impl Default for StmsParams {
    fn default() -> Self {
        StmsParams { gap: StmsGap::default(), initial_gap: 0, ewma_weight: 0.25, adjust_interval_rtts: 1.0 }
    }
}

/// How STMS obtains its gap.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum StmsGap {
    /// Gap = bw_fast × (delay_slow − delay_fast) from the subflows' cwnd and SRTT.
    Calculation,
    /// Gap adjusted from bursts of DATA_ACKs (the slides' deployed variant).
    #[default]
    Adjustment,
}

impl AlgorithmParams for StmsParams {
    const NAME: &'static str = "stms";
    const TABLE: bool = true;
    fn check(&self) -> Result<(), (&'static str, String)> {
        let positive = |v: f64| v > 0.0 && v.is_finite();
        if !(positive(self.ewma_weight) && self.ewma_weight <= 1.0) {
            return Err(("ewma_weight", format!("{} must lie in (0, 1]", self.ewma_weight)));
        }
        if !positive(self.adjust_interval_rtts) {
            return Err(("adjust_interval_rtts", format!("{} must be > 0", self.adjust_interval_rtts)));
        }
        Ok(())
    }
}

impl SchedFactory for StmsParams {
    fn build(&self) -> Box<dyn Scheduler> {
        Box::new(Stms::new(self))
    }
}

pub struct Stms {
    variant: StmsGap,
    /// Starting gap (segments) and current gap of the adjustment variant (bytes; set from
    /// the fast subflow's SMSS at the first decision).
    initial_gap: u64,
    gap: Option<f64>,
    ewma_weight: f64,
    adjust_interval_rtts: f64,
    /// EWMA of the signed burst samples since the last adjustment (segments), and how many.
    ewma: f64,
    samples: u64,
    last_adjust: Option<Time>,
    /// The fastest subflow and its SMSS at the last decision; the slow subflow's SRTT.
    fast: Option<usize>,
    smss: u64,
    slow_srtt: Dur,
    /// Data-sequence ranges sent on slower subflows, not yet DATA_ACKed.
    slow_sent: VecDeque<(u64, u64)>,
}

impl Stms {
    pub fn new(p: &StmsParams) -> Stms {
        Stms {
            variant: p.gap,
            initial_gap: p.initial_gap,
            gap: None,
            ewma_weight: p.ewma_weight,
            adjust_interval_rtts: p.adjust_interval_rtts,
            ewma: 0.0,
            samples: 0,
            last_adjust: None,
            fast: None,
            smss: 1448,
            slow_srtt: Dur::ZERO,
            slow_sent: VecDeque::new(),
        }
    }

    /// Gap calculation: bw_fast × (delay_slow − delay_fast) in bytes.
    pub fn calculated_gap(fast: &SchedView, slow: &SchedView) -> f64 {
        match (fast.srtt_s(), slow.srtt_s()) {
            (Some(rf), Some(rs)) if rf > 0.0 => fast.cwnd as f64 / rf * ((rs - rf) / 2.0).max(0.0),
            _ => 0.0,
        }
    }

    /// Current gap in bytes (adjustment variant).
    pub fn gap_bytes(&self) -> f64 {
        self.gap.unwrap_or(0.0)
    }
}

impl Scheduler for Stms {
    fn name(&self) -> &'static str {
        StmsParams::NAME
    }

    fn next(&mut self, ctx: &SchedCtx) -> Pick {
        let Some(f) = ctx.fastest() else { return Pick::Wait };
        let xf = &ctx.subflows[f];
        let adjusted = *self.gap.get_or_insert(self.initial_gap as f64 * xf.smss as f64);
        self.fast = Some(f);
        self.smss = xf.smss.max(1);
        if xf.has_room {
            return Pick::New { sf: f, skip: 0 };
        }
        let Some(s) = ctx.lowest_rtt_with_room(Some(f)) else { return Pick::Wait };
        let xs = &ctx.subflows[s];
        self.slow_srtt = xs.srtt.unwrap_or(self.slow_srtt);
        let gap = match self.variant {
            StmsGap::Calculation => Stms::calculated_gap(xf, xs),
            StmsGap::Adjustment => adjusted,
        };
        let gap = gap.max(0.0) as u64;
        if gap < ctx.unsent && ctx.fits_window(gap, xs.smss) {
            Pick::New { sf: s, skip: gap }
        } else {
            Pick::Wait
        }
    }

    fn on_sent(&mut self, sf: usize, dsn: Dsn, len: u64) {
        if Some(sf) == self.fast || self.variant != StmsGap::Adjustment {
            return;
        }
        let (s, e) = (dsn.0, dsn.0 + len);
        match self.slow_sent.back_mut() {
            Some(last) if last.1 == s => last.1 = e,
            _ => self.slow_sent.push_back((s, e)),
        }
    }

    fn on_data_ack(&mut self, now: Time, prev: Dsn, data_ack: Dsn) {
        if self.variant != StmsGap::Adjustment {
            return;
        }
        while self.slow_sent.front().is_some_and(|r| r.1 <= prev.0) {
            self.slow_sent.pop_front();
        }
        // Ranges are sent in increasing order on the slow subflows, but retransmissions and
        // gap changes can break that; a linear look is bounded by the slow data in flight.
        let from_slow = self.slow_sent.iter().any(|&(s, e)| s <= prev.0 && prev.0 < e);
        while self.slow_sent.front().is_some_and(|r| r.1 <= data_ack.0) {
            self.slow_sent.pop_front();
        }
        let delta = data_ack.dist(prev) as f64 / self.smss as f64;
        if delta > 2.0 {
            let sample = if from_slow { delta - 2.0 } else { 2.0 - delta };
            self.ewma = if self.samples == 0 {
                sample
            } else {
                (1.0 - self.ewma_weight) * self.ewma + self.ewma_weight * sample
            };
            self.samples += 1;
        }
        let interval = self.slow_srtt.secs_f64() * self.adjust_interval_rtts;
        let due = self.last_adjust.is_none_or(|t| now.since(t).secs_f64() >= interval);
        if let Some(gap) = self.gap.as_mut().filter(|_| self.samples > 0 && due) {
            *gap = (*gap + self.ewma * self.smss as f64).max(0.0);
            self.ewma = 0.0;
            self.samples = 0;
            self.last_adjust = Some(now);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mptcp::sched::harness::*;

    fn stms(gap: StmsGap) -> Stms {
        Stms::new(&StmsParams { gap, ..StmsParams::default() })
    }

    #[test]
    fn the_fast_subflow_sends_the_head_and_the_slow_one_sends_past_the_gap() {
        let mut s = stms(StmsGap::Calculation);
        // Fast: cwnd 20 segments per 20 ms = 1 MB/s; delays 10 and 100 ms: gap 90 kB.
        let v = [view(20, 20, 0), view(200, 10, 0)];
        assert_eq!(s.next(&ctx(&v, 1_000_000)), Pick::New { sf: 0, skip: 0 });
        let v = [view(20, 20, 20), view(200, 10, 0)];
        assert_eq!(s.next(&ctx(&v, 1_000_000)), Pick::New { sf: 1, skip: 90_000 });
        // Not that much unsent data, or not that much window: the slow subflow waits.
        assert_eq!(s.next(&ctx(&v, 90_000)), Pick::Wait);
        let mut c = ctx(&v, 1_000_000);
        c.rwnd_room = 90_500;
        assert_eq!(s.next(&c), Pick::Wait);
    }

    #[test]
    fn a_burst_released_by_slow_data_widens_the_gap_and_one_by_fast_data_narrows_it() {
        let mut s = stms(StmsGap::Adjustment);
        let v = [view(20, 20, 20), view(200, 10, 0)];
        assert_eq!(s.next(&ctx(&v, 1_000_000)), Pick::New { sf: 1, skip: 0 });
        s.on_sent(1, Dsn(0), 1000);
        // The slow segment [0, 1000) arrives last and releases 10 segments: gap += 8.
        s.on_data_ack(Time(1), Dsn(0), Dsn(10_000));
        assert!((s.gap_bytes() - 8000.0).abs() < 1e-9, "{}", s.gap_bytes());
        // Within one slow SRTT (200 ms) no further adjustment is applied.
        s.on_data_ack(Time(2), Dsn(10_000), Dsn(16_000));
        assert!((s.gap_bytes() - 8000.0).abs() < 1e-9);
        // After it, the pending sample (fast data released 6 segments: −4) is applied.
        s.on_data_ack(Time(300_000_000), Dsn(16_000), Dsn(17_000));
        assert!((s.gap_bytes() - 4000.0).abs() < 1e-9, "{}", s.gap_bytes());
        // In-order ACKs of two segments leave it alone.
        s.on_data_ack(Time(900_000_000), Dsn(17_000), Dsn(19_000));
        assert!((s.gap_bytes() - 4000.0).abs() < 1e-9);
    }
}
