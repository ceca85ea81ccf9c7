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
    let big = BufSize::Auto(BufTriple { min: ByteSize(4000), default: ByteSize(128_000), max: ByteSize(4_000_000) });
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
    // A read that ends a measurement refreshes although the stored RTT (100 ms) has not
    // passed: Linux measures only past the refresh. The measurement's interval here is 40 ms
    // (`on_rtt`); at 130 ms, 30 ms into it, the refresh is refused; at 140 ms it is taken.
    s.on_rtt(Dur::from_ms(40));
    s.on_read(Time::ZERO + Dur::from_ms(100), 0, 0);
    s.on_rtt(Dur::from_ms(40));
    s.refresh_ratio(Time::ZERO + Dur::from_ms(130), 158, Some(Dur::from_ms(100)));
    assert_eq!(s.ratio, 128);
    s.refresh_ratio(Time::ZERO + Dur::from_ms(140), 158, Some(Dur::from_ms(100)));
    assert_eq!(s.ratio, 158);
    // Payload accounting has no ratio to follow.
    let mut p = RcvSpace::new(BufSize::Fixed(ByteSize(65_536)), BufferAccounting::Payload, 1448);
    p.ratio_from_subflows();
    p.refresh_ratio(Time::ZERO, 158, None);
    assert_eq!(p.ratio, 256);
}

/// A buffer whose windows are rounded as Linux's, at the client (`advmss` 1460: 1448 B of
/// payload and the 12-byte timestamp option).
fn rounded(buf: BufSize) -> RcvSpace {
    let mut s = RcvSpace::new(buf, BufferAccounting::Truesize, 1448);
    s.round_as_linux(1460, 12, true);
    s
}

#[test]
fn the_handshake_window_is_rounded_down_to_the_mss_and_a_syn_carries_at_most_65535() {
    // `tcp_select_initial_window`: the empty buffer's window rounded down to the MSS, all of
    // it kept as `rcv_wnd` / `rcv_ssthresh`, at most 65535 B in the unscaled SYN's header.
    // `tcp_rmem[1]` 131072 B at ratio 128: 65536 B; the active opener rounds to its advmss,
    // 44 x 1460 = 64240 B, the passive one to advmss less the timestamp option, 45 x 1448 =
    // 65160 B.
    let s = rounded(linux_default());
    assert_eq!((s.handshake_window(), s.initial_window()), (64_240, 64_240));
    let mut p = RcvSpace::new(linux_default(), BufferAccounting::Truesize, 1448);
    p.round_as_linux(1460, 12, false);
    assert_eq!(p.handshake_window(), 65_160);
    // SO_RCVBUF 256000: 256000 B at ratio 128, 175 x 1460 = 255500 B kept; the SYN says 65535
    // (the 6.18.44 host's SYN on `rcvbuf-fixed-256kb`, whose first ACK then offered 254848 B).
    let s = rounded(BufSize::Fixed(ByteSize(256_000)));
    assert_eq!((s.handshake_window(), s.initial_window()), (255_500, 65_535));
    // Exact windows: the empty buffer's window (a SYN: at most 65535 B).
    let e = RcvSpace::new(BufSize::Fixed(ByteSize(256_000)), BufferAccounting::Truesize, 1448);
    assert_eq!((e.handshake_window(), e.initial_window()), (256_000, 65_535));
}

