//! Linux's TCP metrics cache (`net/ipv4/tcp_metrics.c`): per destination, what a connection
//! learned is kept when it closes (`tcp_update_metrics`) and applied to the next connection
//! to the same destination when its handshake completes (`tcp_init_metrics`, called from
//! `tcp_init_transfer`). An MPTCP subflow is a TCP socket of its own: it reads and writes
//! the entry of its own destination address.
//!
//! Saved when a connection closes, unless `tcp_no_metrics_save` (the [`MetricsSave`] switch):
//! - a connection that ended with its RTO backed off or without an RTT estimate saves
//!   nothing and resets a cached RTT to 0 ("this session failed to estimate rtt");
//! - RTT: the connection's SRTT if that is at least the cached value, otherwise the cached
//!   value moves 1/8 of the way down to it ("rtt overestimation is always better");
//! - RTT variance: m = max(|cached RTT − SRTT|, the connection's mean deviation); the cached
//!   value becomes m if m is at least it, otherwise moves 1/4 of the way down to m;
//! - ssthresh (in segments; unless `tcp_no_ssthresh_metrics_save`, Linux ≥ 5.6): still in
//!   the initial slow start (ssthresh never set), cwnd/2 if a value is cached and cwnd/2
//!   exceeds it; in congestion avoidance (cwnd > ssthresh) with the congestion state Open,
//!   max(cwnd/2, ssthresh); otherwise ssthresh if a value is cached and ssthresh exceeds it.
//!
//! Applied when a subflow's handshake completes: ssthresh = the cached value if one is
//! set (else it stays infinite); if the cached RTT exceeds the handshake's RTT sample, the
//! RTO until the first data RTT sample is RTT + max(2·RTT, rto_min) (`tcp_rtt_estimator`'s
//! first-sample RTO from the cached RTT), the estimator itself untouched.
//!
//! Deviations, each because the engine has nothing for it to act on: the route-metric locks
//! (`ip route … lock`) are never set, so every value is saved; the cached cwnd is applied by
//! Linux only as a locked clamp, so it is not kept; the reordering degree is saved only when
//! a connection's differs from `tcp_reordering` and the engine's is fixed at `dupthresh`, so
//! by the kernel's rule it is never saved; entries do not age out (Linux's one hour,
//! `TCP_METRICS_TIMEOUT`, is longer than any run). The RTT variance is saved but, as in
//! current Linux, not applied. Without a FIN exchange, a connection closes when its sender
//! holds no unacknowledged data of a finished application.
//!
//! Kernel versions. The save rule is the 3.x kernels' one: Linux ≥ 4.3 tests "not in slow
//! start" (`!tcp_in_slow_start`, cwnd ≥ ssthresh) where 3.x tests cwnd > ssthresh, so a
//! connection closing with cwnd exactly at ssthresh saves max(cwnd/2, ssthresh) there and
//! only a larger ssthresh here. The apply rule is Linux ≥ 3.13's (the cached RTT sets the
//! first RTO only); kernels before 3.13, such as the 3.11 of the bufferbloat study, also
//! started the RTT estimator from the cached RTT and variance. `tcp_init_metrics`'s other
//! branch, the 3 s RTO of RFC 6298 §5.7 when the handshake gave no RTT sample, is not
//! modelled (with or without an entry): a subflow whose SYN or SYN/ACK was retransmitted
//! keeps the initial RTO until its first data sample.

use crate::cc::CaState;
use crate::config::MetricsSave;
use crate::tcp::subflow::Subflow;
use crate::units::Dur;

/// One destination's entry (`struct tcp_metrics_block`'s values; 0 = not set).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Metrics {
    pub rtt: Dur,
    pub rttvar: Dur,
    /// Slow-start threshold in segments.
    pub ssthresh: u64,
}

/// What a closing connection (or subflow) hands to [`Metrics::update`].
#[derive(Clone, Copy, Debug)]
pub struct Closing {
    pub srtt: Option<Dur>,
    /// The RTT mean deviation (RFC 6298 RTTVAR; Linux `mdev` / 4).
    pub mdev: Dur,
    /// Consecutive RTO backoffs at the close.
    pub backoff: u32,
    /// Congestion window and slow-start threshold in segments; ssthresh None = infinite
    /// (`tcp_in_initial_slowstart`).
    pub cwnd: u64,
    pub ssthresh: Option<u64>,
    pub ca: CaState,
}

