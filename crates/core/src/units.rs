//! Units as types: simulated time, durations, bit rates and sequence spaces.
//!
//! Time is an integer count of nanoseconds (`Time`, `Dur`); floats appear only inside an
//! algorithm's private math. Byte counts are plain `u64` and every field that holds one says
//! "(bytes)". Subflow sequence numbers (`Seq`) and MPTCP data sequence numbers (`Dsn`) are
//! distinct types so they never mix by accident.
//!
//! Human-unit parsing (`"8Mbit"`, `"10ms"`, `"600KB"`, `"0.9%"`) lives here too, so the
//! scenario schema and every front end share one grammar.

use std::fmt;
use std::ops::{Add, AddAssign, Sub};

/// A point in simulated time (nanoseconds since the start of the run).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Time(pub u64);

/// A span of simulated time (nanoseconds).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Dur(pub u64);

impl Time {
    pub const ZERO: Time = Time(0);
    pub const MAX: Time = Time(u64::MAX);
    pub fn ns(self) -> u64 {
        self.0
    }
    /// Seconds, correctly rounded (a division, so whole seconds come out exact: 30 s is
    /// 30.0, not 30.000000000000004 as a multiplication by 1e-9 gives).
    pub fn secs_f64(self) -> f64 {
        self.0 as f64 / 1e9
    }
    /// Duration since `earlier` (saturating at zero).
    pub fn since(self, earlier: Time) -> Dur {
        Dur(self.0.saturating_sub(earlier.0))
    }
}

/// The earlier of two optional deadlines (`None` = no deadline).
#[inline]
pub fn earliest(a: Option<Time>, b: Option<Time>) -> Option<Time> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.min(y)),
        (x, None) => x,
        (None, y) => y,
    }
}

impl Dur {
    pub const ZERO: Dur = Dur(0);
    pub const MAX: Dur = Dur(u64::MAX);
    pub const fn from_ns(ns: u64) -> Dur {
        Dur(ns)
    }
    /// The conversions saturate (at `Dur::MAX`, "never") rather than wrap; values read from
    /// user input are bounded by [`MAX_DUR_NS`] before they get here.
    pub const fn from_us(us: u64) -> Dur {
        Dur(us.saturating_mul(1_000))
    }
    pub const fn from_ms(ms: u64) -> Dur {
        Dur(ms.saturating_mul(1_000_000))
    }
    pub const fn from_secs(s: u64) -> Dur {
        Dur(s.saturating_mul(1_000_000_000))
    }
    pub fn from_secs_f64(s: f64) -> Dur {
        Dur((s * 1e9).round().max(0.0) as u64)
    }
    pub fn ns(self) -> u64 {
        self.0
    }
    /// Seconds, correctly rounded (a division, so whole seconds come out exact: 30 s is
    /// 30.0, not 30.000000000000004 as a multiplication by 1e-9 gives).
    pub fn secs_f64(self) -> f64 {
        self.0 as f64 / 1e9
    }
    pub fn ms_f64(self) -> f64 {
        self.0 as f64 * 1e-6
    }
    pub fn saturating_sub(self, o: Dur) -> Dur {
        Dur(self.0.saturating_sub(o.0))
    }
    pub fn times(self, k: u64) -> Dur {
        Dur(self.0.saturating_mul(k))
    }
}

impl Add<Dur> for Time {
    type Output = Time;
    fn add(self, d: Dur) -> Time {
        Time(self.0.saturating_add(d.0))
    }
}
impl AddAssign<Dur> for Time {
    fn add_assign(&mut self, d: Dur) {
        self.0 = self.0.saturating_add(d.0);
    }
}
impl Sub<Time> for Time {
    type Output = Dur;
    fn sub(self, o: Time) -> Dur {
        Dur(self.0.saturating_sub(o.0))
    }
}
impl Add for Dur {
    type Output = Dur;
    fn add(self, o: Dur) -> Dur {
        Dur(self.0.saturating_add(o.0))
    }
}
impl AddAssign for Dur {
    fn add_assign(&mut self, o: Dur) {
        self.0 = self.0.saturating_add(o.0);
    }
}