#[test]
fn with_a_scale_windows_are_aligned_up_to_its_unit_and_read_truncated_to_it() {
    // `tcp_rmem` default: scale 10, unit 1024; allowed space 65536 B (`mptcp_space`), so half
    // of it is 32768 and a sixteenth 4096.
    let s = rounded(linux_default());
    let cap = s.handshake_window();
    let sel = |free| s.select(free, cap, u64::MAX, 0, 1424);
    // One full-sized segment held: (131072 - 2304) x 128 / 256 = 64384 B, aligned up: 63 x
    // 1024 = 64512 (`__tcp_select_window`'s ALIGN); more free space is capped at
    // `rcv_ssthresh` (64240) and aligned up to the same.
    assert_eq!(s.window_for(1448), 64_384);
    assert_eq!((sel(64_384), sel(65_536)), (64_512, 64_512));
    // Below half the allowed space the free space is rounded down to the unit: 20000 -> 19
    // x 1024 = 19456; 5000 -> 4096, not below a sixteenth nor one segment; 4000 -> 3072,
    // below a sixteenth: a zero window. A window below one segment is zero too.
    assert_eq!((sel(20_000), sel(5_000), sel(4_000)), (19_456, 4_096, 0));
    assert_eq!(s.select(5_000, cap, u64::MAX, 0, 4_500), 0);
    // Before any segment was measured the peer's MSS is taken as 536 B
    // (`tcp_initialize_rcv_mss`): 4096 B is still a window.
    assert_eq!(s.select(5_000, cap, u64::MAX, 0, 0), 4_096);
    // The header carries the window shifted right by the scale: a window raised to the
    // connection's right edge (`mptcp_set_rwin`), 100000 B, reads as 97 x 1024 = 99328 B.
    assert_eq!((s.on_wire(64_512), s.on_wire(100_000)), (64_512, 99_328));
    // Exact windows: the free space at most `rcv_ssthresh`, as it is.
    let e = RcvSpace::new(linux_default(), BufferAccounting::Truesize, 1448);
    assert_eq!((e.select(64_384, cap, u64::MAX, 0, 1424), e.on_wire(100_000)), (64_240, 100_000));
}

#[test]
fn without_a_scale_windows_are_whole_segments_unless_the_last_is_within_one() {
    // SO_RCVBUF 32000: 32000 B at ratio 128, scale ilog2(32000) - 15 < 0 -> 0. Handshake:
    // 21 x 1460 = 30660 B. `__tcp_select_window` without a scale keeps the last window while
    // it lies within one segment (1424 B) below the free space (capped at `rcv_ssthresh`),
    // and otherwise offers the free space rounded down to whole segments.
    let s = rounded(BufSize::Fixed(ByteSize(32_000)));
    let cap = s.handshake_window();
    assert_eq!(cap, 30_660);
    // Free 31000, capped at 30660: the last window, 30660, is not below 30660 - 1424.
    assert_eq!(s.select(31_000, cap, u64::MAX, 30_660, 1424), 30_660);
    // Free 29000 < the last window: 20 x 1424 = 28480.
    assert_eq!(s.select(29_000, cap, u64::MAX, 30_660, 1424), 28_480);
    // Last 28480, free 30660: 28480 + 1424 <= 30660, so 21 x 1424 = 29904.
    assert_eq!(s.select(31_000, cap, u64::MAX, 28_480, 1424), 29_904);
    assert_eq!(s.on_wire(29_904), 29_904);
}

/// The segment a subflow just queued takes its skb's truesize whatever its payload: UML 7.3.4
/// (`trace_printk` in `tcp_grow_window` on `rcvbuf-fixed-256kb-ratio20`'s cellular subflow)
/// showed `skb->truesize` 2304 for a 1240-byte segment as for the 1424-byte ones, and the same
/// room (0) above `rcv_ssthresh`, so the short segment did not enter quick-ACK mode. A 512 000 B
/// buffer at ratio 158: (512000 − 2304) · 158 / 256 = 314 578 B for either segment, where
/// charging the payload's share of a truesize (1240 · 2304 / 1424 = 2006 B) left 298 B more
/// buffer, 183 B more window: room above `rcv_ssthresh`, and a quick ACK the kernel did not send.
/// With payload accounting (ratio 256) a segment takes its bytes.
#[test]
fn a_queued_segment_takes_a_whole_skb_whatever_its_payload() {
    let mut s = RcvSpace::new(BufSize::Fixed(ByteSize(256_000)), BufferAccounting::Truesize, 1448);
    s.on_segment(1424);
    assert_eq!(s.ratio, 158);
    let full = s.subflow_window_queued(512_000, 0, 1424, s.ratio);
    assert_eq!(full, (512_000 - 2304) * 158 / 256);
    assert_eq!(s.subflow_window_queued(512_000, 0, 1240, s.ratio), full);
    assert_eq!(s.subflow_window(512_000, 1240, s.ratio) - full, (2304 - 1240 * 2304 / 1424) * 158 / 256);
    let p = RcvSpace::new(BufSize::Fixed(ByteSize(256_000)), BufferAccounting::Payload, 1448);
    assert_eq!(p.subflow_window_queued(512_000, 0, 1240, p.ratio), p.subflow_window(512_000, 1240, p.ratio));
}
