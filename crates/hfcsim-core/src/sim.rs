//! The world: runs the event loop over a network built by `topology`, wires the TCP endpoints
//! of each flow to its routes, and collects metrics.

use crate::access::StationMetrics;
use crate::apps::{self, App, Cmd};
use crate::capture::{self, Captured, UpCaptured};
use crate::fabric::{self, Clock, Fabric, Leg, NetOut, Why};
use crate::metrics::{EndReason, EngineMetrics, FlowMetrics, PingRecord, RttMeter, Trace};
use crate::net::{Element, Role};
use crate::packet::{tcp_flags, Ecn, Kind, Packet, Way};
use crate::realtime::{Session, WayRecord, GRACE};
use crate::rng::{component, Stream};
use crate::scenario::{Direction, Opener, Scenario, TimerKind};
use crate::sched::EventQueue;
use crate::slab::Slab;
use crate::tcp::push::PushMarks;
use crate::tcp::receiver::{self, Receiver, ReceiverConfig, SackBlocks};
use crate::tcp::rto::Rto;
use crate::tcp::sender::{self, Action, Sender, SenderConfig};
use crate::tcp::{round_buffer, MAX_SCALED_WINDOW, TIMESTAMP_OPTION_BYTES};
use crate::time::{secs_to_nanos, Nanos, SimTime};
use crate::topology;

#[derive(Clone, Copy, Debug, Default)]
pub struct RunOptions {
    /// Record the per-packet trace.
    pub trace: bool,
    /// Record every packet sent and delivered, for a capture (capture/).
    pub pcap: bool,
}

#[derive(Debug)]
pub struct Output {
    pub flows: Vec<FlowMetrics>,
    pub engine: EngineMetrics,
    /// One row per upstream station; empty with the FIFO upstream.
    pub stations: Vec<StationMetrics>,
    /// Every echo of every ping, in ping then sequence order.
    pub pings: Vec<PingRecord>,
    /// Each game's summary per way, up then down, in game order (realtime.rs `WayRecord`).
    pub games: Vec<WayRecord>,
    /// Each call's, with its E-model R-factor and MOS.
    pub calls: Vec<WayRecord>,
    pub trace: Option<Trace>,
    /// With `RunOptions::pcap`: every packet as its endpoint sent or received it, in time order.
    pub capture: Option<Vec<Captured>>,
    /// With `RunOptions::pcap` and a DOCSIS upstream: every burst its headend received.
    pub bursts: Option<Vec<UpCaptured>>,
    /// The applications (`[[web]]`, `[[video]]`, `[[rpm]]`) as they ended, in scenario order: web
    /// sessions first, then video players, then responsiveness tests (apps/).
    pub apps: Vec<App>,
    /// Their results as rows (pages, videos, segments, rpm).
    pub app_rows: apps::AppRows,
}

#[derive(Clone, Copy, Debug)]
enum Ev {
    FlowStart(u32),
    /// A packet reaches element `route[hop]` of its route (the fabric's).
    Arrive(Packet),
    /// A packet reaches its endpoint.
    Deliver(Packet),
    SenderTimer(u32),
    ReceiverTimer(u32),
    /// A timed part of the fabric has something due.
    Due(u32),
    /// A report of the fabric is due (`Clock::report`).
    Report(u32),
    /// A ping's next echo is due.
    Ping(u32),
    /// A game's or call's next packets (both ways) are due, or its grace after the last has passed.
    Realtime(u32),
    /// `sim.measure_from_s`: the statistics that skip a warm-up start counting.
    Measure,
    /// An application starts.
    AppStart(u32),
    /// An application asked to be woken now (`apps::Cmd::Wake`).
    AppWake(u32),
}

#[derive(Clone, Copy, Debug, Default)]
struct Counters {
    data_lost: u64,
    acks_lost: u64,
    cm_buffer_drops: u64,
    queue_drops: u64,
    mac_drops: u64,
    epd_drops: u64,
    aqm_drops: u64,
}

#[derive(Clone)]
struct FlowRt {
    sender: Sender,
    receiver: Receiver,
    fwd: u32,
    rev: u32,
    opener_is_sender: bool,
    handshake: bool,
    start: SimTime,
    /// Packet numbers whose first transmission is dropped (sorted).
    drop_packets: Vec<u32>,
    counters: Counters,
    rtt: RttMeter,
    /// Bytes delivered in order when the measurement started (`sim.measure_from_s`).
    measured_base: u64,
    /// The upstream station its upstream packets use.
    station: Option<u32>,
    sender_timer_at: Option<SimTime>,
    receiver_timer_at: Option<SimTime>,
    done: bool,
    /// The segments the sender marks with PSH, when the receiver reads them (`receiver.ack_on_push`).
    push: Option<Box<PushMarks>>,
    /// The flow's packets in the network (sent, neither delivered nor dropped).
    in_flight: u32,
    /// When its sender last sent data (new or again), or the flow started.
    last_data_at: SimTime,
    /// When and how it stalled (`EndReason::Stalled`); its events are ignored from then on.
    stalled: Option<(SimTime, Stall)>,
    /// The slowest rate on its data path, bit/s (`path_rate_bps`).
    path_rate_bps: f64,
    /// The application connection it is a stream of (`ConnRt`), or `NO_CONN`.
    conn: u32,
}

/// `FlowRt::conn` of a scenario's own flow.
const NO_CONN: u32 = u32::MAX;

/// An application connection (apps/mod.rs): the server's stream to the client (`down`, with the
/// handshake) and the client's to the server (`up`), two flows.
struct ConnRt {
    app: u32,
    /// Its number within its application.
    local: u32,
    down: u32,
    up: u32,
    opened: bool,
    /// Bytes received in order, reported to the application: at the client (of `down`), at the
    /// server (of `up`).
    delivered: [u64; 2],
    /// When the client and the server last received a segment of the connection (Net/3's t_idle
    /// counts from it; `Sender::write`).
    heard: [SimTime; 2],
    /// The application waits for room in the socket of `down`'s sender (the server's) and of
    /// `up`'s (the client's) (`Cmd::WantWrite`).
    want: [bool; 2],
}

/// An application and the flows its connections are cloned from.
struct AppRt {
    app: App,
    /// The template flows of its connections (down, up): never started themselves.
    template: [u32; 2],
    /// Its connections, by number.
    conns: Vec<u32>,
    open: bool,
}

/// How a flow stalled (`EndReason::Stalled`), or an application closed it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stall {
    /// An application closed its connection: its events are ignored from now on.
    Closed,
    /// Nothing is left to happen to it: no timer at either end, no packet in flight.
    Idle,
    /// For `STALL_AFTER` its sender has sent no data, only window probes into a closed window.
    WindowClosed,
}

/// How long a flow may send nothing but window probes before it counts as stalled: chosen, 600 s, five
/// times TCP_RTO_MAX (Linux's largest probe interval; Net/3's is TCPTV_PERSMAX, 60 s), so that at
/// least five probes have found the window closed. With the receiving application reading at once, a
/// window that stays closed that long never opens (issue 36).
const STALL_AFTER: Nanos = 600 * crate::time::NANOS_PER_SEC;

/// A ping (Nguyen & Armitage Sec. III.A): echoes `interval` apart from `start`, until `stop` or
/// `after` past the end of the last TCP flow. It is the endpoint `ping_base + i` of packets.
/// An echo's way one direction: its legs summed, and where it waited longest.
#[derive(Clone, Copy, Debug, Default)]
struct Journey {
    sum: Leg,
    worst: Option<(Element, Nanos)>,
}

struct PingRt {
    interval: Nanos,
    stop: Option<SimTime>,
    after: Nanos,
    ip_bytes: u32,
    /// The echoes carry DSCP 45, NQB (`pings.*.nqb`).
    nqb: bool,
    /// Send time and RTT of each echo sent.
    sent: Vec<(SimTime, Option<Nanos>)>,
    /// Each echo's upstream one-way delay: from the client's send to the server's receipt (None:
    /// not received while the ping ran). The server answers at once, so the downstream one-way
    /// delay is the RTT less this.
    up: Vec<Option<Nanos>>,
    /// Each echo's journey (fabric.rs `Leg`), up and down: its legs summed, and where it waited
    /// longest (the element and its wait).
    legs: Vec<[Journey; 2]>,
    /// Each echo: dropped on its way (there or back).
    dropped: Vec<bool>,
    counters: Counters,
    open: bool,
}

/// The fabric's future work goes on the run's one event queue, so that it interleaves with the
/// endpoints' in one (time, insertion) order.
impl Clock for EventQueue<Ev> {
    #[inline(always)]
    fn arrive(&mut self, at: SimTime, pkt: Packet) {
        self.push(at, Ev::Arrive(pkt));
    }
    #[inline(always)]
    fn deliver(&mut self, at: SimTime, pkt: Packet) {
        self.push(at, Ev::Deliver(pkt));
    }
    fn due(&mut self, at: SimTime, part: u32) {
        self.push(at, Ev::Due(part));
    }
    #[cold]
    fn report(&mut self, at: SimTime, record: u32) {
        self.push(at, Ev::Report(record));
    }
}

