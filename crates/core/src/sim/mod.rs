//! The simulator: a small driver that moves packets between sans-IO endpoints and links in
//! event-time order, samples time series, checks invariants and assembles results.

pub mod host;
mod options;
pub mod queue;
mod report;
mod sequence;
mod series;

use crate::config::Scenario;
use crate::mptcp::connection::Endpoint;
use crate::net::link::Offer;
use crate::net::packet::Packet;
use crate::net::Topology;
use crate::results::{RunOutput, TimeSeries};
use crate::trace::pcap::{Capture, Point};
use crate::trace::{TraceDigest, TraceEvent};
use crate::units::Time;
use host::HostQueue;
pub use options::{RunOptions, Stop, CHECK_EVERY};
use queue::{Event, EventQueue};
use series::{CONN_METRICS, LINK_METRICS, SF_METRICS};

/// One run of one scenario.
pub struct Simulation {
    sc: Scenario,
    now: Time,
    end: Time,
    q: EventQueue,
    topo: Topology,
    /// `eps[c] = [client, server]`.
    eps: Vec<[Endpoint; 2]>,
    /// Each endpoint's wake-up as the driver holds it: its entry in the event queue, or
    /// `Time::MAX` when the endpoint said it has no deadline (no entry), or None when the
    /// endpoint must be asked in full (its wake-up has just fired, or it was never asked).
    ep_wake: Vec<[Option<Time>; 2]>,
    link_wake: Vec<Option<Time>>,
    /// `sf_route[c][sf]`: the route of connection `c`'s subflow `sf` (both ends' `paths`).
    sf_route: Vec<Vec<usize>>,
    /// The links a packet crosses, by connection, subflow and direction, in one flat table
    /// for the lookup at every hop ([`Paths`]).
    paths: Paths,
    /// `route_end[l]`: link `l` is the last of every route (either way) it is on, so a
    /// packet it delivers has reached its endpoint.
    route_end: Vec<bool>,
    digest: Option<TraceDigest>,
    pcap: Option<Capture>,
    data_packets: u64,
    ts: TimeSeries,
    /// Series index of (connection, subflow, metric k) for sampling.
    sf_series: Vec<Vec<[u32; SF_METRICS.len()]>>,
    conn_series: Vec<[u32; CONN_METRICS.len()]>,
    link_series: Vec<[u32; LINK_METRICS.len()]>,
    /// Host transmit queues (`host_jitter`), by node.
    hosts: Vec<HostQueue>,
    /// `host_of[c] = [client host, server host]` and the connection's mean host jitter.
    host_of: Vec<([u32; 2], crate::units::Dur)>,
    /// Some connection's hosts delay its packets (`host_jitter`).
    host_jitter: bool,
    /// Connections after others, and the TCP metrics cache.
    seq: sequence::Sequence,
}

