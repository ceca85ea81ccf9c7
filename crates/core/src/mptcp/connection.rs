//! One end of a connection (client or server): handshakes, subflows, the connection-level
//! sender or receiver, packet construction. Sans-IO: `start`, `on_packet` and `on_timeout`
//! take `now` and push the packets to send into `out`; `poll_timeout` gives the next deadline.
//!
//! Connection setup (RFC 8684 §3.1–3.2): MP_CAPABLE on the first path; the client opens one
//! MP_JOIN subflow per other path when its path manager says ([`crate::mptcp::pm`]: at the
//! SYN/ACK, once fully established, or on the server's ADD_ADDR). A join is usable by the
//! server once the client's third ACK arrives; the client, if it sends data, waits for the
//! server's fourth ACK (the third ACK is retransmitted until then). For a download the
//! client's request rides on its MP_CAPABLE (or TCP) third ACK, so the server starts sending
//! when that ACK arrives. Data flows in one direction per connection.
//! Window updates (`window_update`): in the classic model only the subflow that received data
//! acknowledges it, and the application reads at once. With `all_subflows` (Linux) the
//! segment is acknowledged before the application reads what it delivered, and after the
//! read every subflow may send a window update (`mptcp_cleanup_rbuf`, see `cleanup_rbuf`),
//! so a window opened by data on a slow path reaches the sender over the fastest one.
//! Deviations: no connection teardown (FIN/DATA_FIN), no checksum in DSS.
//!
//! Option sizes (`option_sizes`): `classic` gives every DSS a 64-bit DATA_ACK. `linux`
//! follows `mptcp_established_options_dss` and `mptcp_write_options`: the DATA_ACK is 64 bits
//! only once the peer's mappings used 64-bit DSNs (`msk->use_64bit_ack`, set from the
//! received mapping), i.e. at the data receiver, and 32 bits at the data sender, which
//! receives no mappings; data carries a 64-bit-DSN mapping without checksum, padded with
//! two NOPs. So with timestamps a data packet has 12 + 24 B of options and a 1500-byte MTU
//! holds 1500 − 40 − 36 = 1424 B of payload (1420 B with `classic`'s 28-byte DSS); the
//! receiver's pure ACKs carry 12 B of DSS (+12 timestamps, leaving room for one SACK block
//! as Linux computes it after the MPTCP options), the sender's 8 B. Checked against
//! captures of Linux 6.18: data 1500 B (1424 B payload), ACK 64 B, ACK with one SACK block
//! 76 B, MP_CAPABLE SYN / SYN-ACK / ACK 64 / 72 / 72 B, MP_JOIN 72 / 76 / 76 B.

use crate::app::App;
use crate::cc::{self, CongestionControl, PeerView};
use crate::config::{
    BufSize, BufferAccounting, ConnCfg, ConnKind, Direction, DrsRtt, OptionSizes, PenalisationRule, RcvbufWindow,
    Scenario, WindowTail, WindowUpdate,
};
use crate::mptcp::pm::{PathManager, PmAction};
use crate::mptcp::rcvbuf::{RcvRtt, RcvSpace, DEFAULT_SCALING_RATIO};
use crate::mptcp::reassembly::ConnReceiver;
use crate::mptcp::sched::{self, SchedView, Scheduler};
use crate::mptcp::sendbuf::{v09x_skb_truesize, ConnSender, MetaCharge, V09X_MAX_TCP_HEADER};
use crate::mptcp::sfqueue::SubflowQueue;
use crate::net::packet::{flags, optlen, MpOption, Packet, SackBlocks, IP_TCP_HEADER};
use crate::rng::Rng;
use crate::tcp::receiver::{AckNeed, Arriving, Chunk};
use crate::tcp::scoreboard::SentSeg;
use crate::tcp::subflow::{State, Subflow, TcpParams};
use crate::units::{Dsn, Dur, Seq, Time};

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
    /// This end's DATA_ACK is 64 bits wide (see the module documentation).
    ack64: bool,
    /// When the joins open (client) and which addresses are announced (server).
    pub pm: PathManager,
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
    /// M2's test, and (v0.88) the last time each subflow was penalised.
    pub(crate) penalisation_rule: PenalisationRule,
    pub(crate) last_penalised: Vec<Option<Time>>,
    /// Receiver-side RTT estimate of each subflow (receive-buffer auto-tuning).
    rcv_rtt: Vec<RcvRtt>,
    /// `sent_at` of the latest packet received on each subflow (echoed as `ts_echo`).
    ts_recent: Vec<Time>,
    /// Window last advertised on each subflow and that subflow's `rcv_nxt` then.
    adv: Vec<(u64, Seq)>,
    /// Window last advertised on any subflow (Linux `msk->old_wspace`).
    old_space: u64,
    pub(crate) window_update: WindowUpdate,
    /// Which subflow RTT paces receive-buffer auto-tuning.
    drs_rtt: DrsRtt,
    /// Linux buffer semantics (`buffer_accounting = "truesize"`).
    pub(crate) truesize: bool,
    /// Linux's TSO deferral for queued data (`tcp.tso_defer`, [`crate::tcp::tso`]).
    pub(crate) tso_defer: bool,
    /// The MPTCP-level retransmission timer is on (`mptcp_retransmit`), its deadline, and
    /// its interval as the scheduler last set it (`timer_ival`).
    pub(crate) mptcp_rtx: bool,
    /// The send buffer as configured (fixed or auto-tuned).
    pub(crate) sndbuf_cfg: BufSize,
    pub(crate) rtx_at: Option<Time>,
    pub(crate) rtx_ival: crate::units::Dur,
    /// Whether the first queue each subflow's packets enter is in this host
    /// (`queue_at = "host"`): its data packets then count against TCP small queues.
    host_queue: Vec<bool>,
    /// Scratch: each subflow's `segments_sent` when a push began.
    pub(crate) sent_before: Vec<u64>,
}