struct World {
    now: SimTime,
    queue: EventQueue<Ev>,
    /// The network: links, queues, upstream channels and the routes across them.
    fabric: Fabric,
    flows: Vec<FlowRt>,
    /// The scenario's own flows: `flows[..own_flows]`; then the applications' template flows, a
    /// placeholder for each ping's endpoint, and the applications' connections as they open.
    own_flows: usize,
    /// The first ping's endpoint.
    ping_base: u32,
    pings: Vec<PingRt>,
    apps: Vec<AppRt>,
    conns: Vec<ConnRt>,
    app_out: Vec<Cmd>,
    /// The games, then the calls: endpoints `ping_base + pings.len() + i` (realtime.rs).
    realtime: Vec<Session>,
    /// Drops of the games' and calls' packets, by why (not reported: a session's rows count what
    /// its receiver got).
    realtime_counters: Counters,
    header_bytes: u32,
    /// RFC 7323 timestamps: 12 option bytes on every segment (`tcp.timestamps`).
    option_bytes: u32,
    /// The SACK blocks of ACKs in flight, by `Kind::Ack::sack` - 1.
    sacks: Slab<SackBlocks>,
    trace: Option<Trace>,
    capture: Option<Vec<Captured>>,
    /// `--pcap` on a DOCSIS upstream: the bursts its headend received (capture/).
    bursts: Option<Vec<UpCaptured>>,
    events: u64,
    /// Flows and pings still running: the run ends when none is.
    flows_open: usize,
    /// TCP flows still running, and when the last one ended.
    tcp_open: usize,
    tcp_done_at: SimTime,
    sender_out: Vec<sender::Out>,
    receiver_out: Vec<receiver::Action>,
    measure_from: SimTime,
}

/// A choice's name as the scenario writes it.
fn wire_name(v: &impl serde::Serialize) -> String {
    serde_json::to_value(v).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default()
}

/// The scenario's applications as the engine runs them: web sessions, then video players, then
/// responsiveness tests.
fn apps_of(sc: &Scenario) -> Vec<App> {
    let at = |s: f64| SimTime(secs_to_nanos(s));
    let tls = |n: u32| apps::Tls { round_trips: n };
    let mut out = Vec::with_capacity(sc.web.len() + sc.video.len());
    for w in &sc.web {
        let page = match w.profile {
            Some(p) => apps::web::Page::profile(&wire_name(&p)).expect("a profile of the schema's choices"),
            None => apps::web::Page {
                document: w.document_bytes as u64,
                objects: w.objects.iter().map(|&b| b as u64).collect(),
                subobjects: w.subobjects.iter().map(|&b| b as u64).collect(),
                hosts: w.hosts,
            },
        };
        out.push(App::Web(apps::web::Session::new(apps::web::WebSpec {
            modem: w.modem,
            page,
            http2: w.http == 2,
            connections_per_host: w.connections_per_host,
            tls: tls(w.tls_round_trips),
            request_bytes: w.request_bytes as u64,
            response_header_bytes: w.response_header_bytes as u64,
            pages: w.pages,
            think: secs_to_nanos(w.think_s),
            start: at(w.start_s),
            stop: w.stop_s.map(at),
        })));
    }
    for v in &sc.video {
        let bitrates_bps = match &v.bitrates_bps {
            Some(b) => b.iter().map(|&r| r as u64).collect(),
            None => {
                let name = wire_name(&v.ladder);
                apps::video::LADDERS
                    .iter()
                    .find(|l| l.name == name)
                    .expect("a ladder of the schema's")
                    .bitrates_bps
                    .to_vec()
            }
        };
        let abr = match v.abr {
            crate::scenario::AbrRule::Throughput => apps::video::Abr::Throughput { safety: v.safety },
            crate::scenario::AbrRule::Bba => {
                apps::video::Abr::Bba { reservoir_s: v.bba_reservoir_s, cushion_s: v.bba_cushion_s }
            }
        };
        out.push(App::Video(apps::video::Player::new(apps::video::VideoSpec {
            modem: v.modem,
            start: at(v.start_s),
            duration_s: v.duration_s,
            segment_s: v.segment_s,
            bitrates_bps,
            abr,
            buffer_s: v.buffer_s,
            top_buffer_s: v.top_buffer_s,
            tls: tls(v.tls_round_trips),
            request_bytes: v.request_bytes as u64,
            response_header_bytes: v.response_header_bytes as u64,
        })));
    }
    for r in &sc.rpm {
        out.push(App::Rpm(apps::rpm::Test::new(apps::rpm::RpmSpec {
            modem: r.modem,
            start: at(r.start_s),
            idle: secs_to_nanos(r.idle_s),
            connections: r.connections,
            duration: secs_to_nanos(r.duration_s),
            warmup: secs_to_nanos(r.warmup_s),
            probe_interval: secs_to_nanos(r.probe_interval_s).max(1),
            tls: tls(r.tls_round_trips),
            request_bytes: r.request_bytes as u64,
            response_header_bytes: r.response_header_bytes as u64,
        })));
    }
    out
}

/// The games, then the calls, as sessions on their routes (`routes`: theirs, after the pings'), their
/// paths added to the fabric's and their first packets planned. A fixed-rate stream draws nothing
/// random: its packets leave at start + k / rate exactly.
fn realtime_sessions(
    sc: &Scenario,
    routes: &[topology::FlowRoutes],
    paths: &mut Vec<(u32, u32)>,
    queue: &mut EventQueue<Ev>,
) -> Vec<Session> {
    let sessions: Vec<Session> = sc.games.iter().map(Session::game).chain(sc.calls.iter().map(Session::call)).collect();
    for (i, (s, r)) in sessions.iter().zip(routes).enumerate() {
        paths.push((r.fwd, r.rev));
        queue.push(s.start, Ev::Realtime(i as u32));
    }
    sessions
}

/// Clock phases of one host: its slow (retransmission) timer and its fast (delayed-ACK) timer
/// tick at fixed multiples from a random boot phase.
struct HostClock {
    slow_phase: Nanos,
    fast_phase: Nanos,
}

fn host_clock(seed: u64, host: u64, slow: Nanos, fast: Nanos) -> HostClock {
    let mut s = Stream::new(seed, component::host_clock(host));
    HostClock { slow_phase: s.below(slow), fast_phase: s.below(fast) }
}

/// Run one scenario with one seed.
pub fn run(sc: &Scenario, seed: u64, opts: RunOptions) -> Output {
    run_interruptible(sc, seed, opts, || false).expect("never interrupted")
}

/// Events between two calls of the interrupt check (about 25 ms of wall time).
const CHECK_EVERY_EVENTS: u64 = 1 << 18;

/// As `run`, asking `interrupted` every 2^18 events whether to stop (Ctrl-C from Python);
/// `None` when it said yes.
/// Generic rather than `dyn`: a trait object here costs a quarter of the engine's speed, because it
/// keeps the event loop from being specialised and inlined into the caller.
pub fn run_interruptible(
    sc: &Scenario,
    seed: u64,
    opts: RunOptions,
    mut interrupted: impl FnMut() -> bool,
) -> Option<Output> {
    let wall = std::time::Instant::now();
    let mut w = World::build(sc, seed, opts);
    let limit = SimTime(secs_to_nanos(sc.sim.time_limit_s));
    // Run in batches so the hot loop itself carries no interrupt test.
    while w.run_batch(limit, CHECK_EVERY_EVENTS) {
        if interrupted() {
            return None;
        }
    }
    // Background arrivals the MACs have not yet needed to take in (Upstream::take_background_until) count.
    w.fabric.take_background_until(w.now);
    let engine = EngineMetrics {
        events: w.events,
        simulated_s: w.now.as_secs_f64(),
        wall_s: wall.elapsed().as_secs_f64(),
        mac: w.fabric.mac_metrics(),
        channels: w.fabric.channel_metrics(),
        switches: w.fabric.switch_stats(),
        queues: w.fabric.queue_metrics(),
        places: w.fabric.places(),
    };
    let stations = w.fabric.station_metrics();
    let flows = w.flows[..w.own_flows].iter().enumerate().map(|(i, f)| w.flow_metrics(i, f, &stations)).collect();
    let pings = w.ping_records();
    let n_games = sc.games.len();
    let rows = |s: &[Session]| s.iter().enumerate().flat_map(|(i, r)| r.rows(i as u32)).collect::<Vec<_>>();
    let (games, calls) = (rows(&w.realtime[..n_games]), rows(&w.realtime[n_games..]));
    if let Some(tr) = w.trace.as_mut() {
        for e in w.fabric.take_mac_trace() {
            tr.push_mac(&e);
        }
    }
    let trace = w.trace.take().map(Trace::sorted);
    let capture = w.capture.take();
    let bursts = w.bursts.take();
    let apps: Vec<App> = w.apps.into_iter().map(|a| a.app).collect();
    let app_rows = apps::AppRows::of(&apps, w.now);
    Some(Output { flows, engine, stations, pings, games, calls, trace, capture, bursts, apps, app_rows })
}

impl World {
    /// Process up to `max_events` events. Returns true if the run is not over (flows open, events
    /// left, time limit not reached) when the batch ends.
    fn run_batch(&mut self, limit: SimTime, max_events: u64) -> bool {
        for _ in 0..max_events {
            if self.flows_open == 0 {
                return false;
            }
            let Some((t, ev)) = self.queue.pop() else { return false };
            if t > limit {
                self.now = limit;
                return false;
            }
            self.now = t;
            self.events += 1;
            self.handle(ev);
        }
        self.flows_open > 0
    }

