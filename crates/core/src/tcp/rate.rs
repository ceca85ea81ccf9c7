//! Delivery-rate estimation, as Linux `net/ipv4/tcp_rate.c` (draft-cheng-iccrg-delivery-rate-
//! estimation): every transmission snapshots the subflow's delivery counters into the segment
//! ([`TxStamp`]); an ACK that delivers segments turns the snapshot of the most recently sent
//! of them into one rate sample, delivered bytes over the longer of the send and the ACK
//! intervals ([`RateSample`]).
//!
//! Only controllers that ask for it (Linux `cong_control`, i.e. BBR) pay for it: with
//! [`RateEstimator::enabled`] false nothing is stamped and no sample is built. The stamps
//! live in the scoreboard, one per outstanding segment (`tcp::scoreboard`).
//!
//! Deviations from the reference:
//! - counters are in bytes (Linux counts packets); the simulator sends one segment per packet,
//!   so the ratio is the same;
//! - times are the engine's nanoseconds (Linux: microseconds);
//! - a partial cumulative ACK of a segment counts its bytes as delivered but takes no sample
//!   from it (Linux samples an skb only once it is fully acknowledged or SACKed; with
//!   MSS-sized segments a partial ACK does not happen);
//! - no SACK reneging, so a sample is never discarded for it.

pub use crate::cc::input::RateSample;

use crate::units::{Dur, Seq, Time};

/// The delivery state when a segment was (re)transmitted (Linux `tcp_skb_cb.tx`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TxStamp {
    /// The subflow's `delivered` (bytes) at transmission.
    pub delivered: u64,
    /// When `delivered` last grew, at transmission (Linux `delivered_mstamp`).
    pub delivered_mstamp: Time,
    /// Start of the send phase the segment belongs to (Linux `first_tx_mstamp`).
    pub first_tx_mstamp: Time,
    /// Sent while the subflow was application-limited.
    pub is_app_limited: bool,
}

/// The per-subflow estimator state (Linux `tcp_sock` fields `delivered`, `delivered_mstamp`,
/// `first_tx_mstamp`, `app_limited`, and the sample under construction).
#[derive(Clone, Debug, Default)]
pub struct RateEstimator {
    /// Estimation on (the congestion controller uses rate samples).
    pub enabled: bool,
    /// Bytes delivered (cumulatively ACKed or SACKed for the first time) since the start.
    pub delivered: u64,
    /// When `delivered` last grew.
    pub delivered_mstamp: Time,
    /// Send time of the most recently delivered segment's successor phase (Linux
    /// `first_tx_mstamp`: the start of the current send phase).
    pub first_tx_mstamp: Time,
    /// End of the application-limited bubble: `delivered + in flight` when the subflow ran
    /// out of data (Linux `app_limited`); 0 = not application-limited.
    pub app_limited: u64,
    rs: RateSample,
}

impl RateEstimator {
    /// A new estimator; `enabled` as the congestion controller asks. Not application-limited:
    /// Linux starts with `app_limited = ~0U`, which its wrapping comparison in
    /// `tcp_rate_gen` clears at the handshake's ACK, before any data is sent.
    pub fn new(enabled: bool) -> RateEstimator {
        RateEstimator { enabled, ..Default::default() }
    }

    /// Linux `tcp_rate_skb_sent`: the snapshot for a segment sent at `now`; `idle`: nothing
    /// was outstanding before it (the send phase and the delivery clock restart).
    pub fn on_sent(&mut self, now: Time, idle: bool) -> TxStamp {
        if idle {
            self.first_tx_mstamp = now;
            self.delivered_mstamp = now;
        }
        TxStamp {
            delivered: self.delivered,
            delivered_mstamp: self.delivered_mstamp,
            first_tx_mstamp: self.first_tx_mstamp,
            is_app_limited: self.app_limited != 0,
        }
    }

