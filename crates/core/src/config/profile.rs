//! Stack profiles: one key (`stack`, per connection) that selects a consistent set of
//! defaults, each still overridable key by key.
//!
//! - `classic` (the default): the model of the seed papers and of the out-of-tree stack's
//!   defaults as the simulator had them: payload-byte buffers, fixed sizes, the receiving
//!   subflow alone acknowledges, reinjection only after a subflow RTO, no TCP metrics cache
//!   (`tcp.metrics = "off"`: every connection starts afresh, as the papers' models do).
//! - `linux`: every choice as the upstream Linux MPTCP stack makes it (v6.x,
//!   `net/mptcp/`, `net/ipv4/tcp_*.c`), the stack the kernel backend runs: the `default`
//!   scheduler, CUBIC with HyStart and idle time taken out of its epoch, RACK-TLP and PRR,
//!   `tcp_cwnd_validate`'s rule for a used window, a window counted in packets
//!   (`tcp.cwnd_unit = "packets"`) and TSO deferral (`tcp_tso_should_defer`),
//!   send buffers that grow after every skb sent while the writer waits (`tcp_check_space`,
//!   `tcp.sndbuf_check = "linux"`),
//!   the sysctl default buffer triples
//!   (`tcp_rmem = 4096 131072 33554432`, `tcp_wmem = 4096 16384 4194304`) auto-tuned and
//!   charged in skb truesize (the window is the free memory turned into payload, held
//!   out-of-order data included, as `__mptcp_space` computes it), only the connection's right
//!   edge never moving left (a subflow's own window may shrink, `right_edge = "connection"`)
//!   and the window scale bounding the header only (`tcp_select_window`), windows rounded
//!   as Linux rounds them (`window_rounding = "scaled"`), window updates on
//!   every subflow when the application reads (pending delayed ACKs included), new data up to the
//!   window's last byte, the written data in 32 KB page fragments handed to subflows whole
//!   (`data_frags = "pages"`), receive-buffer auto-tuning paced by the smallest RTT of the subflows
//!   delivering data,
//!   the MPTCP-level retransmission timer, joins opened by the
//!   in-kernel path manager once the connection is fully established (the kernel backend's
//!   `subflow` endpoints), the DSS sizes Linux writes, the receiver's compression of the ACKs of
//!   out-of-order data (`tcp.ooo_ack`, since 4.18) and its delayed ACK counted in bytes
//!   (`tcp.delack_count`, `__tcp_ack_snd_check`), and the hosts' processing jitter as
//!   measured on the kernel backend (mean 33 µs), RFC 2861's decay of an application-limited
//!   window (`tcp_cwnd_application_limited`), TCP small queues as 6.x has them, and the TCP
//!   metrics cache with 6.x's sysctl defaults (RTT saved per destination, ssthresh not:
//!   `tcp.metrics = "no_ssthresh"`); and the kernel backends' application, which waits in
//!   `poll()` and writes up to 64 KiB per `send()` (`writer = "poll"`: not a stack rule, but
//!   what a scenario of this stack runs on the kernel backends).
//! - `linux-v0.9x`: the out-of-tree multipath-tcp.org stack the seeds ran (v0.88–v0.94 on
//!   Linux 3.11–4.14; `net/mptcp/mptcp_sched.c`, `mptcp_output.c` of that tree) where it
//!   differs from `classic`: the default scheduler (`minrtt`: lowest SRTT among subflows with
//!   window room that TCP small queues do not throttle) with `mptcp_rcv_buf_optimization`'s
//!   opportunistic retransmission and penalisation on (`mptcp_rbuf_opti`; both switchable,
//!   [`crate::config::MinRttParams`]); joins opened by the full-mesh path manager once the
//!   connection is established; PRR (Linux ≥ 3.2) with RFC 6675 loss detection; the
//!   receiver's quick-ACK mode and `tcp_grow_window`; `tcp_cwnd_validate`'s rule for a used
//!   window with RFC 2861's decay of an application-limited one
//!   (`tcp_cwnd_application_limited`); TCP small queues with 4.x's 256 KiB limit; the meta
//!   socket's send buffer charged in whole one-MSS skbs of their truesize, as DSS checksums
//!   (on by default there) make it (`buffer_accounting = "skb"`: 4352 B per 1420-byte skb on
//!   a distribution build), auto-tuned as `mptcp_update_sndbuf` does (the subflows' sum, at
//!   most `tcp_wmem[2]`, never shrinking); the TCP metrics cache as 3.x kernels had it on by
//!   default, ssthresh included (`tcp.metrics = "all"`). The
//!   connection-level send and reinjection queues, the writer's blocking and wake-up and the
//!   reinjection on a subflow's RTO are `classic`'s already. Deviations: the subflows' own
//!   send buffers, which that sum adds up, grow with Linux 6.18's per-segment memory (2304 B,
//!   1.6 % below 3.11's; a stack on 3.13 or later writes `per_mss = "build"`, 4352 B on a 4.x
//!   distribution build); receive buffers count
//!   payload bytes and that era's receive-buffer auto-tuning is not modelled (a
//!   `{ min, default, max }` receive buffer tunes as `classic`'s);
//!   RACK as 4.4 had it (lost retransmissions only) and TLP are not modelled; DSS options
//!   keep `classic`'s sizes; congestion control stays what the scenario names.
//!
//! A profile is applied to the scenario text before the schema reads it: every key of the
//! profile that the connection does not write is filled in (tables merged key by key), so
//! the resolved scenario shows every value and a written key always wins.

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