    fn build(sc: &Scenario, seed: u64, opts: RunOptions) -> World {
        let tcp = &sc.tcp;
        // Net/3 tcp_mss: buffers rounded to whole segments, MSS no larger than a buffer.
        // RFC 7323 timestamps take 12 of the segment's bytes (Linux's mss_cache is the MSS less
        // the options it sends on every segment, TCPOLEN_TSTAMP_ALIGNED).
        let option_bytes: u32 = if tcp.timestamps { TIMESTAMP_OPTION_BYTES } else { 0 };
        let mss0 = (tcp.mss_bytes - option_bytes) as u64;
        let (mss, send_buffer, receive_buffer) = if sc.receiver.linux_window {
            linux_mss_and_buffers(sc, mss0, option_bytes)
        } else {
            let mss = mss0.min(tcp.send_buffer_bytes).min(sc.receiver.receive_buffer_bytes);
            let (_, send_buffer) = round_buffer(mss, tcp.send_buffer_bytes, tcp.buffer_rounding);
            let (_, receive_buffer) = round_buffer(mss, sc.receiver.receive_buffer_bytes, tcp.buffer_rounding);
            (mss, send_buffer, receive_buffer)
        };
        let data_packet = mss as u32 + tcp.header_bytes + option_bytes;

        // Each application's connections follow the routes of two template flows on its modem,
        // down and up, appended after the scenario's own flows (apps/mod.rs).
        let app_specs = apps_of(sc);
        let own_flows = sc.flows.len();
        let with_apps;
        let topo_sc = if app_specs.is_empty() {
            sc
        } else {
            let mut t = sc.clone();
            let template = Scenario::defaults("hfc").flows.remove(0);
            for a in &app_specs {
                for (direction, handshake) in [(Direction::Down, true), (Direction::Up, false)] {
                    t.flows.push(crate::scenario::Flow {
                        modem: a.modem(),
                        direction,
                        opener: Opener::Client,
                        handshake,
                        // Nothing to send until the application writes (`Sender::write`).
                        bytes: 0,
                        ..template.clone()
                    });
                }
            }
            with_apps = t;
            &with_apps
        };
        let (parts, flow_routes, ping_routes) = topology::build(topo_sc, seed, data_packet).into_parts();

        let tick = secs_to_nanos(tcp.tick_s).max(1);
        let fast = secs_to_nanos(sc.receiver.delack_tick_s).max(1);
        // Host 0 is the server, host 1 + m the PC behind modem m. A host's phases depend only on
        // (seed, host), so each flow derives its two hosts' clocks itself.
        let server = host_clock(seed, 0, tick, fast);
        let rto_for = |clock: &HostClock| match tcp.timer {
            TimerKind::Bsd => Rto::bsd_with_min(tick, clock.slow_phase, tcp.min_rto_ticks as i64),
            TimerKind::Rfc6298 => match tcp.initial_rto_s {
                Some(initial) => Rto::rfc6298_with_initial(secs_to_nanos(tcp.min_rto_s), secs_to_nanos(initial)),
                None => Rto::rfc6298(secs_to_nanos(tcp.min_rto_s)),
            },
            // ns-2 TcpAgent::reset: `boot_time_ = Random::uniform(tcp_tick_)`, one per agent: the
            // host's slow-clock phase.
            TimerKind::Ns2 => Rto::ns2(tick, clock.slow_phase, tcp.initial_rto_s.map(secs_to_nanos)),
            // Linux TCP_TIMEOUT_INIT: 1 s.
            TimerKind::Linux => {
                Rto::linux(secs_to_nanos(tcp.min_rto_s), secs_to_nanos(tcp.initial_rto_s.unwrap_or(1.0)))
            }
        };

        let mut flows = Vec::with_capacity(topo_sc.flows.len());
        let mut queue = EventQueue::default();
        for (i, f) in topo_sc.flows.iter().enumerate() {
            let app_flow = i >= own_flows;
            let pc = host_clock(seed, 1 + f.modem as u64, tick, fast);
            let (snd_host, rcv_host) = match f.direction {
                Direction::Down => (&server, &pc),
                Direction::Up => (&pc, &server),
            };
            // flows.congestion_control / flows.ecn: this flow's own, the stack's other rules.
            let own = tcp.for_flow(f);
            let ftcp = own.as_ref().unwrap_or(tcp);
            let mut scfg = SenderConfig::new(ftcp, mss, send_buffer);
            scfg.cc_stream = (seed, crate::rng::component::bbr_cycle(i as u64));
            if app_flow {
                // Browsers and web servers set TCP_NODELAY (Chromium's sockets, nginx's
                // `tcp_nodelay on` default): an application's small writes go at once.
                scfg.nagle = false;
            }
            let rcfg = ReceiverConfig {
                rules: sc.receiver.clone(),
                mss,
                receive_buffer,
                delack_tick: fast,
                delack_phase: rcv_host.fast_phase,
                // RFC 2018: 40 option bytes hold 4 blocks, 3 beside the 12-byte timestamps.
                sack_blocks: match (tcp.sack, tcp.timestamps) {
                    (false, _) => 0,
                    (true, false) => 4,
                    (true, true) => 3,
                },
                max_window: if tcp.window_scaling { MAX_SCALED_WINDOW } else { 65_535 },
            };
            let topology::FlowRoutes { fwd, rev } = flow_routes[i];
            let mut drop_packets = f.drop_packets.clone();
            drop_packets.sort_unstable();
            let opener_is_sender =
                matches!((f.opener, f.direction), (Opener::Server, Direction::Down) | (Opener::Client, Direction::Up));
            let start = SimTime(secs_to_nanos(f.start_s));
            flows.push(FlowRt {
                sender: Sender::new(scfg, f.bytes, f.http_header_bytes, rto_for(snd_host)),
                receiver: Receiver::new(rcfg, f.bytes, rto_for(rcv_host))
                    .with_ecn(ftcp.ecn)
                    .with_dsack(ftcp.dsack)
                    .with_own_mss(mss0, mss0 + option_bytes as u64),
                fwd,
                rev,
                opener_is_sender,
                handshake: f.handshake,
                start,
                drop_packets,
                counters: Counters::default(),
                rtt: RttMeter::default(),
                measured_base: 0,
                station: None,
                sender_timer_at: None,
                receiver_timer_at: None,
                done: false,
                push: sc.receiver.ack_on_push.then(|| Box::new(PushMarks::new(f.bytes, mss, send_buffer))),
                in_flight: 0,
                last_data_at: start,
                stalled: None,
                path_rate_bps: path_rate_bps(sc, f, data_packet),
                conn: NO_CONN,
            });
            if !app_flow {
                queue.push(start, Ev::FlowStart(i as u32));
            }
        }
        let mut paths: Vec<(u32, u32)> = flows.iter().map(|f: &FlowRt| (f.fwd, f.rev)).collect();
        let mut pings = Vec::with_capacity(sc.pings.len());
        for (i, (p, r)) in sc.pings.iter().zip(&ping_routes).enumerate() {
            paths.push((r.fwd, r.rev));
            pings.push(PingRt {
                interval: secs_to_nanos(p.interval_s).max(1),
                stop: p.stop_s.map(|s| SimTime(secs_to_nanos(s))),
                after: secs_to_nanos(p.after_s),
                ip_bytes: p.ip_bytes,
                nqb: p.nqb,
                sent: Vec::new(),
                up: Vec::new(),
                legs: Vec::new(),
                dropped: Vec::new(),
                counters: Counters::default(),
                open: true,
            });
            queue.push(SimTime(secs_to_nanos(p.start_s)), Ev::Ping(i as u32));
        }
        let realtime = realtime_sessions(sc, &ping_routes[pings.len()..], &mut paths, &mut queue);
        // A placeholder flow for each ping's, game's and call's endpoint, so that the connections the
        // applications open later are endpoints after theirs (never touched: `is_datagram`).
        let ping_base = flows.len() as u32;
        if !app_specs.is_empty() {
            for _ in 0..pings.len() + realtime.len() {
                flows.push(flows[own_flows].clone());
            }
        }
        let mut apps = Vec::with_capacity(app_specs.len());
        for (i, app) in app_specs.into_iter().enumerate() {
            let t = (own_flows + 2 * i) as u32;
            queue.push(app.start_at(), Ev::AppStart(i as u32));
            apps.push(AppRt { app, template: [t, t + 1], conns: Vec::new(), open: true });
        }
        let measure_from = SimTime(secs_to_nanos(sc.sim.measure_from_s));
        if measure_from > SimTime::ZERO {
            queue.push(measure_from, Ev::Measure);
        }
        let mut fabric = Fabric::new(parts, paths, opts.trace);
        for (i, f) in flows.iter_mut().enumerate() {
            f.station = fabric.station_of(i as u32);
        }
        fabric.start(&mut queue);
        let bursts = (opts.pcap && fabric.capture_on()).then(Vec::new);
        World {
            now: SimTime::ZERO,
            queue,
            fabric,
            flows_open: own_flows + pings.len() + realtime.len() + apps.len(),
            tcp_open: own_flows,
            tcp_done_at: SimTime::ZERO,
            flows,
            own_flows,
            ping_base,
            pings,
            apps,
            conns: Vec::new(),
            app_out: Vec::new(),
            realtime,
            realtime_counters: Counters::default(),
            header_bytes: tcp.header_bytes,
            option_bytes,
            sacks: Slab::default(),
            trace: opts.trace.then(Trace::default),
            capture: opts.pcap.then(Vec::new),
            bursts,
            events: 0,
            sender_out: Vec::with_capacity(64),
            receiver_out: Vec::with_capacity(8),
            measure_from,
        }
    }

    fn handle(&mut self, ev: Ev) {
        match ev {
            Ev::FlowStart(f) => self.start_flow(f),
            Ev::Arrive(pkt) => {
                self.fabric.arrive(self.now, pkt, &mut self.queue);
                self.net_outputs();
            }
            Ev::Deliver(pkt) => self.deliver(pkt),
            Ev::SenderTimer(f) => {
                let flow = &mut self.flows[f as usize];
                if flow.sender_timer_at == Some(self.now) {
                    flow.sender_timer_at = None;
                }
                if flow.stalled.is_some() {
                    return;
                }
                let mut out = std::mem::take(&mut self.sender_out);
                flow.sender.on_timer(self.now, &mut out);
                self.sender_actions(f, &mut out);
                self.sender_out = out;
                self.check_idle(f);
            }
            Ev::ReceiverTimer(f) => {
                let flow = &mut self.flows[f as usize];
                if flow.receiver_timer_at == Some(self.now) {
                    flow.receiver_timer_at = None;
                }
                if flow.stalled.is_some() {
                    return;
                }
                let mut out = std::mem::take(&mut self.receiver_out);
                flow.receiver.on_timer(self.now, &mut out);
                self.receiver_actions(f, &mut out);
                self.receiver_out = out;
                self.check_idle(f);
            }
            Ev::Due(part) => {
                self.fabric.on_due(self.now, part, &mut self.queue);
                self.net_outputs();
            }
            Ev::Report(record) => {
                self.fabric.report_due(record);
                self.net_outputs();
            }
            Ev::Ping(p) => self.ping_tick(p),
            Ev::AppStart(a) => self.app_call(a, |app, now, out| app.start(now, out)),
            Ev::AppWake(a) => self.app_call(a, |app, now, out| app.wake(now, out)),
            Ev::Realtime(s) => self.realtime_tick(s),
            Ev::Measure => {
                for f in &mut self.flows {
                    f.measured_base = f.receiver.rcv_nxt.min(f.receiver.total());
                }
                self.fabric.measure_from_now();
            }
        }
    }

