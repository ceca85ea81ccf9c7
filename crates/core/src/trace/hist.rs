//! A log-linear histogram of durations (nanoseconds) with bounded relative error.
//!
//! 64 sub-buckets per power of two: quantiles are exact below 64 ns and within 1/64
//! (1.6 %) relative error above; mean and maximum are exact. Memory is fixed (~30 KiB).

const SUB_BITS: u32 = 6;
const SUB: u64 = 1 << SUB_BITS;
/// Buckets: 64 exact ones below [`SUB`], then [`SUB`] per power of two up to 2^63.
const BUCKETS: usize = ((64 - SUB_BITS as usize) + 1) * SUB as usize;

#[derive(Clone, Debug)]
pub struct Histogram {
    /// Values per bucket; their total is the number of values (summed when asked, at
    /// report time, so recording a value touches one counter fewer).
    counts: Box<[u64; BUCKETS]>,
    sum: u128,
    max: u64,
}

impl Default for Histogram {
    fn default() -> Self {
        Histogram { counts: Box::new([0; BUCKETS]), sum: 0, max: 0 }
    }
}

#[inline]
fn index(v: u64) -> usize {
    if v < SUB {
        return v as usize;
    }
    let e = 63 - v.leading_zeros(); // >= SUB_BITS
    let sub = (v >> (e - SUB_BITS)) & (SUB - 1);
    ((e - SUB_BITS + 1) as u64 * SUB + sub) as usize
}

/// Lower edge and width of bucket `i`.
fn bucket(i: usize) -> (u64, u64) {
    let i = i as u64;
    if i < SUB {
        return (i, 1);
    }
    let e = i / SUB - 1 + SUB_BITS as u64;
    let sub = i % SUB;
    let width = 1u64 << (e - SUB_BITS as u64);
    ((SUB + sub) * width, width)
}

impl Histogram {
    #[inline]
    pub fn record(&mut self, v: u64) {
        self.counts[index(v)] += 1;
        self.sum += v as u128;
        self.max = self.max.max(v);
    }
    pub fn count(&self) -> u64 {
        self.counts.iter().sum()
    }
    /// Values above zero (bucket 0 holds exactly the zeros).
    pub fn nonzero(&self) -> u64 {
        self.count() - self.counts[0]
    }
    pub fn max(&self) -> u64 {
        self.max
    }
    pub fn mean(&self) -> f64 {
        let n = self.count();
        if n == 0 {
            0.0
        } else {
            self.sum as f64 / n as f64
        }
    }
    /// The q-quantile (0 <= q <= 1), at the middle of its bucket, never above the maximum.
    pub fn quantile(&self, q: f64) -> u64 {
        let n = self.count();
        if n == 0 {
            return 0;
        }
        let rank = ((q * n as f64).ceil() as u64).clamp(1, n);
        let mut seen = 0;
        for (i, c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                let (lo, w) = bucket(i);
                return (lo + w / 2).min(self.max);
            }
        }
        self.max
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_round_trip_and_quantiles_are_within_relative_error() {
        for v in [0u64, 1, 63, 64, 65, 1000, 123_456_789, u64::MAX / 3] {
            let (lo, w) = bucket(index(v));
            assert!(lo <= v && v < lo.saturating_add(w), "{v}: [{lo}, +{w})");
        }
        let mut h = Histogram::default();
        for v in 1..=100_000u64 {
            h.record(v * 1000);
        }
        // Uniform 1..100000 µs: median 50 ms, p99 99 ms (within 1/64).
        let p50 = h.quantile(0.5) as f64;
        let p99 = h.quantile(0.99) as f64;
        assert!((p50 / 50_000_000.0 - 1.0).abs() < 1.0 / 64.0, "{p50}");
        assert!((p99 / 99_000_000.0 - 1.0).abs() < 1.0 / 64.0, "{p99}");
        assert_eq!(h.max(), 100_000_000);
        assert!((h.mean() - 50_000_500.0).abs() < 1.0);
    }
}
