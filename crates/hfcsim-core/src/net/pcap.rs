//! Packet captures (`hfcsim run --pcap FILE`): the engine's packets as the frames a capture on
//! the server and on the PCs' LAN would show, written as pcapng for Wireshark and tshark
//! (STYLE.md item 17).
//!
//! The engine only records (`tap`: time, packet, sent or delivered, its SACK blocks); this file
//! turns the model's fields into header bytes and `write_pcapng` writes them with the
//! `pcap-file` crate. Two interfaces (capture points):
//!
//! - 0 `server`: what the server host sends and receives, 198.18.0.1, TCP port 5001;
//! - 1 `modem-lan`: what the PCs behind the cable modems send and receive; the PC behind modem
//!   `m` is 198.19.((m + 1) / 256).((m + 1) % 256), flow `f`'s port 40000 + f;
//! - 2 `docsis-upstream`, with a DOCSIS upstream only (`upstream.mac = "docsis"`; 802.14 has no
//!   capture format Wireshark dissects): each burst as the CMTS receives it, link type 143
//!   (LINKTYPE_DOCSIS): a Request frame for a request in contention, else the packet as a
//!   DOCSIS Packet PDU (its Ethernet frame and FCS), several as one Concatenation, a piggybacked
//!   request as a Request extended-header element on the (first) frame. Modem `m`'s SID is m + 1.
//!
//! What is synthesised, since the model does not carry it: MAC addresses (locally administered,
//! one per host, as if the modem bridged the PC to the server), the IP ID (a counter per host),
//! TTL 64 everywhere, each side's ISN, payload bytes (zeros, cut off by the snap length), the
//! TSval clock (the host's send time in ms) and window fields scaled from the model's bytes. The
//! model has no FIN (a flow ends when its last byte is acknowledged), so no capture shows one.
//! Background traffic inside the MAC and cells are not packets of a flow and are not captured.

use crate::access::UpBurst;
use crate::packet::{tcp_flags, Ecn, Kind, Packet, Way};
use crate::scenario::{Direction, Scenario};
use crate::tcp::linux_window::LinuxWindow;
use crate::tcp::receiver::SackBlocks;
use crate::tcp::{round_buffer, TIMESTAMP_OPTION_BYTES};
use crate::time::SimTime;
use std::collections::{HashMap, VecDeque};
use std::io::Write;

/// One packet seen at an endpoint: sent by it (`sent`) or delivered to it, at `t`.
#[derive(Clone, Copy, Debug)]
pub struct Captured {
    pub t: SimTime,
    pub pkt: Packet,
    pub sent: bool,
    /// The ACK's SACK blocks (relative sequence numbers), copied when it was recorded.
    pub sack: SackBlocks,
}

/// Record `pkt` (sim.rs `World::tap`). Cold: it runs only with a capture on.
#[cold]
#[inline(never)]
pub fn tap(into: &mut Vec<Captured>, t: SimTime, pkt: &Packet, sent: bool, sacks: &[SackBlocks]) {
    let sack = match pkt.kind {
        Kind::Ack { sack, .. } if sack != 0 => sacks[(sack - 1) as usize],
        _ => SackBlocks::default(),
    };
    into.push(Captured { t, pkt: *pkt, sent, sack });
}

/// One DOCSIS upstream burst as the headend received it, at `t` (its end), on channel `channel`
/// from modem `station`: a Request frame when `pkts` is empty (in contention, or piggybacked on a
/// burst carrying no packet of an endpoint), else the packets it carried and the request
/// piggybacked on them, if any.
#[derive(Clone, Debug)]
pub struct UpCaptured {
    pub t: SimTime,
    pub channel: u32,
    pub station: u32,
    /// Minislots requested.
    pub request: Option<u32>,
    pub pkts: Vec<Captured>,
}

/// Record burst `b` of channel `channel` (sim.rs `World::tap_bursts`), its ACKs' SACK blocks
/// copied while they are in flight. Cold: it runs only with a capture on.
#[cold]
#[inline(never)]
pub fn tap_burst(channel: u32, b: &UpBurst<Packet>, sacks: &[SackBlocks]) -> UpCaptured {
    let mut pkts = Vec::with_capacity(b.packets.len());
    for p in &b.packets {
        tap(&mut pkts, b.at, p, true, sacks);
    }
    UpCaptured { t: b.at, channel, station: b.station, request: b.request, pkts }
}

/// The server's TCP port (every flow's; Nguyen & Armitage's nttcp and iperf listen on one).
pub const SERVER_PORT: u16 = 5001;
/// Flow `f`'s port on the PC: 40000 + f.
pub const CLIENT_PORT_BASE: u16 = 40_000;
/// Modems with an address: the PC behind modem m is 198.19.0.0 + m + 1, below 198.19.255.255.
pub const MAX_MODEMS: u32 = 65_534;

const ETH_HEADER: usize = 14;
const IP_HEADER: usize = 20;
const TCP_HEADER: usize = 20;
const ICMP_HEADER: usize = 8;
/// Capture length without payload: Ethernet, IP and the largest TCP header (RFC 9293 3.1: data
/// offset <= 15 words).
const HEADERS_SNAP: u32 = (ETH_HEADER + IP_HEADER + 60) as u32;

/// A capture's input can be refused before the run: one line naming the key.
pub fn check(sc: &Scenario) -> Result<(), String> {
    let max_flows = (u16::MAX - CLIENT_PORT_BASE) as usize + 1;
    if sc.flows.len() > max_flows {
        return Err(format!("--pcap: {} flows, at most {max_flows} get a port (40000 + flow)", sc.flows.len()));
    }
    let modems = sc.flows.iter().map(|f| (f.modem, "flows")).chain(sc.pings.iter().map(|p| (p.modem, "pings")));
    for (i, (m, what)) in modems.enumerate() {
        if m >= MAX_MODEMS {
            let i = if what == "flows" { i } else { i - sc.flows.len() };
            return Err(format!("--pcap: {what}.{i}.modem = {m}: only modems below {MAX_MODEMS} get an address"));
        }
    }
    Ok(())
}

/// RFC 1071: the 16-bit ones' complement of the ones' complement sum, continued from `sum`
/// (a partial sum, e.g. of a pseudo-header). An odd last byte is padded with zero.
pub fn checksum(data: &[u8], mut sum: u32) -> u16 {
    let mut chunks = data.chunks_exact(2);
    for c in &mut chunks {
        sum += u32::from(u16::from_be_bytes([c[0], c[1]]));
    }
    if let [last] = chunks.remainder() {
        sum += u32::from(*last) << 8;
    }
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// CRC-16 of ITU-T X.25 (2.2.7.4, HDLC's frame check sequence): generator x^16 + x^12 + x^5 + 1,
/// register preset to ones, bits taken least significant first, the remainder complemented. The
/// DOCSIS MAC header's HCS is this CRC-CCITT over the header before it (DOCSIS RFI 1.1 8.2.1.4,
/// MULPI 3.0 6.2.1.4), sent low byte first as X.25 sends its FCS.
pub fn crc16_x25(data: &[u8]) -> u16 {
    // 0x8408: the generator 0x1021 with its bits reversed (least significant first).
    !(crc_reflected(data, 0x8408, 0xffff) as u16)
}

/// IEEE 802.3 3.2.9's frame check sequence: CRC-32 with generator 0x04C11DB7, register preset
/// to ones, bits least significant first, the remainder complemented; sent low byte first.
pub fn crc32_ieee(data: &[u8]) -> u32 {
    // 0xEDB88320: the generator with its bits reversed.
    !crc_reflected(data, 0xedb8_8320, 0xffff_ffff)
}

/// A CRC taken least significant bit first (both of the above): `reversed` is the generator with
/// its bits reversed, `preset` the register's start; the remainder, not yet complemented.
fn crc_reflected(data: &[u8], reversed: u32, preset: u32) -> u32 {
    let mut crc = preset;
    for &b in data {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 != 0 { (crc >> 1) ^ reversed } else { crc >> 1 };
        }
    }
    crc
}

