//! Unit tests of the connection-level send side.

use super::*;

#[test]
fn the_writer_blocks_when_full_and_wakes_at_half_of_queued_free() {
    let mut s = ConnSender::new(App::Bulk { stop: None, write: None }, 3000, 1 << 30);
    s.app_write(Time(0));
    assert_eq!(s.queued(), 3000);
    assert_eq!(s.blocked_episodes, 1);
    s.mark_sent(Dsn(0), 3000);
    // 900 B acked: free 900 < queued/2 = 1050, still blocked.
    s.on_data_ack(Dsn(900), 1 << 20);
    s.app_write(Time(10));
    assert_eq!(s.write_seq, Dsn(3000));
    // 1200 B acked: free 1200 >= 900, wakes and refills, then blocks again.
    s.on_data_ack(Dsn(1200), 1 << 20);
    s.app_write(Time(30));
    assert_eq!(s.write_seq, Dsn(4200));
    assert_eq!(s.blocked_episodes, 2);
    assert_eq!(s.blocked_ns, 30);
}

/// A loop of blocking `send()` calls of 1000 B into a 3000 B buffer (`tcp_sendmsg_locked`):
/// three calls copy 1000 B each; the fourth finds the buffer full and sleeps with all 1000 B
/// left (one episode). 900 B acked leaves 900 B free < 2100 / 2: still asleep. 1200 B acked:
/// 1200 ≥ 900, the fourth call copies its 1000 B and returns, the fifth copies the last
/// 200 B of room and sleeps with 800 B left. The copies are the unbounded writer's (3000 B,
/// then 4200 B; its test above), as is the count of episodes. A 7000 B call, larger than the
/// buffer, copies the same bytes with 4000 B, then 2800 B of it left.
#[test]
fn a_blocking_block_writer_copies_what_an_unbounded_one_does() {
    for (block, left) in [(1000, [1000, 800]), (7000, [4000, 2800])] {
        let mut s = ConnSender::new(App::Bulk { stop: None, write: Some(block) }, 3000, 1 << 30);
        s.app_write(Time(0));
        assert_eq!((s.write_seq, s.block_left, s.blocked_episodes), (Dsn(3000), left[0], 1));
        s.mark_sent(Dsn(0), 3000);
        s.on_data_ack(Dsn(900), 1 << 20);
        s.app_write(Time(10));
        assert_eq!(s.write_seq, Dsn(3000));
        s.on_data_ack(Dsn(1200), 1 << 20);
        s.app_write(Time(30));
        assert_eq!((s.write_seq, s.block_left, s.blocked_episodes), (Dsn(4200), left[1], 2));
        assert_eq!(s.blocked_ns, 30);
    }
}

/// iperf checks its end time between `send()` calls: at `stop` (100 ns) the call asleep with
/// 1000 B left still copies them once woken, where the unbounded writer stops at once; the
/// run is done only once those bytes are DATA_ACKed too.
#[test]
fn a_send_call_begun_before_stop_is_finished_after_it() {
    for (write, end) in [(Some(1000), 4000), (None, 3000)] {
        let mut s = ConnSender::new(App::Bulk { stop: Some(Time(100)), write }, 3000, 1 << 30);
        s.app_write(Time(0));
        s.mark_sent(Dsn(0), 3000);
        s.on_data_ack(Dsn(3000), 1 << 20);
        s.app_write(Time(200));
        assert_eq!(s.write_seq, Dsn(end));
        assert!(!s.app_blocked());
        assert_eq!(s.all_acked(Time(200)), end == 3000);
    }
}

