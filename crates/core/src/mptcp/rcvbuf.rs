//! The receive buffer's size and the window it allows, as Linux sizes them (the
//! connection-level buffer of an MPTCP socket, or a TCP socket's).
//!
//! Two accountings ([`crate::config::BufferAccounting`]):
//! - `payload` (the classic model): the buffer holds `rcvbuf` payload bytes, fixed, and the
//!   window is that many bytes less what is held out of order.
//! - `truesize` (Linux): the buffer is `sk_rcvbuf` bytes of kernel memory, each received
//!   segment charged its skb truesize. The window is the memory turned back into payload
//!   with the socket's `scaling_ratio` (`tcp_win_from_space`: space × ratio / 256, the ratio
//!   being payload / truesize of the last full-sized segment, `tcp_measure_rcv_mss`;
//!   `TCP_DEFAULT_SCALING_RATIO` = 128 until the first data arrives). A fixed size `X`
//!   (`SO_RCVBUF`) gives `sk_rcvbuf = 2X`, locked (no auto-tuning); a triple starts at
//!   `tcp_rmem[1]` and grows by dynamic right-sizing (DRS) up to `tcp_rmem[2]`.
//!
//! DRS follows Linux 6.18 `mptcp_rcv_space_adjust` / `tcp_rcv_space_adjust` with
//! `tcp_rcvbuf_grow`: the bytes the application read are counted over one round trip (the
//! connection-level RTT, [`crate::config::DrsRtt`]: since "mptcp: better mptcp-level RTT
//! estimator" (7.0, and the measured 6.18.44 hosts) the smallest receiver-side estimate among
//! the subflows delivering data, approximated here by the smallest reported in the interval
//! instead of the last five samples; before it, the largest of all subflows'); when a
//! round read more than the previous record (`rcvq_space.space`), the record becomes that
//! amount and the buffer grows to hold twice it, plus room for the sender to double its rate
//! once more in slow start, plus the out-of-order span beyond the next expected byte
//! (`rcvwin = 2 × new + 2 × (2 × new) × (new − old) / old + ooo`, the "slow start" term
//! that "tcp: fix too slow tcp_rcvbuf_grow() action" restored, present on the measured 6.18
//! hosts: with the record going from 80896 to 202720 B the kernel's buffer became exactly
//! 2602512 B), turned into memory with the ratio (`tcp_space_from_win`), at most
//! `tcp_rmem[2]`; the buffer never shrinks. The first
//! record is `min(initial window, 10 × advmss)` (`mptcp_rcv_space_init`).
//!
//! Window scaling: the window a TCP header can carry is at most `65535 << wscale`, the scale
//! chosen at the SYN from the largest buffer the socket may reach (`tcp_select_initial_window`:
//! `ilog2(max(tcp_rmem[2], rmem_max) or, when locked, the buffer's window) − 15`). That bound
//! is the header's only ([`RcvSpace::max_window`], applied where the window is written,
//! `tcp_select_window`'s last step): the window the receiver computes and keeps
//! (`tp->rcv_wnd`, and an MPTCP socket's right edge `rcv_wnd_sent = ack_seq + rcv_wnd`) is
//! not bounded by it. A locked buffer's scale is chosen at the default ratio, so once data
//! sets the real one (158 for 1424-byte segments) the computed window passes the header's
//! bound: a fixed 256 KB buffer (`sk_rcvbuf` 512000) has scale 2 (262140 B on the wire) and a
//! computed window of up to 316000 B (`tp->rcv_wnd` and `msk->rcv_wnd_sent − msk->ack_seq`
//! read on 6.18.44; 302000 B on UML 7.3.4, whose connection-level ratio rose to 151 only).
//! The right edge the receiver keeps then lies beyond the one the sender knows, and when a
//! hole holds the data behind it the edge the sender sees still moves with the DATA_ACK until
//! the two meet. With a fixed 64 KB buffer the scale is 0 and the header's window stops at
//! 65535 B whatever the memory.
//!
//! Truesize of a received full-sized segment: 2304 B for a 1500-byte frame (a 2048-byte
//! kmalloc'd head plus `struct sk_buff`, 256 B), so a 1448-byte payload gives
//! `scaling_ratio` = 160: measured on 6.18 with a fixed 128 KiB buffer (`sk_rcvbuf` 262144),
//! 162400 B advertised = 262144 × 160 / 256 minus one 1448-byte segment not yet read.
//!
//! Out-of-order data grows the buffer too: `mptcp_data_queue_ofo` (`tcp_data_queue_ofo` for
//! TCP) runs the growth step with the current record, so the buffer holds twice the record
//! plus the span held out of order ([`RcvSpace::on_ooo`]).
//!
//! Each MPTCP subflow is a socket with a buffer of its own ([`RcvSpace::grow_subflow`]): it
//! starts at `tcp_rmem[1]` (or the locked size), follows the connection's only when that one
//! grows (`mptcp_rcv_space_adjust` → `tcp_rcvbuf_grow(ssk, copied)`) or when the subflow holds
//! data out of order, and sets the room of its `rcv_ssthresh` (`tcp_grow_window`,
//! [`crate::tcp::receiver::SubflowReceiver::grow_window`]), which caps the window the subflow
//! offers (`__tcp_select_window`; `mptcp_set_rwin` then raises it to the connection's right
//! edge). A subflow that joins after the connection's last growth keeps its first buffer.
//!
//! Deviations: held data is charged one full-sized skb's truesize per full-sized segment's
//! payload (the kernel charges each skb's own truesize and coalesces neighbours); a subflow
//! uses the connection's scaling ratio; no memory pressure (`tcp_rmem[0]` is never used) and
//! no pruning of a subflow whose memory outgrows its buffer.

