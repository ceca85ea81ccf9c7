//! Timers of a sans-IO endpoint: a deadline or nothing. The endpoint never sleeps; it reports
//! its earliest deadline (`poll_timeout`) and the driver calls back at that time, when the
//! endpoint fires whatever has [`Timer::expired`].

use std::fmt;

use crate::units::Time;

/// One timer: armed with a deadline, or stopped. The deadline is kept in nanoseconds with
/// `u64::MAX` for a stopped timer, so the earliest of several is a plain minimum; a deadline
/// at the end of time ([`Time::MAX`]) never comes and is the same as none.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Timer(u64);

/// A stopped timer's deadline.
const NEVER: u64 = u64::MAX;

impl Default for Timer {
    fn default() -> Timer {
        Timer(NEVER)
    }
}

impl fmt::Debug for Timer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Timer").field(&self.deadline()).finish()
    }
}

impl Timer {
    /// Arms the timer for `at`, replacing any earlier deadline (Linux `sk_reset_timer`).
    #[inline]
    pub fn arm(&mut self, at: Time) {
        self.0 = at.0;
    }

    /// Stops the timer (Linux `sk_stop_timer`).
    #[inline]
    pub fn stop(&mut self) {
        self.0 = NEVER;
    }

    /// Arms the timer for `at`, or stops it with None.
    #[inline]
    pub fn set(&mut self, at: Option<Time>) {
        self.0 = at.map_or(NEVER, |t| t.0);
    }

    /// The deadline, if armed.
    #[inline]
    pub fn deadline(self) -> Option<Time> {
        (self.0 != NEVER).then_some(Time(self.0))
    }

    #[inline]
    pub fn is_armed(self) -> bool {
        self.0 != NEVER
    }

    /// Armed with a deadline at or before `now`.
    #[inline]
    pub fn expired(self, now: Time) -> bool {
        self.0 <= now.0 && self.0 != NEVER
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
    /// The earliest deadline of all six timers (the endpoint's next wake-up is the earliest
    /// over all its subflows'; `poll_timeout` is on the per-packet path, so this is a plain
    /// minimum).
    #[inline]
    pub fn earliest(&self) -> Option<Time> {
        Timer(self.earliest_ns()).deadline()
    }

    /// [`Self::earliest`] in nanoseconds, `u64::MAX` when no timer is armed.
    #[inline]
    pub fn earliest_ns(&self) -> u64 {
        [self.handshake.0, self.delack.0, self.rto.0, self.reorder.0, self.probe.0, self.pace.0]
            .into_iter()
            .fold(NEVER, u64::min)
    }

    /// The earliest of the retransmission, reordering, probe and pacing deadlines (all but
    /// the handshake and delayed-ACK timers).
    #[inline]
    pub fn earliest_xmit(&self) -> Option<Time> {
        Timer([self.rto.0, self.reorder.0, self.probe.0, self.pace.0].into_iter().fold(NEVER, u64::min)).deadline()
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
        assert_eq!(t.earliest(), Some(Time(1)));
        t.handshake.stop();
        t.delack.set(None);
        assert_eq!(t.earliest(), Some(Time(5)));
    }
}