impl Simulation {
    pub fn new(sc: &Scenario) -> Simulation {
        let table = sc.route_table().expect("routes validated when the scenario was loaded");
        let topo = sc.topology(&table);
        let eps: Vec<[Endpoint; 2]> = sc
            .connections
            .iter()
            .enumerate()
            .map(|(c, cfg)| {
                let subflows = &table.subflows[c];
                [Endpoint::new(c as u32, cfg, subflows, sc, true), Endpoint::new(c as u32, cfg, subflows, sc, false)]
            })
            .collect();
        let n_links = topo.links.len();
        let mut eps = eps;
        for (c, pair) in eps.iter_mut().enumerate() {
            for (side, ep) in pair.iter_mut().enumerate() {
                // The client sends on a route's uplinks, the server on its downlinks.
                for (sf, &(route, _)) in table.subflows[c].iter().enumerate() {
                    let first = topo.routes[route][side][0] as usize;
                    ep.set_host_queue(sf, topo.links[first].params.at_host);
                }
            }
        }
        let route_end = (0..n_links as u32)
            .map(|l| topo.routes.iter().flatten().all(|hops| hops.iter().rev().skip(1).all(|&h| h != l)))
            .collect();
        let paths = Paths::new(&table.subflows, &topo.routes);
        let mut sim = Simulation {
            sc: sc.clone(),
            now: Time::ZERO,
            end: Time::ZERO + sc.duration,
            q: EventQueue::default(),
            topo,
            ep_wake: vec![[None, None]; eps.len()],
            eps,
            link_wake: vec![None; n_links],
            sf_route: table.subflows.iter().map(|sfs| sfs.iter().map(|&(route, _)| route).collect()).collect(),
            paths,
            route_end,
            digest: sc.output.trace_hash.then(TraceDigest::default),
            pcap: None,
            data_packets: 0,
            ts: TimeSeries::default(),
            sf_series: Vec::new(),
            conn_series: Vec::new(),
            link_series: Vec::new(),
            hosts: Vec::new(),
            host_of: Vec::new(),
            host_jitter: sc.connections.iter().any(|cfg| cfg.host_jitter > crate::units::Dur::ZERO),
            seq: sequence::Sequence::new(sc),
        };
        let mut nodes: Vec<String> = Vec::new();
        for cfg in &sc.connections {
            let mut ids = [0u32; 2];
            for (k, node) in [cfg.client.as_deref().unwrap_or("client"), cfg.server.as_deref().unwrap_or("server")]
                .into_iter()
                .enumerate()
            {
                ids[k] = match nodes.iter().position(|n| n == node) {
                    Some(i) => i as u32,
                    None => {
                        nodes.push(node.to_string());
                        sim.hosts.push(HostQueue::new(sc.seed, node));
                        (nodes.len() - 1) as u32
                    }
                };
            }
            sim.host_of.push((ids, cfg.host_jitter));
        }
        if sc.output.timeseries.is_some() {
            sim.register_series();
        }
        sim
    }

    /// Runs to the scenario's end (or until every download finished).
    pub fn run(self) -> RunOutput {
        self.run_with(&RunOptions::default()).expect("no budget, no capture, no cancellation")
    }

    /// As [`Simulation::run`], with the caller's options: gives up once `max_events` events
    /// have been handled ([`Stop::Budget`] carries the simulated time reached: a bound on
    /// the work an arbitrary, e.g. generated, scenario may take; the events are the engine's
    /// unit of work), stops when `cancel` is set, and writes the captures asked for (a capture
    /// that cannot be written stops the run; its files are removed).
    pub fn run_with(mut self, opts: &RunOptions) -> Result<RunOutput, Stop> {
        if opts.sched_log {
            for ep in self.eps.iter_mut().flatten() {
                ep.handoffs = Some(Vec::new());
            }
        }
        if let Some(c) = &opts.capture {
            let table = self.sc.route_table().expect("routes validated when the scenario was loaded");
            let names = options::capture_names(&self.sc, &table, &self.topo, c.per);
            self.pcap = Some(Capture::new(c, self.sc.seed, names).map_err(Stop::Capture)?);
        }
        match self.simulate(opts) {
            Ok(end) => {
                self.now = end;
                if let Some(cap) = self.pcap.take() {
                    cap.finish().map_err(Stop::Capture)?;
                }
                self.check_invariants();
                Ok(report::build(self, end))
            }
            Err(stop) => {
                if let Some(cap) = self.pcap.take() {
                    cap.discard();
                }
                Err(stop)
            }
        }
    }

    /// The event loop: returns the time the run ends, or why it stopped early. Every
    /// [`CHECK_EVERY`] events (and at the budget's last event) it looks at the options.
    fn simulate(&mut self, opts: &RunOptions) -> Result<Time, Stop> {
        self.schedule_starts();
        if self.sc.output.timeseries.is_some() {
            self.q.push(Time::ZERO, Event::Sample);
        }
        // The event count after which the options are next looked at.
        let mut look_at = opts.next_look(0);
        // A run with a connection that never ends (bulk, or periodic without a count) ends at
        // its duration: no need to ask after every event.
        let can_finish = self.eps.iter().all(|e| e[0].snd.app.size().is_some());
        // What an endpoint hands back, sent on at once ([`Simulation::flush`]): outside the
        // simulation, so that sending it on may borrow the simulation.
        let mut out = Vec::with_capacity(64);
        while let Some((t, ev)) = self.q.pop() {
            if t > self.end {
                break;
            }
            if self.q.popped() > look_at {
                look_at = options::look(self.q.popped(), self.now, opts, self.pcap.as_mut())?;
            }
            self.now = t;
            match ev {
                Event::LinkArrive(l) => self.on_link(l as usize, t, &mut out),
                Event::Endpoint(c, s) => self.on_endpoint_timer(c as usize, s as usize, t, &mut out),
                Event::ConnStart(c) => self.on_conn_start(c as usize, t, &mut out),
                Event::Sample => self.on_sample_tick(t),
                Event::HostSend(h) => self.on_host(h as usize, t),
            }
            if can_finish && self.all_done() {
                break;
            }
        }
        Ok(if self.all_done() { self.now } else { self.end })
    }