impl Endpoint {
    /// `subflows`: the (route id, backup) of each subflow.
    pub fn new(conn: u32, cfg: &ConnCfg, subflows: &[(usize, bool)], sc: &Scenario, is_client: bool) -> Endpoint {
        let mptcp = cfg.kind == ConnKind::Mptcp;
        let is_sender = (cfg.direction == Direction::Upload) == is_client;
        let t = &cfg.tcp;
        let ts_len = if t.timestamps { optlen::TIMESTAMPS } else { 0 };
        let ack64 = cfg.option_sizes == OptionSizes::Classic || !is_sender;
        let mp_len = if mptcp { optlen::dss(ack64, true) } else { 0 };
        let smss = t.mss.min(t.mtu - IP_TCP_HEADER as u64 - ts_len as u64 - mp_len as u64);
        let paths: Vec<(usize, bool)> = subflows.to_vec();
        // The out-of-tree stack's one-MSS skbs: `smss` of payload in a buffer allocated for
        // the subflow's `mss_cache` (without the DSS option), `mptcp_select_size`.
        let skb_charge = (mptcp && cfg.buffer_accounting == BufferAccounting::Skb).then(|| {
            (smss, v09x_skb_truesize(smss + mp_len as u64, cfg.max_tcp_header.unwrap_or(V09X_MAX_TCP_HEADER)))
        });
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
            quickack: t.quickack,
            cwnd_limited: t.cwnd_limited,
            tso_defer: t.tso_defer,
            cwv: t.cwv,
            tsq: t.tsq,
            tx_skb_truesize: skb_charge.map(|(_, truesize)| truesize),
        };
        let start = Time::ZERO + cfg.start;
        let warmup = Time::ZERO + sc.output.warmup;
        let truesize = cfg.buffer_accounting == BufferAccounting::Truesize;
        let space = RcvSpace::new(cfg.rcvbuf, cfg.buffer_accounting, t.mss);
        let initial_rwnd = space.window_for(0);
        let mut snd = ConnSender::new(App::from_cfg(&cfg.app, start), conn_sndbuf(cfg.sndbuf, truesize), initial_rwnd);
        snd.fill_tail = mptcp && cfg.window_tail == WindowTail::Fill;
        if let Some((payload, truesize)) = skb_charge {
            snd.charge = MetaCharge::Skb { payload, truesize };
        }
        let mut rcv = ConnReceiver::new(space, warmup).full_window(cfg.rcvbuf_window == RcvbufWindow::Full);
        rcv.count_subflow_ooo = !truesize;
        Endpoint {
            conn,
            is_client,
            mptcp,
            is_sender,
            params: vec![p; paths.len()],
            subflows: (0..paths.len()).map(|_| None).collect(),
            paths,
            ts_len,
            ack64,
            pm: PathManager::new(cfg.join),
            cc: cc::build(
                cfg.cc,
                &cfg.cc_params,
                Rng::stream(sc.seed, &format!("cc:{}:{}", cfg.name, if is_client { "client" } else { "server" })),
            ),
            sched: sched::build(cfg.scheduler, &cfg.sched_params),
            snd,
            rcv,
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
            penalisation_rule: cfg.sched_params.minrtt.penalisation_rule,
            last_penalised: vec![None; subflows.len()],
            rcv_rtt: vec![RcvRtt::default(); subflows.len()],
            ts_recent: vec![Time::ZERO; subflows.len()],
            adv: vec![(0, Seq(0)); subflows.len()],
            old_space: 0,
            window_update: cfg.window_update,
            drs_rtt: if mptcp { cfg.drs_rtt } else { DrsRtt::Smallest },
            truesize,
            tso_defer: t.tso_defer,
            mptcp_rtx: mptcp && cfg.mptcp_retransmit,
            sndbuf_cfg: cfg.sndbuf,
            rtx_at: None,
            rtx_ival: t.rto_min,
            host_queue: vec![false; subflows.len()],
            sent_before: Vec::new(),
        }
    }

    /// Marks subflow `sf`'s first queue as one in this host (set by the simulator).
    pub fn set_host_queue(&mut self, sf: usize, at_host: bool) {
        self.host_queue[sf] = at_host;
    }

    /// The oldest of subflow `sf`'s packets still in this host's queue leaves it at `at` (the
    /// simulator reports each packet a host queue took or dropped, in sending order).
    pub fn host_departure(&mut self, sf: usize, at: Time) {
        if let Some(s) = self.subflows[sf].as_mut() {
            s.tsq.departs(at);
        }
    }

    pub fn subflow(&self, i: usize) -> Option<&Subflow> {
        self.subflows.get(i).and_then(|s| s.as_ref())
    }

    // ------------------------------------------------------------------ packets

    pub(crate) fn packet(&mut self, now: Time, sf: usize, fl: u8, mp: MpOption) -> Packet {
        let wnd = if fl & flags::SYN != 0 {
            // A SYN's window is not scaled (RFC 7323 §2.2): Linux offers at most 65535 B.
            let w = self.rcv.space.window_for(0);
            if self.truesize {
                w.min(65_535)
            } else {
                w
            }
        } else {
            self.adv_window(sf)
        };
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
            ack64: self.ack64,
            sent_at: now,
            ts_echo: self.ts_recent[sf],
        }
        .sized(self.ts_len)
    }

    pub(crate) fn handshake_packet(&mut self, now: Time, sf: usize, out: &mut Vec<Packet>) {
        let s = self.subflows[sf].as_ref().expect("subflow");
        let first = sf == 0;
        let (fl, mp) = match (s.state(), self.is_client) {
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
        if self.host_queue[sf] {
            let s = self.subflows[sf].as_mut().expect("sending subflow exists");
            let truesize = s.tx_truesize(seg.len as u64);
            s.tsq.charge(now, truesize);
        }
        out.push(p.sized(self.ts_len));
    }

    /// The receive window to advertise on subflow `sf`: free space of the shared receive
    /// buffer, at most the subflow's `rcv_ssthresh` where `tcp_grow_window` is modelled (Linux
    /// `__tcp_select_window`), the right edge never moving left (for MPTCP, `mptcp_set_rwin`
    /// raises a subflow's window to the connection's right edge).
    fn adv_window(&mut self, sf: usize) -> u64 {
        let sub_ooo: u64 = self.subflows.iter().flatten().map(|s| s.rcv.ooo_bytes()).sum();
        let cap = self.subflows.get(sf).and_then(|s| s.as_ref()).map_or(u64::MAX, |s| s.rcv.offer_cap());
        self.rcv.window(sub_ooo, cap)
    }

    /// Each MPTCP subflow has a receive buffer of its own (Linux's memory accounting with
    /// `tcp_grow_window` modelled); a TCP connection's one socket is the connection's buffer.
    fn subflow_bufs(&self) -> bool {
        self.mptcp && self.truesize && self.params.first().is_some_and(|p| p.quickack)
    }

    /// The free space the next advertised window would offer, without advertising it.
    fn adv_window_peek(&self) -> u64 {
        let sub_ooo: u64 = self.subflows.iter().flatten().map(|s| s.rcv.ooo_bytes()).sum();
        self.rcv.free(sub_ooo)
    }

    pub(crate) fn send_ack(&mut self, now: Time, sf: usize, out: &mut Vec<Packet>) {
        let mut p = self.packet(now, sf, flags::ACK, MpOption::Dss);
        let s = self.subflows[sf].as_mut().expect("subflow");
        s.rcv.on_ack_sent();
        s.timers.delack.stop();
        p.ack = s.rcv.rcv_nxt;
        let used = self.ts_len + if self.mptcp { optlen::dss(self.ack64, false) } else { 0 };
        let max_blocks = ((optlen::MAX - used).saturating_sub(2) / 8).min(4) as usize;
        for b in s.rcv.sack_blocks(max_blocks) {
            p.sack.push(p.ack, b);
        }
        self.adv[sf] = (p.wnd, s.rcv.rcv_nxt);
        self.old_space = p.wnd;
        out.push(p.sized(self.ts_len));
    }

    // ------------------------------------------------------------------ setup

    fn new_subflow(&mut self, sf: usize, state: State) {
        let (path, backup) = self.paths[sf];
        let mut s = Subflow::new(sf as u8, path, backup, state, self.params[sf].clone());
        if self.cc.rate_based() {
            s.set_rate_based();
        }
        self.sfq[sf] = match (self.sndbuf_cfg, self.truesize) {
            // SO_SNDBUF: every subflow's buffer is set to the doubled value and locked.
            (BufSize::Fixed(b), true) => SubflowQueue::locked(2 * b.0),
            _ => SubflowQueue::new(s.w.smss, s.w.cwnd, self.subflow_sndbuf_cap()),
        };
        // Linux `tcp_select_initial_window`: `rcv_ssthresh` starts at the window offered in
        // the handshake, before any data set the scaling ratio.
        s.rcv.rcv_ssthresh = self.rcv.space.window_for(0);
        if self.subflow_bufs() {
            // An MPTCP subflow is a socket of its own: created with `tcp_rmem[1]` (or the
            // locked size), its record starting as `tcp_init_buffer_space` sets it.
            s.rcv.rcvbuf = self.rcv.space.subflow_initial();
            s.rcv.rcvq_space = self.rcv.space.initial_record();
        }
        self.subflows[sf] = Some(s);
        self.sync_sndbuf();
    }

    /// The largest send buffer a subflow may auto-tune to: `tcp_wmem[2]` for a triple; for a
    /// fixed size with payload accounting, the connection's buffer (the classic model).
    pub(crate) fn subflow_sndbuf_cap(&self) -> u64 {
        match self.sndbuf_cfg {
            BufSize::Fixed(_) => self.snd.sndbuf,
            BufSize::Auto(t) => t.max.0,
        }
    }

    /// Linux `__mptcp_sync_sndbuf`: an auto-tuned MPTCP socket's send buffer is `tcp_wmem[0]`
    /// plus the sum of its subflows' (each auto-tuned by `tcp_sndbuf_expand`; read back on
    /// 6.18 with `ss -M`: 4096 + 2 × 300000 B with two subflows at a 300000 B maximum); a fixed
    /// one stays as set.
    ///
    /// The out-of-tree stack (`buffer_accounting = "skb"`) has `mptcp_update_sndbuf` instead:
    /// the meta socket's buffer is the sum of its subflows', at most `tcp_wmem[2]`, and never
    /// shrinks; it starts at `tcp_wmem[1]`.
    pub(crate) fn sync_sndbuf(&mut self) {
        if let BufSize::Auto(t) = self.sndbuf_cfg {
            let sum: u64 =
                self.subflows.iter().zip(&self.sfq).filter(|(s, _)| s.is_some()).map(|(_, q)| q.sndbuf).sum();
            self.snd.sndbuf = match self.snd.charge {
                MetaCharge::Skb { .. } => self.snd.sndbuf.max(sum.min(t.max.0)),
                MetaCharge::Payload if sum > 0 => t.min.0 + sum,
                MetaCharge::Payload => t.default.0,
            };
        }
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
        s.timers.handshake.arm(now + s.p.rto_initial);
        self.handshake_packet(now, sf, out);
    }

    fn established(&mut self, now: Time, sf: usize) {
        let s = self.subflows[sf].as_mut().expect("subflow");
        if !s.hs_retransmitted {
            s.rtt.on_sample(now.since(s.hs_sent_at));
        }
        s.stats.established_at = Some(now);
        s.timers.handshake.stop();
        s.hs_backoff = 0;
    }

    fn start_app(&mut self, now: Time) {
        if self.is_sender && !self.app_started {
            self.app_started = true;
            self.snd.app_write(now);
        }
    }

    // ------------------------------------------------------------------ path manager

    /// Carries out what the path manager asked for.
    pub(crate) fn pm_act(&mut self, now: Time, act: PmAction, out: &mut Vec<Packet>) {
        if !self.mptcp {
            return;
        }
        match act {
            PmAction::None => {}
            PmAction::OpenAll => {
                for j in 1..self.subflows.len() {
                    if self.subflows[j].is_none() {
                        self.open_subflow(now, j, out);
                    }
                }
            }
            PmAction::Announce(j) => {
                // A pure ACK on the initial subflow carrying only the ADD_ADDR.
                let mp = MpOption::AddAddr { id: j as u8, route: self.paths[j].0 as u8 };
                let mut p = self.packet(now, 0, flags::ACK, mp);
                p.ack = self.subflows[0].as_ref().map_or(Seq(0), |s| s.rcv.rcv_nxt);
                out.push(p);
            }
        }
    }

    /// Path-manager events carried by a packet on an established subflow.
    fn pm_on_packet(&mut self, now: Time, i: usize, pkt: &Packet, out: &mut Vec<Packet>) {
        match pkt.mp {
            MpOption::AddAddr { id, route } if self.is_client => {
                // Open the join to the announced address, and echo it on a pure ACK.
                let j = id as usize;
                if j < self.subflows.len() && self.subflows[j].is_none() {
                    self.pm.joins_opened = true;
                    self.open_subflow(now, j, out);
                }
                let mut p = self.packet(now, i, flags::ACK, MpOption::AddAddrEcho { id, route });
                p.ack = self.subflows[i].as_ref().map_or(Seq(0), |s| s.rcv.rcv_nxt);
                out.push(p);
            }
            MpOption::AddAddrEcho { id, .. } if !self.is_client => {
                let act = self.pm.on_echo(now, id as usize, self.subflows.len());
                self.pm_act(now, act, out);
            }
            MpOption::Dss if self.is_client && i == 0 => {
                let act = self.pm.on_fully_established_client();
                self.pm_act(now, act, out);
            }
            _ => {}
        }
    }

    // ------------------------------------------------------------------ input

    pub fn on_packet(&mut self, now: Time, pkt: &Packet, out: &mut Vec<Packet>) {
        let i = pkt.subflow as usize;
        if i >= self.subflows.len() {
            return;
        }
        self.ts_recent[i] = self.ts_recent[i].max(pkt.sent_at);
        if pkt.is(flags::SYN) && !pkt.is(flags::ACK) {
            // Server: a SYN (new, or a retransmission because our SYN/ACK was lost).
            if self.subflows[i].is_none() {
                if i > 0 && !self.mp_established {
                    return; // MP_JOIN for a connection not yet established: ignore
                }
                self.new_subflow(i, State::SynRcvd);
            }
            let s = self.subflows[i].as_mut().expect("subflow");
            if s.state() == State::SynRcvd {
                if s.timers.handshake.is_armed() {
                    s.hs_retransmitted = true;
                }
                s.hs_sent_at = now;
                s.timers.handshake.arm(now + s.p.rto_initial.times(1 << s.hs_backoff.min(10)).min(s.p.rto_max));
                self.handshake_packet(now, i, out);
            }
            return;
        }
        let Some(s) = self.subflows[i].as_mut() else {
            return;
        };
        if pkt.is(flags::SYN) {
            // Client: SYN/ACK.
            match s.state() {
                State::SynSent => {
                    let join_sender = i > 0 && self.is_sender;
                    self.established(now, i);
                    let s = self.subflows[i].as_mut().expect("subflow");
                    if join_sender {
                        s.set_state(now, State::PreEstablished);
                        s.hs_sent_at = now;
                        s.timers.handshake.arm(now + s.rtt.rto());
                    } else {
                        s.set_state(now, State::Established);
                    }
                    self.handshake_packet(now, i, out);
                    if i == 0 {
                        self.mp_established = true;
                        let act = self.pm.on_synack();
                        self.pm_act(now, act, out);
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
        match s.state() {
            State::SynRcvd => {
                // Server: third ACK (or data implying it).
                s.set_state(now, State::Established);
                self.established(now, i);
                if i > 0 {
                    self.handshake_packet(now, i, out); // fourth ACK
                } else {
                    self.mp_established = true;
                    self.start_app(now);
                    let act = self.pm.on_fully_established_server(now, self.subflows.len());
                    self.pm_act(now, act, out);
                }
            }
            State::PreEstablished => {
                s.set_state(now, State::Established);
                s.timers.handshake.stop();
            }
            State::SynSent => return,
            State::Established => {
                if !self.is_client && i > 0 && pkt.mp == MpOption::JoinAck {
                    self.handshake_packet(now, i, out); // re-send the fourth ACK
                    return;
                }
            }
        }
        if self.mptcp {
            self.pm_on_packet(now, i, pkt, out);
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
        let delivered_before = self.rcv.delivered;
        if pkt.payload > 0 {
            let dsn = if self.mptcp { pkt.dsn } else { Dsn(pkt.seq.0) };
            let full = pkt.payload as u64 >= s.p.smss;
            self.chunks.clear();
            let seg = Arriving { seq: pkt.seq, len: pkt.payload as u64, dsn, full_size: full };
            let new_data = pkt.seq.0 + pkt.payload as u64 > s.rcv.rcv_nxt.0;
            let ooo_before = s.rcv.ooo_bytes();
            need = s.rcv.on_segment(seg, s.p.b, now, &mut self.chunks);
            if s.rcv.rcvbuf > 0 && s.rcv.ooo_bytes() > ooo_before {
                // `tcp_data_queue_ofo` → `tcp_rcvbuf_grow(ssk, space)`: the subflow's buffer
                // grows to hold the span it now holds out of order.
                let (record, span) = (s.rcv.rcvq_space, s.rcv.ooo_span());
                self.rcv.space.grow_subflow(&mut s.rcv.rcvbuf, &mut s.rcv.rcvq_space, record, span);
            }
            if s.stats.first_data_at.is_none() {
                s.stats.first_data_at = Some(now);
            }
            if full {
                self.rcv.space.on_segment(pkt.payload as u64);
                if s.rcv.rcvbuf > 0 && !s.rcv.ratio_seen {
                    // The subflow's own first full-sized segment sets its ratio
                    // (`tcp_measure_rcv_mss` → `tcp_set_window_clamp`).
                    s.rcv.ratio_seen = true;
                    let old = (s.rcv.rcvbuf * DEFAULT_SCALING_RATIO) >> 8;
                    let new = self.rcv.space.subflow_window(s.rcv.rcvbuf, 0);
                    s.rcv.raise_window_clamp(old, new, self.adv[i].0);
                }
            }
            // `tcp_event_data_recv`, after `tcp_measure_rcv_mss`: `tcp_grow_window` sends the
            // segment's ACK at once while the window this socket's buffer allows is above
            // `rcv_ssthresh` (the peer's MSS taken as the largest segment received, where
            // Linux uses this end's `advmss`). An MPTCP subflow's buffer is its own, less what
            // it holds out of order; a TCP connection's is the connection's.
            if new_data && s.rcv.quickack {
                let clamp = if s.rcv.rcvbuf > 0 {
                    self.rcv.space.subflow_window(s.rcv.rcvbuf, s.rcv.ooo_bytes())
                } else {
                    self.rcv.space.window_for(0)
                };
                if s.rcv.grow_window(pkt.payload as u64, clamp, s.rcv.rcv_mss) {
                    need = AckNeed::Now;
                }
            }
            self.rcv_rtt[i].on_data(now, pkt.ts_echo);
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
        let read = self.rcv.delivered - delivered_before;
        let linux_read = self.window_update == WindowUpdate::AllSubflows;
        if linux_read {
            // The segment is acknowledged before the application reads what it delivered.
            self.rcv.unread = read;
        }
        let s = self.subflows[i].as_mut().expect("subflow");
        match need {
            AckNeed::Now => self.send_ack(now, i, out),
            AckNeed::Delayed => {
                if !s.timers.delack.is_armed() {
                    s.timers.delack.arm(now + s.p.delack_timeout);
                }
            }
        }
        self.rcv.unread = 0;
        if read > 0 {
            match drs_rtt(self.drs_rtt, self.rcv_rtt[i].est, self.rcv_rtt.iter().map(|r| r.est)) {
                Some((rtt, DrsRtt::Smallest)) => self.rcv.space.on_rtt(rtt),
                Some((rtt, DrsRtt::Largest)) => self.rcv.space.set_rtt(rtt),
                None => {}
            }
            let span = self.rcv.ooo_span();
            if let Some(copied) = self.rcv.space.on_read(now, read, span) {
                // `mptcp_rcv_space_adjust`: the subflows follow the connection's buffer.
                for s in self.subflows.iter_mut().flatten().filter(|s| s.rcv.rcvbuf > 0 && s.established()) {
                    let span = s.rcv.ooo_span();
                    self.rcv.space.grow_subflow(&mut s.rcv.rcvbuf, &mut s.rcv.rcvq_space, copied, span);
                }
            }
            if linux_read {
                self.cleanup_rbuf(now, out);
            }
        }
    }

    /// After the application read data: Linux `mptcp_cleanup_rbuf`. A subflow runs
    /// `tcp_cleanup_rbuf` when the free space has at least doubled since the last advertised
    /// window (`old_wspace`), or when it owes a delayed ACK that the read lets go out
    /// (`mptcp_subflow_could_cleanup`: more than one segment unacknowledged, or a short segment
    /// and the read emptied the connection's receive queue, out-of-order data included). See
    /// [`cleanup_acks`] for what `tcp_cleanup_rbuf` then sends.
    fn cleanup_rbuf(&mut self, now: Time, out: &mut Vec<Packet>) {
        let space = self.adv_window_peek();
        let doubled = space_doubled(space, self.old_space);
        let rx_empty = self.rcv.ooo_bytes() == 0 && self.rcv.unread == 0;
        let clamp = self.rcv.space.window_for(0);
        for j in 0..self.subflows.len() {
            let Some(s) = self.subflows[j].as_ref().filter(|s| s.established()) else { continue };
            let (wnd, at) = self.adv[j];
            let sub = PendingAck {
                scheduled: s.timers.delack.is_armed(),
                arrived: s.rcv.rcv_nxt.0.saturating_sub(at.0),
                rcv_mss: s.rcv.rcv_mss,
                pushed: s.rcv.pushed,
                subflow_empty: s.rcv.ooo_bytes() == 0,
                adv_wnd: wnd,
            };
            // The subflow's own `window_clamp` and `__tcp_select_window` (capped at its
            // `rcv_ssthresh`) where they are modelled.
            let space = space.min(s.rcv.offer_cap());
            let clamp = if s.rcv.rcvbuf > 0 { self.rcv.space.subflow_window(s.rcv.rcvbuf, 0) } else { clamp };
            if cleanup_acks(doubled, rx_empty, &sub, space, clamp) {
                self.send_ack(now, j, out);
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
                self.on_data_acked(now);
            }
        }
        if self.persist_at.is_some() && !self.snd.rwnd_blocked(self.params[0].smss) {
            self.persist_at = None;
            self.persist_backoff = 0;
        }
        self.snapshot_peers();
        let s = self.subflows[i].as_mut().expect("subflow");
        let sack = pkt.sack.blocks(pkt.ack);
        let o = s.on_ack(now, pkt.ack, &sack[..pkt.sack.n as usize], self.cc.as_mut(), &self.peers);
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

/// `mptcp_cleanup_rbuf`'s gate: the free space is positive and at least twice the window
/// last advertised (`old_wspace`).
fn space_doubled(space: u64, old_space: u64) -> bool {
    space > 0 && space >= 2 * old_space
}

/// The RTT a read reports to receive-buffer auto-tuning ([`DrsRtt`]): the estimate of the
/// subflow that delivered (the interval keeps the smallest, Linux 7.0), or the largest
/// estimate of all subflows (the 6.18 sources' `mptcp_rcv_space_adjust`: `max(sf_rtt_us)` over
/// `mptcp_for_each_subflow`, whoever delivered).
fn drs_rtt(rule: DrsRtt, delivering: Option<Dur>, all: impl Iterator<Item = Option<Dur>>) -> Option<(Dur, DrsRtt)> {
    match rule {
        DrsRtt::Smallest => delivering.map(|r| (r, rule)),
        DrsRtt::Largest => all.flatten().max().map(|r| (r, rule)),
    }
}

/// One subflow's receive state as `mptcp_cleanup_rbuf` reads it.
struct PendingAck {
    /// A delayed ACK is pending (`ICSK_ACK_SCHED`).
    scheduled: bool,
    /// Bytes that arrived since its last ACK (`rcv_nxt - rcv_wup`).
    arrived: u64,
    /// Its estimate of the peer's segment size (`icsk_ack.rcv_mss`).
    rcv_mss: u64,
    /// A short segment arrived since its last ACK (`ICSK_ACK_PUSHED`).
    pushed: bool,
    /// Nothing waits in its own receive queues (`sk_rmem_alloc` of the subflow).
    subflow_empty: bool,
    /// The window of its last ACK.
    adv_wnd: u64,
}

/// Whether a subflow acknowledges after a read (Linux 6.18 `mptcp_cleanup_rbuf`,
/// `mptcp_subflow_could_cleanup`, `tcp_cleanup_rbuf`). It runs `tcp_cleanup_rbuf` if the free
/// space doubled (`doubled`) or it could clean up: a delayed ACK is pending and more than one
/// segment arrived since its last ACK, or a short one did and the read emptied the
/// connection's receive queue (`rx_empty`). `tcp_cleanup_rbuf` then sends the pending ACK if
/// more than one segment arrived, or a short one did and the subflow holds nothing
/// (`ICSK_ACK_PUSHED` with the receiver not in ping-pong mode, which a bulk receiver never
/// enters), and otherwise a window update if the window grew enough ([`subflow_window_update`]).
fn cleanup_acks(doubled: bool, rx_empty: bool, a: &PendingAck, space: u64, clamp: u64) -> bool {
    let more_than_one = a.arrived > a.rcv_mss;
    let could = a.scheduled && (more_than_one || (rx_empty && a.pushed));
    if !(doubled || could) {
        return false;
    }
    let time_to_ack = a.scheduled && (more_than_one || (a.pushed && a.subflow_empty));
    time_to_ack || subflow_window_update(space, clamp, a.adv_wnd, a.arrived)
}

/// `tcp_cleanup_rbuf`'s test for one subflow: the window it still offers (`tcp_receive_window`:
/// the window it last advertised, `adv_wnd`, less the bytes that arrived on it since) is at
/// most half the window clamp, and the new window (`space`) is at least twice that.
fn subflow_window_update(space: u64, clamp: u64, adv_wnd: u64, arrived: u64) -> bool {
    let offered = adv_wnd.saturating_sub(arrived);
    2 * offered <= clamp && space >= 2 * offered
}

/// The connection's send buffer at the start (see [`Endpoint::sync_sndbuf`]): a fixed
/// size (doubled with Linux's accounting), or `tcp_wmem[1]` until subflows exist.
fn conn_sndbuf(b: BufSize, truesize: bool) -> u64 {
    match b {
        BufSize::Fixed(x) if truesize => 2 * x.0,
        BufSize::Fixed(x) => x.0,
        BufSize::Auto(t) => t.default.0,
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
            MpOption::Dss => optlen::dss(self.ack64, self.payload > 0),
            MpOption::AddAddr { .. } => optlen::ADD_ADDR,
            MpOption::AddAddrEcho { .. } => optlen::ADD_ADDR_ECHO,
        };
        opts += optlen::sack(self.sack.n as u32);
        self.wire_len = IP_TCP_HEADER + opts + self.payload;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn window_updates_follow_mptcp_cleanup_rbuf_and_tcp_cleanup_rbuf() {
        // A 3G hole filled: the ACK on 3G advertised 56 KB (most of the buffer still
        // unread), the application read, and 300 KB are free now: 300 >= 2 * 56.
        assert!(space_doubled(300_000, 56_000));
        assert!(!space_doubled(100_000, 56_000));
        assert!(!space_doubled(0, 0));
        // WiFi last advertised 60 KB and received 40 KB since: it still offers 20 KB;
        // clamp 320 KB: 40 <= 320 and 300 >= 40 -> update.
        assert!(subflow_window_update(300_000, 320_000, 60_000, 40_000));
        // A subflow still offering 200 KB: 400 > 320 (more than half the clamp) -> none.
        assert!(!subflow_window_update(300_000, 320_000, 200_000, 0));
        // Offering 160 KB with 300 KB free: 300 < 320 -> none.
        assert!(!subflow_window_update(300_000, 640_000, 160_000, 0));
    }

    #[test]
    fn a_read_that_empties_the_queue_sends_a_pending_ack_for_a_short_segment() {
        // The fast subflow's last segment was the window's 124-byte tail, its ACK delayed
        // (`ICSK_ACK_PUSHED`); it still offers 262 140 B, so the window-update test fails
        // (2 x 262 140 > clamp 262 140).
        let fast = PendingAck {
            scheduled: true,
            arrived: 124,
            rcv_mss: 1424,
            pushed: true,
            subflow_empty: true,
            adv_wnd: 262_140,
        };
        // The slow path's segment filled the hole and the application read everything:
        // `rx_empty`, so `mptcp_subflow_could_cleanup` holds and `tcp_cleanup_rbuf` sends the
        // pending ACK, whether or not the space doubled.
        assert!(cleanup_acks(false, true, &fast, 262_140, 262_140));
        assert!(cleanup_acks(true, true, &fast, 262_140, 262_140));
        // Data still held out of order at the connection level: not empty, no doubling -> none.
        assert!(!cleanup_acks(false, false, &fast, 100_000, 262_140));
        // With doubling, `tcp_cleanup_rbuf` runs and its PUSHED test needs only the subflow's
        // own queues empty.
        assert!(cleanup_acks(true, false, &fast, 262_140, 262_140));
        // No ACK pending: only the window-update test, which fails here.
        let idle = PendingAck { scheduled: false, pushed: false, ..fast };
        assert!(!cleanup_acks(true, true, &idle, 262_140, 262_140));
        // More than one segment unacknowledged with an ACK pending: sent on any read
        // (`rcv_nxt - rcv_wup > rcv_mss`).
        let two = PendingAck { arrived: 1424 + 124, pushed: false, ..fast };
        assert!(cleanup_acks(false, false, &two, 0, 262_140));
    }

    #[test]
    fn drs_takes_the_delivering_subflows_rtt_or_the_largest_of_all_subflows() {
        let ms = |x: u64| Some(Dur::from_ms(x));
        // WiFi (20 ms) delivered; 3G (200 ms) has an estimate too; a third subflow none yet.
        let all = [ms(20), ms(200), None];
        assert_eq!(drs_rtt(DrsRtt::Largest, ms(20), all.into_iter()), Some((Dur::from_ms(200), DrsRtt::Largest)));
        assert_eq!(drs_rtt(DrsRtt::Smallest, ms(20), all.into_iter()), Some((Dur::from_ms(20), DrsRtt::Smallest)));
        // No estimate anywhere: no interval can close.
        assert_eq!(drs_rtt(DrsRtt::Largest, None, [None, None].into_iter()), None);
    }

    #[test]
    fn the_send_buffer_starts_fixed_doubled_or_at_the_default() {
        use crate::config::{BufTriple, ByteSize};
        assert_eq!(conn_sndbuf(BufSize::Fixed(ByteSize(1 << 20)), false), 1 << 20);
        assert_eq!(conn_sndbuf(BufSize::Fixed(ByteSize(1 << 20)), true), 2 << 20);
        let t = BufTriple { min: ByteSize(4096), default: ByteSize(16384), max: ByteSize(4 << 20) };
        assert_eq!(conn_sndbuf(BufSize::Auto(t), true), 16384);
    }

    fn endpoints(option_sizes: &str) -> (Endpoint, Endpoint) {
        let sc = Scenario::from_toml_str(&format!(
            r#"
            duration = "1s"
            [[paths]]
            name = "p"
            rate = "10Mbit"
            [[connections]]
            name = "c"
            kind = "mptcp"
            paths = ["p"]
            option_sizes = "{option_sizes}"
            app = {{ kind = "bulk" }}
        "#
        ))
        .expect("valid");
        let cfg = &sc.connections[0];
        (Endpoint::new(0, cfg, &[(0, false)], &sc, true), Endpoint::new(0, cfg, &[(0, false)], &sc, false))
    }

    #[test]
    fn a_1500_byte_mtu_holds_1424_bytes_with_linux_options_and_1420_with_classic() {
        // 1500 − 20 IP − 20 TCP − 12 timestamps − DSS: Linux's data sender writes a 32-bit
        // DATA_ACK and a 64-bit mapping, 4 + 4 + 14 = 22 → 24 B, so 1424 B; classic's 64-bit
        // DATA_ACK gives 4 + 8 + 14 = 26 → 28 B, so 1420 B.
        for (sizes, payload, ack, ack_sack) in [("linux", 1424, 64, 76), ("classic", 1420, 64, 76)] {
            let (mut client, mut server) = endpoints(sizes);
            assert_eq!(server.params[0].smss, payload, "{sizes}");
            let seg = SentSeg { len: payload as u32, ..SentSeg::default() };
            let mut out = Vec::new();
            server.data_packet(Time::ZERO, 0, seg, &mut out);
            assert_eq!(out[0].wire_len, 1500, "{sizes}: data packet");
            // The receiver's pure ACK: 40 + 12 timestamps + 12 DSS (64-bit DATA_ACK) = 64 B, and
            // with SACK: 40 − 24 = 16 B of option space left, room for one block (4 + 8 B with
            // its two NOPs, Linux `tcp_established_options`), 76 B.
            let ack_pkt = client.packet(Time::ZERO, 0, flags::ACK, MpOption::Dss);
            assert_eq!(ack_pkt.wire_len, ack, "{sizes}: pure ACK");
            let mut with_sack = ack_pkt;
            with_sack.sack.n = 1;
            assert_eq!(with_sack.sized(client.ts_len).wire_len, ack_sack, "{sizes}: ACK with SACK");
        }
        // Linux's data sender acknowledges with a 32-bit DATA_ACK: 40 + 12 + 8 = 60 B (the
        // kernel's fourth ACK of a join in a download).
        let (_, mut server) = endpoints("linux");
        assert_eq!(server.packet(Time::ZERO, 0, flags::ACK, MpOption::Dss).wire_len, 60);
    }
}