/// `SOCK_NOSPACE` is clear in the push after a `send()` call copied (the copy loop pushes
/// before `wait_for_sndbuf` sets it), and only then: not while the writer sleeps on, and
/// never for the unbounded writer, whose push after a copy sees it set as before.
#[test]
fn the_push_after_a_copy_is_the_writers_own() {
    let mut s = ConnSender::new(App::Bulk { stop: None, write: Some(1000) }, 3000, 1 << 30);
    s.app_write(Time(0));
    assert!(std::mem::take(&mut s.sendmsg_copied));
    s.mark_sent(Dsn(0), 3000);
    s.on_data_ack(Dsn(900), 1 << 20);
    s.app_write(Time(10));
    assert!(!s.sendmsg_copied, "900 B free < 1050: asleep, nothing copied");
    s.on_data_ack(Dsn(1200), 1 << 20);
    s.app_write(Time(30));
    assert!(s.sendmsg_copied);
    let mut u = ConnSender::new(App::Bulk { stop: None, write: None }, 3000, 1 << 30);
    u.app_write(Time(0));
    assert!(!u.sendmsg_copied && u.app_blocked());
}

/// The out-of-tree meta socket at MSS 1448 with DSS checksums: kmalloc of
/// SKB_DATA_ALIGN(1448 + 304) + 320 = 2112 B takes 4096 B, plus the 256-byte `sk_buff`:
/// 4352 B per skb. A 1 MiB buffer admits skbs while the charge is below 1048576 B:
/// ceil(1048576 / 4352) = 241 skbs (1048832 B, 256 B over), each with 1420 B of payload.
/// The writer wakes once the free charge is at least half the charge: with 80 skbs freed,
/// 161 × 4352 = 700672 charged leaves 347904 free < 350336; with 81 freed, 696320 charged
/// leaves 352256 free ≥ 348160.
#[test]
fn the_meta_socket_charges_whole_skbs_of_their_truesize() {
    assert_eq!(v09x_skb_truesize(1448, V09X_MAX_TCP_HEADER), 4352);
    // 1448 + 272 = 1720 → 1728 + 320 = 2048, kmalloc-2048 exactly; 1448 + 160 = 1608 →
    // 1664 + 320 = 1984 → 2048.
    assert_eq!(v09x_skb_truesize(1448, 272), 2048 + 256);
    assert_eq!(v09x_skb_truesize(1448, 160), 2048 + 256);
    // The boundary: 1448 + 280 = 1728 still fits 2048; 1448 + 281 rounds to 1792.
    assert_eq!(v09x_skb_truesize(1448, 280), 2048 + 256);
    assert_eq!(v09x_skb_truesize(1448, 281), 4096 + 256);
    // A build without the headroom of wireless and tunnel headers would fit kmalloc-2048.
    assert_eq!(((1448u64 + 224).next_multiple_of(64) + SHINFO).next_power_of_two() + SKB_STRUCT, 2304);
    let mut s = ConnSender::new(App::Bulk { stop: None, write: None }, 1 << 20, 1 << 30);
    s.charge = MetaCharge::Skb { payload: 1420, truesize: 4352 };
    s.app_write(Time(0));
    assert_eq!(s.queued(), 241 * 1420);
    assert_eq!(s.charged(), 1_048_832);
    assert!(s.full() && s.app_blocked());
    s.mark_sent(Dsn(0), 241 * 1420);
    s.on_data_ack(Dsn(80 * 1420), 1 << 30);
    s.app_write(Time(5));
    assert_eq!(s.write_seq, Dsn(241 * 1420), "80 skbs freed: 347904 B free < 350336");
    s.on_data_ack(Dsn(81 * 1420), 1 << 30);
    s.app_write(Time(9));
    assert_eq!(s.write_seq, Dsn(322 * 1420), "81 freed: the writer wakes and refills to 241 skbs");
    assert_eq!((s.blocked_episodes, s.blocked_ns), (2, 9));
}

#[test]
fn new_data_respects_the_window_right_edge() {
    let mut s = ConnSender::new(App::Download { size: 10_000 }, 1 << 20, 2000);
    s.app_write(Time(0));
    assert_eq!(s.next_new(0, 1448), Some((Dsn(0), 1448)));
    s.mark_sent(Dsn(0), 1448);
    assert_eq!(s.next_new(0, 1448), None);
    assert!(s.rwnd_blocked(1448));
    s.on_data_ack(Dsn(1448), 2000);
    assert_eq!(s.next_new(0, 1448), Some((Dsn(1448), 1448)));
}