impl fmt::Display for Dur {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ns = self.0;
        if ns.is_multiple_of(1_000_000_000) {
            write!(f, "{}s", ns / 1_000_000_000)
        } else if ns.is_multiple_of(1_000_000) {
            write!(f, "{}ms", ns / 1_000_000)
        } else if ns.is_multiple_of(1_000) {
            write!(f, "{}us", ns / 1_000)
        } else {
            write!(f, "{ns}ns")
        }
    }
}

/// A bit rate (bits per second).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Rate(pub u64);

impl Rate {
    pub fn bps(self) -> u64 {
        self.0
    }
    /// Serialization time of `bytes` at this rate, rounded up to the next nanosecond.
    pub fn tx_time(self, bytes: u64) -> Dur {
        // bit·ns in 64 bits up to 2.3 GB (a 128-bit division costs a library call per packet).
        match bytes.checked_mul(8_000_000_000) {
            Some(bits) => Dur(bits.div_ceil(self.0)),
            None => Dur((bytes as u128 * 8_000_000_000).div_ceil(self.0 as u128) as u64),
        }
    }
    /// Bytes that can be sent in `d` at this rate (floor).
    pub fn bytes_in(self, d: Dur) -> u64 {
        ((self.0 as u128 * d.0 as u128) / 8_000_000_000) as u64
    }
}

impl fmt::Display for Rate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = self.0;
        if b.is_multiple_of(1_000_000_000) {
            write!(f, "{}Gbit", b / 1_000_000_000)
        } else if b.is_multiple_of(1_000_000) {
            write!(f, "{}Mbit", b / 1_000_000)
        } else if b.is_multiple_of(1_000) {
            write!(f, "{}kbit", b / 1_000)
        } else {
            write!(f, "{b}bit")
        }
    }
}

/// A subflow (TCP) sequence number, kept unwrapped in 64 bits relative to the ISN.
///
/// The engine never has 2^31 bytes in flight, so an unwrapped counter is exactly
/// equivalent to RFC 1982 serial arithmetic on the 32-bit wire field; the wire value is
/// `isn.wrapping_add(seq as u32)` and is produced only when a packet is serialised.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Seq(pub u64);

/// An MPTCP data sequence number (64 bits, relative to the initial data sequence number).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Dsn(pub u64);

macro_rules! seq_ops {
    ($t:ident) => {
        impl $t {
            pub fn get(self) -> u64 {
                self.0
            }
            /// Bytes from `earlier` to `self` (saturating).
            pub fn dist(self, earlier: $t) -> u64 {
                self.0.saturating_sub(earlier.0)
            }
        }
        impl Add<u64> for $t {
            type Output = $t;
            fn add(self, n: u64) -> $t {
                $t(self.0 + n)
            }
        }
        impl AddAssign<u64> for $t {
            fn add_assign(&mut self, n: u64) {
                self.0 += n;
            }
        }
    };
}
seq_ops!(Seq);
seq_ops!(Dsn);

/// A quantity given either in bytes or in packets (queue limits).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Amount {
    Bytes(u64),
    Packets(u64),
}

// ---------------------------------------------------------------------------------------
// Human-unit parsing
// ---------------------------------------------------------------------------------------

fn split_num(s: &str) -> Option<(f64, String)> {
    let s = s.trim();
    let end = s
        .char_indices()
        .find(|(_, c)| !(c.is_ascii_digit() || *c == '.' || *c == '-' || *c == '+'))
        .map(|(i, _)| i)
        .unwrap_or(s.len());
    let (num, unit) = s.split_at(end);
    let v: f64 = num.parse().ok()?;
    if !v.is_finite() {
        return None;
    }
    Some((v, unit.trim().to_string()))
}

/// Parses a duration such as `"10ms"`, `"2s"`, `"1.5 s"`, `"250us"`, `"100ns"`, `"1min"`.
pub fn parse_dur(s: &str) -> Result<Dur, String> {
    let (v, unit) = split_num(s).ok_or_else(|| format!("`{s}` is not a duration"))?;
    let scale = match unit.as_str() {
        "ns" => 1.0,
        "us" | "µs" => 1e3,
        "ms" => 1e6,
        "s" | "sec" => 1e9,
        "min" => 60e9,
        "" => return Err(format!("`{s}` has no unit; write e.g. \"10ms\" or \"2s\" (units: ns, us, ms, s, min)")),
        u => return Err(format!("`{u}` is not a time unit (allowed: ns, us, ms, s, min)")),
    };
    if v < 0.0 {
        return Err(format!("`{s}` is negative; durations must be >= 0"));
    }
    let ns = (v * scale).round();
    if ns > MAX_EXACT {
        return Err(format!("`{s}` is too long: at most 104 days (2^53 ns, the clock's exact range)"));
    }
    Ok(Dur(ns as u64))
}