/// Which stack's defaults a connection takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Stack {
    #[default]
    Classic,
    Linux,
    #[serde(rename = "linux-v0.9x")]
    LinuxV09x,
}

impl Stack {
    pub const NAMES: &'static [&'static str] = &["classic", "linux", "linux-v0.9x"];
}

/// The `linux` profile: the connection keys it sets (see the module documentation).
pub fn linux_profile() -> Value {
    json!({
        "cc": "cubic",
        "cc_params": { "cubic": { "idle": "shift" } },
        "scheduler": "default",
        "sndbuf": { "min": 4096, "default": 16384, "max": 4194304 },
        "rcvbuf": { "min": 4096, "default": 131072, "max": 33554432 },
        "buffer_accounting": "truesize",
        "window_update": "all_subflows",
        // A subflow's own window may shrink (Linux since "mptcp: allow subflow rcv wnd to
        // shrink", in the measured 6.18.44 and 7.3.4); see `RightEdge`.
        "right_edge": "connection",
        "mptcp_retransmit": true,
        "join": "fully_established",
        "option_sizes": "linux",
        "window_tail": "fill",
        "data_frags": "pages",
        "drs_rtt": "smallest",
        "scaling_ratio": "subflow_min",
        "window_rounding": "scaled",
        // The kernel backends' application (poll, then up to 64 KiB per send).
        "writer": "poll",
        // The mean host turnaround measured on the kernel backend (crate::sim::host).
        "host_jitter": "33us",
        "tcp": {
            "recovery": "rack_tlp",
            "prr": true,
            "quickack": true,
            "delack_count": "bytes",
            "ooo_ack": "compressed",
            "cwnd_limited": "linux",
            "cwnd_unit": "packets",
            "tso_defer": true,
            "sndbuf_check": "linux",
            "pacing_mss": "mss_cache",
            "rtt_sample": "first",
            "tsq": "linux_6",
            "cwv": true,
            "metrics": "no_ssthresh",
        },
    })
}

/// The `linux-v0.9x` profile: the connection keys it sets (see the module documentation).
pub fn linux_v09x_profile() -> Value {
    json!({
        "scheduler": "minrtt",
        "sched_params": { "minrtt": { "opportunistic_retransmission": true, "penalisation": true } },
        "join": "fully_established",
        "buffer_accounting": "skb",
        "tcp": {
            "prr": true,
            "quickack": true,
            "cwnd_limited": "linux",
            "cwv": true,
            "tsq": "linux_4",
            "metrics": "all",
        },
    })
}

/// Fills the keys of `profile` that `target` lacks, recursively for tables.
fn merge_under(target: &mut serde_json::Map<String, Value>, profile: &Value) {
    let Value::Object(p) = profile else { return };
    for (k, v) in p {
        match (target.get_mut(k), v) {
            (None, _) => {
                target.insert(k.clone(), v.clone());
            }
            (Some(Value::Object(t)), Value::Object(_)) => merge_under(t, v),
            _ => {}
        }
    }
}

/// Applies each connection's `stack` profile to the scenario text (a JSON value). A
/// connection without `stack`, or with a name that is not a profile, is left alone (the
/// schema then reports the name).
pub fn apply_profiles(scenario: &mut Value) {
    let Some(conns) = scenario.get_mut("connections").and_then(Value::as_array_mut) else { return };
    for c in conns {
        let Value::Object(m) = c else { continue };
        let profile = match m.get("stack").and_then(Value::as_str) {
            Some("linux") => linux_profile(),
            Some("linux-v0.9x") => linux_v09x_profile(),
            _ => continue,
        };
        // `tcp` must be a table to merge into; anything else is left for the schema to refuse.
        if m.get("tcp").is_some_and(|t| !t.is_object()) {
            continue;
        }
        merge_under(m, &profile);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_profile_fills_what_is_missing_and_written_keys_win() {
        let mut sc = json!({"connections": [
            {"name": "a", "stack": "linux", "sndbuf": "1MiB", "tcp": {"prr": false, "mss": 1400}},
            {"name": "b"},
            {"name": "c", "stack": "nope"},
        ]});
        apply_profiles(&mut sc);
        let a = &sc["connections"][0];
        assert_eq!(a["sndbuf"], json!("1MiB"));
        assert_eq!(a["rcvbuf"]["max"], json!(33554432));
        assert_eq!(a["tcp"]["prr"], json!(false));
        assert_eq!(a["tcp"]["recovery"], json!("rack_tlp"));
        assert_eq!(a["tcp"]["mss"], json!(1400));
        assert_eq!(a["scheduler"], json!("default"));
        assert_eq!(sc["connections"][1], json!({"name": "b"}));
        assert_eq!(sc["connections"][2], json!({"name": "c", "stack": "nope"}));
    }
}
