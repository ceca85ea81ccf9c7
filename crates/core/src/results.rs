//! Results of a run: a serialisable summary (per connection, subflow and link) and an
//! optional long-format time series kept as columns.
//!
//! Units are in the field names (`_bps`, `_s`, `_bytes`): these are what the Python front end
//! turns into DataFrames, so every field is a plain number, string or null.

use serde::Serialize;

/// Delay distribution summary (seconds).
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct DelayStats {
    /// Segments measured.
    pub samples: u64,
    /// Fraction of segments that waited (delay > 0).
    pub delayed_fraction: f64,
    pub mean_s: f64,
    pub p50_s: f64,
    pub p99_s: f64,
    pub max_s: f64,
}

/// One connection.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct ConnResult {
    pub name: String,
    /// "tcp" or "mptcp".
    pub kind: String,
    pub cc: String,
    pub scheduler: String,
    /// Application-delivered bytes per second over [max(start, warmup), end] (bit/s).
    pub goodput_bps: f64,
    /// Bytes delivered in order to the receiving application.
    pub delivered_bytes: u64,
    /// Bytes the sending application wrote into the send buffer.
    pub written_bytes: u64,
    /// Bytes acknowledged at connection level (DATA_ACK).
    pub data_acked_bytes: u64,
    /// Client's first SYN (s).
    pub start_s: f64,
    /// From the first SYN to the last data packet received (seed 000's definition); null if
    /// the download did not finish or the app is bulk.
    pub download_time_s: Option<f64>,
    pub completed: bool,
    /// Bytes re-sent on another subflow after an RTO (connection-level reinjection).
    pub reinjected_bytes: u64,
    /// minRTT add-ons: opportunistic retransmissions (M1) and penalisations (M2).
    pub opportunistic_retransmissions: u64,
    pub penalisations: u64,
    /// Calls of the receive-buffer optimisation (`mptcp_rcv_buf_optimization`, M1/M2) that
    /// could penalise (a blocking window, or a writer waiting on the send buffer), and of
    /// those, the ones made with the send buffer full: without a blocking window, M2 acts
    /// only in those.
    pub rbuf_calls: u64,
    pub rbuf_calls_full: u64,
    /// Payload bytes received more than once at connection level.
    pub duplicate_bytes: u64,
    /// Times the application found the send buffer full.
    pub sndbuf_blocked_episodes: u64,
    pub sndbuf_blocked_time_s: f64,
    /// Time a subflow had window space but every buffered byte was already sent and the
    /// application was blocked on the full send buffer (flow starvation, seed 000 §V-C).
    pub sndbuf_limited_time_s: f64,
    /// Time with data to send but no room in the peer's (connection-level) receive window.
    pub rwnd_limited_time_s: f64,
    /// Arrival at the receiving host to in-order delivery, per data segment.
    pub ooo_delay: DelayStats,
    /// Largest occupancy of the receive buffer (out-of-order data, bytes).
    pub max_rcv_ooo_bytes: u64,
}

/// One subflow (for single-path TCP, the connection's only subflow).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct SubflowResult {
    pub connection: String,
    /// Index within the connection (0 = initial subflow).
    pub subflow: u32,
    pub path: String,
    pub backup: bool,
    /// When the subflow became established at the client (s); null if it never did.
    pub established_s: Option<f64>,
    /// When its first data packet reached the receiver (s).
    pub first_data_s: Option<f64>,
    /// Payload bytes sent, retransmissions included.
    pub bytes_sent: u64,
    /// Payload bytes cumulatively acknowledged at subflow level.
    pub bytes_acked: u64,
    /// Connection-level bytes first delivered to the receiving host through this subflow.
    pub data_bytes_received: u64,
    /// Share of the connection-level data (first copies, after the warm-up) that reached the
    /// receiver through this subflow; the shares of a connection sum to 1.
    pub share: f64,
    /// Rate of first-copy data received through this subflow (bit/s, same window as the
    /// connection's goodput; includes data still waiting for reordering at the end).
    pub goodput_bps: f64,
    pub segments_sent: u64,
    pub retransmitted_segments: u64,
    pub rtos: u64,
    pub recovery_episodes: u64,
    pub idle_restarts: u64,
    /// Times the minRTT penalisation (M2) halved this subflow's congestion window; the
    /// subflows' counts sum to the connection's `penalisations`.
    pub penalisations: u64,
    /// Times the connection marked this subflow stale (upstream Linux's MPTCP-level
    /// retransmission: data outstanding, no ACK for more than `stale_loss_cnt` periods).
    pub stale_marks: u64,
    pub syn_retransmits: u64,
    pub srtt_s: Option<f64>,
    pub min_rtt_s: Option<f64>,
    /// Mean of all RTT samples (s).
    pub mean_rtt_s: Option<f64>,
    pub final_cwnd_bytes: u64,
    pub final_ssthresh_bytes: Option<u64>,
}

