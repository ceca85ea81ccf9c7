//! What a subflow hands its congestion controller besides ACK counts: its Linux congestion
//! state and the delivery-rate sample of each ACK. Defined here, with the controllers, so
//! that `tcp` uses `cc` and not the other way round; the subflow produces both
//! (`tcp::state`, `tcp::rate`).

use crate::units::{Dur, Seq, Time};

/// Linux congestion states (`tcp_ca_state`), in Linux's order. Linux's `CWR` is not a state
/// here: the one reduction that enters it in this engine, for a loss a tail loss probe
/// repaired, is done at once (Linux enters CWR and leaves it on the same ACK).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum CaState {
    Open,
    /// SACKs seen, nothing marked lost yet.
    Disorder,
    /// Fast recovery (RFC 6675) until snd_una reaches `high_seq`.
    Recovery,
    /// After an RTO until snd_una reaches `high_seq`.
    Loss,
}

/// One rate sample, built over one ACK (Linux `struct rate_sample`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RateSample {
    /// `delivered` when the most recently sent of the delivered segments was sent (None: no
    /// segment delivered by this ACK carried a snapshot).
    pub prior_delivered: Option<u64>,
    /// `delivered_mstamp` at that segment's transmission.
    pub prior_mstamp: Time,
    /// Bytes delivered over the sample's interval (None: no valid sample, Linux −1).
    pub delivered: Option<u64>,
    /// max(send interval, ACK interval) (None: no valid sample).
    pub interval: Option<Dur>,
    /// Bytes newly acknowledged or SACKed by this ACK (Linux `acked_sacked`).
    pub acked_sacked: u64,
    /// Bytes newly marked lost while processing this ACK (Linux `losses`).
    pub losses: u64,
    /// Bytes in flight before this ACK was processed (Linux `prior_in_flight`).
    pub prior_in_flight: u64,
    /// RTT of the most recently sent newly delivered segment (Karn's rule applied).
    pub rtt: Option<Dur>,
    /// The sample's segment was sent while application-limited.
    pub is_app_limited: bool,
    /// The sample's segment was a retransmission.
    pub is_retrans: bool,
    /// End sequence and send time of the sample's segment (Linux `last_end_seq`, and
    /// `first_tx_mstamp` after the ACK), to find the most recently sent one.
    pub(crate) last_end_seq: Seq,
    pub(crate) last_sent: Time,
    /// Send phase of the sample's segment (Linux `interval_us` before `tcp_rate_gen`).
    pub(crate) snd_interval: Dur,
}
