//! The queue part of the link schema: the hard limit (`queue`) and the active queue
//! management (`aqm`), their checks, and [`qdisc`], the one function that turns them into a
//! link's queue discipline ([`crate::net::qdisc`]).
//!
//! Adding a discipline: its file under `net/qdisc/` and its line in that module's list, then
//! here one [`Aqm`] arm with its defaults, its arm in [`qdisc`] and, if its values need
//! checks, in [`check_aqm`].

use serde::{Deserialize, Serialize};

use super::{ConfigError, Prob};
use crate::net::qdisc::codel::CodelParams;
use crate::net::qdisc::red::{RedParams, AVPKT};
use crate::net::qdisc::tbf::{TbfLimit, TbfParams};
use crate::net::qdisc::{QdiscParams, QueueLimit};
use crate::units::{self, Amount, ByteSize, Dur, Rate};

fn parse_queue(s: &str) -> Result<QueueLimit, String> {
    match units::parse_amount(s) {
        Ok(Amount::Packets(p)) => Ok(QueueLimit::Packets(p)),
        Ok(Amount::Bytes(b)) => Ok(QueueLimit::Bytes(b)),
        Err(e) => match units::parse_dur(s) {
            Ok(d) => Ok(QueueLimit::Time(d)),
            Err(_) => Err(format!("{e}; or a time such as \"80ms\"")),
        },
    }
}

super::unit_serde!(
    QueueLimit,
    parse_queue,
    "a queue limit such as \"100 packets\", \"64KB\" or \"80ms\" (a plain number is packets)",
    |v: f64| if v >= 0.0 && v.fract() == 0.0 {
        parse_queue(&format!("{v} packets"))
    } else {
        Err(format!("{v} must be a whole number of packets"))
    },
    |q: &QueueLimit| match *q {
        QueueLimit::Packets(p) => format!("{p} packets"),
        QueueLimit::Bytes(b) => format!("{b}B"),
        QueueLimit::Time(d) => d.to_string(),
    }
);

/// Active queue management.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum Aqm {
    /// CoDel (RFC 8289); `queue` stays the hard limit.
    Codel {
        #[serde(default = "codel_target")]
        target: Dur,
        #[serde(default = "codel_interval")]
        interval: Dur,
    },
    /// RED (Floyd & Jacobson 1993); `queue` stays the hard limit. Thresholds on the average
    /// queue in packets (1500 B each), bytes, or time at the link rate.
    Red {
        min: QueueLimit,
        max: QueueLimit,
        #[serde(default = "red_max_p")]
        max_p: Prob,
        #[serde(default = "red_weight")]
        weight: f64,
        #[serde(default)]
        gentle: bool,
    },
    /// TBF (Linux `sch_tbf` as tc configures it): a bucket of `burst` bytes and a byte
    /// `limit`, or tc's `latency` (converted to `rate · latency + burst`); optional
    /// `peakrate` with the `mtu` tc requires beside it. The shaping rate is the link's;
    /// `queue` stays the hard limit.
    Tbf {
        burst: ByteSize,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        limit: Option<ByteSize>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        latency: Option<Dur>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        peakrate: Option<Rate>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mtu: Option<ByteSize>,
        /// The rate of the device beneath TBF: TBF then shapes with its bucket (a full bucket
        /// lets `burst` bytes leave at the device's rate) and the device sends at this rate.
        /// Unset: the link's transmitter is the shaper.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        device: Option<Rate>,
    },
}

/// Floyd & Jacobson's recommended maximum drop probability.
fn red_max_p() -> Prob {
    Prob(0.1)
}
/// Floyd & Jacobson's recommended queue weight (§7: w_q ≥ 0.001, 0.002 in their simulations).
fn red_weight() -> f64 {
    0.002
}

fn codel_target() -> Dur {
    Dur::from_ms(5)
}
fn codel_interval() -> Dur {
    Dur::from_ms(100)
}

/// The queue discipline of a link with hard limit `queue` and AQM `aqm` (drop-tail without).
pub fn qdisc(queue: QueueLimit, aqm: Option<Aqm>) -> QdiscParams {
    match aqm {
        None => QdiscParams::DropTail(queue),
        Some(Aqm::Codel { target, interval }) => QdiscParams::Codel(CodelParams { limit: queue, target, interval }),
        Some(Aqm::Red { min, max, max_p, weight, gentle }) => {
            QdiscParams::Red(RedParams { limit: queue, min, max, max_p: max_p.0, w_q: weight, gentle })
        }
        Some(Aqm::Tbf { burst, limit, latency, peakrate, mtu, device }) => QdiscParams::Tbf(TbfParams {
            hard: queue,
            burst: burst.0,
            // check_aqm refuses a TBF with neither or both.
            limit: match (limit, latency) {
                (Some(b), _) => TbfLimit::Bytes(b.0),
                (None, l) => TbfLimit::Latency(l.unwrap_or(Dur::ZERO)),
            },
            peak: peakrate.map(|r| (r, mtu.map_or(0, |m| m.0))),
            device,
        }),
    }
}

