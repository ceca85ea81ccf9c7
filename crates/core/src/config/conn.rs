//! Connections, applications, TCP settings and outputs in the scenario schema.

use serde::{Deserialize, Serialize};

use super::algorithms::{
    CaCounting, CwndLimited, CwndUnit, PacingMss, Recovery, RttSample, SlowStart, SlowStartBound, SndbufCheck, TsqRule,
};
use super::window::{DrsRtt, RcvbufWindow, RightEdge, ScalingRatio, WindowRounding, WindowUpdate};
use super::{BufSize, ByteSize, RouteCfg, Stack};
use crate::cc::{CcKind, CcParams};
use crate::mptcp::sched::{SchedKind, SchedParams};
use crate::units::Dur;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ConnKind {
    Tcp,
    Mptcp,
}

/// Which host sends the application data.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// Server → client (a download; the client's request rides on its handshake ACK).
    #[default]
    Download,
    /// Client → server.
    Upload,
}

/// Linux's TCP metrics cache ([`crate::tcp::metrics`]): what a connection's sender and
/// receiver save, per destination, when it closes and take up when the next connection to
/// that destination is established. The sysctls of the hosts, read per connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum MetricsSave {
    /// `tcp_no_metrics_save = 1`: nothing is saved or taken up (the seeds' models: every
    /// connection starts afresh).
    #[default]
    Off,
    /// `tcp_no_metrics_save = 0`, `tcp_no_ssthresh_metrics_save = 1`: RTT and RTT variance
    /// are saved, ssthresh is not (Linux ≥ 5.6's defaults).
    NoSsthresh,
    /// Both 0: ssthresh is saved too (Linux before 5.6, the seeds' 3.x kernels).
    All,
}

/// The application driving a connection.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum AppCfg {
    /// Always has data (iperf-like) until `stop` (default: the end of the run).
    Bulk {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        stop: Option<Dur>,
        /// Each write is a blocking `send()` of this many bytes, as Linux `tcp_sendmsg_locked`
        /// handles it ([`crate::app::App::Bulk`]); unset, one writer that writes whatever the
        /// send buffer takes.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        write: Option<ByteSize>,
    },
    /// Transfers `size` bytes, then the connection is done.
    Download { size: ByteSize },
    /// Writes `size` bytes every `period` (first at the start), `count` times (default:
    /// until the end): request/response or video-chunk traffic with idle gaps.
    Periodic {
        size: ByteSize,
        period: Dur,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        count: Option<u64>,
    },
}

fn d_mss() -> u64 {
    1448
}
fn d_mtu() -> u64 {
    1500
}
fn d_iw() -> u64 {
    10
}
fn d_b() -> u64 {
    2
}
fn d_delack() -> Dur {
    Dur::from_ms(40)
}
fn d_true() -> bool {
    true
}
fn d_rto_init() -> Dur {
    Dur::from_secs(1)
}
fn d_rto_min() -> Dur {
    Dur::from_ms(200)
}
fn d_rto_max() -> Dur {
    Dur::from_secs(120)
}
fn d_dupthresh() -> u64 {
    3
}