/// One unidirectional link.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct LinkResult {
    /// `<path>.up` (client → server) or `<path>.down`.
    pub name: String,
    pub path: String,
    pub direction: String,
    pub rate_bps: u64,
    pub delay_s: f64,
    /// Packets offered to the link's queue.
    pub arrived_packets: u64,
    /// Packets delivered at the far end.
    pub delivered_packets: u64,
    pub delivered_bytes: u64,
    pub queue_drops: u64,
    /// Packets an AQM (CoDel) dropped at dequeue.
    pub aqm_drops: u64,
    pub loss_drops: u64,
    pub max_queue_packets: u64,
    pub max_queue_bytes: u64,
    /// Fraction of the run the transmitter was busy.
    pub utilisation: f64,
}

/// The summary of one run.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Summary {
    pub scenario: String,
    pub seed: u64,
    pub duration_s: f64,
    /// Simulated time at which the run stopped (early if every download finished).
    pub end_s: f64,
    pub events: u64,
    pub data_packets: u64,
    /// Hex digest over every packet event, when `output.trace_hash` is on.
    pub trace_hash: Option<String>,
    pub connections: Vec<ConnResult>,
    pub subflows: Vec<SubflowResult>,
    pub links: Vec<LinkResult>,
}

/// Identifies one time series.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct SeriesMeta {
    /// "subflow", "connection" or "link".
    pub entity_kind: String,
    /// e.g. "mptcp/wifi" (connection/path), "mptcp", "wifi.down".
    pub entity: String,
    /// e.g. "cwnd_bytes", "srtt_s", "queue_bytes".
    pub metric: String,
}

/// Long-format time series as columns: row k is `(time_s[k], series[k], value[k])`.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct TimeSeries {
    pub series: Vec<SeriesMeta>,
    pub time_s: Vec<f64>,
    pub series_index: Vec<u32>,
    pub value: Vec<f64>,
}

impl TimeSeries {
    pub fn len(&self) -> usize {
        self.value.len()
    }
    pub fn is_empty(&self) -> bool {
        self.value.is_empty()
    }
    /// All (time, value) points of one series.
    pub fn points(&self, entity: &str, metric: &str) -> Vec<(f64, f64)> {
        let Some(idx) = self.series.iter().position(|m| m.entity == entity && m.metric == metric) else {
            return Vec::new();
        };
        (0..self.len())
            .filter(|&k| self.series_index[k] as usize == idx)
            .map(|k| (self.time_s[k], self.value[k]))
            .collect()
    }
}

/// One hand-off of data to a subflow by an MPTCP sender (recorded with
/// [`crate::RunOptions::sched_log`]): a scheduler's decision, as Linux's
/// `mptcp_sendmsg_frag` tracepoint shows the kernel's (one row per piece handed).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Handoff {
    pub connection: String,
    /// The path of the subflow the data went to.
    pub path: String,
    pub time_s: f64,
    /// Data sequence number of the piece's first byte, from 0 at the connection's start.
    pub data_seq: u64,
    pub bytes: u64,
    /// Data sent again by the MPTCP-level retransmission timer (or reinjected), not new data.
    pub retransmit: bool,
}

/// Everything a run produces.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct RunOutput {
    pub summary: Summary,
    pub timeseries: TimeSeries,
    /// The hand-offs, in the order they were made (empty unless asked for).
    pub handoffs: Vec<Handoff>,
}

impl Summary {
    pub fn connection(&self, name: &str) -> &ConnResult {
        self.connections.iter().find(|c| c.name == name).unwrap_or_else(|| panic!("no connection {name}"))
    }
    pub fn subflow(&self, conn: &str, path: &str) -> &SubflowResult {
        self.subflows
            .iter()
            .find(|s| s.connection == conn && s.path == path)
            .unwrap_or_else(|| panic!("no subflow {conn}/{path}"))
    }
    pub fn link(&self, name: &str) -> &LinkResult {
        self.links.iter().find(|l| l.name == name).unwrap_or_else(|| panic!("no link {name}"))
    }
}