pub(super) fn show_queue(q: QueueLimit) -> String {
    match q {
        QueueLimit::Packets(p) => format!("{p} packets"),
        QueueLimit::Bytes(b) => format!("{b} B"),
        QueueLimit::Time(d) => d.to_string(),
    }
}

/// Checks an AQM's values; `at` names a key where it is written.
pub(super) fn check_aqm(aqm: Option<Aqm>, at: &dyn Fn(&str) -> String) -> Result<(), ConfigError> {
    match aqm {
        Some(Aqm::Codel { target, interval }) if target == Dur::ZERO || interval == Dur::ZERO => {
            return Err(ConfigError::new(at("aqm"), "CoDel's target and interval must be > 0"));
        }
        Some(Aqm::Red { min, max, max_p, weight, .. }) => {
            let bytes = |q: QueueLimit| match q {
                QueueLimit::Packets(p) => Some(p as f64 * AVPKT as f64),
                QueueLimit::Bytes(b) => Some(b as f64),
                QueueLimit::Time(_) => None,
            };
            let same_unit = std::mem::discriminant(&min) == std::mem::discriminant(&max);
            let ordered = match (min, max) {
                (QueueLimit::Time(a), QueueLimit::Time(b)) => a < b,
                _ => bytes(min).zip(bytes(max)).is_some_and(|(a, b)| a < b),
            };
            if !same_unit && (matches!(min, QueueLimit::Time(_)) || matches!(max, QueueLimit::Time(_))) {
                return Err(ConfigError::new(
                    at("aqm.min"),
                    "RED's min and max must both be times, or both packets/bytes",
                ));
            }
            if !ordered {
                return Err(ConfigError::new(
                    at("aqm.max"),
                    format!("{} must exceed min = {}", show_queue(max), show_queue(min)),
                ));
            }
            if bytes(min) == Some(0.0) {
                return Err(ConfigError::new(at("aqm.min"), "must be > 0"));
            }
            if !(max_p.0 > 0.0 && max_p.0 <= 1.0) {
                return Err(ConfigError::new(at("aqm.max_p"), format!("{} must lie in (0, 1]", max_p.0)));
            }
            if !(weight > 0.0 && weight <= 1.0) {
                return Err(ConfigError::new(at("aqm.weight"), format!("{weight} must lie in (0, 1]")));
            }
        }
        Some(Aqm::Tbf { burst, limit, latency, peakrate, mtu, device }) => {
            if device == Some(Rate(0)) {
                return Err(ConfigError::new(at("aqm.device"), "must be > 0"));
            }
            check_tbf(burst, limit, latency, peakrate, mtu, at)?
        }
        Some(Aqm::Codel { .. }) | None => {}
    }
    Ok(())
}

