//! Packet captures (`hfcsim run --pcap FILE`): the engine's packets as the frames a capture on
//! the server and on the PCs' LAN would show, written as pcapng for Wireshark and tshark
//! (docs/design.md, habit 17).
//!
//! The engine only records (`tap`: time, packet, sent or delivered, its SACK blocks); `headers.rs`
//! and `docsis.rs` turn the model's fields into header bytes and `write_pcapng` (writer.rs) writes
//! them with the `pcap-file` crate. The interfaces (capture points):
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
//!
//! The files, one idea each:
//!
//! - this file: what the engine records (`tap`, `tap_burst`), the hosts and the capture points
//!   (interfaces) they are seen at, and the check of a scenario before a capture;
//! - `headers.rs`: Ethernet, IPv4, ICMP and TCP headers (options included) built from the model's
//!   fields;
//! - `docsis.rs`: DOCSIS MAC frames (Request, Packet PDU, Concatenation, the Request EH element);
//! - `checksum.rs`: the sums that check a frame: RFC 1071's Internet checksum, CRC-16 (the DOCSIS
//!   HCS) and CRC-32 (the Ethernet FCS);
//! - `writer.rs`: the simulator's capture, the model's packets as frames in pcapng;
//! - `raw.rs`: the emulator's capture, real packets' own bytes in the same interfaces.
//!
//! Captures stand above the network and the endpoints: they read the packet (`crate::packet`), the
//! MAC's bursts (`access::UpBurst`) and TCP's SACK blocks and window rules, and nothing in `net/`,
//! `access/` or `tcp/` imports them.

pub mod checksum;
pub mod docsis;
pub mod headers;
pub mod raw;
pub mod writer;

pub use raw::{raw_snap_len, write_raw_pcapng, RawBurst, RawCaptured};
pub use writer::{write_pcapng, Written};

use crate::access::UpBurst;
use crate::packet::{Kind, Packet};
use crate::scenario::Scenario;
use crate::tcp::receiver::SackBlocks;
use crate::time::SimTime;

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

/// A capture's input can be refused before the run: one line naming the key.
pub fn check(sc: &Scenario) -> Result<(), String> {
    // An application's connection is two one-way transfers in the model (apps/mod.rs), opened as the
    // run goes: written as they are, a capture would show two conversations, one without a handshake.
    // Refused until the writer joins them (chosen: no capture rather than a misleading one).
    let apps = [("web", sc.web.len()), ("video", sc.video.len()), ("rpm", sc.rpm.len())];
    if let Some(section) = apps.iter().find(|(_, n)| *n > 0) {
        return Err(format!(
            "--pcap: [[{}]] is not captured yet (an application's connections are two one-way transfers in the \
             model); capture a run without [[web]], [[video]] and [[rpm]]",
            section.0
        ));
    }
    let max_flows = (u16::MAX - CLIENT_PORT_BASE) as usize + 1;
    if sc.flows.len() > max_flows {
        return Err(format!("--pcap: {} flows, at most {max_flows} get a port (40000 + flow)", sc.flows.len()));
    }
    let flows = sc.flows.iter().enumerate().map(|(i, f)| (f.modem, "flows", i));
    let pings = sc.pings.iter().enumerate().map(|(i, p)| (p.modem, "pings", i));
    let games = sc.games.iter().enumerate().map(|(i, g)| (g.modem, "games", i));
    let calls = sc.calls.iter().enumerate().map(|(i, c)| (c.modem, "calls", i));
    for (m, what, i) in flows.chain(pings).chain(games).chain(calls) {
        if m >= MAX_MODEMS {
            return Err(format!("--pcap: {what}.{i}.modem = {m}: only modems below {MAX_MODEMS} get an address"));
        }
    }
    Ok(())
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
