//! The scoreboard's counters, RFC 6675 loss marking and RACK's marking through it.

use super::*;

fn board(n: u64) -> Scoreboard {
    let mut b = Scoreboard::default();
    for i in 0..n {
        b.push(SentSeg { seq: Seq(i * 100), len: 100, flags: SegFlags::NONE, dsn: Dsn(i * 100), sent_at: Time(i) });
    }
    b
}

#[test]
fn three_sacked_segments_above_a_hole_mark_it_lost() {
    let mut b = board(10);
    // Segment 0 lost; 1 and 2 SACKed: not yet lost (only 2 above).
    b.sack(&[(Seq(100), Seq(300))], Seq(0), Time(100));
    assert!(!b.mark_lost(3));
    assert_eq!(b.in_flight(), 800);
    b.sack(&[(Seq(100), Seq(400))], Seq(0), Time(100));
    assert!(b.mark_lost(3));
    assert_eq!(b.lost_bytes(), 100);
    assert_eq!(b.in_flight(), 1000 - 300 - 100);
    assert_eq!(b.next_retransmit(), Some(0));
    b.mark_retransmitted(0, Time(200));
    assert_eq!(b.in_flight(), 700);
    assert_eq!(b.next_retransmit(), None);
    b.check().unwrap();
}

#[test]
fn several_holes_are_all_marked_and_repaired_in_order() {
    let mut b = board(10);
    // Holes at 0, 2, 4; everything else SACKed.
    b.sack(&[(Seq(500), Seq(1000)), (Seq(300), Seq(400)), (Seq(100), Seq(200))], Seq(0), Time(50));
    b.mark_lost(3);
    let mut order = Vec::new();
    while let Some(p) = b.next_retransmit() {
        order.push(b.mark_retransmitted(p, Time(60)).seq.0);
    }
    assert_eq!(order, vec![0, 200, 400]);
    let a = b.ack(Seq(1000), Time(70));
    assert_eq!(a.bytes, 1000);
    assert!(a.had_retrans && a.rtt.is_none());
    assert!(b.is_empty());
    assert_eq!(b.in_flight(), 0);
    b.check().unwrap();
}

#[test]
fn repeated_sack_blocks_are_not_reprocessed() {
    let mut b = board(10);
    let n1 = b.sack(&[(Seq(100), Seq(500))], Seq(0), Time(10)).bytes;
    let n2 = b.sack(&[(Seq(100), Seq(600))], Seq(0), Time(11)).bytes;
    assert_eq!((n1, n2), (400, 100));
    b.check().unwrap();
}

#[test]
fn blocks_in_any_order_sack_exactly_the_segments_they_cover() {
    // Growing blocks (the hint is right), a block below the last one and one across two
    // ranges (the hint is wrong), a cumulative ACK past the hint, and unaligned edges.
    let mut b = board(20);
    let mut total = 0;
    for (s, e, want) in [(500, 600, 100), (500, 700, 100), (500, 750, 0), (200, 300, 100), (150, 900, 300)] {
        let n = b.sack(&[(Seq(s), Seq(e))], Seq(0), Time(30)).bytes;
        assert_eq!(n, want, "block [{s}, {e})");
        total += n;
        b.check().unwrap();
    }
    assert_eq!(b.sacked_bytes(), total);
    b.ack(Seq(1000), Time(40));
    let n = b.sack(&[(Seq(1200), Seq(1400))], Seq(1000), Time(41)).bytes;
    assert_eq!(n, 200);
    let n = b.sack(&[(Seq(1100), Seq(1500))], Seq(1000), Time(42)).bytes;
    assert_eq!(n, 200);
    assert_eq!(b.sacked_bytes(), 400);
    b.check().unwrap();
}

#[test]
fn rto_marks_everything_unsacked_lost() {
    let mut b = board(5);
    b.sack(&[(Seq(300), Seq(400))], Seq(0), Time(10));
    b.enter_loss();
    assert_eq!(b.lost_bytes(), 400);
    assert_eq!(b.in_flight(), 0);
    let mut order = Vec::new();
    while let Some(p) = b.next_retransmit() {
        order.push(b.mark_retransmitted(p, Time(20)).seq.0);
    }
    assert_eq!(order, vec![0, 100, 200, 400]);
    b.check().unwrap();
}

/// RACK (`tcp::rack`) marking segments through the scoreboard.
mod rack {
    use super::*;

    const MS: u64 = 1_000_000;

