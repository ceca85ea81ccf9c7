use super::*;

/// Linux `tcp_grow_window`, worked by hand: rcv_ssthresh, unset, starts at the first
/// call's window (64 000 B); the buffer then allows 70 000 B, so each 1 424-byte segment
/// raises it by max(2 × 1 448, 2 × 1 424) = 2 896 B and is acknowledged at once: 2 896 × 2
/// = 5 792 < 6 000 of room, the third step stops at the room (70 000). Then nothing grows
/// and delayed ACKs resume.
#[test]
fn a_growing_window_acknowledges_each_segment_at_once() {
    let mut r = SubflowReceiver { quickack: true, ..Default::default() };
    assert!(!r.grow_window(1424, 64_000, 1448));
    assert_eq!(r.rcv_ssthresh, 64_000);
    r.quick = 0;
    for (k, want) in [(1, 66_896), (2, 69_792), (3, 70_000)] {
        assert!(r.grow_window(1424, 70_000, 1448), "segment {k}");
        assert_eq!((r.rcv_ssthresh, r.quick), (want, 1), "segment {k}");
        r.on_ack_sent();
    }
    assert!(!r.grow_window(1424, 70_000, 1448));
    assert_eq!(r.quick, 0);
    // `quick |= 1` is a bit set: 16 owed quick ACKs become 17, 15 stay 15.
    r.quick = 16;
    assert!(r.grow_window(1424, 80_000, 1448));
    assert_eq!(r.quick, 17);
    r.quick = 15;
    assert!(r.grow_window(1424, 80_000, 1448));
    assert_eq!(r.quick, 15);
    // Segments under 128 bytes, and receivers without quick-ACK mode, never grow it.
    assert!(!r.grow_window(100, 90_000, 1448));
    let mut c = SubflowReceiver::default();
    assert!(!c.grow_window(1424, 90_000, 1448));
}

/// Linux `tcp_set_window_clamp` when a socket's ratio rises at its first full-sized
/// segment: rcv_ssthresh becomes at least min(rcv_wnd, new clamp). A second MPTCP subflow
/// offers the connection's window (`mptcp_set_rwin` raised its `rcv_wnd`), so its
/// threshold jumps to the clamp, 62552 -> 79000 B on the measured 6.18.44 host, and
/// `tcp_grow_window` has no room left; a first subflow or TCP socket still offers its
/// handshake window and keeps growing one segment at a time.
#[test]
fn a_rising_ratio_lifts_rcv_ssthresh_to_the_offered_window() {
    let mut join = SubflowReceiver { quickack: true, rcv_ssthresh: 62_552, ..Default::default() };
    join.raise_window_clamp(64_000, 79_000, 300_000);
    assert_eq!(join.rcv_ssthresh, 79_000);
    assert!(!join.grow_window(1424, 79_000, 1448));
    let mut first = SubflowReceiver { quickack: true, rcv_ssthresh: 64_000, ..Default::default() };
    first.raise_window_clamp(64_000, 79_000, 64_000);
    assert_eq!(first.rcv_ssthresh, 64_000);
    assert!(first.grow_window(1424, 79_000, 1448));
    // A falling clamp does not lift it.
    let mut r = SubflowReceiver { rcv_ssthresh: 50_000, ..Default::default() };
    r.raise_window_clamp(79_000, 64_000, 300_000);
    assert_eq!(r.rcv_ssthresh, 50_000);
}

#[test]
fn quick_ack_mode_acks_the_first_16_segments_and_after_out_of_order_data() {
    let seg = |i: u64| Arriving { seq: Seq(i * 1000), len: 1000, dsn: Dsn(i * 1000), full_size: true, psh: false };
    let mut up = Vec::new();
    let mut r = SubflowReceiver { quickack: true, ..Default::default() };
    // TCP_MAX_QUICKACKS = 16: segments 0..16 are each acknowledged at once.
    for i in 0..16 {
        assert_eq!(r.on_segment(seg(i), 2, Time(i), &mut up), AckNeed::Now, "segment {i}");
        r.on_ack_sent();
    }
    // Then every second segment (b = 2), at once unless the endpoint leaves it to a read.
    assert_eq!(r.on_segment(seg(16), 2, Time(16), &mut up), AckNeed::Delayed);
    assert_eq!(r.on_segment(seg(17), 2, Time(17), &mut up), AckNeed::Every);
    r.on_ack_sent();
    // A hole (segment 18 lost): out-of-order data re-enters quick-ACK mode, so the
    // in-order segments after the repair are acknowledged one by one again.
    assert_eq!(r.on_segment(seg(19), 2, Time(19), &mut up), AckNeed::Now);
    r.on_ack_sent();
    assert_eq!(r.on_segment(seg(18), 2, Time(20), &mut up), AckNeed::Now);
    r.on_ack_sent();
    assert_eq!(r.on_segment(seg(20), 2, Time(21), &mut up), AckNeed::Now);
    // Off (the classic model): the first segment already waits for a second one.
    let mut c = SubflowReceiver::default();
    assert_eq!(c.on_segment(seg(0), 2, Time(0), &mut up), AckNeed::Delayed);
}

