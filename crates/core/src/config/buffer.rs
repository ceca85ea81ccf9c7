//! Socket buffer sizes in the scenario schema: a fixed size, or a `tcp_wmem`/`tcp_rmem`-style
//! triple that the stack auto-tunes.
//!
//! - `sndbuf = "1MiB"`: a fixed buffer, what a program gets from `setsockopt(SO_SNDBUF)` /
//!   `SO_RCVBUF`. With `buffer_accounting = "truesize"` (the `linux` stack) it is read as Linux
//!   reads the option: the kernel stores twice the value (`sk_sndbuf = 2 × val`, "to allow
//!   for bookkeeping overhead", `sock_setsockopt` → `__sock_set_sndbuf`) and charges every
//!   segment's truesize against it, and auto-tuning is off for that socket
//!   (`SOCK_SNDBUF_LOCK` / `SOCK_RCVBUF_LOCK`). With `buffer_accounting = "payload"` (the
//!   classic model of the papers) it is the number of payload bytes the buffer holds.
//! - `sndbuf = { min = "4KB", default = "16KB", max = "4MiB" }`: the sysctl triple
//!   (`net.ipv4.tcp_wmem`, `tcp_rmem`); the buffer starts at `default` and the stack grows
//!   it up to `max` (Linux: `tcp_sndbuf_expand`, `tcp_rcv_space_adjust`). `min` is the floor
//!   under memory pressure, which the simulator does not model (it is kept for the kernel
//!   backend, which writes the triple into the namespaces' sysctls).

use serde::{Deserialize, Serialize};

use super::ByteSize;

/// The largest size a buffer may be written with: `INT_MAX` bytes. Linux keeps `sk_sndbuf`,
/// `sk_rcvbuf` and the `tcp_wmem`/`tcp_rmem` entries in C `int`s (and clamps `SO_SNDBUF` /
/// `SO_RCVBUF` to `INT_MAX / 2` before doubling, `__sock_set_rcvbuf`), so no larger buffer
/// exists on a real host; the bound also keeps the window arithmetic (size × scaling ratio)
/// far from 64-bit overflow.
pub const BUF_MAX: u64 = i32::MAX as u64;

/// A `tcp_wmem`/`tcp_rmem`-style triple (bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BufTriple {
    pub min: ByteSize,
    pub default: ByteSize,
    pub max: ByteSize,
}

/// A send or receive buffer: fixed, or auto-tuned within a triple.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BufSize {
    /// `SO_SNDBUF` / `SO_RCVBUF` semantics (see the module documentation).
    Fixed(ByteSize),
    /// Auto-tuned from `default` up to `max`.
    Auto(BufTriple),
}

impl BufSize {
    /// The largest size the buffer can take, as written (before any doubling).
    pub fn max(&self) -> u64 {
        match self {
            BufSize::Fixed(b) => b.0,
            BufSize::Auto(t) => t.max.0,
        }
    }

    /// The size the buffer starts with, as written (before any doubling).
    pub fn initial(&self) -> u64 {
        match self {
            BufSize::Fixed(b) => b.0,
            BufSize::Auto(t) => t.default.0,
        }
    }

    pub fn is_auto(&self) -> bool {
        matches!(self, BufSize::Auto(_))
    }