use crate::config::{BufSize, BufferAccounting};
use crate::units::{Dur, Time};

/// `TCP_DEFAULT_SCALING_RATIO`: payload / truesize in 1/256 before any data arrived.
pub const DEFAULT_SCALING_RATIO: u64 = 128;
/// Truesize of a received skb holding one full-sized 1500-byte frame (see the module doc).
pub const RX_SKB_TRUESIZE: u64 = 2304;
/// `rmem_max` on the measured hosts (`net.core.rmem_max`): a bound on the window scale.
const RMEM_MAX: u64 = 4 * 1024 * 1024;
/// Linux `TCP_MAX_WSCALE`.
const MAX_WSCALE: u32 = 14;
/// Linux `TCP_INIT_CWND`.
const INIT_CWND: u64 = 10;

/// Receive-buffer sizing of one connection's receiver.
#[derive(Clone, Debug)]
pub struct RcvSpace {
    /// Buffer size in the accounting's unit (`sk_rcvbuf` for truesize).
    pub rcvbuf: u64,
    /// Largest size auto-tuning may reach (`tcp_rmem[2]`); equal to `rcvbuf` when locked.
    pub max: u64,
    /// Auto-tuning on (a triple), off (a fixed size).
    pub auto: bool,
    /// Payload / memory in 1/256 (`scaling_ratio`); 256 with payload accounting.
    pub ratio: u64,
    /// Largest window the header can carry (`65535 << wscale`); unbounded with payload
    /// accounting.
    pub max_window: u64,
    /// DRS: bytes read in the current interval, the best interval so far, its start.
    copied: u64,
    space: u64,
    since: Time,
    /// Smallest receiver RTT estimate of the subflows that delivered data in this interval.
    rtt: Option<Dur>,
    /// Payload of the last full-sized segment (the charge of held data is per such segment).
    rx_len: u64,
    /// [`crate::config::ScalingRatio::SubflowMin`]: `ratio` is the subflows' smallest, taken at
    /// reads ([`Self::refresh_ratio`]), not each segment's; `ratio_rtt` is the gate's interval
    /// (Linux `rcvq_space.rtt_us` as the last refresh stored it, None for 0).
    from_subflows: bool,
    ratio_rtt: Option<Dur>,
    /// Times the buffer grew (for tests and traces).
    pub grows: u64,
    /// The buffer a new subflow socket starts with (`tcp_rmem[1]`, or the locked size), and
    /// its first receive-space record.
    initial: u64,
    initial_record: u64,
}

