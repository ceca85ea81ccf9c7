//! A harness for unit tests of an [`Endpoint`], driven sans-IO: no simulator and no links, a
//! test calls `xmit`, `on_timeout` and `on_packet` itself at the times it chooses and reads the
//! packets handed back.
//!
//! [`Harness::new`] builds the sending end (the server of a download) of an MPTCP connection
//! whose subflows are established from time 0, each with the smoothed RTT (one sample,
//! RFC 6298 (2.2): SRTT = R, RTTVAR = R/2), congestion window and backup flag the test gives,
//! and a send buffer auto-tuned for that window (Linux `tcp_sndbuf_expand`). Data is put in
//! flight on a chosen subflow with [`Harness::in_flight`], and the peer's ACKs are made by
//! [`Harness::ack`].

use crate::config::Scenario;
use crate::mptcp::connection::Endpoint;
use crate::net::packet::{flags, MpOption, Packet};
use crate::tcp::subflow::State;
use crate::units::{Dsn, Dur, Seq, Time};

/// A subflow as a test sets it up.
#[derive(Clone, Copy, Debug)]
pub struct Sf {
    pub srtt_ms: u64,
    pub cwnd_segs: u64,
    pub backup: bool,
}

/// A regular subflow with smoothed RTT `srtt_ms` and a window of `cwnd_segs` full segments.
pub fn sf(srtt_ms: u64, cwnd_segs: u64) -> Sf {
    Sf { srtt_ms, cwnd_segs, backup: false }
}

/// A backup subflow (RFC 8684 §3.3.8, the MP_JOIN's B flag).
pub fn backup(srtt_ms: u64, cwnd_segs: u64) -> Sf {
    Sf { srtt_ms, cwnd_segs, backup: true }
}

/// `x` milliseconds after time zero (the harness starts at zero).
pub fn ms(x: u64) -> Time {
    Time::ZERO + Dur::from_ms(x)
}

/// A data packet as a test reads it: the subflow it went on, its first data sequence number
/// and its payload bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sent {
    pub sf: usize,
    pub dsn: u64,
    pub len: u64,
}

pub struct Harness {
    pub ep: Endpoint,
    pub now: Time,
    /// Payload bytes of a full segment.
    pub smss: u64,
}

impl Harness {
    /// `conn`: more keys for the connection's table (scheduler, buffers, `app`: a bulk
    /// transfer unless given).
    pub fn new(conn: &str, subflows: &[Sf]) -> Harness {
        let mut ep = endpoint(conn, subflows, false);
        let now = Time::ZERO;
        for (i, x) in subflows.iter().enumerate() {
            ep.new_subflow(i, State::Established);
            let s = ep.subflows[i].as_mut().expect("new subflow");
            s.stats.established_at = Some(now);
            s.rtt.on_sample(Dur::from_ms(x.srtt_ms));
            s.w.cwnd = x.cwnd_segs * s.w.smss;
            let (smss, cwnd) = (s.w.smss, s.w.cwnd);
            let cap = ep.subflow_sndbuf_cap();
            ep.sfq[i].expand(smss, cwnd, cap);
        }
        ep.sync_sndbuf();
        ep.mp_established = true;
        ep.start_app(now);
        let smss = ep.params[0].smss;
        Harness { ep, now, smss }
    }

    /// The receiving end (the client of a download) of the same connection, its `n` subflows
    /// established from time 0 with nothing received yet; [`Harness::deliver`] feeds it data.
    pub fn receiver(conn: &str, n: usize) -> Harness {
        client(conn, n, n)
    }

    /// The client of a download with `n` paths of which only the initial subflow is
    /// established, the connection not yet fully established for its path manager (the
    /// joins open at the first DSS under `join = "fully_established"`).
    pub fn client_before_joins(conn: &str, n: usize) -> Harness {
        client(conn, n, 1)
    }

    /// A full data segment from the peer arriving at `at` on subflow `j`: subflow sequence
    /// `seq`, data sequence `dsn` (bytes). Returns every packet sent in reply.
    pub fn deliver(&mut self, at: Time, j: usize, seq: u64, dsn: u64) -> Vec<Packet> {
        self.now = at;
        let mut p = packet(j, false, at);
        (p.payload, p.seq, p.dsn, p.wire_len) = (self.smss as u32, Seq(seq), Dsn(dsn), 1500);
        let mut out = Vec::new();
        self.ep.on_packet(at, &p, &mut out);
        out
    }

    /// Sends `n` full segments of new data on subflow `j` as the send loop would, whatever
    /// the scheduler and the subflow's window say (to set up data in flight).
    pub fn in_flight(&mut self, j: usize, n: u64) {
        let mut out = Vec::new();
        self.ep.sched_views(self.now);
        for _ in 0..n {
            let (dsn, len) = self.ep.snd.next_new(0, self.smss).expect("data to send");
            self.ep.snd.mark_sent(dsn, len);
            self.ep.send_on(self.now, j, dsn, len, false, &mut out);
        }
    }

