//! The time series a run records (`output.timeseries`): which series exist, and one sample of
//! each at every tick.

use super::Simulation;
use crate::results::{SeriesMeta, TimeSeries};

/// Per-subflow series; `retransmitted_segments` and `penalisations` (M2 halvings of the
/// subflow's window) are cumulative counts. Three are the receiving end's subflow socket: the
/// window it last offered (Linux `tp->rcv_wnd`), its `rcv_ssthresh` and its own receive buffer
/// (`sk_rcvbuf`), the latter two NaN where not modelled. The last two are the sending
/// subflow's send buffer and the memory its data is charged (`sk_sndbuf`, `sk_wmem_queued`:
/// `ss -m`'s `tb` and `w`).
pub(super) const SF_METRICS: [&str; 13] = [
    "cwnd_bytes",
    "ssthresh_bytes",
    "srtt_s",
    "in_flight_bytes",
    "dsn_sent_bytes",
    "rto_s",
    "retransmitted_segments",
    "penalisations",
    "rcv_wnd_bytes",
    "rcv_ssthresh_bytes",
    "rcvbuf_bytes",
    "sndbuf_bytes",
    "wmem_queued_bytes",
];
/// Per-connection series; `sndbuf_limited_s` is the cumulative time the connection has been
/// send-buffer limited (as `sndbuf_limited_time_s` of the summary counts it); `rcvbuf_bytes` is
/// the receiver's buffer (Linux `sk_rcvbuf` of the MPTCP socket) and `rcv_wnd_bytes` the window
/// it last advertised at the data level (`rcv_wnd_sent - ack_seq`); `sndbuf_bytes` is the
/// sender's buffer (the MPTCP socket's `sk_sndbuf`; NaN for a TCP connection, whose buffer is
/// its subflow's).
pub(super) const CONN_METRICS: [&str; 8] = [
    "data_acked_bytes",
    "delivered_bytes",
    "rcv_ooo_bytes",
    "alpha",
    "sndbuf_limited_s",
    "rcvbuf_bytes",
    "rcv_wnd_bytes",
    "sndbuf_bytes",
];
pub(super) const LINK_METRICS: [&str; 2] = ["queue_packets", "queue_bytes"];

impl Simulation {
    fn series(&mut self, kind: &str, entity: String, metric: &str) -> u32 {
        self.ts.series.push(SeriesMeta { entity_kind: kind.into(), entity, metric: metric.into() });
        (self.ts.series.len() - 1) as u32
    }

    pub(super) fn register_series(&mut self) {
        for c in 0..self.sc.connections.len() {
            let cfg = self.sc.connections[c].clone();
            let mut per_sf = Vec::new();
            let labels: Vec<String> =
                self.eps[c][0].paths.iter().map(|(r, _)| self.topo.route_names[*r].clone()).collect();
            for p in &labels {
                let mut ids = [0; SF_METRICS.len()];
                for (k, m) in SF_METRICS.iter().enumerate() {
                    ids[k] = self.series("subflow", format!("{}/{}", cfg.name, p), m);
                }
                per_sf.push(ids);
            }
            self.sf_series.push(per_sf);
            let mut ids = [0; CONN_METRICS.len()];
            for (k, m) in CONN_METRICS.iter().enumerate() {
                ids[k] = self.series("connection", cfg.name.clone(), m);
            }
            self.conn_series.push(ids);
        }
        for l in 0..self.topo.links.len() {
            let name = self.topo.links[l].name.clone();
            let mut ids = [0; LINK_METRICS.len()];
            for (k, m) in LINK_METRICS.iter().enumerate() {
                ids[k] = self.series("link", name.clone(), m);
            }
            self.link_series.push(ids);
        }
    }

    pub(super) fn sample(&mut self) {
        let t = self.now.secs_f64();
        let push = |ts: &mut TimeSeries, idx: u32, v: f64| {
            ts.time_s.push(t);
            ts.series_index.push(idx);
            ts.value.push(v);
        };
        for c in 0..self.eps.len() {
            let [cl, sv] = &self.eps[c];
            let snd = if cl.is_sender { cl } else { sv };
            let rcv = if cl.is_sender { sv } else { cl };
            for (i, ids) in self.sf_series[c].iter().enumerate() {
                if let Some(r) = rcv.subflow(i) {
                    let nan_if_0 = |v: u64| if v == 0 { f64::NAN } else { v as f64 };
                    push(&mut self.ts, ids[8], r.rcv.rcv_wnd as f64);
                    push(&mut self.ts, ids[9], nan_if_0(r.rcv.rcv_ssthresh));
                    push(&mut self.ts, ids[10], nan_if_0(r.rcv.rcvbuf));
                }
                let Some(s) = snd.subflow(i) else { continue };
                push(&mut self.ts, ids[0], s.w.cwnd as f64);
                push(&mut self.ts, ids[1], if s.w.ssthresh == u64::MAX { f64::NAN } else { s.w.ssthresh as f64 });
                push(&mut self.ts, ids[2], s.rtt.srtt().map_or(f64::NAN, |d| d.secs_f64()));
                push(&mut self.ts, ids[3], s.sb.in_flight() as f64);
                push(&mut self.ts, ids[4], s.stats.dsn_sent_end as f64);
                push(&mut self.ts, ids[5], s.rtt.rto().secs_f64());
                push(&mut self.ts, ids[6], s.stats.retrans_segments as f64);
                push(&mut self.ts, ids[7], s.stats.penalisations as f64);
                if let Some((sndbuf, queued)) = snd.subflow_memory(self.now, i) {
                    push(&mut self.ts, ids[11], sndbuf as f64);
                    push(&mut self.ts, ids[12], queued as f64);
                }
            }
            let ids = self.conn_series[c];
            push(&mut self.ts, ids[0], snd.snd.data_una.0 as f64);
            push(&mut self.ts, ids[1], rcv.rcv.delivered as f64);
            push(&mut self.ts, ids[2], rcv.rcv.ooo_bytes() as f64);
            push(&mut self.ts, ids[3], snd.cc.alpha().unwrap_or(f64::NAN));
            push(&mut self.ts, ids[4], snd.snd.sndbuf_limited_ns_at(self.now) as f64 * 1e-9);
            push(&mut self.ts, ids[5], rcv.rcv.space.rcvbuf as f64);
            push(&mut self.ts, ids[6], rcv.rcv.advertised_window() as f64);
            push(&mut self.ts, ids[7], if snd.mptcp { snd.snd.sndbuf as f64 } else { f64::NAN });
        }
        let now = self.now;
        for l in 0..self.topo.links.len() {
            let (pk, by) = self.topo.links[l].backlog(now);
            let ids = self.link_series[l];
            push(&mut self.ts, ids[0], pk as f64);
            push(&mut self.ts, ids[1], by as f64);
        }
    }
}
