//! Algorithm choices of the scenario schema: the congestion controllers' and schedulers'
//! families (declared in `cc/mod.rs` and `mptcp/sched/mod.rs` from one list each, see
//! [`crate::registry`]), and the window-validation, TSQ and loss-recovery rules of every
//! subflow. The slow-start and congestion-avoidance counting rules live with the controllers
//! (`cc::counting`) and are re-exported here.

use serde::{Deserialize, Serialize};

pub use crate::cc::counting::{CaCounting, SlowStart, SlowStartBound};
pub use crate::cc::{CcConfig, CcKind, CcParams};
pub use crate::mptcp::sched::minrtt::{MinRttParams, PenalisationRule};
pub use crate::mptcp::sched::{SchedConfig, SchedKind, SchedParams};
pub use crate::registry::AlgorithmParams;

/// Single-path TCP runs only controllers that do not couple subflows: the message when
/// `cc` does.
pub(crate) fn check_single_path(cc: CcKind) -> Result<(), String> {
    if cc.uncoupled() {
        return Ok(());
    }
    let allowed: Vec<&str> = CcKind::ALL.iter().filter(|k| k.uncoupled()).map(|k| k.name()).collect();
    Err(format!(
        "`{}` couples subflows and needs kind = \"mptcp\"; single-path tcp allows: {}",
        cc.name(),
        allowed.join(", ")
    ))
}

/// When a subflow counts its congestion window as used, so that the congestion controller
/// may grow it (Linux `tcp_is_cwnd_limited`; RFC 7661 discusses why a window that is not
/// used must not grow).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum CwndLimited {
    /// The engine's model before the `linux` profile existed: the largest flight of this or
    /// the previous round of ACKs reached the window (slow start: cwnd below twice that
    /// flight). Kept as the default because seed reproductions were calibrated with it.
    #[default]
    Rounds,
    /// Linux 6.x `tcp_cwnd_validate` / `tcp_is_cwnd_limited`: a transmit attempt in the
    /// current window found the window full, or, in slow start, cwnd is below twice the
    /// most bytes outstanding in the current window (which starts afresh once everything
    /// sent when it was recorded is acknowledged).
    Linux,
}

/// What a subflow's congestion window counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum CwndUnit {
    /// Bytes (RFC 5681 with RFC 3465's byte counting): the window grows by the bytes newly
    /// acknowledged and admits a segment while the bytes in flight leave room for a full one.
    /// The classic model.
    #[default]
    Bytes,
    /// Packets, as Linux counts it (`tcp_snd_cwnd`): the window grows by the packets newly
    /// acknowledged (`tcp_slow_start`, `tcp_cong_avoid_ai`), admits a packet while fewer
    /// packets than the window are in flight (`tcp_cwnd_test` with `tcp_packets_in_flight`),
    /// and counts as used against the packets outstanding (`max_packets_out`). A short
    /// segment counts as a whole packet. Kept in bytes as whole segments (a window of n
    /// packets is n full segments).
    Packets,
}

/// Which MSS turns a window of packets into the pacing rate that sizes a subflow's transmit
/// units, its TCP-small-queues limit and the `default` scheduler's choice
/// (`tcp_update_pacing_rate`: ratio × `mss_cache` × max(cwnd, `packets_out`) / SRTT).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum PacingMss {
    /// The sender MSS, the payload of a full segment (the classic model).
    #[default]
    Payload,
    /// Linux's `tp->mss_cache` (`tcp_sync_mss`): the MSS without the options that vary per
    /// segment, which `tcp_current_mss` subtracts for each segment. On an MPTCP subflow the
    /// DSS option is one of those, so the rate is 1448/1424 of the payload rate at MTU 1500
    /// with timestamps; on a TCP connection both MSS are the same.
    MssCache,
}

/// Which segment an ACK's RTT sample for the smoothed RTT is taken from (RFC 6298 leaves it
/// open). The minimum RTT and the congestion controller's sample are the last segment's in
/// both.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum RttSample {
    /// The last segment the ACK covers, the one ending at the new `snd_una` (the classic
    /// model), or the most recently sent newly SACKed one.
    #[default]
    Last,
    /// The first segment the ACK covers that was not SACKed before, or the first newly SACKed
    /// one in sequence order: Linux `tcp_clean_rtx_queue`'s `first_ackt` and `tcp_sacktag_one`'s
    /// `first_sackt` feed `tcp_rtt_estimator` (`seq_rtt_us`, `sack_rtt_us`), the last ones
    /// (`ca_rtt_us`) `tcp_update_rtt_min` and the controller. Where an ACK covers segments of
    /// two transmissions (delayed ACKs across a transmit-unit boundary) the first is older.
    First,
}

