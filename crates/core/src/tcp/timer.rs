//! Timers of a sans-IO endpoint: a deadline or nothing. The endpoint never sleeps; it reports
//! its earliest deadline (`poll_timeout`) and the driver calls back at that time, when the
//! endpoint fires whatever has [`Timer::expired`].
//!
//! A subflow's timers are armed only through [`SubflowTimers::arm`] and
//! [`SubflowTimers::set`], which also keep the earliest deadline armed since the driver last
//! asked ([`SubflowTimers::take_armed_low`]): a driver that already holds a wake-up no later
//! than every deadline it saw then only needs the new ones to know whether it must wake
//! earlier (`Endpoint::poll_timeout_before`).

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
    /// Private: a subflow's timers are armed through [`SubflowTimers::arm`].
    #[inline]
    fn arm(&mut self, at: Time) {
        self.0 = at.0;
    }

    /// Stops the timer (Linux `sk_stop_timer`).
    #[inline]
    pub fn stop(&mut self) {
        self.0 = NEVER;
    }

    /// Arms the timer for `at`, or stops it with None (through [`SubflowTimers::set`]).
    #[inline]
    fn set(&mut self, at: Option<Time>) {
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

/// Which of a subflow's timers ([`SubflowTimers::arm`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Slot {
    Handshake,
    Delack,
    CompSack,
    Rto,
    Reorder,
    Probe,
    Pace,
}

/// The timers of one subflow. Linux multiplexes the retransmission, probe and reordering
/// timers on one `icsk_retransmit_timer` (`ICSK_TIME_RETRANS`, `ICSK_TIME_LOSS_PROBE`,
/// `ICSK_TIME_REO_TIMEOUT`); here each has its own deadline and the subflow fires a due
/// probe or reordering timer before a due RTO (`Subflow::on_recovery_timers`).
///
/// The fields are read directly and stopped directly; arming goes through [`Self::arm`] or
/// [`Self::set`] (a [`Timer`] cannot be armed outside this module), so that `armed_low`
/// sees every new deadline.
#[derive(Clone, Copy, Debug)]
pub struct SubflowTimers {
    /// Handshake retransmission: SYN, SYN/ACK, the MP_JOIN third ACK.
    pub handshake: Timer,
    /// Delayed ACK (Linux `icsk_delack_timer`).
    pub delack: Timer,
    /// Compressed ACK of out-of-order data (Linux `tcp_sock.compressed_ack_timer`).
    pub comp_sack: Timer,
    /// Retransmission timeout (RFC 6298).
    pub rto: Timer,
    /// RACK reordering timer (RFC 8985 §6.2 step 5).
    pub reorder: Timer,
    /// Tail loss probe timer (RFC 8985 §7.2).
    pub probe: Timer,
    /// Pacing timer (Linux `tcp_sock.pacing_timer`): the pacing gate opens.
    pub pace: Timer,
    /// The earliest deadline armed since the last [`Self::take_armed_low`] (nanoseconds,
    /// `u64::MAX` for none). Stopping a timer does not raise it: it is a lower bound on the
    /// deadlines that are new since then, not the earliest pending one.
    armed_low: u64,
}

impl Default for SubflowTimers {
    fn default() -> SubflowTimers {
        let t = Timer::default();
        SubflowTimers { handshake: t, delack: t, comp_sack: t, rto: t, reorder: t, probe: t, pace: t, armed_low: NEVER }
    }
}

impl SubflowTimers {
    #[inline(always)]
    fn slot(&mut self, which: Slot) -> &mut Timer {
        match which {
            Slot::Handshake => &mut self.handshake,
            Slot::Delack => &mut self.delack,
            Slot::CompSack => &mut self.comp_sack,
            Slot::Rto => &mut self.rto,
            Slot::Reorder => &mut self.reorder,
            Slot::Probe => &mut self.probe,
            Slot::Pace => &mut self.pace,
        }
    }

