//! Packets, links and the topology that routes packets between endpoints.

pub mod codel;
pub mod jitter;
pub mod link;
pub mod loss;
pub mod packet;
pub mod red;
pub mod service;

use crate::config::{RouteTable, Scenario};
use link::Link;

/// The links of a scenario and the route each subflow's packets take.
///
/// A route is the ordered list of links a packet crosses each way. Path `i` of the two-host
/// short form is route `i` with one link each way; `[[links]]` and connection `routes` give
/// routes of any length, handled the same way by the driver.
pub struct Topology {
    pub links: Vec<Link>,
    /// `routes[r][0]` = client → server links, `routes[r][1]` = server → client.
    pub routes: Vec<[Vec<u32>; 2]>,
    /// Label of each route (path or route name).
    pub route_names: Vec<String>,
    /// (path index, is uplink) of each link that belongs to a path; None for `[[links]]`.
    pub link_path: Vec<Option<(usize, bool)>>,
    /// (from, to) node names of each link.
    pub link_nodes: Vec<(String, String)>,
}

impl Topology {
    pub fn build(sc: &Scenario, table: &RouteTable) -> Topology {
        let mut links = Vec::new();
        let mut link_path = Vec::new();
        for (i, p) in sc.paths.iter().enumerate() {
            let [up_params, down_params] = sc.links_of(i);
            links.push(Link::new(format!("{}.up", p.name), up_params, sc.seed));
            link_path.push(Some((i, true)));
            links.push(Link::new(format!("{}.down", p.name), down_params, sc.seed));
            link_path.push(Some((i, false)));
        }
        for (i, l) in sc.links.iter().enumerate() {
            links.push(Link::new(l.name.clone(), sc.general_link(i), sc.seed));
            link_path.push(None);
        }
        let routes = table.routes.iter().map(|(_, up, down)| [up.clone(), down.clone()]).collect();
        let route_names = table.routes.iter().map(|r| r.0.clone()).collect();
        let link_nodes = table.links.iter().map(|(_, f, t)| (f.clone(), t.clone())).collect();
        Topology { links, routes, route_names, link_path, link_nodes }
    }
}