/// Largest integer a parsed number keeps exactly (2^53): above it a decimal value would be
/// silently rounded, so durations (ns), sizes (bytes) and packet counts are refused there.
const MAX_EXACT: f64 = 9_007_199_254_740_992.0;

/// Longest duration or point in time read from user input (2^53 ns, about 104 days): the
/// bound of [`parse_dur`], applied as well to every timestamp of a trace file, so that the
/// products and sums that convert and repeat them stay far inside 64 bits.
pub const MAX_DUR_NS: u64 = 1 << 53;

/// Fastest link rate accepted (1 Tbit/s): the engine's clock ticks in nanoseconds, and a
/// full-sized 1500-byte packet's serialisation time (12 ns at 1 Tbit/s) must be resolved to
/// within 10 % for the rate to mean anything; faster links would be quantised.
pub const MAX_RATE_BPS: f64 = 1e12;

/// Parses a bit rate such as `"8Mbit"`, `"1.5Gbit"`, `"64kbit"`, `"10Mbps"`, `"2MB/s"`.
pub fn parse_rate(s: &str) -> Result<Rate, String> {
    let (v, unit) = split_num(s).ok_or_else(|| format!("`{s}` is not a bit rate"))?;
    let scale = match unit.as_str() {
        "bit" | "bps" | "bit/s" => 1.0,
        "kbit" | "kbps" | "Kbit" | "kbit/s" => 1e3,
        "Mbit" | "Mbps" | "mbit" | "Mbit/s" => 1e6,
        "Gbit" | "Gbps" | "gbit" | "Gbit/s" => 1e9,
        "B/s" => 8.0,
        "kB/s" | "KB/s" => 8e3,
        "MB/s" => 8e6,
        "GB/s" => 8e9,
        "" => {
            return Err(format!(
                "`{s}` has no unit; write e.g. \"8Mbit\" (units: bit, kbit, Mbit, Gbit, B/s, kB/s, MB/s)"
            ))
        }
        u => {
            return Err(format!(
                "`{u}` is not a rate unit (allowed: bit, kbit, Mbit, Gbit, bps, Mbps, B/s, kB/s, MB/s)"
            ))
        }
    };
    let bps = (v * scale).round();
    if bps <= 0.0 {
        return Err(format!("`{s}` must be a positive rate"));
    }
    if bps > MAX_RATE_BPS {
        return Err(format!(
            "`{s}` is above the 1Tbit fastest link (the 1 ns clock cannot resolve a packet's serialisation time)"
        ));
    }
    Ok(Rate(bps as u64))
}

/// Parses a size in bytes such as `"600KB"`, `"1MiB"`, `"1448"`, `"64 B"`.
/// Decimal prefixes (KB = 1000) and binary ones (KiB = 1024) are both accepted.
pub fn parse_bytes(s: &str) -> Result<u64, String> {
    match parse_amount(s)? {
        Amount::Bytes(b) => Ok(b),
        Amount::Packets(_) => Err(format!("`{s}`: a size in bytes is needed here, not packets")),
    }
}

/// Parses a size in bytes or packets: `"64 packets"`, `"100pkt"`, `"600KB"`, `"1MiB"`.
pub fn parse_amount(s: &str) -> Result<Amount, String> {
    let (v, unit) = split_num(s).ok_or_else(|| format!("`{s}` is not a size"))?;
    if v < 0.0 {
        return Err(format!("`{s}` is negative; sizes must be >= 0"));
    }
    let bytes = |k: f64| {
        let b = (v * k).round();
        if b > MAX_EXACT {
            return Err(format!("`{s}` is too large: at most 2^53 B (9 PB)"));
        }
        Ok(Amount::Bytes(b as u64))
    };
    match unit.as_str() {
        "" | "B" | "byte" | "bytes" => bytes(1.0),
        "KB" | "kB" => bytes(1e3),
        "MB" => bytes(1e6),
        "GB" => bytes(1e9),
        "KiB" => bytes(1024.0),
        "MiB" => bytes(1024.0 * 1024.0),
        "GiB" => bytes(1024.0 * 1024.0 * 1024.0),
        "packets" | "packet" | "pkt" | "pkts" | "p" => {
            if v.fract() != 0.0 {
                return Err(format!("`{s}`: a packet count must be a whole number"));
            }
            if v > MAX_EXACT {
                return Err(format!("`{s}` is too large: at most 2^53 packets"));
            }
            Ok(Amount::Packets(v as u64))
        }
        u => Err(format!("`{u}` is not a size unit (allowed: B, KB, MB, GB, KiB, MiB, GiB, packets)")),
    }
}