// DOCSIS MAC frame control (RFI 1.1 8.2.1.1-8.2.1.2, MULPI 3.0 6.2.1.1: FC = FC_TYPE (2 bits),
// FC_PARM (5 bits), EHDR_ON (1 bit)).
/// FC_TYPE 00, Packet PDU; FC_PARM 00000.
const FC_PACKET_PDU: u8 = 0x00;
/// FC_TYPE 11 (MAC-specific), FC_PARM 00010: Request frame (RFI 1.1 8.2.5.3).
const FC_REQUEST: u8 = (0b11 << 6) | (0b00010 << 1);
/// FC_TYPE 11, FC_PARM 11100: Concatenation header (RFI 1.1 8.2.5.5).
const FC_CONCATENATION: u8 = (0b11 << 6) | (0b11100 << 1);
/// Extended header element type 1: Request (RFI 1.1 Table 8-13: minislots, then SID).
const EH_REQUEST: u8 = 1;

/// Modem `station`'s SID: its number + 1 (SIDs are 14 bits, 0 is none; chosen, as a CMTS numbers
/// modems in the order they range).
fn sid(station: u32) -> u16 {
    ((station + 1) & 0x3fff) as u16
}

/// A DOCSIS MAC header (RFI 1.1 8.2.1, Figure 8-4): FC (with EHDR_ON when `ehdr` is not empty),
/// MAC_PARM, LEN (or the SID of a Request frame), the extended header, HCS over all of them.
fn docsis_header(out: &mut Vec<u8>, fc: u8, mac_parm: u8, len_or_sid: u16, ehdr: &[u8]) {
    let start = out.len();
    out.push(fc | u8::from(!ehdr.is_empty()));
    out.push(mac_parm);
    out.extend_from_slice(&len_or_sid.to_be_bytes());
    out.extend_from_slice(ehdr);
    let hcs = crc16_x25(&out[start..]);
    out.extend_from_slice(&hcs.to_le_bytes());
}

/// A Request frame (RFI 1.1 8.2.5.3): MAC_PARM = minislots requested, the SID in LEN's place, no
/// payload.
fn request_frame(out: &mut Vec<u8>, minislots: u32, sid: u16) {
    docsis_header(out, FC_REQUEST, minislots.min(255) as u8, sid, &[]);
}

/// A Packet PDU (RFI 1.1 8.2.2): the Ethernet frame `eth` (with its FCS) after a header whose
/// MAC_PARM is the extended header's length and whose LEN counts the extended header and `eth`.
fn packet_pdu(out: &mut Vec<u8>, eth: &[u8], ehdr: &[u8]) {
    let len = (ehdr.len() + eth.len()).min(65_535) as u16;
    docsis_header(out, FC_PACKET_PDU, ehdr.len() as u8, len, ehdr);
    out.extend_from_slice(eth);
}

/// The Request extended-header element (RFI 1.1 Table 8-13): EH_TYPE 1, EH_LEN 3, minislots
/// requested (one byte), SID (two).
fn request_eh(minislots: u32, sid: u16) -> [u8; 4] {
    let [hi, lo] = sid.to_be_bytes();
    [(EH_REQUEST << 4) | 3, minislots.min(255) as u8, hi, lo]
}

/// RFC 9293 3.1: the TCP checksum's pseudo-header (source, destination, zero, protocol 6, TCP
/// length), summed but not folded.
fn pseudo_sum(src: [u8; 4], dst: [u8; 4], proto: u8, len: u32) -> u32 {
    let mut sum = 0u32;
    for a in [src, dst] {
        sum += u32::from(u16::from_be_bytes([a[0], a[1]])) + u32::from(u16::from_be_bytes([a[2], a[3]]));
    }
    sum + u32::from(proto) + (len >> 16) + (len & 0xffff)
}

/// A host: the server, or the PC behind modem m.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Host {
    Server,
    Pc(u32),
}

impl Host {
    fn addr(self) -> [u8; 4] {
        match self {
            Host::Server => [198, 18, 0, 1],
            Host::Pc(m) => {
                let n = m + 1;
                [198, 19, (n >> 8) as u8, n as u8]
            }
        }
    }

    /// Locally administered unicast (IEEE 802: second bit of the first octet set).
    fn mac(self) -> [u8; 6] {
        match self {
            Host::Server => [0x02, 0, 0, 0, 0, 1],
            Host::Pc(m) => {
                let n = m + 1;
                [0x02, 0, 1, (n >> 16) as u8, (n >> 8) as u8, n as u8]
            }
        }
    }

    /// Interface (capture point) id.
    fn iface(self) -> u32 {
        match self {
            Host::Server => 0,
            Host::Pc(_) => 1,
        }
    }

    fn index(self) -> usize {
        match self {
            Host::Server => 0,
            Host::Pc(m) => 1 + m as usize,
        }
    }
}

/// An IPv4 header (RFC 791 3.1): version 4, IHL 5, the TOS byte the DSCP (RFC 2474 Sec. 3: its high
/// six bits) and the ECN field (RFC 3168 Sec. 5: its low two), DF, TTL 64, checksum over the header.
#[allow(clippy::too_many_arguments)]
fn ipv4_header(out: &mut Vec<u8>, total_len: u16, id: u16, proto: u8, src: [u8; 4], dst: [u8; 4], dscp: u8, ecn: Ecn) {
    let start = out.len();
    out.extend_from_slice(&[0x45, (dscp << 2) | ecn as u8]);
    out.extend_from_slice(&total_len.to_be_bytes());
    out.extend_from_slice(&id.to_be_bytes());
    out.extend_from_slice(&0x4000u16.to_be_bytes()); // flags: DF; fragment offset 0
    out.extend_from_slice(&[64, proto, 0, 0]);
    out.extend_from_slice(&src);
    out.extend_from_slice(&dst);
    let c = checksum(&out[start..], 0);
    out[start + 10..start + 12].copy_from_slice(&c.to_be_bytes());
}

/// An AQM on the way may have marked the packet CE (RFC 3168 Sec. 5): the Ethernet frame's IP
/// header gets the packet's ECN field, and its checksum made anew.
fn set_ecn(frame: &mut [u8], ecn: Ecn) {
    let ip = ETH_HEADER;
    if frame.len() >= ip + IP_HEADER && frame[ip + 1] & 0b11 != ecn as u8 {
        frame[ip + 1] = (frame[ip + 1] & !0b11) | ecn as u8;
        frame[ip + 10..ip + 12].copy_from_slice(&[0, 0]);
        let sum = checksum(&frame[ip..ip + IP_HEADER], 0);
        frame[ip + 10..ip + 12].copy_from_slice(&sum.to_be_bytes());
    }
}

/// DSCP 45, Non-Queue-Building (RFC 9956 Sec. 4.1).
const DSCP_NQB: u8 = 45;

// TCP option kinds (RFC 9293 3.2, RFC 7323 2.2 and 3.2, RFC 2018 2 and 3).
const OPT_NOP: u8 = 1;
const OPT_MSS: u8 = 2;
const OPT_WS: u8 = 3;
const OPT_SACK_PERMITTED: u8 = 4;
const OPT_SACK: u8 = 5;
const OPT_TIMESTAMPS: u8 = 8;

/// The options of a SYN or SYN-ACK, in Linux's order (tcp_options_write): MSS; SACK-permitted
/// and timestamps; NOP and window scale. 20 bytes with everything on.
pub fn syn_options(mss: u16, sack: bool, ts: Option<(u32, u32)>, wscale: Option<u8>) -> Vec<u8> {
    let mut o = vec![OPT_MSS, 4];
    o.extend_from_slice(&mss.to_be_bytes());
    match (sack, ts) {
        (true, Some(ts)) => {
            o.extend_from_slice(&[OPT_SACK_PERMITTED, 2]);
            push_ts(&mut o, ts);
        }
        (false, Some(ts)) => {
            o.extend_from_slice(&[OPT_NOP, OPT_NOP]);
            push_ts(&mut o, ts);
        }
        (true, None) => o.extend_from_slice(&[OPT_NOP, OPT_NOP, OPT_SACK_PERMITTED, 2]),
        (false, None) => {}
    }
    if let Some(shift) = wscale {
        o.extend_from_slice(&[OPT_NOP, OPT_WS, 3, shift]);
    }
    o
}

/// RFC 7323 3.2: kind 8, length 10, TSval, TSecr.
fn push_ts(o: &mut Vec<u8>, (tsval, tsecr): (u32, u32)) {
    o.extend_from_slice(&[OPT_TIMESTAMPS, 10]);
    o.extend_from_slice(&tsval.to_be_bytes());
    o.extend_from_slice(&tsecr.to_be_bytes());
}

