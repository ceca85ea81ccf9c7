//! How a Linux TCP sender cuts its data into segmentation-offload (GSO/TSO) units, and when it
//! holds a unit back to send a bigger one later (`net/ipv4/tcp_output.c`, Linux 6.x).
//!
//! Linux TCP always builds multi-segment buffers and lets the device (or, with offloads off,
//! the stack's software GSO just before the device) cut them into packets: since 6.x every
//! TCP socket has `NETIF_F_GSO` (`sk_setup_caps`), so this holds on the kernel backend's
//! veths too, whose offloads are off. Three rules of that path matter to a model of the
//! sender:
//!
//! - **Write-queue buffers** ([`size_goal`], `tcp_xmit_size_goal`): data not sent yet sits in
//!   buffers of up to the GSO size limit, bounded by half the largest window the peer has
//!   offered (`tcp_bound_to_half_wnd`), a whole number of segments. Each buffer costs one skb
//!   head in the socket's memory (`sk_wmem_queued`), so unsent data is charged almost at its
//!   payload size.
//! - **Transmit units** ([`autosize_segs`], `tcp_tso_autosize` / `tcp_tso_segs`): a buffer
//!   leaves in units of about 1 ms at the pacing rate (`sk_pacing_rate >> sk_pacing_shift`,
//!   shift 10), at least `tcp_min_tso_segs` = 2 segments, plus a share of the GSO limit on
//!   paths whose minimum RTT is below 2^`tcp_tso_rtt_log` = 512 µs times the limit's bit
//!   width. Every unit becomes an skb of its own (`tso_fragment`), so data in flight is
//!   charged one skb head per unit.
//! - **Deferral** ([`should_defer`], `tcp_tso_should_defer`, "TSO Nagle", from John
//!   Heffner): when the room in the windows is less than a full unit and less than a third of
//!   the window, and an ACK is due soon, the sender waits for that ACK to send a bigger unit
//!   instead of a small one now. The congestion window then stays partly unused between
//!   ACKs, which is what lets `tcp_new_space` grow the send buffer after an ACK
//!   (`tcp_should_expand_sndbuf`: only if the flight is below the window).
//!
//! Deviations: the send window in the deferral test is taken as no limit (the data a subflow
//! holds was admitted by the connection-level window when it was assigned, and Linux raises
//! the subflow's window to the connection's, `mptcp_check_allowed_size`); the head buffer is
//! the unsent data up to one [`size_goal`], and it is the queue's last buffer when nothing
//! lies beyond that (Linux's buffers end where each push of the MPTCP scheduler ended, or at
//! a data-sequence gap, which also marks them end-of-record); BBR's smaller minimum unit
//! (1 segment below 1.2 Mbit/s, `bbr_min_tso_segs`) is not modelled.

use crate::units::{Dur, Time};

/// `tcp_min_tso_segs`: a transmit unit holds at least two segments.
pub const MIN_TSO_SEGS: u64 = 2;

/// The GSO size limit of an MPTCP subflow (`MPTCP_MAX_GSO_SIZE`, equal to what TCP gets from
/// a veth, `sk_dst_gso_max_size`): `GSO_LEGACY_MAX_SIZE` (65 536) less `MAX_TCP_HEADER` + 1
/// (320 + 1 on x86-64).
pub const GSO_MAX_SIZE: u64 = 65_536 - 321;

/// `sk_pacing_shift`: a transmit unit is the data of 1/2^10 s at the pacing rate.
const PACING_SHIFT: u32 = 10;

/// `tcp_tso_rtt_log`: paths with a minimum RTT below 2^9 µs × the limit's bit width add a share
/// of the GSO limit to the unit.
const TSO_RTT_LOG: u32 = 9;

/// `tcp_tso_win_divisor`: send at once when a third of the window is free.
const TSO_WIN_DIVISOR: u64 = 3;

/// Segments in one transmit unit (`tcp_tso_segs` → `tcp_tso_autosize`): `pacing_rate` in
/// bytes per second, `min_rtt` the path's minimum RTT if measured.
pub fn autosize_segs(pacing_rate: f64, min_rtt: Option<Dur>, smss: u64) -> u64 {
    let mut bytes = (pacing_rate.max(0.0) as u64) >> PACING_SHIFT;
    if let Some(r) = min_rtt {
        let shift = (r.0 / 1000) >> TSO_RTT_LOG;
        if shift < 32 {
            bytes += GSO_MAX_SIZE >> shift;
        }
    }
    (bytes.min(GSO_MAX_SIZE) / smss.max(1)).max(MIN_TSO_SEGS)
}

