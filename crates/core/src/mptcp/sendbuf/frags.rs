//! With `data_frags = "pages"` ([`crate::config::DataFrags::Pages`]) the written data is kept
//! in Linux MPTCP's data fragments ([`Frags`], `struct mptcp_data_frag`), which decide how a
//! queueing scheduler hands it to subflows: `mptcp_sendmsg` copies into the writer's current
//! 32 KB page (`skb_page_frag_refill`, order-3 pages), extending the last fragment while it
//! still holds data not handed to a subflow (`mptcp_pending_tail`,
//! `mptcp_frag_can_collapse_to`) and the page has room, and otherwise carving a new fragment
//! after a 40-byte header at the next 8-byte boundary (`mptcp_carve_data_frag`); a page with
//! fewer than 72 B left is replaced, and one nothing references any more (all its data
//! DATA_ACKed, no subflow holding a buffer of it) is reused from its start. So a fresh page
//! holds 32 728 B of data, and a 64 KiB `send()` into fresh pages leaves fragments of
//! 32 728, 32 728 and 80 B. Every `send()` call is followed by its push
//! (`__mptcp_push_pending` at the end of `mptcp_sendmsg`), so the fragments' ends follow the
//! calls. A call copies page piece by page piece while the socket's charge is below its buffer
//! (`mptcp_send_limit`), so its last piece may pass the buffer by up to a page, and each
//! fragment's header and alignment are charged with its data (`frag_truesize`) until the
//! fragment is wholly DATA_ACKed (`dfrag_clear`). Deviation: a subflow's reference to a page is
//! taken as held while the subflow has any data unacknowledged.

use std::collections::VecDeque;

use super::ConnSender;
use crate::units::Dsn;

/// Size of the writer's page (`SKB_FRAG_PAGE_ORDER` = 3 with 4 KiB pages: 32 KiB).
pub const FRAG_PAGE: u64 = 32 * 1024;
/// `sizeof(struct mptcp_data_frag)` on x86-64: the header carved before a fragment's data.
pub const FRAG_HEADER: u64 = 40;
/// `mptcp_page_frag_refill`: a page keeps serving while 32 B and a header fit in its rest.
const FRAG_REFILL: u64 = 32 + FRAG_HEADER;

/// Linux MPTCP's data fragments of the written data not yet DATA_ACKed (module
/// documentation): where each starts and what its header and alignment cost, and the writer's
/// page.
#[derive(Clone, Debug, Default)]
pub struct Frags {
    /// Data sequence where each live fragment starts and its charge beyond its data, oldest
    /// first; the last one ends at the connection's `write_seq`.
    starts: VecDeque<(u64, u64)>,
    /// The live fragments' charge beyond their data.
    pub(super) overhead: u64,
    /// Bytes of the writer's current page in use (`page_frag.offset`).
    page_off: u64,
}

impl Frags {
    /// Copies up to `n` bytes written at `write_seq` as one `mptcp_sendmsg` call does, page
    /// piece by page piece while the charge is below the buffer, `room` being what the buffer
    /// has left before the call (0 or more); returns the bytes copied. `pending` says the last
    /// fragment holds data not handed to a subflow, `page_free` that nothing references the
    /// current page any more.
    pub(super) fn write(&mut self, write_seq: u64, n: u64, room: u64, pending: bool, page_free: bool) -> u64 {
        let (mut at, mut left, mut pending, mut spent) = (write_seq, n, pending, 0);
        // `mptcp_send_limit`: a piece is copied only while the charge is below the buffer.
        while left > 0 && spent < room {
            // `mptcp_frag_can_collapse_to`: the last fragment ends where the page is in use.
            if !(pending && self.page_off < FRAG_PAGE && !self.starts.is_empty()) {
                // `skb_page_frag_refill`, then `mptcp_carve_data_frag`.
                if page_free || self.page_off + FRAG_REFILL > FRAG_PAGE {
                    self.page_off = 0;
                }
                let header_at = self.page_off.next_multiple_of(8);
                let overhead = header_at - self.page_off + FRAG_HEADER;
                self.page_off += overhead;
                self.overhead += overhead;
                spent += overhead;
                self.starts.push_back((at, overhead));
            }
            let piece = left.min(FRAG_PAGE - self.page_off);
            self.page_off += piece;
            at += piece;
            left -= piece;
            spent += piece;
            pending = true;
        }
        n - left
    }

    /// The fragment holding `dsn`: (start, end), with `write_seq` the end of the last one.
    pub(super) fn bounds(&self, dsn: u64, write_seq: u64) -> (u64, u64) {
        let i = self.starts.partition_point(|&(s, _)| s <= dsn);
        let start = i.checked_sub(1).map_or(dsn, |k| self.starts[k].0);
        (start, self.starts.get(i).map_or(write_seq, |&(s, _)| s))
    }

    /// Drops the fragments wholly below `data_una` (`__mptcp_clean_una`, `dfrag_clear`).
    pub(super) fn acked(&mut self, data_una: u64) {
        while self.starts.len() > 1 && self.starts[1].0 <= data_una {
            let (_, overhead) = self.starts.pop_front().expect("two fragments");
            self.overhead -= overhead;
        }
    }
}

impl ConnSender {
    /// Copies up to `want` bytes of one `send()` call into the buffer and returns how many: what
    /// the buffer has room for ([`ConnSender::room`]), or with [`Frags`] as `mptcp_sendmsg`
    /// copies them (module documentation).
    #[inline]
    pub(super) fn copy(&mut self, want: u64) -> u64 {
        let room = self.room();
        let Some(f) = self.frags.as_mut() else {
            let n = want.min(room);
            self.write_seq += n;
            return n;
        };
        let pending = self.write_seq.0 > self.sent_end;
        let page_free = !self.pages_held && self.data_una == self.write_seq;
        let n = f.write(self.write_seq.0, want, room, pending, page_free);
        self.write_seq += n;
        n
    }

    /// The next piece of unsent data a queueing scheduler hands a subflow after skipping
    /// `skip` unsent bytes, and whether it starts a page fragment: with [`Frags`] the rest of
    /// the fragment it lies in (`__subflow_push_pending` hands whole fragments), else one
    /// segment of at most `smss` bytes; the peer's window applies as in
    /// [`ConnSender::next_new`].
    pub fn next_piece(&self, skip: u64, smss: u64) -> Option<(Dsn, u64, bool)> {
        let Some(f) = self.frags.as_ref() else {
            return self.next_new(skip, smss).map(|(d, l)| (d, l, true));
        };
        let (dsn, _) = self.unsent_at(skip, u64::MAX)?;
        let (start, end) = f.bounds(dsn.0, self.write_seq.0);
        self.next_new(skip, end - dsn.0).map(|(d, l)| (d, l, d.0 == start))
    }

    /// End of the fragment holding `dsn` (with [`Frags`]); else the next multiple of
    /// `fallback` bytes.
    pub fn frag_end(&self, dsn: Dsn, fallback: u64) -> u64 {
        match self.frags.as_ref() {
            Some(f) => f.bounds(dsn.0, self.write_seq.0).1,
            None => (dsn.0 / fallback + 1) * fallback,
        }
    }
}
