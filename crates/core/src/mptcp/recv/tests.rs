use super::*;
use crate::mptcp::testkit::{ms, Harness};

/// The windows of the pure ACKs among `out`, by subflow.
fn acks(out: &[Packet]) -> Vec<(usize, u64)> {
    out.iter().filter(|p| p.payload == 0).map(|p| (p.subflow as usize, p.wnd)).collect()
}

#[test]
fn a_subflows_window_moves_with_a_data_ack_jump_as_tcp_select_window_keeps_it() {
    // A 40 000-byte buffer counted in payload bytes (no `rcv_ssthresh` cap), two subflows,
    // full segments of s bytes, the application reading at once. Subflow 0 brings data
    // sequence [0, s): the read's window update (nothing advertised before, on both
    // subflows) offers R, at subflow 0's sequence s. It brings [s, 2s) (an ACK owed);
    // subflow 1 brings [3s, 7s) beyond the hole [2s, 3s) and [8s, 11s) beyond a second one,
    // [7s, 8s). Subflow 0's [2s, 3s) fills the first hole, the second segment since its
    // last ACK, and 5s bytes become readable: the ACK leaves after the read
    // (`__tcp_ack_snd_check`'s window test fails with them unread), DATA_ACK 7s, with 3s
    // bytes still held beyond the second hole.
    //
    // The connection's right edge only: the free space, R - 3s (the edge offered before,
    // s + R, lies behind 7s + R - 3s).
    // Per subflow (`tcp_select_window`): subflow 0 still offers what is left of its last
    // window in its own sequence space, R - (3s - s), more than the free space: the window
    // is R - 2s, and the connection's right edge moves with the DATA_ACK's jump.
    let r = 40_000;
    for (edge, expect) in [("connection", 3), ("per_subflow", 2)] {
        let conn = format!("rcvbuf = {r}\nwindow_update = \"all_subflows\"\nright_edge = \"{edge}\"");
        let mut h = Harness::receiver(&conn, 2);
        let s = h.smss;
        assert_eq!(acks(&h.deliver(ms(1), 0, 0, 0)), vec![(0, r), (1, r)]);
        assert!(acks(&h.deliver(ms(2), 0, s, s)).is_empty());
        for (k, d) in [3, 4, 5, 6, 8, 9, 10].into_iter().enumerate() {
            h.deliver(ms(3 + k as u64), 1, k as u64 * s, d * s);
        }
        let sent: Vec<_> = acks(&h.deliver(ms(20), 0, 2 * s, 2 * s)).into_iter().filter(|a| a.0 == 0).collect();
        assert_eq!(sent, vec![(0, r - expect * s)], "{edge}");
    }
}