    /// Ten segments sent 1 ms apart from t = 0, RACK on, min RTT 100 ms.
    fn board() -> Scoreboard {
        let mut b = Scoreboard::default();
        b.rack.enabled = true;
        for i in 0..10 {
            let t = Time(i * MS);
            let abs =
                b.push(SentSeg { seq: Seq(i * 100), len: 100, flags: SegFlags::NONE, dsn: Dsn(i * 100), sent_at: t });
            b.rack.on_sent(t, abs);
        }
        b
    }

    fn sack(b: &mut Scoreboard, s: u64, e: u64, now: Time) {
        b.rack.begin_ack(Some(Dur(100 * MS)));
        b.sack(&[(Seq(s), Seq(e))], Seq(0), now);
    }

    #[test]
    fn a_hole_is_lost_one_reordering_window_after_the_later_segment_was_delivered() {
        let mut b = board();
        // Segment 1 (sent at 1 ms) is SACKed at 101 ms; segment 0 (sent at 0) is outstanding.
        sack(&mut b, 100, 200, Time(101 * MS));
        assert!(b.rack.take_advanced());
        assert_eq!(b.rack.rtt, Dur(100 * MS));
        let reo = b.rack.reo_wnd(false, b.sacked_segs(), 3, Some(Dur(100 * MS)));
        assert_eq!(reo, Dur(25 * MS), "min_RTT / 4 with one segment SACKed");
        let d = b.rack_detect_loss(Time(101 * MS), |_, _| reo);
        // Deadline: 0 + 100 ms + 25 ms.
        assert_eq!(d, Detected { marked: 0, timeout: Some(Time(125 * MS)) });
        let d = b.rack_detect_loss(Time(125 * MS), |_, _| reo);
        assert_eq!(d.marked, 1);
        assert_eq!(b.lost_bytes(), 100);
        assert_eq!(b.next_retransmit(), Some(0));
        b.check().unwrap();
    }

    #[test]
    fn a_lost_retransmission_is_detected_by_a_later_delivery() {
        let mut b = board();
        sack(&mut b, 300, 1000, Time(109 * MS));
        b.rack_detect_loss(Time(200 * MS), |_, _| Dur::ZERO);
        assert_eq!(b.lost_bytes(), 300, "segments 0..3 were sent before segment 9");
        // Retransmit segment 0 at 200 ms; it is lost again. Everything sent before it was
        // SACKed long ago: only a segment *sent after* the retransmission reveals its loss.
        let p = b.next_retransmit().unwrap();
        let g = b.mark_retransmitted(p, Time(200 * MS));
        b.rack.on_sent(Time(200 * MS), 0);
        assert_eq!(g.seq, Seq(0));
        let abs = b.push(SentSeg {
            seq: Seq(1000),
            len: 100,
            flags: SegFlags::NONE,
            dsn: Dsn(1000),
            sent_at: Time(201 * MS),
        });
        b.rack.on_sent(Time(201 * MS), abs);
        sack(&mut b, 1000, 1100, Time(301 * MS));
        let d = b.rack_detect_loss(Time(301 * MS), |_, _| Dur::ZERO);
        assert_eq!(d.marked, 1, "{d:?}");
        assert_eq!(b.next_retransmit(), Some(0), "the lost retransmission is due again");
        b.check().unwrap();
    }

    #[test]
    fn a_never_retransmitted_segment_delivered_below_fack_is_reordering() {
        let mut b = board();
        sack(&mut b, 200, 300, Time(102 * MS));
        assert!(!b.rack.reordering_seen);
        b.rack.begin_ack(Some(Dur(100 * MS)));
        b.ack(Seq(300), Time(103 * MS));
        assert!(b.rack.reordering_seen);
        // Once reordering was seen, the window stays min_RTT / 4 even in recovery.
        assert_eq!(b.rack.reo_wnd(true, 5, 3, Some(Dur(100 * MS))), Dur(25 * MS));
    }

    #[test]
    fn stale_entries_are_dropped_and_the_queue_drains() {
        let mut b = board();
        b.rack.begin_ack(Some(Dur(100 * MS)));
        b.ack(Seq(1000), Time(110 * MS));
        b.rack_detect_loss(Time(110 * MS), |_, _| Dur::ZERO);
        assert_eq!(b.rack.queued(), 0);
    }
}