/// TCP mechanics of every subflow of a connection (both ends).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TcpCfg {
    /// Maximum segment size (bytes) announced in the SYN (MTU − 40 − 12 B timestamps).
    #[serde(default = "d_mss")]
    pub mss: u64,
    /// Path MTU (bytes): data segments carrying MPTCP options shrink so packets fit.
    #[serde(default = "d_mtu")]
    pub mtu: u64,
    /// Initial congestion window (segments).
    #[serde(default = "d_iw")]
    pub iw: u64,
    #[serde(default)]
    pub slow_start: SlowStart,
    /// What congestion avoidance counts towards its +1 segment per window.
    #[serde(default)]
    pub ca_counting: CaCounting,
    /// Where slow start ends ([`SlowStartBound`]): below ssthresh (default, Linux >= 4.3) or
    /// at it (Linux up to 4.2 and MPTCP v0.88's coupled controller).
    #[serde(default)]
    pub slow_start_bound: SlowStartBound,
    /// Delayed ACK: acknowledge every b-th full-sized segment (what counts:
    /// [`DelackCount`]).
    #[serde(default = "d_b")]
    pub delack_segments: u64,
    /// What the delayed-ACK count counts ([`DelackCount`]).
    #[serde(default)]
    pub delack_count: DelackCount,
    /// Delayed-ACK timer.
    #[serde(default = "d_delack")]
    pub delack_timeout: Dur,
    /// RFC 2861 / Linux `tcp_slow_start_after_idle`.
    #[serde(default = "d_true")]
    pub idle_restart: bool,
    /// RFC 7323 timestamps option (12 B per segment).
    #[serde(default = "d_true")]
    pub timestamps: bool,
    #[serde(default = "d_rto_init")]
    pub rto_initial: Dur,
    #[serde(default = "d_rto_min")]
    pub rto_min: Dur,
    #[serde(default = "d_rto_max")]
    pub rto_max: Dur,
    /// Duplicate-ACK threshold (SACKed segments above a hole that mark it lost).
    #[serde(default = "d_dupthresh")]
    pub dupthresh: u64,
    /// Loss detection: RFC 6675 DupThresh alone (default) or RACK-TLP (RFC 8985, Linux's).
    #[serde(default)]
    pub recovery: Recovery,
    /// Proportional Rate Reduction (RFC 6937, PRR-SSRB as Linux) shapes the sending during
    /// fast recovery; off (default): cwnd drops to ssthresh when recovery starts.
    #[serde(default)]
    pub prr: bool,
    /// Linux's quick-ACK mode at the receiver (`tcp_enter_quickack_mode`): the first data of
    /// a connection and every out-of-order segment make the next ACKs immediate, one per
    /// segment, as many as the window last offered holds pairs of segments, at most 16
    /// (`tcp_incr_quickack`, TCP_MAX_QUICKACKS); with it, `tcp_grow_window`'s `rcv_ssthresh` (a quick ACK
    /// per segment while it grows, a cap on the window offered) and, with truesize
    /// accounting, each MPTCP subflow's own receive buffer. Off (default): delayed ACKs from
    /// the first segment (the seeds' slow-start model), the window the buffer's free space.
    #[serde(default)]
    pub quickack: bool,
    /// How out-of-order data is acknowledged ([`OooAck`]).
    #[serde(default)]
    pub ooo_ack: OooAck,
    /// When the congestion window counts as used and may grow ([`CwndLimited`]).
    #[serde(default)]
    pub cwnd_limited: CwndLimited,
    /// What the congestion window counts, bytes or packets ([`CwndUnit`]).
    #[serde(default)]
    pub cwnd_unit: CwndUnit,
    /// Linux's TSO deferral (`tcp_tso_should_defer`, [`crate::tcp::tso`]): with too little
    /// room for a full transmit unit and an ACK due soon, a sender that queues per subflow
    /// waits for the ACK; off (default): it sends whatever the window admits at once.
    #[serde(default)]
    pub tso_defer: bool,
    /// When a subflow's auto-tuned send buffer may grow ([`SndbufCheck`]).
    #[serde(default)]
    pub sndbuf_check: SndbufCheck,
    /// Which MSS scales the pacing rate ([`PacingMss`]).
    #[serde(default)]
    pub pacing_mss: PacingMss,
    /// Which segment gives the smoothed RTT its sample ([`RttSample`]).
    #[serde(default)]
    pub rtt_sample: RttSample,
    /// RFC 2861 §3 as Linux `tcp_cwnd_application_limited`: a window neither filled nor
    /// acknowledged for an RTO (`tcp_cwnd_validate`'s "network starves"; every ACK of new
    /// data restarts the clock, `tcp_cong_avoid`) decays halfway to the most it used, with
    /// ssthresh kept at ¾ of it, unless the writer is waiting for send-buffer space
    /// (`SOCK_NOSPACE`). Linux gates it, as the idle restart, with
    /// `tcp_slow_start_after_idle`, so it needs `idle_restart` too. Off (default): an
    /// unused window keeps its size until the connection idles.
    #[serde(default)]
    pub cwv: bool,
    /// TCP small queues ([`TsqRule`]), for paths whose queue is at the sending host.
    #[serde(default)]
    pub tsq: TsqRule,
    /// Linux's per-destination TCP metrics cache ([`MetricsSave`]).
    #[serde(default)]
    pub metrics: MetricsSave,
}

