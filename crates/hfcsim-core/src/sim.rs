//! The world: runs the event loop over a network built by `topology`, wires the TCP endpoints
//! of each flow to its routes, and collects metrics.

use crate::access::{MacOut, StationMetrics, Upstream};
use crate::metrics::{EngineMetrics, FlowMetrics, PingRecord, QueueMetrics, RttMeter, Trace};
use crate::net::pcap::{self, Captured};
use crate::net::servicequeue::{QueueDrop, QueueOut, ServiceQueue};
use crate::net::{Element, Kind, Link, Packet, Refusal, Role, Route, SwitchStats, Way};
use crate::rng::{component, Stream};
use crate::scenario::{self, Direction, Opener, Scenario, TimerKind, Variant};
use crate::sched::EventQueue;
use crate::tcp::receiver::{self, AckRule, Receiver, ReceiverConfig, SackBlocks};
use crate::tcp::rto::Rto;
use crate::tcp::sender::{self, Action, Sender, SenderConfig};
use crate::tcp::{round_buffer, MAX_SCALED_WINDOW, TIMESTAMP_OPTION_BYTES};
use crate::time::{secs_to_nanos, Nanos, SimTime};
use crate::topology;

#[derive(Clone, Copy, Debug, Default)]
pub struct RunOptions {
    /// Record the per-packet trace.
    pub trace: bool,
    /// Record every packet sent and delivered, for a capture (net/pcap.rs).
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
    pub trace: Option<Trace>,
    /// With `RunOptions::pcap`: every packet as its endpoint sent or received it, in time order.
    pub capture: Option<Vec<Captured>>,
}

#[derive(Clone, Copy, Debug)]
enum Ev {
    FlowStart(u32),
    /// A packet reaches element `route[hop]` of its route.
    Arrive(Packet),
    /// A packet reaches its endpoint.
    Deliver(Packet),
    SenderTimer(u32),
    ReceiverTimer(u32),
    /// The upstream MAC has something due.
    Mac,
    /// A service queue has something due.
    Queue(u32),
    /// A ping's next echo is due.
    Ping(u32),
    /// `sim.measure_from_s`: the statistics that skip a warm-up start counting.
    Measure,
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

/// A flow's packets through the upstream MAC: access delay (enqueue -> headend) and request ->
/// grant, in ns.
#[derive(Clone, Copy, Debug, Default)]
struct Access {
    n: u64,
    delay_sum: u128,
    delay_max: u64,
    rg_sum: u128,
}

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
    access: Access,
    rtt: RttMeter,
    /// Bytes delivered in order when the measurement started (`sim.measure_from_s`).
    measured_base: u64,
    /// The upstream station its upstream packets use.
    station: Option<u32>,
    sender_timer_at: Option<SimTime>,
    receiver_timer_at: Option<SimTime>,
    done: bool,
}

/// A ping (Nguyen & Armitage Sec. III.A): echoes `interval` apart from `start`, until `stop` or
/// `after` past the end of the last TCP flow. It is the endpoint `flows.len() + i` of packets.
struct PingRt {
    interval: Nanos,
    stop: Option<SimTime>,
    after: Nanos,
    ip_bytes: u32,
    /// Send time and RTT of each echo sent.
    sent: Vec<(SimTime, Option<Nanos>)>,
    counters: Counters,
    access: Access,
    open: bool,
}

