//! Per-subflow send queues: data the connection has handed to a subflow and that the subflow
//! has not transmitted yet (the unsent part of a Linux subflow's write queue), used by
//! schedulers that assign data to subflows ahead of their congestion window (the upstream
//! Linux `default`, [`super::sched::Scheduler::queues`]).
//!
//! The queue is bounded, as the kernel's `sk_stream_memory_free` bounds it, by the subflow's
//! send buffer: the bytes it holds (queued here plus sent and not yet acknowledged on the
//! subflow, Linux `sk_wmem_queued`) may reach it, and no new data is assigned while they are
//! at or above it. The send buffer follows Linux's auto-tuning (`tcp_sndbuf_expand`):
//! 2 × max(10, cwnd in segments) × the memory one MSS takes (`per_mss`), set when the subflow
//! is established and raised (never lowered) after an ACK that leaves the subflow's
//! congestion window not full (`tcp_should_expand_sndbuf`), capped by `tcp_wmem[2]` (with a
//! fixed connection buffer and payload accounting, by that buffer). A fixed `SO_SNDBUF`
//! with Linux's accounting sets every subflow's buffer to twice the value and locks it.
//!
//! The bytes a subflow holds are payload bytes with payload accounting (the classic model)
//! and skb truesize with `buffer_accounting = "truesize"` ([`wmem_truesize`]). `per_mss` is
//! `roundup_pow_of_two(MSS + 512) + 256` bytes, the kernel's allocation for an MSS-sized
//! skb (2304 B at MSS 1448: `ss -m` shows a send buffer of 4608 B × cwnd on 6.18), or with
//! `per_mss = "build"` the kernel's rule on the out-of-tree stack's build ([`build_per_mss`]).

use std::collections::VecDeque;

use crate::units::Dsn;

/// Linux `TCP_INIT_CWND`: the send buffer is sized for at least 10 segments.
const INIT_SEGMENTS: u64 = 10;

/// `MAX_SKB_FRAGS` (the default of `net.core.max_skb_frags`): page fragments one skb holds.
const MAX_SKB_FRAGS: u8 = 17;

/// One run of queued data: contiguous in data sequence; in [`SubflowQueue::skbs`] mode one
/// write-queue buffer (skb), with the number of page fragments it holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Run {
    dsn: Dsn,
    len: u64,
    frags: u8,
    /// A push marked this buffer (PSH on its last segment, [`SubflowQueue::end_push`]).
    psh: bool,
}

/// One segment's worth of queued data ([`SubflowQueue::pop`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Piece {
    pub dsn: Dsn,
    pub len: u64,
    /// It ends its run (with `skbs`, its write-queue buffer: a transmit unit ends there too).
    pub ends: bool,
    /// It ends a buffer a push marked (Linux `tcp_fragment` leaves PSH on a buffer's tail).
    pub psh: bool,
}

/// Data assigned to one subflow and not sent yet, and the subflow's send buffer.
#[derive(Clone, Debug, Default)]
pub struct SubflowQueue {
    /// The queued data, oldest first: contiguous data-sequence runs, or with `skbs` the
    /// write-queue buffers.
    runs: VecDeque<Run>,
    /// The runs are Linux's write-queue buffers (`data_frags = "pages"`, [`Self::push_skb`]);
    /// otherwise contiguous runs merge whatever their length.
    pub skbs: bool,
    bytes: u64,
    /// Send buffer (bytes), see the module documentation.
    pub sndbuf: u64,
    /// An ACK freed data since the last push attempt (the send buffer may grow after it).
    pub acked: bool,
    /// Segments of new data the subflow transmitted in the current push (with
    /// `tcp.sndbuf_check = "linux"` the send buffer may grow after each transmit unit).
    pub new_sent: u64,
    /// The size was set by the application (`SO_SNDBUF`): auto-tuning never changes it.
    pub locked: bool,
    /// What one MSS costs the send buffer (bytes, `per_mss`).
    per_mss: u64,
    /// Data was appended in the current push ([`Self::end_push`] marks the last buffer).
    appended: bool,
}

pub use crate::tcp::subflow::TX_SKB_HEAD;

