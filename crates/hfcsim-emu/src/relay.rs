//! The relay: the fabric on the wall clock between two TUN devices (docs/design.md, habit 16: the driver
//! owns the clock; the fabric is handed `now`).
//!
//! A packet read from a TUN is classified to its flow or ping endpoint by its client address (the
//! modem) and its ports or ICMP identifier (`Classifier`), and to a way (server -> client is
//! Forward for a download), injected
//! into the fabric as `Kind::Raw { id }` with its IP size, and written to the other TUN when the
//! fabric delivers it; its bytes wait in a slab under `id`. A fabric drop frees the bytes.

use hfcsim_core::capture::{raw_snap_len, RawBurst, RawCaptured};
use hfcsim_core::fabric::{NetOut, Standalone, Why};
use hfcsim_core::net::Element;
use hfcsim_core::packet::{Ecn, Kind, Packet, Way};
use hfcsim_core::time::SimTime;
use std::collections::BTreeMap;
use std::io;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use crate::tun;

/// Server side (index 0) and client side (index 1).
pub const SERVER: usize = 0;
pub const CLIENT: usize = 1;

/// RFC 2544 (Sec. C.2.2) sets aside 198.18.0.0/15 for benchmarking: the server is 198.18.0.1,
/// the client behind modem m is 198.19.0.0 + m + 1.
pub const SERVER_ADDR: [u8; 4] = [198, 18, 0, 1];
const CLIENT_BASE: u32 = u32::from_be_bytes([198, 19, 0, 0]);

pub fn client_addr(modem: u32) -> [u8; 4] {
    (CLIENT_BASE + modem + 1).to_be_bytes()
}

/// The modem of a client address, if it is one.
pub fn modem_of(addr: [u8; 4]) -> Option<u32> {
    let a = u32::from_be_bytes(addr);
    (a > CLIENT_BASE && a < CLIENT_BASE + 0x1_0000).then(|| a - CLIENT_BASE - 1)
}

/// The built-in workload's flow i listens on `FLOW_PORT0 + i` at its receiver (the client for a
/// download, the server for an upload); emulate.py reads it through `_core.Emulation`.
pub const FLOW_PORT0: u16 = 5001;
/// The built-in workload's ping i sends ICMP echoes with identifier `PING_IDENT0 + i` (wrapping).
pub const PING_IDENT0: u16 = 0x4846;

/// IP protocol numbers (RFC 790 / IANA): ICMP, TCP, UDP.
const ICMP: u8 = 1;
const TCP: u8 = 6;
const UDP: u8 = 17;

/// Which endpoint and way a packet takes, by flow (issue 22): a TCP or UDP packet by its client's
/// modem and the port its flow's receiver listens on, an ICMP echo by its modem and identifier. A
/// packet that names no flow or ping (a COMMAND's) takes its modem's first flow, an ICMP packet its
/// modem's first ping before that (our choice: the path a ping of that modem would take).
#[derive(Clone, Debug, Default)]
pub struct Classifier {
    /// (modem, whether the receiver is the client, the receiver's port) -> (flow endpoint, download).
    pub flows: BTreeMap<(u32, bool, u16), (u32, bool)>,
    /// (modem, ICMP echo identifier) -> the ping's endpoint.
    pub pings: BTreeMap<(u32, u16), u32>,
    /// Per modem: its first flow (endpoint, download) and its first ping's endpoint.
    pub first_flow: Vec<Option<(u32, bool)>>,
    pub first_ping: Vec<Option<u32>>,
}