/// The options of a segment after the SYNs: NOP NOP timestamps (12 bytes, RFC 7323 Appendix A's
/// layout), then NOP NOP SACK with its blocks as absolute sequence numbers (RFC 2018 3), `isn`
/// the data sender's ISN.
pub fn segment_options(ts: Option<(u32, u32)>, sack: &SackBlocks, isn: u32) -> Vec<u8> {
    let mut o = Vec::with_capacity(40);
    if let Some(ts) = ts {
        o.extend_from_slice(&[OPT_NOP, OPT_NOP]);
        push_ts(&mut o, ts);
    }
    if !sack.is_empty() {
        o.extend_from_slice(&[OPT_NOP, OPT_NOP, OPT_SACK, 2 + 8 * sack.n]);
        for &(left, right) in sack.as_slice() {
            o.extend_from_slice(&data_seq(isn, left).to_be_bytes());
            o.extend_from_slice(&data_seq(isn, right).to_be_bytes());
        }
    }
    o
}

/// The wire sequence number of data byte `off` (RFC 9293 3.4: the SYN takes ISN, data starts at
/// ISN + 1), modulo 2^32.
fn data_seq(isn: u32, off: u64) -> u32 {
    isn.wrapping_add(1).wrapping_add(off as u32)
}

/// One TCP segment's header fields.
struct Segment<'a> {
    src_port: u16,
    dst_port: u16,
    seq: u32,
    /// The ACK flag and acknowledgment number (none on the first SYN).
    ack: Option<u32>,
    syn: bool,
    window: u16,
    options: &'a [u8],
    /// The TCP header's length the model's packet size leaves (header + options), if it holds
    /// the options: the options are padded to it with NOPs.
    header_len: usize,
    payload_len: u32,
    /// ECE and CWR (RFC 3168 Sec. 6.1: both on an ECN-setup SYN, ECE on its SYN-ACK), and PSH where
    /// the sender marks it (tcp/push.rs).
    ecn_flags: u8,
}

/// A TCP header (RFC 9293 3.1) with its checksum over the pseudo-header, the header and a payload
/// of zeros (which add nothing to the sum).
fn tcp_header(out: &mut Vec<u8>, s: &Segment, src: [u8; 4], dst: [u8; 4]) {
    let start = out.len();
    out.extend_from_slice(&s.src_port.to_be_bytes());
    out.extend_from_slice(&s.dst_port.to_be_bytes());
    out.extend_from_slice(&s.seq.to_be_bytes());
    out.extend_from_slice(&s.ack.unwrap_or(0).to_be_bytes());
    let words = (s.header_len / 4) as u8;
    let flags = if s.syn { 0x02 } else { 0 } | if s.ack.is_some() { 0x10 } else { 0 } | s.ecn_flags;
    out.extend_from_slice(&[words << 4, flags]);
    out.extend_from_slice(&s.window.to_be_bytes());
    // Checksum (filled in below) and urgent pointer.
    out.extend_from_slice(&[0, 0, 0, 0]);
    // Padding before the options keeps each option's alignment as the stack lays them out.
    out.extend(std::iter::repeat_n(OPT_NOP, s.header_len - TCP_HEADER - s.options.len()));
    out.extend_from_slice(s.options);
    let len = (s.header_len as u32) + s.payload_len;
    let c = checksum(&out[start..], pseudo_sum(src, dst, 6, len));
    out[start + 16..start + 18].copy_from_slice(&c.to_be_bytes());
}

/// The TCP header length for a packet of `size` IP bytes with `payload` data bytes: the model's,
/// when it holds `options` in whole 32-bit words (RFC 9293 3.1: data offset), else the least
/// that holds them (then the frame is longer or shorter than the model's packet).
fn header_len(size: u32, payload: u32, options: usize) -> usize {
    let least = TCP_HEADER + options.div_ceil(4) * 4;
    let model = (size as i64) - (IP_HEADER as i64) - i64::from(payload);
    match usize::try_from(model) {
        Ok(m) if m >= least && m <= 60 && m % 4 == 0 => m,
        _ => least,
    }
}

/// RFC 7323 2.3: the smallest shift that lets a window field hold `buffer`, at most 14.
pub fn window_shift(buffer: u64) -> u8 {
    let mut s = 0u8;
    while s < 14 && (buffer >> s) > 65_535 {
        s += 1;
    }
    s
}

/// What the writer needs of the scenario, per flow and per host.
struct Ctx {
    flows: usize,
    /// Per endpoint (flows, then pings): (data sender, data receiver); a ping's "sender" is the
    /// PC that sends the echo requests.
    ends: Vec<(Host, Host)>,
    mss_option: u16,
    sack: bool,
    timestamps: bool,
    /// RFC 7323: the shift both sides advertise, when window scaling is on.
    wscale: Option<u8>,
    /// The receive buffer (rounded as the engine rounds it): the window a side with nothing to
    /// receive advertises, and the SYNs' window.
    buffer: u64,
    snap_payload: u32,
}

impl Ctx {
    fn new(sc: &Scenario, snap_payload: u32) -> Ctx {
        let tcp = &sc.tcp;
        // As sim.rs World::build: the MSS less the timestamps option, buffers in whole segments.
        let option_bytes = if tcp.timestamps { TIMESTAMP_OPTION_BYTES } else { 0 };
        let mss =
            u64::from(tcp.mss_bytes - option_bytes).min(tcp.send_buffer_bytes).min(sc.receiver.receive_buffer_bytes);
        let (_, buffer) = round_buffer(mss, sc.receiver.receive_buffer_bytes, tcp.buffer_rounding);
        // receiver.linux_window: the SYNs' window and scale are Linux's (tcp_select_initial_window).
        let linux = sc.receiver.linux_window.then(|| {
            LinuxWindow::new(
                sc.receiver.receive_buffer_bytes,
                mss,
                mss + u64::from(option_bytes),
                u64::from(sc.receiver.skb_truesize_bytes),
                tcp.window_scaling,
            )
        });
        let buffer = linux.map_or(buffer, |w| w.rcv_wnd);
        let mut ends: Vec<(Host, Host)> = sc
            .flows
            .iter()
            .map(|f| match f.direction {
                Direction::Down => (Host::Server, Host::Pc(f.modem)),
                Direction::Up => (Host::Pc(f.modem), Host::Server),
            })
            .collect();
        // sim.rs ping_tick: the PC sends the request (forward), the server replies (reverse).
        ends.extend(sc.pings.iter().map(|p| (Host::Pc(p.modem), Host::Server)));
        Ctx {
            flows: sc.flows.len(),
            ends,
            // RFC 6691: the MSS option counts no TCP options; the model's tcp.mss_bytes includes
            // the 12 timestamp bytes each data segment carries.
            mss_option: tcp.mss_bytes.min(65_535) as u16,
            sack: tcp.sack,
            timestamps: tcp.timestamps,
            wscale: tcp.window_scaling.then(|| linux.map_or_else(|| window_shift(buffer), |w| w.wscale as u8)),
            buffer,
            snap_payload,
        }
    }

    /// The ISN of flow `f`'s data sender and receiver: apart, so that tshark's relative numbers
    /// are what the model counts (RFC 9293 3.4.1 asks for a clock; a capture needs only distinct).
    fn isns(f: u32) -> (u32, u32) {
        let base = f.wrapping_mul(0x0100_0000);
        (base.wrapping_add(1_000), base.wrapping_add(0x0080_0000))
    }

    fn ports(f: u32) -> (u16, u16) {
        (SERVER_PORT, CLIENT_PORT_BASE + f as u16)
    }

    /// A window field (RFC 7323 2.2-2.3): scaled down unless on a SYN, else clamped.
    fn window(&self, bytes: u64, syn: bool) -> u16 {
        match self.wscale {
            Some(s) if !syn => (bytes >> s).min(65_535) as u16,
            _ => bytes.min(65_535) as u16,
        }
    }
}

/// The stamp of a sent packet, kept until it is delivered, so that both captures show one frame.
struct Sent {
    frame: Vec<u8>,
    orig_len: u32,
    tsval: u32,
}

/// Key matching a delivery to its send: endpoint, direction, kind and SACK blocks.
type Key = (u32, bool, u8, u64, u64, u32, [(u64, u64); crate::tcp::receiver::MAX_SACK_BLOCKS]);

fn key(c: &Captured) -> Key {
    let (tag, a, b, d) = match c.pkt.kind {
        Kind::Syn => (0, 0, 0, 0),
        Kind::SynAck => (1, 0, 0, 0),
        Kind::Data { seq, len, pkt_no } => (2, seq, u64::from(len), pkt_no),
        Kind::Ack { ack, wnd, .. } => (3, ack, u64::from(wnd), 0),
        Kind::Echo { seq, .. } => (4, u64::from(seq), 0, 0),
        Kind::Raw { id } => (5, u64::from(id), 0, 0),
    };
    (c.pkt.flow, c.pkt.way == Way::Forward, tag, a, b, d, c.sack.blocks)
}

