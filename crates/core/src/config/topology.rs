//! General topologies: named nodes joined by unidirectional links, and explicit routes per
//! subflow.
//!
//! The two-host `paths` remain the short form: path `p` is a link `p.up` from node `client`
//! to node `server` and a link `p.down` back. `[[links]]` adds links between any named
//! nodes, and a connection may give `routes` (one per subflow, each an uplink and a downlink
//! sequence of link names) instead of `paths`. A route must be contiguous, leave from the
//! connection's client node and end at its server node (and back).

use serde::{Deserialize, Serialize};

use super::link::{JitterCfg, LinkSpec, QueueAt, ScheduleStep};
use super::{did_you_mean, Aqm, ConfigError, ConnCfg, Prob, Scenario};
use crate::net::link::{Link, LinkParams};
use crate::net::qdisc::QueueLimit;
use crate::net::Topology;
use crate::units::{Dur, Rate};

super::link::link_fields!(
    /// A unidirectional link between two named nodes (same parameters as a path's).
    pub struct LinkCfg {
        pub name: String,
        pub from: String,
        pub to: String,
    }
);

impl LinkCfg {
    /// The link as a path whose top-level values are the link's (for checks and resolution).
    pub fn as_path(&self) -> super::PathCfg {
        let s = self.spec();
        super::PathCfg {
            name: self.name.clone(),
            up: LinkSpec::default(),
            down: LinkSpec::default(),
            preset: s.preset,
            rate: s.rate,
            trace: s.trace,
            rate_trace: s.rate_trace,
            delay: s.delay.or(Some(Dur::ZERO)),
            jitter: s.jitter,
            queue: s.queue.or(Some(QueueLimit::Packets(1000))),
            queue_at: s.queue_at,
            aqm: s.aqm,
            loss: s.loss.or(Some(Prob(0.0))),
            loss_burst: s.loss_burst,
            drop: s.drop,
            schedule: s.schedule,
            schedule_period: s.schedule_period,
        }
    }

    /// The link's parameters as a path-level specification.
    pub fn spec(&self) -> LinkSpec {
        LinkSpec {
            preset: self.preset.clone(),
            rate: self.rate,
            trace: self.trace.clone(),
            rate_trace: self.rate_trace.clone(),
            delay: self.delay,
            jitter: self.jitter,
            queue: self.queue,
            queue_at: self.queue_at,
            aqm: self.aqm,
            loss: self.loss,
            loss_burst: self.loss_burst,
            drop: self.drop.clone(),
            schedule: self.schedule.clone(),
            schedule_period: self.schedule_period,
        }
    }
}

/// The links one subflow crosses, each way.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct RouteCfg {
    /// Label of the subflow in results.
    pub name: String,
    /// Links from the client to the server, in order.
    pub up: Vec<String>,
    /// Links from the server back to the client, in order.
    pub down: Vec<String>,
    /// A backup subflow (used only when no regular subflow is usable).
    #[serde(default)]
    pub backup: bool,
}

/// Every link of a scenario (path links first) and every route, resolved to indices.
#[derive(Clone, Debug, Default)]
pub struct RouteTable {
    /// (name, from node, to node) of each link; path `i` owns links 2i (up) and 2i+1 (down).
    pub links: Vec<(String, String, String)>,
    /// Routes: (label, uplink ids, downlink ids). Path `i` is route `i`.
    pub routes: Vec<(String, Vec<u32>, Vec<u32>)>,
    /// For each connection, the (route id, backup) of each subflow.
    pub subflows: Vec<Vec<(usize, bool)>>,
}

impl ConnCfg {
    /// The client and server node names.
    pub fn nodes(&self) -> (&str, &str) {
        (self.client.as_deref().unwrap_or("client"), self.server.as_deref().unwrap_or("server"))
    }
}