/// Payload of one write-queue buffer (`tcp_xmit_size_goal`): the GSO limit bounded by half the
/// largest window the peer offered (`tcp_bound_to_half_wnd`; the whole window when it is at
/// most 536 B), rounded down to whole segments, at least one.
pub fn size_goal(max_window: u64, smss: u64) -> u64 {
    let smss = smss.max(1);
    let cutoff = if max_window > 536 { max_window / 2 } else { max_window };
    let goal = if cutoff > 0 && GSO_MAX_SIZE > cutoff { cutoff } else { GSO_MAX_SIZE };
    (goal / smss * smss).max(smss)
}

/// What the sender knows when it is about to start a transmit unit.
#[derive(Clone, Copy, Debug)]
pub struct DeferCtx {
    pub now: Time,
    /// In fast recovery or after an RTO (`icsk_ca_state >= TCP_CA_Recovery`).
    pub recovering: bool,
    /// The last transmission on the subflow (`tcp_wstamp_ns`).
    pub last_xmit: Time,
    /// Congestion window and bytes in flight.
    pub cwnd: u64,
    pub in_flight: u64,
    pub smss: u64,
    /// Segments of a full unit ([`autosize_segs`]).
    pub max_segs: u64,
    /// Unsent bytes in the head buffer, and whether more buffers follow it.
    pub skb_len: u64,
    pub more_after: bool,
    /// When the oldest unacknowledged data was (last) sent, and the smoothed RTT.
    pub head_sent_at: Option<Time>,
    pub srtt: Option<Dur>,
}

/// The outcome of [`should_defer`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Defer {
    /// Send a unit now.
    Send,
    /// Wait: the congestion window is too small for the head buffer (the window counts as used,
    /// `is_cwnd_limited`).
    CwndLimited,
    /// Wait for more data to join the head buffer (application-limited).
    MoreData,
}

