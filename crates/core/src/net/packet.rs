//! The simulated packet: addressing, the TCP header fields the endpoints use, MPTCP options.
//!
//! Sizes on the wire are real: `wire_len` = payload + 20 B IPv4 + 20 B TCP + options
//! (timestamps, SACK blocks, MSS/WS/SACK-permitted on SYNs, MPTCP options as RFC 8684 sizes
//! them), and links charge their bit rate on it.

use std::collections::VecDeque;

use crate::units::{Dsn, Seq, Time};

/// TCP flags used by the engine.
pub mod flags {
    pub const SYN: u8 = 1;
    pub const ACK: u8 = 2;
    /// A zero-window probe: elicits an immediate ACK (on the wire: a segment at snd_una − 1).
    pub const PROBE: u8 = 4;
    /// PSH: the last segment of a write-queue buffer that a push marked (Linux `tcp_push` →
    /// `tcp_mark_push` on the tail skb; `tcp_fragment` and GSO keep it on the last piece).
    pub const PSH: u8 = 8;
}

/// Up to four SACK blocks `[start, end)` in subflow sequence space, most recent first.
///
/// Held as 32-bit offsets from the packet's cumulative ACK, as the wire holds 32-bit
/// sequence numbers (RFC 2018 §3): a block lies above the ACK and within the receive window,
/// which a socket buffer (at most 2^31 B) keeps far below 2^32. This keeps the packet small
/// enough to be copied inline on its way through queues and links.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SackBlocks {
    pub n: u8,
    off: [(u32, u32); 4],
}

impl SackBlocks {
    /// Appends block `[start, end)` of a packet whose cumulative ACK is `ack`.
    pub fn push(&mut self, ack: Seq, (start, end): (Seq, Seq)) {
        debug_assert!(
            ack <= start && start <= end && end.0 - ack.0 <= u32::MAX as u64,
            "SACK block {start:?}..{end:?} for ACK {ack:?}"
        );
        self.off[self.n as usize] = ((start.0 - ack.0) as u32, (end.0 - ack.0) as u32);
        self.n += 1;
    }