#[test]
fn with_fill_tail_new_data_takes_the_window_up_to_its_last_byte() {
    // Linux MPTCP (`mptcp_check_allowed_size`): the window ends 552 B into the second
    // segment, so the second piece is 2000 - 1448 = 552 B; then nothing fits.
    let mut s = ConnSender::new(App::Download { size: 10_000 }, 1 << 20, 2000);
    s.fill_tail = true;
    s.app_write(Time(0));
    s.mark_sent(Dsn(0), 1448);
    assert_eq!(s.next_new(0, 1448), Some((Dsn(1448), 552)));
    assert!(!s.rwnd_blocked(1448));
    s.mark_sent(Dsn(1448), 552);
    assert_eq!(s.next_new(0, 1448), None);
    assert!(s.rwnd_blocked(1448));
}

#[test]
fn out_of_order_sends_leave_gaps_that_are_filled_later() {
    let mut s = ConnSender::new(App::Download { size: 10_000 }, 1 << 20, 1 << 20);
    s.app_write(Time(0));
    // A slow path sends 2000 unsent bytes ahead (skip 3000).
    assert_eq!(s.next_new(3000, 2000), Some((Dsn(3000), 2000)));
    s.mark_sent(Dsn(3000), 2000);
    assert_eq!(s.unsent(), 8000);
    assert_eq!(s.snd_nxt, Dsn(5000));
    // The head is still unsent; a segment stops at the sent range.
    assert_eq!(s.next_new(0, 4000), Some((Dsn(0), 3000)));
    s.mark_sent(Dsn(0), 3000);
    // Skipping continues past the sent range.
    assert_eq!(s.next_new(0, 1000), Some((Dsn(5000), 1000)));
    assert_eq!(s.next_new(1000, 1000), Some((Dsn(6000), 1000)));
    s.on_data_ack(Dsn(4000), 1 << 20);
    assert_eq!(s.unsent(), 5000);
}

#[test]
fn take_new_is_next_new_then_mark_sent() {
    // Two senders driven alike, one through `take_new`, the other through `next_new` and
    // `mark_sent`: same answers, same state, with and without `fill_tail`.
    for fill_tail in [false, true] {
        let size = 50_000u64;
        let mk = || {
            let mut s = ConnSender::new(App::Download { size }, 1 << 20, 6000);
            s.fill_tail = fill_tail;
            s.app_write(Time(0));
            s
        };
        let (mut a, mut b) = (mk(), mk());
        let mut rng = crate::rng::Rng::stream(11, "take-new-test");
        for _ in 0..2000 {
            match rng.below(6) {
                0 => {
                    let ack = (a.data_una.0 + rng.below(3000)).min(a.snd_nxt.0.max(a.data_una.0));
                    let wnd = 1000 + rng.below(8000);
                    a.on_data_ack(Dsn(ack), wnd);
                    b.on_data_ack(Dsn(ack), wnd);
                }
                1 => {
                    // Out of order: some data ahead of the head.
                    let (skip, max_len) = (rng.below(4000), 1 + rng.below(1500));
                    let want = b.next_new(skip, max_len);
                    if let Some((dsn, len)) = want {
                        b.mark_sent(dsn, len);
                    }
                    assert_eq!(a.take_new(skip, max_len), want);
                }
                _ => {
                    let max_len = [1448, 1448, 700][rng.below(3) as usize];
                    let want = b.next_new(0, max_len);
                    if let Some((dsn, len)) = want {
                        b.mark_sent(dsn, len);
                    }
                    assert_eq!(a.take_new(0, max_len), want);
                }
            }
            assert_eq!((a.snd_nxt, a.unsent(), a.sent_ranges()), (b.snd_nxt, b.unsent(), b.sent_ranges()));
        }
    }
}

