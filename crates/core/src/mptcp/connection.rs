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
//!
//! Deviations: no connection teardown (FIN/DATA_FIN), no checksum in DSS.
//!
//! The endpoint's parts live beside this file, each an `impl Endpoint` of its own:
//! [`crate::mptcp::wire`] (packets and option sizes), [`crate::mptcp::recv`] (the receive
//! side and window updates), [`crate::mptcp::xmit`] (the send loop, where every scheduling
//! decision is made), [`crate::mptcp::view`] (the scheduler's view of the subflows),
//! [`crate::mptcp::rbuf_opt`] (M1/M2), [`crate::mptcp::timers`] (timers and reinjection on
//! RTO) and [`crate::mptcp::stale`] (stale subflows).

use crate::app::App;
use crate::cc::{self, CongestionControl, PeerView};
use crate::config::{
    BufSize, BufferAccounting, ConnCfg, ConnKind, DataFrags, Direction, DrsRtt, OptionSizes, PacingMss,
    PenalisationRule, PerMss, RcvbufWindow, RightEdge, Scenario, WindowTail, WindowUpdate,
};
use crate::mptcp::pm::{PathManager, PmAction};
use crate::mptcp::rcvbuf::{RcvRtt, RcvSpace};
use crate::mptcp::reassembly::ConnReceiver;
use crate::mptcp::sched::{self, SchedView, Scheduler};
use crate::mptcp::sendbuf::{v09x_skb_truesize, ConnSender, Frags, MetaCharge, V09X_MAX_TCP_HEADER};
use crate::mptcp::sfqueue::{build_per_mss, per_mss, SubflowQueue};
use crate::net::packet::{flags, optlen, MpOption, Packet, IP_TCP_HEADER};
use crate::rng::Rng;
use crate::tcp::metrics::Metrics;
use crate::tcp::receiver::Chunk;
use crate::tcp::subflow::{State, Subflow, TcpParams};
use crate::tcp::timer::Slot;
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
    pub(super) ts_len: u32,
    /// This end's DATA_ACK is 64 bits wide (see the module documentation).
    pub(super) ack64: bool,
    /// SACK blocks a pure ACK holds (`max_sack_blocks`; fixed, as are the option
    /// sizes it follows from).
    pub(super) sack_blocks: usize,
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
    /// Each subflow's TCP metrics cache entry as the simulation found it when the connection
    /// started, applied when its handshake completes ([`crate::tcp::metrics`]).
    pub metrics: Vec<Option<Metrics>>,
    pub(super) uid: u64,
    pub(super) chunks: Vec<Chunk>,
    pub(crate) peers: Vec<PeerView>,
    pub(crate) views: Vec<SchedView>,
    /// Data assigned to each subflow and not sent yet (schedulers that queue).
    pub(crate) sfq: Vec<SubflowQueue>,
    /// Hand-offs recorded (time, subflow, dsn, len, retransmitted), with `RunOptions::sched_log`.
    pub handoffs: Option<Vec<super::HandoffEntry>>,
    /// Last M2 penalisation triggered by each subflow (Linux `last_rbuf_opti`).
    pub(crate) last_rbuf_opti: Vec<Option<Time>>,
    /// M2's test, and (v0.88) the last time each subflow was penalised.
    pub(crate) penalisation_rule: PenalisationRule,
    /// M1/M2 also run while the writer waits for send-buffer space (`sched_params.minrtt.send_buffer_path`).
    pub(crate) rbuf_opt_send_buffer_path: bool,
    pub(crate) last_penalised: Vec<Option<Time>>,
    /// Receiver-side RTT estimate of each subflow (receive-buffer auto-tuning).
    pub(super) rcv_rtt: Vec<RcvRtt>,
    /// `sent_at` of the latest packet received on each subflow (echoed as `ts_echo`).
    pub(super) ts_recent: Vec<Time>,
    /// Window last advertised on each subflow and that subflow's `rcv_nxt` then.
    pub(super) adv: Vec<(u64, Seq)>,
    /// Window last advertised on any subflow (Linux `msk->old_wspace`).
    pub(super) old_space: u64,
    /// During a push (`xmit`), the free receive space its packets advertise, computed as it
    /// begins (nothing a push does changes the receive side); `None` outside a push.
    pub(super) push_free: Option<u64>,
    /// Bytes the subflows hold out of order (the sum of their receivers' `ooo_bytes`, which
    /// change only as data arrives, in `on_data`): read for every window advertised.
    pub(super) sub_ooo: u64,
    pub(crate) window_update: WindowUpdate,
    pub(super) right_edge: RightEdge,
    /// Which subflow RTT paces receive-buffer auto-tuning.
    pub(super) drs_rtt: DrsRtt,
    /// Linux buffer semantics (`buffer_accounting = "truesize"`).
    pub(crate) truesize: bool,
    /// Linux's TSO deferral for queued data (`tcp.tso_defer`, [`crate::tcp::tso`]).
    pub(crate) tso_defer: bool,
    /// The MPTCP-level retransmission timer is on (`mptcp_retransmit`), its deadline, and
    /// its interval as the scheduler last set it (`timer_ival`).
    pub(crate) mptcp_rtx: bool,
    /// The send buffer as configured (fixed or auto-tuned).
    pub(crate) sndbuf_cfg: BufSize,
    /// What one MSS costs a subflow's auto-tuned send buffer with `per_mss = "build"`
    /// (bytes); unset, the host rule of [`crate::mptcp::sfqueue::per_mss`].
    pub(crate) build_per_mss: Option<u64>,
    pub(crate) rtx_at: Option<Time>,
    pub(crate) rtx_ival: crate::units::Dur,
    /// Whether the first queue each subflow's packets enter is in this host
    /// (`queue_at = "host"`): its data packets then count against TCP small queues.
    pub(super) host_queue: Vec<bool>,
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
        let mut p = TcpParams::new(t, smss, skb_charge.map(|(_, truesize)| truesize));
        if t.pacing_mss == PacingMss::MssCache {
            p.mss_cache = smss + mp_len as u64;
        }
        let start = Time::ZERO + cfg.start;
        let warmup = Time::ZERO + sc.output.warmup;
        let truesize = cfg.buffer_accounting == BufferAccounting::Truesize;
        let space = RcvSpace::for_conn(cfg, mptcp, is_client);
        let initial_rwnd = space.on_wire(space.window_for(0));
        let mut snd = ConnSender::new(App::from_cfg(&cfg.app, start), conn_sndbuf(cfg.sndbuf, truesize), initial_rwnd);
        snd.fill_tail = mptcp && cfg.window_tail == WindowTail::Fill;
        snd.writer = cfg.writer;
        if let Some((payload, truesize)) = skb_charge {
            snd.charge = MetaCharge::Skb { payload, truesize };
        }
        let sched = sched::build(cfg.scheduler, &cfg.sched_params);
        if mptcp && cfg.data_frags == DataFrags::Pages && sched.queues() {
            snd.frags = Some(Frags::default());
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
            sack_blocks: max_sack_blocks(ts_len, mptcp, ack64),
            pm: PathManager::new(cfg.join),
            cc: cc::build(
                cfg.cc,
                &cfg.cc_params,
                Rng::stream(sc.seed, &format!("cc:{}:{}", cfg.name, if is_client { "client" } else { "server" })),
            ),
            sched,
            snd,
            rcv,
            mp_established: false,
            app_started: false,
            persist_at: None,
            persist_backoff: 0,
            start,
            completed_at: None,
            metrics: vec![None; subflows.len()],
            uid: ((conn as u64) << 40) | ((is_client as u64) << 39),
            chunks: Vec::new(),
            peers: Vec::new(),
            views: Vec::new(),
            sfq: vec![SubflowQueue::default(); subflows.len()],
            handoffs: None,
            last_rbuf_opti: vec![None; subflows.len()],
            penalisation_rule: cfg.sched_params.minrtt.penalisation_rule,
            rbuf_opt_send_buffer_path: cfg.sched_params.minrtt.send_buffer_path,
            last_penalised: vec![None; subflows.len()],
            rcv_rtt: vec![RcvRtt::default(); subflows.len()],
            ts_recent: vec![Time::ZERO; subflows.len()],
            adv: vec![(0, Seq(0)); subflows.len()],
            old_space: 0,
            push_free: None,
            sub_ooo: 0,
            window_update: cfg.window_update,
            right_edge: cfg.right_edge,
            drs_rtt: if mptcp { cfg.drs_rtt } else { DrsRtt::Smallest },
            truesize,
            tso_defer: t.tso_defer,
            mptcp_rtx: mptcp && cfg.mptcp_retransmit,
            sndbuf_cfg: cfg.sndbuf,
            build_per_mss: (skb_charge.is_some() && cfg.per_mss == PerMss::Build).then(|| {
                // `mss_clamp`: the MSS Linux announces, MTU − 40 (`tcp_advertise_mss`);
                // `mss_cache` without the DSS option, as the meta's skbs are sized.
                let mss_clamp = t.mtu - IP_TCP_HEADER as u64;
                build_per_mss(mss_clamp, smss + mp_len as u64, cfg.max_tcp_header.unwrap_or(V09X_MAX_TCP_HEADER))
            }),
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

    // ------------------------------------------------------------------ setup

    pub(super) fn new_subflow(&mut self, sf: usize, state: State) {
        let (path, backup) = self.paths[sf];
        let mut s = Subflow::new(sf as u8, path, backup, state, self.params[sf].clone());
        if self.cc.rate_based() {
            s.set_rate_based();
        }
        s.pkts_acked = self.cc.has_pkts_acked();
        self.sfq[sf] = match (self.sndbuf_cfg, self.truesize) {
            // SO_SNDBUF: every subflow's buffer is set to the doubled value and locked.
            (BufSize::Fixed(b), true) => SubflowQueue::locked(2 * b.0),
            _ => {
                let pm = self.build_per_mss.unwrap_or_else(|| per_mss(s.w.smss));
                SubflowQueue::new(s.w.smss, s.w.cwnd, self.subflow_sndbuf_cap(), pm)
            }
        };
        self.sfq[sf].skbs = self.snd.frags.is_some();
        // `rcv_ssthresh` starts at the window offered in the handshake, before any data set
        // the scaling ratio.
        s.rcv.rcv_ssthresh = self.rcv.space.handshake_window();
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
        s.timers.arm(Slot::Handshake, now + s.p.rto_initial);
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
        if let Some(m) = self.metrics[sf] {
            // `tcp_init_metrics`, with the handshake's sample (if any) as SRTT.
            let init = m.initial(s.rtt.srtt(), s.p.rto_min);
            if let Some(ss) = init.ssthresh {
                s.w.ssthresh = ss * s.w.smss;
            }
            if let Some(rto) = init.rto {
                s.rtt.seed_rto(rto);
            }
        }
    }

    pub(super) fn start_app(&mut self, now: Time) {
        if self.is_sender && !self.app_started {
            self.app_started = true;
            self.note_pages_held();
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
    #[inline(never)]
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
                s.timers.arm(Slot::Handshake, now + s.p.rto_initial.times(1 << s.hs_backoff.min(10)).min(s.p.rto_max));
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
                        s.timers.arm(Slot::Handshake, now + s.rtt.rto());
                    } else {
                        s.set_state(now, State::Established);
                    }
                    self.handshake_packet(now, i, out);
                    if i == 0 {
                        self.mp_established = true;
                        self.snd.peer_window(pkt.wnd);
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
                    self.snd.peer_window(pkt.wnd);
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
        // A DATA_ACK is a path-manager event only on the client's initial subflow before the
        // joins opened (`on_fully_established_client` does nothing after that).
        let pm_event = match pkt.mp {
            MpOption::Dss => self.is_client && i == 0 && !self.pm.joins_opened,
            _ => true,
        };
        // The client's first DSS makes the connection fully established; Linux opens the joins
        // from the MPTCP worker (`mptcp_pm_nl_work`), after the reader the same data woke, whose
        // read takes the connection's scaling ratio from the subflows there are (a joining one
        // counts at its default ratio). Deviation: `linux-v0.9x`, without that ratio, opens
        // them before the read.
        let after_read = pm_event && self.is_client && pkt.mp == MpOption::Dss && self.rcv.space.follows_subflows();
        if self.mptcp && pm_event && !after_read {
            self.pm_on_packet(now, i, pkt, out);
        }
        if pkt.payload > 0 || pkt.is(flags::PROBE) {
            self.on_data(now, i, pkt, out);
        }
        if self.mptcp && after_read {
            self.pm_on_packet(now, i, pkt, out);
        }
        if self.is_sender {
            self.on_ack(now, i, pkt, out);
            self.xmit(now, out);
        }
    }

    /// Every subflow's [`PeerView`] as the congestion controller sees it now (index =
    /// subflow), written over the previous snapshot.
    #[inline(always)]
    pub(crate) fn snapshot_peers(&mut self) {
        if self.peers.len() != self.subflows.len() {
            self.peers.resize(self.subflows.len(), PeerView::default());
        }
        for (p, s) in self.peers.iter_mut().zip(&self.subflows) {
            match s {
                Some(s) => s.view_into(p),
                None => *p = PeerView::default(),
            }
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
        // The SACK blocks are decoded only when the ACK carries some.
        let blocks;
        let sack: &[(Seq, Seq)] = match pkt.sack.n {
            0 => &[],
            n => {
                blocks = pkt.sack.blocks(pkt.ack);
                &blocks[..n as usize]
            }
        };
        let o = s.on_ack(now, pkt.ack, sack, self.cc.as_mut(), &self.peers);
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

/// SACK blocks fill the option space the timestamps and the DSS leave (Linux
/// `tcp_established_options`, after the MPTCP options), at most four.
fn max_sack_blocks(ts_len: u32, mptcp: bool, ack64: bool) -> usize {
    let used = ts_len + if mptcp { optlen::dss(ack64, false) } else { 0 };
    ((optlen::MAX - used).saturating_sub(2) / 8).min(4) as usize
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

#[cfg(test)]
mod tests;