/// Parses a probability: `"0.9%"`, `"0.009"`, `"1e-3"`. Must lie in [0, 1].
pub fn parse_prob(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let v = if let Some(p) = t.strip_suffix('%') {
        p.trim().parse::<f64>().map_err(|_| format!("`{s}` is not a percentage"))? / 100.0
    } else {
        t.parse::<f64>().map_err(|_| format!("`{s}` is not a probability (write \"0.9%\" or 0.009)"))?
    };
    if !(0.0..=1.0).contains(&v) || !v.is_finite() {
        return Err(format!("`{s}` must lie between 0 and 1 (0% and 100%)"));
    }
    Ok(v)
}

/// Linux's clock tick (`CONFIG_HZ` = 250 on the measured hosts and on the Ubuntu and Debian
/// kernels the seeds ran: `jiffies` advance every 4 ms).
pub const JIFFY: Dur = Dur(4_000_000);

/// The time between `from` and `to` as the jiffies clock counts it (whole ticks crossed, the
/// ticks falling on multiples of [`JIFFY`] since time zero). Deviation: the clock's phase
/// relative to the run's time origin is fixed at 0.
pub fn jiffies_between(from: Time, to: Time) -> Dur {
    let ticks = (to.0 / JIFFY.0).saturating_sub(from.0 / JIFFY.0);
    Dur(ticks * JIFFY.0)
}

/// Linux `usecs_to_jiffies`: a duration as whole jiffies, rounded up.
pub fn to_jiffies(d: Dur) -> Dur {
    Dur(d.0.div_ceil(JIFFY.0) * JIFFY.0)
}

// ---------------------------------------------------------------------------------------
// Unit-carrying values of the scenario schema: written as strings with units, read from
// strings or plain numbers.
// ---------------------------------------------------------------------------------------

/// Implements serde for a unit-carrying value: `$parse` reads a string with units,
/// `$from_f64` a plain number, `$to_string` writes it back; `$what` is what a wrong value
/// was expected to be.
macro_rules! unit_serde {
    ($t:ty, $parse:expr, $what:expr, $from_f64:expr, $to_string:expr) => {
        impl<'de> serde::Deserialize<'de> for $t {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl<'de> serde::de::Visitor<'de> for V {
                    type Value = $t;
                    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                        f.write_str($what)
                    }
                    fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<$t, E> {
                        $parse(s).map_err(E::custom)
                    }
                    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<$t, E> {
                        ($from_f64)(v).map_err(E::custom)
                    }
                    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<$t, E> {
                        ($from_f64)(v as f64).map_err(E::custom)
                    }
                    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<$t, E> {
                        ($from_f64)(v as f64).map_err(E::custom)
                    }
                }
                d.deserialize_any(V)
            }
        }
        impl serde::Serialize for $t {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(&($to_string)(self))
            }
        }
    };
}

pub(crate) use unit_serde;

/// A size in bytes (`"600KB"`, `"1MiB"`, or a number of bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct ByteSize(pub u64);