#[test]
fn unsent_data_is_the_first_unsent_byte_after_the_skip_whatever_was_sent() {
    // Against a byte map: random sends (in order, ahead, and overlapping) and DATA_ACKs;
    // the first unsent byte after `skip` unsent ones, up to the next sent byte or the end
    // of what was written, is what `unsent_at` returns.
    let size = 20_000u64;
    let mut s = ConnSender::new(App::Download { size }, 1 << 20, 1 << 20);
    s.app_write(Time(0));
    let mut sent = vec![false; size as usize];
    let mut rng = crate::rng::Rng::stream(7, "sendbuf-test");
    let mut rand = |n: u64| rng.below(n);
    for _ in 0..400 {
        match rand(4) {
            0 | 1 => {
                let (dsn, len) = (rand(size), 1 + rand(3000));
                s.mark_sent(Dsn(dsn), len);
                let from = dsn.max(s.data_una.0);
                for b in from..(dsn + len).min(size) {
                    sent[b as usize] = true;
                }
            }
            2 => {
                let ack = (s.data_una.0 + rand(2000)).min(s.snd_nxt.0.max(s.data_una.0));
                s.on_data_ack(Dsn(ack), 1 << 20);
            }
            _ => {}
        }
        for skip in [0, 1, 500, 5000] {
            let max_len = 1448;
            let mut left = skip;
            let mut want = None;
            let mut b = s.data_una.0;
            while b < size {
                if !sent[b as usize] {
                    if left == 0 {
                        let mut e = b;
                        while e < size && !sent[e as usize] && e - b < max_len {
                            e += 1;
                        }
                        want = Some((Dsn(b), e - b));
                        break;
                    }
                    left -= 1;
                }
                b += 1;
            }
            assert_eq!(s.unsent_at(skip, max_len), want, "skip {skip}, sent {:?}", s.sent_ranges());
        }
    }
}

#[test]
fn sent_data_matches_a_byte_map_through_one_range_several_and_back() {
    // The sent data is kept as one range from the DATA_ACK plus, after out-of-order sends,
    // ranges beyond a gap. Driven from one range to several (sends ahead, overlapping ones)
    // and back to one (the gaps filled, or DATA_ACKs past them), it must hold what a byte
    // map of the sent bytes holds: the same ranges, unsent count and answers.
    let size = 400_000u64;
    let mut s = ConnSender::new(App::Download { size }, 1 << 20, 1 << 30);
    s.app_write(Time(0));
    let mut sent = vec![false; size as usize];
    let mut rng = crate::rng::Rng::stream(5, "sendbuf-ranges-test");
    let (mut single, mut several, mut back_to_one, mut last) = (0, 0, 0, 0);
    for _ in 0..3000 {
        let una = s.data_una.0;
        match rng.below(8) {
            0 | 1 => {
                // New data in order, or (rarely) ahead of the head.
                let skip = if rng.below(4) == 0 { rng.below(5000) } else { 0 };
                if let Some((dsn, len)) = s.take_new(skip, 1 + rng.below(1500)) {
                    sent[dsn.0 as usize..(dsn.0 + len) as usize].fill(true);
                }
            }
            2 => {
                // A range anywhere at or above the DATA_ACK, overlapping what was sent or not.
                let dsn = (una + rng.below(8000)).min(size - 1);
                let len = (1 + rng.below(1500)).min(size - dsn);
                s.mark_sent(Dsn(dsn), len);
                sent[dsn as usize..(dsn + len) as usize].fill(true);
            }
            3 => {
                // The oldest gap filled.
                if let Some((dsn, len)) = s.next_new(0, 1 + rng.below(4000)) {
                    s.mark_sent(dsn, len);
                    sent[dsn.0 as usize..(dsn.0 + len) as usize].fill(true);
                }
            }
            _ => {
                // A DATA_ACK up to the highest data sent (past gaps, as another path's
                // acknowledgement may be).
                let ack = (una + rng.below(4000)).min(s.snd_nxt.0.max(una));
                s.on_data_ack(Dsn(ack), 1 << 20);
                if s.snd_nxt.0 >= size && s.data_una.0 >= size {
                    break;
                }
            }
        }
        let una = s.data_una.0 as usize;
        let mut want = Vec::new();
        let mut b = una;
        while b < size as usize {
            if sent[b] {
                let e = b + sent[b..].iter().take_while(|&&x| x).count();
                want.push((b as u64, e as u64));
                b = e;
            } else {
                b += 1;
            }
        }
        let unsent = sent[una..].iter().filter(|&&x| !x).count() as u64;
        let ranges = s.sent_ranges();
        assert_eq!(ranges, want);
        assert_eq!(s.unsent(), unsent);
        let first_unsent = (una..size as usize).find(|&b| !sent[b]);
        assert_eq!(s.unsent_at(0, u64::MAX).map(|(d, _)| d.0 as usize), first_unsent);
        match ranges.len() {
            0 => {}
            1 => single += 1,
            _ => several += 1,
        }
        back_to_one += usize::from(last > 1 && ranges.len() == 1);
        last = ranges.len();
    }
    assert!(
        single > 100 && several > 100 && back_to_one > 10,
        "{single} single, {several} several, {back_to_one} back to one"
    );
}

