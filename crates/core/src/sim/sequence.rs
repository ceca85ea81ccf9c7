//! Connections one after another and what they leave behind: a connection with `after`
//! starts once the named connection has closed, and Linux's TCP metrics cache
//! ([`crate::tcp::metrics`]) carries what closed connections learned, per (host, peer,
//! route), to the connections established after them.
//!
//! A connection closes when its sender holds no unacknowledged data of an application that
//! has ended (the engine models no FIN exchange). The cache is read when a connection
//! starts, not when each subflow's handshake completes as in Linux: the two differ only if
//! another connection to the same destination closes in between.

use std::collections::BTreeMap;

use super::queue::Event;
use super::Simulation;
use crate::app::App;
use crate::config::{MetricsSave, Scenario};
use crate::tcp::metrics::{Closing, Metrics};
use crate::units::Time;

/// The cache's key: (this host, the peer host, the route), the route standing for the pair
/// of addresses a subflow uses.
type Key = (u32, u32, usize);

/// The sequencing state of a run.
#[derive(Default)]
pub(super) struct Sequence {
    /// Some connection saves metrics or waits for another: closes are watched.
    pub watch: bool,
    closed: Vec<bool>,
    /// `next[c]`: the connections that start after `c` closes.
    next: Vec<Vec<usize>>,
    cache: BTreeMap<Key, Metrics>,
}

impl Sequence {
    pub fn new(sc: &Scenario) -> Sequence {
        let n = sc.connections.len();
        let mut next = vec![Vec::new(); n];
        for (d, cfg) in sc.connections.iter().enumerate() {
            if let Some(a) = &cfg.after {
                let c = sc.connections.iter().position(|o| &o.name == a).expect("`after` validated");
                next[c].push(d);
            }
        }
        let watch = sc.connections.iter().any(|c| c.after.is_some() || c.tcp.metrics != MetricsSave::Off);
        Sequence { watch, closed: vec![false; n], next, cache: BTreeMap::new() }
    }
}

impl Simulation {
    /// The connections that start at their own `start` (the others wait for one to close).
    pub(super) fn schedule_starts(&mut self) {
        for (c, cfg) in self.sc.connections.iter().enumerate() {
            if cfg.after.is_none() {
                self.q.push(Time::ZERO + cfg.start, Event::ConnStart(c as u32));
            }
        }
    }

    fn key(&self, c: usize, side: usize, sf: usize) -> Key {
        let hosts = self.host_of[c].0;
        (hosts[side], hosts[1 - side], self.eps[c][side].paths[sf].0)
    }

    /// Before connection `c`'s first SYN at `t`: a connection started by another's close
    /// begins its application now, and both ends take their cache entries.
    pub(super) fn prepare_start(&mut self, c: usize, t: Time) {
        let cfg = &self.sc.connections[c];
        if cfg.after.is_some() {
            for ep in &mut self.eps[c] {
                ep.start = t;
                ep.snd.app = App::from_cfg(&cfg.app, t);
            }
        }
        if cfg.tcp.metrics == MetricsSave::Off {
            return;
        }
        for side in 0..2 {
            for sf in 0..self.eps[c][side].paths.len() {
                let m = self.seq.cache.get(&self.key(c, side, sf)).copied();
                self.eps[c][side].metrics[sf] = m;
            }
        }
    }

    /// After a packet reached connection `c`'s sender at `t`: if that closed the connection,
    /// both ends save their subflows' metrics and the connections after it are scheduled.
    #[cold]
    pub(super) fn check_close(&mut self, c: usize, t: Time) {
        let snd = if self.eps[c][0].is_sender { &self.eps[c][0] } else { &self.eps[c][1] };
        let done = snd.snd.app.size().is_some_and(|n| snd.snd.data_una.0 >= n);
        if !done {
            return;
        }
        self.seq.closed[c] = true;
        let save = self.sc.connections[c].tcp.metrics;
        if save != MetricsSave::Off {
            for side in 0..2 {
                for sf in 0..self.eps[c][side].paths.len() {
                    let Some(s) = self.eps[c][side].subflow(sf).filter(|s| s.established()) else { continue };
                    let closing = Closing::of(s);
                    let key = self.key(c, side, sf);
                    let entry = self.seq.cache.get(&key).copied();
                    match Metrics::update(entry, &closing, save) {
                        Some(m) => self.seq.cache.insert(key, m),
                        None => self.seq.cache.remove(&key),
                    };
                }
            }
        }
        for d in self.seq.next[c].clone() {
            self.q.push(t + self.sc.connections[d].start, Event::ConnStart(d as u32));
        }
    }

    /// Connection `c` has not closed yet and closes are watched.
    #[inline]
    pub(super) fn open(&self, c: usize) -> bool {
        self.seq.watch && !self.seq.closed[c]
    }
}
