//! How a receiver computes and advertises its window, in the scenario schema: what the
//! buffer's free space is, which right edges never move left, who carries window updates,
//! which ratio and RTT auto-tuning uses, which values the window takes.

use serde::{Deserialize, Serialize};

/// How the receive buffer sets the advertised window.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum RcvbufWindow {
    /// The buffer's free space: `rcvbuf` minus the data held out of order (and, with
    /// `buffer_accounting = "truesize"`, turned into payload as Linux does: `__mptcp_space`).
    #[default]
    Free,
    /// The whole `rcvbuf` beyond the next expected byte, however much is held out of order:
    /// an upper bound on what a receiver may offer, kept for comparisons. (Linux offers the
    /// free space: in a kernel capture with a fixed 256 KiB buffer, a WiFi + 3G connection
    /// stuck behind a lost 3G segment kept its window's right edge in place while 17 later
    /// 3G segments were delivered in order, because ~195 segments were held out of order.)
    Full,
}

/// Which right edges of the receive window never move left.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum RightEdge {
    /// The connection's (data-level) right edge: the window offered is the free space, or
    /// what is left of the largest window offered so far (RFC 8684 §3.3.4, the classic model).
    /// Linux since "mptcp: allow subflow rcv wnd to shrink" (7.1, and the stable kernels it
    /// went to: the measured 6.18.44 and 7.3.4): before each segment a subflow sends,
    /// `mptcp_established_options_dss` sets its `rcv_wnd` to what arrived since its last ACK,
    /// so `tcp_select_window` may offer less than before, and only `mptcp_set_rwin` keeps the
    /// data-level right edge from moving left.
    #[default]
    Connection,
    /// Each subflow's own as well, as Linux before that change (`tcp_select_window`,
    /// `sysctl_tcp_shrink_window` 0: a subflow never offers less than the window of its last
    /// ACK less what arrived on it since, counted in its own sequence space; `mptcp_set_rwin`
    /// then raises the connection's right edge to it or the subflow's to the connection's).
    /// When a segment fills a hole and the DATA_ACK jumps, the filling subflow's window moves
    /// with it, so the connection's right edge advances by the jump whatever the free space
    /// (the inflation the upstream change removed).
    PerSubflow,
}

/// Which subflows carry a window update when the receiving application frees buffer space.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum WindowUpdate {
    /// Only the subflow that received the data acknowledges it (the classic model).
    #[default]
    ReceivingSubflow,
    /// As Linux (`mptcp_cleanup_rbuf` → `tcp_cleanup_rbuf` on every subflow): when the
    /// application has read data and the window can grow by enough, every subflow sends an
    /// ACK carrying the new window.
    AllSubflows,
}

/// Which round-trip time paces receive-buffer auto-tuning (DRS) of an MPTCP connection: the
/// bytes the application read are counted over one such time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum DrsRtt {
    /// The smallest receiver RTT estimate among the subflows delivering data (upstream since
    /// "mptcp: better mptcp-level RTT estimator", Linux 7.0 and its stable backports). What the
    /// backend's 6.18.44 kernel does, measured: its receive buffer grows as this rule's does
    /// (docs/validation-findings.md).
    #[default]
    Smallest,
    /// The largest receiver RTT estimate of all subflows (`mptcp_rcv_space_adjust` of the
    /// 6.18 sources before that change).
    Largest,
}

/// Which payload-to-memory ratio (`scaling_ratio`) turns an MPTCP connection's free buffer
/// into the window it offers (Linux memory accounting only).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum ScalingRatio {
    /// The ratio of the latest full-sized segment on any subflow, from that segment on (as a
    /// TCP socket's own, `tcp_measure_rcv_mss`).
    #[default]
    Segment,
    /// Linux 6.18 (`mptcp_rcv_space_adjust`): the smallest of the subflows' own ratios, taken
    /// when the application reads, at most once per the largest subflow receiver RTT (the
    /// interval's gate); a subflow that has not received a full-sized segment yet counts with
    /// the default 128, so a joined subflow holds the connection's window at the default ratio
    /// until its first data. Linux 7.x keeps an average of the delivering subflows' ratios
    /// instead (`mptcp_rcv_rtt_update`).
    SubflowMin,
}

/// Which values the advertised window takes (Linux memory accounting only).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum WindowRounding {
    /// Any byte count: the window offered is the free space (at most the subflow's
    /// `rcv_ssthresh`), and the header carries it at most `65535 << wscale` (the classic model).
    #[default]
    Exact,
    /// As Linux rounds it ([`crate::mptcp::rcvbuf`]): the handshake's window is the empty
    /// buffer's rounded down to the MSS, of which an unscaled SYN carries at most 65535 B
    /// (`tcp_select_initial_window`); later
    /// windows are aligned up to the scale's unit, or, below half the buffer, rounded down to
    /// it and 0 when less than a sixteenth of the buffer or one segment
    /// (`__tcp_select_window`); a header carries the window shifted right by the scale
    /// (`tcp_select_window`, `mptcp_set_rwin`), so the sender sees it truncated to the unit.
    Scaled,
}
