//! The bytes of a captured frame: Ethernet, IPv4 and TCP headers with their options (MPTCP
//! included), built from a simulated segment, and the identities (keys, tokens, initial
//! sequence numbers, nonces) both ends would have drawn. The encodings and deviations are
//! described in the parent module.

use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};

use crate::net::packet::{flags, MpOption, Packet};
use crate::rng::Rng;

const WSCALE: u32 = 7;
const SERVER_PORT: u16 = 5201;

/// Per-connection identities of both ends ([client, server]): keys and what SHA-256 derives
/// from them (computed once per connection).
#[derive(Clone, Copy, Debug)]
struct ConnIds {
    key: [u64; 2],
    token: [u32; 2],
    idsn: [u64; 2],
}

/// Per-subflow identities: initial sequence numbers and MP_JOIN nonces of both ends.
#[derive(Clone, Copy, Debug)]
struct SubIds {
    isn: [u32; 2],
    nonce: [u32; 2],
}

fn sha256(data: &[u8]) -> [u8; 32] {
    Sha256::digest(data).into()
}

fn hmac256(key: &[u8], msg: &[u8]) -> [u8; 32] {
    let mut m = <Hmac<Sha256> as Mac>::new_from_slice(key).expect("any key length");
    m.update(msg);
    m.finalize().into_bytes().into()
}

/// Token (32 most significant bits) and IDSN (64 least significant bits) of SHA-256(key).
fn token_idsn(key: u64) -> (u32, u64) {
    let h = sha256(&key.to_be_bytes());
    (u32::from_be_bytes(h[0..4].try_into().expect("4")), u64::from_be_bytes(h[24..32].try_into().expect("8")))
}

/// Bytes built in place, without allocation or growth checks: a frame's headers (Ethernet,
/// IPv4, TCP with its options) are far shorter than either capacity used here.
pub(super) struct Scratch<const N: usize> {
    buf: [u8; N],
    len: usize,
}

impl<const N: usize> Scratch<N> {
    fn new() -> Self {
        Scratch { buf: [0; N], len: 0 }
    }
    #[inline]
    fn extend_from_slice(&mut self, b: &[u8]) {
        let end = self.len + b.len();
        self.buf[self.len..end].copy_from_slice(b);
        self.len = end;
    }
    #[inline]
    fn push(&mut self, b: u8) {
        self.buf[self.len] = b;
        self.len += 1;
    }
    fn clear(&mut self) {
        self.len = 0;
    }
}

impl<const N: usize> std::ops::Deref for Scratch<N> {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.buf[..self.len]
    }
}

impl<const N: usize> std::ops::DerefMut for Scratch<N> {
    fn deref_mut(&mut self) -> &mut [u8] {
        &mut self.buf[..self.len]
    }
}

/// `v[i]`, first growing `v` with defaults if needed.
fn slot<T: Default>(v: &mut Vec<T>, i: usize) -> &mut T {
    if v.len() <= i {
        v.resize_with(i + 1, T::default);
    }
    &mut v[i]
}

/// Builds frames for one run: the identities are drawn from the run's seed on first use, and
/// the latest timestamps seen per subflow feed TSecr.
pub(super) struct Framer {
    seed: u64,
    /// By connection, computed on first use.
    ids: Vec<Option<ConnIds>>,
    /// By connection and subflow, drawn on first use.
    subs: Vec<Vec<Option<SubIds>>>,
    /// Latest TSval sent by each end of each subflow (zero before any), by connection,
    /// subflow and sender (`[server, client]`).
    last_tsval: Vec<Vec<[u32; 2]>>,
    pub(super) frame: Scratch<256>,
}

impl Framer {
    pub(super) fn new(seed: u64) -> Framer {
        Framer { seed, ids: Vec::new(), subs: Vec::new(), last_tsval: Vec::new(), frame: Scratch::new() }
    }

    fn ids(&mut self, conn: u32) -> ConnIds {
        let seed = self.seed;
        *slot(&mut self.ids, conn as usize).get_or_insert_with(|| {
            let mut r = Rng::stream(seed, &format!("pcap:conn{conn}"));
            let key = [r.next_u64(), r.next_u64()];
            let (t0, i0) = token_idsn(key[0]);
            let (t1, i1) = token_idsn(key[1]);
            ConnIds { key, token: [t0, t1], idsn: [i0, i1] }
        })
    }

    fn subs(&mut self, conn: u32, subflow: u8) -> SubIds {
        let seed = self.seed;
        *slot(slot(&mut self.subs, conn as usize), subflow as usize).get_or_insert_with(|| {
            let mut r = Rng::stream(seed, &format!("pcap:subflow:{conn}:{subflow}"));
            SubIds {
                isn: [r.next_u64() as u32, r.next_u64() as u32],
                nonce: [r.next_u64() as u32, r.next_u64() as u32],
            }
        })
    }