impl Scenario {
    /// Builds and checks the link and route table.
    pub fn route_table(&self) -> Result<RouteTable, ConfigError> {
        let mut t = RouteTable::default();
        for p in &self.paths {
            t.links.push((format!("{}.up", p.name), "client".into(), "server".into()));
            t.links.push((format!("{}.down", p.name), "server".into(), "client".into()));
        }
        for (i, l) in self.links.iter().enumerate() {
            let at = |k: &str| format!("links[{i}].{k}");
            if l.name.is_empty() || l.from.is_empty() || l.to.is_empty() {
                return Err(ConfigError::new(at("name"), "name, from and to must not be empty"));
            }
            if t.links.iter().any(|(n, _, _)| *n == l.name) {
                return Err(ConfigError::new(
                    at("name"),
                    format!("`{}` names two links; link names must be unique", l.name),
                ));
            }
            if l.from == l.to {
                return Err(ConfigError::new(at("to"), format!("a link cannot loop from `{}` to itself", l.from)));
            }
            t.links.push((l.name.clone(), l.from.clone(), l.to.clone()));
        }
        for (i, p) in self.paths.iter().enumerate() {
            t.routes.push((p.name.clone(), vec![2 * i as u32], vec![2 * i as u32 + 1]));
        }
        let names: Vec<&str> = t.links.iter().map(|l| l.0.as_str()).collect();
        for (c, conn) in self.connections.iter().enumerate() {
            let (client, server) = conn.nodes();
            let mut subs = Vec::new();
            if !conn.paths.is_empty() && (conn.client.is_some() || conn.server.is_some()) {
                return Err(ConfigError::new(
                    format!("connections[{c}].client"),
                    "paths always run between the nodes `client` and `server`; use routes to connect other nodes",
                ));
            }
            for p in &conn.paths {
                let id = self.path_index(p).expect("paths validated");
                subs.push((id, conn.backup.contains(p)));
            }
            for (r, route) in conn.routes.iter().enumerate() {
                let at = |k: &str| format!("connections[{c}].routes[{r}].{k}");
                if route.name.is_empty() {
                    return Err(ConfigError::new(at("name"), "must not be empty"));
                }
                let mut ids = [Vec::new(), Vec::new()];
                for (d, (dir, seq, from, to)) in
                    [("up", &route.up, client, server), ("down", &route.down, server, client)].into_iter().enumerate()
                {
                    if seq.is_empty() {
                        return Err(ConfigError::new(at(dir), "needs at least one link"));
                    }
                    let mut node = from;
                    for (k, name) in seq.iter().enumerate() {
                        let Some(id) = names.iter().position(|n| n == name) else {
                            let hint = did_you_mean(name, names.iter().copied())
                                .map(|s| format!(" (did you mean `{s}`?)"))
                                .unwrap_or_default();
                            return Err(ConfigError::new(
                                at(&format!("{dir}[{k}]")),
                                format!("no link named `{name}`; links: {}{hint}", names.join(", ")),
                            ));
                        };
                        let (_, lf, lt) = &t.links[id];
                        if lf != node {
                            return Err(ConfigError::new(
                                at(&format!("{dir}[{k}]")),
                                format!("link `{name}` leaves `{lf}`, but the route is at `{node}` here"),
                            ));
                        }
                        node = lt;
                        ids[d].push(id as u32);
                    }
                    if node != to {
                        return Err(ConfigError::new(
                            at(dir),
                            format!(
                                "ends at `{node}`, not at `{to}` (the connection's {})",
                                if d == 0 { "server" } else { "client" }
                            ),
                        ));
                    }
                }
                let [up, down] = ids;
                subs.push((t.routes.len(), route.backup));
                t.routes.push((route.name.clone(), up, down));
            }
            t.subflows.push(subs);
        }
        Ok(t)
    }
}

impl Scenario {
    /// Parameters of general link `i` (`[[links]]`).
    pub fn general_link(&self, i: usize) -> LinkParams {
        self.links[i].as_path().resolve(&LinkSpec::default(), &self.traces)
    }

    /// Client → server and server → client parameters of path `i`.
    pub fn links_of(&self, i: usize) -> [LinkParams; 2] {
        let p = &self.paths[i];
        [p.resolve(&p.up, &self.traces), p.resolve(&p.down, &self.traces)]
    }

    /// The network of the scenario: every link (path links first: path `i` owns links 2i up
    /// and 2i + 1 down), its random streams under the scenario's seed, and the routes of
    /// `table` ([`Scenario::route_table`]).
    pub fn topology(&self, table: &RouteTable) -> Topology {
        let mut links = Vec::new();
        let mut link_path = Vec::new();
        for (i, p) in self.paths.iter().enumerate() {
            let [up_params, down_params] = self.links_of(i);
            links.push(Link::new(format!("{}.up", p.name), up_params, self.seed));
            link_path.push(Some((i, true)));
            links.push(Link::new(format!("{}.down", p.name), down_params, self.seed));
            link_path.push(Some((i, false)));
        }
        for (i, l) in self.links.iter().enumerate() {
            links.push(Link::new(l.name.clone(), self.general_link(i), self.seed));
            link_path.push(None);
        }
        let routes = table.routes.iter().map(|(_, up, down)| [up.clone(), down.clone()]).collect();
        let route_names = table.routes.iter().map(|r| r.0.clone()).collect();
        let link_nodes = table.links.iter().map(|(_, f, t)| (f.clone(), t.clone())).collect();
        Topology { links, routes, route_names, link_path, link_nodes }
    }
}