    /// Linux `tcp_rate_skb_delivered`: a segment (`end`, last sent at `sent_at`, snapshot
    /// `tx`, `retrans`: that transmission was a retransmission) was delivered for the first
    /// time. The most recently sent delivered segment (ties: the highest end sequence)
    /// provides the sample.
    pub fn on_delivered(&mut self, end: Seq, sent_at: Time, tx: &TxStamp, retrans: bool) {
        let rs = &mut self.rs;
        let newer = rs.prior_delivered.is_none()
            || sent_at > rs.last_sent
            || (sent_at == rs.last_sent && end > rs.last_end_seq);
        if newer {
            rs.prior_delivered = Some(tx.delivered);
            rs.prior_mstamp = tx.delivered_mstamp;
            rs.is_app_limited = tx.is_app_limited;
            rs.is_retrans = retrans;
            rs.last_end_seq = end;
            rs.last_sent = sent_at;
            self.first_tx_mstamp = sent_at;
            rs.snd_interval = sent_at.since(tx.first_tx_mstamp);
        }
    }

    /// Starts the sample of one ACK (Linux: the `rate_sample` on `tcp_ack`'s stack).
    pub fn begin_ack(&mut self, prior_in_flight: u64) {
        self.rs = RateSample { prior_in_flight, ..Default::default() };
    }

    /// Linux `tcp_rate_gen`: completes the sample after the ACK delivered `delivered` bytes
    /// (already added to [`RateEstimator::delivered`]) and marked `lost` bytes lost.
    /// A sample shorter than `min_rtt` is discarded as implausible (it would overestimate).
    pub fn gen(&mut self, now: Time, delivered: u64, lost: u64, rtt: Option<Dur>, min_rtt: Option<Dur>) -> RateSample {
        // The application-limited bubble is gone once delivered passes its end.
        if self.app_limited != 0 && self.delivered > self.app_limited {
            self.app_limited = 0;
        }
        if delivered > 0 {
            self.delivered_mstamp = now;
        }
        let rs = &mut self.rs;
        rs.acked_sacked = delivered;
        rs.losses = lost;
        rs.rtt = rtt;
        let Some(prior) = rs.prior_delivered else {
            return *rs;
        };
        rs.delivered = Some(self.delivered - prior);
        let ack_interval = now.since(rs.prior_mstamp);
        let interval = rs.snd_interval.max(ack_interval);
        if min_rtt.is_some_and(|m| interval < m) {
            return *rs;
        }
        rs.interval = Some(interval);
        *rs
    }