#[test]
fn out_of_order_acks_are_compressed_after_three_as_linux_since_4_18() {
    // `__tcp_ack_snd_check`: segment 1 lost, 2..=50 arrive out of order. The first three
    // (TCP_FASTRETRANS_THRESH) for rcv_nxt 1000 are acknowledged at once, the next ones
    // counted into one compressed ACK; no quick-ACK mode is entered.
    let seg = |i: u64| Arriving { seq: Seq(i * 1000), len: 1000, dsn: Dsn(i * 1000), full_size: true, psh: false };
    let mut up = Vec::new();
    let mut r = SubflowReceiver::default();
    (r.quickack, r.compressed) = (true, Some(SackCompression::default()));
    r.on_segment(seg(0), 2, Time(0), &mut up);
    r.quick = 0; // past the connection's first 16 quick ACKs
    r.on_ack_sent();
    for i in 2..5 {
        assert_eq!(r.on_segment(seg(i), 2, Time(i), &mut up), AckNeed::Now, "segment {i}");
        r.on_ack_sent();
    }
    assert_eq!(r.on_segment(seg(5), 2, Time(5), &mut up), AckNeed::Compressed);
    assert_eq!(r.on_segment(seg(6), 2, Time(6), &mut up), AckNeed::Compressed);
    assert_eq!(r.quick, 0);
    assert_eq!(r.compressed.map(|c| c.pending), Some(2));
    // The timer's ACK carries both; tcp_comp_sack_nr = 44 more are counted, the 45th
    // goes at once.
    r.on_ack_sent();
    for i in 7..51 {
        assert_eq!(r.on_segment(seg(i), 2, Time(i), &mut up), AckNeed::Compressed, "segment {i}");
    }
    assert_eq!(r.on_segment(seg(51), 2, Time(51), &mut up), AckNeed::Now);
    r.on_ack_sent();
    // The hole filled: in order again (filling acknowledges at once); a new hole starts a
    // new count of three immediate ones.
    assert_eq!(r.on_segment(seg(1), 2, Time(52), &mut up), AckNeed::Now);
    r.on_ack_sent();
    assert_eq!(r.rcv_nxt, Seq(52_000));
    assert_eq!(r.on_segment(seg(53), 2, Time(53), &mut up), AckNeed::Now);
}

#[test]
fn a_short_segment_or_a_full_one_with_psh_waits_for_the_delayed_ack_and_is_marked_pushed() {
    // Linux `tcp_measure_rcv_mss`: a segment shorter than the peer's MSS sets
    // ICSK_ACK_PUSHED; alone (rcv_nxt - rcv_wup <= rcv_mss) it is acknowledged by the
    // delayed-ACK timer or by a read (`tcp_cleanup_rbuf`). The ACK clears the mark.
    let mut up = Vec::new();
    let mut r = SubflowReceiver::default();
    let short = Arriving { seq: Seq(0), len: 124, dsn: Dsn(0), full_size: false, psh: false };
    assert_eq!(r.on_segment(short, 2, Time(0), &mut up), AckNeed::Delayed);
    assert!(r.pushed);
    r.on_ack_sent();
    assert!(!r.pushed);
    let full = Arriving { seq: Seq(124), len: 1000, dsn: Dsn(124), full_size: true, psh: false };
    assert_eq!(r.on_segment(full, 2, Time(1), &mut up), AckNeed::Delayed);
    assert!(!r.pushed);
    // The peer's segment size is what arrives (1000 B here), whatever this end's own is.
    assert_eq!(r.rcv_mss, 1000);
    // A full-sized segment with PSH ("likely the end of an application write", Linux 6.18
    // `tcp_measure_rcv_mss`) is marked too, so a read that empties the queue acknowledges it.
    r.on_ack_sent();
    let pushed = Arriving { seq: Seq(1124), len: 1000, dsn: Dsn(1124), full_size: true, psh: true };
    assert_eq!(r.on_segment(pushed, 2, Time(2), &mut up), AckNeed::Delayed);
    assert!(r.pushed);
}

