//! Linux's compression of the ACKs of out-of-order data (SACK compression, `__tcp_ack_snd_check`
//! and `tcp_compressed_ack_kick` since Linux 4.18), for `tcp.ooo_ack = "compressed"`.

use crate::units::{Dur, Seq};

/// Linux's SACK compression state (`tcp.ooo_ack = "compressed"`, `__tcp_ack_snd_check` since
/// 4.18): out-of-order segments get an immediate ACK only for the first
/// `TCP_FASTRETRANS_THRESH` (3) with the same cumulative ACK; the later ones are counted, up to
/// `tcp_comp_sack_nr` (44), and acknowledged together when the compressed-ACK timer fires.
#[derive(Clone, Copy, Debug, Default)]
pub struct SackCompression {
    /// `compressed_ack_rcv_nxt`, `dup_ack_counter`, `compressed_ack`.
    rcv_nxt: Seq,
    dup_acks: u32,
    pub pending: u32,
    /// The last segment's immediate ACK was one of the counted duplicates.
    counted: bool,
}

impl SackCompression {
    /// A segment arrived beyond a hole, the cumulative ACK being `rcv_nxt`: whether it is
    /// acknowledged at once (true) or counted into the compressed ACK (false).
    pub fn on_out_of_order(&mut self, rcv_nxt: Seq) -> bool {
        self.counted = false;
        if self.pending >= COMP_SACK_NR {
            return true;
        }
        if self.rcv_nxt != rcv_nxt {
            self.rcv_nxt = rcv_nxt;
            self.dup_acks = 0;
        }
        if self.dup_acks < COMP_SACK_DUPS {
            self.dup_acks += 1;
            self.counted = true;
            return true;
        }
        self.pending += 1;
        false
    }

    /// The last segment is acknowledged in quick-ACK mode instead, which
    /// `__tcp_ack_snd_check` tests first: it does not count as one of the duplicates.
    pub fn uncount(&mut self) {
        if std::mem::take(&mut self.counted) {
            self.dup_acks -= 1;
        }
    }
}

/// `TCP_FASTRETRANS_THRESH`, `tcp_comp_sack_nr`'s default.
const COMP_SACK_DUPS: u32 = 3;
const COMP_SACK_NR: u32 = 44;
/// `tcp_comp_sack_delay_ns` and `tcp_comp_sack_slack_ns`, the defaults.
const COMP_SACK_MAX: Dur = Dur::from_ms(1);
const COMP_SACK_SLACK: Dur = Dur::from_us(100);

/// When the compressed-ACK timer fires, from now: 5 % of `rtt` (Linux 6.18: `rtt *
/// (NSEC_PER_USEC >> 3) / 20` on the 8-times-scaled estimate), at most 1 ms, plus the timer's
/// 100 µs of slack (an hrtimer may fire anywhere in it; the end is taken, as measured: 1.1 ms
/// on a 150 ms path). Without any RTT estimate the delay is the cap.
pub fn comp_sack_delay(rtt: Option<Dur>) -> Dur {
    let delay = rtt.map_or(COMP_SACK_MAX, |r| Dur(r.0 / 20).min(COMP_SACK_MAX));
    Dur(delay.0 + COMP_SACK_SLACK.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn three_at_once_per_cumulative_ack_then_compressed_up_to_44() {
        let mut c = SackCompression::default();
        let hole = Seq(1000);
        assert!((0..3).all(|_| c.on_out_of_order(hole)));
        assert!(!c.on_out_of_order(hole));
        assert_eq!(c.pending, 1);
        c.pending = 0; // an ACK left
        assert!((0..44).all(|_| !c.on_out_of_order(hole)));
        assert!(c.on_out_of_order(hole), "the 45th: tcp_comp_sack_nr reached");
        c.pending = 0;
        assert!(c.on_out_of_order(Seq(52_000)), "a new hole: three at once again");
        // The timer: 5 % of the RTT, at most 1 ms, plus 100 µs of slack.
        assert_eq!(comp_sack_delay(Some(Dur::from_ms(150))), Dur::from_us(1100));
        assert_eq!(comp_sack_delay(Some(Dur::from_ms(10))), Dur::from_us(600));
        assert_eq!(comp_sack_delay(None), Dur::from_us(1100));
    }

    /// `__tcp_ack_snd_check` tests quick-ACK mode before it counts duplicates, and
    /// `tcp_data_queue_ofo` grows the window (`tcp_grow_window`, which sets quick-ACK mode
    /// while `rcv_ssthresh` can rise) before the ACK is decided. Host 6.18.44 and UML 7.3.4,
    /// `rcvbuf-fixed-256kb-ratio20` seed 1, the first WiFi loss: the first segment beyond the
    /// hole found 1 422 B of room (UML's `trace_printk` in `tcp_grow_window`: `rcv_ssthresh`
    /// 314 578 → 316 000) and the client acknowledged the first four out-of-order segments at
    /// once (14–15 µs after each on the host), the fifth 0.63 ms later (5 % of 12.7 ms).
    #[test]
    fn a_quick_ack_is_not_one_of_the_three_duplicates() {
        let mut c = SackCompression::default();
        let hole = Seq(1000);
        assert!(c.on_out_of_order(hole));
        c.uncount(); // acknowledged in quick-ACK mode
        assert!((0..3).all(|_| c.on_out_of_order(hole)), "three more at once");
        assert!(!c.on_out_of_order(hole), "the fifth waits");
        c.uncount(); // nothing counted by a compressed segment
        assert_eq!(c.pending, 1);
    }
}