/// The send-buffer-limited time is the sum of the intervals in which a subflow could send,
/// nothing is unsent and the writer is blocked; the one still open counts up to the time
/// asked. A 3000-byte buffer fills at t = 0 (writer blocked) and is all sent: limited from
/// t = 10 to 40 (30 ns), not at 40–60 (no subflow could send), again from t = 60, so 30 ns
/// at t = 60 and 30 + 25 = 55 ns at t = 85; the closed total alone stays 30 until `finish`.
#[test]
fn send_buffer_limited_time_includes_the_open_interval() {
    let mut s = ConnSender::new(App::Bulk { stop: None, write: None }, 3000, 1 << 30);
    s.app_write(Time(0));
    s.mark_sent(Dsn(0), 3000);
    s.account(Time(10), true, false);
    assert_eq!(s.sndbuf_limited_ns_at(Time(25)), 15);
    s.account(Time(40), false, false);
    assert_eq!(s.sndbuf_limited_ns_at(Time(50)), 30);
    s.account(Time(60), true, false);
    assert_eq!(s.sndbuf_limited_ns_at(Time(60)), 30);
    assert_eq!(s.sndbuf_limited_ns_at(Time(85)), 55);
    assert_eq!(s.sndbuf_limited_ns, 30);
    s.finish(Time(85));
    assert_eq!((s.sndbuf_limited_ns, s.sndbuf_limited_ns_at(Time(90))), (55, 55));
}

/// The polling writer (`Writer::Poll`) into a 460 000 B buffer with nothing queued: `poll()`
/// reports space while the free space is at least half of what is queued
/// (`__sk_stream_is_writeable`), so after k chunks of 65 536 B it writes another only while
/// 460 000 − 65 536·k ≥ 32 768·k, i.e. k ≤ 4.68: five chunks, 327 680 B, and it sleeps with
/// 132 320 B free (one episode) and the sixth chunk waiting; the sleeping writer fills the
/// 460 000 B. 150 000 B acked: 282 320 B free ≥ 88 840 B: it wakes, and writes while
/// 460 000 − q ≥ q/2, q ≤ 306 667:
/// from 177 680 B queued, two chunks (to 308 752 B: the second passes the mark, as a chunk is
/// only checked before it is written), then sleeps again.
#[test]
fn the_polling_writer_stops_at_two_thirds_of_the_buffer_in_64_kib_chunks() {
    let mut s = ConnSender::new(App::Bulk { stop: None, write: None }, 460_000, 1 << 30);
    s.writer = Writer::Poll;
    s.app_write(Time(0));
    assert_eq!((s.queued(), s.blocked_episodes, s.chunk_left), (5 * POLL_CHUNK, 1, POLL_CHUNK));
    s.mark_sent(Dsn(0), 5 * POLL_CHUNK);
    s.on_data_ack(Dsn(150_000), 1 << 30);
    s.app_write(Time(10));
    assert_eq!((s.write_seq, s.blocked_episodes), (Dsn(7 * POLL_CHUNK), 2));
    assert_eq!(s.queued(), 7 * POLL_CHUNK - 150_000);
    let mut sleeping = ConnSender::new(App::Bulk { stop: None, write: None }, 460_000, 1 << 30);
    sleeping.app_write(Time(0));
    assert_eq!(sleeping.queued(), 460_000);
}