/// The packet counters beside the byte counters (Linux `tcp_packets_in_flight` =
/// `packets_out − (sacked_out + lost_out) + retrans_out`, each in packets): six segments, the
/// second a 10-byte one. SACKing segments 2–4 leaves segments 0, 1 and 5 in flight (3 packets,
/// 100 + 10 + 100 bytes); the three SACKed above segments 0 and 1 mark both lost (1 packet,
/// 100 B); their retransmissions are in flight again (2 packets, 200 B, then 3, 210 B); the
/// cumulative ACK of segments 0 and 1 leaves segment 5 (1 packet, 100 B), and a timeout marks
/// it lost (0 packets).
#[test]
fn packets_in_flight_count_segments_whatever_their_size() {
    let mut b = Scoreboard::default();
    let mut seq = 0;
    for len in [100, 10, 100, 100, 100, 100] {
        b.push(SentSeg { seq: Seq(seq), len, flags: SegFlags::NONE, dsn: Dsn(seq), sent_at: Time(seq) });
        seq += u64::from(len);
    }
    assert_eq!((b.in_flight_segs(), b.in_flight()), (6, 510));
    b.sack(&[(Seq(110), Seq(410))], Seq(0), Time(500));
    assert_eq!((b.in_flight_segs(), b.in_flight()), (3, 210));
    assert!(b.mark_lost(3));
    assert_eq!((b.in_flight_segs(), b.in_flight()), (1, 100));
    b.mark_retransmitted(0, Time(600));
    assert_eq!((b.in_flight_segs(), b.in_flight()), (2, 200));
    b.mark_retransmitted(1, Time(600));
    assert_eq!((b.in_flight_segs(), b.in_flight()), (3, 210));
    let a = b.ack(Seq(110), Time(700));
    assert_eq!((a.segs, a.delivered_segs, a.bytes, a.delivered), (2, 2, 110, 110));
    assert_eq!((b.in_flight_segs(), b.in_flight()), (1, 100));
    b.enter_loss();
    assert_eq!((b.in_flight_segs(), b.in_flight()), (0, 0));
    b.check().unwrap();
}

/// One skb per transmission (`tcp_write_xmit` → `tso_fragment`), freed whole when its last
/// byte is acknowledged (`tcp_clean_rtx_queue`): segments 0–2 sent as one, 3–4 as another,
/// 5 still being sent (its transmission not ended): 3 skbs. An ACK of segment 0 and half of
/// segment 1 frees none (the first skb is trimmed, not freed); an ACK to the end of segment 2
/// frees it; an ACK to the end of segment 5 frees the rest.
#[test]
fn skbs_count_transmissions_until_their_last_byte_is_acknowledged() {
    let mut b = board(6);
    assert_eq!(b.skbs(), 1, "nothing marked: one transmission going on");
    b.segs.get_mut(2).expect("seg 2").flags.insert(SegFlags::SKB_END);
    b.skb_ends += 1;
    b.segs.get_mut(4).expect("seg 4").flags.insert(SegFlags::SKB_END);
    b.skb_ends += 1;
    assert_eq!(b.skbs(), 3);
    b.ack(Seq(150), Time(10));
    assert_eq!(b.skbs(), 3);
    b.ack(Seq(300), Time(11));
    assert_eq!(b.skbs(), 2);
    b.end_skb();
    b.end_skb();
    assert_eq!(b.skbs(), 2, "the last segment marked once");
    b.ack(Seq(600), Time(12));
    assert_eq!(b.skbs(), 0);
}

/// Linux `tcp_clean_rtx_queue`: an ACK's `seq_rtt_us` is the first segment's it covers that
/// was not SACKed before (`first_ackt`), `ca_rtt_us` the last one's (`last_ackt`). Segments
/// sent at 0..5 ns; segment 1 SACKed at 20 ns. An ACK at 30 ns to the end of segment 3: first
/// not SACKed is segment 0 (30 ns), last is segment 3 (27 ns); the segment ending at the new
/// `snd_una` is segment 3 (`rtt`, 27 ns). A SACK of segments 4 and 5 in one block, then
/// (in a second call) nothing new: `first_sackt` is segment 4's (36 − 4 = 32 ns), the most
/// recently sent is segment 5's (31 ns).
#[test]
fn an_ack_samples_the_first_and_the_last_segment_it_covers() {
    let mut b = board(6);
    b.sack(&[(Seq(100), Seq(200))], Seq(0), Time(20));
    let a = b.ack(Seq(400), Time(30));
    assert_eq!(a.rtt_first_last, Some((Dur(30), Dur(27))));
    assert_eq!(a.rtt, Some(Dur(27)));
    let s = b.sack(&[(Seq(400), Seq(600))], Seq(400), Time(36));
    assert_eq!((s.bytes, s.rtt, s.rtt_first), (200, Some(Dur(31)), Some(Dur(32))));
    assert_eq!(b.sack(&[(Seq(400), Seq(600))], Seq(400), Time(37)), Sacked::default());
}
