//! The connection-level send side: the shared send buffer, the application writing into it,
//! the peer's connection-level receive window, and the reinjection queue.
//!
//! Data stays in the send buffer until DATA_ACKed (RFC 8684 §3.3.2), whichever subflow
//! carried it: a slow subflow holding the oldest bytes keeps the buffer full while the fast
//! one has nothing left to send (the "flow starvation" of seed 000 §V-C).
//!
//! The application blocks when the buffer is full and is woken, as Linux's
//! `sk_stream_write_space` does, only once the free space reaches half of what is queued
//! (`sk_stream_min_wspace`); each block is one "send-buffer blocking episode" (the
//! `sk_stream_wait_memory` entries seed 001 counts; free space ≥ half of what is queued is
//! free space ≥ a third of the buffer). The limit is fixed, or, for an auto-tuned buffer,
//! the sum of the subflows' auto-tuned buffers (Linux `__mptcp_sync_sndbuf`, set by the
//! endpoint). The MPTCP socket charges its data fragments at their payload size plus a few
//! bytes of fragment header (`mptcp_sendmsg`: `frag_truesize`), which this model counts with
//! [`Frags`] only: otherwise it counts payload bytes ([`MetaCharge::Payload`]).
//!
//! With `data_frags = "pages"` the written data is kept in Linux MPTCP's data fragments
//! ([`Frags`]), which decide how a queueing scheduler hands it to subflows.
//!
//! The out-of-tree stack's meta socket is a TCP socket whose write queue holds skbs, each
//! charged its truesize (`skb_entail`: `sk_wmem_queued += skb->truesize`), and with DSS
//! checksums on (`mptcp_checksum = 1`, that stack's default) it neither uses scatter-gather
//! nor GSO (`mptcp_can_sg`, `mptcp_sk_can_gso`): every skb holds one MSS in a linear buffer
//! (`tcp_sendmsg` with `size_goal = mss_now`, `mptcp_select_size`), so the buffer holds far
//! less payload than its size ([`MetaCharge::Skb`], [`v09x_skb_truesize`]). The writer adds
//! an skb while the charge is below the buffer (`sk_stream_memory_free` before each
//! `sk_stream_alloc_skb`), so it may overshoot by one skb.

use std::collections::VecDeque;

use crate::app::App;
pub use crate::config::Writer;
use crate::units::{Dsn, Time};
pub use frags::Frags;

/// What the connection's send buffer charges for the data it holds (module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MetaCharge {
    /// Payload bytes.
    Payload,
    /// Whole skbs of `payload` bytes each, `truesize` bytes apiece.
    Skb { payload: u64, truesize: u64 },
}

/// `MAX_TCP_HEADER` (`128 + MAX_HEADER`) of a Linux 3.x/4.x build with wireless LAN mesh and
/// IP tunnels configured (`LL_MAX_HEADER` = 128, `MAX_HEADER` = 128 + 48), as Debian's and
/// Ubuntu's distribution configurations have them: the headroom every transmit skb reserves
/// (the connection key `max_tcp_header` when unset). Without mesh networking `LL_MAX_HEADER`
/// is 96 (272 B), without wireless LAN 32 (208 B with tunnels, 160 B without).
pub const V09X_MAX_TCP_HEADER: u64 = 304;
/// `SKB_DATA_ALIGN(sizeof(struct skb_shared_info))` on x86-64.
const SHINFO: u64 = 320;
/// `SKB_DATA_ALIGN(sizeof(struct sk_buff))` on x86-64.
const SKB_STRUCT: u64 = 256;