impl Default for TcpCfg {
    fn default() -> Self {
        TcpCfg {
            mss: d_mss(),
            mtu: d_mtu(),
            iw: d_iw(),
            slow_start: SlowStart::default(),
            ca_counting: CaCounting::default(),
            slow_start_bound: SlowStartBound::default(),
            delack_segments: d_b(),
            delack_count: DelackCount::default(),
            delack_timeout: d_delack(),
            idle_restart: true,
            timestamps: true,
            rto_initial: d_rto_init(),
            rto_min: d_rto_min(),
            rto_max: d_rto_max(),
            dupthresh: d_dupthresh(),
            recovery: Recovery::default(),
            prr: false,
            quickack: false,
            ooo_ack: OooAck::default(),
            cwnd_limited: CwndLimited::default(),
            cwnd_unit: CwndUnit::default(),
            tso_defer: false,
            sndbuf_check: SndbufCheck::default(),
            pacing_mss: PacingMss::default(),
            rtt_sample: RttSample::default(),
            cwv: false,
            tsq: TsqRule::default(),
            metrics: MetricsSave::default(),
        }
    }
}

fn d_sndbuf() -> BufSize {
    BufSize::Fixed(ByteSize(4 * 1024 * 1024))
}
fn d_rcvbuf() -> BufSize {
    BufSize::Fixed(ByteSize(6 * 1024 * 1024))
}

/// What a buffer's size counts (see [`crate::config::BufSize`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum BufferAccounting {
    /// Payload bytes, the size as written (the papers' models).
    #[default]
    Payload,
    /// As Linux: a fixed size is doubled (`SO_SNDBUF`/`SO_RCVBUF`), and each segment is
    /// charged its skb truesize (payload plus the kernel's per-buffer overhead), so the
    /// payload a buffer holds is its size times the payload/truesize ratio.
    Truesize,
    /// As the out-of-tree multipath-tcp.org stack charges its meta socket's send buffer: in
    /// whole one-MSS skbs of 4352 B truesize each at MSS 1448 (DSS checksums on, that stack's
    /// default, rule out scatter-gather and GSO; [`crate::mptcp::sendbuf::MetaCharge`]); TCP
    /// small queues charge each packet the same. A fixed `sndbuf` is the socket's `sk_sndbuf`
    /// as `tcp_wmem` sets it, not doubled (a program's `SO_SNDBUF` value is, by the kernel:
    /// write twice it). Receive buffers count payload bytes, as with `payload`.
    Skb,
}

/// What one MSS costs a subflow's auto-tuned send buffer (Linux `tcp_sndbuf_expand`'s
/// `per_mss`, [`crate::mptcp::sfqueue`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum PerMss {
    /// `roundup_pow_of_two(MSS + 512) + 256` bytes: 2304 B at MSS 1448, as Linux 6.18
    /// sizes it (measured with `ss -m` on the kernel backend). Kernels before 3.13 (`tcp_new_space`) charge
    /// `SKB_TRUESIZE(max(mss_clamp, mss_cache) + MAX_TCP_HEADER)`, no power-of-two rounding:
    /// 2340 B at MTU 1500 and 304 B, 1.6 % above this value (a deviation for 3.11's stack).
    #[default]
    Host,
    /// With `buffer_accounting = "skb"`: the rule of kernels from 3.13 (`tcp_sndbuf_expand`) on
    /// the build whose one-MSS skbs the meta socket charges, `roundup_pow_of_two(max(mss_clamp, mss_cache) + MAX_TCP_HEADER +
    /// 320) + 256` bytes, `MAX_TCP_HEADER` from `max_tcp_header` (304 B unset) and `mss_clamp`
    /// the MSS Linux announces (MTU − 40): 4352 B at MTU 1500, the meta's skb truesize.
    Build,
}