    fn start_flow(&mut self, f: u32) {
        let now = self.now;
        let flow = &mut self.flows[f as usize];
        let mut sout = std::mem::take(&mut self.sender_out);
        let mut rout = std::mem::take(&mut self.receiver_out);
        if !flow.handshake {
            flow.receiver.establish();
            let wnd = flow.receiver.window();
            flow.sender.establish(now, wnd, &mut sout);
        } else if flow.opener_is_sender {
            flow.sender.connect(now, &mut sout);
        } else {
            flow.receiver.connect(now, &mut rout);
        }
        self.sender_actions(f, &mut sout);
        self.receiver_actions(f, &mut rout);
        self.sender_out = sout;
        self.receiver_out = rout;
    }

    /// Turn the sender's actions into packets and trace rows, then re-arm its timer.
    fn sender_actions(&mut self, f: u32, out: &mut Vec<sender::Out>) {
        let hdr = self.header_bytes + self.option_bytes;
        for o in out.drain(..) {
            let (mut ecn, mut flags) = (Ecn::NotEct, 0);
            let (kind, size, chosen_drop, trace_ev) = match o.action {
                Action::Syn => {
                    flags = self.flows[f as usize].sender.handshake_flags(false);
                    (Kind::Syn, hdr, false, "syn")
                }
                Action::SynAck => {
                    flags = self.flows[f as usize].sender.handshake_flags(true);
                    (Kind::SynAck, hdr, false, "synack")
                }
                Action::Segment { seq, len, pkt_no, retransmit, ecn: e, cwr } => {
                    let now = self.now;
                    let flow = &mut self.flows[f as usize];
                    flow.last_data_at = now;
                    flow.rtt.on_send(now, seq, seq + len as u64, retransmit);
                    let chosen_drop = !retransmit && flow.drop_packets.binary_search(&pkt_no).is_ok();
                    let ev = if retransmit { "retransmit" } else { "send" };
                    ecn = e;
                    if cwr {
                        flags = tcp_flags::CWR;
                    }
                    if let Some(push) = &mut flow.push {
                        push.set_buffer(flow.sender.send_buffer());
                        if !push.written(seq + len as u64) {
                            push.on_ack(o.cc.snd_una, flow.sender.snd_wnd);
                        }
                        if push.marked(seq, len) {
                            flags |= tcp_flags::PSH;
                        }
                    }
                    (Kind::Data { seq, len, pkt_no }, len + hdr, chosen_drop, ev)
                }
                Action::NewAck { ack } => {
                    let (now, from) = (self.now, self.measure_from);
                    let flow = &mut self.flows[f as usize];
                    flow.rtt.on_ack(now, ack, from);
                    if let Some(push) = &mut flow.push {
                        push.set_buffer(flow.sender.send_buffer());
                        push.on_ack(ack, flow.sender.snd_wnd);
                    }
                    self.record(f, "ack", -1, ack as i64, &o.cc, -1);
                    continue;
                }
                Action::DupAck { ack, .. } => {
                    self.record(f, "dupack", -1, ack as i64, &o.cc, -1);
                    continue;
                }
                Action::FastRetransmit { seq } => {
                    self.record(f, "fast_retransmit", seq as i64, -1, &o.cc, -1);
                    continue;
                }
                Action::Timeout { seq } => {
                    self.record(f, "timeout", seq as i64, -1, &o.cc, -1);
                    continue;
                }
                // The persist timer's window probe (tcp/sender/persist.rs): a segment of no data.
                Action::WindowProbe { seq } => {
                    let flow = &self.flows[f as usize];
                    if flow.stalled.is_none() && self.now - flow.last_data_at.min(self.now) >= STALL_AFTER {
                        self.stall(f, Stall::WindowClosed);
                        continue;
                    }
                    (Kind::Data { seq, len: 0, pkt_no: 0 }, hdr, false, "window_probe")
                }
            };
            if let Kind::Data { seq, .. } = kind {
                self.record(f, trace_ev, seq as i64, o.cc.snd_una as i64, &o.cc, -1);
            }
            let pkt = Packet { flow: f, way: Way::Forward, hop: 0, size, kind, chosen_drop, ecn, flags };
            self.launch(pkt);
        }
        self.sync_sender_timer(f);
    }

    fn receiver_actions(&mut self, f: u32, out: &mut Vec<receiver::Action>) {
        let hdr = self.header_bytes + self.option_bytes;
        for a in out.drain(..) {
            let mut flags = 0;
            let (kind, size) = match a {
                receiver::Action::Syn => {
                    flags = self.flows[f as usize].receiver.handshake_flags(false);
                    (Kind::Syn, hdr)
                }
                receiver::Action::SynAck => {
                    flags = self.flows[f as usize].receiver.handshake_flags(true);
                    (Kind::SynAck, hdr)
                }
                receiver::Action::Ack { ack, wnd, ece, dsack } => {
                    if ece {
                        flags = tcp_flags::ECE;
                    }
                    // The window fits 32 bits: the receiver clamps it to the header's largest.
                    let wnd = wnd.min(u32::MAX as u64) as u32;
                    let receiver = &self.flows[f as usize].receiver;
                    let sack =
                        if receiver.cfg.sack_blocks == 0 { SackBlocks::default() } else { receiver.sack_blocks(dsack) };
                    if sack.is_empty() {
                        (Kind::Ack { ack, wnd, sack: 0 }, hdr)
                    } else {
                        // RFC 2018 Sec. 3: kind, length and 8 bytes a block, after two NOPs (Linux
                        // TCPOLEN_SACK_BASE_ALIGNED + TCPOLEN_SACK_PERBLOCK).
                        let size = hdr + 4 + 8 * sack.n as u32;
                        (Kind::Ack { ack, wnd, sack: self.store_sack(sack) }, size)
                    }
                }
            };
            // RFC 3168 Sec. 6.1.4: pure ACKs are not ECN-capable.
            let ecn = Ecn::NotEct;
            self.launch(Packet { flow: f, way: Way::Reverse, hop: 0, size, kind, chosen_drop: false, ecn, flags });
        }
        let flow = &self.flows[f as usize];
        if !flow.done && flow.receiver.completed_at.is_some() && flow.conn == NO_CONN {
            self.flow_ended(f);
        }
        self.sync_receiver_timer(f);
    }

    /// Keep one pending timer event per endpoint no later than its deadline. A later deadline
    /// leaves the earlier event in place; when it fires it finds nothing due and re-arms.
    fn sync_sender_timer(&mut self, f: u32) {
        let flow = &self.flows[f as usize];
        if flow.sender.state == sender::State::Dropped && !flow.done {
            self.flow_ended(f);
        }
        let flow = &mut self.flows[f as usize];
        if let Some(d) = flow.sender.next_deadline() {
            if flow.sender_timer_at.is_none_or(|t| d < t) {
                flow.sender_timer_at = Some(d);
                self.queue.push(d, Ev::SenderTimer(f));
            }
        }
    }

    fn sync_receiver_timer(&mut self, f: u32) {
        let flow = &self.flows[f as usize];
        if flow.receiver.state == receiver::State::Dropped && !flow.done {
            self.flow_ended(f);
        }
        let flow = &mut self.flows[f as usize];
        if let Some(d) = flow.receiver.next_deadline() {
            if flow.receiver_timer_at.is_none_or(|t| d < t) {
                flow.receiver_timer_at = Some(d);
                self.queue.push(d, Ev::ReceiverTimer(f));
            }
        }
    }

    /// TCP flow `f` has finished or given up: one endpoint fewer running, and when the last TCP
    /// flow ends the pings' `after_s` starts counting. An application's stream that gave up fails
    /// its connection.
    fn flow_ended(&mut self, f: u32) {
        let conn = self.flows[f as usize].conn;
        if conn != NO_CONN {
            let flow = &mut self.flows[f as usize];
            if !flow.done {
                flow.done = true;
                let c = &self.conns[conn as usize];
                let (app, local) = (c.app, c.local);
                self.app_call(app, |a, now, out| a.failed(now, local, out));
            }
            return;
        }
        self.flows[f as usize].done = true;
        self.flows_open -= 1;
        self.tcp_open -= 1;
        if self.tcp_open == 0 {
            self.tcp_done_at = self.now;
        }
    }

    // ---- applications (apps/) ----------------------------------------------------------------

    /// Call application `a` and carry out what it asks.
    #[cold]
    #[inline(never)]
    fn app_call(&mut self, a: u32, call: impl FnOnce(&mut App, SimTime, &mut Vec<Cmd>)) {
        let now = self.now;
        let mut out = std::mem::take(&mut self.app_out);
        if self.apps[a as usize].open {
            call(&mut self.apps[a as usize].app, now, &mut out);
        }
        for cmd in out.drain(..) {
            self.app_cmd(a, cmd);
        }
        self.app_out = out;
    }