/// Truesize of a one-MSS transmit skb of the out-of-tree stack (meta socket, and the copy a
/// subflow sends, `pskb_copy_for_clone`): `sk_stream_alloc_skb(mss)` allocates
/// `SKB_DATA_ALIGN(mss + MAX_TCP_HEADER) + shinfo` bytes, which kmalloc rounds up to a power of
/// two (`__alloc_skb` then uses all of it, `ksize`); the truesize is that plus the `sk_buff`.
/// At MSS 1448 and `MAX_TCP_HEADER` 304: 1792 + 320 = 2112 → 4096, truesize 4352 B (0.33
/// payload per byte charged); with 280 B or less: at most 1728 + 320 = 2048, truesize 2304 B.
pub fn v09x_skb_truesize(mss: u64, max_tcp_header: u64) -> u64 {
    ((mss + max_tcp_header).next_multiple_of(64) + SHINFO).next_power_of_two() + SKB_STRUCT
}

/// The largest `send()` of the polling writer ([`Writer::Poll`]): the kernel backends'
/// application writes its stream in 64 KiB chunks, each after a `poll()` for space.
pub const POLL_CHUNK: u64 = 64 * 1024;

/// Linux `__sk_stream_is_writeable`: some free space, at least half of what is queued
/// (`sk_stream_min_wspace`). It wakes a writer asleep in `sk_stream_wait_memory`
/// (`sk_stream_write_space`) and makes `poll()` report space.
#[inline]
fn writeable(free: u64, charged: u64) -> bool {
    free >= charged / 2 && free > 0
}

pub struct ConnSender {
    pub app: App,
    /// How the application waits for space and writes without `App::Bulk`'s `write`.
    pub writer: Writer,
    /// Send buffer limit (bytes, in the units of [`Self::charge`]).
    pub sndbuf: u64,
    /// What the buffer charges.
    pub charge: MetaCharge,
    /// Next byte the application writes.
    pub write_seq: Dsn,
    /// End of the highest data sent on any subflow (bytes below it may still be unsent
    /// when a scheduler sends out of order).
    pub snd_nxt: Dsn,
    /// End of the data sent from the DATA_ACK on: `[data_una, sent_end)` was sent (nothing
    /// when equal; never below `data_una`). The usual case, everything sent in one range from
    /// the DATA_ACK, is this alone, without the ranges' queue.
    sent_end: u64,
    /// The other sent ranges (left by out-of-order sends), merged and sorted, each beyond a
    /// gap above `sent_end`.
    sent_beyond: VecDeque<(u64, u64)>,
    /// Bytes in `sent_beyond`.
    beyond_bytes: u64,
    /// Oldest byte not DATA_ACKed.
    pub data_una: Dsn,
    /// Right edge of the peer's receive window (max of DATA_ACK + window seen).
    pub rwnd_right: Dsn,
    /// The largest window the peer has offered (Linux `max_window`), which bounds the size
    /// of the sender's write-queue buffers ([`crate::tcp::tso::size_goal`]).
    pub max_window: u64,
    /// New data may take the window's last bytes in a short segment (Linux MPTCP,
    /// [`crate::config::WindowTail::Fill`]); otherwise only whole segments (RFC 1122).
    pub fill_tail: bool,
    /// Ranges to re-send on another subflow: (dsn, len, subflow they were stuck on).
    pub reinject: VecDeque<(Dsn, u64, u8)>,
    pub reinjected_bytes: u64,
    /// M1 retransmissions and M2 window reductions (minRTT add-ons).
    pub opportunistic_retransmissions: u64,
    pub penalisations: u64,
    /// Receive-buffer optimisation calls that could penalise, and those with the buffer full.
    pub rbuf_calls: u64,
    pub rbuf_calls_full: u64,
    /// (DSN, subflow) of M1 copies of the oldest unacknowledged data; cleared as DATA_ACK moves.
    pub m1_copies: Vec<(Dsn, u8)>,
    app_blocked_since: Option<Time>,
    /// Bytes of the bulk writer's current `send()` call not yet copied (only with
    /// [`App::Bulk`]'s `write`; 0 between calls).
    block_left: u64,
    /// Bytes of the polling writer's current chunk not yet copied ([`Writer::Poll`]).
    chunk_left: u64,
    /// Linux's data fragments (`data_frags = "pages"`); the writer then makes one `send()`
    /// call per [`ConnSender::app_write`], so that its push follows it.
    pub frags: Option<Frags>,
    /// Some subflow still holds data of the writer's pages (set by the endpoint before a write).
    pub pages_held: bool,
    /// The `send()` loop copied data since the last push (only with [`App::Bulk`]'s `write`):
    /// the push that follows is the writer's own, made before it sets `SOCK_NOSPACE`.
    pub sendmsg_copied: bool,
    pub blocked_episodes: u64,
    pub blocked_ns: u64,
    rwnd_limited_since: Option<Time>,
    pub rwnd_limited_ns: u64,
    sndbuf_limited_since: Option<Time>,
    pub sndbuf_limited_ns: u64,
}

