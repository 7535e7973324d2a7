//! hfcsim-emu: the fabric of a scenario on the wall clock, between real kernel TCP stacks in two
//! network namespaces (docs/design.md, "The network of parts, and the fabric"; issue 22).
//!
//! A `Session` makes the namespaces (`netns::PREFIX` + pid + `s`/`c`), a TUN device `hfc0` in
//! each, the addresses (RFC 2544's 198.18.0.0/15: the server 198.18.0.1 in the server namespace,
//! 198.19.0.(m+1) per modem m in the client namespace) and routes between those prefixes only; its
//! relay thread runs the fabric (`relay.rs`) until stopped; closing it (or dropping it) removes the
//! namespaces. Nothing is routed to any interface of the machine.

pub mod netns;
pub mod relay;
pub mod tun;

use hfcsim_core::fabric::{Fabric, Standalone};
use hfcsim_core::scenario::{Direction, Scenario};
use hfcsim_core::topology;
use relay::{Classifier, Relay, Stats, Timing, CLIENT, SERVER};
use std::io;
use std::net::Ipv4Addr;
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

/// The TUN device's name inside either namespace.
pub const DEV: &str = "hfc0";
/// Measured on the development VM: txqueuelen 500 drops TCP bursts before the relay sees them.
const TXQUEUELEN: u32 = 10_000;

pub struct Options {
    pub timing: Timing,
    /// `--pcap`: write what crossed to this file (made at `open`, written at `stop`), keeping
    /// this many payload bytes of each packet past its headers.
    pub pcap: Option<(std::path::PathBuf, u32)>,
}

impl Default for Options {
    fn default() -> Options {
        // Two CPUs or more: the relay on CPU 1, the applications wherever the kernel puts them.
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        Options { timing: Timing { spin_ns: 80_000, fifo: true, cpu: (cpus >= 2).then_some(1) }, pcap: None }
    }
}

pub struct Session {
    pub server_ns: String,
    pub client_ns: String,
    pub modems: u32,
    /// Namespaces of killed runs removed at the start.
    pub removed_stale: Vec<String>,
    fds: Option<[OwnedFd; 2]>,
    relay: Option<Relay>,
    running: Option<JoinHandle<(Relay, io::Result<Stats>)>>,
    stop: Arc<AtomicBool>,
    made: Vec<String>,
    /// `--pcap`: the file, made at `open`.
    pcap: Option<(std::path::PathBuf, std::fs::File)>,
}

/// The fabric of `sc` (as sim.rs `World::build` makes it, without endpoints): endpoint e is flow
/// e, then the pings.
fn fabric_of(sc: &Scenario, seed: u64) -> Fabric {
    // A full data packet on the wire (MSS + headers; timestamps come out of the MSS), the unit
    // of a bottleneck's rate in packets.
    let data_packet = sc.tcp.mss_bytes + sc.tcp.header_bytes;
    let (parts, flows, pings) = topology::build(sc, seed, data_packet).into_parts();
    let paths: Vec<(u32, u32)> = flows.iter().chain(&pings).map(|r| (r.fwd, r.rev)).collect();
    Fabric::new(parts, paths, false)
}

/// The classifier of `sc`'s flows and pings (relay.rs `Classifier`: by flow, not by modem).
fn classifier_of(sc: &Scenario, modems: u32) -> Classifier {
    let flows: Vec<(u32, bool)> = sc.flows.iter().map(|f| (f.modem, f.direction == Direction::Down)).collect();
    let pings: Vec<u32> = sc.pings.iter().map(|p| p.modem).collect();
    Classifier::new(modems, &flows, &pings)
}

/// The devices' MTU: a whole data packet of the scenario (tcp.mss_bytes + tcp.header_bytes), so
/// that the kernel's MSS is the scenario's; at least IPv4's 68 (RFC 791) and at most `relay::MTU`.
pub fn mtu_of(sc: &Scenario) -> io::Result<usize> {
    let mtu = sc.tcp.mss_bytes as usize + sc.tcp.header_bytes as usize;
    if !(68..=relay::MTU).contains(&mtu) {
        return Err(io::Error::other(format!(
            "tcp.mss_bytes + tcp.header_bytes = {mtu}: the emulated devices' MTU must be 68-{} bytes",
            relay::MTU
        )));
    }
    Ok(mtu)
}

