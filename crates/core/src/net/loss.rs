//! Packet loss models: Bernoulli, Gilbert–Elliott (bursty), and an explicit drop list.
//!
//! Gilbert–Elliott (Gilbert 1960, Elliott 1963) as a two-state Markov chain stepped once per
//! packet: every packet in the Bad state is lost, none in the Good state. Parameterised by
//! the mean loss rate L and the mean burst length B (packets): P(Bad→Good) = r = 1/B and
//! P(Good→Bad) = p = L·r/(1−L), so the stationary loss rate is p/(p+r) = L and bursts are
//! geometric with mean 1/r = B. A loss rate that changes over time (schedules) rescales p.

use crate::rng::Rng;

#[derive(Clone, Debug)]
pub struct LossModel {
    rng: Rng,
    /// Mean burst length (packets); `None` = independent (Bernoulli) losses.
    burst: Option<f64>,
    bad: bool,
    /// Explicit drops: ordinals of packets offered to the link, sorted, and the next one.
    drop: Vec<u64>,
    drop_next: usize,
}

impl LossModel {
    pub fn new(rng: Rng, burst: Option<f64>, drop: Vec<u64>) -> LossModel {
        LossModel { rng, burst: burst.filter(|b| *b > 1.0), bad: false, drop, drop_next: 0 }
    }

    /// Whether the `ordinal`-th packet offered (1-based) is lost, at mean loss rate `rate`.
    pub fn lose(&mut self, ordinal: u64, rate: f64) -> bool {
        let listed = self.drop.get(self.drop_next) == Some(&ordinal);
        if listed {
            self.drop_next += 1;
        }
        let random = match self.burst {
            None => self.rng.bernoulli(rate),
            Some(b) => {
                if rate <= 0.0 {
                    self.bad = false;
                } else {
                    let r = 1.0 / b;
                    let p = (rate * r / (1.0 - rate)).min(1.0);
                    let flip = if self.bad { r } else { p };
                    if self.rng.bernoulli(flip) {
                        self.bad = !self.bad;
                    }
                }
                self.bad
            }
        };
        listed || random
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gilbert_elliott_matches_the_configured_rate_and_burst_length() {
        // 10^6 packets at L = 2 %, B = 4: loss rate and mean burst within 5 %.
        let mut m = LossModel::new(Rng::stream(3, "ge"), Some(4.0), Vec::new());
        let (mut lost, mut bursts, mut prev) = (0u64, 0u64, false);
        let n = 2_000_000u64;
        for k in 1..=n {
            let l = m.lose(k, 0.02);
            lost += l as u64;
            if l && !prev {
                bursts += 1;
            }
            prev = l;
        }
        let rate = lost as f64 / n as f64;
        let burst = lost as f64 / bursts as f64;
        assert!((rate / 0.02 - 1.0).abs() < 0.05, "loss rate {rate}");
        assert!((burst / 4.0 - 1.0).abs() < 0.05, "mean burst {burst}");
    }

    #[test]
    fn listed_ordinals_are_always_lost() {
        let mut m = LossModel::new(Rng::stream(1, "x"), None, vec![2, 5]);
        let got: Vec<bool> = (1..=6).map(|k| m.lose(k, 0.0)).collect();
        assert_eq!(got, vec![false, true, false, false, true, false]);
    }
}