    /// Linux `tcp_rate_check_app_limited`, when the application writes: the subflow is
    /// application-limited if it has less than a segment to send (`unsent` bytes), its window
    /// is not full and every lost segment has been retransmitted. The bubble ends when the
    /// data now in flight has been delivered.
    pub fn check_app_limited(&mut self, unsent: u64, smss: u64, in_flight: u64, cwnd: u64, lost_not_retrans: bool) {
        if unsent < smss && in_flight + smss <= cwnd && !lost_not_retrans {
            self.app_limited = (self.delivered + in_flight).max(1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    /// Sends `n` segments of 1000 bytes, one every `gap` ns from `t0`, with the estimator's
    /// current snapshot; returns (end, sent_at, stamp) per segment.
    fn send(r: &mut RateEstimator, t0: u64, gap: u64, n: u64, first_seq: u64, idle: bool) -> Vec<(Seq, Time, TxStamp)> {
        (0..n)
            .map(|i| {
                let t = Time(t0 + i * gap);
                (Seq(first_seq + (i + 1) * 1000), t, r.on_sent(t, idle && i == 0))
            })
            .collect()
    }

    #[test]
    fn an_ack_clocked_window_gives_window_over_rtt() {
        // 10 segments of 1000 B sent 1 ms apart from t = 0 over a path of 40 ms RTT: the ACK
        // of segment k (k = 1..10) arrives at 40 + (k − 1) ms. Every first-flight segment was
        // stamped with delivered = 0 and delivered_mstamp = 0, so the ACK of segment k gives
        // 1000 k bytes over max(send phase (k − 1) ms, ACK phase 40 + (k − 1) ms).
        // Each ACK releases one new segment (ACK clocking, cwnd = 10): segment 11 leaves at
        // 40 ms stamped with delivered = 1000, delivered_mstamp = 40 ms and first_tx = 0 (the
        // send time of segment 1, the most recently sent delivered one). Its ACK at 80 ms
        // finds delivered = 11 000: 10 000 B over max(40 − 0, 80 − 40) = 40 ms, i.e.
        // 250 000 B/s — exactly cwnd / RTT = 10 000 B / 40 ms.
        let mut r = RateEstimator::new(true);
        let first = send(&mut r, 0, MS, 10, 0, true);
        let mut second = Vec::new();
        for (k, (end, sent, tx)) in first.iter().enumerate() {
            let now = Time(sent.0 + 40 * MS);
            r.begin_ack(0);
            r.on_delivered(*end, *sent, tx, false);
            r.delivered += 1000;
            let rs = r.gen(now, 1000, 0, None, Some(Dur(40 * MS)));
            assert_eq!(rs.delivered, Some(1000 * (k as u64 + 1)));
            assert_eq!(rs.interval, Some(Dur((40 + k as u64) * MS)));
            second.push((Seq(10_000 + (k as u64 + 1) * 1000), now, r.on_sent(now, false)));
        }
        let (end, sent, tx) = second[0];
        assert_eq!((tx.delivered, tx.delivered_mstamp, tx.first_tx_mstamp), (1000, Time(40 * MS), Time(0)));
        r.begin_ack(0);
        r.on_delivered(end, sent, &tx, false);
        r.delivered += 1000;
        let rs = r.gen(Time(80 * MS), 1000, 0, None, Some(Dur(40 * MS)));
        assert_eq!(rs.delivered, Some(10_000));
        assert_eq!(rs.interval, Some(Dur(40 * MS)));
        let bytes_per_s = rs.delivered.unwrap() as f64 / rs.interval.unwrap().secs_f64();
        assert!((bytes_per_s - 250_000.0).abs() < 1e-6, "{bytes_per_s}");
    }

    #[test]
    fn the_longer_of_send_and_ack_phases_is_used() {
        // Two segments sent 10 ms apart, both ACKed together 1 ms after the second one's send
        // + 20 ms RTT: send phase 10 ms, ACK phase (from delivered_mstamp = first send) 31 ms.
        let mut r = RateEstimator::new(true);
        let segs = send(&mut r, 0, 10 * MS, 2, 0, true);
        r.begin_ack(2000);
        for (end, sent, tx) in &segs {
            r.on_delivered(*end, *sent, tx, false);
        }
        r.delivered += 2000;
        let rs = r.gen(Time(31 * MS), 2000, 0, None, Some(Dur(20 * MS)));
        assert_eq!(rs.delivered, Some(2000));
        assert_eq!(rs.interval, Some(Dur(31 * MS)));
        assert_eq!(rs.prior_in_flight, 2000);
    }

    #[test]
    fn a_sample_shorter_than_min_rtt_is_discarded() {
        // One segment ACKed 5 ms after it was sent while min_rtt is 20 ms (a compressed ACK
        // burst): the interval is implausible and the sample has no interval.
        let mut r = RateEstimator::new(true);
        let segs = send(&mut r, 0, MS, 1, 0, true);
        r.begin_ack(1000);
        r.on_delivered(segs[0].0, segs[0].1, &segs[0].2, false);
        r.delivered += 1000;
        let rs = r.gen(Time(5 * MS), 1000, 0, None, Some(Dur(20 * MS)));
        assert_eq!(rs.delivered, Some(1000));
        assert_eq!(rs.interval, None);
    }

    #[test]
    fn the_app_limited_bubble_ends_once_its_data_is_delivered() {
        let mut r = RateEstimator::new(true);
        assert!(!r.on_sent(Time(0), true).is_app_limited);
        // Running out of data with 3000 B in flight and 5000 B delivered: the bubble ends when
        // delivered passes 8000 B.
        r.delivered = 5000;
        r.check_app_limited(0, 1000, 3000, 10_000, false);
        assert_eq!(r.app_limited, 8000);
        r.delivered = 8000;
        r.begin_ack(0);
        r.gen(Time(2 * MS), 0, 0, None, None);
        assert_eq!(r.app_limited, 8000);
        r.delivered = 8001;
        r.begin_ack(0);
        r.gen(Time(3 * MS), 1, 0, None, None);
        assert_eq!(r.app_limited, 0);
        // A full window is not application-limited.
        r.check_app_limited(0, 1000, 10_000, 10_000, false);
        assert_eq!(r.app_limited, 0);
    }
}