#[test]
fn quick_ack_mode_grants_as_many_acks_as_the_last_window_holds_segment_pairs() {
    // Linux `tcp_incr_quickack`: rcv_wnd / (2 * rcv_mss) quick ACKs, 2 where that is 0, at
    // most 16, the segment's own size measured first (`tcp_measure_rcv_mss`). A 64 KiB
    // buffer's first window, 32768 B, and 1424-byte MPTCP segments: 32768 / 2848 = 11
    // immediate ACKs (a 6.18 kernel in virtual time acknowledges the first 11 segments
    // one by one, then every second one). A 2000-byte window: 0 pairs, 2 quick ACKs.
    let seg = |i: u64| Arriving { seq: Seq(i * 1424), len: 1424, dsn: Dsn(i * 1424), full_size: true, psh: false };
    for (wnd, grant) in [(32_768, 11), (2_000, 2), (1_000_000, 16), (0, 16)] {
        let mut r = SubflowReceiver { quickack: true, rcv_wnd: wnd, rcv_mss: 536, ..Default::default() };
        let mut up = Vec::new();
        for i in 0..grant {
            assert_eq!(r.on_segment(seg(i), 2, Time(i), &mut up), AckNeed::Now, "window {wnd}, segment {i}");
            r.on_ack_sent();
        }
        assert_eq!(r.on_segment(seg(grant), 2, Time(grant), &mut up), AckNeed::Delayed, "window {wnd}");
    }
}

#[test]
fn in_order_segments_are_acked_every_second_one() {
    let mut r = SubflowReceiver::default();
    let mut up = Vec::new();
    assert_eq!(
        r.on_segment(Arriving { seq: Seq(0), len: 100, dsn: Dsn(0), full_size: true, psh: false }, 2, Time(1), &mut up),
        AckNeed::Delayed
    );
    assert_eq!(
        r.on_segment(
            Arriving { seq: Seq(100), len: 100, dsn: Dsn(100), full_size: true, psh: false },
            2,
            Time(2),
            &mut up
        ),
        AckNeed::Every
    );
    assert_eq!(up.len(), 2);
    assert_eq!(r.rcv_nxt, Seq(200));
}

#[test]
fn holes_are_sacked_then_filled_in_order() {
    let mut r = SubflowReceiver::default();
    let mut up = Vec::new();
    r.on_segment(Arriving { seq: Seq(0), len: 100, dsn: Dsn(1000), full_size: true, psh: false }, 2, Time(1), &mut up);
    assert_eq!(
        r.on_segment(
            Arriving { seq: Seq(200), len: 100, dsn: Dsn(1200), full_size: true, psh: false },
            2,
            Time(2),
            &mut up
        ),
        AckNeed::Now
    );
    r.on_segment(
        Arriving { seq: Seq(400), len: 100, dsn: Dsn(1400), full_size: true, psh: false },
        2,
        Time(3),
        &mut up,
    );
    r.on_segment(
        Arriving { seq: Seq(300), len: 100, dsn: Dsn(1300), full_size: true, psh: false },
        2,
        Time(4),
        &mut up,
    );
    let blocks: Vec<_> = r.sack_blocks(4).collect();
    assert_eq!(blocks, vec![(Seq(200), Seq(500))]);
    assert_eq!(r.ooo_bytes(), 300);
    up.clear();
    assert_eq!(
        r.on_segment(
            Arriving { seq: Seq(100), len: 100, dsn: Dsn(1100), full_size: true, psh: false },
            2,
            Time(5),
            &mut up
        ),
        AckNeed::Now
    );
    assert_eq!(r.rcv_nxt, Seq(500));
    assert_eq!(up.iter().map(|c| c.dsn.0).collect::<Vec<_>>(), vec![1100, 1200, 1300, 1400]);
    assert_eq!(up[1].arrival, Time(2));
    assert_eq!(r.sack_blocks(4).count(), 0);
    assert_eq!(r.ooo_bytes(), 0);
}

