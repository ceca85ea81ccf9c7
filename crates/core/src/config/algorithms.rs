//! Algorithm choices of the scenario schema: congestion control and packet schedulers with
//! their parameter tables, and the slow-start and congestion-avoidance counting rules.

use serde::{Deserialize, Serialize};

use super::ByteSize;

/// Congestion control algorithms (one file each under `cc/`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum CcKind {
    /// Uncoupled Reno per subflow.
    #[default]
    Reno,
    /// RFC 6356 Linked Increases.
    Lia,
    /// CUBIC (RFC 9438), uncoupled per subflow.
    Cubic,
    /// Opportunistic Linked Increases (Khalili et al., CoNEXT 2012).
    Olia,
    /// Balanced Linked Adaptation (Peng et al., IEEE/ACM ToN 2016).
    Balia,
    /// Weighted Vegas, delay-based (Cao, Xu, Fu, ICNP 2012).
    Wvegas,
    /// BBR v1 (Cardwell et al., ACM Queue 2016), uncoupled per subflow, as the Linux kernel's
    /// `tcp_bbr` (`cc::bbr`), with delivery-rate estimation and pacing; the Linux backend
    /// runs the kernel's own.
    Bbr,
}

impl CcKind {
    pub const NAMES: &'static [&'static str] = &["reno", "lia", "cubic", "olia", "balia", "wvegas", "bbr"];
    /// The algorithms the simulator models (all of them).
    pub const SIMULATED: &'static [&'static str] = &["reno", "lia", "cubic", "olia", "balia", "wvegas", "bbr"];
}

/// When LIA recomputes α.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum AlphaUpdate {
    /// As the reference Linux implementation: on a whole-MSS window increase (≈ once per
    /// RTT in congestion avoidance), during slow start, and after a loss.
    #[default]
    PerRtt,
    /// On every ACK.
    PerAck,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LiaParams {
    #[serde(default)]
    pub alpha_update: AlphaUpdate,
}

/// CUBIC parameters (RFC 9438 §4); the defaults are Linux `tcp_cubic.c`'s.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CubicParams {
    /// Multiplicative decrease factor β_cubic (dimensionless, strictly between 0 and 1);
    /// default Linux's 717/1024 ≈ 0.7.
    pub beta: f64,
    /// Cubic scaling constant C (segments per second³, > 0); default 0.4.
    pub c: f64,
    /// Fast convergence (RFC 9438 §4.7): a loss below the previous W_max lowers W_max further.
    pub fast_convergence: bool,
    /// Reno-friendly region (RFC 9438 §4.3): grow at least as an AIMD flow with the same β.
    pub tcp_friendliness: bool,
    /// HyStart (Ha & Rhee, 2011; Linux `hystart=1` with ACK-train and delay detection): leave
    /// slow start when a round's ACK train spans half the base RTT or its RTT rises clearly
    /// above the minimum, before the queue overflows.
    pub hystart: bool,
    /// What an idle period does to the curve's epoch ([`CubicIdle`]); default `restart`,
    /// `shift` in the `linux` profile.
    pub idle: CubicIdle,
}

impl Default for CubicParams {
    fn default() -> Self {
        CubicParams {
            beta: 717.0 / 1024.0,
            c: 0.4,
            fast_convergence: true,
            tcp_friendliness: true,
            hystart: true,
            idle: CubicIdle::Restart,
        }
    }
}

/// How CUBIC's congestion-avoidance epoch treats time a subflow spends with nothing in flight.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CubicIdle {
    /// The epoch runs on through idle periods and a new one starts at an idle restart
    /// (RFC 2861's window restart; Linux before 4.1).
    #[default]
    Restart,
    /// Each time the subflow sends with nothing in flight, the epoch's start moves forward by
    /// the time since its last transmission, counted in jiffies, so the curve does not count
    /// idle time; an idle restart leaves the epoch alone (Linux >= 4.1,
    /// `cubictcp_cwnd_event(CA_EVENT_TX_START)`).
    Shift,
}

/// wVegas parameters; the defaults are Linux `mptcp_wvegas.c`'s module parameters.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct WvegasParams {
    /// Total backlog target α_total over all subflows (packets), split by rate weights.
    pub alpha_total: u64,
    /// Per-subflow α before weights are known and after each loss (packets).
    pub alpha_initial: u64,
    /// Slow start ends once the backlog exceeds γ (packets).
    pub gamma: u64,
}

