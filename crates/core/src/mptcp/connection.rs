//! One end of a connection (client or server): handshakes, subflows, the connection-level
//! sender or receiver, packet construction. Sans-IO: `start`, `on_packet` and `on_timeout`
//! take `now` and push the packets to send into `out`; `poll_timeout` gives the next deadline.
//!
//! Connection setup (RFC 8684 §3.1–3.2): MP_CAPABLE on the first path; once the client's
//! first subflow is established (SYN/ACK received), it opens one MP_JOIN subflow per other
//! path at once (Linux "fullmesh" with one address pair per path). A join is usable by the
//! server once the client's third ACK arrives; the client, if it sends data, waits for the
//! server's fourth ACK (the third ACK is retransmitted until then). For a download the
//! client's request rides on its MP_CAPABLE (or TCP) third ACK, so the server starts sending
//! when that ACK arrives. Data flows in one direction per connection.
//! Deviations: no connection teardown (FIN/DATA_FIN), no ADD_ADDR signalling (both hosts
//! know every path), no checksum in DSS.

use crate::app::App;
use crate::cc::{self, CongestionControl, PeerView};
use crate::config::{ConnCfg, ConnKind, Direction, RcvbufWindow, Scenario};
use crate::mptcp::reassembly::ConnReceiver;
use crate::mptcp::sched::{self, SchedView, Scheduler};
use crate::mptcp::sendbuf::ConnSender;
use crate::mptcp::sfqueue::SubflowQueue;
use crate::net::packet::{flags, optlen, MpOption, Packet, SackBlocks, IP_TCP_HEADER};
use crate::rng::Rng;
use crate::tcp::receiver::{AckNeed, Arriving, Chunk};
use crate::tcp::scoreboard::SentSeg;
use crate::tcp::subflow::{State, Subflow, TcpParams};
use crate::units::{Dsn, Seq, Time};

/// One end of a connection.
pub struct Endpoint {
    pub conn: u32,
    pub is_client: bool,
    pub mptcp: bool,
    /// This end sends the application data.
    pub is_sender: bool,
    /// (route id, backup) of subflow i.
    pub paths: Vec<(usize, bool)>,
    pub(crate) params: Vec<TcpParams>,
    ts_len: u32,
    pub subflows: Vec<Option<Subflow>>,
    pub cc: Box<dyn CongestionControl>,
    pub sched: Box<dyn Scheduler>,
    pub snd: ConnSender,
    pub rcv: ConnReceiver,
    /// MP_CAPABLE (or TCP) handshake completed at this end.
    pub mp_established: bool,
    pub(crate) app_started: bool,
    pub(crate) persist_at: Option<Time>,
    pub(crate) persist_backoff: u32,
    pub start: Time,
    /// When the receiving application got the last byte of a download.
    pub completed_at: Option<Time>,
    uid: u64,
    chunks: Vec<Chunk>,
    pub(crate) peers: Vec<PeerView>,
    pub(crate) views: Vec<SchedView>,
    /// Data assigned to each subflow and not sent yet (schedulers that queue).
    pub(crate) sfq: Vec<SubflowQueue>,
    /// Last M2 penalisation triggered by each subflow (Linux `last_rbuf_opti`).
    pub(crate) last_rbuf_opti: Vec<Option<Time>>,
}

