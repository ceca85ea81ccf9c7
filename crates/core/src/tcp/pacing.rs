//! Per-subflow pacing, as Linux's internal TCP pacing (`tcp_internal_pacing` with the
//! earliest-departure-time model of Linux ≥ 4.20: `tcp_update_skb_after_send`,
//! `tcp_pacing_check`, the `pacing_timer` hrtimer).
//!
//! A subflow is paced only while its congestion controller sets a pacing rate (BBR's
//! `sk_pacing_rate`); the other controllers leave it at 0 and nothing here runs for them.
//! Every transmission moves the earliest departure time of the next segment (`tcp_wstamp_ns`)
//! by len / rate; a send attempt before that time is refused and the pacing timer is armed
//! for it (the host wakes the sender then).
//!
//! Deviations from the reference:
//! - the simulator sends one segment per packet, so there are no TSO/GSO bursts
//!   (`tcp_tso_autosize`): every segment is paced on its own, len = its payload bytes (Linux
//!   uses the skb's length, payload of all its segments, the same per byte);
//! - the pacing timer fires exactly at the departure time (Linux's hrtimer has slack and the
//!   softirq that sends runs a little later).

use crate::units::{Dur, Time};

/// Linux's default `tcp_pacing_ss_ratio` and `tcp_pacing_ca_ratio` (200 %, 120 %).
pub const SS_RATIO: f64 = 2.0;
pub const CA_RATIO: f64 = 1.2;

/// Linux's pacing rate (bytes/s): the rate-based controller's (`controller`, 0 = none), else
/// `tcp_update_pacing_rate`, max(cwnd, `packets_out`) / SRTT times `ss_ratio` while cwnd <
/// ssthresh / 2 and `ca_ratio` otherwise (SRTT taken as 1 s before any sample). `out` counts
/// everything sent and not cumulatively acknowledged (`packets_out`, in bytes), so during a
/// recovery, where SACKed data leaves the pipe but not `packets_out`, the rate stays at the
/// flight the subflow had.
///
/// `cwnd` and `out` count segments of `mss.0` payload bytes (the sender MSS, `tcp_current_mss`);
/// Linux counts them in packets and multiplies by `mss.1`, `tp->mss_cache`, the MSS without
/// the options that vary per segment (`tcp_sync_mss`): on an MPTCP subflow the DSS option
/// is in the first and not in the second (1424 against 1448 payload bytes at MTU 1500 with
/// timestamps), so the kernel's rate is 1448/1424 of the payload rate the window carries.
pub fn linux_rate(
    controller: u64,
    cwnd: u64,
    ssthresh: u64,
    out: u64,
    srtt: Option<Dur>,
    ratios: (f64, f64),
    mss: (u64, u64),
) -> f64 {
    if controller > 0 {
        return controller as f64;
    }
    let srtt = srtt.map_or(1.0, |d| d.secs_f64()).max(1e-9);
    let ratio = if cwnd < ssthresh / 2 { ratios.0 } else { ratios.1 };
    let per_segment = mss.1 as f64 / mss.0.max(1) as f64;
    ratio * cwnd.max(out).max(1) as f64 * per_segment / srtt
}

/// Segments a socket sends before pacing applies (Linux `tcp_update_skb_after_send`:
/// `tp->data_segs_out >= 10`, so that the initial window leaves at once).
pub const UNPACED_SEGMENTS: u64 = 10;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Pacer {
    /// Pacing rate (payload bytes per second); 0 = unpaced.
    pub rate: u64,
    /// Earliest departure of the next segment (Linux `tcp_wstamp_ns`).
    pub next_at: Time,
    /// Data segments sent so far (Linux `data_segs_out`).
    pub segs_out: u64,
}

impl Pacer {
    /// Linux `tcp_pacing_check`, negated: the pacing gate lets a segment go at `now`.
    pub fn open(&self, now: Time) -> bool {
        self.rate == 0 || self.next_at <= now
    }

    /// The time it takes to send `len` bytes at the pacing rate (Linux:
    /// `len * NSEC_PER_SEC / sk_pacing_rate`).
    pub fn interval(&self, len: u64) -> Dur {
        if self.rate == 0 {
            return Dur::ZERO;
        }
        Dur((len as u128 * 1_000_000_000 / self.rate as u128) as u64)
    }

    /// Linux `tcp_update_skb_after_send`: a segment of `len` payload bytes left at `now`.
    /// The next may leave len / rate later; a segment sent late (after `next_at`) earns a
    /// credit of up to half its interval for the lateness (Linux's allowance for OS jitter).
    #[inline]
    pub fn on_sent(&mut self, now: Time, len: u64) {
        let prior = self.next_at;
        self.next_at = self.next_at.max(now);
        if self.rate != 0 && self.segs_out >= UNPACED_SEGMENTS {
            self.pace(prior, len);
        }
        self.segs_out += 1;
    }

