//! Unit tests of the send path: an endpoint driven sans-IO with subflows in states a test
//! sets ([`crate::mptcp::testkit`]), each decision asserted as the rule it follows gives it.
//!
//! Every connection here uses `classic` option sizes: a full segment carries
//! 1500 − 40 (IP, TCP) − 12 (timestamps) − 28 (DSS with a 64-bit DATA_ACK) = 1420 B.

use crate::mptcp::testkit::{backup, ms, run, sf, Harness, Sent};
use crate::tcp::timer::Slot;
use crate::units::{Dur, Time};

const S: u64 = 1420;

fn harness(conn: &str, subflows: &[crate::mptcp::testkit::Sf]) -> Harness {
    let h = Harness::new(conn, subflows);
    assert_eq!(h.smss, S, "a full segment");
    h
}

/// minRTT (the out-of-tree Linux default, v0.9x `mptcp_sched.c` `get_available_subflow`):
/// each segment goes to the subflow with the lowest smoothed RTT among those with room for a
/// full segment in their congestion window. Windows of 4, 3 and 5 segments at 40, 10 and
/// 80 ms, nothing in flight: 3 segments on subflow 1 (10 ms), then 4 on subflow 0 (40 ms),
/// then 5 on subflow 2 (80 ms), in data-sequence order; then every window is full and the
/// push ends with data still unsent.
#[test]
fn minrtt_fills_the_lowest_srtt_subflow_with_room_first() {
    let mut h = harness("scheduler = \"minrtt\"", &[sf(40, 4), sf(10, 3), sf(80, 5)]);
    let want = [run(1, 0, 3, S), run(0, 3 * S, 4, S), run(2, 7 * S, 5, S)].concat();
    assert_eq!(h.push(), want);
    assert!(h.ep.snd.unsent() > 0, "the bulk writer's data waits for the windows");
}

/// minRTT takes a backup subflow only when no regular subflow is usable at all
/// (`get_available_subflow` falls back to backups only when no active subflow exists, not
/// when the active ones are full; RFC 8684 §3.3.8): the regular subflow's 2-segment window
/// fills and the push stops, although the backup has a lower SRTT and room.
#[test]
fn minrtt_leaves_a_backup_subflow_idle_while_a_regular_one_is_usable() {
    let mut h = harness("scheduler = \"minrtt\"", &[sf(50, 2), backup(5, 10)]);
    assert_eq!(h.push(), run(0, 0, 2, S));
}

/// Upstream Linux's `default` (`mptcp_subflow_get_send`, net/mptcp/protocol.c): among the
/// active non-backup subflows, the one with the shortest linger time, the bytes it holds
/// (`sk_wmem_queued`) over its average pacing rate (`(wmem << 32) / pace`), takes a burst
/// of up to 64 KiB (`MPTCP_SEND_BURST_SIZE`, the scheduler's `burst`) whatever its window
/// says, and then the choice is made again. Pacing rate (`tcp_update_pacing_rate`, slow
/// start): 2 × max(cwnd, packets out) / SRTT.
/// - subflow 0: 10 ms, window 10, 5 segments held: 2 × 10 S / 10 ms = 2000 S/s, linger
///   5 / 2000 s = 2.5 ms;
/// - subflow 1: 40 ms, window 80, 4 segments held: 2 × 80 S / 40 ms = 4000 S/s, linger 1 ms.
///
/// Subflow 1 takes the burst, ⌈65536 / 1420⌉ = 47 segments, all within its window
/// (4 + 47 ≤ 80). It then holds 51 segments (12.75 ms) against subflow 0's 2.5 ms: the next
/// segment, the download's last, goes to subflow 0. minRTT, from the same state, fills
/// subflow 0's window first (5 segments) and gives the other 43 to subflow 1.
#[test]
fn the_default_scheduler_picks_the_shortest_linger_time_then_bursts_64_kib() {
    let burst = 65_536u64.div_ceil(S);
    assert_eq!(burst, 47);
    let size = (5 + 4 + burst + 1) * S;
    let setup = |sched: &str| {
        let conn = format!("scheduler = \"{sched}\"\napp = {{ kind = \"download\", size = \"{size}B\" }}");
        let mut h = harness(&conn, &[sf(10, 10), sf(40, 80)]);
        h.in_flight(0, 5);
        h.in_flight(1, 4);
        h
    };
    let mut h = setup("default");
    let want = [run(1, 9 * S, burst, S), run(0, (9 + burst) * S, 1, S)].concat();
    assert_eq!(h.push(), want);
    let mut h = setup("minrtt");
    assert_eq!(h.push(), [run(0, 9 * S, 5, S), run(1, 14 * S, burst + 1 - 5, S)].concat());
}