impl RcvSpace {
    pub fn new(buf: BufSize, accounting: BufferAccounting, advmss: u64) -> RcvSpace {
        let truesize = accounting == BufferAccounting::Truesize;
        let (rcvbuf, max, auto) = match (buf, truesize) {
            (BufSize::Fixed(b), false) => (b.0, b.0, false),
            (BufSize::Fixed(b), true) => (2 * b.0, 2 * b.0, false),
            (BufSize::Auto(t), _) => (t.default.0, t.max.0.max(t.default.0), true),
        };
        let ratio = if truesize { DEFAULT_SCALING_RATIO } else { 256 };
        let max_window = if truesize {
            // The scale is chosen before any data, at the default ratio.
            let space = if auto { max.max(RMEM_MAX) } else { (rcvbuf * DEFAULT_SCALING_RATIO) >> 8 };
            let wscale = (space.max(1).ilog2().saturating_sub(15)).min(MAX_WSCALE);
            65535u64 << wscale
        } else {
            u64::MAX
        };
        let mut s = RcvSpace {
            rcvbuf,
            max,
            auto,
            ratio,
            max_window,
            copied: 0,
            space: 0,
            since: Time::ZERO,
            rtt: None,
            rx_len: advmss,
            from_subflows: false,
            ratio_rtt: None,
            grows: 0,
            initial: rcvbuf,
            initial_record: 0,
        };
        s.space = s.window_for(0).min(INIT_CWND * advmss);
        s.initial_record = s.space;
        s
    }

    /// `tcp_win_from_space`: payload that `space` bytes of buffer hold.
    pub fn win_from_space(&self, space: u64) -> u64 {
        win_at(space, self.ratio)
    }

    /// `tcp_space_from_win`: buffer needed for `win` payload bytes.
    pub fn space_from_win(&self, win: u64) -> u64 {
        space_at(win, self.ratio)
    }

    /// Memory that `held` payload bytes take: one skb truesize per full-sized segment.
    pub fn charge(&self, held: u64) -> u64 {
        if self.ratio == 256 {
            held
        } else {
            held * RX_SKB_TRUESIZE / self.rx_len.max(1)
        }
    }

    /// The window allowed when `held` payload bytes wait in the buffer (`tcp_space` turned
    /// into payload; not bounded by the header's [`Self::max_window`]).
    pub fn window_for(&self, held: u64) -> u64 {
        self.win_from_space(self.rcvbuf.saturating_sub(self.charge(held)))
    }

    /// The window a TCP header carries for a computed window `wnd` (`tcp_select_window`:
    /// at most `65535 << rcv_wscale`).
    #[inline]
    pub fn on_wire(&self, wnd: u64) -> u64 {
        wnd.min(self.max_window)
    }

    /// The connection's ratio follows its subflows' ([`crate::config::ScalingRatio::SubflowMin`]).
    pub fn ratio_from_subflows(&mut self) {
        self.from_subflows = self.ratio != 256;
    }

    /// Whether [`Self::refresh_ratio`] has anything to do.
    #[inline]
    pub fn follows_subflows(&self) -> bool {
        self.from_subflows
    }

    /// The `scaling_ratio` a full-sized segment of `len` payload bytes sets on the socket that
    /// receives it (`tcp_measure_rcv_mss`: payload × 256 / truesize).
    pub fn segment_ratio(len: u64) -> u64 {
        ((len << 8) / RX_SKB_TRUESIZE).clamp(1, 255)
    }