/// What a receiver counts towards its delayed ACK (`tcp.delack_count`, with
/// `tcp.delack_segments` = b).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum DelackCount {
    /// Full-sized segments: every b-th one is acknowledged at once (RFC 1122 §4.2.3.2's "at
    /// least every second full-sized segment"); a shorter one waits for the timer or a read.
    /// The classic model and the out-of-tree stack's.
    #[default]
    Segments,
    /// Bytes, as Linux counts (`__tcp_ack_snd_check`: `rcv_nxt - rcv_wup > rcv_mss`, i.e.
    /// more than (b - 1) times the peer's segment size since the last ACK): a short segment
    /// after a full one is acknowledged at once, as two short ones together larger than a
    /// full one are.
    Bytes,
}

/// How a receiver acknowledges a segment that arrives out of order (beyond a hole in its
/// subflow's sequence space).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum OooAck {
    /// At once, every one (RFC 5681 §4.2: "an immediate duplicate ACK"); with `tcp.quickack`
    /// it also makes the next ACKs immediate (at most 16; Linux before 4.18, `tcp_data_queue_ofo` →
    /// `tcp_enter_quickack_mode`). The classic model and the out-of-tree stack's.
    #[default]
    Immediate,
    /// As Linux since 4.18 (`__tcp_ack_snd_check`, SACK compression): the first three for a
    /// given cumulative ACK at once (`TCP_FASTRETRANS_THRESH`), the later ones compressed into
    /// one ACK when a timer of 5 % of the RTT expires (the smaller of the receiver's RTT
    /// estimate and the smoothed RTT), at most `tcp_comp_sack_delay_ns` (1 ms), plus the
    /// timer's slack `tcp_comp_sack_slack_ns` (100 µs: a 6.18 receiver on a 150 ms path
    /// acknowledges out-of-order segments 1.1 ms after each), or at once after
    /// `tcp_comp_sack_nr` (44) compressed; out-of-order data no longer enters quick-ACK mode.
    /// Linux 7.x makes the 5 % a sysctl (`tcp_comp_sack_rtt_percent`).
    Compressed,
}

/// When the client opens its MP_JOIN subflows (the path manager, [`crate::mptcp::pm`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Join {
    /// At the first SYN/ACK (the classic model: both hosts know every path).
    #[default]
    AtOnce,
    /// As Linux's in-kernel path manager with `subflow` endpoints on the client (what the
    /// kernel backend configures): once the connection is fully established at the client,
    /// i.e. when the first packet from the server after the handshake arrives.
    FullyEstablished,
    /// As Linux's in-kernel path manager with `signal` endpoints on the server: the server
    /// announces its addresses with ADD_ADDR once the connection is fully established there
    /// (the client's third ACK); the client opens the joins when the ADD_ADDR arrives.
    AddAddr,
}

/// Which sizes the MPTCP options take on the wire ([`crate::net::packet::optlen`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum OptionSizes {
    /// A 64-bit DATA_ACK everywhere: 28 B DSS on data, 12 B on pure ACKs.
    #[default]
    Classic,
    /// As Linux writes them: data carries a 64-bit mapping and a 32-bit DATA_ACK padded to
    /// 24 B; the data receiver's ACKs a 64-bit DATA_ACK (12 B), the sender's a 32-bit one (8 B).
    Linux,
}

