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

impl Endpoint {
    pub(crate) fn packet(&mut self, now: Time, sf: usize, fl: u8, mp: MpOption) -> Packet {
        let wnd = if fl & flags::SYN != 0 {
            // A SYN's window is not scaled (RFC 7323 §2.2): Linux offers at most 65535 B.
            let w = self.rcv.space.window_for(0);
            if self.truesize {
                w.min(65_535)
            } else {
                w
            }
        } else {
            self.adv_window(sf)
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
            wire_len: 0,
            payload: 0,
            seq: Seq(0),
            ack: Seq(0),
            wnd,
            sack: SackBlocks::default(),
            dsn: Dsn(0),
            data_ack: self.rcv.rcv_nxt,
            ack64: self.ack64,
            sent_at: now,
            ts_echo: self.ts_recent[sf],
        }
        .sized(self.ts_len)
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
        let mut p = self.packet(now, sf, flags::ACK, MpOption::Dss);
        p.seq = seg.seq;
        p.payload = seg.len;
        p.dsn = seg.dsn;
        if self.host_queue[sf] {
            let s = self.subflows[sf].as_mut().expect("sending subflow exists");
            let truesize = s.tx_truesize(seg.len as u64);
            s.tsq.charge(now, truesize);
        }
        out.push(p.sized(self.ts_len));
    }

    pub(crate) fn send_ack(&mut self, now: Time, sf: usize, out: &mut Vec<Packet>) {
        let mut p = self.packet(now, sf, flags::ACK, MpOption::Dss);
        let s = self.subflows[sf].as_mut().expect("subflow");
        s.rcv.on_ack_sent();
        s.timers.delack.stop();
        p.ack = s.rcv.rcv_nxt;
        let used = self.ts_len + if self.mptcp { optlen::dss(self.ack64, false) } else { 0 };
        let max_blocks = ((optlen::MAX - used).saturating_sub(2) / 8).min(4) as usize;
        for b in s.rcv.sack_blocks(max_blocks) {
            p.sack.push(p.ack, b);
        }
        self.adv[sf] = (p.wnd, s.rcv.rcv_nxt);
        self.old_space = p.wnd;
        out.push(p.sized(self.ts_len));
    }
}

impl Packet {
    /// Computes `wire_len` from the payload and the options the packet carries.
    fn sized(mut self, ts_len: u32) -> Packet {
        let mut opts = ts_len;
        if self.is(flags::SYN) {
            opts = optlen::SYN_BASE;
        }
        opts += match self.mp {
            MpOption::None => 0,
            MpOption::CapableSyn => optlen::MP_CAPABLE_SYN,
            MpOption::CapableSynAck => optlen::MP_CAPABLE_SYNACK,
            MpOption::CapableAck => optlen::MP_CAPABLE_ACK,
            MpOption::JoinSyn => optlen::MP_JOIN_SYN,
            MpOption::JoinSynAck => optlen::MP_JOIN_SYNACK,
            MpOption::JoinAck => optlen::MP_JOIN_ACK,
            MpOption::Dss => optlen::dss(self.ack64, self.payload > 0),
            MpOption::AddAddr { .. } => optlen::ADD_ADDR,
            MpOption::AddAddrEcho { .. } => optlen::ADD_ADDR_ECHO,
        };
        opts += optlen::sack(self.sack.n as u32);
        self.wire_len = IP_TCP_HEADER + opts + self.payload;
        self
    }
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
            let mut with_sack = ack_pkt;
            with_sack.sack.n = 1;
            assert_eq!(with_sack.sized(client.ts_len).wire_len, ack_sack, "{sizes}: ACK with SACK");
        }
        // Linux's data sender acknowledges with a 32-bit DATA_ACK: 40 + 12 + 8 = 60 B (the
        // kernel's fourth ACK of a join in a download).
        let (_, mut server) = endpoints("linux");
        assert_eq!(server.packet(Time::ZERO, 0, flags::ACK, MpOption::Dss).wire_len, 60);
    }
}