/// What [`Metrics::initial`] sets on a new connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Initial {
    /// Slow-start threshold in segments (None: stays infinite).
    pub ssthresh: Option<u64>,
    /// RTO until the first data RTT sample (None: the estimator's own).
    pub rto: Option<Dur>,
}

impl Closing {
    /// A subflow's state as [`Metrics::update`] reads it when the connection closes.
    pub fn of(s: &Subflow) -> Closing {
        let smss = s.w.smss.max(1);
        Closing {
            srtt: s.rtt.srtt(),
            mdev: s.rtt.rttvar(),
            backoff: s.rtt.backoff,
            cwnd: s.w.cwnd / smss,
            ssthresh: (s.w.ssthresh != u64::MAX).then(|| s.w.ssthresh / smss),
            ca: s.ca(),
        }
    }
}

impl Metrics {
    /// `tcp_update_metrics` on `entry` (None: no entry for the destination yet). Returns the
    /// entry to store, or None when there is none to store.
    pub fn update(entry: Option<Metrics>, c: &Closing, save: MetricsSave) -> Option<Metrics> {
        if save == MetricsSave::Off {
            return entry;
        }
        let srtt = match c.srtt {
            Some(s) if c.backoff == 0 => s,
            // Failed to estimate the RTT: reset the cached one, save nothing else, create nothing.
            _ => return entry.map(|m| Metrics { rtt: Dur::ZERO, ..m }),
        };
        let mut m = entry.unwrap_or_default();
        let old = m.rtt;
        m.rtt = if srtt >= old { srtt } else { Dur(old.0 - (old.0 - srtt.0) / 8) };
        let dev = Dur(old.0.abs_diff(srtt.0)).max(c.mdev);
        m.rttvar = if dev >= m.rttvar { dev } else { Dur(m.rttvar.0 - (m.rttvar.0 - dev.0) / 4) };
        if save == MetricsSave::All {
            let cached = m.ssthresh;
            match c.ssthresh {
                None => {
                    if cached > 0 && c.cwnd / 2 > cached {
                        m.ssthresh = c.cwnd / 2;
                    }
                }
                Some(ss) if c.cwnd > ss && c.ca == CaState::Open => m.ssthresh = (c.cwnd / 2).max(ss),
                Some(ss) => {
                    if cached > 0 && ss > cached {
                        m.ssthresh = ss;
                    }
                }
            }
        }
        Some(m)
    }