struct World {
    now: SimTime,
    queue: EventQueue<Ev>,
    links: Vec<Link>,
    routes: Vec<Route>,
    flows: Vec<FlowRt>,
    /// Each endpoint's (forward, reverse) routes: the flows, then the pings.
    paths: Vec<(u32, u32)>,
    pings: Vec<PingRt>,
    header_bytes: u32,
    /// RFC 7323 timestamps: 12 option bytes on every segment (`tcp.timestamps`).
    option_bytes: u32,
    /// The SACK blocks of ACKs in flight, by `Kind::Ack::sack` - 1, and the free slots.
    sacks: Vec<SackBlocks>,
    sacks_free: Vec<u32>,
    trace: Option<Trace>,
    capture: Option<Vec<Captured>>,
    events: u64,
    /// Flows and pings still running: the run ends when none is.
    flows_open: usize,
    /// TCP flows still running, and when the last one ended.
    tcp_open: usize,
    tcp_done_at: SimTime,
    queues: Vec<ServiceQueue>,
    queue_timer_at: Vec<Option<SimTime>>,
    queue_out: Vec<QueueOut>,
    sender_out: Vec<sender::Out>,
    receiver_out: Vec<receiver::Action>,
    /// The shared upstream's MAC, its pending event, the packets it holds (by tag) and a free list.
    mac: Option<Upstream>,
    mac_timer_at: Option<SimTime>,
    parked: Vec<Packet>,
    free: Vec<u32>,
    mac_out: Vec<MacOut>,
    measure_from: SimTime,
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
    let engine = EngineMetrics {
        events: w.events,
        simulated_s: w.now.as_secs_f64(),
        wall_s: wall.elapsed().as_secs_f64(),
        mac: w.mac.as_ref().map(|m| m.metrics().clone()),
        switches: w.switch_stats(),
        queues: Vec::new(),
    };
    let stations = w.mac.as_ref().map(|m| m.station_metrics()).unwrap_or_default();
    let flows = w.flows.iter().enumerate().map(|(i, f)| w.flow_metrics(i, f, &stations)).collect();
    let pings = w.ping_records();
    let engine = EngineMetrics { queues: w.queue_metrics(), ..engine };
    if let (Some(tr), Some(mac)) = (w.trace.as_mut(), w.mac.as_mut()) {
        for e in mac.take_trace() {
            tr.push_mac(&e);
        }
    }
    let trace = w.trace.take().map(Trace::sorted);
    let capture = w.capture.take();
    Some(Output { flows, engine, stations, pings, trace, capture })
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
        let mss = mss0.min(tcp.send_buffer_bytes).min(sc.receiver.receive_buffer_bytes);
        let (_, send_buffer) = round_buffer(mss, tcp.send_buffer_bytes, tcp.buffer_rounding);
        let (_, receive_buffer) = round_buffer(mss, sc.receiver.receive_buffer_bytes, tcp.buffer_rounding);
        let data_packet = mss as u32 + tcp.header_bytes + option_bytes;

        let topology::Topology { links, routes, flows: flow_routes, mut mac, queues, pings: ping_routes } =
            topology::build(sc, seed, data_packet);
        if opts.trace {
            if let Some(m) = mac.as_mut() {
                m.trace_on();
            }
        }

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