/// The `default` scheduler assigns data to a subflow's send queue whatever its congestion
/// window says, up to the subflow's send buffer (`sk_stream_memory_free`; a burst ends when
/// the held bytes reach it); the subflow sends what its window allows. Send buffer
/// (`tcp_sndbuf_expand`): 2 × max(10, cwnd / S) × (roundup_pow_of_two(S + 512) + 256) =
/// 2 × 10 × 2304 = 46080 B, which ⌈46080 / 1420⌉ = 33 segments reach.
/// Subflow 0: 10 ms, window 10, 5 segments held (linger 2.5 ms, as above); subflow 1: 10 ms,
/// window 10, idle (linger 0). Subflow 1 takes 33 segments (not the burst's 47), sends 10 and
/// queues 23; holding 33 at 2000 S/s (16.5 ms) it loses the next choice to subflow 0, which
/// takes the download's last segment.
#[test]
fn the_default_scheduler_queues_beyond_the_window_up_to_the_send_buffer() {
    let sndbuf_segs = (2 * 10 * 2304u64).div_ceil(S);
    assert_eq!(sndbuf_segs, 33);
    let size = (5 + sndbuf_segs + 1) * S;
    let conn = format!("scheduler = \"default\"\napp = {{ kind = \"download\", size = \"{size}B\" }}");
    let mut h = harness(&conn, &[sf(10, 10), sf(10, 10)]);
    h.in_flight(0, 5);
    assert_eq!(h.ep.sfq[1].sndbuf, 46_080);
    let want = [run(1, 5 * S, 10, S), run(0, (5 + sndbuf_segs) * S, 1, S)].concat();
    assert_eq!(h.push(), want);
    assert_eq!(h.ep.sfq[1].bytes(), (sndbuf_segs - 10) * S);
}

/// Reinjection on a subflow's RTO (`mptcp_retransmit = false`, the classic model; out-of-tree
/// Linux `mptcp_sub_retransmit_timer` → `mptcp_reinject_data`): the subflow retransmits its
/// first segment itself (RFC 6298 (5.4)), and every segment it holds is queued once for the
/// other subflows; the push that follows places them first, on the scheduler's reinjection
/// pick (the lowest SRTT among the other subflows with room), then new data.
/// Subflow 1 (100 ms) holds DSN [0, 3 S); subflow 0 (10 ms, window 10) is idle. Subflow 1's
/// RTO is SRTT + max(rto_min, 4 RTTVAR) = 100 + max(200, 4 × 50) = 300 ms. Then: DSN 0 on
/// subflow 1; DSN 0, S, 2 S on subflow 0; new data from 3 S on subflow 0 until its window is
/// full (7 segments). Subflow 1, its window down to the one segment it just retransmitted,
/// takes nothing.
#[test]
fn a_subflow_rto_reinjects_what_it_holds_on_the_fastest_other_subflow() {
    let mut h = harness("scheduler = \"minrtt\"", &[sf(10, 10), sf(100, 10)]);
    h.in_flight(1, 3);
    let rto_at = h.ep.subflow(1).and_then(|s| s.timers.rto.deadline());
    assert_eq!(rto_at, Some(ms(300)));
    let sent = h.fire(ms(300));
    let want = [vec![Sent { sf: 1, dsn: 0, len: S }], run(0, 0, 3, S), run(0, 3 * S, 7, S)].concat();
    assert_eq!(sent, want);
    assert_eq!(h.ep.snd.reinjected_bytes, 3 * S);
    assert!(h.ep.snd.reinject.is_empty(), "all of it placed");
}

