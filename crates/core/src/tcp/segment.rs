//! One transmitted segment and its per-segment state flags (Linux `tcp_skb_cb.sacked`:
//! `TCPCB_SACKED_ACKED`, `TCPCB_LOST`, `TCPCB_SACKED_RETRANS`, `TCPCB_EVER_RETRANS`).
//!
//! The flags are shared by the SACK scoreboard (`tcp::scoreboard`, which sets them) and RACK
//! (`tcp::rack`, which reads them); both import them from here, so neither imports the other
//! for them.

use std::fmt;
use std::ops::BitOr;

use crate::units::{Dsn, Seq, Time};

/// A set of per-segment flags: a typed bit set over a `u8` (the segment record stays 32
/// bytes, which matters with 80 000 segments outstanding; see `tcp::scoreboard`).
#[derive(Clone, Copy, Default, PartialEq, Eq)]
pub struct SegFlags(u8);

impl SegFlags {
    /// No flag set: a segment sent once, neither SACKed nor lost.
    pub const NONE: SegFlags = SegFlags(0);
    /// Selectively acknowledged (Linux `TCPCB_SACKED_ACKED`).
    pub const SACKED: SegFlags = SegFlags(1);
    /// Considered lost, and not SACKed (Linux `TCPCB_LOST`).
    pub const LOST: SegFlags = SegFlags(2);
    /// A retransmission of this lost segment is in flight (Linux `TCPCB_SACKED_RETRANS`).
    pub const RETRANS: SegFlags = SegFlags(4);
    /// Ever retransmitted: Karn's rule, no RTT sample (Linux `TCPCB_EVER_RETRANS`).
    pub const EVER_RETRANS: SegFlags = SegFlags(8);
    /// Already handed to the MPTCP connection level for reinjection on another subflow
    /// (the out-of-tree stack's `path_mask`).
    pub const REINJECTED: SegFlags = SegFlags(16);
    /// The last segment of one transmission of new data: with write-queue buffers the end
    /// of a transmit skb, which Linux's retransmission queue frees whole once its last byte
    /// is acknowledged (`tcp_clean_rtx_queue`).
    pub const SKB_END: SegFlags = SegFlags(32);

    const NAMES: [(SegFlags, &'static str); 6] = [
        (SegFlags::SACKED, "SACKED"),
        (SegFlags::LOST, "LOST"),
        (SegFlags::RETRANS, "RETRANS"),
        (SegFlags::EVER_RETRANS, "EVER_RETRANS"),
        (SegFlags::REINJECTED, "REINJECTED"),
        (SegFlags::SKB_END, "SKB_END"),
    ];

    /// Every flag of `other` is set.
    #[inline]
    pub const fn contains(self, other: SegFlags) -> bool {
        self.0 & other.0 == other.0
    }

    /// At least one flag of `other` is set.
    #[inline]
    pub const fn intersects(self, other: SegFlags) -> bool {
        self.0 & other.0 != 0
    }

    #[inline]
    pub fn insert(&mut self, other: SegFlags) {
        self.0 |= other.0;
    }

    #[inline]
    pub fn remove(&mut self, other: SegFlags) {
        self.0 &= !other.0;
    }

    /// No flag set.
    #[inline]
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }
}

impl BitOr for SegFlags {
    type Output = SegFlags;
    #[inline]
    fn bitor(self, rhs: SegFlags) -> SegFlags {
        SegFlags(self.0 | rhs.0)
    }
}

impl fmt::Debug for SegFlags {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut set = f.debug_set();
        for (flag, name) in SegFlags::NAMES {
            if self.contains(flag) {
                set.entry(&format_args!("{name}"));
            }
        }
        set.finish()
    }
}

/// One transmitted, not yet cumulatively acknowledged segment.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SentSeg {
    pub seq: Seq,
    /// Payload bytes.
    pub len: u32,
    pub flags: SegFlags,
    /// Data sequence number of the first byte (MPTCP mapping; equals `seq` for plain TCP).
    pub dsn: Dsn,
    /// Last (re)transmission time.
    pub sent_at: Time,
}

impl SentSeg {
    /// One past the last sequence number of the segment.
    pub fn end(&self) -> Seq {
        self.seq + self.len as u64
    }

    /// Every flag of `f` is set on the segment.
    #[inline]
    pub fn has(&self, f: SegFlags) -> bool {
        self.flags.contains(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_insert_remove_and_test_as_a_set() {
        let mut f = SegFlags::NONE;
        assert!(f.is_empty());
        f.insert(SegFlags::LOST | SegFlags::RETRANS);
        assert!(f.contains(SegFlags::LOST) && f.contains(SegFlags::LOST | SegFlags::RETRANS));
        assert!(!f.contains(SegFlags::LOST | SegFlags::SACKED));
        assert!(f.intersects(SegFlags::LOST | SegFlags::SACKED));
        f.remove(SegFlags::RETRANS);
        assert_eq!(f, SegFlags::LOST);
        assert_eq!(format!("{:?}", f | SegFlags::EVER_RETRANS), "{LOST, EVER_RETRANS}");
    }

    #[test]
    fn a_segment_record_stays_32_bytes() {
        assert_eq!(std::mem::size_of::<SentSeg>(), 32);
    }
}