    /// `tcp_init_metrics` from this entry, the handshake's RTT sample `srtt` (None when the
    /// handshake was retransmitted) and the connection's `rto_min`.
    pub fn initial(&self, srtt: Option<Dur>, rto_min: Dur) -> Initial {
        let crtt = self.rtt;
        Initial {
            ssthresh: (self.ssthresh > 0).then_some(self.ssthresh),
            rto: (crtt > srtt.unwrap_or(Dur::ZERO)).then(|| crtt + Dur(2 * crtt.0).max(rto_min)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> Dur {
        Dur::from_ms(x)
    }

    fn closing(srtt: u64, cwnd: u64, ssthresh: Option<u64>, ca: CaState) -> Closing {
        Closing { srtt: Some(ms(srtt)), mdev: ms(10), backoff: 0, cwnd, ssthresh, ca }
    }

    #[test]
    fn congestion_avoidance_saves_half_cwnd_or_ssthresh_and_the_next_connection_starts_there() {
        // cwnd 20, ssthresh 8, Open: max(20/2, 8) = 10 segments. A new entry's RTT is the
        // SRTT (100 ms ≥ 0), its variance max(|0 − 100|, 10) = 100 ms.
        let m = Metrics::update(None, &closing(100, 20, Some(8), CaState::Open), MetricsSave::All).unwrap();
        assert_eq!(m, Metrics { rtt: ms(100), rttvar: ms(100), ssthresh: 10 });
        // Handshake sample 60 ms < cached 100 ms: RTO = 100 + max(2·100, 200) = 300 ms.
        assert_eq!(m.initial(Some(ms(60)), ms(200)), Initial { ssthresh: Some(10), rto: Some(ms(300)) });
        // A handshake sample of 100 ms is not below the cached RTT: the estimator's RTO stays.
        assert_eq!(m.initial(Some(ms(100)), ms(200)).rto, None);
        // 30 ms cached: 30 + max(60, 200) = 230 ms; without a sample (retransmitted SYN) too.
        let small = Metrics { rtt: ms(30), ..m };
        assert_eq!(small.initial(None, ms(200)).rto, Some(ms(230)));
    }

    #[test]
    fn initial_slow_start_raises_only_a_cached_ssthresh() {
        let fresh = closing(50, 30, None, CaState::Open);
        // Nothing cached: ssthresh stays unset, the next connection's infinite.
        let m = Metrics::update(None, &fresh, MetricsSave::All).unwrap();
        assert_eq!(m.ssthresh, 0);
        assert_eq!(m.initial(Some(ms(50)), ms(200)).ssthresh, None);
        // 5 cached, cwnd/2 = 15 > 5: raised to 15; 20 cached: kept.
        let five = Metrics { ssthresh: 5, ..m };
        assert_eq!(Metrics::update(Some(five), &fresh, MetricsSave::All).unwrap().ssthresh, 15);
        let twenty = Metrics { ssthresh: 20, ..m };
        assert_eq!(Metrics::update(Some(twenty), &fresh, MetricsSave::All).unwrap().ssthresh, 20);
    }

    #[test]
    fn recovery_or_slow_start_after_loss_saves_ssthresh_only_above_a_cached_one() {
        // In recovery (not Open): ssthresh 12 is saved only over a smaller cached value.
        let rec = closing(50, 14, Some(12), CaState::Recovery);
        assert_eq!(Metrics::update(None, &rec, MetricsSave::All).unwrap().ssthresh, 0);
        let seven = Metrics { ssthresh: 7, ..Metrics::default() };
        assert_eq!(Metrics::update(Some(seven), &rec, MetricsSave::All).unwrap().ssthresh, 12);
        // Slow start below ssthresh after a loss (cwnd 4 < 12), Open: same rule.
        let ss = closing(50, 4, Some(12), CaState::Open);
        let thirty = Metrics { ssthresh: 30, ..Metrics::default() };
        assert_eq!(Metrics::update(Some(thirty), &ss, MetricsSave::All).unwrap().ssthresh, 30);
    }

    #[test]
    fn rtt_is_kept_high_and_decays_by_an_eighth_the_variance_by_a_quarter() {
        let m = Metrics { rtt: ms(200), rttvar: ms(30), ssthresh: 0 };
        // SRTT 120 < 200: 200 − 80/8 = 190 ms; deviation max(80, 10) = 80 ≥ 30: 80 ms.
        let m = Metrics::update(Some(m), &closing(120, 10, None, CaState::Open), MetricsSave::All).unwrap();
        assert_eq!((m.rtt, m.rttvar), (ms(190), ms(80)));
        // SRTT 186: 190 − 4/8 = 189.5 ms; deviation max(4, 10) = 10 < 80: 80 − 70/4 = 62.5 ms.
        let m = Metrics::update(Some(m), &closing(186, 10, None, CaState::Open), MetricsSave::All).unwrap();
        assert_eq!((m.rtt, m.rttvar), (Dur(189_500_000), Dur(62_500_000)));
        // A larger SRTT replaces the cached RTT at once.
        let m = Metrics::update(Some(m), &closing(400, 10, None, CaState::Open), MetricsSave::All).unwrap();
        assert_eq!(m.rtt, ms(400));
    }

    #[test]
    fn a_failed_estimate_resets_the_rtt_and_the_switches_hold() {
        let m = Metrics { rtt: ms(80), rttvar: ms(20), ssthresh: 9 };
        let backed_off = Closing { backoff: 2, ..closing(80, 20, Some(8), CaState::Open) };
        assert_eq!(Metrics::update(Some(m), &backed_off, MetricsSave::All), Some(Metrics { rtt: Dur::ZERO, ..m }));
        assert_eq!(Metrics::update(None, &backed_off, MetricsSave::All), None, "no entry is created");
        let ca = closing(100, 20, Some(8), CaState::Open);
        // tcp_no_ssthresh_metrics_save: RTT saved, ssthresh not.
        let n = Metrics::update(None, &ca, MetricsSave::NoSsthresh).unwrap();
        assert_eq!((n.rtt, n.ssthresh), (ms(100), 0));
        // tcp_no_metrics_save: nothing changes.
        assert_eq!(Metrics::update(Some(m), &ca, MetricsSave::Off), Some(m));
        assert_eq!(Metrics::update(None, &ca, MetricsSave::Off), None);
    }
}
