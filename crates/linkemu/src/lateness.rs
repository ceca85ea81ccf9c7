//! How late the emulator hands frames over: each frame's lateness is the time between the
//! instant the link model scheduled it to leave (it reached the far end of the emulated
//! wire) and the instant the emulator sent it.
//!
//! A frame counts as late when its lateness exceeds the link's `late_after`: one full-size
//! packet's serialisation time at the link's rate (the MTU in bytes × 8 / rate). Beyond that
//! the emulated link has stopped behaving as the scenario says: the next full-size packet
//! would already have been on the wire while this one was still held. Percentiles come from a
//! log-linear histogram (16 sub-buckets per power of two: a reported p99 is within 1/16 of
//! the true value, rounded up); the maximum and the late count are exact.

/// Sub-buckets per power of two (a bucket's width is at most 1/16 of its lower bound).
const SUB_BITS: u32 = 4;
const SUB: u64 = 1 << SUB_BITS;
/// Buckets: values below `SUB` one each, then `SUB` per power of two up to 2^64.
const BUCKETS: usize = (SUB as usize) * (64 - SUB_BITS as usize + 1);

/// The lateness of one direction's frames (ns).
pub struct Lateness {
    /// Frames above this lateness count as late (ns).
    pub late_after: u64,
    pub frames: u64,
    pub late: u64,
    pub max: u64,
    counts: Vec<u64>,
}

fn bucket(v: u64) -> usize {
    if v < SUB {
        return v as usize;
    }
    let k = 63 - v.leading_zeros();
    let sub = (v >> (k - SUB_BITS)) & (SUB - 1);
    ((k - SUB_BITS + 1) as u64 * SUB + sub) as usize
}

/// The largest value that falls into bucket `b`.
fn upper(b: usize) -> u64 {
    let b = b as u64;
    if b < SUB {
        return b;
    }
    let k = b / SUB + SUB_BITS as u64 - 1;
    let sub = b % SUB;
    let low = (1u64 << k) | (sub << (k - SUB_BITS as u64));
    low.saturating_add((1u64 << (k - SUB_BITS as u64)) - 1)
}

impl Lateness {
    /// Lateness beyond one `mtu_bytes` packet's serialisation at `rate_bps` counts as late
    /// (never, on a link without a rate).
    pub fn new(mtu_bytes: u64, rate_bps: u64) -> Lateness {
        let late_after = match rate_bps {
            0 => u64::MAX,
            r => (mtu_bytes as u128 * 8 * 1_000_000_000 / r as u128).min(u64::MAX as u128) as u64,
        };
        Lateness { late_after, frames: 0, late: 0, max: 0, counts: vec![0; BUCKETS] }
    }

    pub fn record(&mut self, ns: u64) {
        self.frames += 1;
        self.late += (ns > self.late_after) as u64;
        self.max = self.max.max(ns);
        self.counts[bucket(ns)] += 1;
    }

    /// The smallest bucket bound below which at least `q` of the frames fall (0 without frames).
    pub fn quantile(&self, q: f64) -> u64 {
        let want = (q * self.frames as f64).ceil() as u64;
        let mut seen = 0;
        for (b, &n) in self.counts.iter().enumerate() {
            seen += n;
            if n > 0 && seen >= want {
                return upper(b).min(self.max);
            }
        }
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_cover_every_value_in_order() {
        for v in [0u64, 1, 15, 16, 17, 31, 32, 100, 1_000, 12_000, 1 << 40, u64::MAX] {
            let b = bucket(v);
            assert!(upper(b) >= v, "{v}: bucket {b} ends at {}", upper(b));
            assert!(b == 0 || upper(b - 1) < v, "{v}: bucket {b} starts after it");
        }
        assert_eq!(bucket(u64::MAX), BUCKETS - 1);
    }

    #[test]
    fn late_frames_are_those_beyond_one_packets_serialisation() {
        // 1500 B at 1 Gbit/s: 1500 × 8 / 1e9 s = 12 µs.
        let mut l = Lateness::new(1500, 1_000_000_000);
        assert_eq!(l.late_after, 12_000);
        for ns in [0, 5_000, 12_000, 12_001, 2_000_000] {
            l.record(ns);
        }
        assert_eq!((l.frames, l.late, l.max), (5, 2, 2_000_000));
        // 99 frames on time (1 µs), one 5 ms late: the p99 is on time, the maximum is not.
        let mut l = Lateness::new(1500, 10_000_000);
        (0..99).for_each(|_| l.record(1_000));
        l.record(5_000_000);
        assert!(l.quantile(0.99) <= 1_000 + 1_000 / 16, "{}", l.quantile(0.99));
        assert_eq!(l.quantile(1.0), 5_000_000);
    }
}