/// What `write_pcapng` wrote.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Written {
    pub packets: u64,
    /// Packets (counted once, as sent) whose IP length is not the model's packet size: SYNs whose
    /// options the model does not count, headers too small for their options (`tcp.header_bytes`
    /// < 40), pings < 28 B.
    pub resized: u64,
    /// Of `packets`, DOCSIS frames on the `docsis-upstream` interface.
    pub docsis_frames: u64,
}

/// The DOCSIS frame of one upstream burst from modem `station` carrying the Ethernet frames `eths`
/// (each with its FCS): a Request frame when there are none, else a Packet PDU, or a Concatenation
/// of them (RFI 1.1 8.2.5.5: MAC_PARM = the frames' count, LEN = their bytes); a piggybacked
/// request rides the first frame as a Request EH element.
pub fn docsis_burst(station: u32, request: Option<u32>, eths: &[Vec<u8>]) -> Vec<u8> {
    let sid = sid(station);
    let mut out = Vec::new();
    if eths.is_empty() {
        request_frame(&mut out, request.unwrap_or(0), sid);
        return out;
    }
    let eh = request.map(|m| request_eh(m, sid));
    let mut frames = Vec::new();
    for (i, eth) in eths.iter().enumerate() {
        let ehdr: &[u8] = match (i, &eh) {
            (0, Some(e)) => e,
            _ => &[],
        };
        packet_pdu(&mut frames, eth, ehdr);
    }
    if eths.len() == 1 {
        return frames;
    }
    let count = eths.len().min(255) as u8;
    docsis_header(&mut out, FC_CONCATENATION, count, frames.len().min(65_535) as u16, &[]);
    out.extend_from_slice(&frames);
    out
}

/// Per-capture state while writing.
struct Writer {
    ctx: Ctx,
    ip_id: HashMap<usize, u16>,
    /// Per endpoint: the last TSval each side received from the other (RFC 7323 4.3's
    /// TS.Recent, simplified to the latest), [data sender, data receiver].
    ts_recent: Vec<[u32; 2]>,
    in_flight: HashMap<Key, VecDeque<Sent>>,
    resized: u64,
}

impl Writer {
    fn next_id(&mut self, h: Host) -> u16 {
        let id = self.ip_id.entry(h.index()).or_insert(0);
        *id = id.wrapping_add(1);
        *id
    }

    /// The frame of packet `c`, sent now by its source.
    fn build(&mut self, c: &Captured) -> Sent {
        let f = c.pkt.flow;
        let (snd, rcv) = self.ctx.ends[f as usize];
        let (src, dst) = match c.pkt.way {
            Way::Forward => (snd, rcv),
            Way::Reverse => (rcv, snd),
        };
        // RFC 7323 5.4: a clock of 1 ms, here the simulated time.
        let tsval = (c.t.0 / 1_000_000) as u32;
        let id = self.next_id(src);
        let mut out = Vec::with_capacity(96);
        out.extend_from_slice(&dst.mac());
        out.extend_from_slice(&src.mac());
        out.extend_from_slice(&0x0800u16.to_be_bytes()); // Ethernet II: IPv4
        let size = c.pkt.size;
        let ip_len;
        if let Kind::Echo { seq, nqb } = c.pkt.kind {
            // RFC 792: echo request (type 8) from the PC, echo reply (type 0) from the server;
            // identifier = the ping's number, sequence = the echo's.
            ip_len = size.max((IP_HEADER + ICMP_HEADER) as u32);
            let dscp = if nqb { DSCP_NQB } else { 0 };
            ipv4_header(&mut out, ip_len as u16, id, 1, src.addr(), dst.addr(), dscp, c.pkt.ecn);
            let start = out.len();
            let ty = if c.pkt.way == Way::Forward { 8 } else { 0 };
            out.extend_from_slice(&[ty, 0, 0, 0]);
            out.extend_from_slice(&((f as usize - self.ctx.flows) as u16).to_be_bytes());
            out.extend_from_slice(&(seq as u16).to_be_bytes());
            let payload = ip_len as usize - IP_HEADER - ICMP_HEADER;
            out.extend(std::iter::repeat_n(0, payload.min(self.ctx.snap_payload as usize)));
            let cs = checksum(&out[start..], 0); // zero payload bytes left out add nothing
            out[start + 2..start + 4].copy_from_slice(&cs.to_be_bytes());
        } else {
            let (snd_isn, rcv_isn) = Ctx::isns(f);
            let (server_port, client_port) = Ctx::ports(f);
            let (src_port, dst_port) =
                if src == Host::Server { (server_port, client_port) } else { (client_port, server_port) };
            let forward = c.pkt.way == Way::Forward;
            let side = usize::from(!forward);
            let (my_isn, peer_isn) = if forward { (snd_isn, rcv_isn) } else { (rcv_isn, snd_isn) };
            let first_syn = matches!(c.pkt.kind, Kind::Syn);
            // RFC 7323 3.2: TSecr is valid only with ACK set; zero on the first SYN.
            let tsecr = if first_syn { 0 } else { self.ts_recent[f as usize][side] };
            let ts = self.ctx.timestamps.then_some((tsval, tsecr));
            let (seq, ack, syn, window, options, payload) = match c.pkt.kind {
                Kind::Syn | Kind::SynAck => {
                    let o = syn_options(self.ctx.mss_option, self.ctx.sack, ts, self.ctx.wscale);
                    let ack = (!first_syn).then(|| peer_isn.wrapping_add(1));
                    (my_isn, ack, true, self.ctx.window(self.ctx.buffer, true), o, 0)
                }
                Kind::Data { seq, len, .. } => {
                    let o = segment_options(ts, &SackBlocks::default(), snd_isn);
                    // The data receiver sends no data: its next byte stays ISN + 1.
                    let w = self.ctx.window(self.ctx.buffer, false);
                    (data_seq(snd_isn, seq), Some(rcv_isn.wrapping_add(1)), false, w, o, len)
                }
                Kind::Ack { ack, wnd, .. } => {
                    let o = segment_options(ts, &c.sack, snd_isn);
                    let w = self.ctx.window(u64::from(wnd), false);
                    (rcv_isn.wrapping_add(1), Some(data_seq(snd_isn, ack)), false, w, o, 0)
                }
                // Echoes took the ICMP branch; real packets (the emulator's) are never captured here.
                Kind::Echo { .. } | Kind::Raw { .. } => unreachable!(),
            };
            let hl = header_len(size, payload, options.len());
            ip_len = (IP_HEADER + hl) as u32 + payload;
            ipv4_header(&mut out, ip_len.min(65_535) as u16, id, 6, src.addr(), dst.addr(), 0, c.pkt.ecn);
            let seg = Segment {
                src_port,
                dst_port,
                seq,
                ack,
                syn,
                window,
                options: &options,
                header_len: hl,
                payload_len: payload,
                ecn_flags: c.pkt.flags & (tcp_flags::ECE | tcp_flags::CWR | tcp_flags::PSH),
            };
            tcp_header(&mut out, &seg, src.addr(), dst.addr());
            out.extend(std::iter::repeat_n(0, payload.min(self.ctx.snap_payload) as usize));
        }
        if ip_len != size {
            self.resized += 1;
        }
        Sent { frame: out, orig_len: ETH_HEADER as u32 + ip_len, tsval }
    }

    /// The Ethernet frame of packet `c` with its FCS (IEEE 802.3 3.2.9), as a DOCSIS Packet PDU
    /// carries it: the bytes the PC sent (the frame still in flight, else built), the payload's
    /// zeros in full.
    fn ethernet_with_fcs(&mut self, c: &Captured) -> Vec<u8> {
        let held = self.in_flight.get(&key(c)).and_then(VecDeque::front);
        let (mut f, len) = match held {
            Some(s) => (s.frame.clone(), s.orig_len),
            None => {
                let s = self.build(c);
                (s.frame, s.orig_len)
            }
        };
        f.resize(len as usize, 0);
        set_ecn(&mut f, c.pkt.ecn); // the modem's queue may have marked it
        let fcs = crc32_ieee(&f);
        f.extend_from_slice(&fcs.to_le_bytes());
        f
    }