/// How the application writes when its app has no `write` block size: how it waits for
/// send-buffer space and how much one `send()` offers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Writer {
    /// One writer that always offers everything it wants: it copies what the buffer takes,
    /// sleeps in `sk_stream_wait_memory` when it is full, and is woken by
    /// `sk_stream_write_space` (free space at least half of what is queued). The classic
    /// model.
    #[default]
    Sleep,
    /// The kernel backends' application: `poll()` for space, then a non-blocking `send()` of
    /// up to 64 KiB ([`crate::mptcp::sendbuf::ConnSender`]).
    Poll,
}

/// How an MPTCP sender cuts the data a queueing scheduler (`default`) hands to subflows; the
/// others hand whole segments either way, as the out-of-tree stack does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum DataFrags {
    /// Segment by segment: a burst ends within a segment of its size (the classic model).
    #[default]
    Segments,
    /// As Linux MPTCP does ([`crate::mptcp::sendbuf`]): the writer's data sits in fragments
    /// of 32 KB pages (`mptcp_sendmsg`), a burst hands whole fragments
    /// (`__subflow_push_pending`), and a subflow's write queue holds buffers of up to the size
    /// goal that end where the data handed to it stops being contiguous
    /// (`mptcp_sendmsg_frag`), so a buffer may end in a short segment.
    Pages,
}

/// How the end of the peer's data-level window is used by new data.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum WindowTail {
    /// New data goes out only when the window admits a full segment (or all the data
    /// there is): sender-side silly-window avoidance at the connection level (RFC 1122
    /// §4.2.3.4), the classic model.
    #[default]
    WholeSegments,
    /// As Linux MPTCP (`mptcp_sendmsg_frag` → `mptcp_check_allowed_size`): data is handed
    /// to a subflow up to the window's last byte, so the window's tail goes out as a short
    /// segment, under the subflow's Nagle rule with Minshall's variant (`tcp_nagle_check`:
    /// held back while an earlier short segment of that subflow is unacknowledged).
    Fill,
}