#[test]
fn duplicates_ask_for_an_immediate_ack_and_deliver_nothing() {
    let mut r = SubflowReceiver::default();
    let mut up = Vec::new();
    r.on_segment(Arriving { seq: Seq(0), len: 100, dsn: Dsn(0), full_size: true, psh: false }, 2, Time(1), &mut up);
    up.clear();
    assert_eq!(
        r.on_segment(Arriving { seq: Seq(0), len: 100, dsn: Dsn(0), full_size: true, psh: false }, 2, Time(2), &mut up),
        AckNeed::Now
    );
    assert!(up.is_empty());
}

/// The delayed ACK's count (b = 2). Linux `__tcp_ack_snd_check` acknowledges at once when more
/// than one segment's worth of bytes arrived since the last ACK (`rcv_nxt - rcv_wup >
/// rcv_mss`); a 6.18 and a 7.3 receiver acknowledge a 172-byte segment that follows a full
/// 1424-byte one at once (the window's tail, or the end of a 32 KB data fragment). Counting full
/// segments (RFC 1122's "every second full-sized segment", the classic model) it waits.
/// Segments of 1424 B, the peer's size (`rcv_mss`):
/// - full, then 172 B: 1596 > 1424, at once with bytes; 1 full segment, delayed with segments;
/// - 700 B, then 700 B: 1400, not more than 1424, delayed either way; a third 700 B makes
///   2100 > 1424, at once with bytes, still delayed with segments (no full one);
/// - full, full: at once either way.
#[test]
fn bytes_count_a_short_segment_after_a_full_one_as_linux_does() {
    let mut up = Vec::new();
    let mut at = 0;
    let mut seg = |len: u64| {
        let s = Arriving { seq: Seq(at), len, dsn: Dsn(at), full_size: len >= 1424, psh: false };
        at += len;
        s
    };
    let mut bytes = SubflowReceiver { count_bytes: true, rcv_mss: 1424, ..Default::default() };
    let mut segments = SubflowReceiver { rcv_mss: 1424, ..Default::default() };
    let cases: [(&[u64], AckNeed, AckNeed); 4] = [
        (&[1424, 172], AckNeed::Every, AckNeed::Delayed),
        (&[700, 700], AckNeed::Delayed, AckNeed::Delayed),
        (&[700, 700, 700], AckNeed::Every, AckNeed::Delayed),
        (&[1424, 1424], AckNeed::Every, AckNeed::Every),
    ];
    for (lens, with_bytes, with_segments) in cases {
        for r in [&mut bytes, &mut segments] {
            r.on_ack_sent();
        }
        let (mut b_last, mut s_last) = (AckNeed::Now, AckNeed::Now);
        for &len in lens {
            let s = seg(len);
            b_last = bytes.on_segment(s, 2, Time::ZERO, &mut up);
            s_last = segments.on_segment(Arriving { seq: Seq(s.seq.0), ..s }, 2, Time::ZERO, &mut up);
        }
        assert_eq!((b_last, s_last), (with_bytes, with_segments), "{lens:?}");
    }
}

/// `__tcp_ack_snd_check` sends at once in quick-ACK mode before SACK compression counts its
/// three duplicates: with one quick ACK left, a segment beyond a hole is acknowledged
/// without being counted, and three more are acknowledged at once before the fifth waits.
#[test]
fn quick_ack_mode_goes_before_the_counted_duplicates() {
    let seg = |i: u64| Arriving { seq: Seq(i * 1000), len: 1000, dsn: Dsn(i * 1000), full_size: true, psh: false };
    let mut up = Vec::new();
    let mut r = SubflowReceiver::default();
    (r.quickack, r.compressed) = (true, Some(SackCompression::default()));
    r.on_segment(seg(0), 2, Time(0), &mut up);
    r.quick = 1;
    r.on_ack_sent();
    r.quick = 1;
    for i in 2..6 {
        assert_eq!(r.on_segment(seg(i), 2, Time(i), &mut up), AckNeed::Now, "segment {i}");
        r.on_ack_sent();
    }
    assert_eq!(r.on_segment(seg(6), 2, Time(6), &mut up), AckNeed::Compressed);
}