impl Classifier {
    /// The classifier of flows (modem, download) and pings (modem), in scenario order: flow i is
    /// endpoint i and listens on FLOW_PORT0 + i; ping j is endpoint flows + j with identifier
    /// PING_IDENT0 + j.
    pub fn new(modems: u32, flows: &[(u32, bool)], pings: &[u32]) -> Classifier {
        let mut c = Classifier {
            first_flow: vec![None; modems as usize],
            first_ping: vec![None; modems as usize],
            ..Classifier::default()
        };
        for (i, &(m, down)) in flows.iter().enumerate() {
            let port = FLOW_PORT0.wrapping_add(i as u16);
            c.flows.entry((m, down, port)).or_insert((i as u32, down));
            c.first_flow[m as usize].get_or_insert((i as u32, down));
        }
        for (j, &m) in pings.iter().enumerate() {
            let e = (flows.len() + j) as u32;
            c.pings.entry((m, PING_IDENT0.wrapping_add(j as u16))).or_insert(e);
            c.first_ping[m as usize].get_or_insert(e);
        }
        c
    }

    /// The endpoint and way of an IP packet read on side `from`; None if it cannot be carried
    /// (not IPv4, not between our addresses, or naming nothing its modem carries).
    pub fn classify(&self, from: usize, ip: &[u8]) -> Option<(u32, Way)> {
        // RFC 791: version and header length in the first byte, protocol at 9, source at 12..16,
        // destination at 16..20.
        if ip.len() < 20 || ip[0] >> 4 != 4 {
            return None;
        }
        let src: [u8; 4] = ip[12..16].try_into().ok()?;
        let dst: [u8; 4] = ip[16..20].try_into().ok()?;
        let (client, server) = if from == SERVER { (dst, src) } else { (src, dst) };
        if server != SERVER_ADDR {
            return None;
        }
        let modem = modem_of(client)?;
        let to_client = from == SERVER;
        let l4 = &ip[(usize::from(ip[0] & 0x0F) * 4).min(ip.len())..];
        // A first fragment or a whole packet (fragment offset 0, RFC 791) carries the transport header.
        let first = u16::from_be_bytes([ip[6], ip[7]]) & 0x1FFF == 0;
        let flow = |(e, down): (u32, bool)| (e, if to_client == down { Way::Forward } else { Way::Reverse });
        match ip[9] {
            // RFC 9293 / RFC 768: source port then destination port.
            TCP | UDP if first && l4.len() >= 4 => {
                let (sport, dport) = (u16::from_be_bytes([l4[0], l4[1]]), u16::from_be_bytes([l4[2], l4[3]]));
                let (client_port, server_port) = if to_client { (dport, sport) } else { (sport, dport) };
                if let Some(&f) =
                    self.flows.get(&(modem, true, client_port)).or_else(|| self.flows.get(&(modem, false, server_port)))
                {
                    return Some(flow(f));
                }
            }
            // RFC 792: an echo (8) or echo reply (0) has its identifier at bytes 4..6. A ping's path is
            // Forward client -> server (topology.rs: `fwd` the echo's way up).
            ICMP if first && l4.len() >= 8 && (l4[0] == 8 || l4[0] == 0) => {
                let ident = u16::from_be_bytes([l4[4], l4[5]]);
                if let Some(&e) = self.pings.get(&(modem, ident)) {
                    return Some((e, if to_client { Way::Reverse } else { Way::Forward }));
                }
            }
            _ => {}
        }
        if ip[9] == ICMP {
            if let Some(e) = *self.first_ping.get(modem as usize)? {
                return Some((e, if to_client { Way::Reverse } else { Way::Forward }));
            }
        }
        self.first_flow.get(modem as usize)?.map(flow)
    }
}

/// How the relay thread runs.
#[derive(Clone, Copy, Debug)]
pub struct Timing {
    /// Busy-wait this long before a deadline instead of sleeping in ppoll (ns).
    pub spin_ns: u64,
    /// Ask for SCHED_FIFO (silently refused when not allowed).
    pub fifo: bool,
    /// Pin the relay to this CPU.
    pub cpu: Option<usize>,
}