/// When a subflow's auto-tuned send buffer may grow: Linux `tcp_check_space` → `tcp_new_space`
/// → `tcp_sndbuf_expand` (2 × max(10, cwnd) segments of `per_mss`), each time only if the
/// congestion window is not full (`tcp_should_expand_sndbuf`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum SndbufCheck {
    /// After an ACK that acknowledged new data, once the push it triggers is over (the
    /// engine's model before the `linux` profile; kept as the default because seed
    /// reproductions were calibrated with it).
    #[default]
    Acked,
    /// Linux 5.18 and later: `tcp_check_space` runs after every ACK (`tcp_data_snd_check`)
    /// and after every skb of new data sent (`tcp_event_new_data_sent`, added by "tcp: fix
    /// potential xmit stalls caused by TCP_NOTSENT_LOWAT"), and calls `tcp_new_space` only
    /// while the socket is flagged `SOCK_NOSPACE`, that is while the writer waits for
    /// send-buffer space. An MPTCP subflow's socket is the MPTCP socket's (`mptcp_sock_graft`),
    /// so the flag is the connection's. A burst of several transmit units thus grows the
    /// buffer from the window as it stands, although its last unit fills the window.
    Linux,
}

/// TCP small queues: how many bytes a subflow may hold in its own host's queues before it
/// waits for them to leave ([`crate::tcp::tsq`]). It only acts on a path whose queue sits at
/// the sending host (`queue_at = "host"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum TsqRule {
    /// No limit.
    Off,
    /// Linux 3.16–4.19 (the out-of-tree MPTCP v0.9x kernels): `tcp_limit_output_bytes` =
    /// 262 144; the default, for the seeds' kernels.
    #[default]
    #[serde(rename = "linux_4")]
    Linux4,
    /// Upstream Linux 6.x: `tcp_limit_output_bytes` = 4 194 304 (6.18's default), and a
    /// subflow with at most one packet unacknowledged is never throttled.
    #[serde(rename = "linux_6")]
    Linux6,
}

/// Loss detection of the TCP sender. The default stays RFC 6675 (the engine's model before
/// RACK-TLP existed here): with Linux's RACK-TLP + PRR two seed reproductions change (see
/// docs/scenarios.md, "Loss recovery").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Recovery {
    /// RACK-TLP (RFC 8985; Linux `tcp_recovery = 1`, `tcp_early_retrans = 3`): time-based
    /// loss detection, which also repairs lost retransmissions, and tail loss probes.
    RackTlp,
    /// RFC 6675 alone: a hole is lost once DupThresh segments above it are SACKed; lost
    /// retransmissions and tail losses wait for the RTO.
    #[default]
    Rfc6675,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    #[test]
    fn every_algorithm_builds_one_that_reports_its_own_name() {
        for &k in CcKind::ALL {
            let config = CcParams::default().config(k);
            assert_eq!((config.kind(), config.build(Rng::stream(1, "cc")).name()), (k, k.name()));
        }
        for &k in SchedKind::ALL {
            let config = SchedParams::default().config(k);
            assert_eq!((config.kind(), config.build().name()), (k, k.name()));
        }
        assert_eq!((CcKind::default(), SchedKind::default()), (CcKind::Reno, SchedKind::Minrtt));
    }

    #[test]
    fn names_and_tables_follow_the_registry_lists() {
        assert_eq!(CcKind::NAMES, ["reno", "lia", "cubic", "olia", "balia", "wvegas", "bbr"]);
        assert_eq!(CcParams::TABLES, ["lia", "cubic", "wvegas"]);
        assert_eq!(
            SchedKind::NAMES,
            ["minrtt", "roundrobin", "redundant", "blest", "ecf", "daps", "otias", "stms", "default"]
        );
        assert_eq!(SchedParams::TABLES, ["minrtt", "roundrobin", "blest", "ecf", "stms", "default"]);
        let uncoupled: Vec<_> = CcKind::ALL.iter().filter(|k| k.uncoupled()).map(|k| k.name()).collect();
        assert_eq!(uncoupled, ["reno", "cubic", "bbr"]);
    }

    #[test]
    fn a_table_written_for_another_algorithm_is_kept_in_the_resolved_scenario() {
        let json = r#"{"lia": {"alpha_update": "per_ack"}, "cubic": {"beta": 0.5}}"#;
        let p: CcParams = serde_json::from_str(json).unwrap();
        assert_eq!(
            p.config(CcKind::Cubic),
            CcConfig::Cubic(crate::cc::cubic::CubicParams { beta: 0.5, ..Default::default() })
        );
        let back = serde_json::to_value(&p).unwrap();
        assert_eq!(back["lia"]["alpha_update"], "per_ack");
        assert_eq!(back["wvegas"]["alpha_total"], 10);
        assert_eq!(back.as_object().unwrap().len(), 3);
    }

    #[test]
    fn range_checks_name_the_table_and_key() {
        let p = SchedParams {
            stms: crate::mptcp::sched::stms::StmsParams { ewma_weight: 2.0, ..Default::default() },
            ..Default::default()
        };
        assert_eq!(p.check(), Err(("stms.ewma_weight".to_string(), "2 must lie in (0, 1]".to_string())));
        let p = CcParams {
            wvegas: crate::cc::wvegas::WvegasParams { gamma: 1, alpha_total: 0, alpha_initial: 2 },
            ..Default::default()
        };
        assert_eq!(p.check().unwrap_err().0, "wvegas");
        assert_eq!(check_single_path(CcKind::Cubic), Ok(()));
        assert_eq!(
            check_single_path(CcKind::Olia).unwrap_err(),
            "`olia` couples subflows and needs kind = \"mptcp\"; single-path tcp allows: reno, cubic, bbr"
        );
    }
}