    /// A full-sized data segment of `len` payload bytes arrived (`tcp_measure_rcv_mss`).
    pub fn on_segment(&mut self, len: u64) {
        if self.ratio != 256 {
            if !self.from_subflows {
                self.ratio = Self::segment_ratio(len);
            }
            self.rx_len = len;
        }
    }

    /// The application read at `now` (Linux 6.18 `mptcp_rcv_space_adjust`, before its
    /// measurement): unless the interval that began at the last measurement is shorter than
    /// the RTT the last refresh stored, the connection's ratio becomes `min_ratio` (the
    /// smallest of its subflows' own) and the stored RTT `max_rtt` (the largest subflow
    /// receiver RTT estimate, None while no subflow has one).
    pub fn refresh_ratio(&mut self, now: Time, min_ratio: u64, max_rtt: Option<Dur>) {
        if !self.from_subflows || self.ratio_rtt.is_some_and(|r| now.since(self.since) < r) {
            return;
        }
        self.ratio = min_ratio;
        self.ratio_rtt = max_rtt;
    }

    /// A subflow that delivered data has receiver RTT estimate `rtt`.
    pub fn on_rtt(&mut self, rtt: Dur) {
        self.rtt = Some(self.rtt.map_or(rtt, |r| r.min(rtt)));
    }

    /// The interval is `rtt`, whoever delivered (Linux 6.18: the largest estimate of all
    /// subflows, [`crate::config::DrsRtt::Largest`]).
    pub fn set_rtt(&mut self, rtt: Dur) {
        self.rtt = Some(rtt);
    }

    /// The application read `n` bytes at `now` with `ooo_span` bytes held beyond the next
    /// expected byte (DRS; see the module documentation). Returns the round's bytes when the
    /// buffer grew (Linux `mptcp_rcvbuf_grow` returned true): the subflows then follow
    /// ([`Self::grow_subflow`]).
    pub fn on_read(&mut self, now: Time, n: u64, ooo_span: u64) -> Option<u64> {
        self.copied += n;
        let rtt = self.rtt?;
        if now.since(self.since) < rtt {
            return None;
        }
        let mut grew = None;
        if self.copied > self.space {
            let old = self.space.max(1);
            self.space = self.copied;
            if self.auto {
                // `tcp_rcvbuf_grow`: DRS is one RTT late (twice the round's reads), and in
                // slow start the sender may double its rate again (`grow`).
                let rcvwin = 2 * self.space;
                let grow = (rcvwin as u128 * (self.space - old.min(self.space)) as u128 / old as u128) as u64;
                let want = self.space_from_win(rcvwin + 2 * grow + ooo_span).min(self.max);
                if want > self.rcvbuf {
                    self.rcvbuf = want;
                    self.grows += 1;
                    grew = Some(self.space);
                }
            }
        }
        self.copied = 0;
        self.since = now;
        self.rtt = None;
        grew
    }

    /// Whether [`Self::on_ooo`] may grow the buffer: not without auto-tuning, nor once the
    /// buffer is as large as it may grow (the caller then need not measure the span).
    #[inline]
    pub fn grows_on_ooo(&self) -> bool {
        self.auto && self.ratio != 256 && self.rcvbuf < self.max
    }

    /// Data was queued out of order, `ooo_span` bytes now lying between the next expected
    /// byte and the end of the last held range: Linux `mptcp_data_queue_ofo` (and
    /// `tcp_data_queue_ofo` for a TCP socket) runs the growth step with the current record
    /// (`mptcp_rcvbuf_grow(sk, space)`, no slow-start term), so the buffer holds twice the
    /// record plus that span, at most `tcp_rmem[2]`. Linux's memory accounting only.
    pub fn on_ooo(&mut self, ooo_span: u64) {
        if !self.grows_on_ooo() {
            return;
        }
        let want = self.space_from_win(2 * self.space + ooo_span).min(self.max);
        if want > self.rcvbuf {
            self.rcvbuf = want;
            self.grows += 1;
        }
    }

