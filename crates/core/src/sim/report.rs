//! Turns the final state of a simulation into its [`RunOutput`].

use super::Simulation;
use crate::config::ConnKind;
use crate::results::{ConnResult, DelayStats, Handoff, LinkResult, RunOutput, SubflowResult, Summary};
use crate::units::Time;

fn secs(t: Option<Time>) -> Option<f64> {
    t.map(|t| t.secs_f64())
}

pub(super) fn build(mut sim: Simulation, end: Time) -> RunOutput {
    let sc = &sim.sc;
    let mut connections = Vec::new();
    let mut subflows = Vec::new();
    for (c, cfg) in sc.connections.iter().enumerate() {
        let sender_is_client = sim.eps[c][0].is_sender;
        let (si, ri) = if sender_is_client { (0, 1) } else { (1, 0) };
        sim.eps[c][si].snd.finish(end);
        let snd = &sim.eps[c][si];
        let rcv = &sim.eps[c][ri];
        let start = sim.eps[c][0].start;
        let completed_at = rcv.completed_at;
        let from = start.max(Time::ZERO + sc.output.warmup);
        let until = completed_at.unwrap_or(end);
        let window = until.since(from).secs_f64();
        let rate = |bytes: u64| {
            if window > 0.0 {
                bytes as f64 * 8.0 / window
            } else {
                0.0
            }
        };
        let h = &rcv.rcv.delay;
        let ns = 1e-9;
        connections.push(ConnResult {
            name: cfg.name.clone(),
            kind: match cfg.kind {
                ConnKind::Tcp => "tcp".into(),
                ConnKind::Mptcp => "mptcp".into(),
            },
            cc: snd.cc.name().into(),
            scheduler: snd.sched.name().into(),
            goodput_bps: rate(rcv.rcv.delivered_after_warmup),
            delivered_bytes: rcv.rcv.delivered,
            written_bytes: snd.snd.write_seq.0,
            data_acked_bytes: snd.snd.data_una.0,
            start_s: start.secs_f64(),
            download_time_s: completed_at.map(|t| t.since(start).secs_f64()),
            completed: completed_at.is_some(),
            reinjected_bytes: snd.snd.reinjected_bytes,
            opportunistic_retransmissions: snd.snd.opportunistic_retransmissions,
            penalisations: snd.snd.penalisations,
            rbuf_calls: snd.snd.rbuf_calls,
            rbuf_calls_full: snd.snd.rbuf_calls_full,
            duplicate_bytes: rcv.rcv.duplicate_bytes,
            sndbuf_blocked_episodes: snd.snd.blocked_episodes,
            sndbuf_blocked_time_s: snd.snd.blocked_ns as f64 * ns,
            sndbuf_limited_time_s: snd.snd.sndbuf_limited_ns as f64 * ns,
            rwnd_limited_time_s: snd.snd.rwnd_limited_ns as f64 * ns,
            ooo_delay: DelayStats {
                samples: h.count(),
                delayed_fraction: if h.count() > 0 { h.nonzero() as f64 / h.count() as f64 } else { 0.0 },
                mean_s: h.mean() * ns,
                p50_s: h.quantile(0.5) as f64 * ns,
                p99_s: h.quantile(0.99) as f64 * ns,
                max_s: h.max() as f64 * ns,
            },
            max_rcv_ooo_bytes: rcv.rcv.max_ooo_bytes,
        });
        for (i, &(route, backup)) in snd.paths.iter().enumerate() {
            let p = &sim.topo.route_names[route];
            let s = snd.subflow(i);
            let r = rcv.subflow(i);
            let client = if sender_is_client { s } else { r };
            let got = r.map_or(0, |r| r.stats.data_bytes_after_warmup);
            // Share of the connection-level data that reached the receiver (in order or not)
            // after the warm-up, by the subflow that first brought it.
            let total: u64 = rcv.subflows.iter().flatten().map(|r| r.stats.data_bytes_after_warmup).sum();
            subflows.push(SubflowResult {
                connection: cfg.name.clone(),
                subflow: i as u32,
                path: p.clone(),
                backup,
                established_s: secs(client.and_then(|s| s.stats.established_at)),
                first_data_s: secs(r.and_then(|r| r.stats.first_data_at)),
                bytes_sent: s.map_or(0, |s| s.stats.bytes_sent),
                bytes_acked: s.map_or(0, |s| s.stats.bytes_acked),
                data_bytes_received: r.map_or(0, |r| r.stats.data_bytes_received),
                share: if total > 0 { got as f64 / total as f64 } else { 0.0 },
                goodput_bps: rate(got),
                segments_sent: s.map_or(0, |s| s.stats.segments_sent),
                retransmitted_segments: s.map_or(0, |s| s.stats.retrans_segments),
                rtos: s.map_or(0, |s| s.stats.rtos),
                recovery_episodes: s.map_or(0, |s| s.stats.recoveries),
                idle_restarts: s.map_or(0, |s| s.stats.idle_restarts),
                penalisations: s.map_or(0, |s| s.stats.penalisations),
                stale_marks: s.map_or(0, |s| s.stats.stale),
                syn_retransmits: client.map_or(0, |s| s.stats.syn_retransmits),
                srtt_s: s.and_then(|s| s.rtt.srtt()).map(|d| d.secs_f64()),
                min_rtt_s: s.and_then(|s| s.rtt.min_rtt()).map(|d| d.secs_f64()),
                mean_rtt_s: s.and_then(|s| s.rtt.mean()).map(|d| d.secs_f64()),
                final_cwnd_bytes: s.map_or(0, |s| s.w.cwnd),
                final_ssthresh_bytes: s.and_then(|s| (s.w.ssthresh != u64::MAX).then_some(s.w.ssthresh)),
            });
        }
    }
    let links = sim
        .topo
        .links
        .iter()
        .zip(sim.topo.link_path.iter().zip(&sim.topo.link_nodes))
        .map(|(l, (on_path, (from, to)))| LinkResult {
            name: l.name.clone(),
            path: on_path.map_or_else(String::new, |(p, _)| sc.paths[p].name.clone()),
            direction: match on_path {
                Some((_, true)) => "up".into(),
                Some((_, false)) => "down".into(),
                None => format!("{from}->{to}"),
            },
            rate_bps: l.params.nominal_rate.bps(),
            delay_s: l.params.delay.secs_f64(),
            arrived_packets: l.stats.arrived,
            delivered_packets: l.stats.delivered,
            delivered_bytes: l.stats.delivered_bytes,
            queue_drops: l.stats.queue_drops,
            aqm_drops: l.stats.aqm_drops,
            loss_drops: l.stats.loss_drops,
            max_queue_packets: l.stats.max_queue_packets,
            max_queue_bytes: l.stats.max_queue_bytes,
            utilisation: l.utilisation(end),
        })
        .collect();
    let summary = Summary {
        scenario: sc.name.clone(),
        seed: sc.seed,
        duration_s: sc.duration.secs_f64(),
        end_s: end.secs_f64(),
        events: sim.q.popped(),
        data_packets: sim.data_packets,
        trace_hash: sim.digest.as_ref().map(|d| d.hex()),
        connections,
        subflows,
        links,
    };
    RunOutput { summary, timeseries: std::mem::take(&mut sim.ts), handoffs: handoffs(&mut sim) }
}

/// The sending endpoints' recorded hand-offs ([`crate::results::Handoff`]), connection by
/// connection.
fn handoffs(sim: &mut Simulation) -> Vec<Handoff> {
    let mut rows = Vec::new();
    for (c, cfg) in sim.sc.connections.iter().enumerate() {
        for ep in sim.eps[c].iter_mut() {
            let Some(log) = ep.handoffs.take() else { continue };
            rows.extend(log.into_iter().map(|(at, sf, dsn, bytes, retransmit)| Handoff {
                connection: cfg.name.clone(),
                path: sim.topo.route_names[ep.paths[sf as usize].0].clone(),
                time_s: at.secs_f64(),
                data_seq: dsn,
                bytes,
                retransmit,
            }));
        }
    }
    rows
}