impl Default for WvegasParams {
    fn default() -> Self {
        WvegasParams { alpha_total: 10, alpha_initial: 2, gamma: 1 }
    }
}

/// Per-algorithm parameters; each algorithm reads only its own table.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CcParams {
    #[serde(default)]
    pub lia: LiaParams,
    #[serde(default)]
    pub cubic: CubicParams,
    #[serde(default)]
    pub wvegas: WvegasParams,
}

/// Packet schedulers (one file each under `mptcp/sched/`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum SchedKind {
    /// Lowest smoothed RTT among subflows with congestion-window space.
    #[default]
    Minrtt,
    /// Subflows in turn (out-of-tree Linux `mptcp_rr.c`).
    Roundrobin,
    /// Every segment on every usable subflow (out-of-tree Linux `mptcp_redundant.c`).
    Redundant,
    /// Blocking estimation (Ferlin et al., IFIP Networking 2016).
    Blest,
    /// Earliest completion first (Lim et al., CoNEXT 2017).
    Ecf,
    /// Delay-aware packet scheduling (Kuhn et al., ICC 2014).
    Daps,
    /// Out-of-order transmission for in-order arrival (Yang, Wang, Amer, 2014).
    Otias,
    /// Out-of-order sending for in-order arrival with a gap (Shi et al., STMS).
    Stms,
    /// The scheduler of today's upstream Linux kernels (`mptcp_subflow_get_send`).
    #[serde(rename = "default")]
    LinuxDefault,
}

impl SchedKind {
    pub const NAMES: &'static [&'static str] =
        &["minrtt", "roundrobin", "redundant", "blest", "ecf", "daps", "otias", "stms", "default"];
}

/// minRTT's add-ons from the out-of-tree Linux MPTCP (NSDI 2012 §4.2).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MinRttParams {
    /// M1: when the receive window or a full send buffer blocks new data, re-send the
    /// oldest un-DATA_ACKed segment on the fastest subflow with room.
    #[serde(default)]
    pub opportunistic_retransmission: bool,
    /// M2: then halve the congestion window of the subflow holding that segment (at most
    /// once per SRTT of the fast subflow).
    #[serde(default)]
    pub penalisation: bool,
    /// Which release's penalisation test M2 applies.
    #[serde(default)]
    pub penalisation_rule: PenalisationRule,
}

/// The out-of-tree stack changed M2's test between releases (`mptcp_rcv_buf_optimization`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
pub enum PenalisationRule {
    /// v0.89 onwards (`mptcp_sched.c`): the holder is halved if its SRTT is above the calling
    /// subflow's and it is in the Open state, its ssthresh too unless it is in slow start; at
    /// most once per SRTT of the calling subflow.
    #[default]
    #[serde(rename = "v0.9x")]
    V09x,
    /// v0.86–v0.88 (`mptcp_output.c`, Linux 3.x): the holder is halved if its rate
    /// cwnd / SRTT is below the calling subflow's, whatever its state, and its ssthresh is
    /// set to the halved window; at most once per SRTT of the holder.
    #[serde(rename = "v0.88")]
    V088,
}

/// Round-robin parameters; the default is `mptcp_rr.c`'s module parameter.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RoundRobinParams {
    /// Consecutive segments sent on a subflow before moving to the next (segments, >= 1).
    pub num_segments: u64,
}

impl Default for RoundRobinParams {
    fn default() -> Self {
        RoundRobinParams { num_segments: 1 }
    }
}

/// BLEST parameters (Ferlin et al. §3).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BlestParams {
    /// λ, the scaling factor of the fast subflow's estimated sending (dimensionless, > 0);
    /// default 1.2, `mptcp_blest.c`'s initial value.
    pub lambda: f64,
}

impl Default for BlestParams {
    fn default() -> Self {
        BlestParams { lambda: 1.2 }
    }
}

/// ECF parameters (Lim et al. §4).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EcfParams {
    /// β, the hysteresis margin once ECF has started waiting for the fast subflow
    /// (fraction of the slow subflow's RTT, >= 0); default 0.25 as in the paper.
    pub beta: f64,
}

impl Default for EcfParams {
    fn default() -> Self {
        EcfParams { beta: 0.25 }
    }
}

/// How STMS obtains its gap.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum StmsGap {
    /// Gap = bw_fast × (delay_slow − delay_fast) from the subflows' cwnd and SRTT.
    Calculation,
    /// Gap adjusted from bursts of DATA_ACKs (the slides' deployed variant).
    #[default]
    Adjustment,
}