    /// A subflow socket's own buffer before any growth: what it was created with
    /// (`tcp_rmem[1]`), or the locked size `SO_RCVBUF` set on every subflow.
    pub fn subflow_initial(&self) -> u64 {
        self.initial
    }

    /// A new socket's receive-space record (`tcp_init_buffer_space`: min(initial window,
    /// 10 × advmss)).
    pub fn initial_record(&self) -> u64 {
        self.initial_record
    }

    /// Linux `tcp_rcvbuf_grow(ssk, copied)`, which `mptcp_rcv_space_adjust` runs on every
    /// subflow after the connection's buffer grew ("make subflows follow along"): the
    /// subflow's record `space` becomes `copied`, and its buffer `rcvbuf` grows to hold twice
    /// it, plus the slow-start term against the subflow's previous record, plus the span the
    /// subflow holds out of order (`ooo_span`), at most `tcp_rmem[2]`. A subflow follows only
    /// here: one that joined after the connection's last growth keeps the buffer it was
    /// created with. `ratio` is the subflow socket's own `scaling_ratio`.
    pub fn grow_subflow(&self, rcvbuf: &mut u64, space: &mut u64, copied: u64, ooo_span: u64, ratio: u64) {
        let old = (*space).max(1);
        *space = copied;
        if !self.auto {
            return;
        }
        let rcvwin = 2 * copied;
        let grow = (2 * rcvwin as u128 * copied.saturating_sub(old) as u128 / old as u128) as u64;
        let want = space_at(rcvwin + grow + ooo_span, ratio).min(self.max);
        *rcvbuf = (*rcvbuf).max(want);
    }

    /// The window a subflow socket with buffer `rcvbuf` may offer when `held` payload bytes
    /// wait in it (Linux min(`window_clamp`, `tcp_space`) in `tcp_grow_window`).
    pub fn subflow_window(&self, rcvbuf: u64, held: u64, ratio: u64) -> u64 {
        win_at(rcvbuf.saturating_sub(self.charge(held)), ratio)
    }
}

/// `tcp_win_from_space` at `ratio`: payload that `space` bytes of buffer hold.
fn win_at(space: u64, ratio: u64) -> u64 {
    (space * ratio) >> 8
}

/// `tcp_space_from_win` at `ratio`: buffer needed for `win` payload bytes.
fn space_at(win: u64, ratio: u64) -> u64 {
    (win << 8) / ratio.max(1)
}

/// The receiver-side RTT estimate of one subflow (Linux `tcp_rcv_rtt_measure_ts` /
/// `tcp_rcv_rtt_update` with timestamps): each data segment whose timestamp echo is new
/// gives a sample, the time since this end sent the echoed timestamp; a smaller sample
/// replaces the estimate, a larger one moves it by 1/8.
#[derive(Clone, Copy, Debug, Default)]
pub struct RcvRtt {
    pub est: Option<Dur>,
    last_echo: Option<Time>,
}