impl Session {
    /// Make the namespaces, devices, addresses and routes for `sc`; the relay does not run yet.
    pub fn open(sc: &Scenario, seed: u64, opts: Options) -> io::Result<Session> {
        let removed_stale = netns::remove_stale()?;
        let modems =
            sc.flows.iter().map(|f| f.modem + 1).chain(sc.pings.iter().map(|p| p.modem + 1)).max().unwrap_or(1);
        if modems > 65_000 {
            return Err(io::Error::other(format!("{modems} modems: at most 65,000 client addresses in 198.19.0.0/16")));
        }
        let pid = std::process::id();
        let mut s = Session {
            server_ns: netns::name(pid, 's'),
            client_ns: netns::name(pid, 'c'),
            modems,
            removed_stale,
            fds: None,
            relay: None,
            running: None,
            stop: Arc::new(AtomicBool::new(false)),
            made: Vec::new(),
            pcap: None,
        };
        // Build the fabric first: a scenario it cannot take fails before anything is made.
        let mut fabric = fabric_of(sc, seed);
        let mut capture = None;
        if let Some((path, snap_payload)) = &opts.pcap {
            let file = std::fs::File::create(path)
                .map_err(|e| io::Error::new(e.kind(), format!("--pcap {}: {e}", path.display())))?;
            s.pcap = Some((path.clone(), file));
            let bursts = fabric.capture_on().then(Vec::new);
            capture = Some(relay::Capture { snap_payload: *snap_payload, bursts, ..relay::Capture::default() });
        }
        let mtu = mtu_of(sc)?;
        let fabric = Standalone::new(fabric);
        let classifier = classifier_of(sc, modems);
        for ns in [s.server_ns.clone(), s.client_ns.clone()] {
            netns::add(&ns)?;
            s.made.push(ns.clone());
            // No IPv6 (nothing to carry it), before the devices come up.
            netns::sysctl(&ns, "net.ipv6.conf.all.disable_ipv6", "1")?;
            netns::sysctl(&ns, "net.ipv6.conf.default.disable_ipv6", "1")?;
        }
        let server_fd = netns::inside(&s.server_ns, || tun::open(DEV))?;
        let client_fd = netns::inside(&s.client_ns, || tun::open(DEV))?;
        let server = Ipv4Addr::from(relay::SERVER_ADDR);
        let first = Ipv4Addr::from(relay::client_addr(0));
        let up = |ns: &str, mut lines: Vec<String>| {
            lines.insert(0, "link set lo up".into());
            lines.insert(1, format!("link set {DEV} mtu {mtu} txqueuelen {TXQUEUELEN} up"));
            netns::ip_batch(ns, &lines)
        };
        // The stack's per-route settings, as `ip route` gives them (rtnetlink RTAX_RTO_MIN and
        // RTAX_INITCWND): the minimum RTO (tcp.min_rto_s, whole ms) and the initial window
        // (tcp.initial_window, segments), on each side's one route.
        let metrics = format!(
            "rto_min {}ms initcwnd {}",
            (sc.tcp.min_rto_s * 1e3).round().max(1.0) as u64,
            sc.tcp.initial_window
        );
        up(
            &s.server_ns,
            vec![
                format!("addr add {server}/32 dev {DEV}"),
                format!("route add 198.19.0.0/16 dev {DEV} src {server} {metrics}"),
            ],
        )?;
        let mut lines: Vec<String> =
            (0..modems).map(|m| format!("addr add {}/32 dev {DEV}", Ipv4Addr::from(relay::client_addr(m)))).collect();
        lines.push(format!("route add 198.18.0.0/16 dev {DEV} src {first} {metrics}"));
        up(&s.client_ns, lines)?;
        s.relay = Some(Relay {
            fabric,
            fds: [server_fd.as_raw_fd(), client_fd.as_raw_fd()],
            classifier,
            timing: opts.timing,
            capture,
        });
        s.fds = Some([server_fd, client_fd]);
        Ok(s)
    }

    /// Start the relay on a thread of its own.
    pub fn start(&mut self) -> io::Result<()> {
        let mut relay = self.relay.take().ok_or_else(|| io::Error::other("the relay was already started"))?;
        let stop = self.stop.clone();
        let h = std::thread::Builder::new().name("hfcsim-relay".into()).spawn(move || {
            let r = relay.run(&stop);
            (relay, r)
        })?;
        self.running = Some(h);
        Ok(())
    }