    /// Connection `c`'s client sends its first SYN (once per connection: kept out of the
    /// event loop's hot path).
    #[cold]
    fn on_conn_start(&mut self, c: usize, t: Time, out: &mut Vec<Packet>) {
        self.prepare_start(c, t);
        self.eps[c][0].start(t, out);
        self.flush(c, 0, out);
    }

    /// A time-series sampling tick: samples, and schedules the next (rare beside packet
    /// events: kept out of the event loop's hot path).
    #[cold]
    fn on_sample_tick(&mut self, t: Time) {
        self.sample();
        let iv = self.sc.output.timeseries.expect("sampling on");
        self.q.push(t + iv, Event::Sample);
    }

    fn all_done(&self) -> bool {
        self.eps.iter().all(|e| e[0].snd.app.size().is_some() && e[0].completed_at.or(e[1].completed_at).is_some())
    }

    fn on_endpoint_timer(&mut self, c: usize, s: usize, t: Time, out: &mut Vec<Packet>) {
        if self.ep_wake[c][s] != Some(t) {
            return; // stale: the deadline moved
        }
        self.ep_wake[c][s] = None;
        self.eps[c][s].on_timeout(t, out);
        self.flush(c, s, out);
    }

    fn on_link(&mut self, l: usize, t: Time, out: &mut Vec<Packet>) {
        if self.link_wake[l] != Some(t) {
            return;
        }
        self.link_wake[l] = None;
        // The packets due now are handed over one at a time: a packet the deliveries send
        // into this link again lands behind them (`Link::complete`). Then the link's next
        // wake-up.
        let mut left = self.topo.links[l].complete(t);
        let next = loop {
            let link = &mut self.topo.links[l];
            if left == 0 {
                break link.next_wake();
            }
            left -= 1;
            // Read where the link keeps it, and dropped before anything is sent into the
            // link again.
            let p = match link.due(t) {
                Ok(p) => p,
                Err(next) => break next,
            };
            if let Some(d) = self.digest.as_mut() {
                d.record(t, TraceEvent::Deliver { link: l as u32, uid: p.uid });
            }
            p.hop += 1;
            let c = p.conn as usize;
            let forward = !self.route_end[l] && (p.hop as usize) < self.paths.len(p);
            if forward {
                let p = *p;
                link.discard_due();
                self.inject(&p);
            } else {
                let side = usize::from(p.to_server);
                if let Some(cap) = self.pcap.as_mut() {
                    let route = self.sf_route[c][p.subflow as usize];
                    cap.record(Point::Host(p.conn, !p.to_server, route), t, p, route);
                }
                self.eps[c][side].on_packet(t, p, out);
                link.discard_due();
                self.flush(c, side, out);
                if self.open(c) && self.eps[c][side].is_sender {
                    self.check_close(c, t);
                }
            }
        };
        if let Some(next) = next {
            self.wake_link(l, next);
        }
    }

    /// Arms link `l`'s wake-up at `t` unless one is armed no later. Inlined: it is the
    /// event queue's push, made after every delivery round.
    #[inline(always)]
    fn wake_link(&mut self, l: usize, t: Time) {
        if self.link_wake[l].is_none_or(|w| t < w) {
            self.link_wake[l] = Some(t);
            self.q.push(t, Event::LinkArrive(l as u32));
        }
    }