    /// The DOCSIS frame of burst `u`: a Request frame, a Packet PDU, or a Concatenation of
    /// them (RFI 1.1 8.2.5.5: MAC_PARM = the frames' count, LEN = their bytes); a piggybacked
    /// request rides the first frame as a Request EH element.
    fn docsis_frame(&mut self, u: &UpCaptured) -> Vec<u8> {
        let eths: Vec<Vec<u8>> = u.pkts.iter().map(|c| self.ethernet_with_fcs(c)).collect();
        docsis_burst(u.station, u.request, &eths)
    }

    /// The frame to write for record `c`: built when sent, the same bytes when delivered.
    fn frame(&mut self, c: &Captured) -> (u32, Sent) {
        let (snd, rcv) = self.ctx.ends[c.pkt.flow as usize];
        let forward = c.pkt.way == Way::Forward;
        if c.sent {
            let s = self.build(c);
            let copy = Sent { frame: s.frame.clone(), orig_len: s.orig_len, tsval: s.tsval };
            self.in_flight.entry(key(c)).or_default().push_back(copy);
            return (if forward { snd } else { rcv }.iface(), s);
        }
        let mut s = match self.in_flight.get_mut(&key(c)).and_then(VecDeque::pop_front) {
            Some(s) => s,
            None => self.build(c), // a delivery never sent cannot happen; stay total anyway
        };
        set_ecn(&mut s.frame, c.pkt.ecn);
        if self.ctx.timestamps && (c.pkt.flow as usize) < self.ctx.flows {
            // The receiving side remembers the peer's TSval (RFC 7323 4.3).
            self.ts_recent[c.pkt.flow as usize][usize::from(forward)] = s.tsval;
        }
        (if forward { rcv } else { snd }.iface(), s)
    }
}

/// Write `records` (a run's `Output::capture`, in time order) as pcapng to `out`, each frame cut
/// to its headers plus at most `snap_payload` payload bytes (the original length stays the true
/// one). Timestamps are the simulated nanoseconds (if_tsresol = 9), never the wall clock. Pass
/// `&mut file` to keep the writer (to sync it).
///
/// `bursts` (a run's `Output::bursts`, with a DOCSIS upstream) adds interface 2,
/// `docsis-upstream`, each burst whole at its time.
pub fn write_pcapng<W: Write>(
    sc: &Scenario,
    records: &[Captured],
    bursts: Option<&[UpCaptured]>,
    snap_payload: u32,
    out: W,
) -> std::io::Result<Written> {
    write_blocks(sc, records, bursts, snap_payload, out).map_err(|e| match e {
        pcap_file::PcapError::IoError(e) => e,
        e => std::io::Error::other(e.to_string()),
    })
}

fn write_blocks<W: Write>(
    sc: &Scenario,
    records: &[Captured],
    bursts: Option<&[UpCaptured]>,
    snap_payload: u32,
    out: W,
) -> Result<Written, pcap_file::PcapError> {
    use pcap_file::pcapng::blocks::enhanced_packet::{EnhancedPacketBlock, EnhancedPacketOption};
    use pcap_file::pcapng::blocks::interface_description::{InterfaceDescriptionBlock, InterfaceDescriptionOption};
    use pcap_file::pcapng::blocks::section_header::{SectionHeaderBlock, SectionHeaderOption};
    use pcap_file::pcapng::PcapNgWriter;
    use pcap_file::{DataLink, Endianness};
    use std::borrow::Cow;

    let shb = SectionHeaderBlock {
        endianness: Endianness::Little,
        options: vec![SectionHeaderOption::UserApplication(Cow::Owned(format!(
            "hfcsim {}",
            env!("CARGO_PKG_VERSION")
        )))],
        ..Default::default()
    };
    let mut w = PcapNgWriter::with_section_header(out, shb)?;
    let snaplen = HEADERS_SNAP.saturating_add(snap_payload);
    for (name, what) in
        [("server", "the server host (198.18.0.1)"), ("modem-lan", "the PCs behind the cable modems (198.19.0.0/16)")]
    {
        w.write_pcapng_block(InterfaceDescriptionBlock {
            linktype: DataLink::ETHERNET,
            snaplen,
            options: vec![
                InterfaceDescriptionOption::IfName(Cow::Borrowed(name)),
                InterfaceDescriptionOption::IfDescription(Cow::Owned(format!("hfcsim: {what}"))),
                // pcapng (RFC draft-ietf-opsawg-pcapng) if_tsresol: 10^-9 s.
                InterfaceDescriptionOption::IfTsResol(9),
            ],
        })?;
    }
    if bursts.is_some() {
        w.write_pcapng_block(InterfaceDescriptionBlock {
            linktype: DataLink::DOCSIS,
            snaplen: 0, // whole frames (pcapng: 0 = no limit)
            options: vec![
                InterfaceDescriptionOption::IfName(Cow::Borrowed("docsis-upstream")),
                InterfaceDescriptionOption::IfDescription(Cow::Borrowed(
                    "hfcsim: the DOCSIS upstream as the CMTS receives it (SID = modem + 1)",
                )),
                InterfaceDescriptionOption::IfTsResol(9),
            ],
        })?;
    }
    let bursts = bursts.unwrap_or(&[]);
    // Bursts in time order (channels report in the order they act), stable.
    let mut order: Vec<usize> = (0..bursts.len()).collect();
    order.sort_by_key(|&i| bursts[i].t);
    // Requests sent in one contention slot of one channel collided (headend.rs): the capture
    // keeps each, with a comment.
    let mut in_slot: HashMap<(u32, u64), u32> = HashMap::new();
    for u in bursts.iter().filter(|u| u.pkts.is_empty()) {
        *in_slot.entry((u.channel, u.t.0)).or_insert(0) += 1;
    }
    let ctx = Ctx::new(sc, snap_payload);
    let endpoints = ctx.ends.len();
    let mut wr = Writer {
        ctx,
        ip_id: HashMap::new(),
        ts_recent: vec![[0; 2]; endpoints],
        in_flight: HashMap::new(),
        resized: 0,
    };
    let mut packets = 0u64;
    let mut docsis_frames = 0u64;
    let mut next = order.into_iter().peekable();
    let mut write_burst = |w: &mut PcapNgWriter<W>, wr: &mut Writer, u: &UpCaptured| {
        let frame = wr.docsis_frame(u);
        let mut options = vec![EnhancedPacketOption::Flags(1)]; // inbound at the CMTS
        let n = if u.pkts.is_empty() { in_slot.get(&(u.channel, u.t.0)).copied().unwrap_or(1) } else { 1 };
        if n > 1 {
            options.push(EnhancedPacketOption::Comment(Cow::Owned(format!(
                "collided: {n} requests in this contention slot"
            ))));
        }
        docsis_frames += 1;
        w.write_pcapng_block(EnhancedPacketBlock {
            interface_id: 2,
            timestamp: std::time::Duration::from_nanos(u.t.0),
            original_len: frame.len() as u32,
            data: Cow::Borrowed(&frame),
            options,
        })
        .map(|_| ())
    };
    for c in records {
        // A burst before the records at its time: a packet is sent before the burst carries it,
        // and delivered at its end at the earliest.
        while let Some(&i) = next.peek().filter(|&&i| bursts[i].t <= c.t) {
            write_burst(&mut w, &mut wr, &bursts[i])?;
            next.next();
        }
        let (iface, s) = wr.frame(c);
        // epb_flags bits 0-1: 1 inbound, 2 outbound.
        let dir = if c.sent { 2 } else { 1 };
        w.write_pcapng_block(EnhancedPacketBlock {
            interface_id: iface,
            timestamp: std::time::Duration::from_nanos(c.t.0),
            original_len: s.orig_len,
            data: Cow::Borrowed(&s.frame),
            options: vec![EnhancedPacketOption::Flags(dir)],
        })?;
        packets += 1;
    }
    for i in next {
        write_burst(&mut w, &mut wr, &bursts[i])?;
    }
    w.into_inner().flush().map_err(pcap_file::PcapError::IoError)?;
    Ok(Written { packets: packets + docsis_frames, resized: wr.resized, docsis_frames })
}

// ---------------------------------------------------------------------------------------------------
// Captures of real packets (`hfcsim emulate --pcap`, crates/hfcsim-emu): the same interfaces and
// hosts' MAC addresses as the simulator's captures, the packets' own IP bytes, wall-clock times.

