//! Packets, links and the topology that routes packets between endpoints.

pub mod codel;
pub mod jitter;
pub mod link;
pub mod loss;
pub mod packet;
pub mod service;

use crate::config::Scenario;
use link::Link;

/// The links of a scenario and the route each subflow's packets take.
///
/// A route is the ordered list of links a packet crosses. The two-host topology of the
/// scenario's `paths` gives path `i` an uplink (client → server) and a downlink, each a
/// one-link route; routes of several hops are handled the same way by the driver.
pub struct Topology {
    pub links: Vec<Link>,
    /// `routes[path][0]` = client → server links, `routes[path][1]` = server → client.
    pub routes: Vec<[Vec<u32>; 2]>,
    /// Path name of each link and whether it is the uplink.
    pub link_path: Vec<(usize, bool)>,
}

impl Topology {
    pub fn two_host(sc: &Scenario) -> Topology {
        let mut links = Vec::new();
        let mut routes = Vec::new();
        let mut link_path = Vec::new();
        for (i, p) in sc.paths.iter().enumerate() {
            let up = links.len() as u32;
            let [up_params, down_params] = sc.links_of(i);
            links.push(Link::new(format!("{}.up", p.name), up_params, sc.seed));
            link_path.push((i, true));
            let down = links.len() as u32;
            links.push(Link::new(format!("{}.down", p.name), down_params, sc.seed));
            link_path.push((i, false));
            routes.push([vec![up], vec![down]]);
        }
        Topology { links, routes, link_path }
    }
}
