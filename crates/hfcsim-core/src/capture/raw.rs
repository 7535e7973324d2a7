//! Captures of real packets (`hfcsim emulate --pcap`, crates/hfcsim-emu): the same interfaces and
//! hosts' MAC addresses as the simulator's captures, the packets' own IP bytes, wall-clock times.

use super::checksum::crc32_ieee;
use super::docsis::docsis_burst;
use super::headers::{ETH_HEADER, ICMP_HEADER, IP_HEADER};
use super::writer::{io_error, section_writer};
use super::Host;
use std::io::Write;

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
    write_raw_blocks(records, store, bursts, snaplen, out).map_err(io_error)
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
    use pcap_file::pcapng::PcapNgWriter;
    use pcap_file::DataLink;
    use std::borrow::Cow;

    let mut w = section_writer(out, format!("hfcsim {} emulate", env!("CARGO_PKG_VERSION")))?;
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
}