    #[cold]
    #[inline(never)]
    fn app_cmd(&mut self, a: u32, cmd: Cmd) {
        let now = self.now;
        match cmd {
            Cmd::Open => self.open_conn(a),
            Cmd::Write { conn, to_server, bytes } => {
                let c = &self.conns[self.apps[a as usize].conns[conn as usize] as usize];
                let (f, heard) = if to_server { (c.up, c.heard[0]) } else { (c.down, c.heard[1]) };
                let flow = &mut self.flows[f as usize];
                if flow.stalled.is_some() {
                    return;
                }
                flow.receiver.expect(bytes);
                if let Some(push) = &mut flow.push {
                    push.extend(bytes);
                }
                let sent = flow.last_data_at;
                let mut out = std::mem::take(&mut self.sender_out);
                flow.sender.write(now, bytes, sender::Idle { sent, heard }, &mut out);
                self.sender_actions(f, &mut out);
                self.sender_out = out;
            }
            Cmd::Close { conn } => {
                let c = &self.conns[self.apps[a as usize].conns[conn as usize] as usize];
                for f in [c.down, c.up] {
                    let flow = &mut self.flows[f as usize];
                    flow.done = true;
                    flow.stalled.get_or_insert((now, Stall::Closed));
                }
            }
            Cmd::Wake(at) => self.queue.push(at.max(now), Ev::AppWake(a)),
            Cmd::WantWrite { conn, to_server } => {
                let id = self.apps[a as usize].conns[conn as usize];
                self.conns[id as usize].want[usize::from(to_server)] = true;
                self.check_writable(id, usize::from(to_server), true);
            }
            Cmd::Done => {
                let app = &mut self.apps[a as usize];
                if app.open {
                    app.open = false;
                    self.flows_open -= 1;
                }
            }
        }
    }

    /// Application `a` opens a connection: two new flows cloned from its templates, new endpoints
    /// on their routes; the client sends its SYN.
    #[cold]
    #[inline(never)]
    fn open_conn(&mut self, a: u32) {
        let now = self.now;
        let app = &mut self.apps[a as usize];
        let id = self.conns.len() as u32;
        let local = app.conns.len() as u32;
        app.conns.push(id);
        let template = app.template;
        let mut ends = [0u32; 2];
        for (k, t) in template.into_iter().enumerate() {
            let mut flow = self.flows[t as usize].clone();
            flow.conn = id;
            flow.start = now;
            flow.last_data_at = now;
            let e = self.fabric.add_endpoint(flow.fwd, flow.rev);
            debug_assert_eq!(e as usize, self.flows.len());
            self.flows.push(flow);
            ends[k] = e;
        }
        self.conns.push(ConnRt {
            app: a,
            local,
            down: ends[0],
            up: ends[1],
            opened: false,
            delivered: [0, 0],
            heard: [now, now],
            want: [false, false],
        });
        self.start_flow(ends[0]);
    }

    /// A segment of an application's stream `f` arrived at one end (`way`): a connection now open
    /// at the client, or bytes newly in order at the client or the server, are the application's.
    #[cold]
    #[inline(never)]
    fn app_progress(&mut self, f: u32, way: Way) {
        let now = self.now;
        let id = self.flows[f as usize].conn;
        let c = &mut self.conns[id as usize];
        let down = f == c.down;
        // Who received it: the client gets the server's data and the ACKs of its own.
        let at_client = down == (way == Way::Forward);
        c.heard[if at_client { 0 } else { 1 }] = now;
        if way != Way::Forward || self.flows[f as usize].stalled.is_some() {
            // An ACK at the sender may have made room for a writer waiting on its socket.
            let stream = usize::from(!down);
            if way == Way::Reverse && c.want[stream] && self.flows[f as usize].stalled.is_none() {
                self.check_writable(id, stream, false);
            }
            return;
        }
        let (app, local, up) = (c.app, c.local, c.up);
        if down && !c.opened && self.flows[f as usize].receiver.state == receiver::State::Established {
            c.opened = true;
            // The client's stream starts established with the connection (apps/mod.rs).
            let flow = &mut self.flows[up as usize];
            flow.receiver.establish();
            let wnd = flow.receiver.window();
            let mut out = std::mem::take(&mut self.sender_out);
            flow.sender.establish(now, wnd, &mut out);
            self.sender_actions(up, &mut out);
            self.sender_out = out;
            self.app_call(app, |a, now, out| a.opened(now, local, out));
        }
        let c = &mut self.conns[id as usize];
        let side = usize::from(!down);
        let got = self.flows[f as usize].receiver.rcv_nxt;
        if got > c.delivered[side] {
            c.delivered[side] = got;
            self.app_call(app, |a, now, out| a.delivered(now, local, !down, got, out));
        }
    }

    /// The application waiting to write on stream `stream` (0: the server's, 1: the client's) of
    /// connection `id` (`Cmd::WantWrite`): whether its sender's socket takes more now, and then how
    /// much. The socket buffer is the sender's `send_buffer` (the model's measure of it: with
    /// SO_SNDBUF B, sk_sndbuf = 2 B of memory holds about B of data, tcp/sender.rs `SndbufAuto`),
    /// and it holds the data written and not yet acknowledged, sent or not (Linux sk_wmem_queued).
    /// - A write (`first`) copies while the buffer has room (net/ipv4/tcp.c tcp_sendmsg_locked,
    ///   `sk_stream_memory_free`: sk_wmem_queued < sk_sndbuf): room = buffer - queued.
    /// - A writer that found it full sleeps (SOCK_NOSPACE, `Sender::app_blocked`) and wakes when an
    ///   ACK leaves at least a third of it free (net/core/stream.c sk_stream_write_space,
    ///   include/net/sock.h `__sk_stream_is_writeable`: sk_stream_wspace >= sk_stream_min_wspace,
    ///   free >= queued / 2).
    fn check_writable(&mut self, id: u32, stream: usize, first: bool) {
        let c = &self.conns[id as usize];
        let (app, local) = (c.app, c.local);
        let f = if stream == 0 { c.down } else { c.up };
        let flow = &mut self.flows[f as usize];
        if flow.stalled.is_some() || flow.done {
            self.conns[id as usize].want[stream] = false;
            return;
        }
        let s = &flow.sender;
        let (buffer, queued) = (s.send_buffer(), s.total() - s.snd_una.min(s.total()));
        let free = buffer.saturating_sub(queued);
        let ok = if first { free > 0 } else { free > 0 && free >= queued / 2 };
        if !ok {
            flow.sender.app_blocked = true;
            return;
        }
        flow.sender.app_blocked = false;
        self.conns[id as usize].want[stream] = false;
        let to_server = stream == 1;
        self.app_call(app, |a, now, out| a.writable(now, local, to_server, free, out));
    }

    /// Flow `f` stalled (`EndReason::Stalled`): it ends now, and its events are ignored from now on.
    fn stall(&mut self, f: u32, how: Stall) {
        let flow = &mut self.flows[f as usize];
        if flow.done || flow.stalled.is_some() {
            return;
        }
        flow.stalled = Some((self.now, how));
        self.flow_ended(f);
    }

    /// Issue 36: a flow still running that nothing can move any more (no timer at either end, no
    /// packet in flight) has stalled. Not a flow that has not started: its start event is pending.
    #[inline]
    fn check_idle(&mut self, f: u32) {
        let flow = &self.flows[f as usize];
        if flow.done || flow.in_flight > 0 || !(flow.sender.started() || flow.receiver.started()) {
            return;
        }
        // An application's connection waits, idle, for its next request.
        if flow.conn != NO_CONN {
            return;
        }
        if flow.sender.next_deadline().is_none() && flow.receiver.next_deadline().is_none() {
            self.stall(f, Stall::Idle);
        }
    }

    /// A packet leaves its endpoint now.
    fn launch(&mut self, pkt: Packet) {
        if !self.is_datagram(pkt.flow) {
            self.flows[pkt.flow as usize].in_flight += 1;
        }
        self.tap(&pkt, true);
        self.fabric.inject(self.now, pkt, &mut self.queue);
        self.net_outputs();
    }

    /// `--pcap`: record `pkt` as its endpoint sends it now (`sent`) or receives it (capture/).
    /// Off, it is one predictable branch.
    #[inline(always)]
    fn tap(&mut self, pkt: &Packet, sent: bool) {
        if let Some(c) = self.capture.as_mut() {
            capture::tap(c, self.now, pkt, sent, &self.sacks);
        }
    }

    /// `--pcap` on a DOCSIS upstream: record the bursts the headend has just received, their ACKs'
    /// SACK blocks copied while the ACKs are in flight (capture/).
    #[cold]
    #[inline(never)]
    fn tap_bursts(&mut self) {
        let Some(into) = self.bursts.as_mut() else { return };
        for (channel, b) in self.fabric.take_bursts() {
            into.push(capture::tap_burst(channel, &b, &self.sacks));
        }
    }

    /// Account for what the fabric did: per-endpoint drop counters, trace rows, and
    /// the SACK slots of ACKs it dropped.
    #[inline(always)]
    fn net_outputs(&mut self) {
        if !self.fabric.out.is_empty() {
            self.drain_net_outputs();
        }
    }

    #[inline(never)]
    fn drain_net_outputs(&mut self) {
        let mut out = std::mem::take(&mut self.fabric.out);
        for o in out.drain(..) {
            match o {
                NetOut::Dropped(d) => self.dropped(d),
                NetOut::Bursts => self.tap_bursts(),
                NetOut::Enqueued { pkt, link, held } => {
                    if let Kind::Data { seq, .. } = pkt.kind {
                        self.record_held(pkt.flow, "enqueue", seq, held, link);
                    }
                }
                NetOut::Leg { pkt, part, leg } => self.echo_leg(pkt, part, leg),
            }
        }
        self.fabric.out = out;
    }