impl Endpoint {
    /// `subflows`: the (route id, backup) of each subflow.
    pub fn new(conn: u32, cfg: &ConnCfg, subflows: &[(usize, bool)], sc: &Scenario, is_client: bool) -> Endpoint {
        let mptcp = cfg.kind == ConnKind::Mptcp;
        let is_sender = (cfg.direction == Direction::Upload) == is_client;
        let t = &cfg.tcp;
        let ts_len = if t.timestamps { optlen::TIMESTAMPS } else { 0 };
        let mp_len = if mptcp { optlen::DSS_ACK_MAP } else { 0 };
        let smss = t.mss.min(t.mtu - IP_TCP_HEADER as u64 - ts_len as u64 - mp_len as u64);
        let paths: Vec<(usize, bool)> = subflows.to_vec();
        let p = TcpParams {
            smss,
            iw: t.iw,
            slow_start: t.slow_start,
            ca_counting: t.ca_counting,
            b: t.delack_segments,
            delack_timeout: t.delack_timeout,
            idle_restart: t.idle_restart,
            dupthresh: t.dupthresh,
            rto_initial: t.rto_initial,
            rto_min: t.rto_min,
            rto_max: t.rto_max,
            recovery: t.recovery,
            prr: t.prr,
        };
        let start = Time::ZERO + cfg.start;
        let warmup = Time::ZERO + sc.output.warmup;
        Endpoint {
            conn,
            is_client,
            mptcp,
            is_sender,
            params: vec![p; paths.len()],
            subflows: (0..paths.len()).map(|_| None).collect(),
            paths,
            ts_len,
            cc: cc::build(
                cfg.cc,
                &cfg.cc_params,
                Rng::stream(sc.seed, &format!("cc:{}:{}", cfg.name, if is_client { "client" } else { "server" })),
            ),
            sched: sched::build(cfg.scheduler, &cfg.sched_params),
            snd: ConnSender::new(App::from_cfg(&cfg.app, start), cfg.sndbuf.0, cfg.rcvbuf.0),
            rcv: ConnReceiver::new(cfg.rcvbuf.0, warmup).full_window(cfg.rcvbuf_window == RcvbufWindow::Full),
            mp_established: false,
            app_started: false,
            persist_at: None,
            persist_backoff: 0,
            start,
            completed_at: None,
            uid: ((conn as u64) << 40) | ((is_client as u64) << 39),
            chunks: Vec::new(),
            peers: Vec::new(),
            views: Vec::new(),
            sfq: vec![SubflowQueue::default(); subflows.len()],
            last_rbuf_opti: vec![None; subflows.len()],
        }
    }

    pub fn subflow(&self, i: usize) -> Option<&Subflow> {
        self.subflows.get(i).and_then(|s| s.as_ref())
    }

    // ------------------------------------------------------------------ packets

    pub(crate) fn packet(&mut self, now: Time, sf: usize, fl: u8, mp: MpOption) -> Packet {
        let wnd = if fl & flags::SYN != 0 { self.rcv.rcvbuf } else { self.adv_window() };
        self.uid += 1;
        let mp = if self.mptcp { mp } else { MpOption::None };
        Packet {
            uid: self.uid,
            conn: self.conn,
            subflow: sf as u8,
            to_server: self.is_client,
            hop: 0,
            flags: fl,
            mp,
            wire_len: 0,
            payload: 0,
            seq: Seq(0),
            ack: Seq(0),
            wnd,
            sack: SackBlocks::default(),
            dsn: Dsn(0),
            data_ack: self.rcv.rcv_nxt,
            sent_at: now,
        }
        .sized(self.ts_len)
    }

    pub(crate) fn handshake_packet(&mut self, now: Time, sf: usize, out: &mut Vec<Packet>) {
        let s = self.subflows[sf].as_ref().expect("subflow");
        let first = sf == 0;
        let (fl, mp) = match (s.state, self.is_client) {
            (State::SynSent, _) => (flags::SYN, if first { MpOption::CapableSyn } else { MpOption::JoinSyn }),
            (State::SynRcvd, _) => {
                (flags::SYN | flags::ACK, if first { MpOption::CapableSynAck } else { MpOption::JoinSynAck })
            }
            (_, true) => (flags::ACK, if first { MpOption::CapableAck } else { MpOption::JoinAck }),
            (_, false) => (flags::ACK, MpOption::Dss),
        };
        let p = self.packet(now, sf, fl, mp);
        out.push(p);
    }

    pub(crate) fn data_packet(&mut self, now: Time, sf: usize, seg: SentSeg, out: &mut Vec<Packet>) {
        let mut p = self.packet(now, sf, flags::ACK, MpOption::Dss);
        p.seq = seg.seq;
        p.payload = seg.len;
        p.dsn = seg.dsn;
        out.push(p.sized(self.ts_len));
    }

    /// The receive window to advertise: free space of the shared receive buffer.
    fn adv_window(&mut self) -> u64 {
        let sub_ooo: u64 = self.subflows.iter().flatten().map(|s| s.rcv.ooo_bytes()).sum();
        self.rcv.window(sub_ooo)
    }

    pub(crate) fn send_ack(&mut self, now: Time, sf: usize, out: &mut Vec<Packet>) {
        let mut p = self.packet(now, sf, flags::ACK, MpOption::Dss);
        let s = self.subflows[sf].as_mut().expect("subflow");
        s.rcv.unacked_segs = 0;
        s.delack_at = None;
        p.ack = s.rcv.rcv_nxt;
        let used = self.ts_len + if self.mptcp { optlen::DSS_ACK } else { 0 };
        let max_blocks = ((optlen::MAX - used).saturating_sub(2) / 8).min(4) as usize;
        for b in s.rcv.sack_blocks(max_blocks) {
            p.sack.blocks[p.sack.n as usize] = b;
            p.sack.n += 1;
        }
        out.push(p.sized(self.ts_len));
    }