/// The MPTCP-level retransmission timer (`mptcp_retransmit = true`, upstream Linux
/// `mptcp_retransmit_timer` → `__mptcp_retrans`): a subflow RTO reinjects nothing; when the
/// timer fires, the oldest data not DATA_ACKed, up to the end of its 32 KiB data fragment
/// and to what was sent, goes again on the first subflow with nothing in flight and nothing
/// queued (`mptcp_subflow_get_retrans`). A 3-segment download held by subflow 1, with no push
/// that had data to hand out since (the interval is set by such a push): the timer runs for
/// its initial `TCP_RTO_MIN`, 200 ms, and sends DSN [0, 3 S) again on idle subflow 0; at
/// 300 ms subflow 1's own RTO retransmits DSN 0 on subflow 1 only.
#[test]
fn the_mptcp_timer_resends_the_oldest_fragment_on_an_idle_subflow() {
    let conn = format!(
        "scheduler = \"minrtt\"\nmptcp_retransmit = true\napp = {{ kind = \"download\", size = \"{}B\" }}",
        3 * S
    );
    let mut h = harness(&conn, &[sf(10, 10), sf(100, 10)]);
    h.in_flight(1, 3);
    assert_eq!(h.push(), vec![], "nothing new to send");
    assert_eq!(h.ep.rtx_at, Some(ms(200)));
    assert_eq!(h.fire(ms(200)), run(0, 0, 3, S));
    assert_eq!(h.fire(ms(300)), vec![Sent { sf: 1, dsn: 0, len: S }]);
    assert!(h.ep.snd.reinject.is_empty(), "the RTO queued nothing");
    assert_eq!(h.ep.snd.reinjected_bytes, 3 * S);
}

/// New data is bounded by the connection's send buffer (data stays in it until DATA_ACKed,
/// RFC 8684 §3.3.2) and by the peer's receive window, which is relative to DATA_ACK
/// (RFC 8684 §3.3.4: data may be sent up to DATA_ACK + window), in whole segments
/// (sender-side silly-window avoidance, RFC 1122 §4.2.3.4); congestion windows of 100
/// segments do not bind. Both are connection-level: minRTT puts everything on subflow 0.
#[test]
fn a_push_sends_at_most_the_send_buffer_and_the_peers_window_allow() {
    let subflows = [sf(10, 100), sf(20, 100)];
    // A 4-segment send buffer, a 10-segment window: 4 segments. An ACK of 2 segments frees
    // 2 S, at least half of the 2 S still held (`sk_stream_write_space`): the writer wakes,
    // fills the buffer and 2 more segments go.
    let mut h = harness(&format!("sndbuf = \"{}B\"\nrcvbuf = \"{}B\"", 4 * S, 10 * S), &subflows);
    assert_eq!(h.push(), run(0, 0, 4, S));
    h.now = ms(10);
    assert_eq!(h.ack(0, 2 * S, 2 * S, 10 * S), run(0, 4 * S, 2, S));
    // A 10-segment send buffer, a window of 4 segments and 700 B: 4 segments, the tail
    // unused. An ACK of one segment with the same window moves its right edge to
    // 5 S + 700: one more segment.
    let mut h = harness(&format!("sndbuf = \"{}B\"\nrcvbuf = \"{}B\"", 10 * S, 4 * S + 700), &subflows);
    assert_eq!(h.push(), run(0, 0, 4, S));
    h.now = ms(10);
    assert_eq!(h.ack(0, S, S, 4 * S + 700), run(0, 4 * S, 1, S));
    // With `window_tail = "fill"` (Linux `mptcp_check_allowed_size`) the tail goes too, as a
    // short segment.
    let conn = format!("sndbuf = \"{}B\"\nrcvbuf = \"{}B\"\nwindow_tail = \"fill\"", 10 * S, 4 * S + 700);
    let mut h = harness(&conn, &subflows);
    assert_eq!(h.push(), [run(0, 0, 4, S), vec![Sent { sf: 0, dsn: 4 * S, len: 700 }]].concat());
}