    /// Sends what endpoint (c, s) produced (`out`, left empty) and re-arms its timer. Inlined
    /// into its callers: it follows every delivery to an endpoint.
    #[inline(always)]
    fn flush(&mut self, c: usize, s: usize, out: &mut Vec<Packet>) {
        if self.host_jitter {
            self.through_hosts(c, s, out);
        } else {
            for p in out.iter() {
                self.data_packets += u64::from(p.payload > 0);
                self.inject(p);
            }
        }
        out.clear();
        let held = self.ep_wake[c][s];
        match self.eps[c][s].poll_timeout_before(self.now, held) {
            Some(t) => {
                let t = t.max(self.now);
                if held.is_none_or(|w| t < w) {
                    self.ep_wake[c][s] = Some(t);
                    self.q.push(t, Event::Endpoint(c as u32, s as u8));
                }
            }
            // No deadline (asked in full) or none before the one held: remember that.
            None if held.is_none() => self.ep_wake[c][s] = Some(Time::MAX),
            None => {}
        }
    }

    /// Sends what endpoint (c, s) produced in a run where some host delays its packets
    /// (`host_jitter`): through the host's transmit queue if it delays them. Out of line,
    /// so that the path without host queues stays small.
    #[inline(never)]
    fn through_hosts(&mut self, c: usize, s: usize, out: &[Packet]) {
        let (hosts, jitter) = self.host_of[c];
        for p in out {
            self.data_packets += u64::from(p.payload > 0);
            if jitter > crate::units::Dur::ZERO {
                let h = hosts[s] as usize;
                let first = self.hosts[h].q.is_empty();
                let at = self.hosts[h].push(self.now, jitter, *p);
                if first {
                    self.q.push(at, Event::HostSend(h as u32));
                }
            } else {
                self.inject(p);
            }
        }
    }

    /// Host `h`'s transmit queue: the packets due leave, in order.
    fn on_host(&mut self, h: usize, t: Time) {
        while let Some(&(at, p)) = self.hosts[h].q.front() {
            if at > t {
                self.q.push(at, Event::HostSend(h as u32));
                break;
            }
            self.hosts[h].q.pop_front();
            self.inject(&p);
        }
    }

    fn inject(&mut self, p: &Packet) {
        let l = self.paths.link(p) as usize;
        let now = self.now;
        if let Some(cap) = self.pcap.as_mut() {
            let route = self.sf_route[p.conn as usize][p.subflow as usize];
            if p.hop == 0 {
                cap.record(Point::Host(p.conn, p.to_server, route), now, p, route);
            }
            cap.record(Point::Link(l as u32), now, p, route);
        }
        let uid = p.uid;
        let link = &mut self.topo.links[l];
        // A data packet entering a queue in its sender's host: tell the sender when it leaves
        // (TCP small queues): when the link has sent it, or now if it was dropped.
        let host_queue = link.params.at_host && p.hop == 0 && p.payload > 0;
        let (c, side, sf) = (p.conn as usize, usize::from(!p.to_server), p.subflow as usize);
        let r = link.offer_copy(now, p);
        if host_queue {
            let left = match r {
                Offer::Accepted | Offer::Lost => link.tx_end(),
                Offer::QueueDrop | Offer::AqmDrop => now,
            };
            self.eps[c][side].host_departure(sf, left);
        }
        if let Some(d) = self.digest.as_mut() {
            d.record(now, TraceEvent::Enqueue { link: l as u32, uid });
            match r {
                Offer::QueueDrop => d.record(now, TraceEvent::QueueDrop { link: l as u32, uid }),
                Offer::AqmDrop => d.record(now, TraceEvent::AqmDrop { link: l as u32, uid }),
                Offer::Lost => d.record(now, TraceEvent::LinkLoss { link: l as u32, uid }),
                Offer::Accepted => {}
            }
        }
        // A wake pending for a link whose head stays is at its head already (it is armed at
        // the head, and only delivering moves the head).
        if r == Offer::Accepted && !(link.head_stays() && self.link_wake[l].is_some()) {
            if let Some(t) = link.next_wake() {
                self.wake_link(l, t);
            }
        }
    }