    /// Arms timer `which` for `at`, replacing its earlier deadline (Linux `sk_reset_timer`).
    #[inline]
    pub fn arm(&mut self, which: Slot, at: Time) {
        self.slot(which).arm(at);
        self.armed_low = self.armed_low.min(at.0);
    }

    /// Arms timer `which` for `at`, or stops it with None.
    #[inline]
    pub fn set(&mut self, which: Slot, at: Option<Time>) {
        self.slot(which).set(at);
        self.armed_low = self.armed_low.min(at.map_or(NEVER, |t| t.0));
    }

    /// The earliest deadline armed since the last call (nanoseconds, `u64::MAX` for none),
    /// and starts over. Every deadline pending now is either one of those or was pending at
    /// the last call.
    #[inline]
    pub fn take_armed_low(&mut self) -> u64 {
        std::mem::replace(&mut self.armed_low, NEVER)
    }

    /// The earliest deadline of all seven timers (the endpoint's next wake-up is the earliest
    /// over all its subflows'; `poll_timeout` is on the per-packet path, so this is a plain
    /// minimum).
    #[inline]
    pub fn earliest(&self) -> Option<Time> {
        Timer(self.earliest_ns()).deadline()
    }

    /// [`Self::earliest`] in nanoseconds, `u64::MAX` when no timer is armed.
    #[inline]
    pub fn earliest_ns(&self) -> u64 {
        [self.handshake.0, self.delack.0, self.comp_sack.0, self.rto.0, self.reorder.0, self.probe.0, self.pace.0]
            .into_iter()
            .fold(NEVER, u64::min)
    }

    /// The earliest of the retransmission, reordering and probe deadlines: the timer Linux
    /// keeps in `icsk_timeout` (`ICSK_TIME_RETRANS`, `ICSK_TIME_REO_TIMEOUT`,
    /// `ICSK_TIME_LOSS_PROBE`, one at a time there); pacing has a timer of its own
    /// (`tcp_pacing_timer`, an hrtimer), as have the handshake and the ACKs.
    #[inline]
    pub fn earliest_xmit(&self) -> Option<Time> {
        Timer([self.rto.0, self.reorder.0, self.probe.0].into_iter().fold(NEVER, u64::min)).deadline()
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
    fn the_xmit_deadline_is_the_earliest_of_the_retransmission_timers() {
        let mut t = SubflowTimers::default();
        t.arm(Slot::Handshake, Time(1));
        t.arm(Slot::Delack, Time(2));
        assert_eq!(t.earliest_xmit(), None);
        t.arm(Slot::Pace, Time(3));
        assert_eq!(t.earliest_xmit(), None, "pacing is not a transmit timer of icsk's");
        t.arm(Slot::Rto, Time(5));
        assert_eq!(t.earliest_xmit(), Some(Time(5)));
        assert_eq!(t.earliest(), Some(Time(1)));
        t.handshake.stop();
        t.set(Slot::Delack, None);
        assert_eq!(t.earliest(), Some(Time(3)), "every timer, pacing included");
    }

    #[test]
    fn the_armed_low_is_the_earliest_deadline_armed_since_it_was_taken() {
        let mut t = SubflowTimers::default();
        assert_eq!(t.take_armed_low(), u64::MAX);
        t.arm(Slot::Rto, Time(50));
        t.set(Slot::Pace, Some(Time(30)));
        t.set(Slot::Reorder, None);
        // Re-arming later or stopping does not raise it: it bounds what was new, from below.
        t.arm(Slot::Pace, Time(90));
        t.rto.stop();
        assert_eq!(t.take_armed_low(), 30);
        assert_eq!(t.take_armed_low(), u64::MAX);
        t.arm(Slot::Delack, Time(70));
        assert_eq!(t.take_armed_low(), 70);
        // Pending deadlines from before the take are not in it.
        assert_eq!(t.earliest(), Some(Time(70)));
    }
}