/// RFC 2861's decay in an MPTCP push (Linux `tcp_cwnd_validate` → `tcp_cwnd_application_limited`
/// after `__subflow_push_pending`) needs an RTO without an ACK of new data: every such ACK
/// restarts its clock (`tcp_cong_avoid`). One subflow at 10 ms with a window of 100 segments
/// and a 10-segment send buffer: the writer fills the buffer, the 10 segments go; every 10 ms
/// their ACK frees the buffer, the writer copies 10 more and the push sends them with the
/// window not full (slow start: cwnd-limited only below 2 × 10 segments in flight). 25 rounds
/// are 250 ms, past the 200 ms minimum RTO, yet each ACK restarted the clock: cwnd stays at
/// 100 whether the writer loops over blocking `send()` calls (`write`) or polls.
#[test]
fn acknowledged_pushes_never_decay_the_window() {
    for app in ["app = { kind = \"bulk\", write = \"128KiB\" }", "app = { kind = \"bulk\" }"] {
        let conn = format!("sndbuf = \"{}B\"\nrcvbuf = \"{}B\"\ntcp = {{ cwv = true }}\n{app}", 10 * S, 1000 * S);
        let mut h = harness(&conn, &[sf(10, 100)]);
        assert_eq!(h.push(), run(0, 0, 10, S));
        for k in 1..=25 {
            h.now = ms(10 * k);
            assert_eq!(h.ack(0, 10 * k * S, 10 * k * S, 1000 * S), run(0, 10 * k * S, 10, S));
        }
        let s = h.ep.subflows[0].as_ref().expect("subflow");
        assert_eq!((s.w.cwnd / s.w.smss, s.stats.cwv_decays), (100, 0), "{app}");
    }
}

/// Linux `mptcp_timeout_from_subflow` and `mptcp_reset_rtx_timer`, in jiffies (4 ms): a push
/// with data to hand out sets the interval to the longest time a subflow not being counted
/// stale has until its pending timer, counted as the deadline's tick less the current one,
/// and the timer restarts from the current tick. Subflow 1's RTO is due at 300 ms (tick 75):
/// at 5 ms (tick 1) the interval is 74 jiffies, 296 ms, and the timer is due at 4 + 296 =
/// 300 ms. Due at 301 ms instead (tick 75.25, the kernel's deadline the next tick), the
/// interval at 5 ms is 75 jiffies and the timer is due at 304 ms. Once subflow 1 is being
/// counted stale, its timer does not count: nothing else is pending, so `TCP_RTO_MIN`.
#[test]
fn the_mptcp_timer_interval_counts_whole_jiffies_of_subflows_not_counted_stale() {
    let conn = "scheduler = \"minrtt\"\nmptcp_retransmit = true";
    let mut h = harness(conn, &[sf(10, 10), sf(100, 10)]);
    h.in_flight(1, 3);
    assert_eq!(h.ep.subflow(1).and_then(|s| s.timers.rto.deadline()), Some(ms(300)));
    let now = Time(5_000_000);
    h.ep.set_rtx_ival(now);
    h.ep.reset_rtx_timer(now);
    assert_eq!((h.ep.rtx_ival, h.ep.rtx_at), (Dur::from_ms(296), Some(ms(300))));
    h.ep.subflows[1].as_mut().expect("subflow 1").timers.arm(Slot::Rto, ms(301));
    h.ep.set_rtx_ival(now);
    h.ep.reset_rtx_timer(now);
    assert_eq!((h.ep.rtx_ival, h.ep.rtx_at), (Dur::from_ms(300), Some(ms(304))));
    h.ep.subflows[1].as_mut().expect("subflow 1").stale.count = 1;
    h.ep.set_rtx_ival(now);
    assert_eq!(h.ep.rtx_ival, Dur::from_ms(200));
}