impl ConnSender {
    pub fn new(app: App, sndbuf: u64, initial_rwnd: u64) -> ConnSender {
        ConnSender {
            app,
            writer: Writer::Sleep,
            sndbuf,
            charge: MetaCharge::Payload,
            write_seq: Dsn(0),
            snd_nxt: Dsn(0),
            sent_end: 0,
            sent_beyond: VecDeque::new(),
            beyond_bytes: 0,
            data_una: Dsn(0),
            rwnd_right: Dsn(initial_rwnd),
            max_window: initial_rwnd,
            fill_tail: false,
            reinject: VecDeque::new(),
            reinjected_bytes: 0,
            opportunistic_retransmissions: 0,
            penalisations: 0,
            rbuf_calls: 0,
            rbuf_calls_full: 0,
            m1_copies: Vec::new(),
            app_blocked_since: None,
            block_left: 0,
            chunk_left: 0,
            frags: None,
            pages_held: false,
            sendmsg_copied: false,
            blocked_episodes: 0,
            blocked_ns: 0,
            rwnd_limited_since: None,
            rwnd_limited_ns: 0,
            sndbuf_limited_since: None,
            sndbuf_limited_ns: 0,
        }
    }

    /// Bytes held in the send buffer (written, not DATA_ACKed).
    pub fn queued(&self) -> u64 {
        self.write_seq.dist(self.data_una)
    }

    /// What the held data costs the send buffer (Linux `sk_wmem_queued`): its payload, or its
    /// skbs' truesize.
    pub fn charged(&self) -> u64 {
        match self.charge {
            MetaCharge::Payload => self.queued() + self.frags.as_ref().map_or(0, |f| f.overhead),
            MetaCharge::Skb { payload, truesize } => self.queued().div_ceil(payload) * truesize,
        }
    }

    /// The send buffer is full (`!sk_stream_memory_free`).
    pub fn full(&self) -> bool {
        self.charged() >= self.sndbuf
    }

    /// Payload the writer may add now: the free charge, or, in skbs, one new skb while the
    /// charge is below the limit (so up to one skb beyond it) plus the room left in the last.
    /// Deviation: Linux appends to the last skb only while it is unsent (`tcp_send_head`); a
    /// writer that fills the buffer at once, as the bulk one does, leaves no partial skb.
    fn room(&self) -> u64 {
        let free = self.sndbuf.saturating_sub(self.charged());
        match self.charge {
            MetaCharge::Payload => free,
            MetaCharge::Skb { payload, truesize } => {
                let q = self.queued();
                q.div_ceil(payload) * payload - q + free.div_ceil(truesize) * payload
            }
        }
    }

    /// Bytes written and never sent on any subflow.
    pub fn unsent(&self) -> u64 {
        self.write_seq.0 - self.sent_end - self.beyond_bytes
    }

    /// Records that `[dsn, dsn + len)` was sent (as new data) on some subflow.
    #[inline]
    pub fn mark_sent(&mut self, dsn: Dsn, len: u64) {
        let (s, e) = (dsn.0.max(self.data_una.0), dsn.0 + len);
        if s >= e {
            return;
        }
        self.snd_nxt = self.snd_nxt.max(Dsn(e));
        if s > self.sent_end {
            self.merge_beyond(s, e);
        } else if e > self.sent_end {
            // The data extends what was sent from the DATA_ACK on, up to the next gap.
            self.sent_end = e;
            if !self.sent_beyond.is_empty() {
                self.absorb_beyond();
            }
        }
    }