/// STMS parameters (seed 002, "Gap adjustment" slide).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct StmsParams {
    pub gap: StmsGap,
    /// Starting gap of the adjustment variant (segments).
    pub initial_gap: u64,
    /// Weight of a new DATA_ACK-burst sample in the EWMA of adjustments (0 < w <= 1).
    pub ewma_weight: f64,
    /// Minimum time between two gap adjustments (slow subflow's SRTTs, > 0).
    pub adjust_interval_rtts: f64,
}

impl Default for StmsParams {
    fn default() -> Self {
        StmsParams { gap: StmsGap::default(), initial_gap: 0, ewma_weight: 0.25, adjust_interval_rtts: 1.0 }
    }
}

/// Parameters of the upstream Linux scheduler (`net/mptcp/protocol.c`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LinuxDefaultParams {
    /// Bytes sent on a chosen subflow before choosing again (`MPTCP_SEND_BURST_SIZE`, >= 1).
    pub burst: ByteSize,
    /// Pacing rate as a multiple of cwnd / SRTT in slow start (`tcp_pacing_ss_ratio` / 100)
    /// and in congestion avoidance (`tcp_pacing_ca_ratio` / 100); dimensionless, > 0.
    pub pacing_ss_ratio: f64,
    pub pacing_ca_ratio: f64,
}

impl Default for LinuxDefaultParams {
    fn default() -> Self {
        LinuxDefaultParams { burst: ByteSize(64 * 1024), pacing_ss_ratio: 2.0, pacing_ca_ratio: 1.2 }
    }
}

/// Per-scheduler parameters; each scheduler reads only its own table.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SchedParams {
    #[serde(default)]
    pub minrtt: MinRttParams,
    #[serde(default)]
    pub roundrobin: RoundRobinParams,
    #[serde(default)]
    pub blest: BlestParams,
    #[serde(default)]
    pub ecf: EcfParams,
    #[serde(default)]
    pub stms: StmsParams,
    #[serde(default, rename = "default")]
    pub linux_default: LinuxDefaultParams,
}

impl SchedParams {
    /// Range checks: (key below `sched_params`, message) of the first bad value.
    pub(crate) fn check(&self) -> Result<(), (&'static str, String)> {
        let positive = |v: f64| v > 0.0 && v.is_finite();
        if self.roundrobin.num_segments == 0 {
            return Err(("roundrobin.num_segments", "must be >= 1".into()));
        }
        if !positive(self.blest.lambda) {
            return Err(("blest.lambda", format!("{} must be > 0", self.blest.lambda)));
        }
        if !(self.ecf.beta >= 0.0 && self.ecf.beta.is_finite()) {
            return Err(("ecf.beta", format!("{} must be >= 0", self.ecf.beta)));
        }
        if !(positive(self.stms.ewma_weight) && self.stms.ewma_weight <= 1.0) {
            return Err(("stms.ewma_weight", format!("{} must lie in (0, 1]", self.stms.ewma_weight)));
        }
        if !positive(self.stms.adjust_interval_rtts) {
            return Err(("stms.adjust_interval_rtts", format!("{} must be > 0", self.stms.adjust_interval_rtts)));
        }
        let d = &self.linux_default;
        if d.burst.0 == 0 {
            return Err(("default.burst", "must be >= 1 B".into()));
        }
        if !positive(d.pacing_ss_ratio) || !positive(d.pacing_ca_ratio) {
            return Err(("default.pacing_ss_ratio", "both pacing ratios must be > 0".into()));
        }
        Ok(())
    }
}

/// Slow-start growth rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum SlowStart {
    /// cwnd += bytes newly acknowledged (doubles per RTT whatever the ACK ratio).
    #[default]
    Linux,
    /// cwnd += 1 MSS per ACK (growth ψ = 1 + 1/b per round with delayed ACKs).
    PerAck,
}

/// Congestion-avoidance counting.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum CaCounting {
    /// Bytes acknowledged (RFC 3465; Linux since 3.18): +1 segment per RTT whatever the
    /// delayed-ACK ratio.
    #[default]
    Bytes,
    /// One count per ACK (Linux up to 3.17, the kernels seed 000 measured): +1/b segment per
    /// RTT with delayed ACKs, the rule Eq. (10)'s 3b/8 term assumes.
    PerAck,
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