/// Linux ≥ 5.18 `tcp_check_space` after every skb of new data sent (`tcp_event_new_data_sent`),
/// `tcp.sndbuf_check = "linux"`: one subflow (10 ms, window 20 segments) whose send buffer is
/// still the 10-segment floor, 2 × 10 × `per_mss` = 46 080 B (`per_mss` at this MSS:
/// roundup_pow_of_two(1420 + 512) + 256 = 2304 B), nothing in flight, a bulk writer. The
/// push sends the window, 20 segments, in transmit units of 3 segments (`tcp_tso_autosize`:
/// the pacing rate, 2 × 20 × 1420 B / 10 ms = 5.68 MB/s, over 1024 is 5546 B, 3 segments):
/// after the first unit the window is open and the writer waits for space (`SOCK_NOSPACE`),
/// so the buffer grows to 2 × 20 × 2304 = 92 160 B though the last unit fills the window. Under `"acked"` only an
/// ACK may grow it: it stays at 46 080 B. A writer that is not waiting (a download that fits
/// in the buffer) leaves `SOCK_NOSPACE` clear: no growth either.
#[test]
fn a_burst_of_several_units_grows_the_send_buffer_while_the_writer_waits() {
    let grown = |conn: &str| {
        let mut h = harness(conn, &[sf(10, 20)]);
        h.ep.sfq[0].sndbuf = 2 * 10 * 2304;
        h.ep.sync_sndbuf();
        let sent = h.push();
        assert_eq!(sent.len(), 20, "the window");
        h.ep.sfq[0].sndbuf
    };
    assert_eq!(grown("tcp = { sndbuf_check = \"linux\" }"), 2 * 20 * 2304);
    assert_eq!(grown("tcp = { sndbuf_check = \"acked\" }"), 2 * 10 * 2304);
    let fits = format!("tcp = {{ sndbuf_check = \"linux\" }}\napp = {{ kind = \"download\", size = \"{}B\" }}", 25 * S);
    assert_eq!(grown(&fits), 2 * 10 * 2304);
}

/// PSH as Linux sets it on a subflow's segments (`stack = "linux"`: write-queue buffers,
/// TSO deferral). A download of 5 full segments is one `send()`, one push: one write-queue
/// buffer, which the push marks (`mptcp_push_release` → `tcp_push` → `tcp_mark_push`). One
/// subflow, 10 ms, window 10 segments: transmit units of 2 segments (`tcp_tso_autosize`: the
/// pacing rate 2 × 10 × 1424 B / 10 ms = 2.848 MB/s over 1024 is 2781 B, one segment, raised
/// to `tcp_min_tso_segs` = 2). Each 2-segment transmission ends with PSH
/// (`__tcp_transmit_skb` forces it on every GSO packet), and the fifth segment, sent alone,
/// carries the marked buffer's PSH: PSH on the 2nd, 4th and 5th.
#[test]
fn psh_ends_every_multi_segment_transmission_and_every_pushed_buffer() {
    use crate::net::packet::flags;
    let mut h = Harness::new("stack = \"linux\"\napp = { kind = \"download\", size = \"7120B\" }", &[sf(10, 10)]);
    assert_eq!(h.smss, 1424, "a full segment with Linux's option sizes");
    let mut out = Vec::new();
    h.ep.xmit(h.now, &mut out);
    let psh: Vec<bool> = out.iter().filter(|p| p.payload > 0).map(|p| p.is(flags::PSH)).collect();
    assert_eq!(psh, [false, true, false, true, true]);
}

/// Linux `tcp_new_space` → `subflow_write_space` → `mptcp_write_space` → `sk_stream_write_space`:
/// a subflow send buffer that grows while the writer sleeps for space wakes it as soon as the
/// connection's buffer has room for half of what it holds (`__sk_stream_is_writeable`), and
/// the woken writer's `send()` pushes at once (`mptcp_sendmsg` → `__mptcp_push_pending`);
/// measured on UML 7.3.4, the push 1 µs after the ACK that grew the buffer. An auto-tuned
/// connection buffer (`tcp_wmem` 4096 16384 4 MiB) over one subflow created with a window of
/// 10 segments: 4096 + 2 × 10 × 2304 = 50 176 B, which the sleeping writer fills. The window
/// then allows 40 segments: the push sends the 50 176 B written, 35 full segments and 476 B,
/// in transmit units of 7 segments (2 × 40 × 1420 B / 10 ms = 11.36 MB/s over 1024 is
/// 11 093 B), so the buffer grows to 2 × 40 × 2304 = 184 320 B (connection: 188 416 B) with
/// 50 176 B charged: the writer wakes, fills it, and the window's last 4 segments leave in the
/// same instant (40 in all; 36 if the writer slept on with 138 240 B free).
#[test]
fn a_send_buffer_that_grows_wakes_the_writer_whose_send_pushes_at_once() {
    let conn = "tcp = { sndbuf_check = \"linux\" }\nsndbuf = { min = \"4096B\", default = \"16384B\", max = \"4MiB\" }";
    let mut h = harness(conn, &[sf(10, 10)]);
    assert_eq!((h.ep.snd.write_seq.0, h.ep.snd.sndbuf), (50_176, 50_176));
    assert!(h.ep.snd.app_blocked());
    h.ep.subflows[0].as_mut().expect("subflow 0").w.cwnd = 40 * S;
    let sent = h.push();
    assert_eq!(sent.len(), 40, "the window, the writer woken within the push");
    assert_eq!(sent[35], Sent { sf: 0, dsn: 35 * S, len: 50_176 - 35 * S });
    assert_eq!((h.ep.sfq[0].sndbuf, h.ep.snd.sndbuf, h.ep.snd.write_seq.0), (184_320, 188_416, 188_416));
}

