//! The fully resolved parameters of one unidirectional link (what `config` builds from a
//! scenario and [`crate::net::link::Link`] and its wire run on).

use std::sync::Arc;

use crate::net::jitter::Jitter;
use crate::net::qdisc::QdiscParams;
use crate::net::service::{OppTrace, RateProfile, Service};
use crate::units::{Dur, Rate};

/// Where a link's capacity comes from.
#[derive(Clone, Debug, PartialEq)]
pub enum Capacity {
    Rate(Arc<RateProfile>),
    Trace(Arc<OppTrace>),
}

/// A change of a link's delay or loss rate at `at` into the (possibly periodic) schedule;
/// changes of the rate are part of the [`Capacity`].
#[derive(Clone, Debug, PartialEq)]
pub struct ScheduledChange {
    pub at: Dur,
    pub delay: Option<Dur>,
    /// Mean loss probability per packet.
    pub loss: Option<f64>,
}

/// The fully resolved parameters of one unidirectional link.
#[derive(Clone, Debug, PartialEq)]
pub struct LinkParams {
    pub capacity: Capacity,
    /// The rate before any schedule (or a trace's mean capacity), for reports.
    pub nominal_rate: Rate,
    /// One-way propagation delay.
    pub delay: Dur,
    pub jitter: Option<Jitter>,
    /// The queue discipline, with the hard limit.
    pub qdisc: QdiscParams,
    /// Mean loss probability per packet.
    pub loss: f64,
    /// Mean loss burst length (packets); > 1 selects Gilbert–Elliott losses.
    pub loss_burst: Option<f64>,
    /// Ordinals (1 = first) of packets offered to the link that are lost, sorted.
    pub drop: Vec<u64>,
    pub schedule: Vec<ScheduledChange>,
    pub schedule_period: Option<Dur>,
    /// The queue is in the sending host, whose TCP small queues count the packets it holds.
    pub at_host: bool,
}

impl LinkParams {
    /// A fresh service process for a link.
    pub fn service(&self) -> Service {
        match &self.capacity {
            Capacity::Rate(p) if p.rates.len() == 1 && p.rates[0] > 0 => {
                Service::Constant { bps: p.rates[0], last: (0, Dur::ZERO) }
            }
            Capacity::Rate(p) => Service::Rate(p.clone()),
            Capacity::Trace(t) => Service::Opportunities { trace: t.clone(), cur: None, left: 0 },
        }
    }
}