    /// End-of-run invariants; a violation is a bug in the engine and fails loudly.
    fn check_invariants(&self) {
        let mut errors = Vec::new();
        for l in &self.topo.links {
            if let Err(e) = l.check_conservation() {
                errors.push(e);
            }
        }
        for (c, pair) in self.eps.iter().enumerate() {
            let name = &self.sc.connections[c].name;
            let snd = if pair[0].is_sender { &pair[0] } else { &pair[1] };
            let rcv = if pair[0].is_sender { &pair[1] } else { &pair[0] };
            let (una, nxt, written) = (snd.snd.data_una.0, snd.snd.snd_nxt.0, snd.snd.write_seq.0);
            let (rcv_nxt, delivered) = (rcv.rcv.rcv_nxt.0, rcv.rcv.delivered);
            if !(una <= nxt && nxt <= written) {
                errors.push(format!("{name}: data_una {una} <= snd_nxt {nxt} <= write_seq {written} violated"));
            }
            if delivered != rcv_nxt {
                errors.push(format!(
                    "{name}: delivered {delivered} B but the receiver's next expected byte is {rcv_nxt}"
                ));
            }
            if !(una <= rcv_nxt && rcv_nxt <= written) {
                errors.push(format!(
                    "{name}: bytes must be DATA_ACKed ({una}) <= delivered ({rcv_nxt}) <= written ({written})"
                ));
            }
            if let Some(size) = snd.snd.app.size() {
                if written > size {
                    errors.push(format!("{name}: the download wrote {written} B of {size}"));
                }
                let done = snd.completed_at.or(rcv.completed_at).is_some();
                if done != (delivered == size) {
                    errors.push(format!("{name}: completion flag {done} but {delivered} of {size} B delivered"));
                }
            }
            for s in snd.subflows.iter().flatten() {
                if let Err(e) = s.sb.check() {
                    errors.push(format!("{name} subflow {}: {e}", s.idx));
                }
                if s.snd_una > s.snd_nxt {
                    errors.push(format!("{name} subflow {}: snd_una > snd_nxt", s.idx));
                }
            }
        }
        if !errors.is_empty() {
            panic!("simulation invariant violated (this is a bug in mptcplab):\n{}", errors.join("\n"));
        }
    }
}

/// The links of every subflow's route each way, flattened for the per-hop lookup: entry
/// `(conn << shift | subflow) << 1 | direction` (direction 0: client → server) is the
/// `(start, len)` of its links in `links`. `shift` leaves room for the connection with the
/// most subflows, so entries never overlap.
struct Paths {
    shift: u32,
    index: Vec<(u32, u32)>,
    links: Vec<u32>,
}

impl Paths {
    fn new(subflows: &[Vec<(usize, bool)>], routes: &[[Vec<u32>; 2]]) -> Paths {
        let most = subflows.iter().map(Vec::len).max().unwrap_or(0);
        let shift = most.next_power_of_two().trailing_zeros();
        let mut p = Paths { shift, index: vec![(0, 0); (subflows.len() << shift) << 1], links: Vec::new() };
        for (c, sfs) in subflows.iter().enumerate() {
            for (sf, &(route, _)) in sfs.iter().enumerate() {
                for (dir, hops) in routes[route].iter().enumerate() {
                    p.index[((c << shift) | sf) << 1 | dir] = (p.links.len() as u32, hops.len() as u32);
                    p.links.extend_from_slice(hops);
                }
            }
        }
        p
    }

    /// `(start, len)` of the links packet `p` crosses.
    #[inline(always)]
    fn entry(&self, p: &Packet) -> (usize, usize) {
        let i = ((p.conn as usize) << self.shift | p.subflow as usize) << 1 | usize::from(!p.to_server);
        let (start, len) = self.index[i];
        // Every route has a link each way: an empty entry is a subflow the connection lacks.
        debug_assert!(len > 0, "connection {} has no subflow {}", p.conn, p.subflow);
        (start as usize, len as usize)
    }

    /// How many links packet `p` crosses.
    #[inline(always)]
    fn len(&self, p: &Packet) -> usize {
        self.entry(p).1
    }

    /// The link packet `p` enters at its hop (which is within its route).
    #[inline(always)]
    fn link(&self, p: &Packet) -> u32 {
        let (start, len) = self.entry(p);
        debug_assert!((p.hop as usize) < len, "hop {} of a {len}-link route", p.hop);
        self.links[start + p.hop as usize]
    }
}
