//! Delay variation drawn per packet, like Linux netem's `delay D J distribution X`.
//!
//! The added delay is J·X where X has mean 0 and standard deviation 1 for the `normal`,
//! `pareto` and `paretonormal` distributions, and X is uniform on [−1, 1] for `uniform`
//! (netem's default: D ± J). The total delay is clipped at zero. Deviations from netem:
//! X is drawn from the distributions directly instead of netem's 4096-entry tables;
//! `pareto` is a Pareto(x_m = 1, α = 3) variable standardised to mean 0 and unit variance
//! (right-skewed: long delay spikes); `paretonormal` is 0.25·normal + 0.75·pareto,
//! rescaled to unit variance (netem's mix). No correlation parameter.

use serde::{Deserialize, Serialize};

use crate::rng::Rng;
use crate::units::Dur;

/// A link's delay variation.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Jitter {
    /// netem's jitter J: the half-width for `uniform`, the standard deviation otherwise.
    pub amount: Dur,
    pub distribution: Distribution,
    /// Whether packets may overtake each other (netem's behaviour) or keep their order.
    pub reorder: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Distribution {
    #[default]
    Uniform,
    Normal,
    Pareto,
    Paretonormal,
}

const PARETO_ALPHA: f64 = 3.0;

fn std_normal(rng: &mut Rng) -> f64 {
    // Box–Muller.
    let u1 = rng.uniform().max(f64::MIN_POSITIVE);
    let u2 = rng.uniform();
    (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
}

fn std_pareto(rng: &mut Rng) -> f64 {
    let a = PARETO_ALPHA;
    let mean = a / (a - 1.0);
    let sd = (a / ((a - 1.0) * (a - 1.0) * (a - 2.0))).sqrt();
    let u = 1.0 - rng.uniform(); // (0, 1]
    (u.powf(-1.0 / a) - mean) / sd
}

/// A standardised draw (see the module doc).
pub fn draw(dist: Distribution, rng: &mut Rng) -> f64 {
    match dist {
        Distribution::Uniform => 2.0 * rng.uniform() - 1.0,
        Distribution::Normal => std_normal(rng),
        Distribution::Pareto => std_pareto(rng),
        Distribution::Paretonormal => {
            let x = 0.25 * std_normal(rng) + 0.75 * std_pareto(rng);
            x / (0.25f64 * 0.25 + 0.75 * 0.75).sqrt()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn moments(dist: Distribution) -> (f64, f64) {
        let mut rng = Rng::stream(9, "jitter");
        let n = 400_000;
        let xs: Vec<f64> = (0..n).map(|_| draw(dist, &mut rng)).collect();
        let m = xs.iter().sum::<f64>() / n as f64;
        let v = xs.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / n as f64;
        (m, v.sqrt())
    }

    #[test]
    fn standardised_distributions_have_zero_mean_and_unit_sd() {
        for d in [Distribution::Normal, Distribution::Pareto, Distribution::Paretonormal] {
            let (m, sd) = moments(d);
            // Pareto(α = 3) has a heavy tail (infinite fourth moment): allow 5 % on the sd.
            assert!(m.abs() < 0.02, "{d:?} mean {m}");
            assert!((sd - 1.0).abs() < 0.05, "{d:?} sd {sd}");
        }
        let (m, sd) = moments(Distribution::Uniform);
        assert!(m.abs() < 0.01 && (sd - 1.0 / 3f64.sqrt()).abs() < 0.01, "uniform {m} {sd}");
    }
}