    /// The blocks of a packet whose cumulative ACK is `ack` (the first `n` entries).
    pub fn blocks(&self, ack: Seq) -> [(Seq, Seq); 4] {
        self.off.map(|(s, e)| (Seq(ack.0 + s as u64), Seq(ack.0 + e as u64)))
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
    /// DSS: DATA_ACK (64 or 32 bit, `Packet::ack64`) and, when the packet has payload, a
    /// mapping (DSN 64 bit, subflow sequence 32 bit, data-level length 16 bit).
    Dss,
    /// ADD_ADDR announcing the server's address of subflow `id`'s path (on route `route`),
    /// IPv4 without port, with its truncated HMAC (16 B); sent on a pure ACK without DSS.
    AddAddr {
        id: u8,
        route: u8,
    },
    /// The client's echo of that ADD_ADDR (8 B, no HMAC), on a pure ACK without DSS.
    AddAddrEcho {
        id: u8,
        route: u8,
    },
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
    /// ADD_ADDR, IPv4, no port, with the 64-bit truncated HMAC: 4 + 4 + 8 (RFC 8684 §3.4.1).
    pub const ADD_ADDR: u32 = 16;
    /// ADD_ADDR echo, IPv4, no port (no HMAC): 4 + 4.
    pub const ADD_ADDR_ECHO: u32 = 8;
    /// DSS with a DATA_ACK of 64 bits (`ack64`) or 32 bits and, with `map`, a 64-bit-DSN
    /// mapping without checksum (8 + 4 + 2 B), padded to a multiple of 4 (Linux writes two
    /// NOPs): 4 + 8 = 12 or 4 + 4 = 8 without mapping, 26 → 28 or 22 → 24 with it.
    pub fn dss(ack64: bool, map: bool) -> u32 {
        let len: u32 = 4 + if ack64 { 8 } else { 4 } + if map { 14 } else { 0 };
        len.div_ceil(4) * 4
    }
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
    /// The DSS DATA_ACK is 64 bits wide (else 32).
    pub ack64: bool,
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

/// A [`Packet`] as a long order-keeping link pipe keeps it while it propagates: every field
/// but the SACK blocks, which only some ACKs carry, so a long pipe (tens of thousands of
/// packets, each written once and read once, far apart) holds 96 bytes per packet with its
/// arrival time instead of 128 (a short pipe keeps whole packets, read where they are). The
/// blocks of the packets that carry some wait in a side queue in the same order
/// ([`crate::net::link::Stow`]).
#[derive(Clone, Copy)]
pub struct StowedPacket {
    uid: u64,
    conn: u32,
    subflow: u8,
    to_server: bool,
    hop: u8,
    flags: u8,
    mp: MpOption,
    wire_len: u32,
    payload: u32,
    seq: Seq,
    ack: Seq,
    wnd: u64,
    /// The packet carries SACK blocks (kept in the side queue).
    sacks: bool,
    dsn: Dsn,
    data_ack: Dsn,
    ack64: bool,
    sent_at: Time,
    ts_echo: Time,
}

impl crate::net::wire::Stow for Packet {
    type Compact = StowedPacket;
    type Extra = SackBlocks;

    #[inline(always)]
    fn stow(self, side: &mut VecDeque<SackBlocks>) -> StowedPacket {
        let Packet {
            uid,
            conn,
            subflow,
            to_server,
            hop,
            flags,
            mp,
            wire_len,
            payload,
            seq,
            ack,
            wnd,
            sack,
            dsn,
            data_ack,
            ack64,
            sent_at,
            ts_echo,
        } = self;
        // Only `push` adds blocks, and it counts them: a packet without any has default ones.
        let sacks = sack.n > 0;
        if sacks {
            side.push_back(sack);
        }
        StowedPacket {
            uid,
            conn,
            subflow,
            to_server,
            hop,
            flags,
            mp,
            wire_len,
            payload,
            seq,
            ack,
            wnd,
            sacks,
            dsn,
            data_ack,
            ack64,
            sent_at,
            ts_echo,
        }
    }

    #[inline(always)]
    fn unstow(c: StowedPacket, side: &mut VecDeque<SackBlocks>) -> Packet {
        let StowedPacket {
            uid,
            conn,
            subflow,
            to_server,
            hop,
            flags,
            mp,
            wire_len,
            payload,
            seq,
            ack,
            wnd,
            sacks,
            dsn,
            data_ack,
            ack64,
            sent_at,
            ts_echo,
        } = c;
        let sack =
            if sacks { side.pop_front().expect("the SACK blocks of a stowed packet") } else { SackBlocks::default() };
        Packet {
            uid,
            conn,
            subflow,
            to_server,
            hop,
            flags,
            mp,
            wire_len,
            payload,
            seq,
            ack,
            wnd,
            sack,
            dsn,
            data_ack,
            ack64,
            sent_at,
            ts_echo,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{optlen, SackBlocks};
    use crate::units::Seq;

    #[test]
    fn sack_blocks_come_back_from_their_offsets_to_the_ack() {
        // Sequence numbers here are 64-bit and grow past 2^32; the offsets are 32-bit, as on
        // the wire, up to a block 2^31 B above the ACK (the largest socket buffer).
        let ack = Seq((5 << 32) | 1000);
        let want = [(Seq(ack.0 + 1448), Seq(ack.0 + 2896)), (Seq(ack.0 + 10_000), Seq(ack.0 + (1 << 31)))];
        let mut b = SackBlocks::default();
        for w in want {
            b.push(ack, w);
        }
        assert_eq!(b.n, 2);
        assert_eq!(b.blocks(ack)[..2], want);
    }

    #[test]
    fn a_stowed_packet_comes_back_whole_in_fewer_bytes() {
        use super::{Packet, StowedPacket};
        use crate::net::link::Stow;
        use crate::units::{Dsn, Time};
        use std::collections::VecDeque;
        let plain = Packet {
            uid: 7,
            conn: 1,
            subflow: 2,
            to_server: true,
            hop: 1,
            flags: super::flags::ACK,
            mp: super::MpOption::Dss,
            wire_len: 1500,
            payload: 1428,
            seq: Seq(1 << 33),
            ack: Seq(99),
            wnd: 1 << 20,
            sack: SackBlocks::default(),
            dsn: Dsn(5),
            data_ack: Dsn(6),
            ack64: true,
            sent_at: Time(11),
            ts_echo: Time(12),
        };
        let mut sacked = Packet { uid: 8, payload: 0, ..plain };
        sacked.sack.push(sacked.ack, (Seq(200), Seq(300)));
        let mut side = VecDeque::new();
        let stowed = [plain, sacked, plain].map(|p| p.stow(&mut side));
        assert_eq!(side.len(), 1, "only the packet with SACK blocks uses the side queue");
        let back = stowed.map(|c| Packet::unstow(c, &mut side));
        assert_eq!(back, [plain, sacked, plain]);
        assert!(side.is_empty());
        assert_eq!(std::mem::size_of::<(Time, StowedPacket)>(), 96);
    }

    #[test]
    fn dss_sizes_follow_the_field_widths() {
        // RFC 8684 §3.3: kind, length, subtype/flags (4 B); DATA_ACK 4 or 8 B; mapping: DSN
        // 8 B, subflow sequence 4 B, data-level length 2 B; padded to 4 B.
        assert_eq!(optlen::dss(true, true), optlen::DSS_ACK_MAP);
        assert_eq!(optlen::dss(true, false), optlen::DSS_ACK);
        assert_eq!(optlen::dss(false, true), 24);
        assert_eq!(optlen::dss(false, false), 8);
    }
}