    /// Moves the ranges of `sent_beyond` that `sent_end` reached into `[data_una, sent_end)`.
    #[inline(never)]
    fn absorb_beyond(&mut self) {
        while let Some(&(s, e)) = self.sent_beyond.front() {
            if s > self.sent_end {
                break;
            }
            self.sent_end = self.sent_end.max(e);
            self.beyond_bytes -= e - s;
            self.sent_beyond.pop_front();
        }
    }

    /// Inserts `[s, e)`, above `sent_end` by a gap, into `sent_beyond`, merging the ranges
    /// it overlaps or touches.
    #[inline(never)]
    fn merge_beyond(&mut self, s: u64, e: u64) {
        let i = self.sent_beyond.partition_point(|r| r.1 < s);
        let mut j = i;
        let (mut ns, mut ne) = (s, e);
        let mut removed = 0;
        while j < self.sent_beyond.len() && self.sent_beyond[j].0 <= ne {
            ns = ns.min(self.sent_beyond[j].0);
            ne = ne.max(self.sent_beyond[j].1);
            removed += self.sent_beyond[j].1 - self.sent_beyond[j].0;
            j += 1;
        }
        self.sent_beyond.drain(i..j);
        self.sent_beyond.insert(i, (ns, ne));
        self.beyond_bytes = self.beyond_bytes + (ne - ns) - removed;
    }

    /// The unsent data after skipping `skip` unsent bytes: at most `max_len` bytes, not
    /// crossing already-sent data.
    #[inline]
    pub fn unsent_at(&self, skip: u64, max_len: u64) -> Option<(Dsn, u64)> {
        // The usual case, without walking: everything sent is one range from the DATA_ACK
        // (or nothing is), so the unsent data is all above its end.
        if !self.sent_beyond.is_empty() {
            return self.unsent_after(skip, max_len);
        }
        let (start, write_seq) = (self.sent_end + skip, self.write_seq.0);
        (write_seq > start).then(|| (Dsn(start), max_len.min(write_seq - start)))
    }

    /// [`ConnSender::unsent_at`] by walking the gaps between the sent ranges (kept out of
    /// line: its loop would burden the inlined usual case with register saves).
    #[inline(never)]
    fn unsent_after(&self, skip: u64, max_len: u64) -> Option<(Dsn, u64)> {
        let mut skip = skip;
        let mut cur = self.sent_end;
        let gaps = self.sent_beyond.iter().copied().chain(std::iter::once((self.write_seq.0, self.write_seq.0)));
        for (s, e) in gaps {
            if s > cur {
                let g = s - cur;
                if skip < g {
                    let start = cur + skip;
                    return Some((Dsn(start), max_len.min(s - start)));
                }
                skip -= g;
            }
            cur = cur.max(e);
        }
        None
    }

    /// The sent ranges at or above the DATA_ACK, merged and sorted (for tests).
    #[cfg(test)]
    pub fn sent_ranges(&self) -> Vec<(u64, u64)> {
        let una = self.data_una.0;
        let head = (self.sent_end > una).then_some((una, self.sent_end));
        head.into_iter().chain(self.sent_beyond.iter().copied()).collect()
    }

    pub fn app_blocked(&self) -> bool {
        self.app_blocked_since.is_some()
    }

    /// The writer sleeps for space and the buffer now wakes it (`sk_stream_write_space`).
    pub fn woken(&self) -> bool {
        let charged = self.charged();
        self.app_blocked() && writeable(self.sndbuf.saturating_sub(charged), charged)
    }