#[test]
fn the_window_scale_bounds_the_header_not_the_right_edge_the_receiver_keeps() {
    // Linux `tcp_select_window` keeps the window it computed in `tp->rcv_wnd` and writes at
    // most `65535 << rcv_wscale` into the header; `mptcp_set_rwin` records the right edge
    // `ack_seq + tp->rcv_wnd` (`msk->rcv_wnd_sent`). A fixed 256000-byte buffer: `sk_rcvbuf`
    // = 2 x 256000 = 512000; the scale, chosen at the SYN at the default ratio, is
    // ilog2(512000 x 128 / 256 = 256000) - 15 = 2, so the header carries at most H = 65535
    // << 2 = 262140 B. Segments of 1424 B set the ratio 1424 x 256 / 2304 = 158 (here at
    // the first segment, `scaling_ratio = "segment"`), and the empty buffer's window is
    // W = 512000 x 158 / 256 = 316000 B (the largest `tp->rcv_wnd` 6.18.44 reports there).
    let conn = "stack = \"linux\"\nrcvbuf = \"256000B\"\nscaling_ratio = \"segment\"";
    let mut h = Harness::receiver(conn, 2);
    h.smss = 1424;
    let s = h.smss;
    let (rcvbuf, ratio): (u64, u64) = (2 * 256_000, (1424 << 8) / 2304);
    let w = (rcvbuf * ratio) >> 8;
    let hdr = 65_535 << 2;
    assert_eq!((ratio, w, h.ep.rcv.space.max_window), (158, 316_000, hdr));
    // In order on subflow 0 until its `rcv_ssthresh` has grown to W, an odd number of
    // segments so that the last one is acknowledged. Each second segment's ACK is computed
    // with that segment charged, unread (`__tcp_ack_snd_check` runs before the application's
    // read; the segment before it was read already): (512000 - 2304) x 158 / 256 = 314578
    // B, aligned up to the scale's unit, 4 B (`__tcp_select_window`): K = 314580 B. The
    // receiver keeps the edge K beyond the DATA_ACK, the header says H.
    let n = 59;
    let mut last = Vec::new();
    for k in 0..n {
        last = h.deliver(ms(1 + k), 0, k * s, k * s);
    }
    let a = n * s;
    let kept = (((rcvbuf - 2304) * ratio) >> 8).next_multiple_of(4);
    assert_eq!(h.ep.rcv.rcv_nxt, Dsn(a));
    assert_eq!(h.ep.rcv.advertised_window(), kept);
    assert_eq!(acks(&last).last(), Some(&(0, hdr)));
    // A hole [a, a + 2s); subflow 0 brings m segments beyond it, held. Subflow 1 fills
    // [a, a + s): the DATA_ACK moves by s with m·s still held, whose charge leaves a
    // free-space window F = (512000 - m x 2304) x 158 / 256 below what the edge kept
    // leaves, K - s; the header carries min(K - s, H) = H: the edge the sender knows moves
    // with the DATA_ACK. (Bounded at H, the edge kept would be a + H and the header's
    // window H - s.)
    let m = 60;
    for k in 0..m {
        h.deliver(ms(100 + k), 0, (n + k) * s, a + (2 + k) * s);
    }
    let f = ((rcvbuf - m * 2304) * ratio) >> 8;
    assert!(f < hdr - s && hdr < kept - s, "F = {f}");
    let sent = acks(&h.deliver(ms(200), 1, 0, a));
    assert_eq!(h.ep.rcv.rcv_nxt, Dsn(a + s));
    assert_eq!(sent.iter().rfind(|x| x.0 == 1), Some(&(1, hdr)));
    assert_eq!(h.ep.rcv.advertised_window(), kept - s);
}

#[test]
fn compressed_out_of_order_acks_leave_together_when_the_timer_fires() {
    // `tcp.ooo_ack = "compressed"` (Linux `__tcp_ack_snd_check`, `tcp_compressed_ack_kick`):
    // segment 1 lost, 2..=6 arrive 1 ms apart. 2, 3 and 4 are acknowledged at once; 5
    // arms the timer (no RTT estimate yet: the 1 ms cap, plus 100 µs of slack) and 6 is
    // counted too; one ACK leaves at 5 ms + 1.1 ms, none before.
    let mut h = Harness::receiver("tcp = { ooo_ack = \"compressed\" }", 1);
    let s = h.smss;
    h.deliver(ms(1), 0, 0, 0);
    for k in 2..5 {
        assert_eq!(acks(&h.deliver(ms(k), 0, k * s, k * s)).len(), 1, "segment {k}");
    }
    assert!(acks(&h.deliver(ms(5), 0, 5 * s, 5 * s)).is_empty());
    assert!(acks(&h.deliver(ms(6), 0, 6 * s, 6 * s)).is_empty());
    let at = ms(5) + Dur::from_us(1100);
    assert_eq!(h.ep.subflows[0].as_ref().expect("subflow").timers.comp_sack.deadline(), Some(at));
    let mut out = Vec::new();
    h.ep.on_timeout(Time(at.0 - 1), &mut out);
    assert!(acks(&out).is_empty());
    h.ep.on_timeout(at, &mut out);
    assert_eq!(acks(&out).len(), 1);
    assert_eq!(out[0].sack.n, 1, "the ACK carries the SACK block of 2..=6");
}

