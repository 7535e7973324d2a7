//! The simulator's capture (`hfcsim run --pcap`): the records of a run (`Captured`, and with a
//! DOCSIS upstream its bursts, `UpCaptured`) as the frames each capture point would show, in
//! pcapng. A packet's frame is built when it is sent and the same bytes are written when it is
//! delivered (its ECN field as the network left it), so both captures show one frame.

use super::checksum::{checksum, crc32_ieee};
use super::docsis::docsis_burst;
use super::headers::{
    data_seq, header_len, ipv4_header, segment_options, set_ecn, syn_options, tcp_header, window_shift, Segment,
    DSCP_NQB, ETH_HEADER, HEADERS_SNAP, ICMP_HEADER, IP_HEADER, UDP_HEADER,
};
use super::{Captured, Host, UpCaptured, CLIENT_PORT_BASE, SERVER_PORT};
use crate::packet::{tcp_flags, Kind, Way};
use crate::scenario::{Direction, Scenario};
use crate::tcp::linux_window::LinuxWindow;
use crate::tcp::receiver::SackBlocks;
use crate::tcp::{round_buffer, TIMESTAMP_OPTION_BYTES};
use std::collections::{HashMap, VecDeque};
use std::io::Write;

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
        // sim.rs realtime_tick: a game's or call's forward way is the client's, its reverse the server's.
        ends.extend(
            sc.games
                .iter()
                .map(|g| g.modem)
                .chain(sc.calls.iter().map(|c| c.modem))
                .map(|m| (Host::Pc(m), Host::Server)),
        );
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
        Kind::Datagram { seq, .. } => (6, u64::from(seq), 0, 0),
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
        } else if let Kind::Datagram { nqb, .. } = c.pkt.kind {
            // RFC 768: a UDP datagram from the PC's port 40000 + endpoint (wrapping) to the server's
            // 5001, or back; checksum 0, "no checksum" (chosen: the payload is not modelled).
            ip_len = size.max((IP_HEADER + UDP_HEADER) as u32);
            let dscp = if nqb { DSCP_NQB } else { 0 };
            ipv4_header(&mut out, ip_len as u16, id, 17, src.addr(), dst.addr(), dscp, c.pkt.ecn);
            let client = super::CLIENT_PORT_BASE.wrapping_add(f as u16);
            let (sp, dp) =
                if src == Host::Server { (super::SERVER_PORT, client) } else { (client, super::SERVER_PORT) };
            out.extend_from_slice(&sp.to_be_bytes());
            out.extend_from_slice(&dp.to_be_bytes());
            out.extend_from_slice(&((ip_len as usize - IP_HEADER) as u16).to_be_bytes());
            out.extend_from_slice(&[0, 0]);
            let payload = ip_len as usize - IP_HEADER - UDP_HEADER;
            out.extend(std::iter::repeat_n(0, payload.min(self.ctx.snap_payload as usize)));
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
                Kind::Echo { .. } | Kind::Datagram { .. } | Kind::Raw { .. } => unreachable!(),
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
    write_blocks(sc, records, bursts, snap_payload, out).map_err(io_error)
}

/// A pcap-file error as the `io::Error` the writers return (its own I/O error as it is).
pub(super) fn io_error(e: pcap_file::PcapError) -> std::io::Error {
    match e {
        pcap_file::PcapError::IoError(e) => e,
        e => std::io::Error::other(e.to_string()),
    }
}

/// A pcapng writer whose section header names the application that wrote it, little-endian (both
/// writers: the simulator's, and the emulator's in raw.rs).
pub(super) fn section_writer<W: Write>(
    out: W,
    application: String,
) -> Result<pcap_file::pcapng::PcapNgWriter<W>, pcap_file::PcapError> {
    use pcap_file::pcapng::blocks::section_header::{SectionHeaderBlock, SectionHeaderOption};
    let shb = SectionHeaderBlock {
        endianness: pcap_file::Endianness::Little,
        options: vec![SectionHeaderOption::UserApplication(std::borrow::Cow::Owned(application))],
        ..Default::default()
    };
    pcap_file::pcapng::PcapNgWriter::with_section_header(out, shb)
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
    use pcap_file::pcapng::PcapNgWriter;
    use pcap_file::DataLink;
    use std::borrow::Cow;

    let mut w = section_writer(out, format!("hfcsim {}", env!("CARGO_PKG_VERSION")))?;
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