/// One real packet the emulator carried, as read from a side's TUN (sent by that side's host) or
/// written to it (delivered): `len` bytes kept at `at` in the capture's byte store.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RawCaptured {
    /// Wall clock, ns since the Unix epoch.
    pub t_ns: u64,
    /// 0 `server`, 1 `modem-lan`.
    pub iface: u32,
    /// Sent by the host on this interface (else delivered to it).
    pub sent: bool,
    /// The IP packet's length.
    pub orig_len: u32,
    pub at: u32,
    pub len: u32,
}

/// One DOCSIS upstream burst of real packets as the headend received it: the records (indices
/// into the capture's records, their `sent` copies) of the packets it carried.
#[derive(Clone, Debug)]
pub struct RawBurst {
    pub t_ns: u64,
    pub station: u32,
    pub request: Option<u32>,
    pub pkts: Vec<u32>,
}

/// How many bytes of the IP packet `ip` a capture keeps: its IP and TCP (or ICMP) headers and at
/// most `snap_payload` bytes after them (RFC 791 IHL, RFC 9293 data offset, RFC 792's 8-byte ICMP
/// header); an unknown protocol keeps its IP header and `snap_payload` more.
pub fn raw_snap_len(ip: &[u8], snap_payload: u32) -> usize {
    if ip.len() < IP_HEADER || ip[0] >> 4 != 4 {
        return ip.len().min(IP_HEADER + snap_payload as usize);
    }
    let ihl = usize::from(ip[0] & 0x0f) * 4;
    let l4 = match ip[9] {
        6 if ip.len() >= ihl + 13 => usize::from(ip[ihl + 12] >> 4) * 4,
        1 => ICMP_HEADER,
        _ => 0,
    };
    ip.len().min(ihl + l4 + snap_payload as usize)
}

/// The host of an address, as the simulator's captures number them.
fn host_of(addr: [u8; 4]) -> Option<Host> {
    match addr {
        [198, 18, 0, 1] => Some(Host::Server),
        [198, 19, hi, lo] => {
            let n = u32::from(hi) << 8 | u32::from(lo);
            (n >= 1).then(|| Host::Pc(n - 1))
        }
        _ => None,
    }
}

/// The Ethernet frame the IP bytes `ip` would travel in between their hosts (MAC addresses as the
/// simulator's captures give them; an address of no host gets 02:00:00:00:00:00).
fn raw_ethernet(ip: &[u8]) -> Vec<u8> {
    let mac = |a: Option<[u8; 4]>| a.and_then(host_of).map_or([0x02, 0, 0, 0, 0, 0], Host::mac);
    let (src, dst) =
        if ip.len() >= IP_HEADER { (ip[12..16].try_into().ok(), ip[16..20].try_into().ok()) } else { (None, None) };
    let mut f = Vec::with_capacity(ETH_HEADER + ip.len());
    f.extend_from_slice(&mac(dst));
    f.extend_from_slice(&mac(src));
    f.extend_from_slice(&0x0800u16.to_be_bytes());
    f.extend_from_slice(ip);
    f
}

/// Write the emulator's `records` (bytes in `store`) as pcapng to `out`: interfaces 0 `server` and
/// 1 `modem-lan` (Ethernet, as the simulator's captures), and 2 `docsis-upstream` with `bursts`
/// (each packet's Ethernet frame whole: its payload past the snap as zeros, as the simulator
/// writes it). Timestamps are the wall clock (ns). Returns the blocks written.
pub fn write_raw_pcapng<W: Write>(
    records: &[RawCaptured],
    store: &[u8],
    bursts: Option<&[RawBurst]>,
    snaplen: u32,
    out: W,
) -> std::io::Result<u64> {
    write_raw_blocks(records, store, bursts, snaplen, out).map_err(|e| match e {
        pcap_file::PcapError::IoError(e) => e,
        e => std::io::Error::other(e.to_string()),
    })
}