#[test]
fn grow_window_counts_the_arriving_segment_in_the_subflows_buffer() {
    // Linux `tcp_rcv_established` → `tcp_queue_rcv` charges the segment to the subflow
    // before `tcp_event_data_recv` → `tcp_grow_window`, whose room is min(window_clamp,
    // tcp_space(ssk)) - rcv_ssthresh: with a locked 64 KiB triple, a 2304-byte truesize and
    // ratio 1424 * 256 / 2304 = 158, rcv_ssthresh stops at (65536 - 2304) * 158 / 256 =
    // 39026 B (what a 6.18 subflow reports), below the window the empty buffer allows
    // (40448 B).
    let conn = "stack = \"linux\"\nrcvbuf = { min = \"65536B\", default = \"65536B\", max = \"65536B\" }";
    let mut h = Harness::receiver(conn, 1);
    // The server's segments: 1500 - 40 - 12 - 24 (its DSS with a 32-bit DATA_ACK).
    h.smss = 1424;
    let s = h.smss;
    for k in 0..64 {
        h.deliver(ms(1 + k), 0, k * s, k * s);
    }
    let sf = h.ep.subflows[0].as_ref().expect("subflow");
    assert_eq!(sf.rcv.rcv_ssthresh, 39_026);
    assert_eq!(h.ep.rcv.space.subflow_window(sf.rcv.rcvbuf, 0, sf_ratio(&sf.rcv)), 40_448);
}

#[test]
fn the_connections_ratio_is_the_subflows_smallest_from_the_first_read_after_each_has_data() {
    // Linux 6.18 `mptcp_rcv_space_adjust`: at a read, `msk->scaling_ratio` = min over the
    // subflows of `tp->scaling_ratio`, which `tcp_measure_rcv_mss` sets at a socket's first
    // full-sized segment (1424 * 256 / 2304 = 158) and is `TCP_DEFAULT_SCALING_RATIO` (128)
    // before. No receiver RTT estimate (the harness's segments echo no timestamp): the gate
    // (`rcvq_space.rtt_us` 0) lets every read refresh. A locked 64 KiB triple, nothing
    // held after a read: the connection offers 65536 * ratio / 256, 32768 B at 128, 40448
    // B at 158. With `scaling_ratio = "segment"` the first segment sets 158 at once.
    let buf = "rcvbuf = { min = \"65536B\", default = \"65536B\", max = \"65536B\" }";
    for (rule, after_first, after_both) in [("subflow_min", 128, 158), ("segment", 158, 158)] {
        let conn = format!("stack = \"linux\"\n{buf}\nscaling_ratio = \"{rule}\"");
        let mut h = Harness::receiver(&conn, 2);
        h.smss = 1424;
        let s = h.smss;
        for k in 0..4 {
            h.deliver(ms(1 + k), 0, k * s, k * s);
        }
        assert_eq!(h.ep.rcv.space.ratio, after_first, "{rule}: subflow 1 has no data yet");
        assert_eq!(h.ep.rcv.space.window_for(0), (65_536 * after_first) >> 8, "{rule}");
        h.deliver(ms(10), 1, 0, 4 * s);
        assert_eq!(h.ep.rcv.space.ratio, after_both, "{rule}: both subflows measured");
        assert_eq!(h.ep.rcv.space.window_for(0), 40_448, "{rule}");
    }
}

#[test]
fn the_first_read_takes_the_ratio_before_the_join_it_triggers_exists() {
    // The first DSS makes the client's connection fully established: its path manager opens
    // the join from the MPTCP worker (`mptcp_pm_nl_work` → `__mptcp_subflow_connect`), which
    // runs after the reader the same segment woke. That read's `mptcp_rcv_space_adjust` (no
    // stored RTT: it refreshes) takes the smallest ratio over the subflows there are, the
    // initial one's 158 (1424 × 256 / 2304); the joining subflow, at its default 128, joins
    // the minimum only at a later refresh. Measured on the host (6.18.44, `download-2mb`,
    // seed 1): the client's window grows from 64 512 B at the third segment, to 79 872 B =
    // 131 072 × 156 / 256, while the join's SYN is out; it falls to 65 536 B = 131 072 ×
    // 128 / 256 one receiver RTT later.
    let mut h = Harness::client_before_joins("stack = \"linux\"", 2);
    h.smss = 1424;
    let out = h.deliver(ms(1), 0, 0, 0);
    assert!(out.iter().any(|p| p.subflow == 1 && p.is(crate::net::packet::flags::SYN)), "the join opened");
    assert_eq!(h.ep.rcv.space.ratio, 158);
}