/// What a relay did: its self-checks' inputs.
#[derive(Debug, Default)]
pub struct Stats {
    pub read: [u64; 2],
    pub read_bytes: [u64; 2],
    /// TCP segments among them (IP protocol 6).
    pub read_tcp: [u64; 2],
    pub written: [u64; 2],
    pub write_errors: u64,
    pub unclassified: u64,
    /// Drops by reason (lost, full, discarded, aqm, mac).
    pub drops: BTreeMap<&'static str, u64>,
    /// Drops by part ("link 3 downstream", "queue 0", "upstream station 2").
    pub drops_by_part: BTreeMap<String, u64>,
    /// Still inside the fabric when the relay stopped.
    pub held_at_end: u64,
    /// Release lateness of every packet written, ns (write time - scheduled delivery).
    pub lateness: Vec<u32>,
    pub fifo: bool,
    pub cpu: Option<usize>,
    pub wall_s: f64,
    /// The relay thread's CPU time (user + system), s.
    pub cpu_s: f64,
    pub wakeups: u64,
}

fn why_name(w: Why) -> &'static str {
    match w {
        Why::Lost => "lost",
        Why::Full => "full",
        Why::Discarded => "discarded",
        Why::Aqm => "aqm",
        Why::Mac => "mac",
    }
}

fn part_name(d: &hfcsim_core::fabric::PacketDrop) -> String {
    let role = d.role.map(|r| format!(" {r:?}")).unwrap_or_default();
    match d.part {
        Element::Link(i) => format!("link {i}{role}"),
        Element::Queue(i) => format!("queue {i}{role}"),
        Element::Upstream(s) => format!("upstream station {s}"),
    }
}

/// `--pcap`: what crossed, each packet's headers (and `snap_payload` bytes more) as read from a
/// side's TUN and as written to the other, on the wall clock; a DOCSIS upstream's bursts with
/// `bursts`. The writer is hfcsim-core's capture/raw.rs `write_raw_pcapng`.
#[derive(Debug, Default)]
pub struct Capture {
    pub snap_payload: u32,
    /// The wall clock (ns since the Unix epoch) at the relay's time 0.
    pub wall0_ns: u64,
    pub records: Vec<RawCaptured>,
    pub store: Vec<u8>,
    /// With a DOCSIS upstream (`Fabric::capture_on`).
    pub bursts: Option<Vec<RawBurst>>,
    /// Packets not kept: the store was full (`MAX_CAPTURE`).
    pub missed: u64,
}

/// A capture keeps at most this many bytes of headers (about 4 M packets' worth).
const MAX_CAPTURE: usize = 512 << 20;

impl Capture {
    /// Keep packet `ip`, seen at relay time `t` on `side`; its record's index.
    #[cold]
    #[inline(never)]
    fn add(&mut self, t: SimTime, side: usize, sent: bool, ip: &[u8]) -> Option<u32> {
        let keep = raw_snap_len(ip, self.snap_payload);
        if self.store.len() + keep > MAX_CAPTURE {
            self.missed += 1;
            return None;
        }
        self.records.push(RawCaptured {
            t_ns: self.wall0_ns + t.0,
            iface: side as u32,
            sent,
            orig_len: ip.len() as u32,
            at: self.store.len() as u32,
            len: keep as u32,
        });
        self.store.extend_from_slice(&ip[..keep]);
        Some((self.records.len() - 1) as u32)
    }
}

/// The real packets inside the fabric, by id: bytes and the side they came from.
struct Slab {
    bufs: Vec<Vec<u8>>,
    from: Vec<u8>,
    /// With a capture: the record of the packet as read (u32::MAX if not kept).
    rec: Vec<u32>,
    free: Vec<u32>,
    live: u64,
}

impl Slab {
    fn take(&mut self) -> u32 {
        self.live += 1;
        match self.free.pop() {
            Some(id) => id,
            None => {
                self.bufs.push(vec![0; MAX_PACKET]);
                self.from.push(0);
                self.rec.push(u32::MAX);
                (self.bufs.len() - 1) as u32
            }
        }
    }
    fn give_back(&mut self, id: u32) {
        self.live -= 1;
        self.free.push(id);
    }
}

