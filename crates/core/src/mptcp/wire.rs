//! Packets of an [`Endpoint`]: headers, windows and MPTCP options.
//!
//! Option sizes (`option_sizes`): `classic` gives every DSS a 64-bit DATA_ACK. `linux`
//! follows `mptcp_established_options_dss` and `mptcp_write_options`: the DATA_ACK is 64 bits
//! only once the peer's mappings used 64-bit DSNs (`msk->use_64bit_ack`, set from the
//! received mapping), i.e. at the data receiver, and 32 bits at the data sender, which
//! receives no mappings; data carries a 64-bit-DSN mapping without checksum, padded with
//! two NOPs. So with timestamps a data packet has 12 + 24 B of options and a 1500-byte MTU
//! holds 1500 − 40 − 36 = 1424 B of payload (1420 B with `classic`'s 28-byte DSS); the
//! receiver's pure ACKs carry 12 B of DSS (+12 timestamps, leaving room for one SACK block
//! as Linux computes it after the MPTCP options), the sender's 8 B. Checked against
//! captures of Linux 6.18: data 1500 B (1424 B payload), ACK 64 B, ACK with one SACK block
//! 76 B, MP_CAPABLE SYN / SYN-ACK / ACK 64 / 72 / 72 B, MP_JOIN 72 / 76 / 76 B.

use crate::mptcp::connection::Endpoint;
use crate::net::packet::{flags, optlen, MpOption, Packet, SackBlocks, IP_TCP_HEADER};
use crate::tcp::scoreboard::SentSeg;
use crate::tcp::subflow::State;
use crate::units::{Dsn, Seq, Time};

/// The fields of a packet that depend on what it carries: subflow sequence numbers, payload,
/// mapping and SACK blocks (a pure ACK leaves `seq`, `payload` and `dsn` zero).
#[derive(Clone, Copy, Default)]
struct Carries {
    seq: Seq,
    ack: Seq,
    payload: u32,
    dsn: Dsn,
    sack: SackBlocks,
}

impl Endpoint {
    /// A packet on subflow `sf` with flags `fl` and MPTCP option `mp` (none on a TCP
    /// connection), carrying nothing: the window, the DATA_ACK and the timestamp echo set, its
    /// size on the wire computed. Callers set `seq` or `ack` where they need them (neither
    /// changes the size).
    pub(crate) fn packet(&mut self, now: Time, sf: usize, fl: u8, mp: MpOption) -> Packet {
        self.build(now, sf, fl, mp, Carries::default())
    }

    /// A packet as [`Endpoint::packet`] builds it, carrying `c`; built once, in place, with
    /// its size on the wire.
    #[inline(always)]
    fn build(&mut self, now: Time, sf: usize, fl: u8, mp: MpOption, c: Carries) -> Packet {
        let wnd = if fl & flags::SYN != 0 {
            // The handshake's window is the subflow's first `tp->rcv_wnd` (all of it where
            // windows are rounded as Linux's; the header carries at most 65535 B of it).
            let space = &self.rcv.space;
            let (w, kept) = (space.initial_window(), space.handshake_window());
            if let Some(s) = self.subflows.get_mut(sf).and_then(|s| s.as_mut()) {
                s.rcv.rcv_wnd = if space.rounds() { kept } else { w };
            }
            w
        } else {
            // The window computed (`tp->rcv_wnd`), then as the header carries it.
            let w = self.adv_window(sf);
            self.rcv.space.on_wire(w)
        };
        self.uid += 1;
        let mp = if self.mptcp { mp } else { MpOption::None };
        Packet {
            uid: self.uid,
            conn: self.conn,
            subflow: sf as u8,
            to_server: self.is_client,
            hop: 0,
            flags: fl,
            mp,
            wire_len: wire_len(fl, mp, self.ack64, c.payload, c.sack.n, self.ts_len),
            payload: c.payload,
            seq: c.seq,
            ack: c.ack,
            wnd,
            sack: c.sack,
            dsn: c.dsn,
            data_ack: self.rcv.rcv_nxt,
            ack64: self.ack64,
            sent_at: now,
            ts_echo: self.ts_recent[sf],
        }
    }

    pub(crate) fn handshake_packet(&mut self, now: Time, sf: usize, out: &mut Vec<Packet>) {
        let s = self.subflows[sf].as_ref().expect("subflow");
        let first = sf == 0;
        let (fl, mp) = match (s.state(), self.is_client) {
            (State::SynSent, _) => (flags::SYN, if first { MpOption::CapableSyn } else { MpOption::JoinSyn }),
            (State::SynRcvd, _) => {
                (flags::SYN | flags::ACK, if first { MpOption::CapableSynAck } else { MpOption::JoinSynAck })
            }
            (_, true) => (flags::ACK, if first { MpOption::CapableAck } else { MpOption::JoinAck }),
            (_, false) => (flags::ACK, MpOption::Dss),
        };
        let p = self.packet(now, sf, fl, mp);
        out.push(p);
    }

    pub(crate) fn data_packet(&mut self, now: Time, sf: usize, seg: SentSeg, out: &mut Vec<Packet>) {
        self.push_data_packet(now, sf, seg, false, out);
    }

    /// [`Endpoint::data_packet`], inlined into the transmission of new data (`send_on`).
    #[inline(always)]
    pub(super) fn push_data_packet(&mut self, now: Time, sf: usize, seg: SentSeg, psh: bool, out: &mut Vec<Packet>) {
        let c = Carries { seq: seg.seq, payload: seg.len, dsn: seg.dsn, ..Carries::default() };
        let fl = if psh { flags::ACK | flags::PSH } else { flags::ACK };
        let p = self.build(now, sf, fl, MpOption::Dss, c);
        if self.host_queue[sf] {
            let s = self.subflows[sf].as_mut().expect("sending subflow exists");
            let truesize = s.tx_truesize(seg.len as u64);
            s.tsq.charge(now, truesize);
        }
        out.push(p);
    }