/// A chunk partly copied is finished by the next `send()` (the kernel application's loop over
/// the rest of its 64 KiB view): into a 100 000 B buffer the first chunk fits, the second
/// copies the 34 464 B of room, and after a wake the next call copies the rest of that chunk,
/// 31 072 B, before a new chunk begins. A download's last chunk is what is left of it.
#[test]
fn the_polling_writer_finishes_a_chunk_before_the_next_and_ends_with_the_download() {
    let mut s = ConnSender::new(App::Bulk { stop: None, write: None }, 100_000, 1 << 30);
    s.writer = Writer::Poll;
    s.app_write(Time(0));
    // 65 536 queued: 34 464 free ≥ 32 768, so a second send() copies the room.
    assert_eq!((s.write_seq, s.chunk_left), (Dsn(100_000), POLL_CHUNK - 34_464));
    s.mark_sent(Dsn(0), 100_000);
    s.on_data_ack(Dsn(100_000), 1 << 30);
    s.app_write(Time(10));
    assert_eq!(s.write_seq.0 % POLL_CHUNK, 0, "the next chunk begins at a chunk boundary");
    let mut d = ConnSender::new(App::Download { size: 100_000 }, 1 << 20, 1 << 30);
    d.writer = Writer::Poll;
    d.app_write(Time(0));
    assert_eq!((d.write_seq, d.chunk_left, d.app_blocked()), (Dsn(100_000), 0, false));
}

fn with_frags(sndbuf: u64) -> ConnSender {
    let mut s = ConnSender::new(App::Bulk { stop: None, write: None }, sndbuf, 1 << 30);
    s.writer = Writer::Poll;
    s.frags = Some(Frags::default());
    s
}

/// Linux `mptcp_sendmsg` into fresh 32 KiB pages: each fragment's 40-byte header comes first,
/// so a page holds 32 728 B of data and a 64 KiB `send()` leaves fragments of 32 728, 32 728
/// and 80 B (the third on a new page: the second page is full). One call per write: the
/// push follows it before the next call.
#[test]
fn a_64_kib_send_into_fresh_pages_is_two_page_fragments_and_80_bytes() {
    let mut s = with_frags(1 << 20);
    assert!(s.app_write(Time(0)));
    assert_eq!(s.write_seq, Dsn(POLL_CHUNK));
    assert_eq!(s.next_piece(0, 1424), Some((Dsn(0), 32_728, true)));
    assert_eq!(s.frag_end(Dsn(32_728), 1), 65_456);
    assert_eq!(s.frag_end(Dsn(65_456), 1), 65_536);
    // The peer's window ends inside the first fragment: the piece ends with it.
    s.rwnd_right = Dsn(10_000);
    assert_eq!(s.next_piece(0, 1424), None, "without fill_tail a whole fragment must fit");
    s.fill_tail = true;
    assert_eq!(s.next_piece(0, 1424), Some((Dsn(0), 10_000, true)));
    s.mark_sent(Dsn(0), 10_000);
    // The rest of a fragment does not start one.
    s.rwnd_right = Dsn(1 << 30);
    assert_eq!(s.next_piece(0, 1424), Some((Dsn(10_000), 22_728, false)));
}

