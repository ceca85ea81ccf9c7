//! RTT estimation and the retransmission timeout (RFC 6298, Linux constants and formula).
//!
//! SRTT and RTTVAR follow RFC 6298 §2 (α = 1/8, β = 1/4). Deviation, as Linux does it
//! (`tcp_rtt_estimator` / `__tcp_set_rto`): RTO = SRTT + max(4·RTTVAR, rto_min) rather than
//! max(SRTT + 4·RTTVAR, rto_min), so a 10 ms path gets 210 ms, not 200 ms. The RTO is clamped
//! to rto_max and doubled per consecutive timeout (exponential backoff). Samples come only
//! from segments never retransmitted (Karn's rule), which the caller enforces.

use crate::units::Dur;

#[derive(Clone, Debug)]
pub struct RttEstimator {
    srtt: Option<Dur>,
    rttvar: Dur,
    min_rtt: Option<Dur>,
    latest: Option<Dur>,
    samples: u64,
    sum_ns: u128,
    rto_initial: Dur,
    rto_min: Dur,
    rto_max: Dur,
    /// Consecutive timeouts (the backoff exponent).
    pub backoff: u32,
    /// An RTO set from the TCP metrics cache (`tcp_init_metrics`), in force until the next
    /// RTT sample.
    seeded_rto: Option<Dur>,
}

impl RttEstimator {
    pub fn new(rto_initial: Dur, rto_min: Dur, rto_max: Dur) -> Self {
        RttEstimator {
            srtt: None,
            rttvar: Dur::ZERO,
            min_rtt: None,
            latest: None,
            samples: 0,
            sum_ns: 0,
            rto_initial,
            rto_min,
            rto_max,
            backoff: 0,
            seeded_rto: None,
        }
    }

    /// Sets the RTO until the next RTT sample (Linux `tcp_init_metrics` from a cached RTT;
    /// the estimator's variables stay as they are).
    pub fn seed_rto(&mut self, rto: Dur) {
        self.seeded_rto = Some(rto);
    }

    /// Folds in one RTT measurement.
    pub fn on_sample(&mut self, r: Dur) {
        self.on_samples(r, r);
    }

    /// Folds in one ACK's two measurements (Linux `tcp_ack_update_rtt`): `seq` into the
    /// smoothed RTT and its variance (`tcp_rtt_estimator`), `last` into the latest and the
    /// minimum RTT (`tcp_update_rtt_min`, `ca_rtt_us`). See [`crate::config::RttSample`].
    pub fn on_samples(&mut self, seq: Dur, last: Dur) {
        let (r, last) = (Dur(seq.0.max(1)), Dur(last.0.max(1)));
        self.seeded_rto = None;
        self.samples += 1;
        self.sum_ns += r.0 as u128;
        self.latest = Some(last);
        self.min_rtt = Some(self.min_rtt.map_or(last, |m| m.min(last)));
        match self.srtt {
            None => {
                // RFC 6298 (2.2): SRTT = R, RTTVAR = R/2.
                self.srtt = Some(r);
                self.rttvar = Dur(r.0 / 2);
            }
            Some(s) => {
                // (2.3): RTTVAR = 3/4 RTTVAR + 1/4 |SRTT − R'|; SRTT = 7/8 SRTT + 1/8 R'.
                let err = s.0.abs_diff(r.0);
                self.rttvar = Dur((3 * self.rttvar.0 + err) / 4);
                self.srtt = Some(Dur((7 * s.0 + r.0) / 8));
            }
        }
    }

    /// The base RTO without backoff.
    pub fn base_rto(&self) -> Dur {
        if let Some(rto) = self.seeded_rto {
            return rto.min(self.rto_max);
        }
        match self.srtt {
            None => self.rto_initial,
            Some(s) => (s + self.rto_min.max(Dur(4 * self.rttvar.0))).min(self.rto_max),
        }
    }

    /// The RTO with the current backoff applied.
    pub fn rto(&self) -> Dur {
        let b = self.base_rto();
        Dur(b.0.saturating_mul(1u64 << self.backoff.min(20))).min(self.rto_max)
    }

    pub fn srtt(&self) -> Option<Dur> {
        self.srtt
    }
    pub fn rttvar(&self) -> Dur {
        self.rttvar
    }
    pub fn min_rtt(&self) -> Option<Dur> {
        self.min_rtt
    }
    pub fn latest(&self) -> Option<Dur> {
        self.latest
    }
    pub fn samples(&self) -> u64 {
        self.samples
    }
    pub fn mean(&self) -> Option<Dur> {
        (self.samples > 0).then(|| Dur((self.sum_ns / self.samples as u128) as u64))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn est() -> RttEstimator {
        RttEstimator::new(Dur::from_secs(1), Dur::from_ms(200), Dur::from_secs(120))
    }

    #[test]
    fn first_sample_sets_srtt_and_half_rttvar() {
        let mut e = est();
        assert_eq!(e.rto(), Dur::from_secs(1));
        e.on_sample(Dur::from_ms(100));
        assert_eq!(e.srtt(), Some(Dur::from_ms(100)));
        assert_eq!(e.rttvar(), Dur::from_ms(50));
        // RTO = 100 + max(4 * 50, 200) = 300 ms.
        assert_eq!(e.rto(), Dur::from_ms(300));
    }

    /// `tcp_ack_update_rtt`: the smoothed RTT folds in `seq_rtt_us`, the minimum and latest
    /// RTT take `ca_rtt_us`. First ACK: seq 30 ms, last 20 ms: SRTT 30 ms, RTTVAR 15, min 20.
    #[test]
    fn the_smoothed_rtt_and_the_minimum_take_their_own_samples() {
        let mut e = est();
        e.on_samples(Dur::from_ms(30), Dur::from_ms(20));
        assert_eq!((e.srtt(), e.rttvar()), (Some(Dur::from_ms(30)), Dur::from_ms(15)));
        assert_eq!((e.min_rtt(), e.latest()), (Some(Dur::from_ms(20)), Some(Dur::from_ms(20))));
    }

    #[test]
    fn a_seeded_rto_holds_until_the_next_sample() {
        // tcp_init_metrics: a cached RTT of 100 ms above the handshake's 20 ms sample gives
        // 100 + max(200, 200) = 300 ms, where the sample alone gives 20 + max(40, 200) = 220 ms.
        let mut e = est();
        e.on_sample(Dur::from_ms(20));
        assert_eq!(e.rto(), Dur::from_ms(220));
        e.seed_rto(Dur::from_ms(300));
        assert_eq!(e.rto(), Dur::from_ms(300));
        e.backoff = 1;
        assert_eq!(e.rto(), Dur::from_ms(600), "backoff applies to the seeded RTO");
        e.backoff = 0;
        // The first data sample (20 ms again): RTTVAR = 3/4·10 + 1/4·0 = 7.5 ms, RTO = 20 + 200.
        e.on_sample(Dur::from_ms(20));
        assert_eq!(e.rto(), Dur::from_ms(220));
    }

    #[test]
    fn steady_samples_converge_and_rto_floors_at_srtt_plus_min() {
        let mut e = est();
        for _ in 0..200 {
            e.on_sample(Dur::from_ms(10));
        }
        assert_eq!(e.srtt(), Some(Dur::from_ms(10)));
        assert_eq!(e.rto(), Dur::from_ms(210));
        e.backoff = 3;
        assert_eq!(e.rto(), Dur::from_ms(1680));
        e.backoff = 30;
        assert_eq!(e.rto(), Dur::from_secs(120));
    }
}