unit_serde!(
    ByteSize,
    |s: &str| parse_bytes(s).map(ByteSize),
    "a size such as \"600KB\" or \"1MiB\" (a plain number is bytes)",
    |v: f64| if v >= 0.0 && v.fract() == 0.0 {
        parse_bytes(&format!("{v}B")).map(ByteSize)
    } else {
        Err(format!("{v} must be a whole, non-negative number of bytes"))
    },
    |b: &ByteSize| format!("{}B", b.0)
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_beyond_what_the_engine_represents_are_refused_not_clamped() {
        // 1 Tbit/s: a 1500-byte packet serialises in 12 ns, the 1 ns clock resolves it to 8 %.
        assert_eq!(parse_rate("1000Gbit").unwrap(), Rate(1_000_000_000_000));
        assert!(parse_rate("1001Gbit").unwrap_err().contains("1Tbit"));
        assert!(parse_rate("99999999999999999999999Gbit").is_err());
        // 2^53 is the largest integer a parsed number keeps exactly.
        assert_eq!(parse_bytes("9007199254740992").unwrap(), 1 << 53);
        assert!(parse_bytes("9007199254740994").unwrap_err().contains("2^53"));
        assert!(parse_amount("10000000000000000000000000000 packets").unwrap_err().contains("2^53"));
        assert_eq!(parse_dur("8000000s").unwrap(), Dur::from_secs(8_000_000));
        assert!(parse_dur("10000000000s").unwrap_err().contains("104 days"));
    }

    #[test]
    fn whole_seconds_convert_to_exact_floats() {
        // 30e9 ns × 1e-9 is 30.000000000000004; the division is correctly rounded.
        assert_eq!(Dur::from_secs(30).secs_f64(), 30.0);
        assert_eq!(Time(30_000_000_000).secs_f64(), 30.0);
        assert_eq!(Time(1).secs_f64(), 1e-9);
    }

    #[test]
    fn durations_parse_with_units() {
        assert_eq!(parse_dur("10ms").unwrap(), Dur::from_ms(10));
        assert_eq!(parse_dur("2s").unwrap(), Dur::from_secs(2));
        assert_eq!(parse_dur("1.5 s").unwrap(), Dur::from_ms(1500));
        assert_eq!(parse_dur("250us").unwrap(), Dur::from_us(250));
        assert!(parse_dur("10").is_err());
        assert!(parse_dur("10 parsecs").is_err());
        assert!(parse_dur("-1s").is_err());
    }

    #[test]
    fn rates_parse_with_units() {
        assert_eq!(parse_rate("8Mbit").unwrap(), Rate(8_000_000));
        assert_eq!(parse_rate("1.5Gbit").unwrap(), Rate(1_500_000_000));
        assert_eq!(parse_rate("64kbit").unwrap(), Rate(64_000));
        assert!(parse_rate("0Mbit").is_err());
        assert!(parse_rate("-3Mbit").is_err());
        assert!(parse_rate("8").is_err());
    }

    #[test]
    fn sizes_parse_decimal_binary_and_packets() {
        assert_eq!(parse_bytes("600KB").unwrap(), 600_000);
        assert_eq!(parse_bytes("1MiB").unwrap(), 1_048_576);
        assert_eq!(parse_amount("64 packets").unwrap(), Amount::Packets(64));
        assert!(parse_amount("1.5 packets").is_err());
        assert!(parse_bytes("64 packets").is_err());
    }

    #[test]
    fn probabilities_parse_percent_and_fraction() {
        assert!((parse_prob("0.9%").unwrap() - 0.009).abs() < 1e-15);
        assert_eq!(parse_prob("0.25").unwrap(), 0.25);
        assert!(parse_prob("120%").is_err());
    }

    #[test]
    fn tx_time_is_exact_for_whole_numbers() {
        // 1500 B at 12 Mbit/s = 12000 bit / 12e6 bit/s = 1 ms.
        assert_eq!(Rate(12_000_000).tx_time(1500), Dur::from_ms(1));
        assert_eq!(Rate(8_000_000).bytes_in(Dur::from_secs(1)), 1_000_000);
    }

    #[test]
    fn tx_time_rounds_up_alike_on_both_sides_of_the_64_bit_limit() {
        // bytes · 8e9 bit·ns fits 64 bits up to 2 305 843 009 B; beyond, 128-bit arithmetic.
        // Either way: ceil(bytes · 8e9 / rate) ns.
        let limit = u64::MAX / 8_000_000_000;
        for bytes in [1, 1500, limit - 1, limit, limit + 1, 10 * limit] {
            for rate in [1, 3, 12_000_000, 480_000_000, 999_999_937] {
                let want = (bytes as u128 * 8_000_000_000).div_ceil(rate as u128) as u64;
                assert_eq!(Rate(rate).tx_time(bytes), Dur(want), "{bytes} B at {rate} bit/s");
            }
        }
    }
}
