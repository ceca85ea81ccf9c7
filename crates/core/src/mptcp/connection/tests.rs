//! Unit tests of the connection: setup, driven sans-IO between a client and a server.

use super::*;

#[test]
fn the_send_buffer_starts_fixed_doubled_or_at_the_default() {
    use crate::config::{BufTriple, ByteSize};
    assert_eq!(conn_sndbuf(BufSize::Fixed(ByteSize(1 << 20)), false), 1 << 20);
    assert_eq!(conn_sndbuf(BufSize::Fixed(ByteSize(1 << 20)), true), 2 << 20);
    let t = BufTriple { min: ByteSize(4096), default: ByteSize(16384), max: ByteSize(4 << 20) };
    assert_eq!(conn_sndbuf(BufSize::Auto(t), true), 16384);
}

/// Client and server of an upload (the client sends) over two paths, joins opened at the
/// MP_CAPABLE SYN/ACK (`join = "at_once"`).
fn upload() -> (Endpoint, Endpoint) {
    let sc = Scenario::from_toml_str(
        r#"
        duration = "1s"
        [[paths]]
        name = "a"
        rate = "10Mbit"
        [[paths]]
        name = "b"
        rate = "10Mbit"
        [[connections]]
        name = "c"
        kind = "mptcp"
        paths = ["a", "b"]
        direction = "upload"
        app = { kind = "bulk" }
    "#,
    )
    .expect("valid");
    let subflows = &sc.route_table().expect("routes").subflows[0];
    let cfg = &sc.connections[0];
    (Endpoint::new(0, cfg, subflows, &sc, true), Endpoint::new(0, cfg, subflows, &sc, false))
}

/// Hands `pkts` to `to` at `now`; returns what it sends back.
fn deliver(to: &mut Endpoint, now: Time, pkts: &[Packet]) -> Vec<Packet> {
    let mut out = Vec::new();
    for p in pkts {
        to.on_packet(now, p, &mut out);
    }
    out
}

fn data_on(pkts: &[Packet], sf: u8) -> usize {
    pkts.iter().filter(|p| p.subflow == sf && p.payload > 0).count()
}

/// RFC 8684 §3.2: the initiator of an MP_JOIN sends data on the new subflow only once
/// the listener's ACK of its third ACK (the "fourth ACK") arrived; the initial subflow
/// carries data from the MP_CAPABLE third ACK on (§3.1). Here the client sends: its
/// initial window (10 segments, RFC 6928) goes on the initial subflow at the SYN/ACK;
/// the join's SYN/ACK brings no data on the join, although the initial subflow's window
/// is full and the join would be minRTT's only choice; the fourth ACK lets the join's
/// initial window go.
#[test]
fn a_join_carries_data_only_after_the_fourth_ack() {
    let (mut client, mut server) = upload();
    let now = Time::ZERO;
    let mut out = Vec::new();
    client.start(now, &mut out);
    assert_eq!((out.len(), out[0].mp), (1, MpOption::CapableSyn));
    let synack = deliver(&mut server, now, &out);
    assert_eq!(synack[0].mp, MpOption::CapableSynAck);
    // The third ACK, the join's SYN and the initial window on subflow 0.
    let out = deliver(&mut client, now, &synack);
    let iw = client.params[0].iw as usize;
    assert_eq!(out.iter().map(|p| p.mp).take(2).collect::<Vec<_>>(), [MpOption::CapableAck, MpOption::JoinSyn]);
    assert_eq!((data_on(&out, 0), data_on(&out, 1)), (iw, 0));
    let replies = deliver(&mut server, now, &out);
    let join_synack: Vec<Packet> = replies.iter().filter(|p| p.mp == MpOption::JoinSynAck).copied().collect();
    assert_eq!(join_synack.len(), 1);
    // The join's third ACK, and no data on the join yet.
    let out = deliver(&mut client, now, &join_synack);
    assert_eq!(out.iter().filter(|p| p.mp == MpOption::JoinAck).count(), 1);
    assert_eq!(data_on(&out, 1), 0);
    assert_eq!(client.subflow(1).map(|s| s.state()), Some(State::PreEstablished));
    // The server's fourth ACK (a plain ACK on the join): the join sends its initial window.
    let fourth: Vec<Packet> = deliver(&mut server, now, &out).into_iter().filter(|p| p.subflow == 1).collect();
    assert_eq!(fourth.len(), 1);
    let out = deliver(&mut client, now, &fourth);
    assert_eq!((data_on(&out, 0), data_on(&out, 1)), (0, iw));
}