impl RcvRtt {
    pub fn on_data(&mut self, now: Time, echo: Time) {
        if self.last_echo == Some(echo) || echo == Time::ZERO || echo > now {
            return;
        }
        self.last_echo = Some(echo);
        let m = now.since(echo);
        if m == Dur::ZERO {
            return;
        }
        self.est = Some(match self.est {
            Some(e) if m >= e => Dur(e.0 - e.0 / 8 + m.0 / 8),
            _ => m,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{BufTriple, ByteSize};

    const MS: u64 = 1_000_000;

    fn linux_default() -> BufSize {
        BufSize::Auto(BufTriple { min: ByteSize(4096), default: ByteSize(131_072), max: ByteSize(33_554_432) })
    }

    #[test]
    fn a_fixed_buffer_is_doubled_and_its_window_scaled_as_linux() {
        // SO_RCVBUF 128 KiB: sk_rcvbuf 262144; the scale is chosen from the window at the
        // default ratio, 131072 B -> ilog2 17 - 15 = 2, so at most 65535 << 2 = 262140 B.
        let mut s = RcvSpace::new(BufSize::Fixed(ByteSize(131_072)), BufferAccounting::Truesize, 1448);
        assert_eq!(s.rcvbuf, 262_144);
        assert_eq!(s.max_window, 262_140);
        assert_eq!(s.window_for(0), 131_072);
        // First 1448-byte segment: ratio 1448 * 256 / 2304 = 160 (integer division).
        s.on_segment(1448);
        assert_eq!(s.ratio, 160);
        // The kernel's capture: 262144 * 160 / 256 = 163840, less one unread segment.
        assert_eq!(s.window_for(1448), 162_400);
        // 64 KB: scale ilog2(64000) - 15 = 0, the window stops at 65535 B.
        let s = RcvSpace::new(BufSize::Fixed(ByteSize(64_000)), BufferAccounting::Truesize, 1448);
        assert_eq!(s.max_window, 65_535);
        // Payload accounting: the size as written, no ratio, no scale limit.
        let s = RcvSpace::new(BufSize::Fixed(ByteSize(64_000)), BufferAccounting::Payload, 1448);
        assert_eq!(s.window_for(1000), 63_000);
    }

    #[test]
    fn drs_grows_the_buffer_to_twice_the_best_round_read() {
        let mut s = RcvSpace::new(linux_default(), BufferAccounting::Truesize, 1448);
        // tcp_rmem[1] at the default ratio: 65536 B; first record min(65536, 10 * 1448).
        assert_eq!(s.window_for(0), 65_536);
        assert_eq!(s.space, 14_480);
        assert_eq!(s.max_window, 65_535 << 10); // ilog2(32 MiB) - 15 = 10
        s.on_segment(1424); // MPTCP payload: ratio 1424 * 256 / 2304 = 158
        assert_eq!(s.ratio, 158);
        // No RTT estimate yet: nothing happens.
        s.on_read(Time(5 * MS), 10_000, 0);
        assert_eq!(s.rcvbuf, 131_072);
        s.on_rtt(Dur(30 * MS));
        s.on_rtt(Dur(20 * MS)); // the smallest subflow estimate counts
        s.on_read(Time(10 * MS), 10_000, 0); // 10 ms < 20 ms: keep counting
        assert_eq!(s.rcvbuf, 131_072);
        // 20 ms after the start, 100000 B read in all (> 14480): space = 100000, and
        // rcvwin = 2 * 100000 = 200000, grow = 200000 * (100000 - 14480) / 14480 = 1181215,
        // + 2 * grow + 5000 B out of order = 2567430 -> 2567430 * 256 / 158 = 4159886.
        s.on_read(Time(20 * MS), 80_000, 5000);
        assert_eq!(s.rcvbuf, 4_159_886);
        assert_eq!(s.grows, 1);
        // A round that reads less than the record changes nothing.
        s.on_rtt(Dur(20 * MS));
        s.on_read(Time(45 * MS), 50_000, 0);
        assert_eq!(s.rcvbuf, 4_159_886);
        // Capped by tcp_rmem[2].
        s.on_rtt(Dur(20 * MS));
        s.on_read(Time(70 * MS), 100 << 20, 0);
        assert_eq!(s.rcvbuf, 33_554_432);
        // A fixed buffer never grows.
        let mut f = RcvSpace::new(BufSize::Fixed(ByteSize(65_536)), BufferAccounting::Truesize, 1448);
        f.on_rtt(Dur(MS));
        f.on_read(Time(10 * MS), 10 << 20, 0);
        assert_eq!(f.rcvbuf, 131_072);
    }

    /// A step measured on Linux 6.18 (`ss -tmi` on a TCP receiver, `tcp_rmem` 4096 131072
    /// 33554432, 100 Mbit/s, 50 ms): the record went from 80896 to 202720 B with the ratio
    /// at 160 and the buffer became 2602512 B. rcvwin = 405440, grow = 405440 * 121824 /
    /// 80896 = 610565, 405440 + 2 * 610565 = 1626570 -> 1626570 * 256 / 160 = 2602512.
    #[test]
    fn drs_grows_by_the_kernels_slow_start_term() {
        let mut s = RcvSpace::new(linux_default(), BufferAccounting::Truesize, 1448);
        s.on_segment(1448);
        assert_eq!(s.ratio, 160);
        s.space = 80_896;
        s.on_rtt(Dur(50 * MS));
        s.on_read(Time(50 * MS), 202_720, 0);
        assert_eq!(s.rcvbuf, 2_602_512);
    }

    #[test]
    fn the_receiver_rtt_takes_smaller_samples_at_once_and_larger_ones_by_an_eighth() {
        let mut r = RcvRtt::default();
        r.on_data(Time(100 * MS), Time(60 * MS));
        assert_eq!(r.est, Some(Dur(40 * MS)));
        r.on_data(Time(110 * MS), Time(60 * MS)); // same echo: no sample
        assert_eq!(r.est, Some(Dur(40 * MS)));
        r.on_data(Time(200 * MS), Time(120 * MS)); // 80 ms: 40 - 5 + 10 = 45 ms
        assert_eq!(r.est, Some(Dur(45 * MS)));
        r.on_data(Time(300 * MS), Time(270 * MS)); // 30 ms replaces
        assert_eq!(r.est, Some(Dur(30 * MS)));
    }

    /// The subflows of an auto-tuned MPTCP socket measured on Linux 6.18.44 (`ss -tmi` every
    /// 60 ms at the client, `tcp_rmem` 4 KB 128 KB 512 KB, 50 Mbit/s 10 ms + 10 Mbit/s 100 ms):
    /// the connection's buffer reached 512000 B 60 ms into the transfer and grew no more; the
    /// first subflow, present then, followed it (483733 B), the second, joined 70 ms later,
    /// kept the 128000 B it was created with for the whole run. `tcp_rcvbuf_grow(ssk, copied)`
    /// by hand, ratio 1424 * 256 / 2304 = 158, a subflow record of 10 * 1448 = 14480 B and a
    /// round of 58304 B read: rcvwin = 116608, grow = 2 * 116608 * 43824 / 14480 = 705832,
    /// (116608 + 705832) * 256 / 158 = 1332561 B wanted, capped at tcp_rmem[2].
    #[test]
    fn a_subflow_follows_the_connections_buffer_only_when_told() {
        let auto = BufSize::Auto(BufTriple { min: ByteSize(4000), default: ByteSize(128_000), max: ByteSize(512_000) });
        let mut s = RcvSpace::new(auto, BufferAccounting::Truesize, 1448);
        assert_eq!((s.subflow_initial(), s.initial_record()), (128_000, 14_480));
        s.on_segment(1424);
        let (mut buf, mut rec) = (s.subflow_initial(), s.initial_record());
        s.grow_subflow(&mut buf, &mut rec, 58_304, 0, s.ratio);
        assert_eq!((buf, rec), (512_000, 58_304));
        // Without the cap: 1332561 B.
        let big =
            BufSize::Auto(BufTriple { min: ByteSize(4000), default: ByteSize(128_000), max: ByteSize(4_000_000) });
        let mut b = RcvSpace::new(big, BufferAccounting::Truesize, 1448);
        b.on_segment(1424);
        let (mut buf, mut rec) = (128_000, 14_480);
        b.grow_subflow(&mut buf, &mut rec, 58_304, 0, b.ratio);
        assert_eq!(buf, 1_332_561);
        // A later, smaller step never shrinks the buffer: 60000 B against 58304 gives
        // (120000 + 2 * 120000 * 1696 / 58304) * 256 / 158 = 205741 B.
        b.grow_subflow(&mut buf, &mut rec, 60_000, 0, b.ratio);
        assert_eq!((buf, rec), (1_332_561, 60_000));
        // The window the subflow may offer is its own buffer's: 128000 * 158 / 256 = 79000 B
        // (the kernel's second subflow showed rcv_ssthresh 79000 and ACK windows of 79104 B,
        // rounded up to the window scale, when it alone set the right edge).
        assert_eq!(s.subflow_window(128_000, 0, s.ratio), 79_000);
        // A locked buffer records the round but keeps its size.
        let mut f = RcvSpace::new(BufSize::Fixed(ByteSize(256_000)), BufferAccounting::Truesize, 1448);
        let (mut buf, mut rec) = (f.subflow_initial(), f.initial_record());
        f.on_segment(1424);
        f.grow_subflow(&mut buf, &mut rec, 58_304, 0, f.ratio);
        assert_eq!((buf, rec), (512_000, 58_304));
    }

    /// `tcp_data_queue_ofo` / `mptcp_data_queue_ofo` run the growth step with the current
    /// record: the buffer must hold twice the record plus the out-of-order span. Record 14480
    /// B, ratio 158: a 50000 B span wants (28960 + 50000) * 256 / 158 = 127935 B, under the
    /// 128000 B buffer; a 100000 B span wants 208947 B. (Seen on 6.18.44: a second subflow's
    /// buffer went from 64000 to 138356 B with its record unchanged at 14480 B while it held
    /// data out of order.)
    #[test]
    fn out_of_order_data_grows_the_buffer_to_cover_its_span() {
        let auto = BufSize::Auto(BufTriple { min: ByteSize(4000), default: ByteSize(128_000), max: ByteSize(512_000) });
        let mut s = RcvSpace::new(auto, BufferAccounting::Truesize, 1448);
        s.on_segment(1424);
        s.on_ooo(50_000);
        assert_eq!(s.rcvbuf, 128_000);
        s.on_ooo(100_000);
        assert_eq!(s.rcvbuf, 208_947);
        s.on_ooo(1_000_000);
        assert_eq!(s.rcvbuf, 512_000);
        let (mut buf, mut rec) = (128_000, 14_480);
        s.grow_subflow(&mut buf, &mut rec, 14_480, 100_000, s.ratio);
        assert_eq!((buf, rec), (208_947, 14_480));
        // Payload accounting (the classic model) never grows on out-of-order data.
        let mut p = RcvSpace::new(auto, BufferAccounting::Payload, 1448);
        p.on_ooo(1_000_000);
        assert_eq!(p.rcvbuf, 128_000);
    }

    #[test]
    fn the_subflows_ratio_is_taken_at_most_once_per_stored_rtt() {
        // `mptcp_rcv_space_adjust`: `if (rtt_us && time < rtt_us >> 3) return;` before the
        // refresh, `time` counted from the last measurement (here the start, no read has
        // measured yet). A refresh at 0 stores 100 ms: one at 50 ms is refused, one at 100 ms
        // taken. Segments no longer set the connection's ratio.
        let mut s = RcvSpace::new(BufSize::Fixed(ByteSize(65_536)), BufferAccounting::Truesize, 1448);
        s.ratio_from_subflows();
        s.on_segment(1424);
        assert_eq!(s.ratio, DEFAULT_SCALING_RATIO);
        s.refresh_ratio(Time::ZERO, 158, Some(Dur::from_ms(100)));
        assert_eq!(s.ratio, 158);
        s.refresh_ratio(Time::ZERO + Dur::from_ms(50), 128, Some(Dur::from_ms(100)));
        assert_eq!(s.ratio, 158);
        s.refresh_ratio(Time::ZERO + Dur::from_ms(100), 128, Some(Dur::from_ms(100)));
        assert_eq!(s.ratio, 128);
        // Payload accounting has no ratio to follow.
        let mut p = RcvSpace::new(BufSize::Fixed(ByteSize(65_536)), BufferAccounting::Payload, 1448);
        p.ratio_from_subflows();
        p.refresh_ratio(Time::ZERO, 158, None);
        assert_eq!(p.ratio, 256);
    }
}