/// tc's checks of a TBF (`q_tbf.c`): a bucket, exactly one of `limit` and `latency`, and an
/// `mtu` with a `peakrate` (and only then).
fn check_tbf(
    burst: ByteSize,
    limit: Option<ByteSize>,
    latency: Option<Dur>,
    peakrate: Option<Rate>,
    mtu: Option<ByteSize>,
    at: &dyn Fn(&str) -> String,
) -> Result<(), ConfigError> {
    if burst.0 == 0 {
        return Err(ConfigError::new(at("aqm.burst"), "TBF's bucket must be > 0 bytes"));
    }
    match (limit, latency) {
        (None, None) => return Err(ConfigError::new(at("aqm"), "TBF needs either `limit` or `latency`")),
        (Some(_), Some(_)) => {
            return Err(ConfigError::new(at("aqm.latency"), "TBF takes `limit` or `latency`, not both"));
        }
        (Some(ByteSize(0)), None) => return Err(ConfigError::new(at("aqm.limit"), "must be > 0")),
        (None, Some(Dur::ZERO)) => return Err(ConfigError::new(at("aqm.latency"), "must be > 0")),
        _ => {}
    }
    match (peakrate, mtu) {
        (Some(Rate(0)), _) => Err(ConfigError::new(at("aqm.peakrate"), "must be > 0")),
        (Some(_), None) => Err(ConfigError::new(at("aqm.mtu"), "tc requires `mtu` with `peakrate`")),
        (Some(_), Some(ByteSize(0))) => Err(ConfigError::new(at("aqm.mtu"), "must be > 0")),
        (None, Some(_)) => Err(ConfigError::new(at("aqm.mtu"), "`mtu` belongs to `peakrate`, which is not set")),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tbf(limit: Option<u64>, latency: Option<u64>, peak: Option<(u64, Option<u64>)>) -> Aqm {
        Aqm::Tbf {
            burst: ByteSize(15_000),
            limit: limit.map(ByteSize),
            latency: latency.map(Dur::from_ms),
            peakrate: peak.map(|(r, _)| Rate(r)),
            mtu: peak.and_then(|(_, m)| m.map(ByteSize)),
            device: None,
        }
    }

    fn check(aqm: Aqm) -> Result<(), String> {
        check_aqm(Some(aqm), &|k| format!("paths[0].{k}")).map_err(|e| format!("{}: {}", e.path, e.message))
    }

    /// The schema builds tc's TBF: `latency` stays a latency (converted at the link's rate by
    /// the discipline), `limit` a byte count, and `queue` the hard limit beneath both.
    #[test]
    fn a_tbf_aqm_builds_the_discipline_with_its_limit_kind() {
        let hard = QueueLimit::Packets(1000);
        let QdiscParams::Tbf(p) = qdisc(hard, Some(tbf(None, Some(75), None))) else { panic!("not TBF") };
        assert_eq!((p.hard, p.burst, p.limit, p.peak), (hard, 15_000, TbfLimit::Latency(Dur::from_ms(75)), None));
        // 2 Mbit/s × 75 ms / 8 + 15 000 B (tc-tbf).
        assert_eq!(p.limit_bytes(2e6), 33_750);
        let QdiscParams::Tbf(p) = qdisc(hard, Some(tbf(Some(30_000), None, Some((4_000_000, Some(1500)))))) else {
            panic!("not TBF")
        };
        assert_eq!((p.limit, p.peak), (TbfLimit::Bytes(30_000), Some((Rate(4_000_000), 1500))));
    }

    /// tc's rules: exactly one of `limit` and `latency`, `mtu` with `peakrate` and only then.
    #[test]
    fn tbf_input_is_checked_as_tc_checks_it() {
        assert!(check(tbf(None, Some(75), None)).is_ok());
        assert!(check(tbf(Some(30_000), None, Some((4_000_000, Some(1500))))).is_ok());
        for (bad, key) in [
            (tbf(None, None, None), "paths[0].aqm"),
            (tbf(Some(30_000), Some(75), None), "paths[0].aqm.latency"),
            (tbf(None, Some(0), None), "paths[0].aqm.latency"),
            (tbf(Some(0), None, None), "paths[0].aqm.limit"),
            (tbf(None, Some(75), Some((4_000_000, None))), "paths[0].aqm.mtu"),
            (tbf(None, Some(75), Some((0, Some(1500)))), "paths[0].aqm.peakrate"),
        ] {
            let e = check(bad).unwrap_err();
            assert!(e.starts_with(&format!("{key}:")), "{e}");
        }
        let no_peak = Aqm::Tbf {
            burst: ByteSize(15_000),
            limit: None,
            latency: Some(Dur::from_ms(75)),
            peakrate: None,
            mtu: Some(ByteSize(1500)),
            device: None,
        };
        assert!(check(no_peak).unwrap_err().starts_with("paths[0].aqm.mtu:"));
        let Aqm::Tbf { burst, limit, latency, .. } = tbf(None, Some(75), None) else { unreachable!() };
        let device = |d: u64| Aqm::Tbf { burst, limit, latency, peakrate: None, mtu: None, device: Some(Rate(d)) };
        assert!(check(device(10_000_000_000)).is_ok());
        assert!(check(device(0)).unwrap_err().starts_with("paths[0].aqm.device:"));
    }

    /// `device` reaches the discipline's parameters; without it there is none (today's shaper).
    #[test]
    fn a_tbf_device_is_carried_to_the_discipline() {
        let hard = QueueLimit::Packets(1000);
        let Aqm::Tbf { burst, limit, latency, .. } = tbf(None, Some(75), None) else { unreachable!() };
        let with = Aqm::Tbf { burst, limit, latency, peakrate: None, mtu: None, device: Some(Rate(10_000_000_000)) };
        let QdiscParams::Tbf(p) = qdisc(hard, Some(with)) else { panic!("not TBF") };
        assert_eq!(p.device, Some(Rate(10_000_000_000)));
        let QdiscParams::Tbf(p) = qdisc(hard, Some(tbf(None, Some(75), None))) else { panic!("not TBF") };
        assert_eq!(p.device, None);
    }
}