/// `mptcp_sendmsg` copies a page piece while the charge (data and fragment headers) is below
/// the buffer, so a call's last piece may pass it. The first subflow's buffer at connection
/// setup, 2 × 10 × 2304 = 46 080 B, plus `tcp_wmem[0]` = 4096 B is the connection's 50 176 B:
/// a 64 KiB `send()` copies 32 728 B (charge 32 768 < 50 176), then 32 728 B more (65 536),
/// and stops with 80 B of the call left, where a writer copying the room would stop at 50 176.
#[test]
fn a_send_call_copies_page_pieces_while_the_charge_is_below_the_buffer() {
    let mut s = with_frags(50_176);
    s.app_write(Time(0));
    assert_eq!((s.write_seq, s.charged(), s.chunk_left), (Dsn(65_456), 65_536, 80));
    // After the call's push, the next `poll()` finds no space.
    assert!(!s.app_write(Time(0)) && s.app_blocked());
    // Every fragment DATA_ACKed but the last: its header stays charged with it.
    s.mark_sent(Dsn(0), 65_456);
    s.on_data_ack(Dsn(40_000), 1 << 30);
    assert_eq!(s.charged(), 65_456 - 40_000 + 40);
    let mut room = ConnSender::new(App::Bulk { stop: None, write: None }, 50_176, 1 << 30);
    room.writer = Writer::Poll;
    room.app_write(Time(0));
    assert_eq!(room.write_seq, Dsn(50_176));
}

/// The next `send()` extends the last fragment while it still holds data not handed to a
/// subflow (`mptcp_pending_tail`), up to its page's end; once it was handed, new data starts
/// a fragment after a header at the next 8-byte boundary of the same page; a page with
/// fewer than 72 B left is replaced; a page nothing references any more is reused from its
/// start.
#[test]
fn fragments_extend_while_unsent_and_start_after_a_header_once_handed() {
    let mut s = with_frags(1 << 20);
    s.app = App::Download { size: 1000 };
    s.app_write(Time(0));
    // Unsent: the next 5000 B extend it.
    s.app = App::Download { size: 6000 };
    s.app_write(Time(1));
    assert_eq!(s.frag_end(Dsn(0), 1), 6000);
    // Page offset 6040. Handed out: 1003 B more start a fragment at offset 6040 + 40.
    s.mark_sent(Dsn(0), 6000);
    s.app = App::Download { size: 7003 };
    s.app_write(Time(2));
    assert_eq!(s.next_piece(0, 1424), Some((Dsn(6000), 1003, true)));
    // Offset 7083; handed, the next fragment's header starts at 7088 (8-byte aligned): the
    // page holds 32 768 − 7128 = 25 640 B more, then a new page (32 728 B) follows.
    s.mark_sent(Dsn(6000), 1003);
    s.app = App::Download { size: 7003 + 40_000 };
    s.app_write(Time(3));
    assert_eq!(s.frag_end(Dsn(7003), 1), 7003 + 25_640);
    assert_eq!(s.frag_end(Dsn(7003 + 25_640), 1), 7003 + 40_000);
    // Everything DATA_ACKed and no subflow holding a buffer: the page is reused from 0.
    s.mark_sent(Dsn(7003), 40_000);
    s.on_data_ack(Dsn(47_003), 1 << 30);
    s.app = App::Download { size: 47_003 + 40_000 };
    s.app_write(Time(4));
    assert_eq!(s.frag_end(Dsn(47_003), 1), 47_003 + 32_728);
    // With a subflow still holding a buffer of it, the page keeps serving from where it is.
    let mut t = with_frags(1 << 20);
    t.app = App::Download { size: 32_700 };
    t.app_write(Time(0));
    t.mark_sent(Dsn(0), 32_700);
    t.on_data_ack(Dsn(32_700), 1 << 30);
    t.pages_held = true;
    // Offset 32 740: 28 B left < 72, a new page.
    t.app = App::Download { size: 32_700 + 100 };
    t.app_write(Time(1));
    assert_eq!(t.next_piece(0, 1424), Some((Dsn(32_700), 100, true)));
    t.mark_sent(Dsn(32_700), 100);
    // Offset 140, still referenced: the next fragment starts at 144 + 40.
    t.app = App::Download { size: 32_800 + 40_000 };
    t.app_write(Time(2));
    assert_eq!(t.frag_end(Dsn(32_800), 1), 32_800 + 32_768 - 184);
}