    /// The fabric dropped a packet: count it for its endpoint, by why and where, and trace it.
    fn dropped(&mut self, d: fabric::PacketDrop) {
        let pkt = d.pkt;
        self.release(&pkt);
        if let Kind::Echo { seq, .. } = pkt.kind {
            let p = (pkt.flow - self.ping_base) as usize;
            self.pings[p].dropped[seq as usize] = true;
        }
        if self.is_datagram(pkt.flow) {
            // An echo's or a game's or call's drop counts for its session only.
        } else if let Some(flow) = self.flows.get_mut(pkt.flow as usize) {
            flow.in_flight -= 1;
            if flow.in_flight == 0 {
                self.check_idle(pkt.flow);
            }
        }
        let c = self.counters(pkt.flow);
        // The cable modem's buffer: a full link, or a service queue (with an AQM) full or choosing.
        if d.role == Some(Role::CmLan) && matches!(d.why, Why::Full | Why::Aqm) {
            c.cm_buffer_drops += 1;
        }
        let event = match d.why {
            Why::Lost => {
                match pkt.kind {
                    Kind::Data { .. } => c.data_lost += 1,
                    Kind::Ack { .. } => c.acks_lost += 1,
                    Kind::Syn | Kind::SynAck | Kind::Echo { .. } | Kind::Datagram { .. } | Kind::Raw { .. } => {}
                }
                "lost"
            }
            Why::Full => {
                c.queue_drops += 1;
                "drop"
            }
            Why::Discarded => {
                c.queue_drops += 1;
                c.epd_drops += 1;
                "epd_drop"
            }
            Why::Aqm => {
                c.queue_drops += 1;
                c.aqm_drops += 1;
                "aqm_drop"
            }
            Why::Mac => {
                c.mac_drops += 1;
                return;
            }
        };
        let Kind::Data { seq, .. } = pkt.kind else { return };
        if self.trace.is_none() {
            return;
        }
        match (d.why, d.part) {
            // A loss in transit is traced when its service ends, with no queue.
            (Why::Lost, _) => {
                let cc = self.flows[pkt.flow as usize].sender.cc();
                self.record_at(d.at, pkt.flow, event, seq as i64, -1, &cc, -1);
            }
            (_, Element::Link(link)) => self.record_held(pkt.flow, event, seq, d.held, link),
            _ => {
                let cc = self.flows[pkt.flow as usize].sender.cc();
                self.record(pkt.flow, event, seq as i64, -1, &cc, -1);
            }
        }
    }

    /// An echo passed `part`, spending `leg` there: add it to its journey that way.
    #[cold]
    fn echo_leg(&mut self, pkt: Packet, part: Element, leg: Leg) {
        let Kind::Echo { seq, .. } = pkt.kind else { return };
        if !self.is_echo(pkt.flow) {
            return;
        }
        let p = (pkt.flow - self.ping_base) as usize;
        let way = (pkt.way == Way::Reverse) as usize;
        let j = &mut self.pings[p].legs[seq as usize][way];
        j.sum.queue += leg.queue;
        j.sum.access += leg.access;
        j.sum.serialisation += leg.serialisation;
        j.sum.propagation += leg.propagation;
        let waited = leg.queue + leg.access;
        if waited > 0 && j.worst.is_none_or(|(_, w)| waited > w) {
            j.worst = Some((part, waited));
        }
    }

    /// The counters of endpoint `f`: a flow, a ping, or (all in one) the games and calls.
    fn counters(&mut self, f: u32) -> &mut Counters {
        match (f.wrapping_sub(self.ping_base)) as usize {
            p if p < self.pings.len() => &mut self.pings[p].counters,
            r if r < self.pings.len() + self.realtime.len() => &mut self.realtime_counters,
            _ => &mut self.flows[f as usize].counters,
        }
    }

    /// Whether endpoint `e` is a ping's.
    #[inline(always)]
    fn is_echo(&self, e: u32) -> bool {
        (e.wrapping_sub(self.ping_base) as usize) < self.pings.len()
    }

    /// Whether endpoint `e` sends datagrams: a ping's, a game's or a call's (no flow).
    #[inline(always)]
    fn is_datagram(&self, e: u32) -> bool {
        (e.wrapping_sub(self.ping_base) as usize) < self.pings.len() + self.realtime.len()
    }

    /// Keep an ACK's SACK blocks while it travels; the packet carries 1 + the slot.
    fn store_sack(&mut self, blocks: SackBlocks) -> u32 {
        self.sacks.insert(blocks) + 1
    }

    /// `pkt` is gone (delivered or dropped): free its SACK slot, and return its blocks.
    #[inline]
    fn release(&mut self, pkt: &Packet) -> SackBlocks {
        match pkt.kind {
            Kind::Ack { sack, .. } if sack != 0 => self.sacks.remove(sack - 1),
            _ => SackBlocks::default(),
        }
    }

    /// Ping `p`'s next echo is due: send it and plan the next, or stop.
    #[cold]
    fn ping_tick(&mut self, p: u32) {
        let now = self.now;
        let (tcp_open, tcp_done_at) = (self.tcp_open, self.tcp_done_at);
        let ping = &mut self.pings[p as usize];
        let go_on = match ping.stop {
            Some(stop) => now <= stop,
            None => tcp_open > 0 || now <= tcp_done_at + ping.after,
        };
        if !go_on {
            // The ping stops: an echo not answered by now (at least one interval after the last was
            // sent) stays unanswered, and a reply arriving later is not counted (chosen).
            ping.open = false;
            self.flows_open -= 1;
            return;
        }
        let seq = ping.sent.len() as u32;
        ping.sent.push((now, None));
        ping.up.push(None);
        ping.legs.push(Default::default());
        ping.dropped.push(false);
        let size = ping.ip_bytes;
        self.queue.push(now + ping.interval, Ev::Ping(p));
        let flow = self.ping_base + p;
        let kind = Kind::Echo { seq, nqb: ping.nqb };
        self.launch(Packet {
            flow,
            way: Way::Forward,
            hop: 0,
            size,
            kind,
            chosen_drop: false,
            ecn: Ecn::NotEct,
            flags: 0,
        });
    }

    /// An echo reaches an end of its path: the server answers a request at once; a reply gives
    /// the client its RTT.
    #[cold]
    fn deliver_echo(&mut self, pkt: Packet) {
        let Kind::Echo { seq, .. } = pkt.kind else { return };
        match pkt.way {
            Way::Forward => {
                let now = self.now;
                let ping = &mut self.pings[(pkt.flow - self.ping_base) as usize];
                if ping.open {
                    ping.up[seq as usize] = Some(now - ping.sent[seq as usize].0);
                }
                // RFC 792: the reply carries the request's data, and (chosen, as Linux's
                // icmp_reply does with the request's TOS) its DSCP; the ECN field starts afresh.
                self.launch(Packet { way: Way::Reverse, hop: 0, ecn: Ecn::NotEct, ..pkt })
            }
            Way::Reverse => {
                let now = self.now;
                let ping = &mut self.pings[(pkt.flow - self.ping_base) as usize];
                if ping.open {
                    let (sent, rtt) = &mut ping.sent[seq as usize];
                    *rtt = Some(now - *sent);
                }
            }
        }
    }

    /// Game or call `s`'s next packets are due: send one each way and plan the next; or, past its
    /// stop, wait `GRACE` for the last ones, then end.
    #[cold]
    fn realtime_tick(&mut self, s: u32) {
        let now = self.now;
        let (tcp_open, tcp_done_at) = (self.tcp_open, self.tcp_done_at);
        let rt = &mut self.realtime[s as usize];
        if rt.stopping {
            rt.open = false;
            self.flows_open -= 1;
            return;
        }
        // As a ping's (ping_tick): until stop_s, or after_s past the last TCP flow's end.
        let go_on = match rt.stop {
            Some(stop) => now <= stop,
            None => tcp_open > 0 || now <= tcp_done_at + rt.after,
        };
        if !go_on {
            rt.stopping = true;
            self.queue.push(now + GRACE, Ev::Realtime(s));
            return;
        }
        // Packet `seq` of each way leaves at start + seq * interval (what `deliver_datagram` reads).
        let seq = rt.ways[0].sent as u32;
        rt.ways[0].sent += 1;
        rt.ways[1].sent += 1;
        let (sizes, nqb) = (rt.ip_bytes, rt.nqb);
        self.queue.push(now + rt.interval, Ev::Realtime(s));
        let flow = self.ping_base + (self.pings.len() + s as usize) as u32;
        let kind = Kind::Datagram { seq, nqb };
        // Client -> server on the forward route, server -> client on the reverse, independently.
        for (way, size) in [(Way::Forward, sizes[0]), (Way::Reverse, sizes[1])] {
            self.launch(Packet { flow, way, hop: 0, size, kind, chosen_drop: false, ecn: Ecn::NotEct, flags: 0 });
        }
    }

    /// Datagram `seq` of endpoint `flow` reached the end of its way: its one-way delay counts.
    #[cold]
    fn deliver_datagram(&mut self, flow: u32, way: Way, seq: u32) {
        let now = self.now;
        let rt = &mut self.realtime[(flow - self.ping_base) as usize - self.pings.len()];
        if !rt.open {
            return;
        }
        let sent = rt.start + rt.interval * seq as Nanos;
        rt.ways[(way == Way::Reverse) as usize].on_arrival(now - sent);
    }

    fn ping_records(&self) -> Vec<PingRecord> {
        let s = |ns: Nanos| ns as f64 / 1e9;
        let mut out = Vec::new();
        for (i, p) in self.pings.iter().enumerate() {
            for (seq, (&(sent, rtt), &up)) in p.sent.iter().zip(&p.up).enumerate() {
                let [u, d] = p.legs[seq];
                let down = rtt.zip(up).map(|(r, u)| r - u);
                let part = |j: Journey, reached: bool| if reached { Some(j.sum) } else { None };
                let (ul, dl) = (part(u, up.is_some()), part(d, down.is_some()));
                let name =
                    |j: Journey, reached: bool| j.worst.filter(|_| reached).map(|(e, _)| self.fabric.place_name(e));
                out.push(PingRecord {
                    ping: i as u32,
                    seq: seq as u32,
                    sent_s: sent.as_secs_f64(),
                    rtt_s: rtt.map(s),
                    up_s: up.map(s),
                    down_s: down.map(s),
                    lost: rtt.is_none() && p.dropped[seq],
                    up_queue_s: ul.map(|l| s(l.queue)),
                    up_access_s: ul.map(|l| s(l.access)),
                    up_serialisation_s: ul.map(|l| s(l.serialisation)),
                    up_propagation_s: ul.map(|l| s(l.propagation)),
                    down_queue_s: dl.map(|l| s(l.queue)),
                    down_access_s: dl.map(|l| s(l.access)),
                    down_serialisation_s: dl.map(|l| s(l.serialisation)),
                    down_propagation_s: dl.map(|l| s(l.propagation)),
                    up_waited_most_at: name(u, up.is_some()),
                    down_waited_most_at: name(d, down.is_some()),
                });
            }
        }
        out
    }