/// Linux `tcp_tso_should_defer` for a sender whose congestion window has room (the caller
/// checked `tcp_cwnd_test`) and whose head buffer is longer than one segment.
pub fn should_defer(c: &DeferCtx) -> Defer {
    if c.recovering {
        return Defer::Send;
    }
    // "Avoid bursty behavior by allowing defer only if the last write was recent (1 ms)."
    if c.now.since(c.last_xmit) > Dur::from_ms(1) {
        return Defer::Send;
    }
    let cong_win = c.cwnd.saturating_sub(c.in_flight);
    // A full-sized unit can be sent.
    if cong_win >= c.max_segs * c.smss {
        return Defer::Send;
    }
    // A buffer in the middle of the queue gets no more data: send it if it fits.
    if c.more_after && cong_win >= c.skb_len {
        return Defer::Send;
    }
    // At least a third of the window is free.
    if cong_win >= c.cwnd / TSO_WIN_DIVISOR {
        return Defer::Send;
    }
    // The next ACK, the oldest transmission's, expected an SRTT after it, is due in more than
    // min(SRTT/2, 1 ms): do not defer ("tcp: fix tcp_tso_should_defer() vs large RTT", in
    // 6.18 and the stable kernels; before it the test was the head being less than half an
    // SRTT old, which on a 200 ms path deferred for 100 ms of every round trip).
    let Some(head) = c.head_sent_at else { return Defer::Send };
    let srtt = c.srtt.unwrap_or(Dur::ZERO);
    let threshold = Dur(srtt.0 / 2).min(Dur::from_ms(1));
    if head + srtt > c.now + threshold {
        return Defer::Send;
    }
    if cong_win <= c.skb_len {
        Defer::CwndLimited
    } else {
        Defer::MoreData
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1448;

    #[test]
    fn units_are_a_millisecond_at_the_pacing_rate_and_at_least_two_segments() {
        // Slow start, cwnd 60, SRTT 20 ms: pacing 2 * 60 * 1448 / 0.02 = 8.688 MB/s;
        // >> 10 = 8484 B = 5 segments.
        assert_eq!(autosize_segs(8_688_000.0, Some(Dur::from_ms(20)), MSS), 5);
        // Congestion avoidance, cwnd 33, SRTT 21 ms: 1.2 * 33 * 1448 / 0.021 = 2.73 MB/s;
        // 2667 B, one segment: the minimum, two.
        assert_eq!(autosize_segs(2_730_000.0, Some(Dur::from_ms(21)), MSS), 2);
        // 20 ms is 20 000 µs >> 9 = 39: no share of the GSO limit.
        assert_eq!(autosize_segs(0.0, Some(Dur::from_ms(20)), MSS), 2);
        // A 300 µs path (>> 9 = 0) adds the whole limit: 65215 / 1448 = 45 segments.
        assert_eq!(autosize_segs(0.0, Some(Dur::from_us(300)), MSS), 45);
        // 1.5 ms (>> 9 = 2): a quarter of it, 16303 B = 11 segments.
        assert_eq!(autosize_segs(0.0, Some(Dur::from_us(1500)), MSS), 11);
    }

    #[test]
    fn write_queue_buffers_are_the_gso_limit_or_half_the_peer_window() {
        // A large window: 65215 B rounded down to 45 segments of 1448 = 65160 B.
        assert_eq!(size_goal(4 << 20, MSS), 45 * MSS);
        // A 64 KiB window (65535 B): half is 32767 B, 22 segments.
        assert_eq!(size_goal(65_535, MSS), 22 * MSS);
        // A tiny window: never below one segment.
        assert_eq!(size_goal(1000, MSS), MSS);
    }

    fn ctx() -> DeferCtx {
        // Slow start: cwnd 60, 56 in flight (an ACK freed 2 and the window grew by 2), the
        // last transmission 0.5 ms ago, the oldest in flight sent 20 ms ago, SRTT 20 ms, a
        // unit is 5 segments and 20 segments wait in one buffer.
        DeferCtx {
            now: Time::ZERO + Dur::from_ms(100),
            recovering: false,
            last_xmit: Time::ZERO + Dur::from_us(99_500),
            cwnd: 60 * MSS,
            in_flight: 56 * MSS,
            smss: MSS,
            max_segs: 5,
            skb_len: 20 * MSS,
            more_after: false,
            head_sent_at: Some(Time::ZERO + Dur::from_ms(80)),
            srtt: Some(Dur::from_ms(20)),
        }
    }

    #[test]
    fn a_small_room_is_kept_for_a_bigger_unit_when_an_ack_is_due() {
        // Room 4 segments: less than a unit (5) and less than a third of the window (20); the
        // oldest transmission's ACK is due now (80 ms + SRTT 20 ms), within min(10, 1) ms.
        assert_eq!(should_defer(&ctx()), Defer::CwndLimited);
        // Due in 0.5 ms, within the 1 ms threshold: still worth waiting for.
        let soon = DeferCtx { head_sent_at: Some(Time::ZERO + Dur::from_us(80_500)), ..ctx() };
        assert_eq!(should_defer(&soon), Defer::CwndLimited);
        // The head buffer fits in the room: wait for more data.
        assert_eq!(should_defer(&DeferCtx { skb_len: 3 * MSS, ..ctx() }), Defer::MoreData);
    }

    #[test]
    fn each_exception_of_the_kernel_sends_at_once() {
        let send = |c: DeferCtx| assert_eq!(should_defer(&c), Defer::Send, "{c:?}");
        send(DeferCtx { recovering: true, ..ctx() });
        // Nothing sent for more than 1 ms.
        send(DeferCtx { last_xmit: Time::ZERO + Dur::from_us(98_900), ..ctx() });
        // Room for a full unit.
        send(DeferCtx { in_flight: 55 * MSS, ..ctx() });
        // A buffer in the middle of the queue that fits.
        send(DeferCtx { skb_len: 4 * MSS, more_after: true, ..ctx() });
        // A third of the window free (cwnd 12: 4 segments is a third), with 8-segment units.
        send(DeferCtx { cwnd: 12 * MSS, in_flight: 8 * MSS, max_segs: 8, ..ctx() });
        // The oldest transmission's ACK (sent at 85 ms, SRTT 20: due at 105 ms) is 5 ms away, more
        // than min(SRTT/2, 1 ms): no deferral. (Before 6.18's fix the head, 15 ms old, was
        // older than half an SRTT and the unit waited.)
        send(DeferCtx { head_sent_at: Some(Time::ZERO + Dur::from_ms(85)), ..ctx() });
        send(DeferCtx { head_sent_at: Some(Time::ZERO + Dur::from_ms(91)), ..ctx() });
        // Nothing in flight.
        send(DeferCtx { head_sent_at: None, ..ctx() });
    }
}