/// One connection between the client and the server.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConnCfg {
    pub name: String,
    pub kind: ConnKind,
    /// Paths used, by name; the first carries the initial (MP_CAPABLE) subflow. A path may
    /// appear more than once: several subflows over the same path with different ports
    /// (like Linux's `ndiffports` path manager).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub paths: Vec<String>,
    /// Explicit routes over `[[links]]`, one per subflow (instead of `paths`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub routes: Vec<RouteCfg>,
    /// Node names of the two ends when routes are used (default `client` and `server`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<String>,
    /// Paths whose subflows are backups (used only when no regular subflow is usable).
    #[serde(default)]
    pub backup: Vec<String>,
    /// When the client sends its first SYN; with `after`, how long after that connection
    /// closed.
    #[serde(default)]
    pub start: Dur,
    /// The name of a connection listed before this one whose application has an end (a
    /// download, or periodic with a count): this connection starts `start` after it closed
    /// (its sender holds no unacknowledged data), so connections to one server run one
    /// after another, as repeated downloads do.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<String>,
    #[serde(default)]
    pub direction: Direction,
    pub app: AppCfg,
    /// The congestion controller, and every controller's parameters (only its own are read).
    #[serde(default)]
    pub cc: CcKind,
    #[serde(default)]
    pub cc_params: CcParams,
    /// The packet scheduler, and every scheduler's parameters (only its own are read).
    #[serde(default)]
    pub scheduler: SchedKind,
    #[serde(default)]
    pub sched_params: SchedParams,
    /// Stack profile whose defaults the connection takes (`crate::config::profile`).
    #[serde(default)]
    pub stack: Stack,
    /// Connection-level send buffer: bytes written and not yet DATA_ACKed; fixed
    /// (`SO_SNDBUF`) or a `tcp_wmem`-style triple (auto-tuned), see [`BufSize`].
    #[serde(default = "d_sndbuf")]
    pub sndbuf: BufSize,
    /// Connection-level receive buffer, shared by all subflows; fixed (`SO_RCVBUF`) or a
    /// `tcp_rmem`-style triple (auto-tuned).
    #[serde(default = "d_rcvbuf")]
    pub rcvbuf: BufSize,
    /// What the buffer sizes count: payload bytes or, as Linux, skb truesize.
    #[serde(default)]
    pub buffer_accounting: BufferAccounting,
    /// With `buffer_accounting = "skb"`: the kernel build's `MAX_TCP_HEADER` (bytes), the
    /// headroom each one-MSS skb is allocated with, which decides its truesize
    /// ([`crate::mptcp::sendbuf::v09x_skb_truesize`]). Unset: 304 B, a distribution build.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tcp_header: Option<u64>,
    /// What one MSS costs a subflow's auto-tuned send buffer, which the meta socket's
    /// auto-tuned buffer sums ([`PerMss`]).
    #[serde(default)]
    pub per_mss: PerMss,
    /// Which subflows send a window update when the application reads.
    #[serde(default)]
    pub window_update: WindowUpdate,
    /// Which right edges of the receive window never move left (MPTCP connections).
    #[serde(default)]
    pub right_edge: RightEdge,
    /// The MPTCP-level retransmission timer (upstream Linux `mptcp_retransmit_timer`): when
    /// DATA_ACK has not moved for the timer's interval, the oldest unacknowledged data is
    /// sent again on an idle subflow; a subflow RTO then reinjects nothing. Off (the classic
    /// model, the out-of-tree stack's): every subflow RTO reinjects that subflow's data on
    /// the others.
    #[serde(default)]
    pub mptcp_retransmit: bool,
    /// How `rcvbuf` sets the advertised window.
    #[serde(default)]
    pub rcvbuf_window: RcvbufWindow,
    /// When the client opens its MP_JOIN subflows.
    #[serde(default)]
    pub join: Join,
    /// Sizes of the MPTCP options on the wire.
    #[serde(default)]
    pub option_sizes: OptionSizes,
    /// How new data uses the end of the peer's data-level window (MPTCP connections).
    #[serde(default)]
    pub window_tail: WindowTail,
    /// How the application waits for space and writes (without the app's `write`).
    #[serde(default)]
    pub writer: Writer,
    /// How the written data is cut when handed to subflows (MPTCP, queueing schedulers).
    #[serde(default)]
    pub data_frags: DataFrags,
    /// Which subflow RTT paces receive-buffer auto-tuning (MPTCP connections).
    #[serde(default)]
    pub drs_rtt: DrsRtt,
    /// Which scaling ratio turns the connection's free buffer into its window (MPTCP
    /// connections, `buffer_accounting = "truesize"`).
    #[serde(default)]
    pub scaling_ratio: ScalingRatio,
    /// Which values the advertised window takes (`buffer_accounting = "truesize"`).
    #[serde(default)]
    pub window_rounding: WindowRounding,
    /// Mean extra delay before each packet a host sends leaves it (processing jitter drawn
    /// from the distribution measured on Linux, scaled to this mean; packets of a host keep
    /// their order). 0: packets leave at the instant they are sent.
    #[serde(default)]
    pub host_jitter: Dur,
    #[serde(default)]
    pub tcp: TcpCfg,
}

/// What to record besides the summary. No key here writes a file: where files go is the
/// caller's choice alone (packet captures are a run option, [`crate::sim::RunOptions`]), so
/// a scenario file a user was sent cannot write anywhere; `output.pcap` is refused by name.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OutputCfg {
    /// Sampling interval of the time series; absent = no time series (costs nothing).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeseries: Option<Dur>,
    /// Bytes delivered before this time are excluded from goodput.
    #[serde(default)]
    pub warmup: Dur,
    /// Hash every packet event into a trace digest (for determinism checks).
    #[serde(default)]
    pub trace_hash: bool,
}