    /// Lets the application write what it wants and the buffer takes (with [`Frags`], one
    /// `send()` call's worth); returns whether it wrote anything. The usual case, a writer
    /// still blocked, answers inline.
    #[inline]
    pub fn app_write(&mut self, now: Time) -> bool {
        let charged = self.charged();
        let free = self.sndbuf.saturating_sub(charged);
        if let Some(since) = self.app_blocked_since {
            if !writeable(free, charged) {
                return false;
            }
            self.blocked_ns += now.since(since).0;
            self.app_blocked_since = None;
        }
        let before = self.write_seq;
        self.app_write_unblocked(now);
        self.write_seq != before
    }

    /// `app_write` once the writer is not blocked.
    fn app_write_unblocked(&mut self, now: Time) {
        if let App::Bulk { write: Some(block), .. } = self.app {
            return self.send_blocks(now, block);
        }
        if self.writer == Writer::Poll {
            return self.write_polling(now);
        }
        let want = self.app.wants(now, self.write_seq.0);
        let n = self.copy(want);
        if want > n {
            self.blocked_episodes += 1;
            self.app_blocked_since = Some(now);
        }
    }

    /// The bulk writer's loop of blocking `send()` calls of `block` bytes each, as Linux
    /// `tcp_sendmsg_locked` runs a call: it copies while `sk_stream_memory_free` holds (the
    /// room of [`ConnSender::room`]); finding none, it sets `SOCK_NOSPACE` and sleeps in
    /// `sk_stream_wait_memory` (one blocking episode) with the rest of the call left; a call
    /// whose bytes are all copied returns, and the next begins at once unless the
    /// application's end time has come (iperf checks it between calls). A call that finds the
    /// buffer full waits at once, so a writer always wanting data copies what an unbounded one
    /// would, whatever the block; the block decides where a write ends after `stop`. The copy
    /// loop pushes the skbs it fills (`tcp_push_one`, `__tcp_push_pending_frames`) before
    /// `wait_for_sndbuf` sets `SOCK_NOSPACE`, so the push that follows a copy is checked with
    /// it clear (`sendmsg_copied`); the wake-up (`sk_stream_write_space`) cleared it. That
    /// push also carries what the waking ACK released: the out-of-tree stack's DATA_ACK
    /// handling (`mptcp_data_ack`) wakes the writer before `mptcp_push_pending_frames`, so
    /// Linux sends it with `SOCK_NOSPACE` clear too. Deviation: single-path TCP pushes before
    /// it wakes the writer (`tcp_data_snd_check`), with `SOCK_NOSPACE` still set.
    #[inline(never)]
    fn send_blocks(&mut self, now: Time, block: u64) {
        if self.block_left == 0 {
            if self.app.wants(now, self.write_seq.0) == 0 {
                return;
            }
            self.block_left = block;
        }
        let room = self.room();
        let n = self.copy(self.block_left);
        self.block_left -= n;
        // With fragments each call is followed by its push: the next call is the next write.
        if self.block_left == 0 && self.frags.is_none() && self.app.wants(now, self.write_seq.0) > 0 {
            // The calls that follow take the rest of the room: whole blocks, then part of one,
            // which waits for the rest of its bytes (all of them if the rest is whole blocks).
            let rest = room - n;
            self.write_seq += rest;
            self.block_left = block - rest % block;
        }
        self.sendmsg_copied |= n > 0;
        if self.block_left > 0 {
            self.blocked_episodes += 1;
            self.app_blocked_since = Some(now);
        }
    }