    /// Semantic checks: sizes > 0 and at most `BUF_MAX`, `min <= default <= max`, every
    /// size at least one segment (`seg` bytes). The error is (key below the buffer's key,
    /// message).
    pub fn check(&self, seg: u64) -> Result<(), (&'static str, String)> {
        let sized = |key: &'static str, b: ByteSize| -> Result<(), (&'static str, String)> {
            if b.0 == 0 {
                return Err((key, "must be > 0".into()));
            }
            if b.0 > BUF_MAX {
                return Err((
                    key,
                    format!(
                        "{} B is above {BUF_MAX} B, the largest socket buffer Linux can hold (sk_sndbuf, \
                         sk_rcvbuf and the tcp_wmem/tcp_rmem entries are C ints)",
                        b.0
                    ),
                ));
            }
            if b.0 < seg {
                return Err((key, format!("{} B is smaller than one segment ({seg} B)", b.0)));
            }
            Ok(())
        };
        match *self {
            BufSize::Fixed(b) => sized("", b),
            BufSize::Auto(t) => {
                sized(".min", t.min)?;
                sized(".default", t.default)?;
                sized(".max", t.max)?;
                if t.min > t.default {
                    return Err((
                        ".min",
                        format!("{} B is above default ({} B); need min <= default <= max", t.min.0, t.default.0),
                    ));
                }
                if t.default > t.max {
                    return Err((
                        ".default",
                        format!("{} B is above max ({} B); need min <= default <= max", t.default.0, t.max.0),
                    ));
                }
                Ok(())
            }
        }
    }
}

impl Serialize for BufSize {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            BufSize::Fixed(b) => b.serialize(s),
            BufSize::Auto(t) => t.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for BufSize {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = BufSize;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a size such as \"256KB\" (fixed) or a table { min, default, max } (auto-tuned)")
            }
            fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<BufSize, E> {
                ByteSize::deserialize(serde::de::value::StrDeserializer::new(s)).map(BufSize::Fixed)
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<BufSize, E> {
                Ok(BufSize::Fixed(ByteSize(v)))
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<BufSize, E> {
                ByteSize::deserialize(serde::de::value::I64Deserializer::new(v)).map(BufSize::Fixed)
            }
            fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<BufSize, E> {
                ByteSize::deserialize(serde::de::value::F64Deserializer::new(v)).map(BufSize::Fixed)
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, m: A) -> Result<BufSize, A::Error> {
                BufTriple::deserialize(serde::de::value::MapAccessDeserializer::new(m)).map(BufSize::Auto)
            }
        }
        d.deserialize_any(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Result<BufSize, String> {
        serde_json::from_str::<BufSize>(s).map_err(|e| e.to_string())
    }

    #[test]
    fn a_size_is_fixed_and_a_table_is_a_triple() {
        assert_eq!(parse("\"256KB\"").unwrap(), BufSize::Fixed(ByteSize(256_000)));
        assert_eq!(parse("65536").unwrap(), BufSize::Fixed(ByteSize(65536)));
        let t = parse(r#"{"min": 4096, "default": "16KiB", "max": "4MiB"}"#).unwrap();
        assert_eq!(
            t,
            BufSize::Auto(BufTriple { min: ByteSize(4096), default: ByteSize(16384), max: ByteSize(4 << 20) })
        );
        assert_eq!(t.initial(), 16384);
        assert_eq!(t.max(), 4 << 20);
        // Round trip through the resolved form.
        assert_eq!(parse(&serde_json::to_string(&t).unwrap()).unwrap(), t);
        assert!(parse(r#"{"min": 4096, "default": 16384}"#).unwrap_err().contains("max"));
        assert!(parse(r#"{"min": 1, "default": 2, "max": 3, "maxx": 4}"#).unwrap_err().contains("maxx"));
        assert!(parse("-5").is_err());
    }

    #[test]
    fn the_triple_must_be_ordered_and_sizes_positive() {
        let t = |a, b, c| BufSize::Auto(BufTriple { min: ByteSize(a), default: ByteSize(b), max: ByteSize(c) });
        assert!(t(4096, 16384, 4 << 20).check(1448).is_ok());
        assert_eq!(t(20000, 16384, 4 << 20).check(1448).unwrap_err().0, ".min");
        assert_eq!(t(4096, 8 << 20, 4 << 20).check(1448).unwrap_err().0, ".default");
        assert_eq!(t(0, 16384, 4 << 20).check(1448).unwrap_err().0, ".min");
        assert_eq!(BufSize::Fixed(ByteSize(0)).check(1448).unwrap_err().1, "must be > 0");
        assert!(BufSize::Fixed(ByteSize(1000)).check(1448).unwrap_err().1.contains("smaller than one segment"));
    }
}
