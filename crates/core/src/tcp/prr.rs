//! Proportional Rate Reduction (RFC 6937; Linux `tcp_cwnd_reduction`, PRR-SSRB).
//!
//! During fast recovery the window is not cut to ssthresh at once: on every ACK
//! `cwnd = pipe + sndcnt`, where, with `prr_delivered` the bytes delivered since recovery
//! began and `prr_out` the bytes sent since then,
//! - while pipe > ssthresh (proportional part): `sndcnt = ⌈ssthresh · prr_delivered /
//!   RecoverFS⌉ − prr_out`, so that the sending is spread evenly over the first round and
//!   about ssthresh bytes are sent per RecoverFS delivered;
//! - once pipe <= ssthresh (slow-start reduction bound): `sndcnt = min(ssthresh − pipe,
//!   max(prr_delivered − prr_out, DeliveredData) + MSS)` if the ACK advanced snd_una and
//!   marked nothing newly lost, otherwise the conservative bound `min(ssthresh − pipe,
//!   DeliveredData)` (the choice Linux makes since 5.14);
//! - at least one segment may go out before anything was sent (the fast retransmit).
//!
//! RecoverFS is Linux's `prior_cwnd`, the window when recovery began (RFC 6937 uses the
//! flight size, equal for a window-limited sender). At the end of recovery cwnd = ssthresh
//! (Linux `tcp_end_cwnd_reduction`), done by the subflow. Deviation: bytes, not packets
//! (Linux counts segments); so that a partly filled window cannot stall with nothing in
//! flight, cwnd is never set below one MSS.

/// PRR state of one recovery episode.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Prr {
    /// RecoverFS: cwnd when recovery began (bytes).
    pub recover_fs: u64,
    /// Bytes delivered (newly cumulatively acknowledged or SACKed) since recovery began.
    pub delivered: u64,
    /// Bytes sent since recovery began.
    pub out: u64,
}

impl Prr {
    /// Linux `tcp_init_cwnd_reduction`.
    pub fn start(cwnd: u64) -> Prr {
        Prr { recover_fs: cwnd.max(1), delivered: 0, out: 0 }
    }

    /// The new cwnd after an ACK that delivered `delivered` bytes, with `pipe` bytes in
    /// flight after the ACK; None if the ACK delivered nothing (cwnd unchanged).
    pub fn on_ack(&mut self, delivered: u64, pipe: u64, ssthresh: u64, smss: u64, ssrb: bool) -> Option<u64> {
        if delivered == 0 {
            return None;
        }
        self.delivered += delivered;
        let sndcnt = if pipe > ssthresh {
            let share = (ssthresh as u128 * self.delivered as u128).div_ceil(self.recover_fs as u128) as u64;
            share.saturating_sub(self.out)
        } else {
            let room = ssthresh - pipe;
            if ssrb {
                room.min(self.delivered.saturating_sub(self.out).max(delivered) + smss)
            } else {
                room.min(delivered)
            }
        };
        let sndcnt = if self.out == 0 { sndcnt.max(smss) } else { sndcnt };
        Some((pipe + sndcnt).max(smss))
    }

    /// Records `bytes` sent during recovery.
    pub fn on_sent(&mut self, bytes: u64) {
        self.out += bytes;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    #[test]
    fn the_first_ack_allows_the_fast_retransmit() {
        // 20 segments in flight, one lost: pipe 19, ssthresh 10.
        let mut p = Prr::start(20 * MSS);
        assert_eq!(p.on_ack(MSS, 18 * MSS, 10 * MSS, MSS, true), Some(19 * MSS));
    }

    #[test]
    fn proportional_part_sends_ssthresh_per_recover_fs_delivered() {
        // RFC 6937 §3 example: RecoverFS 20, ssthresh 10: one segment per two delivered.
        let mut p = Prr::start(20 * MSS);
        let mut pipe = 19 * MSS; // one lost
        let mut sent = 0;
        for _ in 0..18 {
            pipe -= MSS; // one delivered
            let cwnd = p.on_ack(MSS, pipe, 10 * MSS, MSS, true).unwrap();
            while pipe + MSS <= cwnd {
                pipe += MSS;
                p.on_sent(MSS);
                sent += 1;
            }
        }
        // ⌈10 · 18 / 20⌉ = 9 segments for 18 delivered (the first being the retransmission).
        assert_eq!(sent, 9);
        assert_eq!(pipe, 10 * MSS, "pipe reaches ssthresh when the round ends");
    }

    #[test]
    fn below_ssthresh_ssrb_grows_by_one_segment_per_ack_and_crb_does_not() {
        let mut a = Prr::start(20 * MSS);
        a.on_sent(MSS);
        a.delivered = 2 * MSS;
        // pipe 4 far below ssthresh 10, one segment delivered.
        assert_eq!(a.on_ack(MSS, 4 * MSS, 10 * MSS, MSS, true), Some(4 * MSS + 3 * MSS));
        let mut b = Prr::start(20 * MSS);
        b.on_sent(MSS);
        b.delivered = 2 * MSS;
        assert_eq!(b.on_ack(MSS, 4 * MSS, 10 * MSS, MSS, false), Some(5 * MSS));
    }
}