/// Room for one packet read from a TUN: its MTU is `MTU` and, without IFF_VNET_HDR, no GSO
/// packet reaches it (measured on the development VM).
const MAX_PACKET: usize = 2048;
pub const MTU: usize = 1500;
/// Lateness samples kept (40 MB): over an hour at 25 Mb/s.
const MAX_SAMPLES: usize = 10_000_000;

pub struct Relay {
    pub fabric: Standalone,
    pub fds: [RawFd; 2],
    pub classifier: Classifier,
    pub timing: Timing,
    /// `--pcap`: what crossed (None: nothing kept).
    pub capture: Option<Capture>,
}

fn thread_cpu_s() -> f64 {
    // SAFETY: getrusage fills the struct we pass.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut u) };
    let s = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    s(u.ru_utime) + s(u.ru_stime)
}

/// SCHED_FIFO at a middling priority for the calling thread; false if refused.
fn set_fifo() -> bool {
    let p = libc::sched_param { sched_priority: 50 };
    // SAFETY: pid 0 is the calling thread.
    unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &p) == 0 }
}

fn pin(cpu: usize) -> bool {
    // SAFETY: a zeroed cpu_set_t with one CPU set, for the calling thread (pid 0).
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) == 0
    }
}

impl Relay {
    /// Run until `stop` is set; the relay's own thread calls this.
    pub fn run(&mut self, stop: &AtomicBool) -> io::Result<Stats> {
        let mut st = Stats { cpu: self.timing.cpu.filter(|&c| pin(c)), ..Stats::default() };
        st.fifo = self.timing.fifo && set_fifo();
        let cpu0 = thread_cpu_s();
        let t0 = Instant::now();
        let clock = || SimTime(t0.elapsed().as_nanos() as u64);
        if let Some(c) = self.capture.as_mut() {
            // The wall clock read next to the monotonic time 0: capture times are wall0 + relay time.
            let wall = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
            c.wall0_ns = wall.as_nanos() as u64;
        }
        let mut slab = Slab { bufs: Vec::new(), from: Vec::new(), rec: Vec::new(), free: Vec::new(), live: 0 };
        let mut delivered: Vec<(SimTime, Packet)> = Vec::with_capacity(256);
        let mut pfd = [
            libc::pollfd { fd: self.fds[SERVER], events: libc::POLLIN, revents: 0 },
            libc::pollfd { fd: self.fds[CLIENT], events: libc::POLLIN, revents: 0 },
        ];
        const IDLE_NS: u64 = 20_000_000; // look at `stop` at least every 20 ms
        while !stop.load(Ordering::Relaxed) {
            // Release what is due.
            let mut now = clock();
            if self.fabric.next_deadline().is_some_and(|d| d <= now) {
                self.fabric.on_timer(now, &mut delivered);
                if !delivered.is_empty() {
                    let at = clock();
                    for (t, pkt) in delivered.drain(..) {
                        let Kind::Raw { id } = pkt.kind else { continue };
                        let from = slab.from[id as usize] as usize;
                        let to = 1 - from;
                        let len = pkt.size as usize;
                        match tun::write(self.fds[to], &slab.bufs[id as usize][..len]) {
                            Ok(()) => {
                                st.written[to] += 1;
                                if let Some(c) = self.capture.as_mut() {
                                    c.add(at, to, false, &slab.bufs[id as usize][..len]);
                                }
                            }
                            Err(_) => st.write_errors += 1,
                        }
                        if st.lateness.len() < MAX_SAMPLES {
                            st.lateness.push(at.0.saturating_sub(t.0).min(u32::MAX as u64) as u32);
                        }
                        slab.give_back(id);
                    }
                }
                self.drain_drops(&mut slab, &mut st);
                now = clock();
            }
            // Sleep until the next deadline, less the spin; spin (poll without waiting) near it.
            let wait = match self.fabric.next_deadline() {
                Some(d) => d.0.saturating_sub(now.0).saturating_sub(self.timing.spin_ns).min(IDLE_NS),
                None => IDLE_NS,
            };
            let ts = libc::timespec { tv_sec: (wait / 1_000_000_000) as _, tv_nsec: (wait % 1_000_000_000) as _ };
            // SAFETY: two pollfds we own; no signal mask change.
            let n = unsafe { libc::ppoll(pfd.as_mut_ptr(), 2, &ts, std::ptr::null()) };
            if n < 0 {
                let e = io::Error::last_os_error();
                if e.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(e);
            }
            if n == 0 {
                continue;
            }
            st.wakeups += 1;
            // One clock reading per wake-up: every packet read now is injected at it.
            let now = clock();
            for side in [SERVER, CLIENT] {
                if pfd[side].revents & libc::POLLIN == 0 {
                    if pfd[side].revents & (libc::POLLERR | libc::POLLHUP | libc::POLLNVAL) != 0 {
                        return Err(io::Error::other(format!("TUN of side {side} failed")));
                    }
                    continue;
                }
                for _ in 0..256 {
                    let id = slab.take();
                    let buf = &mut slab.bufs[id as usize];
                    let Some(len) = tun::read(self.fds[side], buf)? else {
                        slab.give_back(id);
                        break;
                    };
                    st.read[side] += 1;
                    st.read_bytes[side] += len as u64;
                    // RFC 791: the protocol at byte 9; TCP is 6 (RFC 793).
                    st.read_tcp[side] += (len >= 20 && buf[9] == 6) as u64;
                    if let Some(c) = self.capture.as_mut() {
                        slab.rec[id as usize] = c.add(now, side, true, &buf[..len]).unwrap_or(u32::MAX);
                    }
                    let class = if len < MAX_PACKET { self.classifier.classify(side, &buf[..len]) } else { None };
                    let Some((flow, way)) = class else {
                        st.unclassified += 1;
                        slab.give_back(id);
                        continue;
                    };
                    slab.from[id as usize] = side as u8;
                    // A real packet's ECN bits are in its own bytes: the fabric sees it as Not-ECT.
                    let pkt = Packet {
                        flow,
                        way,
                        hop: 0,
                        size: len as u32,
                        kind: Kind::Raw { id },
                        chosen_drop: false,
                        ecn: Ecn::NotEct,
                        flags: 0,
                    };
                    self.fabric.inject(now, pkt);
                }
            }
            self.drain_drops(&mut slab, &mut st);
        }
        st.held_at_end = slab.live;
        st.wall_s = t0.elapsed().as_secs_f64();
        st.cpu_s = thread_cpu_s() - cpu0;
        Ok(st)
    }

