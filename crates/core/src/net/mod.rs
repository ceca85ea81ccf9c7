//! Packets, links and the topology that routes packets between endpoints.
//!
//! A link is a queue under a discipline ([`qdisc`]), a transmitter ([`service`]) and a wire
//! (`wire`: [`loss`], delay and [`jitter`]). Nothing here reads the scenario schema: the
//! schema resolves into [`link::LinkParams`] and builds the [`Topology`].

pub mod jitter;
pub mod link;
pub mod loss;
pub mod packet;
pub mod params;
pub mod qdisc;
pub mod service;
mod wire;

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
