//! The sending loop and the timers of an [`Endpoint`].
//!
//! Order of transmission (Linux: `tcp_xmit_retransmit_queue` per subflow, then
//! `mptcp_write_xmit` for the connection): first each subflow's lost segments within its
//! window (RFC 6675 NextSeg rule 1), then connection-level reinjections on a subflow other
//! than the one they were stuck on, then new data, each segment on the subflow the
//! scheduler picks. Persist timer: when the peer's window admits nothing and nothing is in
//! flight, a zero-window probe is sent with exponential backoff.

use crate::mptcp::connection::Endpoint;
use crate::mptcp::sched::SchedView;
use crate::net::packet::{flags, MpOption, Packet};
use crate::tcp::subflow::State;
use crate::units::{Dsn, Time};

impl Endpoint {
    fn sched_views(&mut self) {
        self.views.clear();
        for s in &self.subflows {
            self.views.push(match s {
                Some(s) => SchedView {
                    usable: s.established(),
                    has_room: s.has_room(),
                    backup: s.backup,
                    srtt: s.rtt.srtt(),
                    cwnd: s.w.cwnd,
                    in_flight: s.sb.in_flight(),
                },
                None => SchedView { usable: false, has_room: false, backup: false, srtt: None, cwnd: 0, in_flight: 0 },
            });
        }
    }

    /// Sends everything the windows, the buffers and the scheduler allow.
    pub fn xmit(&mut self, now: Time, out: &mut Vec<Packet>) {
        if !self.app_started {
            return;
        }
        self.snd.app_write(now);
        for i in 0..self.subflows.len() {
            while let Some(s) = self.subflows[i].as_mut().filter(|s| s.established()) {
                let Some(seg) = s.retransmit_next(now, false) else {
                    break;
                };
                self.data_packet(now, i, seg, out);
            }
        }
        loop {
            self.sched_views();
            // Reinjections first; those already DATA_ACKed are dropped.
            if let Some(&(dsn, len, from)) = self.snd.reinject.front() {
                let end = dsn + len;
                if end <= self.snd.data_una {
                    self.snd.reinject.pop_front();
                    continue;
                }
                if let Some(j) = self.sched.pick(&self.views, Some(from as usize)) {
                    self.snd.reinject.pop_front();
                    let start = dsn.max(self.snd.data_una);
                    let smss = self.params[j].smss;
                    let n = end.dist(start).min(smss);
                    if end.dist(start) > n {
                        self.snd.reinject.push_front((start + n, end.dist(start) - n, from));
                    }
                    self.send_new_on(now, j, start, n, out);
                    self.snd.reinjected_bytes += n;
                    continue;
                }
            }
            let Some(j) = self.sched.pick(&self.views, None) else {
                break;
            };
            let smss = self.params[j].smss;
            let Some((dsn, len)) = self.snd.next_new(smss) else {
                break;
            };
            self.snd.snd_nxt += len;
            self.send_new_on(now, j, dsn, len, out);
        }
        self.sched_views();
        let could_send = self.views.iter().any(|v| v.usable && v.has_room);
        let smss = self.params[0].smss;
        self.snd.account(now, could_send, smss);
        // Persist timer (RFC 9293 §3.8.6.1).
        let nothing_in_flight = self.subflows.iter().flatten().all(|s| s.sb.is_empty());
        if self.snd.rwnd_blocked(smss) && nothing_in_flight {
            if self.persist_at.is_none() {
                let rto = self.subflows.iter().flatten().map(|s| s.rtt.rto()).min().unwrap_or_default();
                self.persist_at = Some(now + rto.times(1 << self.persist_backoff.min(10)).min(self.params[0].rto_max));
            }
        } else {
            self.persist_at = None;
            self.persist_backoff = 0;
        }
    }

    fn send_new_on(&mut self, now: Time, j: usize, dsn: Dsn, len: u64, out: &mut Vec<Packet>) {
        let s = self.subflows[j].as_mut().expect("picked subflow exists");
        if s.maybe_idle_restart(now) {
            self.cc.on_idle_restart(now, j);
        }
        let s = self.subflows[j].as_mut().expect("picked subflow exists");
        let seg = s.send_new(now, len, dsn);
        self.data_packet(now, j, seg, out);
    }

    /// The earliest pending timer.
    pub fn poll_timeout(&self, now: Time) -> Option<Time> {
        let mut t = self.persist_at;
        if self.is_sender && self.app_started {
            t = match (t, self.snd.app.next_write(now)) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
        }
        for s in self.subflows.iter().flatten() {
            for d in [s.hs_at, s.delack_at, s.rto_at].into_iter().flatten() {
                t = Some(t.map_or(d, |x| x.min(d)));
            }
        }
        t
    }

    /// Fires every timer due at `now`.
    pub fn on_timeout(&mut self, now: Time, out: &mut Vec<Packet>) {
        for i in 0..self.subflows.len() {
            let Some(s) = self.subflows[i].as_mut() else {
                continue;
            };
            if s.hs_at.is_some_and(|t| t <= now) {
                s.hs_backoff += 1;
                s.hs_retransmitted = true;
                s.stats.syn_retransmits += 1;
                s.hs_sent_at = now;
                let base = if s.state == State::PreEstablished { s.rtt.rto() } else { s.p.rto_initial };
                s.hs_at = Some(now + base.times(1 << s.hs_backoff.min(10)).min(s.p.rto_max));
                self.handshake_packet(now, i, out);
            }
            let s = self.subflows[i].as_mut().expect("subflow");
            if s.delack_at.is_some_and(|t| t <= now) {
                self.send_ack(now, i, out);
            }
            let s = self.subflows[i].as_mut().expect("subflow");
            if s.rto_at.is_some_and(|t| t <= now) {
                if s.sb.is_empty() {
                    s.rto_at = None;
                    continue;
                }
                self.snapshot_peers();
                let s = self.subflows[i].as_mut().expect("subflow");
                s.on_rto(now, self.cc.as_mut(), &self.peers);
                // Reinject on every RTO (Linux `mptcp_sub_retransmit_timer`), each segment once.
                let n_subflows = self.subflows.len();
                if self.mptcp && n_subflows > 1 {
                    let mut taken = Vec::new();
                    self.subflows[i].as_mut().expect("subflow").take_for_reinjection(&mut taken);
                    let una = self.snd.data_una;
                    for (dsn, len) in taken {
                        if dsn + len > una {
                            self.snd.reinject.push_back((dsn, len, i as u8));
                        }
                    }
                }
                let s = self.subflows[i].as_mut().expect("subflow");
                if let Some(seg) = s.retransmit_next(now, true) {
                    self.data_packet(now, i, seg, out);
                }
            }
        }
        if self.persist_at.is_some_and(|t| t <= now) {
            self.persist_at = None;
            self.persist_backoff += 1;
            if let Some(i) = (0..self.subflows.len()).find(|&i| self.subflow(i).is_some_and(|s| s.established())) {
                let mut p = self.packet(now, i, flags::ACK | flags::PROBE, MpOption::Dss);
                p.seq = self.subflows[i].as_ref().expect("subflow").snd_nxt;
                out.push(p);
            }
        }
        if self.is_sender {
            self.xmit(now, out);
        }
    }
}