    fn drain_drops(&mut self, slab: &mut Slab, st: &mut Stats) {
        // Bursts come only with a DOCSIS capture on (Fabric::capture_on).
        if self.capture.as_ref().is_some_and(|c| c.bursts.is_some())
            && self.fabric.fabric.out.iter().any(|o| matches!(o, NetOut::Bursts))
        {
            self.take_bursts(slab);
        }
        for o in self.fabric.fabric.out.drain(..) {
            // Only the real packets count: the balance is of what was read.
            if let NetOut::Dropped(
                d @ hfcsim_core::fabric::PacketDrop { pkt: Packet { kind: Kind::Raw { id }, .. }, .. },
            ) = o
            {
                slab.give_back(id);
                *st.drops.entry(why_name(d.why)).or_default() += 1;
                *st.drops_by_part.entry(part_name(&d)).or_default() += 1;
            }
        }
    }
}

impl Relay {
    /// The DOCSIS bursts the headends received since the last call, for the capture: each
    /// packet by its record as read (its bytes are still in the slab: it is still in the fabric).
    #[cold]
    #[inline(never)]
    fn take_bursts(&mut self, slab: &Slab) {
        let bursts = self.fabric.fabric.take_bursts();
        let Some(c) = self.capture.as_mut() else { return };
        let wall0 = c.wall0_ns;
        let Some(into) = c.bursts.as_mut() else { return };
        for (_, b) in bursts {
            let pkts = b
                .packets
                .iter()
                .filter_map(|p| match p.kind {
                    Kind::Raw { id } => Some(slab.rec[id as usize]),
                    _ => None,
                })
                .filter(|&r| r != u32::MAX)
                .collect();
            into.push(RawBurst { t_ns: wall0 + b.at.0, station: b.station, request: b.request, pkts });
        }
    }
}

