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
//! Rounding ([`crate::config::WindowRounding::Scaled`], [`RcvSpace::select`]): Linux offers the
//! handshake's window rounded down to the MSS (`tcp_select_initial_window`: 44 × 1460 = 64240 B
//! for the default `tcp_rmem[1]`), later windows aligned up to the scale's unit (1024 B for the
//! default triple's scale 10), and the header carries them shifted right by the scale; the
//! 6.18.44 host's first ACKs on `download-2mb` offer 64512 B = 63 × 1024, and UML 7.3.4's first
//! push there is 64512 B. Deviations: a subflow's `window_clamp` is taken as its empty buffer's
//! window where its own buffer is modelled (the connection's otherwise), and the quick-ACK
//! count that `__tcp_select_window` clears below half the buffer is left alone.
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

use crate::config::{BufSize, BufferAccounting, ConnCfg, ScalingRatio, WindowRounding};
use crate::net::packet::{optlen, IP_TCP_HEADER};
use crate::units::{Dur, Time};

/// `TCP_DEFAULT_SCALING_RATIO`: payload / truesize in 1/256 before any data arrived.
pub const DEFAULT_SCALING_RATIO: u64 = 128;
/// Truesize of a received skb holding one full-sized 1500-byte frame (see the module doc).
pub const RX_SKB_TRUESIZE: u64 = 2304;
/// `rmem_max` on the measured hosts (`net.core.rmem_max`): a bound on the window scale.
const RMEM_MAX: u64 = 4 * 1024 * 1024;
/// Linux `TCP_MAX_WSCALE`.
const MAX_WSCALE: u32 = 14;
/// Linux `TCP_MSS_DEFAULT`: the peer's segment size a receiver assumes before measuring one
/// (`tcp_initialize_rcv_mss`, with a peer MSS and a window above it).
const TCP_MSS_DEFAULT: u64 = 536;
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
    /// [`crate::config::WindowRounding::Scaled`]: the scale's unit (`1 << rcv_wscale`) in
    /// which windows are offered ([`Self::select`]); None: exact bytes.
    unit: Option<u64>,
    /// The handshake's MSS (`tp->advmss`) and the timestamp option's length, which the
    /// passive opener's initial window is rounded without, and whether this end opens the
    /// subflows ([`Self::initial_window`]).
    advmss: u64,
    ts_len: u64,
    active: bool,
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
            unit: None,
            advmss,
            ts_len: 0,
            active: true,
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

    /// A connection's receive buffer as its configuration sets it, at the client if `active`.
    /// The handshake's MSS is `tp->advmss`: the configured MSS with room for the timestamp
    /// option when it is used, at most the MTU less the IP and TCP headers.
    pub fn for_conn(cfg: &ConnCfg, mptcp: bool, active: bool) -> RcvSpace {
        let t = &cfg.tcp;
        let mut space = RcvSpace::new(cfg.rcvbuf, cfg.buffer_accounting, t.mss);
        if mptcp && cfg.scaling_ratio == ScalingRatio::SubflowMin {
            space.ratio_from_subflows();
        }
        if cfg.window_rounding == WindowRounding::Scaled {
            let ts_len = if t.timestamps { u64::from(optlen::TIMESTAMPS) } else { 0 };
            let advmss = (t.mss + ts_len).min(t.mtu - u64::from(IP_TCP_HEADER));
            space.round_as_linux(advmss, ts_len, active);
        }
        space
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
    /// at most `65535 << rcv_wscale`), as the peer reads it: with [`Self::round_as_linux`]
    /// the header holds `wnd >> rcv_wscale`, so the peer sees it truncated to the scale's
    /// unit (a window raised to the connection's right edge, `mptcp_set_rwin`, need not be
    /// a multiple of it).
    #[inline]
    pub fn on_wire(&self, wnd: u64) -> u64 {
        let w = wnd.min(self.max_window);
        match self.unit {
            Some(unit) => w - w % unit,
            None => w,
        }
    }

    /// Whether windows are rounded ([`Self::round_as_linux`]).
    #[inline]
    pub fn rounds(&self) -> bool {
        self.unit.is_some()
    }

    /// Windows are offered as Linux rounds them ([`crate::config::WindowRounding::Scaled`]),
    /// the handshake announcing `advmss` (`tp->advmss`: the MSS with room for the timestamp
    /// option, `ts_len` bytes, when it is used), this end opening the subflows if `active`;
    /// Linux's memory accounting only (the scale is chosen from it).
    pub fn round_as_linux(&mut self, advmss: u64, ts_len: u64, active: bool) {
        if self.max_window != u64::MAX {
            // `max_window` is `65535 << rcv_wscale`.
            self.unit = Some(self.max_window / 65535);
            (self.advmss, self.ts_len, self.active) = (advmss, ts_len, active);
        }
    }

    /// The window a SYN or SYN/ACK carries (not scaled, RFC 7323 §2.2): the handshake's window
    /// ([`Self::handshake_window`]), at most 65535 B with Linux's memory accounting.
    pub fn initial_window(&self) -> u64 {
        let w = self.handshake_window();
        if self.max_window != u64::MAX {
            w.min(65_535)
        } else {
            w
        }
    }

    /// A new subflow's first `tp->rcv_wnd` and `rcv_ssthresh`, and the connection's first
    /// right edge beyond the next expected byte (a subflow's window never shrinks below it,
    /// `tcp_select_window`). With [`Self::round_as_linux`], Linux's
    /// `tcp_select_initial_window`: the empty buffer's window rounded down to the MSS (the
    /// active opener's `advmss`, `tcp_connect_init`; the passive one's less the timestamp
    /// option, `tcp_openreq_init_rwin`); a header carries at most 65535 B of it, but the
    /// socket keeps all of it. Otherwise the empty buffer's window.
    pub fn handshake_window(&self) -> u64 {
        let w = self.window_for(0);
        let mss = if self.active { self.advmss } else { self.advmss - self.ts_len };
        match self.unit {
            Some(_) if w > mss && mss > 0 => w - w % mss,
            _ => w,
        }
    }

    /// The window a subflow offers (Linux `__tcp_select_window`) given the connection's free
    /// space `free` (`mptcp_space`), the subflow's `rcv_ssthresh` `cap`, the most it may offer
    /// (`full`: min(`window_clamp`, the connection's empty buffer's window)), the window it
    /// last offered (`rcv_wnd`) and the peer's segment size (`rcv_mss`). Exact: min(`free`,
    /// `cap`). With [`Self::round_as_linux`]: below half of `full` the free space is rounded
    /// down to the scale's unit, and the window is 0 when that is less than a sixteenth of
    /// the buffer's window or one segment (receiver-side silly-window avoidance); at most
    /// `cap`, then aligned up to the unit ("so that it won't get scaled away"), or, with no
    /// scale, rounded down to a multiple of `rcv_mss` unless the last window is within one
    /// segment of the free space.
    pub fn select(&self, free: u64, cap: u64, full: u64, rcv_wnd: u64, rcv_mss: u64) -> u64 {
        let Some(unit) = self.unit else { return free.min(cap) };
        let allowed = self.win_from_space(self.rcvbuf);
        let full = full.min(allowed);
        // `tcp_initialize_rcv_mss`: `TCP_MSS_DEFAULT` until a segment is measured.
        let mss = if rcv_mss == 0 { TCP_MSS_DEFAULT } else { rcv_mss }.min(full);
        if mss == 0 {
            return 0;
        }
        let mut free = free;
        if free < full / 2 {
            free -= free % unit;
            if free < allowed / 16 || free < mss {
                return 0;
            }
        }
        let free = free.min(cap);
        if unit > 1 {
            free.div_ceil(unit) * unit
        } else if rcv_wnd + mss <= free || rcv_wnd > free {
            free - free % mss
        } else if mss == full && free > rcv_wnd + full / 2 {
            free
        } else {
            rcv_wnd
        }
    }

    /// `w` aligned up to the scale's unit (`tcp_select_window` keeps a window it may not
    /// shrink as `ALIGN(cur_win, 1 << rcv_wscale)`); `w` when windows are exact.
    pub fn align(&self, w: u64) -> u64 {
        match self.unit {
            Some(unit) => w.div_ceil(unit) * unit,
            None => w,
        }
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
    /// receiver RTT estimate, None while no subflow has one). Linux measures only past that
    /// refresh, in the same function: a read that ends a measurement ([`Self::on_read`], whose
    /// interval is the engine's `drs_rtt` rule) refreshes whatever the stored RTT says.
    pub fn refresh_ratio(&mut self, now: Time, min_ratio: u64, max_rtt: Option<Dur>) {
        let gated = self.ratio_rtt.is_some_and(|r| now.since(self.since) < r);
        if !self.from_subflows || gated && self.rtt.is_none_or(|r| now.since(self.since) < r) {
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

    /// [`Self::subflow_window`] with the segment of `len` payload bytes just queued on the
    /// subflow besides: `tcp_queue_rcv` charged its skb, whose truesize does not follow its
    /// payload (UML 7.3.4, `trace_printk` in `tcp_grow_window`: 2304 B for a 1240-byte segment
    /// as for a 1424-byte one), so it takes one [`RX_SKB_TRUESIZE`] (its bytes with payload
    /// accounting).
    pub fn subflow_window_queued(&self, rcvbuf: u64, held: u64, len: u64, ratio: u64) -> u64 {
        let seg = if self.ratio == 256 { len } else { RX_SKB_TRUESIZE };
        win_at(rcvbuf.saturating_sub(self.charge(held) + seg), ratio)
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
mod tests;