        let station_on = |route: u32| {
            routes[route as usize].iter().find_map(|e| match e {
                Element::Upstream(s) => Some(*s),
                Element::Link(_) | Element::Queue(_) => None,
            })
        };
        let mut flows = Vec::with_capacity(sc.flows.len());
        let mut queue = EventQueue::default();
        for (i, f) in sc.flows.iter().enumerate() {
            let pc = host_clock(seed, 1 + f.modem as u64, tick, fast);
            let (snd_host, rcv_host) = match f.direction {
                Direction::Down => (&server, &pc),
                Direction::Up => (&pc, &server),
            };
            let scfg = SenderConfig {
                variant: tcp.variant,
                mss,
                dupack_threshold: tcp.dupack_threshold,
                initial_window: tcp.initial_window,
                send_buffer,
                nagle: tcp.nagle,
                initial_ssthresh: tcp.initial_ssthresh_bytes,
                header_prediction: tcp.header_prediction,
                deflate_at_threshold: tcp.deflate_at_threshold,
                output_after_fast_retransmit: tcp.output_after_fast_retransmit,
                recover_guard: tcp.recover_guard.unwrap_or(tcp.variant != Variant::Reno),
                repeat_timeout_holds_ssthresh: tcp.repeat_timeout_holds_ssthresh,
                fast_recovery: tcp.fast_recovery,
                slow_start_at_ssthresh: tcp.slow_start_at_ssthresh,
                congestion_control: tcp.congestion_control,
                byte_counting: tcp.byte_counting,
                sack: tcp.sack,
                rack: tcp.rack,
                tlp: tcp.tlp,
                prr: tcp.prr,
                limited_transmit: tcp.limited_transmit,
                timestamps: tcp.timestamps,
            };
            let rcfg = ReceiverConfig {
                delayed_ack: sc.receiver.delayed_ack,
                rule: match sc.receiver.ack_rule {
                    scenario::AckRule::Net3 => AckRule::Net3,
                    scenario::AckRule::Freebsd => AckRule::FreeBsd,
                    scenario::AckRule::Ns2 => AckRule::Ns2,
                    scenario::AckRule::Linux => AckRule::Linux,
                },
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
                receiver: Receiver::new(rcfg, f.bytes, rto_for(rcv_host)),
                fwd,
                rev,
                opener_is_sender,
                handshake: f.handshake,
                start,
                drop_packets,
                counters: Counters::default(),
                access: Access::default(),
                rtt: RttMeter::default(),
                measured_base: 0,
                station: station_on(rev).or_else(|| station_on(fwd)),
                sender_timer_at: None,
                receiver_timer_at: None,
                done: false,
            });
            queue.push(start, Ev::FlowStart(i as u32));
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
                sent: Vec::new(),
                counters: Counters::default(),
                access: Access::default(),
                open: true,
            });
            queue.push(SimTime(secs_to_nanos(p.start_s)), Ev::Ping(i as u32));
        }
        let measure_from = SimTime(secs_to_nanos(sc.sim.measure_from_s));
        if measure_from > SimTime::ZERO {
            queue.push(measure_from, Ev::Measure);
        }
        World {
            now: SimTime::ZERO,
            queue,
            links,
            routes,
            flows_open: flows.len() + pings.len(),
            tcp_open: flows.len(),
            tcp_done_at: SimTime::ZERO,
            flows,
            paths,
            pings,
            queue_timer_at: vec![None; queues.len()],
            queues,
            queue_out: Vec::new(),
            header_bytes: tcp.header_bytes,
            option_bytes,
            sacks: Vec::new(),
            sacks_free: Vec::new(),
            trace: opts.trace.then(Trace::default),
            capture: opts.pcap.then(Vec::new),
            events: 0,
            sender_out: Vec::with_capacity(64),
            receiver_out: Vec::with_capacity(8),
            mac_timer_at: mac.as_ref().and_then(|m| m.next_deadline()),
            mac,
            parked: Vec::new(),
            free: Vec::new(),
            mac_out: Vec::new(),
            measure_from,
        }
        .with_mac_event()
    }

    fn with_mac_event(mut self) -> World {
        if let Some(t) = self.mac_timer_at {
            self.queue.push(t, Ev::Mac);
        }
        self
    }

    fn handle(&mut self, ev: Ev) {
        match ev {
            Ev::FlowStart(f) => self.start_flow(f),
            Ev::Arrive(pkt) => self.arrive(pkt),
            Ev::Deliver(pkt) => self.deliver(pkt),
            Ev::SenderTimer(f) => {
                let flow = &mut self.flows[f as usize];
                if flow.sender_timer_at == Some(self.now) {
                    flow.sender_timer_at = None;
                }
                let mut out = std::mem::take(&mut self.sender_out);
                flow.sender.on_timer(self.now, &mut out);
                self.sender_actions(f, &mut out);
                self.sender_out = out;
            }
            Ev::ReceiverTimer(f) => {
                let flow = &mut self.flows[f as usize];
                if flow.receiver_timer_at == Some(self.now) {
                    flow.receiver_timer_at = None;
                }
                let mut out = std::mem::take(&mut self.receiver_out);
                flow.receiver.on_timer(self.now, &mut out);
                self.receiver_actions(f, &mut out);
                self.receiver_out = out;
            }
            Ev::Mac => self.mac_event(),
            Ev::Queue(q) => self.queue_event(q),
            Ev::Ping(p) => self.ping_tick(p),
            Ev::Measure => {
                for f in &mut self.flows {
                    f.measured_base = f.receiver.rcv_nxt.min(f.receiver.total());
                }
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
            let (kind, size, chosen_drop, trace_ev) = match o.action {
                Action::Syn => (Kind::Syn, hdr, false, "syn"),
                Action::SynAck => (Kind::SynAck, hdr, false, "synack"),
                Action::Segment { seq, len, pkt_no, retransmit } => {
                    let now = self.now;
                    let flow = &mut self.flows[f as usize];
                    flow.rtt.on_send(now, seq, seq + len as u64, retransmit);
                    let chosen_drop = !retransmit && flow.drop_packets.binary_search(&pkt_no).is_ok();
                    let ev = if retransmit { "retransmit" } else { "send" };
                    (Kind::Data { seq, len, pkt_no }, len + hdr, chosen_drop, ev)
                }
                Action::NewAck { ack } => {
                    let (now, from) = (self.now, self.measure_from);
                    self.flows[f as usize].rtt.on_ack(now, ack, from);
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
            };
            if let Kind::Data { seq, .. } = kind {
                self.record(f, trace_ev, seq as i64, o.cc.snd_una as i64, &o.cc, -1);
            }
            let pkt = Packet { flow: f, way: Way::Forward, hop: 0, size, kind, chosen_drop };
            self.launch(pkt);
        }
        self.sync_sender_timer(f);
    }

    fn receiver_actions(&mut self, f: u32, out: &mut Vec<receiver::Action>) {
        let hdr = self.header_bytes + self.option_bytes;
        for a in out.drain(..) {
            let (kind, size) = match a {
                receiver::Action::Syn => (Kind::Syn, hdr),
                receiver::Action::SynAck => (Kind::SynAck, hdr),
                receiver::Action::Ack { ack, wnd } => {
                    // The window fits 32 bits: the receiver clamps it to the header's largest.
                    let wnd = wnd.min(u32::MAX as u64) as u32;
                    let receiver = &self.flows[f as usize].receiver;
                    let sack =
                        if receiver.cfg.sack_blocks == 0 { SackBlocks::default() } else { receiver.sack_blocks() };
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
            self.launch(Packet { flow: f, way: Way::Reverse, hop: 0, size, kind, chosen_drop: false });
        }
        let flow = &self.flows[f as usize];
        if !flow.done && flow.receiver.completed_at.is_some() {
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
    /// flow ends the pings' `after_s` starts counting.
    fn flow_ended(&mut self, f: u32) {
        self.flows[f as usize].done = true;
        self.flows_open -= 1;
        self.tcp_open -= 1;
        if self.tcp_open == 0 {
            self.tcp_done_at = self.now;
        }
    }

    /// The route `pkt` is on.
    #[inline]
    fn route(&self, pkt: &Packet) -> &Route {
        let (fwd, rev) = self.paths[pkt.flow as usize];
        let id = match pkt.way {
            Way::Forward => fwd,
            Way::Reverse => rev,
        };
        &self.routes[id as usize]
    }

    /// A packet leaves its endpoint now.
    fn launch(&mut self, pkt: Packet) {
        self.tap(&pkt, true);
        if self.route(&pkt).is_empty() {
            self.queue.push(self.now, Ev::Deliver(pkt));
        } else {
            self.arrive(pkt);
        }
    }

    /// A packet arrives at the next element of its route, which takes it. An element either
    /// drops it or, now or from an event of its own, hands it on (`hand_on`).
    fn arrive(&mut self, pkt: Packet) {
        match self.route(&pkt)[pkt.hop as usize] {
            Element::Link(id) => self.arrive_link(pkt, id),
            Element::Upstream(station) => self.arrive_upstream(pkt, station),
            Element::Queue(q) => self.arrive_queue(pkt, q),
        }
    }

    /// `--pcap`: record `pkt` as its endpoint sends it now (`sent`) or receives it (net/pcap.rs).
    /// Off, it is one predictable branch.
    #[inline(always)]
    fn tap(&mut self, pkt: &Packet, sent: bool) {
        if let Some(c) = self.capture.as_mut() {
            pcap::tap(c, self.now, pkt, sent, &self.sacks);
        }
    }

    /// The counters of endpoint `f`: a flow, or a ping.
    fn counters(&mut self, f: u32) -> &mut Counters {
        let n = self.flows.len();
        match (f as usize).checked_sub(n) {
            None => &mut self.flows[f as usize].counters,
            Some(p) => &mut self.pings[p].counters,
        }
    }

    fn access(&mut self, f: u32) -> &mut Access {
        let n = self.flows.len();
        match (f as usize).checked_sub(n) {
            None => &mut self.flows[f as usize].access,
            Some(p) => &mut self.pings[p].access,
        }
    }

    /// Keep an ACK's SACK blocks while it travels; the packet carries 1 + the slot.
    fn store_sack(&mut self, blocks: SackBlocks) -> u32 {
        let slot = match self.sacks_free.pop() {
            Some(t) => {
                self.sacks[t as usize] = blocks;
                t
            }
            None => {
                self.sacks.push(blocks);
                (self.sacks.len() - 1) as u32
            }
        };
        slot + 1
    }

    /// `pkt` is gone (delivered or dropped): free its SACK slot, and return its blocks.
    #[inline]
    fn release(&mut self, pkt: &Packet) -> SackBlocks {
        match pkt.kind {
            Kind::Ack { sack, .. } if sack != 0 => {
                self.sacks_free.push(sack - 1);
                self.sacks[(sack - 1) as usize]
            }
            _ => SackBlocks::default(),
        }
    }

    /// Park `pkt` while an element with events of its own holds it; its tag.
    fn park(&mut self, pkt: Packet) -> u32 {
        match self.free.pop() {
            Some(t) => {
                self.parked[t as usize] = pkt;
                t
            }
            None => {
                self.parked.push(pkt);
                (self.parked.len() - 1) as u32
            }
        }
    }

    /// The packet joins a service queue (net/servicequeue.rs), or is dropped by its limit or AQM.
    #[inline(never)]
    fn arrive_queue(&mut self, pkt: Packet, q: u32) {
        let now = self.now;
        let tag = self.park(pkt);
        if let Err(why) = self.queues[q as usize].enqueue(now, tag as u64, pkt.size) {
            self.free.push(tag);
            self.queue_drop(pkt, why);
            return;
        }
        self.sync_queue_timer(q);
    }

    /// A service queue dropped `pkt`: its buffer was full, or its AQM chose it.
    #[cold]
    fn queue_drop(&mut self, pkt: Packet, why: QueueDrop) {
        self.release(&pkt);
        let c = self.counters(pkt.flow);
        c.queue_drops += 1;
        if why == QueueDrop::Aqm {
            c.aqm_drops += 1;
        }
        if let Kind::Data { seq, .. } = pkt.kind {
            let ev = if why == QueueDrop::Aqm { "aqm_drop" } else { "drop" };
            let cc = self.flows[pkt.flow as usize].sender.cc();
            self.record(pkt.flow, ev, seq as i64, -1, &cc, -1);
        }
    }

    /// Let service queue `q` serve what is due, and hand on what it sent.
    #[inline(never)]
    fn queue_event(&mut self, q: u32) {
        let now = self.now;
        if self.queue_timer_at[q as usize] == Some(now) {
            self.queue_timer_at[q as usize] = None;
        }
        let mut out = std::mem::take(&mut self.queue_out);
        self.queues[q as usize].on_timer(now, &mut out);
        for o in out.drain(..) {
            match o {
                QueueOut::Sent { tag, at } => {
                    let pkt = self.parked[tag as usize];
                    self.free.push(tag as u32);
                    if pkt.chosen_drop && pkt.hop == 0 {
                        self.lose(pkt, at);
                    } else {
                        self.hand_on(pkt, at);
                    }
                }
                QueueOut::Dropped { tag } => {
                    let pkt = self.parked[tag as usize];
                    self.free.push(tag as u32);
                    self.queue_drop(pkt, QueueDrop::Aqm);
                }
            }
        }
        self.queue_out = out;
        self.sync_queue_timer(q);
    }

    /// Keep one pending event per service queue no later than its next deadline.
    fn sync_queue_timer(&mut self, q: u32) {
        let Some(d) = self.queues[q as usize].next_deadline() else { return };
        let at = &mut self.queue_timer_at[q as usize];
        if at.is_none_or(|t| d < t) {
            *at = Some(d);
            self.queue.push(d, Ev::Queue(q));
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
        let size = ping.ip_bytes;
        self.queue.push(now + ping.interval, Ev::Ping(p));
        let flow = (self.flows.len() + p as usize) as u32;
        self.launch(Packet { flow, way: Way::Forward, hop: 0, size, kind: Kind::Echo { seq }, chosen_drop: false });
    }

    /// An echo reaches an end of its path: the server answers a request at once; a reply gives
    /// the client its RTT.
    #[cold]
    fn deliver_echo(&mut self, pkt: Packet) {
        let Kind::Echo { seq } = pkt.kind else { return };
        match pkt.way {
            Way::Forward => self.launch(Packet { way: Way::Reverse, hop: 0, ..pkt }),
            Way::Reverse => {
                let now = self.now;
                let ping = &mut self.pings[pkt.flow as usize - self.flows.len()];
                if ping.open {
                    let (sent, rtt) = &mut ping.sent[seq as usize];
                    *rtt = Some(now - *sent);
                }
            }
        }
    }

    fn ping_records(&self) -> Vec<PingRecord> {
        let mut out = Vec::new();
        for (i, p) in self.pings.iter().enumerate() {
            for (seq, &(sent, rtt)) in p.sent.iter().enumerate() {
                out.push(PingRecord {
                    ping: i as u32,
                    seq: seq as u32,
                    sent_s: sent.as_secs_f64(),
                    rtt_s: rtt.map(|r| r as f64 / 1e9),
                });
            }
        }
        out
    }

    fn queue_metrics(&self) -> Vec<QueueMetrics> {
        self.queues
            .iter()
            .map(|q| QueueMetrics {
                name: q.name.clone(),
                sent: q.stats.sent,
                drops_full: q.stats.drops_full,
                drops_aqm: q.stats.drops_aqm,
                max_bytes: q.stats.max_bytes,
            })
            .collect()
    }

    /// The packet joins its station's MAC FIFO on the shared upstream, or is refused if it is full.
    // Out of line: the FIFO networks' hot loop must not grow by the MAC's code (bench_report (a)).
    #[inline(never)]
    fn arrive_upstream(&mut self, pkt: Packet, station: u32) {
        let now = self.now;
        let tag = self.park(pkt);
        let mac = self.mac.as_mut().expect("an Upstream element needs the MAC");
        if !mac.enqueue(now, station, tag as u64, pkt.size) {
            self.free.push(tag);
            self.release(&pkt);
            self.counters(pkt.flow).queue_drops += 1;
            if let Kind::Data { seq, .. } = pkt.kind {
                self.record(pkt.flow, "drop", seq as i64, -1, &self.flows[pkt.flow as usize].sender.cc(), -1);
            }
            return;
        }
        self.sync_mac_timer();
    }

    /// Let the MAC do what is due, and hand on the packets it delivered at the headend.
    // Out of line: the FIFO networks' hot loop must not grow by the MAC's code (bench_report (a)).
    #[inline(never)]
    fn mac_event(&mut self) {
        let now = self.now;
        if self.mac_timer_at == Some(now) {
            self.mac_timer_at = None;
        }
        let mut out = std::mem::take(&mut self.mac_out);
        self.mac.as_mut().expect("a MAC event needs the MAC").on_timer(now, &mut out);
        for o in out.drain(..) {
            match o {
                MacOut::Delivered { tag, at, enqueued, requested, granted } => {
                    let pkt = self.parked[tag as usize];
                    self.free.push(tag as u32);
                    let a = self.access(pkt.flow);
                    let delay = at - enqueued;
                    a.n += 1;
                    a.delay_sum += delay as u128;
                    a.delay_max = a.delay_max.max(delay);
                    a.rg_sum += granted.0.saturating_sub(requested.0) as u128;
                    // Chosen drops are lost on the forward path's first hop, like a media loss.
                    if pkt.chosen_drop && pkt.hop == 0 {
                        self.lose(pkt, at);
                    } else {
                        self.hand_on(pkt, at);
                    }
                }
                MacOut::Dropped { tag } => {
                    let pkt = self.parked[tag as usize];
                    self.free.push(tag as u32);
                    self.release(&pkt);
                    self.counters(pkt.flow).mac_drops += 1;
                }
            }
        }
        self.mac_out = out;
        self.sync_mac_timer();
    }

    /// Keep one pending MAC event no later than the MAC's next deadline (as for TCP timers).
    fn sync_mac_timer(&mut self) {
        let Some(d) = self.mac.as_ref().and_then(|m| m.next_deadline()) else { return };
        if self.mac_timer_at.is_none_or(|t| d < t) {
            self.mac_timer_at = Some(d);
            self.queue.push(d, Ev::Mac);
        }
    }

    /// A FIFO link takes the packet: its queue drops it, or it departs at a time known now, lost
    /// to media errors or handed on after the propagation delay.
    fn arrive_link(&mut self, pkt: Packet, link_id: u32) {
        let now = self.now;
        let link = &mut self.links[link_id as usize];
        let admitted = link.try_admit(now, pkt.size);
        let (delay, reorder) = (link.delay, link.reorder.is_some());
        let adm = match admitted {
            Ok(adm) => adm,
            Err(why) => return self.refused(pkt, link_id, why),
        };
        if let Kind::Data { seq, .. } = pkt.kind {
            self.record_link(pkt.flow, "enqueue", seq, link_id);
        }
        // Chosen drops are lost on the forward path's first hop, like a media loss.
        if adm.lost || adm.truncated || (pkt.chosen_drop && pkt.hop == 0) {
            if adm.truncated {
                // Partial packet discard: its first cells are sent, the rest were dropped.
                return self.switch_drop(pkt, link_id);
            }
            self.lose(pkt, adm.departure);
            return;
        }
        // Reordering draws its delay only for packets that get through (net/link.rs).
        let delay = if reorder { self.links[link_id as usize].propagation() } else { delay };
        self.hand_on(pkt, adm.departure + delay);
    }

    /// A link's queue refused `pkt` whole: a full buffer, or early packet discard.
    #[cold]
    fn refused(&mut self, pkt: Packet, link_id: u32, why: Refusal) {
        if why != Refusal::Epd {
            self.release(&pkt);
        }
        if why == Refusal::Epd {
            return self.switch_drop(pkt, link_id);
        }
        let cm = self.links[link_id as usize].role == Role::CmLan;
        let c = self.counters(pkt.flow);
        c.queue_drops += 1;
        if cm {
            c.cm_buffer_drops += 1;
        }
        if let Kind::Data { seq, .. } = pkt.kind {
            self.record_link(pkt.flow, "drop", seq, link_id);
        }
    }

    /// An ATM switch discarded `pkt`, whole (EPD) or in part (PPD): a queue drop of its own kind.
    #[cold]
    fn switch_drop(&mut self, pkt: Packet, link_id: u32) {
        self.release(&pkt);
        let c = self.counters(pkt.flow);
        c.queue_drops += 1;
        c.epd_drops += 1;
        if let Kind::Data { seq, .. } = pkt.kind {
            self.record_link(pkt.flow, "epd_drop", seq, link_id);
        }
    }

    /// The ATM switches' discards, summed; None without ATM links.
    fn switch_stats(&self) -> Option<SwitchStats> {
        let mut cells = self.links.iter().filter(|l| l.counts_cells()).peekable();
        cells.peek()?;
        let mut sum = SwitchStats::default();
        for l in cells {
            sum.epd_packets += l.switch.epd_packets;
            sum.epd_cells += l.switch.epd_cells;
            sum.partial_packets += l.switch.partial_packets;
            sum.partial_cells += l.switch.partial_cells;
        }
        Some(sum)
    }

    /// `pkt` is lost in transit (media error or chosen drop) as it leaves an element at `at`.
    fn lose(&mut self, pkt: Packet, at: SimTime) {
        self.release(&pkt);
        let c = self.counters(pkt.flow);
        match pkt.kind {
            Kind::Data { seq, .. } => {
                c.data_lost += 1;
                if self.trace.is_some() {
                    let cc = self.flows[pkt.flow as usize].sender.cc();
                    self.record_at(at, pkt.flow, "lost", seq as i64, -1, &cc, -1);
                }
            }
            Kind::Ack { .. } => c.acks_lost += 1,
            Kind::Syn | Kind::SynAck | Kind::Echo { .. } => {}
        }
    }

    /// `pkt` leaves an element and reaches the next one, or its endpoint, at `at`.
    /// Always inlined: with a second caller (the MAC) the compiler stopped inlining it into the
    /// FIFO link's path, and bench_report (a) lost 10 %.
    #[inline(always)]
    fn hand_on(&mut self, mut pkt: Packet, at: SimTime) {
        pkt.hop += 1;
        if (pkt.hop as usize) < self.route(&pkt).len() {
            self.queue.push(at, Ev::Arrive(pkt));
        } else {
            self.queue.push(at, Ev::Deliver(pkt));
        }
    }

    /// A packet reaches the endpoint at the end of its route.
    fn deliver(&mut self, pkt: Packet) {
        self.tap(&pkt, false);
        if pkt.flow as usize >= self.flows.len() {
            return self.deliver_echo(pkt);
        }
        let now = self.now;
        let f = pkt.flow;
        let flow = &mut self.flows[f as usize];
        match pkt.way {
            Way::Forward => {
                let mut out = std::mem::take(&mut self.receiver_out);
                match pkt.kind {
                    Kind::Syn => flow.receiver.on_syn(&mut out),
                    Kind::SynAck => flow.receiver.on_syn_ack(&mut out),
                    Kind::Data { seq, len, .. } => flow.receiver.on_data(now, seq, len, &mut out),
                    Kind::Ack { .. } | Kind::Echo { .. } => {}
                }
                self.receiver_actions(f, &mut out);
                self.receiver_out = out;
            }
            Way::Reverse => {
                let mut out = std::mem::take(&mut self.sender_out);
                match pkt.kind {
                    Kind::Syn => flow.sender.on_syn(now, &mut out),
                    Kind::SynAck => flow.sender.on_syn_ack(now, flow.receiver.window(), &mut out),
                    Kind::Ack { ack, wnd, sack: 0 } => flow.sender.on_ack(now, ack, wnd as u64, &mut out),
                    Kind::Ack { ack, wnd, .. } => {
                        let sack = self.release(&pkt);
                        let flow = &mut self.flows[f as usize];
                        flow.sender.on_ack_sack(now, ack, wnd as u64, sack.as_slice(), &mut out)
                    }
                    Kind::Data { .. } | Kind::Echo { .. } => {}
                }
                self.sender_actions(f, &mut out);
                self.sender_out = out;
            }
        }
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

    fn record_link(&mut self, f: u32, event: &'static str, seq: u64, link: u32) {
        if self.trace.is_none() {
            return;
        }
        let now = self.now;
        let l = &mut self.links[link as usize];
        let q = if l.counts_cells() { l.cells_held(now) } else { l.held(now) } as i64;
        let cc = self.flows[f as usize].sender.cc();
        self.record_at(now, f, event, seq as i64, -1, &cc, q);
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
        FlowMetrics {
            flow: i as u32,
            bytes: transfer_bytes(f),
            delivered_bytes: r.rcv_nxt.min(transfer_bytes(f)),
            start_s: f.start.as_secs_f64(),
            end_s: end.map(|e| e.as_secs_f64()),
            duration_s: duration,
            throughput_bps: duration.filter(|d| *d > 0.0).map(|d| 8.0 * transfer_bytes(f) as f64 / d),
            finished: end.is_some(),
            timeouts: s.timeouts,
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
            access_delay_mean_s: (f.access.n > 0).then(|| f.access.delay_sum as f64 / f.access.n as f64 / 1e9),
            access_delay_max_s: (f.access.n > 0).then(|| f.access.delay_max as f64 / 1e9),
            request_grant_mean_s: (f.access.n > 0).then(|| f.access.rg_sum as f64 / f.access.n as f64 / 1e9),
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

fn transfer_bytes(f: &FlowRt) -> u64 {
    f.receiver.total()
}