    /// Serialises `p`'s headers into `self.frame`: Ethernet, IPv4, TCP with options.
    pub(super) fn build(&mut self, p: &Packet, route: usize) {
        let ids = self.ids(p.conn);
        let sub = self.subs(p.conn, p.subflow);
        let from_client = p.to_server;
        let (me, peer) = if from_client { (0, 1) } else { (1, 0) };
        let nonce = sub.nonce;
        let (my_isn, peer_isn) = (sub.isn[me], sub.isn[peer]);
        let cport = 40_000 + 64 * (p.conn as u16 % 300) + p.subflow as u16;
        let (sport, dport) = if from_client { (cport, SERVER_PORT) } else { (SERVER_PORT, cport) };
        let r = (route % 250) as u8;
        let caddr = [10, 1, r, 1];
        let saddr = [10, 2, r, 1];
        let (src, dst) = if from_client { (caddr, saddr) } else { (saddr, caddr) };

        let syn = p.is(flags::SYN);
        let ack_flag = p.is(flags::ACK);
        // Sequence numbers: the SYN takes ISN; data starts at ISN + 1.
        let seq = if syn { my_isn } else { my_isn.wrapping_add(1).wrapping_add(p.seq.0 as u32) };
        let seq = if p.is(flags::PROBE) { seq.wrapping_sub(1) } else { seq };
        let ack = if ack_flag { peer_isn.wrapping_add(1).wrapping_add(p.ack.0 as u32) } else { 0 };

        // TCP options.
        let mut opt = Scratch::<128>::new();
        let tsval = (p.sent_at.0 / 1_000_000) as u32;
        // TSecr echoes the latest TSval this end has seen from its peer on the subflow
        // (RFC 7323 §4.3, approximated by the latest packet sent the other way).
        let seen = slot(slot(&mut self.last_tsval, p.conn as usize), p.subflow as usize);
        seen[usize::from(from_client)] = seen[usize::from(from_client)].max(tsval);
        let tsecr = if syn && !ack_flag { 0 } else { seen[usize::from(!from_client)] };
        if syn {
            opt.extend_from_slice(&[2, 4, 0x05, 0xb4]); // MSS 1460
            opt.extend_from_slice(&[4, 2]); // SACK permitted
            opt.extend_from_slice(&[8, 10]);
            opt.extend_from_slice(&tsval.to_be_bytes());
            opt.extend_from_slice(&tsecr.to_be_bytes());
            opt.extend_from_slice(&[1, 3, 3, WSCALE as u8]); // NOP, window scale
        } else {
            opt.extend_from_slice(&[1, 1, 8, 10]);
            opt.extend_from_slice(&tsval.to_be_bytes());
            opt.extend_from_slice(&tsecr.to_be_bytes());
        }
        let (my_idsn, peer_token, peer_idsn) = (ids.idsn[me], ids.token[peer], ids.idsn[peer]);
        match p.mp {
            MpOption::None => {}
            MpOption::CapableSyn => opt.extend_from_slice(&[30, 4, 0x01, 0x01]),
            MpOption::CapableSynAck => {
                opt.extend_from_slice(&[30, 12, 0x01, 0x01]);
                opt.extend_from_slice(&ids.key[me].to_be_bytes());
            }
            MpOption::CapableAck => {
                opt.extend_from_slice(&[30, 20, 0x01, 0x01]);
                opt.extend_from_slice(&ids.key[me].to_be_bytes());
                opt.extend_from_slice(&ids.key[peer].to_be_bytes());
            }
            MpOption::JoinSyn => {
                opt.extend_from_slice(&[30, 12, 0x10, p.subflow]);
                opt.extend_from_slice(&peer_token.to_be_bytes());
                opt.extend_from_slice(&nonce[me].to_be_bytes());
            }
            MpOption::JoinSynAck => {
                // HMAC(Key-B || Key-A, R-B || R-A), 64 most significant bits (B = responder).
                let mut key = ids.key[me].to_be_bytes().to_vec();
                key.extend_from_slice(&ids.key[peer].to_be_bytes());
                let mut msg = nonce[me].to_be_bytes().to_vec();
                msg.extend_from_slice(&nonce[peer].to_be_bytes());
                let h = hmac256(&key, &msg);
                opt.extend_from_slice(&[30, 16, 0x10, p.subflow]);
                opt.extend_from_slice(&h[..8]);
                opt.extend_from_slice(&nonce[me].to_be_bytes());
            }
            MpOption::JoinAck => {
                // HMAC(Key-A || Key-B, R-A || R-B), 160 most significant bits (A = initiator).
                let mut key = ids.key[me].to_be_bytes().to_vec();
                key.extend_from_slice(&ids.key[peer].to_be_bytes());
                let mut msg = nonce[me].to_be_bytes().to_vec();
                msg.extend_from_slice(&nonce[peer].to_be_bytes());
                let h = hmac256(&key, &msg);
                opt.extend_from_slice(&[30, 24, 0x10, 0]);
                opt.extend_from_slice(&h[..20]);
            }
            MpOption::Dss => {
                let data_ack = peer_idsn.wrapping_add(1).wrapping_add(p.data_ack.0);
                if p.payload > 0 && p.ack64 {
                    opt.extend_from_slice(&[1, 1, 30, 26, 0x20, 0x0f]); // M, m, A, a
                    opt.extend_from_slice(&data_ack.to_be_bytes());
                    opt.extend_from_slice(&my_idsn.wrapping_add(1).wrapping_add(p.dsn.0).to_be_bytes());
                    opt.extend_from_slice(&(p.seq.0 as u32).wrapping_add(1).to_be_bytes());
                    opt.extend_from_slice(&(p.payload as u16).to_be_bytes());
                } else if p.payload > 0 {
                    // 32-bit DATA_ACK, then two NOPs as Linux pads the 22-byte option.
                    opt.extend_from_slice(&[30, 22, 0x20, 0x0d]); // M, m, A
                    opt.extend_from_slice(&(data_ack as u32).to_be_bytes());
                    opt.extend_from_slice(&my_idsn.wrapping_add(1).wrapping_add(p.dsn.0).to_be_bytes());
                    opt.extend_from_slice(&(p.seq.0 as u32).wrapping_add(1).to_be_bytes());
                    opt.extend_from_slice(&(p.payload as u16).to_be_bytes());
                    opt.extend_from_slice(&[1, 1]);
                } else if p.ack64 {
                    opt.extend_from_slice(&[30, 12, 0x20, 0x03]); // A, a
                    opt.extend_from_slice(&data_ack.to_be_bytes());
                } else {
                    opt.extend_from_slice(&[30, 8, 0x20, 0x01]); // A
                    opt.extend_from_slice(&(data_ack as u32).to_be_bytes());
                }
            }
            MpOption::AddAddr { id, route } => {
                // HMAC(Key of the sender || Key of the receiver, ID || address || port 0),
                // rightmost 64 bits (RFC 8684 §3.4.1).
                let addr = [10, 2, route % 250, 1];
                let mut key = ids.key[me].to_be_bytes().to_vec();
                key.extend_from_slice(&ids.key[peer].to_be_bytes());
                let mut msg = vec![id];
                msg.extend_from_slice(&addr);
                msg.extend_from_slice(&[0, 0]);
                let h = hmac256(&key, &msg);
                opt.extend_from_slice(&[30, 16, 0x30, id]);
                opt.extend_from_slice(&addr);
                opt.extend_from_slice(&h[24..]);
            }
            MpOption::AddAddrEcho { id, route } => {
                opt.extend_from_slice(&[30, 8, 0x31, id]);
                opt.extend_from_slice(&[10, 2, route % 250, 1]);
            }
        }
        if p.sack.n > 0 {
            opt.extend_from_slice(&[1, 1, 5, 2 + 8 * p.sack.n]);
            for &(s, e) in &p.sack.blocks(p.ack)[..p.sack.n as usize] {
                opt.extend_from_slice(&peer_isn.wrapping_add(1).wrapping_add(s.0 as u32).to_be_bytes());
                opt.extend_from_slice(&peer_isn.wrapping_add(1).wrapping_add(e.0 as u32).to_be_bytes());
            }
        }
        while !opt.len().is_multiple_of(4) {
            opt.push(1);
        }
        let tcp_len = 20 + opt.len();
        let ip_len = 20 + tcp_len + p.payload as usize;

        let f = &mut self.frame;
        f.clear();
        // Ethernet: locally administered MACs derived from the addresses.
        f.extend_from_slice(&[0x02, 0, dst[0], dst[1], dst[2], dst[3]]);
        f.extend_from_slice(&[0x02, 0, src[0], src[1], src[2], src[3]]);
        f.extend_from_slice(&[0x08, 0x00]);
        // IPv4.
        let ip_start = f.len();
        f.extend_from_slice(&[0x45, 0]);
        f.extend_from_slice(&(ip_len as u16).to_be_bytes());
        f.extend_from_slice(&((p.uid & 0xffff) as u16).to_be_bytes());
        f.extend_from_slice(&[0x40, 0, 64, 6, 0, 0]);
        f.extend_from_slice(&src);
        f.extend_from_slice(&dst);
        let c = checksum(&f[ip_start..ip_start + 20], 0);
        f[ip_start + 10..ip_start + 12].copy_from_slice(&c.to_be_bytes());
        // TCP.
        let tcp_start = f.len();
        f.extend_from_slice(&sport.to_be_bytes());
        f.extend_from_slice(&dport.to_be_bytes());
        f.extend_from_slice(&seq.to_be_bytes());
        f.extend_from_slice(&ack.to_be_bytes());
        let mut fl = 0u8;
        if syn {
            fl |= 0x02;
        }
        if ack_flag {
            fl |= 0x10;
        }
        if p.is(flags::PSH) {
            fl |= 0x08;
        }
        f.extend_from_slice(&[((tcp_len / 4) as u8) << 4, fl]);
        let wnd = if syn { p.wnd.min(65_535) } else { p.wnd.div_ceil(1 << WSCALE).min(65_535) };
        f.extend_from_slice(&(wnd as u16).to_be_bytes());
        f.extend_from_slice(&[0, 0, 0, 0]); // checksum, urgent
        f.extend_from_slice(&opt);
        // The zero payload is not stored (the record writer adds it) and adds nothing to the
        // checksum; its length is in the pseudo-header.
        // Pseudo-header checksum.
        let mut pseudo = [0u8; 12];
        pseudo[0..4].copy_from_slice(&src);
        pseudo[4..8].copy_from_slice(&dst);
        pseudo[9] = 6;
        pseudo[10..12].copy_from_slice(&((tcp_len + p.payload as usize) as u16).to_be_bytes());
        let c = checksum(&f[tcp_start..], sum16(&pseudo));
        f[tcp_start + 16..tcp_start + 18].copy_from_slice(&c.to_be_bytes());
    }
}