    /// The polling writer ([`Writer::Poll`]): the stream in chunks of [`POLL_CHUNK`] bytes
    /// (less for the last bytes the application wants), each `send()` made after a `poll()`
    /// that reports space and copying what the buffer takes of the chunk; a partly copied
    /// chunk's rest is the next `send()`. `poll()` reports space as Linux `tcp_poll` /
    /// `mptcp_poll` do (`__sk_stream_is_writeable`): free space at least half of what is
    /// queued (`sk_stream_min_wspace`) and some free at all. Finding none it sleeps (one
    /// blocking episode) until `sk_stream_write_space` wakes it, on the same condition. So it
    /// stops once more than two thirds of the buffer are held, where the sleeping writer fills
    /// it. The push after its copies sees `SOCK_NOSPACE` clear (`sendmsg_copied`): the wake
    /// cleared it, and the next `poll()` (`mptcp_check_writeable`) sets it only after that
    /// push. A chunk the application no longer wants (its end time passed) is dropped. Linux
    /// `mptcp_sendmsg` copies while the charge is below the buffer, in pieces of up to a 32 KB
    /// page, so it may pass the buffer by part of a page: so does this with [`Frags`]; without,
    /// it copies the room (a deviation).
    #[inline(never)]
    fn write_polling(&mut self, now: Time) {
        loop {
            let want = self.app.wants(now, self.write_seq.0);
            if want == 0 {
                self.chunk_left = 0;
                return;
            }
            if self.chunk_left == 0 {
                self.chunk_left = want.min(POLL_CHUNK);
            }
            let charged = self.charged();
            let n =
                if writeable(self.sndbuf.saturating_sub(charged), charged) { self.copy(self.chunk_left) } else { 0 };
            if n == 0 {
                self.blocked_episodes += 1;
                self.app_blocked_since = Some(now);
                return;
            }
            self.chunk_left -= n;
            self.sendmsg_copied = true;
            if self.frags.is_some() {
                // The call's push comes before the next `poll()`.
                return;
            }
        }
    }

    /// Whether the application has written everything it ever will and it was all DATA_ACKed.
    pub fn all_acked(&self, now: Time) -> bool {
        self.app.wants(now, self.write_seq.0) == 0 && self.block_left == 0 && self.data_una == self.write_seq
    }

    /// The peer's first window, from the handshake that established the connection (the
    /// SYN/ACK at the client, the third ACK at the server: Linux sets the first subflow's
    /// `snd_wnd` and `max_window` from it, and `msk->wnd_end` follows): it replaces the
    /// window assumed before.
    pub fn peer_window(&mut self, wnd: u64) {
        self.rwnd_right = Dsn(self.data_una.0 + wnd);
        self.max_window = wnd;
    }

    /// A DATA_ACK (and the window relative to it) arrived.
    pub fn on_data_ack(&mut self, data_ack: Dsn, wnd: u64) {
        if data_ack > self.data_una && data_ack <= self.snd_nxt.max(self.data_una) {
            self.data_una = data_ack;
            self.m1_copies.retain(|&(d, _)| d >= data_ack);
            if let Some(f) = self.frags.as_mut() {
                f.acked(data_ack.0);
            }
            if data_ack.0 > self.sent_end {
                self.ack_beyond(data_ack.0);
            }
        }
        self.max_window = self.max_window.max(wnd);
        let right = Dsn(data_ack.0.saturating_add(wnd));
        if right > self.rwnd_right {
            self.rwnd_right = right;
        }
    }

    /// A DATA_ACK above `sent_end`, which a run does not produce (the gap below a range of
    /// `sent_beyond` is sent before it can be acknowledged, and sending it moves `sent_end`
    /// past it), handled as the general trim of the sent ranges was: the ranges of
    /// `sent_beyond` it covers leave, one it reaches joins `[data_una, sent_end)`.
    #[inline(never)]
    fn ack_beyond(&mut self, data_ack: u64) {
        self.sent_end = data_ack;
        self.absorb_beyond();
    }

    /// The unsent data for a segment of at most `max_len` bytes after skipping `skip` unsent
    /// bytes, if the peer's window admits a full segment (or all that is there):
    /// sender-side silly-window-syndrome avoidance (RFC 1122 §4.2.3.4).
    /// With `fill_tail` ([`crate::config::WindowTail::Fill`]) any part of that segment the
    /// window admits is returned.
    pub fn next_new(&self, skip: u64, max_len: u64) -> Option<(Dsn, u64)> {
        let (dsn, len) = self.unsent_at(skip, max_len)?;
        if self.fill_tail {
            let room = self.rwnd_right.0.saturating_sub(dsn.0);
            return (room > 0).then_some((dsn, len.min(room)));
        }
        (self.rwnd_right.0 >= dsn.0 + len).then_some((dsn, len))
    }