    /// A packet reaches the endpoint at the end of its route.
    fn deliver(&mut self, pkt: Packet) {
        self.tap(&pkt, false);
        if self.is_datagram(pkt.flow) {
            if let Kind::Datagram { seq, .. } = pkt.kind {
                return self.deliver_datagram(pkt.flow, pkt.way, seq);
            }
            return self.deliver_echo(pkt);
        }
        let now = self.now;
        let f = pkt.flow;
        let flow = &mut self.flows[f as usize];
        flow.in_flight -= 1;
        if flow.stalled.is_some() {
            self.release(&pkt);
            return;
        }
        let app_stream = flow.conn != NO_CONN;
        match pkt.way {
            Way::Forward => {
                let mut out = std::mem::take(&mut self.receiver_out);
                match pkt.kind {
                    Kind::Syn => {
                        flow.receiver.peer_handshake(pkt.flags, false);
                        flow.receiver.on_syn(&mut out)
                    }
                    Kind::SynAck => {
                        flow.receiver.peer_handshake(pkt.flags, true);
                        flow.receiver.on_syn_ack(&mut out)
                    }
                    // A window probe carries no data (tcp/sender/persist.rs).
                    Kind::Data { len: 0, .. } => flow.receiver.on_window_probe(&mut out),
                    Kind::Data { seq, len, .. } => {
                        let cwr = pkt.flags & tcp_flags::CWR != 0;
                        if pkt.ecn != Ecn::NotEct || cwr {
                            flow.receiver.on_data_ecn(now, pkt.ecn == Ecn::Ce, cwr, &mut out);
                        }
                        flow.receiver.on_data_pushed(now, seq, len, pkt.flags & tcp_flags::PSH != 0, &mut out)
                    }
                    Kind::Ack { .. } | Kind::Echo { .. } | Kind::Datagram { .. } | Kind::Raw { .. } => {}
                }
                self.receiver_actions(f, &mut out);
                self.receiver_out = out;
            }
            Way::Reverse => {
                let mut out = std::mem::take(&mut self.sender_out);
                match pkt.kind {
                    Kind::Syn => {
                        flow.sender.peer_handshake(pkt.flags, false);
                        flow.sender.on_syn(now, &mut out)
                    }
                    Kind::SynAck => {
                        flow.sender.peer_handshake(pkt.flags, true);
                        flow.sender.on_syn_ack(now, flow.receiver.window(), &mut out)
                    }
                    Kind::Ack { ack, wnd, sack: 0 } if pkt.flags == 0 => {
                        flow.sender.on_ack(now, ack, wnd as u64, &mut out)
                    }
                    Kind::Ack { ack, wnd, .. } => {
                        let sack = self.release(&pkt);
                        let flow = &mut self.flows[f as usize];
                        let ece = pkt.flags & tcp_flags::ECE != 0;
                        flow.sender.on_ack_ecn(now, ack, wnd as u64, sack.as_slice(), ece, &mut out)
                    }
                    Kind::Data { .. } | Kind::Echo { .. } | Kind::Datagram { .. } | Kind::Raw { .. } => {}
                }
                self.sender_actions(f, &mut out);
                self.sender_out = out;
            }
        }
        if app_stream {
            self.app_progress(f, pkt.way);
        }
        self.check_idle(f);
    }

    fn record(&mut self, f: u32, event: &'static str, seq: i64, ack: i64, cc: &crate::tcp::CcState, queue: i64) {
        let now = self.now;
        self.record_at(now, f, event, seq, ack, cc, queue);
    }

    #[allow(clippy::too_many_arguments)]
    fn record_at(
        &mut self,
        t: SimTime,
        f: u32,
        event: &'static str,
        seq: i64,
        ack: i64,
        cc: &crate::tcp::CcState,
        queue: i64,
    ) {
        if let Some(tr) = self.trace.as_mut() {
            tr.push(t, f, event, seq, ack, cc, queue);
        }
    }

    /// A trace row at link `link`, which holds `held` (bytes, or cells at an ATM switch).
    fn record_held(&mut self, f: u32, event: &'static str, seq: u64, held: i64, link: u32) {
        let now = self.now;
        let cc = self.flows[f as usize].sender.cc();
        self.record_at(now, f, event, seq as i64, -1, &cc, held);
        if let Some(tr) = self.trace.as_mut() {
            tr.set_link(link);
        }
    }

    fn flow_metrics(&self, i: usize, f: &FlowRt, stations: &[StationMetrics]) -> FlowMetrics {
        let s = &f.sender.stats;
        let r = &f.receiver;
        let end = r.completed_at;
        let duration = end.map(|e| (e - f.start) as f64 / 1e9);
        let (rtt_mean_s, rtt_max_s, rtt_std_s) = f.rtt.summary();
        let st = f.station.and_then(|s| stations.get(s as usize));
        let access = self.fabric.access(i as u32);
        let limit = window_limit(f);
        FlowMetrics {
            flow: i as u32,
            bytes: transfer_bytes(f),
            delivered_bytes: r.rcv_nxt.min(transfer_bytes(f)),
            start_s: f.start.as_secs_f64(),
            end_s: end.map(|e| e.as_secs_f64()),
            duration_s: duration,
            throughput_bps: duration.filter(|d| *d > 0.0).map(|d| 8.0 * transfer_bytes(f) as f64 / d),
            finished: end.is_some(),
            end_reason: if f.stalled.is_some() {
                EndReason::Stalled
            } else {
                EndReason::of(end.is_some(), &f.sender, r)
            },
            stall: stall_text(f),
            persist_timeouts: s.persist_timeouts,
            window_limit_bytes: limit.window_limit_bytes,
            window_limited_by: limit.window_limited_by,
            bdp_bytes: limit.bdp_bytes,
            path_rate_bps: limit.path_rate_bps,
            base_rtt_s: limit.base_rtt_s,
            timeouts: s.timeouts,
            syn_timeouts: s.syn_timeouts + r.syn_timeouts,
            fast_retransmits: s.fast_retransmits,
            retransmitted_segments: s.retransmitted_segments,
            data_segments_sent: s.data_segments_sent,
            acks_received: s.acks_received,
            data_lost_downstream: f.counters.data_lost,
            acks_lost_upstream: f.counters.acks_lost,
            cm_buffer_drops: f.counters.cm_buffer_drops,
            queue_drops: f.counters.queue_drops,
            first_ack_delay_s: match (r.first_data_at, r.first_ack_at) {
                (Some(d), Some(a)) => Some((a - d) as f64 / 1e9),
                _ => None,
            },
            access_delay_mean_s: (access.n > 0).then(|| access.delay_sum as f64 / access.n as f64 / 1e9),
            access_delay_max_s: (access.n > 0).then(|| access.delay_max as f64 / 1e9),
            request_grant_mean_s: (access.n > 0).then(|| access.rg_sum as f64 / access.n as f64 / 1e9),
            mac_drops: f.counters.mac_drops,
            measured_bytes: if self.now < self.measure_from {
                0
            } else {
                r.rcv_nxt.min(transfer_bytes(f)) - f.measured_base
            },
            measured_s: (self.now.0.saturating_sub(self.measure_from.0)) as f64 / 1e9,
            rtt_samples: f.rtt.samples,
            rtt_mean_s,
            rtt_max_s,
            rtt_std_s,
            station: f.station,
            station_requests: st.map_or(0, |s| s.requests),
            station_piggybacked_requests: st.map_or(0, |s| s.piggybacked_requests),
            epd_drops: f.counters.epd_drops,
            aqm_drops: f.counters.aqm_drops,
            ce_received: (f.receiver.ecn_mode != crate::scenario::EcnMode::Off).then_some(r.ce_received),
            ecn_reductions: (f.sender.cfg.ecn != crate::scenario::EcnMode::Off).then_some(s.ecn_reductions),
            undos: f.sender.cfg.undo.then_some(s.undos),
            ..self.ping_phases(f)
        }
    }
}

impl World {
    /// The run's ping RTTs split by flow `f`'s phases (FlowMetrics), as a FlowMetrics whose other
    /// fields are to be overwritten.
    fn ping_phases(&self, f: &FlowRt) -> FlowMetrics {
        let end = f.receiver.completed_at.unwrap_or(SimTime::MAX);
        let (mut before, mut during, mut after) = (Vec::new(), Vec::new(), Vec::new());
        let mut lost = 0;
        for (sent, rtt) in self.pings.iter().flat_map(|p| p.sent.iter()) {
            let phase = if *sent < f.start {
                &mut before
            } else if *sent < end {
                if rtt.is_none() {
                    lost += 1;
                }
                &mut during
            } else {
                &mut after
            };
            if let Some(r) = rtt {
                phase.push(*r as f64 / 1e9);
            }
        }
        let mean = |v: &[f64]| (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64);
        FlowMetrics {
            ping_before_mean_s: mean(&before),
            ping_during_mean_s: mean(&during),
            ping_during_max_s: during.iter().copied().reduce(f64::max),
            ping_after_mean_s: mean(&after),
            ping_during_samples: during.len() as u64,
            ping_lost: lost,
            ..FlowMetrics::default()
        }
    }
}

