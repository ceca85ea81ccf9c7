//! PROVISIONAL scaffold so that front ends can build while the engine lands; replaced by the
//! real driver.
use crate::config::Scenario;
use crate::results::*;

pub struct Simulation {
    sc: Scenario,
}

impl Simulation {
    pub fn new(sc: &Scenario) -> Self {
        Simulation { sc: sc.clone() }
    }
    pub fn run(self) -> RunOutput {
        let sc = self.sc;
        let connections = sc
            .connections
            .iter()
            .map(|c| ConnResult {
                name: c.name.clone(),
                kind: format!("{:?}", c.kind).to_lowercase(),
                cc: format!("{:?}", c.cc).to_lowercase(),
                scheduler: format!("{:?}", c.scheduler).to_lowercase(),
                goodput_bps: 0.0,
                delivered_bytes: 0,
                written_bytes: 0,
                data_acked_bytes: 0,
                start_s: c.start.secs_f64(),
                download_time_s: None,
                completed: false,
                reinjected_bytes: 0,
                duplicate_bytes: 0,
                sndbuf_blocked_episodes: 0,
                sndbuf_blocked_time_s: 0.0,
                rwnd_limited_time_s: 0.0,
                ooo_delay: DelayStats::default(),
                max_rcv_ooo_bytes: 0,
            })
            .collect();
        let mut subflows = Vec::new();
        for c in &sc.connections {
            for (i, p) in c.paths.iter().enumerate() {
                subflows.push(SubflowResult {
                    connection: c.name.clone(),
                    subflow: i as u32,
                    path: p.clone(),
                    backup: c.backup.contains(p),
                    established_s: None,
                    first_data_s: None,
                    bytes_sent: 0,
                    bytes_acked: 0,
                    data_bytes_received: 0,
                    share: 0.0,
                    goodput_bps: 0.0,
                    segments_sent: 0,
                    retransmitted_segments: 0,
                    rtos: 0,
                    recovery_episodes: 0,
                    idle_restarts: 0,
                    syn_retransmits: 0,
                    srtt_s: None,
                    min_rtt_s: None,
                    mean_rtt_s: None,
                    final_cwnd_bytes: 0,
                    final_ssthresh_bytes: None,
                });
            }
        }
        let mut links = Vec::new();
        for p in &sc.paths {
            for (dir, l) in [("up", p.up_link()), ("down", p.down_link())] {
                links.push(LinkResult {
                    name: format!("{}.{dir}", p.name),
                    path: p.name.clone(),
                    direction: dir.into(),
                    rate_bps: l.rate.bps(),
                    delay_s: l.delay.secs_f64(),
                    arrived_packets: 0,
                    delivered_packets: 0,
                    delivered_bytes: 0,
                    queue_drops: 0,
                    loss_drops: 0,
                    max_queue_packets: 0,
                    max_queue_bytes: 0,
                    utilisation: 0.0,
                });
            }
        }
        let mut ts = TimeSeries::default();
        if let Some(iv) = sc.output.timeseries {
            ts.series.push(SeriesMeta { entity_kind: "subflow".into(), entity: format!("{}/{}", sc.connections[0].name, sc.connections[0].paths[0]), metric: "cwnd_bytes".into() });
            let mut t = 0.0;
            while t <= sc.duration.secs_f64() {
                ts.time_s.push(t);
                ts.series_index.push(0);
                ts.value.push(0.0);
                t += iv.secs_f64();
            }
        }
        RunOutput {
            summary: Summary { scenario: sc.name.clone(), seed: sc.seed, duration_s: sc.duration.secs_f64(), end_s: sc.duration.secs_f64(), events: 0, data_packets: 0, trace_hash: None, connections, subflows, links },
            timeseries: ts,
        }
    }
}