    /// [`ConnSender::next_new`], recorded as sent ([`ConnSender::mark_sent`]) when there is
    /// some. The usual case answers inline: nothing skipped and everything sent one range
    /// from the DATA_ACK (`sent_end`), which the new data extends.
    #[inline]
    pub fn take_new(&mut self, skip: u64, max_len: u64) -> Option<(Dsn, u64)> {
        if !self.sent_beyond.is_empty() || skip != 0 {
            return self.take_new_walk(skip, max_len);
        }
        let (write_seq, right) = (self.write_seq.0, self.rwnd_right.0);
        // `unsent_at`: the unsent data starts where the sent data ends.
        let cur = self.sent_end;
        if write_seq <= cur {
            return None;
        }
        let mut len = max_len.min(write_seq - cur);
        // `next_new`: the peer's window.
        if self.fill_tail {
            let room = right.saturating_sub(cur);
            if room == 0 {
                return None;
            }
            len = len.min(room);
        } else if right < cur + len {
            return None;
        }
        if len == 0 {
            return Some((Dsn(cur), 0));
        }
        // `mark_sent`: the sent data grows by what is sent.
        self.sent_end = cur + len;
        self.snd_nxt = self.snd_nxt.max(Dsn(cur + len));
        Some((Dsn(cur), len))
    }

    /// [`ConnSender::take_new`] beyond its usual case.
    #[inline(never)]
    fn take_new_walk(&mut self, skip: u64, max_len: u64) -> Option<(Dsn, u64)> {
        let (dsn, len) = self.next_new(skip, max_len)?;
        self.mark_sent(dsn, len);
        Some((dsn, len))
    }

    /// Unsent data is waiting but the peer's window does not admit the oldest of it (any of
    /// it, with `fill_tail`).
    pub fn rwnd_blocked(&self, max_len: u64) -> bool {
        match self.unsent_at(0, max_len) {
            Some((dsn, _)) if self.fill_tail => self.rwnd_right.0 <= dsn.0,
            Some((dsn, len)) => self.rwnd_right.0 < dsn.0 + len,
            None => false,
        }
    }

    /// Updates the time accounting for "a subflow could send but ...", with `rwnd_blocked`
    /// what [`ConnSender::rwnd_blocked`] answers for a full segment.
    pub fn account(&mut self, now: Time, could_send: bool, rwnd_blocked: bool) {
        let rwnd = could_send && rwnd_blocked;
        let sndbuf = could_send && self.unsent() == 0 && self.app_blocked();
        track(&mut self.rwnd_limited_since, &mut self.rwnd_limited_ns, rwnd, now);
        track(&mut self.sndbuf_limited_since, &mut self.sndbuf_limited_ns, sndbuf, now);
    }

    /// Time (ns) the connection has been send-buffer limited up to `now`: a subflow could
    /// send, nothing is left unsent and the writer waits for send-buffer space (the interval
    /// still open at `now` included).
    pub fn sndbuf_limited_ns_at(&self, now: Time) -> u64 {
        self.sndbuf_limited_ns + self.sndbuf_limited_since.map_or(0, |s| now.since(s).0)
    }

    /// Closes the open accounting intervals at the end of the run.
    pub fn finish(&mut self, now: Time) {
        track(&mut self.rwnd_limited_since, &mut self.rwnd_limited_ns, false, now);
        track(&mut self.sndbuf_limited_since, &mut self.sndbuf_limited_ns, false, now);
        if let Some(s) = self.app_blocked_since.take() {
            self.blocked_ns += now.since(s).0;
        }
    }
}

fn track(since: &mut Option<Time>, total: &mut u64, on: bool, now: Time) {
    match (since.is_some(), on) {
        (false, true) => *since = Some(now),
        (true, false) => {
            *total += now.since(since.take().expect("open")).0;
        }
        _ => {}
    }
}

mod frags;
#[cfg(test)]
mod tests;