#[test]
fn a_second_segments_ack_waits_for_the_read_unless_nothing_is_readable() {
    // Linux 6.18, out of quick-ACK mode, the ACK owed after two full segments:
    // - in-order data the application can read: `__tcp_ack_snd_check` sends it at once
    //   only if the window it would offer now (the free space, the unread segment still
    //   charged) is no smaller than the last one offered; here the last offer was the
    //   whole buffer's window (W = 65536 * 128 / 256 = 32768 B), so the ACK leaves after
    //   the read (`mptcp_cleanup_rbuf`), offering W again, not W - one segment's charge;
    // - data behind a connection-level hole: `subflow_data_ready` finds nothing to read
    //   (`mptcp_data_avail` < `sk_rcvlowat` = 1) and asks for the ACK at once
    //   (`ICSK_ACK_NOW`);
    // - the classic model (`window_update = "receiving_subflow"`) sends it at once.
    // (The harness's segments are full-sized for this end: its own MSS.)
    let buf = "rcvbuf = { min = \"65536B\", default = \"65536B\", max = \"65536B\" }";
    // 20 segments first (quick-ACK mode and the window's growth over), read at once, and
    // an ACK for them; then the last offer is set to the whole window.
    const WARM: u64 = 20;
    let setup = |update: &str| {
        let conn = format!("stack = \"linux\"\n{buf}\nwindow_update = \"{update}\"");
        let mut h = Harness::receiver(&conn, 2);
        let s = h.smss;
        for k in 0..WARM {
            h.deliver(ms(1 + k), 0, k * s, k * s);
        }
        assert_eq!(h.ep.subflows[0].as_ref().expect("subflow").rcv.quick, 0);
        // Nothing owed: an ACK for whatever the warm-up left unacknowledged.
        h.ep.send_ack(ms(WARM + 1), 0, &mut Vec::new());
        let full = h.ep.rcv.space.window_for(0);
        h.ep.adv[0].0 = full;
        (h, full)
    };
    let (mut h, full) = setup("all_subflows");
    let s = h.smss;
    let w = WARM * s;
    assert!(acks(&h.deliver(ms(30), 0, w, w)).is_empty());
    assert_eq!(acks(&h.deliver(ms(31), 0, w + s, w + s)), vec![(0, full)], "after the read, the whole window");
    assert!(h.ep.rcv.space.window_for(s) < full);
    // Behind a hole at [w, w + s): nothing to read, so no read would send it; it leaves at
    // once (its window is the right edge kept, the free space being smaller).
    let (mut h, _) = setup("all_subflows");
    assert!(acks(&h.deliver(ms(30), 0, w, w + s)).is_empty());
    assert_eq!(acks(&h.deliver(ms(31), 0, w + s, w + 2 * s)).len(), 1);
    assert_eq!(h.ep.rcv.delivered, w, "nothing was read");
    // The classic model reads before it acknowledges: the whole window, at once.
    let (mut h, full) = setup("receiving_subflow");
    assert!(acks(&h.deliver(ms(30), 0, w, w)).is_empty());
    assert_eq!(acks(&h.deliver(ms(31), 0, w + s, w + s)), vec![(0, full)]);
}

#[test]
fn window_updates_follow_mptcp_cleanup_rbuf_and_tcp_cleanup_rbuf() {
    // A 3G hole filled: the ACK on 3G advertised 56 KB (most of the buffer still
    // unread), the application read, and 300 KB are free now: 300 >= 2 * 56.
    assert!(space_doubled(300_000, 56_000));
    assert!(!space_doubled(100_000, 56_000));
    assert!(!space_doubled(0, 0));
    // WiFi last advertised 60 KB and received 40 KB since: it still offers 20 KB;
    // clamp 320 KB: 40 <= 320 and 300 >= 40 -> update.
    assert!(subflow_window_update(300_000, 320_000, 60_000, 40_000));
    // A subflow still offering 200 KB: 400 > 320 (more than half the clamp) -> none.
    assert!(!subflow_window_update(300_000, 320_000, 200_000, 0));
    // Offering 160 KB with 300 KB free: 300 < 320 -> none.
    assert!(!subflow_window_update(300_000, 640_000, 160_000, 0));
}