fn write_raw_blocks<W: Write>(
    records: &[RawCaptured],
    store: &[u8],
    bursts: Option<&[RawBurst]>,
    snaplen: u32,
    out: W,
) -> Result<u64, pcap_file::PcapError> {
    use pcap_file::pcapng::blocks::enhanced_packet::{EnhancedPacketBlock, EnhancedPacketOption};
    use pcap_file::pcapng::blocks::interface_description::{InterfaceDescriptionBlock, InterfaceDescriptionOption};
    use pcap_file::pcapng::blocks::section_header::{SectionHeaderBlock, SectionHeaderOption};
    use pcap_file::pcapng::PcapNgWriter;
    use pcap_file::{DataLink, Endianness};
    use std::borrow::Cow;

    let shb = SectionHeaderBlock {
        endianness: Endianness::Little,
        options: vec![SectionHeaderOption::UserApplication(Cow::Owned(format!(
            "hfcsim {} emulate",
            env!("CARGO_PKG_VERSION")
        )))],
        ..Default::default()
    };
    let mut w = PcapNgWriter::with_section_header(out, shb)?;
    let mut ifaces = vec![
        (
            "server",
            "hfcsim emulate: the server namespace's TUN (198.18.0.1)",
            DataLink::ETHERNET,
            ETH_HEADER as u32 + snaplen,
        ),
        (
            "modem-lan",
            "hfcsim emulate: the client namespace's TUN (198.19.0.0/16)",
            DataLink::ETHERNET,
            ETH_HEADER as u32 + snaplen,
        ),
    ];
    if bursts.is_some() {
        ifaces.push((
            "docsis-upstream",
            "hfcsim emulate: the DOCSIS upstream as the CMTS receives it (SID = modem + 1)",
            DataLink::DOCSIS,
            0,
        ));
    }
    for (name, what, linktype, snaplen) in ifaces {
        w.write_pcapng_block(InterfaceDescriptionBlock {
            linktype,
            snaplen,
            options: vec![
                InterfaceDescriptionOption::IfName(Cow::Borrowed(name)),
                InterfaceDescriptionOption::IfDescription(Cow::Borrowed(what)),
                InterfaceDescriptionOption::IfTsResol(9),
            ],
        })?;
    }
    let bytes = |r: &RawCaptured| &store[r.at as usize..(r.at + r.len) as usize];
    let bursts = bursts.unwrap_or(&[]);
    let mut next = bursts.iter().peekable();
    let mut blocks = 0u64;
    let write_burst = |w: &mut PcapNgWriter<W>, u: &RawBurst| {
        let eths: Vec<Vec<u8>> = u
            .pkts
            .iter()
            .filter_map(|&i| records.get(i as usize))
            .map(|r| {
                let mut f = raw_ethernet(bytes(r));
                f.resize(ETH_HEADER + r.orig_len as usize, 0);
                let fcs = crc32_ieee(&f);
                f.extend_from_slice(&fcs.to_le_bytes());
                f
            })
            .collect();
        let frame = docsis_burst(u.station, u.request, &eths);
        w.write_pcapng_block(EnhancedPacketBlock {
            interface_id: 2,
            timestamp: std::time::Duration::from_nanos(u.t_ns),
            original_len: frame.len() as u32,
            data: Cow::Borrowed(&frame),
            options: vec![EnhancedPacketOption::Flags(1)], // inbound at the CMTS
        })
        .map(|_| ())
    };
    for r in records {
        while let Some(u) = next.next_if(|u| u.t_ns <= r.t_ns) {
            write_burst(&mut w, u)?;
            blocks += 1;
        }
        let frame = raw_ethernet(bytes(r));
        w.write_pcapng_block(EnhancedPacketBlock {
            interface_id: r.iface,
            timestamp: std::time::Duration::from_nanos(r.t_ns),
            original_len: ETH_HEADER as u32 + r.orig_len,
            data: Cow::Borrowed(&frame),
            // epb_flags bits 0-1: 1 inbound, 2 outbound (as seen by the host).
            options: vec![EnhancedPacketOption::Flags(if r.sent { 2 } else { 1 })],
        })?;
        blocks += 1;
    }
    for u in next {
        write_burst(&mut w, u)?;
        blocks += 1;
    }
    w.into_inner().flush().map_err(pcap_file::PcapError::IoError)?;
    Ok(blocks)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc1071_checksum_example() {
        // RFC 1071 3: the bytes 00 01 f2 03 f4 f5 f6 f7 sum to ddf2 (with end-around carries), so
        // the checksum is its complement.
        let data = [0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7];
        assert_eq!(checksum(&data, 0), !0xddf2);
        // An odd length pads with a zero byte.
        assert_eq!(checksum(&[0x01], 0), !0x0100);
        // A message with its checksum inserted sums to 0xffff: its checksum is zero.
        let mut h = Vec::new();
        ipv4_header(&mut h, 40, 1, 6, [198, 18, 0, 1], [198, 19, 0, 1], 0, Ecn::NotEct);
        assert_eq!(checksum(&h, 0), 0);
    }

    #[test]
    fn ipv4_header_worked_by_hand() {
        // 4500 0028 0001 4000 4006 xxxx c612 0001 c613 0001: 4500 + 0028 + 0001 + 4000 + 4006 +
        // c612 + 0001 + c613 + 0001 = 0x25156 -> 0x5156 + 2 = 0x5158, checksum !0x5158 = 0xaea7.
        let mut h = Vec::new();
        ipv4_header(&mut h, 40, 1, 6, [198, 18, 0, 1], [198, 19, 0, 1], 0, Ecn::NotEct);
        assert_eq!(&h[10..12], &[0xae, 0xa7]);
        assert_eq!(h.len(), IP_HEADER);
        // CE (RFC 3168 Sec. 5: 0b11 in the TOS byte's low bits): 4503 adds 3, checksum 0xaea4.
        let mut h = Vec::new();
        ipv4_header(&mut h, 40, 1, 6, [198, 18, 0, 1], [198, 19, 0, 1], 0, Ecn::Ce);
        assert_eq!(&h[..2], &[0x45, 0x03]);
        assert_eq!(&h[10..12], &[0xae, 0xa4]);
    }

    #[test]
    fn syn_options_bytes() {
        // Linux's SYN with SACK, timestamps and window scale: MSS 1460, SACK-permitted,
        // TS(7, 0), NOP, WS 3: 20 bytes.
        let o = syn_options(1460, true, Some((7, 0)), Some(3));
        assert_eq!(o, vec![2, 4, 0x05, 0xb4, 4, 2, 8, 10, 0, 0, 0, 7, 0, 0, 0, 0, 1, 3, 3, 3]);
        // The 1990s stacks: MSS only (and window scale, RFC 1323, when on).
        assert_eq!(syn_options(536, false, None, None), vec![2, 4, 0x02, 0x18]);
        assert_eq!(syn_options(536, false, None, Some(0)), vec![2, 4, 0x02, 0x18, 1, 3, 3, 0]);
    }

    #[test]
    fn sack_blocks_are_absolute_and_fill_the_model_size() {
        let mut s = SackBlocks::default();
        s.blocks[0] = (2920, 4380);
        s.blocks[1] = (5840, 7300);
        s.n = 2;
        let o = segment_options(Some((1, 2)), &s, 999);
        // NOP NOP TS (12) + NOP NOP SACK kind, length 2 + 16, 16 block bytes: 12 + 4 + 16.
        assert_eq!(o.len(), 32);
        assert_eq!(&o[12..16], &[1, 1, 5, 18]);
        assert_eq!(&o[16..20], &(1000u32 + 2920).to_be_bytes());
        // sim.rs receiver_actions sizes this ACK 40 + 12 + 4 + 8 n: the header holds it exactly.
        assert_eq!(header_len(40 + 12 + 4 + 16, 0, o.len()), 20 + 32);
        // A data segment with timestamps: 52 bytes of headers in the model, 32 of TCP here.
        assert_eq!(header_len(1500, 1448, 12), 32);
        // Too small for its options (a SYN the model counts as a bare 40 bytes): the least.
        assert_eq!(header_len(40, 0, 20), 40);
    }

    #[test]
    fn tcp_checksum_verifies_with_pseudo_header() {
        let o = segment_options(Some((5, 6)), &SackBlocks::default(), 0);
        let seg = Segment {
            src_port: 5001,
            dst_port: 40000,
            seq: 1,
            ack: Some(1),
            syn: false,
            window: 100,
            options: &o,
            header_len: 32,
            payload_len: 1448,
            ecn_flags: 0,
        };
        let (a, b) = ([198, 18, 0, 1], [198, 19, 0, 1]);
        let mut h = Vec::new();
        tcp_header(&mut h, &seg, a, b);
        assert_eq!(h.len(), 32);
        // Data offset: 8 words.
        assert_eq!(h[12], 8 << 4);
        // The receiver's check: the sum over pseudo-header, header and zero payload is 0xffff.
        assert_eq!(checksum(&h, pseudo_sum(a, b, 6, 32 + 1448)), 0);
        // An odd pseudo length is as good: the payload's zeros change nothing.
        h.extend(std::iter::repeat_n(0, 1448));
        assert_eq!(checksum(&h, pseudo_sum(a, b, 6, 32 + 1448)), 0);
    }

    #[test]
    fn a_run_records_each_packet_at_both_ends() {
        use crate::sim::{run, RunOptions};
        let mut sc = Scenario::cohen_default();
        sc.flows[0].bytes = 30_000;
        sc.flows[0].drop_packets = vec![5];
        assert!(run(&sc, 1, RunOptions::default()).capture.is_none());
        let out = run(&sc, 1, RunOptions { pcap: true, ..Default::default() });
        let cap = out.capture.expect("capture on");
        let f = &out.flows[0];
        let sent = |data: bool| cap.iter().filter(|c| c.sent && c.pkt.is_data() == data).count() as u64;
        let got = |data: bool| cap.iter().filter(|c| !c.sent && c.pkt.is_data() == data).count() as u64;
        // Every data segment sent, first transmissions and retransmissions; all but the drop arrive.
        assert_eq!(sent(true), f.data_segments_sent + f.retransmitted_segments);
        assert_eq!(got(true), sent(true) - 1);
        // The sender gets every ACK but the last (the run ends when the receiver has it all), and
        // the handshake's SYN-ACK.
        assert_eq!(got(false), f.acks_received + 2);
        assert!(cap.windows(2).all(|w| w[0].t <= w[1].t), "time order");
        let mut file = Vec::new();
        let w = write_pcapng(&sc, &cap, None, 0, &mut file).unwrap();
        assert_eq!(w.packets, cap.len() as u64);
        // Only the SYN and SYN-ACK carry options the model does not count (MSS and window scale:
        // 8 bytes).
        assert_eq!(w.resized, 2);
        // pcapng (draft-ietf-opsawg-pcapng 4.1): a section header block, byte-order magic.
        assert_eq!(&file[..4], &[0x0a, 0x0d, 0x0d, 0x0a]);
        assert_eq!(&file[8..12], &0x1a2b_3c4du32.to_le_bytes());
    }

    #[test]
    fn an_emulators_capture_keeps_the_real_headers_on_the_wall_clock() {
        use pcap_file::pcapng::{Block, PcapNgReader};
        // A TCP segment 198.19.0.1 -> 198.18.0.1: 20-byte IP header (IHL 5, protocol 6), 32-byte
        // TCP header (data offset 8), 1000 bytes of payload: 1052 bytes of IP.
        let mut ip = vec![0u8; 1052];
        ip[0] = 0x45;
        ip[9] = 6;
        ip[12..16].copy_from_slice(&[198, 19, 0, 1]);
        ip[16..20].copy_from_slice(&[198, 18, 0, 1]);
        ip[32] = 8 << 4;
        // Headers only: 20 + 32 = 52 bytes; 10 payload bytes more with a snap of 10; an ICMP echo
        // keeps its 8-byte header.
        assert_eq!(raw_snap_len(&ip, 0), 52);
        assert_eq!(raw_snap_len(&ip, 10), 62);
        let mut echo = ip[..84].to_vec();
        echo[9] = 1;
        assert_eq!(raw_snap_len(&echo, 0), 28);
        assert_eq!(raw_snap_len(&[0x60; 40], 0), 20); // not IPv4: an IP header's worth
                                                      // Sent by the PC (modem-lan) at t, delivered to the server 20 ms later; one DOCSIS burst
                                                      // with it and a piggybacked request of 3 minislots, between the two.
        let t = 1_764_000_000_123_456_789u64;
        let store = ip[..52].to_vec();
        let rec = |t_ns, iface, sent| RawCaptured { t_ns, iface, sent, orig_len: 1052, at: 0, len: 52 };
        let records = [rec(t, 1, true), rec(t + 20_000_000, 0, false)];
        let bursts = [RawBurst { t_ns: t + 5_000_000, station: 0, request: Some(3), pkts: vec![0] }];
        let mut file = Vec::new();
        let n = write_raw_pcapng(&records, &store, Some(&bursts), 120, &mut file).unwrap();
        assert_eq!(n, 3);
        let mut r = PcapNgReader::new(&file[..]).unwrap();
        let mut seen = Vec::new();
        while let Some(b) = r.next_block() {
            match b.unwrap() {
                Block::InterfaceDescription(i) => seen.push(format!("if {:?}", i.linktype)),
                Block::EnhancedPacket(p) => {
                    seen.push(format!(
                        "{} {} {} {}",
                        p.interface_id,
                        p.timestamp.as_nanos(),
                        p.original_len,
                        p.data.len()
                    ));
                    if p.interface_id < 2 {
                        // Ethernet: the server's MAC, the PC's (modem 0), IPv4, then the IP bytes kept.
                        assert_eq!(&p.data[..14], &[2, 0, 0, 0, 0, 1, 2, 0, 1, 0, 0, 1, 8, 0]);
                        assert_eq!(&p.data[14..], &ip[..52]);
                    } else {
                        // The Packet PDU: FC (EHDR_ON), MAC_PARM (EH length 4), LEN (2), the 4-byte
                        // Request EH, HCS (2), then the whole Ethernet frame (14 + 1052) and its
                        // FCS (4): 10 + 1070 = 1080 bytes.
                        assert_eq!(p.data.len(), 1080);
                        assert_eq!(&p.data[..4], &[0x01, 4, 0x04, 0x32]); // LEN 4 + 1070 = 0x0432
                        assert_eq!(&p.data[4..8], &[0x13, 3, 0, 1]); // EH type 1 len 3, 3 minislots, SID 1
                        assert_eq!(&p.data[10..24], &[2, 0, 0, 0, 0, 1, 2, 0, 1, 0, 0, 1, 8, 0]);
                    }
                }
                _ => {}
            }
        }
        assert_eq!(
            seen,
            [
                "if ETHERNET".to_string(),
                "if ETHERNET".into(),
                "if DOCSIS".into(),
                format!("1 {t} 1066 66"),
                format!("2 {} 1080 1080", t + 5_000_000),
                format!("0 {} 1066 66", t + 20_000_000),
            ]
        );
    }

    #[test]
    fn crc32_check_string() {
        // The catalogue's check value of CRC-32 (IEEE 802.3) over "123456789".
        assert_eq!(crc32_ieee(b"123456789"), 0xcbf4_3926);
        // A frame followed by its FCS, low byte first, leaves the 802.3 residue 0xDEBB20E3 (here
        // complemented by the final XOR: 0x2144DF1C).
        let mut f = b"an ethernet frame".to_vec();
        f.extend_from_slice(&crc32_ieee(&f).to_le_bytes());
        assert_eq!(crc32_ieee(&f), 0x2144_df1c);
    }

    /// CRC-16 CCITT worked another way: each byte's bits reversed, shifted in most significant bit
    /// first against 0x1021, the register reversed and complemented at the end.
    fn crc16_msb_first(data: &[u8]) -> u16 {
        let mut crc = 0xffffu16;
        for &b in data {
            crc ^= u16::from(b.reverse_bits()) << 8;
            for _ in 0..8 {
                crc = if crc & 0x8000 != 0 { (crc << 1) ^ 0x1021 } else { crc << 1 };
            }
        }
        !crc.reverse_bits()
    }

    #[test]
    fn hcs_of_a_request_frame_worked_by_hand() {
        // CRC-16/X-25's catalogue check value over "123456789".
        assert_eq!(crc16_x25(b"123456789"), 0x906e);
        assert_eq!(crc16_msb_first(b"123456789"), 0x906e);
        // A Request frame (RFI 1.1 8.2.5.3) from SID 1 for 8 minislots: FC 0xC4 (FC_TYPE 11,
        // FC_PARM 00010, EHDR_ON 0), MAC_PARM 8, SID 0x0001, then the HCS low byte first. Wireshark
        // 4.0's DOCSIS dissector shows this header's HCS as 0xa062 [correct].
        let mut h = Vec::new();
        request_frame(&mut h, 8, sid(0));
        assert_eq!(h, vec![0xc4, 0x08, 0x00, 0x01, 0xa0, 0x62]);
        assert_eq!(crc16_msb_first(&h[..4]).to_le_bytes(), [0xa0, 0x62]);
        // X.25's check: the header with its HCS leaves the residue 0xF0B8 (0x0F47 complemented).
        assert_eq!(crc16_x25(&h), 0x0f47);
    }

    #[test]
    fn packet_pdu_with_a_request_eh_and_a_concatenation() {
        let eth = [0u8; 64];
        let eh = request_eh(5, sid(2));
        assert_eq!(eh, [0x13, 5, 0x00, 0x03]);
        let mut f = Vec::new();
        packet_pdu(&mut f, &eth, &eh);
        // FC 0x01 (Packet PDU, EHDR_ON), MAC_PARM = EHDR length 4, LEN = 4 + 64, EHDR, HCS.
        assert_eq!(&f[..8], &[0x01, 4, 0, 68, 0x13, 5, 0, 3]);
        assert_eq!(crc16_x25(&f[..10]), 0x0f47);
        assert_eq!(f.len(), 10 + 64);
        let mut c = Vec::new();
        docsis_header(&mut c, FC_CONCATENATION, 2, 148, &[]);
        assert_eq!(&c[..4], &[0xf8, 2, 0, 148]);
    }

    /// A DOCSIS run with several packets queued at the modem (an upload and a download, bursts of
    /// up to 4000 B):
    /// the capture's third interface holds every request the MAC counted.
    fn docsis_upload() -> Scenario {
        let mut sc = Scenario::cohen_default();
        sc.upstream.mac = crate::scenario::MacKind::Docsis;
        sc.upstream.piggyback = true;
        sc.upstream.concatenation = true;
        sc.upstream.max_burst_bytes = 4000;
        sc.flows[0].bytes = 100_000;
        // And a download beside it, whose ACKs queue behind the upload's data.
        let mut down = sc.flows[0].clone();
        down.direction = Direction::Down;
        sc.flows[0].direction = Direction::Up;
        sc.flows.push(down);
        sc
    }

    #[test]
    fn docsis_bursts_hold_every_request_and_write_the_same_bytes_twice() {
        use crate::sim::{run, RunOptions};
        let sc = docsis_upload();
        assert!(run(&sc, 1, RunOptions::default()).bursts.is_none());
        let write = || {
            let out = run(&sc, 1, RunOptions { pcap: true, ..Default::default() });
            let bursts = out.bursts.expect("a DOCSIS upstream");
            let mac = out.engine.mac.expect("a MAC");
            let contention = bursts.iter().filter(|b| b.pkts.is_empty()).count() as u64;
            let with_request = bursts.iter().filter(|b| b.request.is_some()).count() as u64;
            assert_eq!(with_request, mac.requests);
            assert!(contention >= mac.requests - mac.piggybacked_requests);
            assert!(bursts.iter().any(|b| b.pkts.len() > 1), "a concatenation");
            assert!(bursts.iter().any(|b| !b.pkts.is_empty() && b.request.is_some()), "a piggyback EH");
            let mut file = Vec::new();
            let cap = out.capture.expect("capture on");
            let w = write_pcapng(&sc, &cap, Some(&bursts), 0, &mut file).unwrap();
            assert_eq!(w.docsis_frames, bursts.len() as u64);
            assert_eq!(w.packets, (cap.len() + bursts.len()) as u64);
            file
        };
        assert_eq!(write(), write());
    }

    #[test]
    fn capturing_the_upstream_changes_nothing_it_captures() {
        use crate::sim::{run, RunOptions};
        let sc = docsis_upload();
        let off = run(&sc, 3, RunOptions::default());
        let on = run(&sc, 3, RunOptions { pcap: true, ..Default::default() });
        assert_eq!(off.engine.mac, on.engine.mac);
        assert_eq!(off.engine.events, on.engine.events);
        assert_eq!(format!("{:?}", off.flows), format!("{:?}", on.flows));
        assert_eq!(format!("{:?}", off.stations), format!("{:?}", on.stations));
    }

    #[test]
    fn window_shift_is_the_smallest_that_fits() {
        assert_eq!(window_shift(8_760), 0);
        assert_eq!(window_shift(65_535), 0);
        assert_eq!(window_shift(65_536), 1);
        assert_eq!(window_shift(6_291_456), 7); // 6 MB: 6291456 >> 7 = 49152
        assert_eq!(window_shift(u64::MAX), 14);
    }
}