    // ------------------------------------------------------------------ setup

    fn new_subflow(&mut self, sf: usize, state: State) {
        let (path, backup) = self.paths[sf];
        let mut s = Subflow::new(sf as u8, path, backup, state, self.params[sf].clone());
        if self.cc.rate_based() {
            s.set_rate_based();
        }
        self.sfq[sf] = SubflowQueue::new(s.w.smss, s.w.cwnd, self.snd.sndbuf);
        self.subflows[sf] = Some(s);
    }

    /// Client: sends the first SYN.
    pub fn start(&mut self, now: Time, out: &mut Vec<Packet>) {
        debug_assert!(self.is_client);
        self.open_subflow(now, 0, out);
    }

    fn open_subflow(&mut self, now: Time, sf: usize, out: &mut Vec<Packet>) {
        self.new_subflow(sf, State::SynSent);
        let s = self.subflows[sf].as_mut().expect("new");
        s.hs_sent_at = now;
        s.hs_at = Some(now + s.p.rto_initial);
        self.handshake_packet(now, sf, out);
    }

    fn established(&mut self, now: Time, sf: usize) {
        let s = self.subflows[sf].as_mut().expect("subflow");
        if !s.hs_retransmitted {
            s.rtt.on_sample(now.since(s.hs_sent_at));
        }
        s.stats.established_at = Some(now);
        s.hs_at = None;
        s.hs_backoff = 0;
    }

    fn start_app(&mut self, now: Time) {
        if self.is_sender && !self.app_started {
            self.app_started = true;
            self.snd.app_write(now);
        }
    }

    // ------------------------------------------------------------------ input

    pub fn on_packet(&mut self, now: Time, pkt: &Packet, out: &mut Vec<Packet>) {
        let i = pkt.subflow as usize;
        if i >= self.subflows.len() {
            return;
        }
        if pkt.is(flags::SYN) && !pkt.is(flags::ACK) {
            // Server: a SYN (new, or a retransmission because our SYN/ACK was lost).
            if self.subflows[i].is_none() {
                if i > 0 && !self.mp_established {
                    return; // MP_JOIN for a connection not yet established: ignore
                }
                self.new_subflow(i, State::SynRcvd);
            }
            let s = self.subflows[i].as_mut().expect("subflow");
            if s.state == State::SynRcvd {
                if s.hs_at.is_some() {
                    s.hs_retransmitted = true;
                }
                s.hs_sent_at = now;
                s.hs_at = Some(now + s.p.rto_initial.times(1 << s.hs_backoff.min(10)).min(s.p.rto_max));
                self.handshake_packet(now, i, out);
            }
            return;
        }
        let Some(s) = self.subflows[i].as_mut() else {
            return;
        };
        if pkt.is(flags::SYN) {
            // Client: SYN/ACK.
            match s.state {
                State::SynSent => {
                    let join_sender = i > 0 && self.is_sender;
                    self.established(now, i);
                    let s = self.subflows[i].as_mut().expect("subflow");
                    if join_sender {
                        s.state = State::PreEstablished;
                        s.hs_sent_at = now;
                        s.hs_at = Some(now + s.rtt.rto());
                    } else {
                        s.state = State::Established;
                    }
                    self.handshake_packet(now, i, out);
                    if i == 0 {
                        self.mp_established = true;
                        if self.mptcp {
                            for j in 1..self.subflows.len() {
                                self.open_subflow(now, j, out);
                            }
                        }
                        self.start_app(now);
                    }
                }
                _ => self.handshake_packet(now, i, out), // our third ACK was lost
            }
            if self.is_sender {
                self.xmit(now, out);
            }
            return;
        }
        match s.state {
            State::SynRcvd => {
                // Server: third ACK (or data implying it).
                s.state = State::Established;
                self.established(now, i);
                if i > 0 {
                    self.handshake_packet(now, i, out); // fourth ACK
                } else {
                    self.mp_established = true;
                    self.start_app(now);
                }
            }
            State::PreEstablished => {
                s.state = State::Established;
                s.hs_at = None;
            }
            State::SynSent => return,
            State::Established => {
                if !self.is_client && i > 0 && pkt.mp == MpOption::JoinAck {
                    self.handshake_packet(now, i, out); // re-send the fourth ACK
                    return;
                }
            }
        }
        if pkt.payload > 0 || pkt.is(flags::PROBE) {
            self.on_data(now, i, pkt, out);
        }
        if self.is_sender {
            self.on_ack(now, i, pkt, out);
            self.xmit(now, out);
        }
    }