    pub(crate) fn send_ack(&mut self, now: Time, sf: usize, out: &mut Vec<Packet>) {
        self.push_ack(now, sf, out);
    }

    /// [`Endpoint::send_ack`], inlined into the data receiver's path (`on_data`).
    #[inline(always)]
    pub(super) fn push_ack(&mut self, now: Time, sf: usize, out: &mut Vec<Packet>) {
        // SACK blocks fill the option space the timestamps and the DSS leave.
        let max_blocks = self.sack_blocks;
        let s = self.subflows[sf].as_ref().expect("subflow");
        let mut c = Carries { ack: s.rcv.rcv_nxt, ..Carries::default() };
        for b in s.rcv.sack_blocks(max_blocks) {
            c.sack.push(c.ack, b);
        }
        let p = self.build(now, sf, flags::ACK, MpOption::Dss, c);
        let s = self.subflows[sf].as_mut().expect("subflow");
        s.rcv.on_ack_sent();
        s.timers.delack.stop();
        s.timers.comp_sack.stop();
        // What this end offered as it computed it (`tp->rcv_wnd`, `msk->old_wspace`), beyond
        // the header's bound where the window scale is too small for it.
        let w = s.rcv.rcv_wnd;
        self.adv[sf] = (w, p.ack);
        self.old_space = w;
        out.push(p);
    }
}

/// Bytes on the wire of a packet with flags `fl`, option `mp`, `payload` bytes and `sack_n`
/// SACK blocks: headers, then options (`ts_len` bytes of timestamps, or a SYN's own set).
fn wire_len(fl: u8, mp: MpOption, ack64: bool, payload: u32, sack_n: u8, ts_len: u32) -> u32 {
    let mut opts = if fl & flags::SYN != 0 { optlen::SYN_BASE } else { ts_len };
    opts += match mp {
        MpOption::None => 0,
        MpOption::CapableSyn => optlen::MP_CAPABLE_SYN,
        MpOption::CapableSynAck => optlen::MP_CAPABLE_SYNACK,
        MpOption::CapableAck => optlen::MP_CAPABLE_ACK,
        MpOption::JoinSyn => optlen::MP_JOIN_SYN,
        MpOption::JoinSynAck => optlen::MP_JOIN_SYNACK,
        MpOption::JoinAck => optlen::MP_JOIN_ACK,
        MpOption::Dss => optlen::dss(ack64, payload > 0),
        MpOption::AddAddr { .. } => optlen::ADD_ADDR,
        MpOption::AddAddrEcho { .. } => optlen::ADD_ADDR_ECHO,
    };
    opts += optlen::sack(sack_n as u32);
    IP_TCP_HEADER + opts + payload
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Scenario;

    fn endpoints(option_sizes: &str) -> (Endpoint, Endpoint) {
        let sc = Scenario::from_toml_str(&format!(
            r#"
            duration = "1s"
            [[paths]]
            name = "p"
            rate = "10Mbit"
            [[connections]]
            name = "c"
            kind = "mptcp"
            paths = ["p"]
            option_sizes = "{option_sizes}"
            app = {{ kind = "bulk" }}
        "#
        ))
        .expect("valid");
        let cfg = &sc.connections[0];
        (Endpoint::new(0, cfg, &[(0, false)], &sc, true), Endpoint::new(0, cfg, &[(0, false)], &sc, false))
    }

    #[test]
    fn a_1500_byte_mtu_holds_1424_bytes_with_linux_options_and_1420_with_classic() {
        // 1500 − 20 IP − 20 TCP − 12 timestamps − DSS: Linux's data sender writes a 32-bit
        // DATA_ACK and a 64-bit mapping, 4 + 4 + 14 = 22 → 24 B, so 1424 B; classic's 64-bit
        // DATA_ACK gives 4 + 8 + 14 = 26 → 28 B, so 1420 B.
        for (sizes, payload, ack, ack_sack) in [("linux", 1424, 64, 76), ("classic", 1420, 64, 76)] {
            let (mut client, mut server) = endpoints(sizes);
            assert_eq!(server.params[0].smss, payload, "{sizes}");
            let seg = SentSeg { len: payload as u32, ..SentSeg::default() };
            let mut out = Vec::new();
            server.data_packet(Time::ZERO, 0, seg, &mut out);
            assert_eq!(out[0].wire_len, 1500, "{sizes}: data packet");
            // The receiver's pure ACK: 40 + 12 timestamps + 12 DSS (64-bit DATA_ACK) = 64 B, and
            // with SACK: 40 − 24 = 16 B of option space left, room for one block (4 + 8 B with
            // its two NOPs, Linux `tcp_established_options`), 76 B.
            let ack_pkt = client.packet(Time::ZERO, 0, flags::ACK, MpOption::Dss);
            assert_eq!(ack_pkt.wire_len, ack, "{sizes}: pure ACK");
            let with_sack = wire_len(flags::ACK, MpOption::Dss, ack_pkt.ack64, 0, 1, client.ts_len);
            assert_eq!(with_sack, ack_sack, "{sizes}: ACK with SACK");
        }
        // Linux's data sender acknowledges with a 32-bit DATA_ACK: 40 + 12 + 8 = 60 B (the
        // kernel's fourth ACK of a join in a download).
        let (_, mut server) = endpoints("linux");
        assert_eq!(server.packet(Time::ZERO, 0, flags::ACK, MpOption::Dss).wire_len, 60);
    }
}