#[test]
fn a_read_that_empties_the_queue_sends_a_pending_ack_for_a_short_segment() {
    // The fast subflow's last segment was the window's 124-byte tail, its ACK delayed
    // (`ICSK_ACK_PUSHED`); it still offers 262 140 B, so the window-update test fails
    // (2 x 262 140 > clamp 262 140).
    let fast = PendingAck {
        scheduled: true,
        arrived: 124,
        rcv_mss: 1424,
        pushed: true,
        subflow_empty: true,
        adv_wnd: 262_140,
    };
    // The slow path's segment filled the hole and the application read everything:
    // `rx_empty`, so `mptcp_subflow_could_cleanup` holds and `tcp_cleanup_rbuf` sends the
    // pending ACK, whether or not the space doubled.
    assert!(cleanup_acks(false, true, &fast, 262_140, 262_140));
    assert!(cleanup_acks(true, true, &fast, 262_140, 262_140));
    // Data still held out of order at the connection level: not empty, no doubling -> none.
    assert!(!cleanup_acks(false, false, &fast, 100_000, 262_140));
    // With doubling, `tcp_cleanup_rbuf` runs and its PUSHED test needs only the subflow's
    // own queues empty.
    assert!(cleanup_acks(true, false, &fast, 262_140, 262_140));
    // No ACK pending: only the window-update test, which fails here.
    let idle = PendingAck { scheduled: false, pushed: false, ..fast };
    assert!(!cleanup_acks(true, true, &idle, 262_140, 262_140));
    // More than one segment unacknowledged with an ACK pending: sent on any read
    // (`rcv_nxt - rcv_wup > rcv_mss`).
    let two = PendingAck { arrived: 1424 + 124, pushed: false, ..fast };
    assert!(cleanup_acks(false, false, &two, 0, 262_140));
}

#[test]
fn drs_takes_the_delivering_subflows_rtt_or_the_largest_of_all_subflows() {
    let ms = |x: u64| Some(Dur::from_ms(x));
    // WiFi (20 ms) delivered; 3G (200 ms) has an estimate too; a third subflow none yet.
    let all = [ms(20), ms(200), None];
    assert_eq!(drs_rtt(DrsRtt::Largest, ms(20), all.into_iter()), Some((Dur::from_ms(200), DrsRtt::Largest)));
    assert_eq!(drs_rtt(DrsRtt::Smallest, ms(20), all.into_iter()), Some((Dur::from_ms(20), DrsRtt::Smallest)));
    // No estimate anywhere: no interval can close.
    assert_eq!(drs_rtt(DrsRtt::Largest, None, [None, None].into_iter()), None);
}

#[test]
fn linux_offers_the_handshake_window_rounded_to_the_mss_and_later_ones_to_the_scale() {
    // `stack = "linux"`: `tcp_rmem[1]` = 131072 B, 65536 B of window at the default ratio
    // (128); the scale is ilog2(32 MiB) - 15 = 10, a unit of 1024 B. The client (the active
    // opener, `advmss` 1460 = 1448 + the 12-byte timestamp option) offers 65536 rounded down
    // to 1460 in its SYN: 44 x 1460 = 64240 B (`tcp_select_initial_window`), its
    // `rcv_ssthresh` too. Its first ACK of a 1424-byte segment, unread then, offers the free
    // space (131072 - 2304) x 128 / 256 = 64384 B aligned up to the unit: 63 x 1024 = 64512 B,
    // the window the 6.18.44 host's first ACKs carried on `download-2mb`.
    let mut h = Harness::receiver("stack = \"linux\"", 1);
    let syn = h.ep.packet(ms(0), 0, crate::net::packet::flags::SYN, crate::net::packet::MpOption::CapableSyn);
    assert_eq!(syn.wnd, 64_240);
    assert_eq!(acks(&h.deliver(ms(1), 0, 0, 0)).first(), Some(&(0, 64_512)));
}