    fn on_data(&mut self, now: Time, i: usize, pkt: &Packet, out: &mut Vec<Packet>) {
        let s = self.subflows[i].as_mut().expect("subflow");
        let mut need = AckNeed::Now;
        if pkt.payload > 0 {
            let dsn = if self.mptcp { pkt.dsn } else { Dsn(pkt.seq.0) };
            let full = pkt.payload as u64 >= s.p.smss;
            self.chunks.clear();
            let seg = Arriving { seq: pkt.seq, len: pkt.payload as u64, dsn, full_size: full };
            need = s.rcv.on_segment(seg, s.p.b, now, &mut self.chunks);
            if s.stats.first_data_at.is_none() {
                s.stats.first_data_at = Some(now);
            }
            for k in 0..self.chunks.len() {
                let c = self.chunks[k];
                let new = self.rcv.on_chunk(now, c);
                let s = self.subflows[i].as_mut().expect("subflow");
                s.stats.data_bytes_received += new;
                if now >= self.rcv.warmup {
                    s.stats.data_bytes_after_warmup += new;
                }
            }
        }
        if self.completed_at.is_none() && self.snd.app.size().is_some_and(|n| self.rcv.delivered >= n) {
            self.completed_at = Some(now);
        }
        let s = self.subflows[i].as_mut().expect("subflow");
        match need {
            AckNeed::Now => self.send_ack(now, i, out),
            AckNeed::Delayed => {
                if s.delack_at.is_none() {
                    s.delack_at = Some(now + s.p.delack_timeout);
                }
            }
        }
    }

    pub(crate) fn snapshot_peers(&mut self) {
        self.peers.clear();
        for s in &self.subflows {
            self.peers.push(match s {
                Some(s) => s.view(),
                None => PeerView::default(),
            });
        }
    }

    fn on_ack(&mut self, now: Time, i: usize, pkt: &Packet, out: &mut Vec<Packet>) {
        let data_ack = if self.mptcp { pkt.data_ack } else { Dsn(pkt.ack.0) };
        if !self.mptcp || pkt.mp == MpOption::Dss {
            let prev = self.snd.data_una;
            self.snd.on_data_ack(data_ack, pkt.wnd);
            if self.snd.data_una > prev {
                self.sched.on_data_ack(now, prev, self.snd.data_una);
            }
        }
        if self.persist_at.is_some() && !self.snd.rwnd_blocked(self.params[0].smss) {
            self.persist_at = None;
            self.persist_backoff = 0;
        }
        self.snapshot_peers();
        let s = self.subflows[i].as_mut().expect("subflow");
        let o = s.on_ack(now, pkt.ack, pkt.sack.as_slice(), self.cc.as_mut(), &self.peers);
        if o.acked_bytes > 0 {
            self.sfq[i].acked = true;
        }
        // Paced subflows wait for their pacing gate (Linux `tcp_xmit_retransmit_queue`).
        if o.entered_recovery && s.pacer.open(now) {
            // RFC 6675 (4.3): retransmit the first lost segment at once.
            if let Some(seg) = s.retransmit_next(now, true) {
                self.data_packet(now, i, seg, out);
            }
        }
    }
}

impl Packet {
    /// Computes `wire_len` from the payload and the options the packet carries.
    fn sized(mut self, ts_len: u32) -> Packet {
        let mut opts = ts_len;
        if self.is(flags::SYN) {
            opts = optlen::SYN_BASE;
        }
        opts += match self.mp {
            MpOption::None => 0,
            MpOption::CapableSyn => optlen::MP_CAPABLE_SYN,
            MpOption::CapableSynAck => optlen::MP_CAPABLE_SYNACK,
            MpOption::CapableAck => optlen::MP_CAPABLE_ACK,
            MpOption::JoinSyn => optlen::MP_JOIN_SYN,
            MpOption::JoinSynAck => optlen::MP_JOIN_SYNACK,
            MpOption::JoinAck => optlen::MP_JOIN_ACK,
            MpOption::Dss if self.payload > 0 => optlen::DSS_ACK_MAP,
            MpOption::Dss => optlen::DSS_ACK,
        };
        opts += optlen::sack(self.sack.n as u32);
        self.wire_len = IP_TCP_HEADER + opts + self.payload;
        self
    }
}
