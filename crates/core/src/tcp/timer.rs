//! Timers of a sans-IO endpoint: a deadline or nothing. The endpoint never sleeps; it reports
//! its earliest deadline (`poll_timeout`) and the driver calls back at that time, when the
//! endpoint fires whatever has [`Timer::expired`].

use crate::units::Time;

/// One timer: armed with a deadline, or stopped.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Timer(Option<Time>);

impl Timer {
    /// Arms the timer for `at`, replacing any earlier deadline (Linux `sk_reset_timer`).
    #[inline]
    pub fn arm(&mut self, at: Time) {
        self.0 = Some(at);
    }

    /// Stops the timer (Linux `sk_stop_timer`).
    #[inline]
    pub fn stop(&mut self) {
        self.0 = None;
    }

    /// Arms the timer for `at`, or stops it with None.
    #[inline]
    pub fn set(&mut self, at: Option<Time>) {
        self.0 = at;
    }

    /// The deadline, if armed.
    #[inline]
    pub fn deadline(self) -> Option<Time> {
        self.0
    }

    #[inline]
    pub fn is_armed(self) -> bool {
        self.0.is_some()
    }

    /// Armed with a deadline at or before `now`.
    #[inline]
    pub fn expired(self, now: Time) -> bool {
        self.0.is_some_and(|t| t <= now)
    }
}

/// The timers of one subflow. Linux multiplexes the retransmission, probe and reordering
/// timers on one `icsk_retransmit_timer` (`ICSK_TIME_RETRANS`, `ICSK_TIME_LOSS_PROBE`,
/// `ICSK_TIME_REO_TIMEOUT`); here each has its own deadline and the subflow fires a due
/// probe or reordering timer before a due RTO (`Subflow::on_recovery_timers`).
#[derive(Clone, Copy, Debug, Default)]
pub struct SubflowTimers {
    /// Handshake retransmission: SYN, SYN/ACK, the MP_JOIN third ACK.
    pub handshake: Timer,
    /// Delayed ACK (Linux `icsk_delack_timer`).
    pub delack: Timer,
    /// Retransmission timeout (RFC 6298).
    pub rto: Timer,
    /// RACK reordering timer (RFC 8985 §6.2 step 5).
    pub reorder: Timer,
    /// Tail loss probe timer (RFC 8985 §7.2).
    pub probe: Timer,
    /// Pacing timer (Linux `tcp_sock.pacing_timer`): the pacing gate opens.
    pub pace: Timer,
}

impl SubflowTimers {
    /// Every deadline, in the order above (the endpoint's next wake-up is the earliest over
    /// all its subflows'; `poll_timeout` is on the per-packet path, so this is a plain copy).
    #[inline]
    pub fn deadlines(&self) -> [Option<Time>; 6] {
        [self.handshake.0, self.delack.0, self.rto.0, self.reorder.0, self.probe.0, self.pace.0]
    }

    /// The earliest of the retransmission, reordering, probe and pacing deadlines (all but
    /// the handshake and delayed-ACK timers).
    #[inline]
    pub fn earliest_xmit(&self) -> Option<Time> {
        [self.rto.0, self.reorder.0, self.probe.0, self.pace.0].into_iter().fold(None, crate::units::earliest)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_timer_expires_at_its_deadline_and_not_once_stopped() {
        let mut t = Timer::default();
        assert!(!t.is_armed() && !t.expired(Time(u64::MAX)));
        t.arm(Time(10));
        assert!(!t.expired(Time(9)) && t.expired(Time(10)));
        t.stop();
        assert_eq!(t.deadline(), None);
    }

    #[test]
    fn the_xmit_deadline_is_the_earliest_of_the_sending_timers() {
        let mut t = SubflowTimers::default();
        t.handshake.arm(Time(1));
        t.delack.arm(Time(2));
        assert_eq!(t.earliest_xmit(), None);
        t.pace.arm(Time(7));
        t.rto.arm(Time(5));
        assert_eq!(t.earliest_xmit(), Some(Time(5)));
        assert_eq!(t.deadlines(), [Some(Time(1)), Some(Time(2)), Some(Time(5)), None, None, Some(Time(7))]);
    }
}