/// `sk_wmem_queued` of a subflow, as Linux charges it with `buffer_accounting = "truesize"`:
/// the payload plus one skb head per skb. Data in flight sits in `in_flight_skbs` skbs: with
/// write-queue buffers one per transmission, counted as the subflow sent them (`tso_fragment`
/// cuts each transmission off its buffer: [`crate::tcp::scoreboard::Scoreboard::skbs`]),
/// otherwise estimated ([`in_flight_units`]); data not sent yet waits in `unsent_buffers`
/// write-queue buffers ([`SubflowQueue::unsent_buffers`]). Measured on 6.18 with `ss -tmi`
/// on a 30 Mbit/s subflow in congestion avoidance (2-segment units, 65 160-byte buffers):
/// 32 segments in flight and 202 448 B unsent gave `w` = 276 304 B (this rule: 266 704,
/// −3.5 %; one head per 2-segment skb for all of it: 325 840, +18 %), 32 in flight and
/// 140 632 B unsent 206 168 B (203 992, −1.1 %; 245 208, +19 %); earlier, with little
/// unsent, 1.07 × the send queue on a 50 Mbit/s subflow (5-segment units: 12 % predicted)
/// and 1.31 × on a 10 Mbit/s one (2-segment units: 31 %).
pub fn wmem_truesize(in_flight: u64, in_flight_skbs: u64, unsent: u64, unsent_buffers: u64) -> u64 {
    in_flight + in_flight_skbs * TX_SKB_HEAD + unsent + unsent_buffers * TX_SKB_HEAD
}

/// The skbs holding `in_flight` bytes estimated as transmit units of `unit_segs` segments of
/// `smss` bytes (`tcp_tso_autosize`, [`crate::tcp::tso::autosize_segs`]), for subflows without
/// write-queue buffers.
pub fn in_flight_units(in_flight: u64, smss: u64, unit_segs: u64) -> u64 {
    in_flight.div_ceil(unit_segs.max(1) * smss.max(1))
}

/// Memory of one MSS-sized segment (Linux `tcp_sndbuf_expand`'s `per_mss`).
pub fn per_mss(smss: u64) -> u64 {
    (smss + 512).next_power_of_two() + 256
}

/// `SKB_DATA_ALIGN(sizeof(struct skb_shared_info))` and `SKB_DATA_ALIGN(sizeof(struct
/// sk_buff))` on x86-64.
const SHINFO: u64 = 320;
const SKB_STRUCT: u64 = 256;

/// Linux `tcp_sndbuf_expand`'s `per_mss` on a build with `MAX_TCP_HEADER` = `max_tcp_header`:
/// `roundup_pow_of_two(max(mss_clamp, mss_cache) + MAX_TCP_HEADER + SKB_DATA_ALIGN(shinfo)) +
/// SKB_DATA_ALIGN(sk_buff)` bytes (the worst case, one linear skb per MSS). At MTU 1500
/// (`mss_clamp` 1460) and 304 B: 2084 → 4096, 4352 B.
pub fn build_per_mss(mss_clamp: u64, mss_cache: u64, max_tcp_header: u64) -> u64 {
    (mss_clamp.max(mss_cache) + max_tcp_header + SHINFO).next_power_of_two() + SKB_STRUCT
}

impl SubflowQueue {
    /// The queue of a subflow just established, its send buffer sized for max(10, cwnd)
    /// segments of `per_mss` bytes each.
    pub fn new(smss: u64, cwnd: u64, cap: u64, per_mss: u64) -> SubflowQueue {
        let mut q = SubflowQueue { per_mss, ..SubflowQueue::default() };
        q.expand(smss, cwnd, cap);
        q
    }

    /// The queue of a subflow whose send buffer the application fixed (`SO_SNDBUF`).
    pub fn locked(sndbuf: u64) -> SubflowQueue {
        SubflowQueue { sndbuf, locked: true, ..SubflowQueue::default() }
    }