    /// `on_sent`'s pacing step (out of line: most subflows are unpaced): the next segment
    /// leaves `len` / rate after this one, less the credit for lateness, from `prior` (the
    /// departure time this segment was given).
    #[inline(never)]
    fn pace(&mut self, prior: Time, len: u64) {
        let mut d = self.interval(len);
        let credit = self.next_at.since(prior);
        d = d.saturating_sub(Dur(d.0 / 2).min(credit));
        self.next_at += d;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_segment_is_released_len_over_rate_after_the_previous_one() {
        // 1448 B at 1.81 MB/s (14.48 Mbit/s): 1448 / 1 810 000 s = 800 µs apart.
        let mut p = Pacer { rate: 1_810_000, segs_out: UNPACED_SEGMENTS, ..Default::default() };
        assert_eq!(p.interval(1448), Dur(800_000));
        let t0 = Time(5_000_000);
        p.next_at = t0;
        p.on_sent(t0, 1448);
        assert_eq!(p.next_at, Time(5_800_000));
        assert!(!p.open(Time(5_799_999)));
        assert!(p.open(Time(5_800_000)));
        p.on_sent(Time(5_800_000), 1448);
        assert_eq!(p.next_at, Time(6_600_000));
    }

    #[test]
    fn the_initial_window_is_not_paced() {
        // The first 10 data segments leave back to back; the 11th starts the pacing.
        let mut p = Pacer { rate: 1_000_000, ..Default::default() };
        for _ in 0..UNPACED_SEGMENTS {
            p.on_sent(Time(0), 1000);
            assert!(p.open(Time(0)));
        }
        p.on_sent(Time(0), 1000);
        assert_eq!(p.next_at, Time(1_000_000));
    }

    #[test]
    fn a_late_segment_earns_at_most_half_an_interval() {
        // Rate 1 MB/s, 1000 B: 1 ms per segment. Sent 0.3 ms late: the next waits 0.7 ms;
        // sent 5 ms late (idle): it waits half an interval, 0.5 ms.
        let mut p = Pacer { rate: 1_000_000, segs_out: UNPACED_SEGMENTS, next_at: Time(1_000_000) };
        p.on_sent(Time(1_300_000), 1000);
        assert_eq!(p.next_at, Time(2_000_000));
        p.on_sent(Time(7_000_000), 1000);
        assert_eq!(p.next_at, Time(7_500_000));
    }

    /// `tcp_update_pacing_rate` on an MPTCP subflow multiplies the window in packets by
    /// `mss_cache`, the MSS without the DSS option (1448 B at MTU 1500 with timestamps), not by
    /// the 1424 B its segments carry. Measured on UML 7.3.4 (`rcvbuf-fixed-256kb-ratio20`, seed 1,
    /// the server's second WiFi push, after the first ACKs): cwnd 19, `packets_out` 17, SRTT
    /// 12.5069 ms (`tcp_probe`: 12506 µs, in 1/8 µs 100 055), and `mptcp_subflow_get_send`
    /// read `sk_pacing_rate` = 4 399 500 B/s = 2 × 19 × 1448 × 8·10⁶ / 100 055 (with 1424 B:
    /// 4 326 580). `tcp_tso_autosize` then cuts units of 4399500 >> 10 = 4296 B, 3 segments
    /// of 1424 B; 1424-based it would be 4225 B, 2 segments: the kernel's 3-segment unit did
    /// not fit the 2 segments of room, and it deferred.
    #[test]
    fn the_pacing_rate_counts_the_mss_without_the_dss_option() {
        let srtt = Some(Dur(100_055 * 1000 / 8));
        let rate = |mss| linux_rate(0, 19 * 1424, u64::MAX, 17 * 1424, srtt, (SS_RATIO, CA_RATIO), mss);
        let kernel = rate((1424, 1448));
        assert!((kernel - 4_399_500.0).abs() < 1.0, "{kernel}");
        assert_eq!(crate::tcp::tso::autosize_segs(kernel, Some(Dur::from_ms(10)), 1424), 3);
        let payload = rate((1424, 1424));
        assert!((payload - 4_326_580.0).abs() < 1.0, "{payload}");
        assert_eq!(crate::tcp::tso::autosize_segs(payload, Some(Dur::from_ms(10)), 1424), 2);
    }

    #[test]
    fn an_unpaced_subflow_is_always_open() {
        let mut p = Pacer::default();
        p.on_sent(Time(10), 1000);
        assert!(p.open(Time(0)));
        assert_eq!(p.interval(1000), Dur::ZERO);
    }
}