/// The p-quantile (0..=1) of sorted values, nearest rank.
pub fn quantile(sorted: &[u32], p: f64) -> Option<u32> {
    if sorted.is_empty() {
        return None;
    }
    let rank = ((p * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    Some(sorted[rank - 1])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ipv4(src: [u8; 4], dst: [u8; 4]) -> Vec<u8> {
        let mut p = vec![0u8; 40];
        p[0] = 0x45;
        p[12..16].copy_from_slice(&src);
        p[16..20].copy_from_slice(&dst);
        p
    }

    /// An IPv4 packet of protocol `proto` with `l4` after a 20-byte header.
    fn packet(src: [u8; 4], dst: [u8; 4], proto: u8, l4: &[u8]) -> Vec<u8> {
        let mut p = ipv4(src, dst);
        p.truncate(20);
        p[9] = proto;
        p.extend_from_slice(l4);
        p
    }

    fn tcp(src: [u8; 4], dst: [u8; 4], sport: u16, dport: u16) -> Vec<u8> {
        let mut l4 = vec![0u8; 20];
        l4[..2].copy_from_slice(&sport.to_be_bytes());
        l4[2..4].copy_from_slice(&dport.to_be_bytes());
        packet(src, dst, TCP, &l4)
    }

    fn echo(src: [u8; 4], dst: [u8; 4], kind: u8, ident: u16) -> Vec<u8> {
        let mut l4 = vec![kind, 0, 0, 0, 0, 0, 0, 1];
        l4[4..6].copy_from_slice(&ident.to_be_bytes());
        packet(src, dst, ICMP, &l4)
    }

    #[test]
    fn packets_are_classified_by_their_flow() {
        // Modem 0: flow 0 down (port 5001), flow 1 up (5002), flow 2 down (5003), ping 0 (endpoint 4,
        // ident 0x4846); modem 1: nothing; modem 2: flow 3 up (5004), ping 1 (endpoint 5, ident 0x4847).
        let c = Classifier::new(3, &[(0, true), (0, false), (0, true), (2, false)], &[0, 2]);
        let (s, m0, m1, m2) = (SERVER_ADDR, client_addr(0), client_addr(1), client_addr(2));
        assert_eq!(m0, [198, 19, 0, 1]);
        let (f, r) = (Some(Way::Forward), Some(Way::Reverse));
        let eph = 40_000; // the sender's ephemeral port
        type Row = (usize, Vec<u8>, Option<(u32, Way)>); // (side read on, the packet, what it classifies to)
        let table: Vec<Row> = vec![
            // Each download by the client's port, data down (Forward), ACKs up (Reverse).
            (SERVER, tcp(s, m0, eph, 5001), f.map(|w| (0, w))),
            (CLIENT, tcp(m0, s, 5001, eph), r.map(|w| (0, w))),
            (SERVER, tcp(s, m0, eph, 5003), f.map(|w| (2, w))),
            (CLIENT, tcp(m0, s, 5003, eph), r.map(|w| (2, w))),
            // The upload by the server's port: data up (Forward), ACKs down (Reverse).
            (CLIENT, tcp(m0, s, eph, 5002), f.map(|w| (1, w))),
            (SERVER, tcp(s, m0, 5002, eph), r.map(|w| (1, w))),
            (CLIENT, tcp(m2, s, eph, 5004), f.map(|w| (3, w))),
            (SERVER, tcp(s, m2, 5004, eph), r.map(|w| (3, w))),
            // A port no flow listens on (a COMMAND's): the modem's first flow, flow 0 (download).
            (SERVER, tcp(s, m0, 5201, eph), f.map(|w| (0, w))),
            (CLIENT, tcp(m2, s, eph, 5201), f.map(|w| (3, w))),
            // Flow 3's port seen on modem 0: modem 0's first flow, not flow 3.
            (CLIENT, tcp(m0, s, eph, 5004), r.map(|w| (0, w))),
            // Echoes by identifier: request up (Forward), reply down (Reverse).
            (CLIENT, echo(m0, s, 8, 0x4846), f.map(|w| (4, w))),
            (SERVER, echo(s, m0, 0, 0x4846), r.map(|w| (4, w))),
            (CLIENT, echo(m2, s, 8, 0x4847), f.map(|w| (5, w))),
            // An unknown identifier (ping(8)'s): the modem's first ping; a ping's ident on another modem too.
            (CLIENT, echo(m0, s, 8, 7), f.map(|w| (4, w))),
            (SERVER, echo(s, m2, 0, 0x4846), r.map(|w| (5, w))),
            // Other ICMP: the modem's first ping.
            (SERVER, packet(s, m0, ICMP, &[3, 3, 0, 0, 0, 0, 0, 0]), r.map(|w| (4, w))),
            // Modem 1 carries nothing.
            (SERVER, tcp(s, m1, eph, 5001), None),
            (CLIENT, echo(m1, s, 8, 0x4846), None),
            // Not between our addresses, not IPv4, too short.
            (SERVER, ipv4(s, [10, 0, 0, 1]), None),
            (CLIENT, ipv4(m0, [198, 18, 0, 2]), None),
            (SERVER, [0x45; 10].to_vec(), None),
        ];
        for (i, (from, p, want)) in table.iter().enumerate() {
            assert_eq!(c.classify(*from, p), *want, "row {i}");
        }
        let mut v6 = ipv4(s, m0);
        v6[0] = 0x60;
        assert_eq!(c.classify(SERVER, &v6), None);
        // A truncated TCP header, or a later fragment: no ports, so the modem's first flow.
        let mut frag = tcp(s, m0, eph, 5003);
        frag[7] = 1; // fragment offset 1 (8 bytes)
        assert_eq!(c.classify(SERVER, &frag), Some((0, Way::Forward)));
        assert_eq!(c.classify(SERVER, &tcp(s, m0, eph, 5003)[..22]), Some((0, Way::Forward)));
        // A modem with pings only: its echoes ride the ping, its TCP is not carried.
        let only = Classifier::new(1, &[], &[0]);
        assert_eq!(only.classify(CLIENT, &echo(m0, s, 8, 1)), Some((0, Way::Forward)));
        assert_eq!(only.classify(SERVER, &tcp(s, m0, eph, 5001)), None);
    }

    /// A datagram socket pair: both ends keep packet boundaries, as a TUN device does. The first
    /// end (the relay's) non-blocking.
    fn pair() -> (std::os::fd::OwnedFd, std::os::fd::OwnedFd) {
        use std::os::fd::FromRawFd;
        let mut fds = [0; 2];
        // SAFETY: socketpair fills two new fds, which we own from here.
        assert_eq!(unsafe { libc::socketpair(libc::AF_UNIX, libc::SOCK_DGRAM, 0, fds.as_mut_ptr()) }, 0);
        unsafe {
            libc::fcntl(fds[0], libc::F_SETFL, libc::O_NONBLOCK);
            (std::os::fd::OwnedFd::from_raw_fd(fds[0]), std::os::fd::OwnedFd::from_raw_fd(fds[1]))
        }
    }

    #[test]
    fn a_packet_crosses_the_relay_after_the_models_delay() {
        use hfcsim_core::fabric::{Fabric, Parts};
        use hfcsim_core::net::{Element, Link, QueueLimit, Role};
        use hfcsim_core::rng::Stream;
        use std::os::fd::AsRawFd;
        use std::sync::Arc;
        use std::time::Duration;

        // Socket pairs stand in for the TUN devices (no root needed). Endpoint 0 (modem 0's
        // download) forward over one link of 8 Mb/s and 5 ms; back over nothing.
        let ((srv, srv_host), (cli, cli_host)) = (pair(), pair());
        let link =
            Link::new(Role::Bottleneck, 8_000_000, 5_000_000, QueueLimit::Unbounded, true, 0.0, Stream::new(1, 1));
        let parts = Parts { links: vec![link], routes: vec![vec![Element::Link(0)], vec![]], ..Parts::default() };
        let mut relay = Relay {
            fabric: Standalone::new(Fabric::new(parts, vec![(0, 1)], false)),
            fds: [srv.as_raw_fd(), cli.as_raw_fd()],
            classifier: Classifier::new(1, &[(0, true)], &[]),
            timing: Timing { spin_ns: 20_000, fifo: false, cpu: None },
            capture: Some(Capture::default()),
        };
        let stop = Arc::new(AtomicBool::new(false));
        let running = {
            let stop = stop.clone();
            std::thread::spawn(move || (relay.run(&stop).expect("the relay runs"), relay))
        };
        let mut pkt = ipv4(SERVER_ADDR, client_addr(0));
        pkt.resize(1000, 7);
        let t0 = Instant::now();
        tun::write(srv_host.as_raw_fd(), &ipv4(SERVER_ADDR, [10, 0, 0, 1])).unwrap(); // not ours: dropped
        tun::write(srv_host.as_raw_fd(), &pkt).unwrap();
        // SAFETY: a blocking read into our buffer.
        let mut buf = [0u8; 2048];
        let n = unsafe { libc::read(cli_host.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
        let took = t0.elapsed();
        assert_eq!(&buf[..n as usize], &pkt[..]);
        // 1000 B at 8 Mb/s is 1 ms of service, then 5 ms of propagation.
        assert!(took >= Duration::from_millis(6), "{took:?}");
        assert!(took < Duration::from_millis(500), "{took:?}");
        stop.store(true, Ordering::Relaxed);
        let (st, relay) = running.join().unwrap();
        assert_eq!((st.read, st.written, st.unclassified, st.held_at_end), ([2, 0], [0, 1], 1, 0));
        assert_eq!(st.lateness.len(), 1);
        // The capture: both packets as the server sent them (the one not carried too), then the
        // carried one as delivered to the client, 6 ms or more later; each cut to its 20-byte IP
        // header (protocol 0: no transport header known) as the snap of 0 payload bytes keeps.
        let c = relay.capture.expect("a capture");
        let r = &c.records;
        assert_eq!(
            r.iter().map(|r| (r.iface, r.sent, r.orig_len, r.len)).collect::<Vec<_>>(),
            vec![(0, true, 40, 20), (0, true, 1000, 20), (1, false, 1000, 20)]
        );
        assert!(r[2].t_ns >= r[1].t_ns + 6_000_000 && r[1].t_ns >= c.wall0_ns, "{r:?}");
        assert_eq!(&c.store[r[2].at as usize..][..20], &pkt[..20]);
    }

    #[test]
    fn quantiles_by_nearest_rank() {
        let v: Vec<u32> = (1..=1000).collect();
        assert_eq!(quantile(&v, 0.5), Some(500));
        assert_eq!(quantile(&v, 0.99), Some(990));
        assert_eq!(quantile(&v, 0.999), Some(999));
        assert_eq!(quantile(&v, 1.0), Some(1000));
        assert_eq!(quantile(&[], 0.5), None);
    }
}