/// The sum of `data` as 16-bit big-endian words (an odd last byte padded with zero), folded
/// to at most 0xffff; zero only if every byte is. The words are added in pairs, as 32-bit
/// words, and the end-around carries folded at the end (RFC 1071 §2: the sum may be taken
/// on wider words): the result is the folded 16-bit sum.
fn sum16(data: &[u8]) -> u32 {
    let mut s = 0u64;
    let mut words = data.chunks_exact(4);
    for w in &mut words {
        s += u32::from_be_bytes([w[0], w[1], w[2], w[3]]) as u64;
    }
    let mut pairs = words.remainder().chunks_exact(2);
    for c in &mut pairs {
        s += u16::from_be_bytes([c[0], c[1]]) as u64;
    }
    if let [last] = pairs.remainder() {
        s += (*last as u64) << 8;
    }
    while s > 0xffff {
        s = (s & 0xffff) + (s >> 16);
    }
    s as u32
}

/// RFC 1071 Internet checksum of `data`, starting from the partial sum `init`.
fn checksum(data: &[u8], init: u32) -> u16 {
    let mut s = init + sum16(data);
    while s > 0xffff {
        s = (s & 0xffff) + (s >> 16);
    }
    !(s as u16)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn internet_checksum_matches_rfc1071_example() {
        // RFC 1071 §3: 00 01 f2 03 f4 f5 f6 f7 sums to 0xddf2 (one's complement 0x220d).
        assert_eq!(checksum(&[0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7], 0), 0x220d);
    }

    #[test]
    fn the_checksum_is_the_folded_sum_of_16_bit_words() {
        // Against the definition (RFC 1071 §1), for every length up to 70 and a few starts.
        let mut r = Rng::stream(5, "checksum");
        for len in 0..70 {
            let data: Vec<u8> = (0..len).map(|_| r.below(256) as u8).collect();
            for init in [0, 1, 0xffff, 0x1_2345] {
                let mut s: u64 = init as u64;
                for (i, b) in data.iter().enumerate() {
                    s += if i % 2 == 0 { (*b as u64) << 8 } else { *b as u64 };
                }
                while s > 0xffff {
                    s = (s & 0xffff) + (s >> 16);
                }
                assert_eq!(checksum(&data, init), !(s as u16), "{len} bytes from {init}");
            }
        }
    }

    #[test]
    fn token_and_idsn_come_from_sha256_of_the_key() {
        let (token, idsn) = token_idsn(0x0102_0304_0506_0708);
        let h = sha256(&0x0102_0304_0506_0708u64.to_be_bytes());
        assert_eq!(token, u32::from_be_bytes([h[0], h[1], h[2], h[3]]));
        assert_eq!(idsn, u64::from_be_bytes(h[24..32].try_into().unwrap()));
    }
}