    /// One push attempt at the current time (`xmit`): the data packets it sent.
    pub fn push(&mut self) -> Vec<Sent> {
        let mut out = Vec::new();
        self.ep.xmit(self.now, &mut out);
        data(&out)
    }

    /// Moves the clock to `at` and fires the timers due (`on_timeout`): the data packets sent.
    pub fn fire(&mut self, at: Time) -> Vec<Sent> {
        self.now = at;
        let mut out = Vec::new();
        self.ep.on_timeout(at, &mut out);
        data(&out)
    }

    /// The peer's ACK on subflow `j`, arriving now: cumulative subflow-level ACK `ack` (bytes
    /// of that subflow), DATA_ACK `data_ack` and receive window `wnd` (bytes beyond DATA_ACK,
    /// RFC 8684 §3.3.4). Returns the data packets sent in reply.
    pub fn ack(&mut self, j: usize, ack: u64, data_ack: u64, wnd: u64) -> Vec<Sent> {
        let mut p = packet(j, true, self.now);
        (p.ack, p.data_ack, p.wnd) = (Seq(ack), Dsn(data_ack), wnd);
        let mut out = Vec::new();
        self.ep.on_packet(self.now, &p, &mut out);
        data(&out)
    }
}

/// The endpoint of an MPTCP connection over one 10 Mbit/s path per subflow, `conn` adding keys
/// to the connection's table: the server (`is_client` false) or the client of a download.
/// The client of a download over `n` paths, its first `established` subflows established
/// from time 0 with nothing received yet.
fn client(conn: &str, n: usize, established: usize) -> Harness {
    let mut ep = endpoint(conn, &vec![sf(1, 1); n], true);
    for i in 0..established {
        ep.new_subflow(i, State::Established);
        ep.subflows[i].as_mut().expect("new subflow").stats.established_at = Some(Time::ZERO);
    }
    ep.mp_established = true;
    let smss = ep.params[0].smss;
    Harness { ep, now: Time::ZERO, smss }
}

fn endpoint(conn: &str, subflows: &[Sf], is_client: bool) -> Endpoint {
    let mut toml = String::from("duration = \"10s\"\n");
    for i in 0..subflows.len() {
        toml += &format!("[[paths]]\nname = \"p{i}\"\nrate = \"10Mbit\"\n");
    }
    let names: Vec<String> = (0..subflows.len()).map(|i| format!("\"p{i}\"")).collect();
    let backups: Vec<String> =
        (0..subflows.len()).filter(|&i| subflows[i].backup).map(|i| format!("\"p{i}\"")).collect();
    toml += &format!(
        "[[connections]]\nname = \"c\"\nkind = \"mptcp\"\npaths = [{}]\nbackup = [{}]\n{conn}\n",
        names.join(", "),
        backups.join(", ")
    );
    if !conn.contains("app =") {
        toml += "app = { kind = \"bulk\" }\n";
    }
    let sc = Scenario::from_toml_str(&toml).expect("valid test scenario");
    let table = sc.route_table().expect("routes");
    Endpoint::new(0, &sc.connections[0], &table.subflows[0], &sc, is_client)
}

/// A pure ACK with a DSS option on subflow `j` sent at `at` (towards the server if
/// `to_server`), acknowledging nothing, with a window of 1 MB: callers set what it carries.
fn packet(j: usize, to_server: bool, at: Time) -> Packet {
    Packet {
        uid: 0,
        conn: 0,
        subflow: j as u8,
        to_server,
        hop: 0,
        flags: flags::ACK,
        mp: MpOption::Dss,
        wire_len: 64,
        payload: 0,
        seq: Seq(0),
        ack: Seq(0),
        wnd: 1 << 20,
        sack: Default::default(),
        dsn: Dsn(0),
        data_ack: Dsn(0),
        ack64: true,
        sent_at: at,
        ts_echo: at,
    }
}

/// The data packets among `out`.
pub fn data(out: &[Packet]) -> Vec<Sent> {
    out.iter()
        .filter(|p| p.payload > 0)
        .map(|p| Sent { sf: p.subflow as usize, dsn: p.dsn.0, len: p.payload as u64 })
        .collect()
}

/// `n` consecutive full segments on subflow `sf` starting at data sequence number `dsn`.
pub fn run(sf: usize, dsn: u64, n: u64, smss: u64) -> Vec<Sent> {
    (0..n).map(|k| Sent { sf, dsn: dsn + k * smss, len: smss }).collect()
}