    /// Stop the relay and return its report (JSON); the namespaces stay until `close`.
    pub fn stop(&mut self) -> io::Result<String> {
        let h = self.running.take().ok_or_else(|| io::Error::other("the relay is not running"))?;
        self.stop.store(true, Ordering::Relaxed);
        let (mut relay, stats) = h.join().map_err(|_| io::Error::other("the relay thread panicked"))?;
        let stats = stats?;
        let mut tx_dropped = serde_json::Map::new();
        for (side, ns) in [("server", &self.server_ns), ("client", &self.client_ns)] {
            let v = netns::device_stat(ns, DEV, "tx_dropped").ok();
            tx_dropped.insert(side.into(), v.into());
        }
        let mut doc = report(&relay, stats, tx_dropped);
        if let (Some(c), Some((path, file))) = (relay.capture.take(), self.pcap.take()) {
            let mut w = io::BufWriter::with_capacity(1 << 20, file);
            // At most the largest IP (RFC 791) and TCP (RFC 9293) headers, 60 bytes each, and the payload kept.
            let snaplen = 60 + 60 + c.snap_payload;
            let written =
                hfcsim_core::capture::write_raw_pcapng(&c.records, &c.store, c.bursts.as_deref(), snaplen, &mut w)
                    .and_then(|n| {
                        let file = w.into_inner().map_err(|e| e.into_error())?;
                        if file.metadata()?.is_file() {
                            file.sync_all()?; // durable before the caller reads it (a device cannot sync)
                        }
                        Ok(n)
                    });
            let blocks = written.map_err(|e| io::Error::new(e.kind(), format!("--pcap {}: {e}", path.display())))?;
            doc["pcap"] = serde_json::json!({
                "path": path.display().to_string(),
                "blocks": blocks,
                "packets": c.records.len(),
                "docsis_bursts": c.bursts.as_ref().map(Vec::len),
                "missed": c.missed,
            });
        }
        Ok(doc.to_string())
    }

    /// Close the devices and remove the namespaces (also on drop).
    pub fn close(&mut self) -> io::Result<()> {
        if self.running.is_some() {
            let _ = self.stop();
        }
        self.relay = None;
        self.fds = None;
        let mut first_err = None;
        for ns in self.made.drain(..) {
            if let Err(e) = netns::delete(&ns) {
                first_err.get_or_insert(e);
            }
        }
        first_err.map_or(Ok(()), Err)
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = self.close();
    }
}

fn report(relay: &Relay, mut st: Stats, tx_dropped: serde_json::Map<String, serde_json::Value>) -> serde_json::Value {
    st.lateness.sort_unstable();
    let us = |p: f64| relay::quantile(&st.lateness, p).map(|v| v as f64 / 1e3);
    let over = |ns: u32| st.lateness.iter().rev().take_while(|&&v| v > ns).count();
    let dropped: u64 = st.drops.values().sum();
    let read = st.read[SERVER] + st.read[CLIENT];
    let written = st.written[SERVER] + st.written[CLIENT];
    serde_json::json!({
        "packets_read": {"server": st.read[SERVER], "client": st.read[CLIENT]},
        "bytes_read": {"server": st.read_bytes[SERVER], "client": st.read_bytes[CLIENT]},
        "tcp_packets_read": {"server": st.read_tcp[SERVER], "client": st.read_tcp[CLIENT]},
        "packets_written": {"server": st.written[SERVER], "client": st.written[CLIENT]},
        "packets_dropped": dropped,
        "drops": st.drops,
        "drops_by_part": st.drops_by_part,
        "unclassified": st.unclassified,
        "write_errors": st.write_errors,
        "held_at_end": st.held_at_end,
        // packets in = packets out + drops + not carried + still inside
        "balanced": read == written + st.write_errors + dropped + st.unclassified + st.held_at_end,
        "lateness_us": {"p50": us(0.5), "p99": us(0.99), "p99.9": us(0.999),
                         "max": st.lateness.last().map(|&v| v as f64 / 1e3),
                         "over_1ms": over(1_000_000), "n": st.lateness.len()},
        "tun_tx_dropped": tx_dropped,
        "sched_fifo": st.fifo,
        "cpu": st.cpu,
        "spin_us": relay.timing.spin_ns as f64 / 1e3,
        "wall_s": st.wall_s,
        "relay_cpu_s": st.cpu_s,
        "wakeups": st.wakeups,
    })
}