/// The simulation may wake an endpoint at a deadline that has since moved (a timer re-armed
/// later): Linux has no event then, and nothing is pushed (`tcp.sndbuf_check = "linux"`, the
/// `linux` profile's). The window of a subflow whose data is all sent opens without an ACK
/// (set here by hand): a wake-up with no timer due sends nothing; the pacing timer due at that
/// instant lets the push send the window's room. The classic model pushes at any wake-up.
#[test]
fn a_wake_up_with_nothing_due_pushes_nothing() {
    for (conn, stale) in [("tcp = { sndbuf_check = \"linux\" }", 0u64), ("", 2)] {
        let mut h = harness(conn, &[sf(10, 4)]);
        assert_eq!(h.push().len(), 4);
        h.ep.subflows[0].as_mut().expect("subflow 0").w.cwnd = 6 * S;
        assert_eq!(h.fire(ms(1)).len() as u64, stale, "{conn}");
        h.ep.subflows[0].as_mut().expect("subflow 0").w.cwnd = 8 * S;
        h.ep.subflows[0].as_mut().expect("subflow 0").timers.arm(Slot::Pace, ms(2));
        assert_eq!(h.fire(ms(2)), run(0, (4 + stale) * S, 4 - stale, S), "{conn}");
    }
}

/// Linux `tcp_write_xmit` takes the write queue one buffer (skb) at a time: each buffer of
/// more than one segment is tested by `tcp_tso_should_defer` before it leaves, so a transmit
/// unit never runs on into the next buffer. Seen on UML 7.3.4 (`rcvbuf-fixed-256kb-ratio20`,
/// 40.6 ms): an ACK opened 4 segments of room, the head buffer's last 3 segments left, and the
/// next buffer was deferred with one segment of room. Here (`stack = "linux"`): one subflow,
/// SRTT 10 ms, the peer's window 1 MB, a download of 100 segments in write-queue buffers of
/// 45 (64 080 B, `tcp_xmit_size_goal`); a window of 42 sends 42 at time 0, leaving 3 in the
/// first buffer, in transmissions of 8 segments (2 × 42 × 1448 B / 10 ms over 1024 is
/// 11 878 B): 8, 8, 8, 8, 8 and 2, six skbs in the retransmission queue. At 9.5 ms the
/// window is 46: the first buffer's 3 segments leave (a buffer followed by another, whose
/// rest fits the room: "full sendable already"); the next buffer
/// has one segment of room, less than a unit (2 × 46 × 1448 B / 10 ms over 1024 is 13 009 B,
/// 9 segments) and less than a third of the window, the oldest segment's ACK is due at 10 ms,
/// within min(SRTT/2, 1 ms) of now, and the last transmission is this instant's: deferred.
#[test]
fn each_write_queue_buffer_is_tested_for_deferral_before_it_leaves() {
    let mut h = Harness::new("stack = \"linux\"\napp = { kind = \"download\", size = \"142400B\" }", &[sf(10, 42)]);
    assert_eq!(h.smss, 1424, "a full segment with Linux's option sizes");
    (h.ep.snd.max_window, h.ep.snd.rwnd_right) = (1 << 20, crate::units::Dsn(1 << 20));
    assert_eq!(h.push().len(), 42);
    assert_eq!(h.ep.sfq[0].head_len(), 3 * 1424, "the first buffer's rest");
    assert_eq!(h.ep.subflows[0].as_ref().expect("subflow 0").sb.skbs(), 6);
    h.ep.subflows[0].as_mut().expect("subflow 0").w.cwnd = 46 * 1424;
    h.now = Time::ZERO + Dur::from_us(9_500);
    assert_eq!(h.push(), run(0, 42 * 1424, 3, 1424));
}