    /// Bytes waiting to be sent.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    pub fn is_empty(&self) -> bool {
        self.bytes == 0
    }

    /// Raises the send buffer to 2 × max(10, cwnd / smss) × `per_mss`, at most `cap`.
    pub fn expand(&mut self, smss: u64, cwnd: u64, cap: u64) {
        if self.locked {
            return;
        }
        let segs = (cwnd / smss.max(1)).max(INIT_SEGMENTS);
        self.sndbuf = self.sndbuf.max((2 * segs * self.per_mss).min(cap));
    }

    /// Appends `[dsn, dsn + len)`, merged with the last run when contiguous (with `skbs`,
    /// [`Self::push_skb`] with the given size goal, the data starting a page fragment).
    pub fn push(&mut self, dsn: Dsn, len: u64, size_goal: u64) {
        if self.skbs {
            return self.push_skb(dsn, len, size_goal, true);
        }
        self.bytes += len;
        if let Some(last) = self.runs.back_mut() {
            if last.dsn + last.len == dsn {
                last.len += len;
                return;
            }
        }
        self.runs.push_back(Run { dsn, len, frags: 1, psh: false });
    }

    /// Appends `[dsn, dsn + len)` as Linux `mptcp_sendmsg_frag` puts data into a subflow's
    /// write queue, call after call: into the unsent last buffer up to `size_goal` bytes
    /// (`tcp_send_mss`) if the data continues it in data sequence and, when it starts a page
    /// fragment of its own (`new_frag`: not the rest of the fragment the buffer ends with),
    /// the buffer holds fewer than `MAX_SKB_FRAGS` fragments; the rest into new buffers of up
    /// to `size_goal` bytes. A buffer the data does not continue is closed (`eor`): nothing is
    /// appended to it again, as to any buffer that is not the last.
    pub fn push_skb(&mut self, dsn: Dsn, len: u64, size_goal: u64, new_frag: bool) {
        self.bytes += len;
        self.appended = true;
        let (mut dsn, mut len) = (dsn, len);
        if let Some(t) = self.runs.back_mut() {
            let fits = !new_frag || t.frags < MAX_SKB_FRAGS;
            if t.len < size_goal && t.dsn + t.len == dsn && fits {
                let n = (size_goal - t.len).min(len);
                // `mptcp_sendmsg_frag` reusing the buffer clears its PSH (the next push marks it).
                t.psh = false;
                t.len += n;
                t.frags += new_frag as u8;
                dsn += n;
                len -= n;
            }
        }
        // Each new buffer starts with one page fragment (this data's).
        while len > 0 {
            let n = len.min(size_goal.max(1));
            self.runs.push_back(Run { dsn, len: n, frags: 1, psh: false });
            dsn += n;
            len -= n;
        }
    }

    /// Write-queue buffers holding the queued data: the buffers themselves with `skbs`, else
    /// the data cut into buffers of `size_goal` bytes (`tcp_xmit_size_goal`,
    /// [`crate::tcp::tso::size_goal`]).
    pub fn unsent_buffers(&self, size_goal: u64) -> u64 {
        if self.skbs {
            self.runs.len() as u64
        } else {
            self.bytes.div_ceil(size_goal.max(1))
        }
    }

    /// Length of the oldest run (the head buffer with `skbs`), 0 when empty.
    pub fn head_len(&self) -> u64 {
        self.runs.front().map_or(0, |r| r.len)
    }

    /// Number of runs (write-queue buffers with `skbs`).
    pub fn runs(&self) -> usize {
        self.runs.len()
    }

    /// The end of a push that appended data (Linux `mptcp_push_release` → `tcp_push` →
    /// `tcp_mark_push`): the last buffer is marked, and its last segment carries PSH, however
    /// much data is appended to that buffer before it leaves. Only with write-queue buffers.
    pub fn end_push(&mut self) {
        if std::mem::take(&mut self.appended) {
            if let Some(t) = self.runs.back_mut() {
                t.psh = true;
            }
        }
    }

    /// Takes the oldest queued data for one segment: at most `max_len` bytes, contiguous, and
    /// never beyond the end of a run (a write-queue buffer's last segment may be short).
    pub fn pop(&mut self, max_len: u64) -> Option<Piece> {
        let front = self.runs.front_mut()?;
        let (dsn, len) = (front.dsn, front.len.min(max_len));
        let (ends, psh) = (len == front.len, front.psh);
        if ends {
            self.runs.pop_front();
        } else {
            front.dsn += len;
            front.len -= len;
        }
        self.bytes -= len;
        Some(Piece { dsn, len, ends, psh: ends && psh })
    }

    /// Empties the queue into `out` as (dsn, len) runs.
    pub fn drain_into(&mut self, out: &mut Vec<(Dsn, u64)>) {
        out.extend(self.runs.drain(..).map(|r| (r.dsn, r.len)));
        self.bytes = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The next segment's data sequence and length.
    fn take(q: &mut SubflowQueue, max_len: u64) -> Option<(u64, u64)> {
        q.pop(max_len).map(|p| (p.dsn.0, p.len))
    }

    #[test]
    fn runs_merge_when_contiguous_and_segments_never_cross_a_gap() {
        let mut q = SubflowQueue::default();
        q.push(Dsn(0), 1000, 0);
        q.push(Dsn(1000), 1000, 0);
        q.push(Dsn(5000), 500, 0);
        assert_eq!(q.bytes(), 2500);
        assert_eq!(take(&mut q, 1448), Some((0, 1448)));
        assert_eq!(take(&mut q, 1448), Some((1448, 552)));
        assert_eq!(take(&mut q, 1448), Some((5000, 500)));
        assert_eq!(take(&mut q, 1448), None);
        assert!(q.is_empty());
    }

    /// Linux `mptcp_sendmsg_frag` with a size goal of 45 segments of 1424 B (64 080 B, the
    /// GSO limit 65 215 B rounded down): a burst of two fresh 32 728-byte fragments fills one
    /// buffer to the goal and leaves 65 456 − 64 080 = 1376 B in a second, whose one segment
    /// is short. Data that does not continue the last buffer starts a new one, and the next
    /// contiguous data joins that one, not the closed buffer before it.
    #[test]
    fn buffers_fill_to_the_size_goal_and_end_where_the_data_stops_being_contiguous() {
        let goal = 45 * 1424;
        let mut q = SubflowQueue { skbs: true, ..SubflowQueue::default() };
        q.push_skb(Dsn(0), 32_728, goal, true);
        assert_eq!((q.runs(), q.head_len()), (1, 32_728));
        q.push_skb(Dsn(32_728), 32_728, goal, true);
        assert_eq!((q.runs(), q.head_len(), q.bytes()), (2, 64_080, 65_456));
        for k in 0..45 {
            assert_eq!(take(&mut q, 1424), Some((k * 1424, 1424)));
        }
        assert_eq!(take(&mut q, 1424), Some((64_080, 1376)));
        assert!(q.is_empty());
        // A gap: a buffer of its own, and 500 B more continue it.
        q.push_skb(Dsn(0), 3000, goal, true);
        q.push_skb(Dsn(90_000), 1000, goal, true);
        q.push_skb(Dsn(91_000), 500, goal, false);
        assert_eq!((q.runs(), q.head_len()), (2, 3000));
        assert_eq!(take(&mut q, 1424), Some((0, 1424)));
        assert_eq!(take(&mut q, 1424), Some((1424, 1424)));
        assert_eq!(take(&mut q, 1424), Some((2848, 152)));
        assert_eq!(take(&mut q, 1424), Some((90_000, 1424)));
        assert_eq!(take(&mut q, 1424), Some((91_424, 76)));
        // Without buffers the same data is one run, cut into full segments.
        let mut r = SubflowQueue::default();
        r.push(Dsn(0), 32_728, goal);
        r.push(Dsn(32_728), 32_728, goal);
        assert_eq!(r.unsent_buffers(goal), 2);
        assert_eq!((r.runs(), r.head_len()), (1, 65_456));
    }

    /// PSH on the write queue (Linux `tcp_push` → `tcp_mark_push`, `mptcp_sendmsg_frag`): the
    /// end of a push that appended data marks the last buffer, and only that buffer's last
    /// segment carries it; data appended to the marked buffer by a later push clears the mark
    /// (the skb is reused), which that push's end sets again; a push that appended nothing
    /// marks nothing.
    #[test]
    fn a_push_marks_its_last_buffer_and_reusing_the_buffer_clears_the_mark() {
        let mut q = SubflowQueue { skbs: true, ..SubflowQueue::default() };
        q.push_skb(Dsn(0), 3000, 64_080, true);
        q.end_push();
        let psh = |q: &mut SubflowQueue| q.pop(1424).map(|p| (p.len, p.ends, p.psh));
        assert_eq!(psh(&mut q), Some((1424, false, false)));
        q.push_skb(Dsn(3000), 1000, 64_080, true);
        q.push_skb(Dsn(4000), 500, 64_080, false);
        assert_eq!(psh(&mut q), Some((1424, false, false)));
        assert_eq!(psh(&mut q), Some((1424, false, false)));
        assert_eq!(psh(&mut q), Some((228, true, false)), "reused: unmarked until its push ends");
        q.push_skb(Dsn(4500), 2000, 64_080, true);
        q.end_push();
        q.end_push();
        assert_eq!(psh(&mut q), Some((1424, false, false)));
        assert_eq!(psh(&mut q), Some((576, true, true)));
        q.push_skb(Dsn(10_000), 100, 64_080, true);
        q.end_push();
        q.push_skb(Dsn(20_000), 100, 64_080, true);
        assert_eq!(psh(&mut q), Some((100, true, true)));
        assert_eq!(psh(&mut q), Some((100, true, false)), "no push has ended since");
    }

    /// An skb holds at most `MAX_SKB_FRAGS` = 17 page fragments: 18 small fragments in a row,
    /// each starting its own, fill one buffer with 17 and start a second; the rest of a
    /// fragment already in the buffer always joins it.
    #[test]
    fn a_buffer_holds_at_most_17_page_fragments() {
        let mut q = SubflowQueue { skbs: true, ..SubflowQueue::default() };
        for k in 0..18 {
            q.push_skb(Dsn(k * 100), 100, 64_080, true);
        }
        assert_eq!((q.runs(), q.head_len(), q.unsent_buffers(64_080)), (2, 1700, 2));
        q.push_skb(Dsn(1800), 100, 64_080, false);
        assert_eq!(q.runs(), 2);
    }

    #[test]
    fn transmit_memory_counts_one_skb_head_per_unit_in_flight_and_per_buffer_unsent() {
        // The measured case of the documentation: 32 segments of 1448 B in flight in
        // 2-segment units (16 heads), 202 448 B unsent in 65 160-byte buffers (4 heads).
        let skbs = in_flight_units(32 * 1448, 1448, 2);
        assert_eq!(wmem_truesize(32 * 1448, skbs, 202_448, 4), 32 * 1448 + 16 * 896 + 202_448 + 4 * 896);
        let q = SubflowQueue { bytes: 202_448, ..SubflowQueue::default() };
        assert_eq!(q.unsent_buffers(65_160), 4);
        // 28 960 B in flight in 5-segment units: 4 heads.
        assert_eq!(in_flight_units(28_960, 1448, 5), 4);
        assert_eq!(in_flight_units(0, 1448, 2), 0);
    }

    #[test]
    fn the_send_buffer_follows_linux_autotuning_and_never_shrinks() {
        // MSS 1448: per_mss = 2048 + 256 = 2304 B (as `ss -m` shows: 4608 B per cwnd segment).
        assert_eq!(per_mss(1448), 2304);
        let mut q = SubflowQueue::new(1448, 4 * 1448, u64::MAX, per_mss(1448));
        assert_eq!(q.sndbuf, 2 * 10 * 2304); // at least 10 segments
        q.expand(1448, 40 * 1448, u64::MAX);
        assert_eq!(q.sndbuf, 2 * 40 * 2304);
        q.expand(1448, 20 * 1448, u64::MAX);
        assert_eq!(q.sndbuf, 2 * 40 * 2304);
        q.expand(1448, 1000 * 1448, 1 << 20);
        assert_eq!(q.sndbuf, 1 << 20);
    }

    #[test]
    fn a_4x_distribution_build_charges_an_mss_its_skb_truesize() {
        // tcp_sndbuf_expand at MTU 1500: mss_clamp 1460 (> mss_cache 1448), MAX_TCP_HEADER 304,
        // shinfo 320: 2084 B → 4096 B, + 256 B sk_buff = 4352 B, the meta socket's one-MSS skb
        // truesize on the same build (`v09x_skb_truesize(1448 + 20, 304)`).
        assert_eq!(build_per_mss(1460, 1448, 304), 4352);
        assert_eq!(build_per_mss(1460, 1448, 304), crate::mptcp::sendbuf::v09x_skb_truesize(1468, 304));
        // Without wireless mesh (272 B) 2052 B still rounds up to 4096 B; 160 B (no wireless
        // LAN, no tunnels) fits 2048 B: 2304 B, the host rule's value.
        assert_eq!(build_per_mss(1460, 1448, 272), 4352);
        assert_eq!(build_per_mss(1460, 1448, 160), 2304);
        // 2 × max(10, cwnd) segments: 40 segments of cwnd hold 2 × 40 × 4352 B.
        let mut q = SubflowQueue::new(1448, 4 * 1448, u64::MAX, build_per_mss(1460, 1448, 304));
        assert_eq!(q.sndbuf, 2 * 10 * 4352);
        q.expand(1448, 40 * 1448, u64::MAX);
        assert_eq!(q.sndbuf, 2 * 40 * 4352);
    }
}