/// With `receiver.linux_window` both ends are Linux's, whose MSS is not Net/3's (`tcp_mss` lowers it
/// to a socket buffer smaller than a segment): (the segments' MSS, the send buffer's limit on data in
/// flight, the receive buffer, SO_RCVBUF, as asked for).
/// - The sender's MSS is bounded by half the largest window the peer has offered (include/net/tcp.h
///   `tcp_bound_to_half_wnd`, applied by `tcp_sync_mss` when the handshake sets max_window): "When
///   peer uses tiny windows, there is no use in packetizing to sub-MSS pieces", at least 68 bytes less
///   the header with its options. The window is the first one offered (`tcp_select_initial_window`);
///   chosen: the MSS stays as the handshake set it (Linux syncs it again when a later window passes
///   twice it, `tcp_ack_update_window`; a window that small is rare and the model's segments keep
///   one size).
/// - SO_SNDBUF of B gives sk_sndbuf = max(2 B, SOCK_MIN_SNDBUF) (net/core/sock.c `__sock_set_sndbuf`):
///   at least 2,304 bytes of data in flight here (half of it, as for any B), and at least one segment,
///   which Linux's writer can always queue (`sk_stream_memory_free` lets a segment in while any
///   memory is free). With `tcp.sndbuf_autotuning` the sender sets its own (tcp/sender.rs).
fn linux_mss_and_buffers(sc: &Scenario, mss0: u64, option_bytes: u32) -> (u64, u64, u64) {
    use crate::tcp::linux_window::{LinuxWindow, RcvBuf};
    let (tcp, rx) = (&sc.tcp, &sc.receiver);
    let buf = RcvBuf::of(rx, rx.receive_buffer_bytes);
    let scaling = tcp.window_scaling;
    let first = LinuxWindow::with_buffer(buf, mss0, mss0 + option_bytes as u64, rx.skb_truesize_bytes as u64, scaling);
    let max_window = first.rcv_wnd;
    let cutoff = if max_window > 536 { max_window >> 1 } else { max_window };
    let header = 20 + option_bytes as u64;
    let mss = if cutoff > 0 && mss0 > cutoff { cutoff.max(68 - header) } else { mss0 };
    let so_sndbuf = tcp.send_buffer_bytes.max(crate::tcp::sender::SOCK_MIN_SNDBUF / 2);
    let (_, send_buffer) = round_buffer(mss, so_sndbuf, tcp.buffer_rounding);
    (mss, send_buffer.max(mss), rx.receive_buffer_bytes)
}

/// The slowest rate on flow `f`'s data path, bit/s, from the keys (the bandwidth-delay product's rate,
/// `window_limit`): the channel its data crosses, the modem's LAN (hfc), the switches' links (atm_hfc),
/// the service flow's rate cap, the bonded channels' payload, the Ethernet and the server's pipe
/// (docsis), the served packets (bottleneck). An upstream counts its modems' most bonded channels.
/// Framing and MAC overheads are left out: a rate no lower than the path's.
fn path_rate_bps(sc: &Scenario, f: &crate::scenario::Flow, data_packet: u32) -> f64 {
    use crate::scenario::Network;
    let down = f.direction == Direction::Down;
    let bonded = sc.modems.iter().map(|g| g.bonded_channels).max().unwrap_or(1).max(1) as f64;
    match &sc.network {
        Network::Hfc(h) => (if down { h.downstream_bps } else { h.upstream_bps * bonded }).min(h.cm_lan_bps),
        Network::Bottleneck(b) => b.rate_pps * data_packet as f64 * 8.0,
        Network::AtmHfc(a) => {
            let access = if down { a.downstream_bps } else { a.upstream_bps * bonded };
            access.min(a.source_bps).min(a.bottleneck_bps).min(a.headend_bps)
        }
        Network::Docsis(d) => {
            let rate = if down {
                let pipe = d.server_limit_bps.unwrap_or(f64::INFINITY);
                d.ds_rate_bps.min(d.payload_bps() * d.ds_channels as f64).min(pipe)
            } else {
                d.us_rate_bps.min(d.upstream_bps * bonded)
            };
            rate.min(d.ethernet_bps)
        }
    }
}

/// `FlowMetrics`' window limit (issue 35): when the most the flow's window can be (its send buffer's,
/// its receiver's, the header's without window scaling) is below its path's bandwidth-delay product
/// (the slowest rate times the least RTT the flow measured), what limits it. A FlowMetrics whose other
/// fields are to be overwritten; all None without an RTT sample or when the window can fill the path.
fn window_limit(f: &FlowRt) -> FlowMetrics {
    let (s, r) = (&f.sender, &f.receiver);
    let Some(rtt) = f.rtt.min_all else { return FlowMetrics::default() };
    let bdp = f.path_rate_bps * rtt as f64 / 8e9;
    let (send, send_key) = s.max_send_buffer();
    let (receive, receive_key) = match r.linux_window() {
        Some(w) if w.locked => (w.most(), "receiver.receive_buffer_bytes"),
        Some(w) => (w.most(), "receiver.tcp_rmem_max_bytes"),
        None => (r.cfg.receive_buffer, "receiver.receive_buffer_bytes"),
    };
    let field = r.cfg.max_window.max(r.linux_window().map_or(0, |w| 65_535 << w.wscale));
    let limits = [(send, send_key), (receive, receive_key), (field, "tcp.window_scaling")];
    let window = send.min(receive).min(field);
    let by: Vec<&str> = limits.iter().filter(|&&(w, _)| w == window).map(|&(_, key)| key).collect();
    let by = by.join(" and ");
    if window as f64 >= bdp {
        return FlowMetrics::default();
    }
    FlowMetrics {
        window_limit_bytes: Some(window),
        window_limited_by: Some(by),
        bdp_bytes: Some(bdp as u64),
        path_rate_bps: Some(f.path_rate_bps),
        base_rtt_s: Some(rtt as f64 / 1e9),
        ..FlowMetrics::default()
    }
}

/// Where a stalled flow stuck (`FlowMetrics::stall`), in one line: its state is the one it stalled in.
fn stall_text(f: &FlowRt) -> Option<String> {
    let (at, how) = f.stalled?;
    let why = match how {
        Stall::Closed => return None,
        Stall::Idle => "nothing was left to happen (no timer at either end, no packet in flight)".to_string(),
        Stall::WindowClosed => {
            format!("it had sent only window probes for {} s, the peer's window closed", STALL_AFTER / 1_000_000_000)
        }
    };
    let (s, r) = (&f.sender, &f.receiver);
    let buffer = match r.linux_window() {
        Some(w) => format!("its memory {} B (sk_rcvbuf)", w.rcvbuf),
        None => format!("its buffer {} B", r.cfg.receive_buffer),
    };
    Some(format!(
        "stalled at {:.6} s: {why}; sender {:?}, {} of {} bytes acknowledged, {} B in flight, the peer's window {} B, \
         send buffer {} B, cwnd {} B, next segment {} B; receiver {:?}, {} bytes in order, offering {} B, {buffer}",
        at.as_secs_f64(),
        s.state,
        s.snd_una,
        s.total(),
        s.snd_max - s.snd_una,
        s.snd_wnd,
        s.send_buffer(),
        s.cwnd,
        s.next_segment_len(),
        r.state,
        r.rcv_nxt.min(r.total()),
        r.offered(),
    ))
}

fn transfer_bytes(f: &FlowRt) -> u64 {
    f.receiver.total()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Run `w` to its end (as `run_interruptible` does) and return flow 0's metrics.
    fn finish(mut w: World, sc: &Scenario) -> FlowMetrics {
        let limit = SimTime(secs_to_nanos(sc.sim.time_limit_s));
        while w.run_batch(limit, CHECK_EVERY_EVENTS) {}
        w.flow_metrics(0, &w.flows[0], &[])
    }

    #[test]
    fn a_flow_nothing_can_move_ends_stalled_where_it_stuck() {
        // No scenario makes one (tests/persist.rs, tests/test_stall.py): here the receiver expects
        // 1,000 bytes the sender never writes. Once everything written is acknowledged nothing is left
        // to happen (no timer, no packet in flight): the flow ends stalled then, not at the time limit.
        let mut sc = Scenario::cohen_default();
        sc.flows[0].bytes = 30_000;
        let mut w = World::build(&sc, 1, RunOptions::default());
        let cfg = w.flows[0].receiver.cfg.clone();
        let rto = Rto::bsd(secs_to_nanos(sc.tcp.tick_s), 0);
        w.flows[0].receiver = Receiver::new(cfg, 31_000, rto);
        let m = finish(w, &sc);
        assert_eq!(m.end_reason, EndReason::Stalled);
        let stall = m.stall.expect("where it stuck");
        assert!(stall.contains("nothing was left to happen"), "{stall}");
        assert!(stall.contains("30000 of 30000 bytes acknowledged, 0 B in flight"), "{stall}");
        assert!(m.end_s.is_none() && m.delivered_bytes == 30_000);
    }

    #[test]
    fn a_window_that_never_opens_stalls_the_flow_after_stall_after() {
        // A receiver whose window is always 0 (no scenario makes one): the sender's persist timer
        // probes it (4.4BSD: 6 s, then up to 60 s apart) and the answers keep it closed. After
        // STALL_AFTER with nothing but probes the flow ends stalled.
        let mut sc = Scenario::cohen_default();
        sc.flows[0].bytes = 30_000;
        let mut w = World::build(&sc, 1, RunOptions::default());
        w.flows[0].receiver.cfg.max_window = 0;
        let m = finish(w, &sc);
        assert_eq!(m.end_reason, EndReason::Stalled);
        let stall = m.stall.expect("where it stuck");
        assert!(stall.contains("window probes for 600 s") && stall.contains("the peer's window 0 B"), "{stall}");
        assert!(m.persist_timeouts >= 10, "{}", m.persist_timeouts);
    }
}
