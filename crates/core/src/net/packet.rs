//! The simulated packet: addressing, the TCP header fields the endpoints use, MPTCP options.
//!
//! Sizes on the wire are real: `wire_len` = payload + 20 B IPv4 + 20 B TCP + options
//! (timestamps, SACK blocks, MSS/WS/SACK-permitted on SYNs, MPTCP options as RFC 8684 sizes
//! them), and links charge their bit rate on it.

use crate::units::{Dsn, Seq, Time};

/// TCP flags used by the engine.
pub mod flags {
    pub const SYN: u8 = 1;
    pub const ACK: u8 = 2;
    /// A zero-window probe: elicits an immediate ACK (on the wire: a segment at snd_una − 1).
    pub const PROBE: u8 = 4;
}

/// Up to four SACK blocks `[start, end)` in subflow sequence space, most recent first.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SackBlocks {
    pub n: u8,
    pub blocks: [(Seq, Seq); 4],
}

impl SackBlocks {
    pub fn as_slice(&self) -> &[(Seq, Seq)] {
        &self.blocks[..self.n as usize]
    }
}

/// The MPTCP option a packet carries (RFC 8684 §3).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum MpOption {
    #[default]
    None,
    /// MP_CAPABLE on the SYN (4 B), SYN/ACK (12 B, sender's key) and third ACK (20 B, both keys).
    CapableSyn,
    CapableSynAck,
    CapableAck,
    /// MP_JOIN on the SYN (12 B: token, nonce), SYN/ACK (16 B: truncated HMAC, nonce) and
    /// third ACK (24 B: full HMAC).
    JoinSyn,
    JoinSynAck,
    JoinAck,
    /// DSS: DATA_ACK (64 bit) and, when the packet has payload, a mapping (DSN 64 bit,
    /// subflow sequence 32 bit, data-level length 16 bit).
    Dss,
}

/// Bytes of TCP options on the wire for one packet (each option padded to 4 bytes).
pub mod optlen {
    /// MSS (4) + SACK-permitted (2) + timestamps (10) + window scale (3) + padding = 20.
    pub const SYN_BASE: u32 = 20;
    pub const TIMESTAMPS: u32 = 12;
    pub const MP_CAPABLE_SYN: u32 = 4;
    pub const MP_CAPABLE_SYNACK: u32 = 12;
    pub const MP_CAPABLE_ACK: u32 = 20;
    pub const MP_JOIN_SYN: u32 = 12;
    pub const MP_JOIN_SYNACK: u32 = 16;
    pub const MP_JOIN_ACK: u32 = 24;
    /// DSS with a 64-bit DATA_ACK only: 4 + 8.
    pub const DSS_ACK: u32 = 12;
    /// DSS with a 64-bit DATA_ACK and a 64-bit-DSN mapping: 4 + 8 + 8 + 4 + 2 = 26 → 28.
    pub const DSS_ACK_MAP: u32 = 28;
    /// SACK option with `n` blocks: 2 + 8n, padded to a multiple of 4.
    pub fn sack(n: u32) -> u32 {
        if n == 0 {
            0
        } else {
            (2 + 8 * n).div_ceil(4) * 4
        }
    }
    /// TCP option space is limited to 40 bytes.
    pub const MAX: u32 = 40;
}

/// IPv4 + TCP headers without options (bytes).
pub const IP_TCP_HEADER: u32 = 40;

/// A packet in flight.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Packet {
    /// Unique id within the run (for traces and captures).
    pub uid: u64,
    /// Connection index.
    pub conn: u32,
    /// Subflow index within the connection.
    pub subflow: u8,
    /// Direction: client → server when true.
    pub to_server: bool,
    /// Position along its route (set by the driver).
    pub hop: u8,
    pub flags: u8,
    pub mp: MpOption,
    /// Bytes on the wire (headers, options, payload).
    pub wire_len: u32,
    /// Payload bytes.
    pub payload: u32,
    pub seq: Seq,
    pub ack: Seq,
    /// Advertised receive window (bytes, unscaled; connection-level for MPTCP, relative to
    /// `data_ack`, otherwise relative to `ack`).
    pub wnd: u64,
    pub sack: SackBlocks,
    /// DSS mapping start of the payload (valid when `mp == Dss` and `payload > 0`).
    pub dsn: Dsn,
    /// DSS DATA_ACK (valid when `mp == Dss`).
    pub data_ack: Dsn,
    /// When the sending endpoint emitted the packet (the TSval analogue).
    pub sent_at: Time,
    /// The `sent_at` of the latest packet this endpoint received on the subflow (the TSecr
    /// analogue; zero before any).
    pub ts_echo: Time,
}

impl Packet {
    pub fn is(&self, f: u8) -> bool {
        self.flags & f != 0
    }
}
