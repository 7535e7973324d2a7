//! The fabric: the network of parts as one pure state machine (docs/design.md, "The network of parts,
//! and the fabric").
//!
//! It owns the links, service queues, shared upstream channels and the routes across them, and
//! moves packets along their routes. It knows nothing of TCP, pings or per-flow metrics beyond the
//! parts' own counters (the upstream's access delays are kept per endpoint): what it did that a
//! driver must account for comes out as `NetOut` records (a drop with its reason and part, a
//! packet enqueued at a link while tapping).
//!
//! It owns no clock either. A driver hands it the time and a `Clock` to put its future work on:
//! - simulation (`sim.rs`) passes the run's event queue, so that the fabric's events interleave
//!   with the endpoints' in one (time, insertion) order;
//! - `Standalone` keeps an event queue of its own and offers `inject(now, packet)`,
//!   `next_deadline()` and `on_timer(now)` for a driver on the wall clock (emulation).
//!
//! A part with events of its own (a service queue, an upstream channel's MAC, a shared link that
//! pulls from its service queues) is a *timed part*, numbered queues first, then channels, then
//! shared links; the fabric keeps one pending `Clock::due` per timed part, no later than its next
//! deadline. A service queue a shared link pulls from has no events of its own: the link serves it.
//!
//! # Crossings: links a packet crosses without an event of its own
//! A packet leaving one part reaches the next at a time known now. Where what the next link does
//! with it is also known now, the fabric works it out at once, and the packet's next event is its
//! arrival beyond that link (`Crossing`, computed in `Fabric::new`):
//! - a link that only delays (`Link::only_delays`: no rate, limit, loss or extra service) holds
//!   nothing a packet can see: the packet arriving at `t` arrives beyond it at `t + delay`. The
//!   shared upstream's headend link behind a MAC is one;
//! - a link fed only by one FIFO link that keeps order (never a route's first hop; every route
//!   through it comes from that link, which does not reorder) sees its packets arrive in the order
//!   that link admitted them, at times known then: the CM buffer draining onto the modem's LAN
//!   (`Role::CmLan`) behind the downstream channel. It admits each as that link hands it on,
//!   exactly as it would at the arrival, since nothing else reaches it in between. A link that counts ATM cells keeps its discard counters out of this
//!   (they are read at the end of a run, when a packet admitted ahead may not have arrived).
//!
//! What such a link reports waits for the time it happens: a drop, or with taps on the enqueue
//! row, is put on the clock for the arrival's time (`Clock::report`) and comes out then.
//!
//! The tie rule this gives (docs/design.md, principle 2, ties by insertion order): a packet's event
//! beyond a crossed link is inserted when the packet was handed to that link, not when it arrived
//! there. It is the same with taps on or off, and so is every output but `engine.events`.

use crate::access::bonding::{self, chunk_of, chunk_tag, Bond, Released, BOND_TAG};
use crate::access::{MacEvent, MacKind, MacMetrics, MacOut, StationMetrics, UpBurst, Upstream};
use crate::metrics::{PlaceMetrics, QueueMetrics};
use crate::net::servicequeue::{lld_input, QueueDrop, QueueOut, ServiceQueue};
use crate::net::shared::{SharedLink, SharedOut};
use crate::net::{Element, Link, Refusal, Role, Route, SwitchStats};
use crate::packet::{Ecn, Packet, Way};
use crate::sched::EventQueue;
use crate::slab::Slab;
use crate::time::{Nanos, SimTime};

/// Where a fabric puts its future work: the driver's clock.
pub trait Clock {
    /// `pkt` reaches the next element of its route (`route[pkt.hop]`) at `at`.
    fn arrive(&mut self, at: SimTime, pkt: Packet);
    /// `pkt` reaches the endpoint at the end of its route at `at`.
    fn deliver(&mut self, at: SimTime, pkt: Packet);
    /// Timed part `part` has something due at `at`.
    fn due(&mut self, at: SimTime, part: u32);
    /// The fabric's report `record` is due at `at` (`Fabric::report_due`).
    fn report(&mut self, at: SimTime, record: u32);
}

/// How a packet crosses a link (module comment, "Crossings").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Crossing {
    /// On an event at its arrival.
    Event,
    /// It only delays: no event, no state.
    Delay,
    /// Admitted as the one link feeding it hands the packet on.
    InOrder,
}

/// Each link's crossing, from the links and every route across them; `pulled[q]`: service queue
/// `q` is served by a shared link, which hands its packets on in the order it serves them, each the
/// link's one delay after its last bit (net/shared.rs), so a link fed only by it sees them in order.
fn crossings(links: &[Link], routes: &[Route], pulled: &[bool]) -> Vec<Crossing> {
    // What feeds each link: nothing seen yet, only link `y`, or something else (a route's first
    // hop, a queue or a station, or two links).
    #[derive(Clone, Copy, PartialEq)]
    enum Fed {
        Unseen,
        Only(u32),
        OnlyPulled(u32),
        Other,
    }
    let mut fed = vec![Fed::Unseen; links.len()];
    for route in routes {
        for (h, el) in route.iter().enumerate() {
            let Element::Link(x) = *el else { continue };
            let by = match h.checked_sub(1).map(|p| route[p]) {
                Some(Element::Link(y)) => Fed::Only(y),
                Some(Element::Queue(q)) if pulled.get(q as usize).copied().unwrap_or(false) => Fed::OnlyPulled(q),
                _ => Fed::Other,
            };
            let f = &mut fed[x as usize];
            *f = match *f {
                Fed::Unseen => by,
                now if now == by => now,
                _ => Fed::Other,
            };
        }
    }
    let only_delays: Vec<bool> = links.iter().map(Link::only_delays).collect();
    (0..links.len())
        .map(|x| match fed[x] {
            _ if only_delays[x] => Crossing::Delay,
            // The feeder's departures keep its admissions' order and, with one delay, reach `x`
            // in it; a feeder crossed as a delay may be handed packets out of time order.
            Fed::Only(y)
                if links[y as usize].reorder.is_none() && !only_delays[y as usize] && !links[x].counts_cells() =>
            {
                Crossing::InOrder
            }
            Fed::OnlyPulled(_) if !links[x].counts_cells() => Crossing::InOrder,
            _ => Crossing::Event,
        })
        .collect()
}

/// Why the fabric dropped a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Why {
    /// Lost in transit: a media error, or a chosen drop (`flows.*.drop_packets`) on the first hop.
    Lost,
    /// Its buffer was full: a link's, a service queue's, or the station's queue on a shared
    /// upstream.
    Full,
    /// An ATM switch discarded it, whole (early packet discard) or in part (partial packet discard).
    Discarded,
    /// An AQM chose it.
    Aqm,
    /// The upstream MAC gave up its request (`max_retries`).
    Mac,
}

/// A packet the fabric dropped.
#[derive(Clone, Copy, Debug)]
pub struct PacketDrop {
    pub pkt: Packet,
    /// When: the end of its service for `Lost`, else when it was dropped.
    pub at: SimTime,
    pub why: Why,
    /// The element of its route that dropped it.
    pub part: Element,
    /// That element's role in the network, where it is a link or a service queue.
    pub role: Option<Role>,
    /// With taps on, what the link held after the drop (bytes, or cells at an ATM switch); else -1.
    pub held: i64,
}

/// Where an echo's time went on one element of its route, ns: waiting in a buffer (`queue`), in
/// the request/grant cycle of a shared upstream and for its granted minislots (`access`), being
/// sent (`serialisation`), and travelling (`propagation`, the plant's constant delays included).
/// The legs of an echo's elements sum to its one-way delay.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Leg {
    pub queue: Nanos,
    pub access: Nanos,
    pub serialisation: Nanos,
    pub propagation: Nanos,
}

impl Leg {
    pub fn total(&self) -> Nanos {
        self.queue + self.access + self.serialisation + self.propagation
    }
}

/// What the fabric did that its driver accounts for, in the order it happened.
#[derive(Clone, Copy, Debug)]
pub enum NetOut {
    Dropped(PacketDrop),
    /// With taps on: `pkt` joined link `link`'s buffer, which then held `held` (bytes or cells).
    Enqueued {
        pkt: Packet,
        link: u32,
        held: i64,
    },
    /// With a capture on (`capture_on`): upstream bursts to take now (`take_bursts`), while the
    /// ACKs they carry are still in flight.
    Bursts,
    /// An echo (a ping's packet) has passed element `part` of its route, spending `leg` there (it
    /// comes out when its passage is known, which may be before it happens).
    Leg {
        pkt: Packet,
        part: Element,
        leg: Leg,
    },
}

/// Whether the fabric reports an echo's legs: only pings' packets, whose delay a run breaks down.
#[inline(always)]
fn traced(pkt: &Packet) -> bool {
    matches!(pkt.kind, crate::packet::Kind::Echo { .. })
}

/// The parts a network is built from, and the routes across them (`topology::build`).
#[derive(Default)]
pub struct Parts {
    pub links: Vec<Link>,
    pub routes: Vec<Route>,
    /// Service queues (`Element::Queue`).
    pub queues: Vec<ServiceQueue>,
    /// The shared upstream channels, each its own MAC.
    pub channels: Vec<Upstream>,
    /// Station `s` (`Element::Upstream(s)`) is `station_at[s]`: (channel, index on it).
    pub station_at: Vec<(u32, u32)>,
    /// The bonded modems (access/bonding.rs): a bonded station is a sub-station on each of its
    /// channels, `station_at` naming its first.
    pub bonds: Vec<Bond>,
    /// Links shared by service queues, which they pull from (net/shared.rs); their members' queues
    /// are `pulled()`.
    pub shared: Vec<SharedLink>,
}

/// One endpoint's packets through the shared upstream: access delay (enqueue at the station ->
/// arrival at the headend) and request -> grant, in ns.
#[derive(Clone, Copy, Debug, Default)]
pub struct UpstreamAccess {
    pub n: u64,
    pub delay_sum: u128,
    pub delay_max: u64,
    pub rg_sum: u128,
}

pub struct Fabric {
    links: Vec<Link>,
    routes: Vec<Route>,
    /// Each endpoint's (forward, reverse) route ids.
    paths: Vec<(u32, u32)>,
    queues: Vec<ServiceQueue>,
    channels: Vec<Upstream>,
    shared: Vec<SharedLink>,
    /// Each service queue's (shared link, member), u32::MAX when it serves itself.
    pulled_by: Vec<(u32, u32)>,
    shared_out: Vec<SharedOut>,
    station_at: Vec<(u32, u32)>,
    bonds: Vec<Bond>,
    /// Each station's bond (`u32::MAX`: none); empty without bonds.
    bond_of: Vec<u32>,
    released: Vec<Released>,
    /// The pending `due` of each timed part (queues, then channels).
    due_at: Vec<Option<SimTime>>,
    /// Packets held by timed parts, by tag.
    parked: Slab<Packet>,
    queue_out: Vec<QueueOut>,
    mac_out: Vec<MacOut>,
    tap: bool,
    /// Each link's crossing (module comment).
    crossing: Vec<Crossing>,
    /// Reports of crossed links waiting for their time (`Clock::report`), by id.
    reports: Slab<NetOut>,
    /// Each endpoint's access through the shared upstream.
    access: Vec<UpstreamAccess>,
    /// Each place's drops and marks when the measurement started (`measure_from_now`), by name.
    place_base: std::collections::HashMap<String, PlaceMetrics>,
    /// With a capture of the DOCSIS upstream on (`capture_on`): the bursts the headends
    /// received, with their channel, until the driver takes them (`take_bursts`).
    bursts: Option<Vec<(u32, UpBurst<Packet>)>>,
    /// What the driver must account for; it drains this after each call.
    pub out: Vec<NetOut>,
}

impl Fabric {
    /// A fabric over `parts`; endpoint `e` sends forward on route `paths[e].0` and back on
    /// `paths[e].1`. `tap`: report enqueues and buffer occupancies (for the trace).
    pub fn new(parts: Parts, paths: Vec<(u32, u32)>, tap: bool) -> Fabric {
        let Parts { links, routes, queues, mut channels, station_at, bonds, shared } = parts;
        let mut pulled_by = vec![(u32::MAX, u32::MAX); queues.len()];
        for (s, link) in shared.iter().enumerate() {
            for (m, mem) in link.members().iter().enumerate() {
                assert!(queues[mem.queue as usize].is_pulled(), "a shared link's member queue is pulled");
                pulled_by[mem.queue as usize] = (s as u32, m as u32);
            }
        }
        let pulled: Vec<bool> = pulled_by.iter().map(|p| p.0 != u32::MAX).collect();
        let mut bond_of = Vec::new();
        if !bonds.is_empty() {
            bond_of = vec![u32::MAX; station_at.len()];
            for (i, b) in bonds.iter().enumerate() {
                bond_of[b.station as usize] = i as u32;
            }
        }
        if tap {
            for c in &mut channels {
                c.trace_on();
            }
        }
        let access = vec![UpstreamAccess::default(); paths.len()];
        Fabric {
            crossing: crossings(&links, &routes, &pulled),
            reports: Slab::default(),
            links,
            routes,
            paths,
            due_at: vec![None; queues.len() + channels.len() + shared.len()],
            queues,
            channels,
            shared,
            pulled_by,
            shared_out: Vec::new(),
            station_at,
            bonds,
            bond_of,
            released: Vec::new(),
            parked: Slab::default(),
            queue_out: Vec::new(),
            mac_out: Vec::new(),
            tap,
            access,
            place_base: Default::default(),
            bursts: None,
            out: Vec::new(),
        }
    }

    /// A new endpoint on routes `fwd` and `rev` (an application's connection, apps/): its id.
    pub fn add_endpoint(&mut self, fwd: u32, rev: u32) -> u32 {
        self.paths.push((fwd, rev));
        self.access.push(UpstreamAccess::default());
        (self.paths.len() - 1) as u32
    }

    /// Put the timed parts' first deadlines on the clock.
    pub fn start(&mut self, clock: &mut impl Clock) {
        for c in 0..self.channels.len() {
            self.sync_due(self.queues.len() + c, clock);
        }
    }

    /// The route `pkt` follows.
    #[inline]
    fn route(&self, pkt: &Packet) -> &Route {
        let (fwd, rev) = self.paths[pkt.flow as usize];
        let id = match pkt.way {
            Way::Forward => fwd,
            Way::Reverse => rev,
        };
        &self.routes[id as usize]
    }

    /// The upstream station packets of endpoint `e` queue at, if any: its reverse route's first,
    /// else its forward route's.
    pub fn station_of(&self, e: u32) -> Option<u32> {
        let (fwd, rev) = self.paths[e as usize];
        let on = |r: u32| {
            self.routes[r as usize].iter().find_map(|el| match el {
                Element::Upstream(s) => Some(*s),
                Element::Link(_) | Element::Queue(_) => None,
            })
        };
        on(rev).or_else(|| on(fwd))
    }

    /// An endpoint sends `pkt` (hop 0) now.
    #[inline]
    pub fn inject(&mut self, now: SimTime, pkt: Packet, clock: &mut impl Clock) {
        if self.route(&pkt).is_empty() {
            clock.deliver(now, pkt);
        } else {
            self.arrive(now, pkt, clock);
        }
    }

    /// `pkt` arrives at the next element of its route, which takes it: it drops it or, now or
    /// from an event of its own, hands it on.
    #[inline]
    pub fn arrive(&mut self, now: SimTime, pkt: Packet, clock: &mut impl Clock) {
        match self.route(&pkt)[pkt.hop as usize] {
            Element::Link(id) => self.arrive_link(now, pkt, id, clock),
            Element::Upstream(station) => self.arrive_upstream(now, pkt, station, clock),
            Element::Queue(q) => self.arrive_queue(now, pkt, q, clock),
        }
    }

    /// Timed part `part` has something due now (a `Clock::due` came).
    pub fn on_due(&mut self, now: SimTime, part: u32, clock: &mut impl Clock) {
        let p = part as usize;
        if self.due_at[p] == Some(now) {
            self.due_at[p] = None;
        }
        let (nq, nc) = (self.queues.len(), self.channels.len());
        if p < nq {
            self.queue_due(now, p, clock);
        } else if p < nq + nc {
            self.channel_due(now, p - nq, clock);
        } else {
            self.shared_due(now, p - nq - nc, clock);
        }
        self.sync_due(p, clock);
    }

    /// Keep one pending `due` per timed part no later than its next deadline. A later deadline
    /// leaves the earlier one in place; when it comes it finds nothing due and re-arms.
    fn sync_due(&mut self, p: usize, clock: &mut impl Clock) {
        let (nq, nc) = (self.queues.len(), self.channels.len());
        let next = if p < nq {
            self.queues[p].next_deadline()
        } else if p < nq + nc {
            self.channels[p - nq].next_deadline()
        } else {
            self.shared[p - nq - nc].next_deadline()
        };
        let Some(d) = next else { return };
        if self.due_at[p].is_none_or(|t| d < t) {
            self.due_at[p] = Some(d);
            clock.due(d, p as u32);
        }
    }

    /// `pkt` leaves an element and reaches the next one, or its endpoint, at `at`; the links it
    /// crosses without an event (module comment, "Crossings") are crossed now.
    /// Always inlined: with a second caller (the MAC) the compiler stopped inlining it into the
    /// FIFO link's path, and bench_report (a) lost 10 %.
    #[inline(always)]
    fn hand_on(&mut self, mut pkt: Packet, mut at: SimTime, clock: &mut impl Clock) {
        loop {
            pkt.hop += 1;
            let next = match self.route(&pkt).get(pkt.hop as usize) {
                None => return clock.deliver(at, pkt),
                Some(&Element::Link(x)) => x,
                Some(_) => return clock.arrive(at, pkt),
            };
            match self.crossing[next as usize] {
                Crossing::Event => return clock.arrive(at, pkt),
                Crossing::Delay => {
                    if self.tap {
                        // It holds nothing: what arrived at `at` left at `at` (Link::only_delays).
                        self.report_at(at, NetOut::Enqueued { pkt, link: next, held: 0 }, clock);
                    }
                    let delay = self.links[next as usize].delay;
                    if traced(&pkt) {
                        let leg = Leg { propagation: delay, ..Leg::default() };
                        self.out.push(NetOut::Leg { pkt, part: Element::Link(next), leg });
                    }
                    at = at + delay;
                }
                Crossing::InOrder => match self.cross(at, pkt, next, clock) {
                    Some(beyond) => at = beyond,
                    None => return,
                },
            }
        }
    }

    /// A link crossed in order (`Crossing::InOrder`) takes `pkt`, arriving at `at`: when it
    /// arrives beyond it, or None if the link dropped it.
    #[inline(never)]
    fn cross(&mut self, at: SimTime, pkt: Packet, id: u32, clock: &mut impl Clock) -> Option<SimTime> {
        self.admit_link(at, pkt, id, Some(clock))
    }

    /// Report `record` at `at`, on the clock.
    #[cold]
    fn report_at(&mut self, at: SimTime, record: NetOut, clock: &mut impl Clock) {
        let id = self.reports.insert(record);
        clock.report(at, id);
    }

    /// A report put on the clock (`Clock::report`) is due: it comes out now, in `out`.
    pub fn report_due(&mut self, record: u32) {
        let r = self.reports.remove(record);
        self.out.push(r);
    }

    /// A timed part has finished serving `pkt` at `at`: chosen drops are lost on the forward
    /// path's first hop, like a media loss.
    fn served(&mut self, pkt: Packet, at: SimTime, part: Element, clock: &mut impl Clock) {
        if pkt.chosen_drop && pkt.hop == 0 {
            self.drop(pkt, at, Why::Lost, part, None, -1);
        } else {
            self.hand_on(pkt, at, clock);
        }
    }

    #[inline]
    fn drop(&mut self, pkt: Packet, at: SimTime, why: Why, part: Element, role: Option<Role>, held: i64) {
        self.out.push(NetOut::Dropped(PacketDrop { pkt, at, why, part, role, held }));
    }

    /// Park `pkt` while a timed part holds it; its tag.
    fn park(&mut self, pkt: Packet) -> u32 {
        self.parked.insert(pkt)
    }

    fn unpark(&mut self, tag: u64) -> Packet {
        self.parked.remove(tag as u32)
    }

    // --- links ------------------------------------------------------------------------------

    /// What link `id` holds now, for a tap: cells at an ATM switch, else bytes.
    fn held(&mut self, now: SimTime, id: u32) -> i64 {
        let l = &mut self.links[id as usize];
        (if l.counts_cells() { l.cells_held(now) } else { l.held(now) }) as i64
    }

    /// A FIFO link takes the packet: its queue drops it, or it departs at a time known now, lost
    /// to media errors or handed on after the propagation delay.
    fn arrive_link<K: Clock>(&mut self, now: SimTime, pkt: Packet, id: u32, clock: &mut K) {
        if let Some(beyond) = self.admit_link::<K>(now, pkt, id, None) {
            self.hand_on(pkt, beyond, clock);
        }
    }

    /// Link `id` takes `pkt`, arriving at `at`: when it arrives beyond the link, or None if the
    /// link dropped it. What it reports goes out now, or with `ahead` (a crossing, worked out ahead
    /// of the arrival) on that clock at `at`.
    #[inline(always)]
    fn admit_link<K: Clock>(
        &mut self,
        at: SimTime,
        pkt: Packet,
        id: u32,
        mut ahead: Option<&mut K>,
    ) -> Option<SimTime> {
        let link = &mut self.links[id as usize];
        let admitted = link.try_admit(at, pkt.size);
        let (delay, reorder) = (link.delay, link.reorder.is_some());
        let adm = match admitted {
            Ok(adm) => adm,
            Err(why) => {
                self.refused(at, pkt, id, why, ahead);
                return None;
            }
        };
        if self.tap {
            let held = self.held(at, id);
            self.report(at, NetOut::Enqueued { pkt, link: id, held }, ahead.as_deref_mut());
        }
        // Chosen drops are lost on the forward path's first hop, like a media loss.
        if adm.lost || adm.truncated || (pkt.chosen_drop && pkt.hop == 0) {
            if adm.truncated {
                // Partial packet discard: its first cells are sent, the rest were dropped.
                self.refused(at, pkt, id, Refusal::Epd, ahead);
            } else {
                self.links[id as usize].drops.lost += 1;
                let d = PacketDrop {
                    pkt,
                    at: adm.departure,
                    why: Why::Lost,
                    part: Element::Link(id),
                    role: None,
                    held: -1,
                };
                self.report(at, NetOut::Dropped(d), ahead);
            }
            return None;
        }
        // Reordering draws its delay only for packets that get through (net/link.rs).
        let delay = if reorder { self.links[id as usize].propagation() } else { delay };
        if traced(&pkt) {
            let leg =
                Leg { queue: adm.start - at, serialisation: adm.departure - adm.start, propagation: delay, access: 0 };
            self.out.push(NetOut::Leg { pkt, part: Element::Link(id), leg });
        }
        Some(adm.departure + delay)
    }

    /// Out now, or at `at` on `ahead`'s clock.
    #[inline(always)]
    fn report<K: Clock>(&mut self, at: SimTime, record: NetOut, ahead: Option<&mut K>) {
        match ahead {
            None => self.out.push(record),
            Some(clock) => self.report_at(at, record, clock),
        }
    }

    /// Link `id`'s queue refused `pkt` arriving at `at` (a full buffer, or an ATM switch's discard).
    #[cold]
    fn refused<K: Clock>(&mut self, at: SimTime, pkt: Packet, id: u32, why: Refusal, ahead: Option<&mut K>) {
        let why = if why == Refusal::Epd { Why::Discarded } else { Why::Full };
        self.links[id as usize].drops.count(why);
        let held = if self.tap { self.held(at, id) } else { -1 };
        let role = self.links[id as usize].role;
        let d = PacketDrop { pkt, at, why, part: Element::Link(id), role: Some(role), held };
        self.report(at, NetOut::Dropped(d), ahead);
    }

    // --- service queues ---------------------------------------------------------------------

    /// The packet joins a service queue (net/servicequeue.rs), or is dropped by its limit or AQM.
    #[inline(never)]
    fn arrive_queue(&mut self, now: SimTime, pkt: Packet, q: u32, clock: &mut impl Clock) {
        let tag = self.park(pkt);
        match self.queues[q as usize].enqueue_packet(now, tag as u64, &pkt) {
            Ok(false) => {}
            // An AQM marked it instead of dropping it (PIE, RFC 8033 Sec. 5.1; LLD, RFC 9332).
            Ok(true) => self.parked[tag as usize].ecn = Ecn::Ce,
            Err(why) => {
                self.parked.free(tag);
                let why = if why == QueueDrop::Aqm { Why::Aqm } else { Why::Full };
                let role = self.queues[q as usize].role;
                return self.drop(pkt, now, why, Element::Queue(q), Some(role), -1);
            }
        }
        match self.pulled_by[q as usize] {
            (u32::MAX, _) => self.sync_due(q as usize, clock),
            (s, m) => {
                self.shared[s as usize].wake(now, m, &self.queues);
                self.sync_due(self.queues.len() + self.channels.len() + s as usize, clock);
            }
        }
    }

    fn queue_due(&mut self, now: SimTime, q: usize, clock: &mut impl Clock) {
        let mut out = std::mem::take(&mut self.queue_out);
        self.queues[q].on_timer(now, &mut out);
        for o in out.drain(..) {
            match o {
                QueueOut::Sent { tag, at, waited, tx } => {
                    let pkt = self.unpark(tag);
                    if traced(&pkt) {
                        let leg = Leg { queue: waited, serialisation: tx, propagation: at - now - tx, access: 0 };
                        self.out.push(NetOut::Leg { pkt, part: Element::Queue(q as u32), leg });
                    }
                    self.served(pkt, at, Element::Queue(q as u32), clock);
                }
                QueueOut::Dropped { tag } => {
                    let pkt = self.unpark(tag);
                    let role = self.queues[q].role;
                    self.drop(pkt, now, Why::Aqm, Element::Queue(q as u32), Some(role), -1);
                }
                // CoDel marked it as it leaves (RFC 8289 Sec. 5); its Sent follows.
                QueueOut::Marked { tag } => self.parked[tag as usize].ecn = Ecn::Ce,
            }
        }
        self.queue_out = out;
    }

    // --- shared links ------------------------------------------------------------------------

    /// Let shared link `s` take its next packet from its service queues, and hand on what leaves.
    #[inline(never)]
    fn shared_due(&mut self, now: SimTime, s: usize, clock: &mut impl Clock) {
        let mut out = std::mem::take(&mut self.shared_out);
        self.shared[s].on_timer(now, &mut self.queues, &mut out);
        let role = self.shared[s].role;
        for o in out.drain(..) {
            match o {
                SharedOut::Sent { member, tag, end, at, lost, waited } => {
                    let q = self.shared[s].members()[member as usize].queue;
                    let pkt = self.unpark(tag);
                    if traced(&pkt) && !lost {
                        let leg = Leg { queue: waited, serialisation: end - now, propagation: at - end, access: 0 };
                        self.out.push(NetOut::Leg { pkt, part: Element::Queue(q), leg });
                    }
                    if lost {
                        // Media loss on the channel, when its service ends (link.rs).
                        self.drop(pkt, end, Why::Lost, Element::Queue(q), Some(role), -1);
                    } else {
                        self.served(pkt, at, Element::Queue(q), clock);
                    }
                }
                SharedOut::Dropped { member, tag } => {
                    let q = self.shared[s].members()[member as usize].queue;
                    let pkt = self.unpark(tag);
                    let role = self.queues[q as usize].role;
                    self.drop(pkt, now, Why::Aqm, Element::Queue(q), Some(role), -1);
                }
                SharedOut::Marked { tag } => self.parked[tag as usize].ecn = Ecn::Ce,
            }
        }
        self.shared_out = out;
    }

    // --- shared upstream channels -----------------------------------------------------------

    /// The packet joins its station's queue on the shared upstream, or is refused if it is full.
    // Out of line: the FIFO networks' hot loop must not grow by the MAC's code (bench_report (a)).
    #[inline(never)]
    fn arrive_upstream(&mut self, now: SimTime, pkt: Packet, station: u32, clock: &mut impl Clock) {
        if self.bond_of.get(station as usize).is_some_and(|&b| b != u32::MAX) {
            return self.arrive_bond(now, pkt, station, clock);
        }
        let tag = self.park(pkt);
        let (c, local) = self.station_at[station as usize];
        let c = c as usize;
        match self.channels[c].enqueue_packet(now, local, tag as u64, pkt.size, lld_input(&pkt)) {
            Ok(false) => {}
            // Its service flow's AQM marked it (access/serviceflow.rs).
            Ok(true) => self.parked[tag as usize].ecn = Ecn::Ce,
            Err(why) => {
                self.parked.free(tag);
                let why = if why == QueueDrop::Aqm { Why::Aqm } else { Why::Full };
                return self.drop(pkt, now, why, Element::Upstream(station), None, -1);
            }
        }
        self.sync_due(self.queues.len() + c, clock);
    }

    /// Let channel `c`'s MAC do what is due, and hand on the packets it delivered at the headend.
    // Out of line: the FIFO networks' hot loop must not grow by the MAC's code (bench_report (a)).
    #[inline(never)]
    fn channel_due(&mut self, now: SimTime, c: usize, clock: &mut impl Clock) {
        let mut out = std::mem::take(&mut self.mac_out);
        self.channels[c].on_timer(now, &mut out);
        for o in out.drain(..) {
            match o {
                MacOut::Delivered { tag, at, requested, granted, .. } if tag >= BOND_TAG => {
                    self.bond_segment(tag, at, granted.0.saturating_sub(requested.0), clock)
                }
                MacOut::Dropped { tag } if tag >= BOND_TAG => self.bond_retry(now, c, tag),
                MacOut::Delivered { tag, at, start, enqueued, ready, requested, granted, ce } => {
                    let mut pkt = self.unpark(tag);
                    if ce {
                        pkt.ecn = Ecn::Ce;
                    }
                    let part = self.route(&pkt)[pkt.hop as usize];
                    if traced(&pkt) {
                        // Held at the modem by its flow's rate cap until `ready` (behind the flow's
                        // packets before it); then the MAC: contention, the request/grant cycle and
                        // the grants for the packets ahead, the wait for its minislots; then its burst.
                        let ready = ready.max(enqueued).min(start);
                        let leg = Leg {
                            queue: ready - enqueued,
                            access: start - ready,
                            serialisation: at - start,
                            propagation: 0,
                        };
                        self.out.push(NetOut::Leg { pkt, part, leg });
                    }
                    let a = &mut self.access[pkt.flow as usize];
                    let delay = at - ready;
                    a.n += 1;
                    a.delay_sum += delay as u128;
                    a.delay_max = a.delay_max.max(delay);
                    a.rg_sum += granted.0.saturating_sub(requested.0) as u128;
                    self.served(pkt, at, part, clock);
                }
                MacOut::Dropped { tag } => {
                    let pkt = self.unpark(tag);
                    let part = self.route(&pkt)[pkt.hop as usize];
                    self.drop(pkt, now, Why::Mac, part, None, -1);
                }
                MacOut::AqmDropped { tag } => {
                    let pkt = self.unpark(tag);
                    let part = self.route(&pkt)[pkt.hop as usize];
                    self.drop(pkt, now, Why::Aqm, part, None, -1);
                }
                MacOut::Captured => self.collect_bursts(c),
            }
        }
        self.mac_out = out;
    }

    /// A packet reaches a bonded modem (access/bonding.rs): it joins the modem's FIFO, and a
    /// placeholder of its size joins the sub-station it is asked for on.
    #[cold]
    #[inline(never)]
    fn arrive_bond(&mut self, now: SimTime, pkt: Packet, station: u32, clock: &mut impl Clock) {
        let b = self.bond_of[station as usize];
        let tag = self.park(pkt);
        if !self.bonds[b as usize].enqueue(now, tag as u64, pkt.size) {
            self.parked.free(tag);
            return self.drop(pkt, now, Why::Full, Element::Upstream(station), None, -1);
        }
        // The sub-stations' queues as of now, background arrivals included (Upstream::take_background_until).
        for &(c, _) in &self.bonds[b as usize].subs {
            self.channels[c as usize].take_background_until(now);
        }
        let channels = &self.channels;
        let (c, local) = bonding::pick(&self.bonds[b as usize].subs, |c, i| channels[c as usize].queued_bytes(i));
        let queued = self.channels[c as usize].enqueue(now, local, chunk_tag(b, pkt.size), pkt.size);
        debug_assert!(queued, "a sub-station's queue is unbounded");
        self.sync_due(self.queues.len() + c as usize, clock);
    }

    /// A bonded sub-station sent a placeholder's bytes in a grant ending at `at`: the modem's next
    /// bytes, as a segment; hand on the packets the CMTS releases.
    #[cold]
    #[inline(never)]
    fn bond_segment(&mut self, tag: u64, at: SimTime, request_grant: u64, clock: &mut impl Clock) {
        let (b, bytes) = chunk_of(tag).expect("a bonded placeholder");
        let mut released = std::mem::take(&mut self.released);
        self.bonds[b as usize].segment(at, bytes, &mut released);
        for r in released.drain(..) {
            let pkt = self.unpark(r.tag);
            let part = self.route(&pkt)[pkt.hop as usize];
            if traced(&pkt) {
                // A bonded modem's packet: its whole time at the modem and on the channels as access.
                let leg = Leg { access: r.at - r.enqueued, ..Leg::default() };
                self.out.push(NetOut::Leg { pkt, part, leg });
            }
            let a = &mut self.access[pkt.flow as usize];
            let delay = r.at - r.enqueued;
            a.n += 1;
            a.delay_sum += delay as u128;
            a.delay_max = a.delay_max.max(delay);
            // Request to grant of the segment that completed it (bonding.rs).
            a.rg_sum += request_grant as u128;
            self.served(pkt, r.at, part, clock);
        }
        self.released = released;
    }

    /// A bonded sub-station's request was given up (`max_retries`): its bytes stay in the modem's
    /// FIFO, so it asks for them again on the same channel (bonding.rs).
    #[cold]
    #[inline(never)]
    fn bond_retry(&mut self, now: SimTime, c: usize, tag: u64) {
        let (b, bytes) = chunk_of(tag).expect("a bonded placeholder");
        let local = self.bonds[b as usize].subs.iter().find(|s| s.0 as usize == c).expect("a sub-station").1;
        let queued = self.channels[c].enqueue(now, local, tag, bytes);
        debug_assert!(queued, "a sub-station's queue is unbounded");
    }

    /// Record the bursts of every DOCSIS channel from now on (802.14 has no capture format);
    /// false if there is none.
    pub fn capture_on(&mut self) -> bool {
        let mut any = false;
        for ch in self.channels.iter_mut().filter(|ch| ch.kind() == MacKind::Docsis) {
            ch.capture_on();
            any = true;
        }
        if any {
            self.bursts.get_or_insert_with(Vec::new);
        }
        any
    }

    /// Channel `c`'s new bursts (a `MacOut::Captured` came), their packets looked up while still
    /// parked (the MAC's output after the marker unparks them); the driver is told.
    #[cold]
    #[inline(never)]
    fn collect_bursts(&mut self, c: usize) {
        let rows = self.channels[c].take_bursts();
        let Some(bursts) = self.bursts.as_mut() else { return };
        if rows.is_empty() {
            return;
        }
        let parked = &self.parked;
        for b in rows {
            // A bonded modem's placeholders stand for bytes, not packets: left out.
            let packets = b.packets.iter().filter(|&&tag| tag < BOND_TAG).map(|&tag| parked[tag as usize]).collect();
            bursts.push((c as u32, UpBurst { at: b.at, station: b.station, request: b.request, packets }));
        }
        self.out.push(NetOut::Bursts);
    }

    /// The bursts recorded since the last call (with `capture_on`), each with its channel.
    pub fn take_bursts(&mut self) -> Vec<(u32, UpBurst<Packet>)> {
        self.bursts.as_mut().map(std::mem::take).unwrap_or_default()
    }

    // --- the parts' own counters ------------------------------------------------------------

    /// Endpoint `e`'s access through the shared upstream.
    pub fn access(&self, e: u32) -> UpstreamAccess {
        self.access[e as usize]
    }

    /// Take in every background arrival due by `now` (Upstream::take_background_until): before the MACs'
    /// counters and queues are read at the end of a run.
    pub fn take_background_until(&mut self, now: SimTime) {
        for c in &mut self.channels {
            c.take_background_until(now);
        }
    }

    /// The upstream MACs' totals, summed over the channels; None without a shared upstream.
    pub fn mac_metrics(&self) -> Option<MacMetrics> {
        let (first, rest) = self.channels.split_first()?;
        let mut sum = first.metrics().clone();
        for c in rest {
            sum.add(c.metrics());
        }
        Some(sum)
    }

    /// Each channel's own MAC counters, where there are several channels.
    pub fn channel_metrics(&self) -> Vec<MacMetrics> {
        if self.channels.len() < 2 {
            return Vec::new();
        }
        self.channels.iter().map(|c| c.metrics().clone()).collect()
    }

    /// One row per upstream station, in station order; a bonded modem's sub-stations, and an LLD
    /// modem's low-latency station (access/serviceflow.rs), summed into its row, with a bonded
    /// modem's resequencing.
    pub fn station_metrics(&self) -> Vec<StationMetrics> {
        let mut rows: Vec<StationMetrics> = self.channels.iter().flat_map(|m| m.station_metrics()).collect();
        rows.sort_by_key(|r| r.station); // stable: a modem's own station first, then its others
        if rows.windows(2).all(|w| w[0].station != w[1].station) {
            return rows;
        }
        let mut merged: Vec<StationMetrics> = Vec::with_capacity(rows.len());
        for r in rows {
            match merged.last_mut() {
                Some(m) if m.station == r.station => m.merge(&r),
                _ => merged.push(r),
            }
        }
        for b in &self.bonds {
            let row = &mut merged[b.station as usize];
            row.resequencing = Some(b.metrics.clone());
            row.queue_drops += b.queue_drops;
        }
        merged
    }

    /// The MACs' trace rows (with taps on).
    pub fn take_mac_trace(&mut self) -> Vec<MacEvent> {
        self.channels.iter_mut().flat_map(|m| m.take_trace()).collect()
    }

    /// The ATM switches' discards, summed; None without ATM links.
    pub fn switch_stats(&self) -> Option<SwitchStats> {
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

    /// Link `id`'s name in the report: its own, or its role and number.
    fn link_name(&self, id: u32) -> String {
        let l = &self.links[id as usize];
        if l.name.is_empty() {
            format!("link{id}_{}", role_word(l.role))
        } else {
            l.name.clone()
        }
    }

    /// The place an element of a route is, as `places` names it: a link's buffer, a service
    /// queue, a modem's queue on a shared upstream (a bonded modem's FIFO).
    pub fn place_name(&self, part: Element) -> String {
        match part {
            Element::Link(id) => self.link_name(id),
            Element::Queue(q) => self.queues[q as usize].name.clone(),
            Element::Upstream(s) => {
                if let Some(&b) = self.bond_of.get(s as usize).filter(|&&b| b != u32::MAX) {
                    return format!("modem{}_bond", self.bonds[b as usize].station);
                }
                let (c, local) = self.station_at[s as usize];
                self.channels[c as usize].waiting_places().nth(local as usize).map_or_else(String::new, |p| p.0)
            }
        }
    }

    /// `sim.measure_from_s`: every place's report counts from now on (its waits and what arrivals
    /// find start afresh, its drops and marks are counted from their numbers now).
    pub fn measure_from_now(&mut self) {
        let base = self.places_since_start();
        self.place_base = base.into_iter().map(|p| (p.name.clone(), p)).collect();
        for l in &mut self.links {
            l.waits = Default::default();
        }
        for q in &mut self.queues {
            q.waits = Default::default();
        }
        for c in &mut self.channels {
            c.restart_waits();
        }
        for b in &mut self.bonds {
            b.place = Default::default();
        }
    }

    /// Every place packets waited (`PlaceMetrics`): the links with a buffer, the service queues,
    /// the modems' queues on the shared upstreams, the bonded modems' FIFOs, each that a packet
    /// reached (from `sim.measure_from_s` on, `measure_from_now`).
    pub fn places(&self) -> Vec<PlaceMetrics> {
        let mut rows = self.places_since_start();
        for r in &mut rows {
            if let Some(b) = self.place_base.get(&r.name) {
                r.drops_full -= b.drops_full;
                r.drops_aqm -= b.drops_aqm;
                r.drops_other -= b.drops_other;
                r.lost -= b.lost;
                r.marks -= b.marks;
            }
        }
        rows.retain(|r| r.arrivals > 0 || r.drops_full + r.drops_aqm + r.drops_other + r.lost > 0);
        rows
    }

    fn places_since_start(&self) -> Vec<PlaceMetrics> {
        let mut rows = Vec::new();
        for (id, l) in self.links.iter().enumerate() {
            if self.crossing[id] == Crossing::Delay || (l.waits.arrivals == 0 && l.drops.full == 0) {
                continue;
            }
            let mut row = PlaceMetrics::of(self.link_name(id as u32), "link", direction(l.role), &l.waits);
            row.drops_full = l.drops.full;
            row.drops_other = l.drops.discarded;
            row.lost = l.drops.lost;
            rows.push(row);
        }
        for q in &self.queues {
            if q.waits.arrivals == 0 {
                continue;
            }
            // A DOCSIS service flow's queue, or a queue an AQM governs (the hfc modem's, the bottleneck's).
            let kind = match q.role {
                Role::DownstreamChannel | Role::UpstreamChannel => "service_flow",
                _ => "queue",
            };
            let mut row = PlaceMetrics::of(q.name.clone(), kind, direction(q.role), &q.waits);
            row.drops_full = q.stats.drops_full;
            row.drops_aqm = q.stats.drops_aqm;
            row.marks = q.stats.marks_aqm;
            rows.push(row);
        }
        for ch in &self.channels {
            for (name, _, flow, waits) in ch.waiting_places() {
                if waits.arrivals == 0 {
                    continue;
                }
                let kind = if flow.is_some() { "service_flow" } else { "modem_queue" };
                let mut row = PlaceMetrics::of(name, kind, "up", waits);
                if let Some(f) = flow {
                    row.drops_full = f.drops_full;
                    row.drops_aqm = f.drops_aqm;
                    row.marks = f.marks_aqm;
                }
                rows.push(row);
            }
        }
        for b in &self.bonds {
            if b.place.arrivals > 0 {
                let mut row = PlaceMetrics::of(format!("modem{}_bond", b.station), "bond", "up", &b.place);
                row.drops_full = b.queue_drops;
                rows.push(row);
            }
        }
        rows
    }

    /// The service flows' counters: the service queues, then the modems' upstream flows that are
    /// their stations' queues (access/serviceflow.rs).
    pub fn queue_metrics(&self) -> Vec<QueueMetrics> {
        let row = |name: &str, st: &crate::net::servicequeue::QueueStats| QueueMetrics {
            name: name.to_string(),
            sent: st.sent,
            drops_full: st.drops_full,
            drops_aqm: st.drops_aqm,
            max_bytes: st.max_bytes,
            marks_aqm: st.marks_aqm,
        };
        let mut rows: Vec<QueueMetrics> = self.queues.iter().map(|q| row(&q.name, &q.stats)).collect();
        rows.extend(self.channels.iter().flat_map(|c| c.flows()).map(|f| row(&f.name, &f.stats)));
        rows
    }
}

/// A role as a link's name reads it.
fn role_word(r: Role) -> &'static str {
    match r {
        Role::DownstreamChannel => "downstream",
        Role::UpstreamChannel => "upstream",
        Role::CmLan => "cm_lan",
        Role::Bottleneck => "bottleneck",
        Role::Access => "access",
    }
}

/// The side of the plant a part of this role is on.
fn direction(r: Role) -> &'static str {
    match r {
        Role::DownstreamChannel | Role::CmLan => "down",
        Role::UpstreamChannel => "up",
        Role::Bottleneck | Role::Access => "-",
    }
}

/// The fabric's own events, for `Standalone`.
#[derive(Clone, Copy, Debug)]
enum Ev {
    Arrive(Packet),
    Deliver(Packet),
    Due(u32),
    Report(u32),
}

impl Clock for EventQueue<Ev> {
    fn arrive(&mut self, at: SimTime, pkt: Packet) {
        self.push(at, Ev::Arrive(pkt));
    }
    fn deliver(&mut self, at: SimTime, pkt: Packet) {
        self.push(at, Ev::Deliver(pkt));
    }
    fn due(&mut self, at: SimTime, part: u32) {
        self.push(at, Ev::Due(part));
    }
    fn report(&mut self, at: SimTime, record: u32) {
        self.push(at, Ev::Report(record));
    }
}

/// A fabric with a clock queue of its own, for a driver on the wall clock: it injects packets
/// when they are read, asks `next_deadline` when to come back, and at `on_timer(now)` gets the
/// packets delivered by then (and the fabric's other outputs in `fabric.out`).
pub struct Standalone {
    pub fabric: Fabric,
    queue: EventQueue<Ev>,
    next: Option<SimTime>,
}

impl Standalone {
    pub fn new(mut fabric: Fabric) -> Standalone {
        let mut queue = EventQueue::default();
        fabric.start(&mut queue);
        let mut s = Standalone { fabric, queue, next: None };
        s.next = s.peek();
        s
    }

    fn peek(&self) -> Option<SimTime> {
        self.queue.peek_time()
    }

    /// An endpoint outside sends `pkt` now.
    pub fn inject(&mut self, now: SimTime, pkt: Packet) {
        self.fabric.inject(now, pkt, &mut self.queue);
        self.next = self.peek();
    }

    /// When the fabric next needs attention.
    pub fn next_deadline(&self) -> Option<SimTime> {
        self.next
    }

    /// Do everything due by `now`; push the packets delivered to their endpoints onto `delivered`.
    pub fn on_timer(&mut self, now: SimTime, delivered: &mut Vec<(SimTime, Packet)>) {
        while self.queue.peek_time().is_some_and(|t| t <= now) {
            let (t, ev) = self.queue.pop().expect("peeked");
            match ev {
                Ev::Arrive(pkt) => self.fabric.arrive(t, pkt, &mut self.queue),
                Ev::Deliver(pkt) => delivered.push((t, pkt)),
                Ev::Due(part) => self.fabric.on_due(t, part, &mut self.queue),
                Ev::Report(record) => self.fabric.report_due(record),
            }
        }
        self.next = self.peek();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::QueueLimit;
    use crate::packet::Kind;
    use crate::rng::Stream;
    const NANOS_PER_MS: u64 = 1_000_000;

    fn data(flow: u32, seq: u64, size: u32) -> Packet {
        Packet {
            flow,
            way: Way::Forward,
            hop: 0,
            size,
            kind: Kind::Data { seq, len: size - 40, pkt_no: 1 },
            chosen_drop: false,
            ecn: crate::packet::Ecn::NotEct,
            flags: 0,
        }
    }

    /// Two links in series, 8 Mb/s then 80 Mb/s, 1 ms propagation each, a 2-packet buffer on the
    /// first; endpoint 0 forward across both, back across nothing.
    fn two_links() -> Standalone {
        let link = |rate, limit| Link::new(Role::Bottleneck, rate, NANOS_PER_MS, limit, true, 0.0, Stream::new(1, 1));
        let parts = Parts {
            links: vec![link(8_000_000, QueueLimit::Packets(2)), link(80_000_000, QueueLimit::Unbounded)],
            routes: vec![vec![Element::Link(0), Element::Link(1)], vec![]],
            queues: vec![],
            channels: vec![],
            station_at: vec![],
            bonds: vec![],
            shared: vec![],
        };
        Standalone::new(Fabric::new(parts, vec![(0, 1)], false))
    }

    /// `two_links` where link 1 is also the first hop of endpoint 0's way back: it is then fed by
    /// more than link 0, and is crossed on an event at each arrival.
    fn two_links_the_second_also_a_first_hop() -> Standalone {
        let Standalone { fabric, .. } = two_links();
        let Fabric { links, mut routes, queues, channels, station_at, bonds, shared, .. } = fabric;
        routes[1] = vec![Element::Link(1)];
        let parts = Parts { links, routes, queues, channels, station_at, bonds, shared };
        Standalone::new(Fabric::new(parts, vec![(0, 1)], false))
    }

    #[test]
    fn a_packet_crosses_two_links_on_a_hand_worked_timeline() {
        // 1000 B at 8 Mb/s: 1 ms of service, then 1 ms of propagation: at link 1 at 2 ms. At
        // 80 Mb/s: 0.1 ms of service, 1 ms of propagation: delivered at 3.1 ms.
        // Link 1 is fed only by link 0, so the packet's passage through it is known as link 0
        // takes it: the next deadline is the delivery.
        let mut s = two_links();
        assert_eq!(s.next_deadline(), None);
        s.inject(SimTime::ZERO, data(0, 0, 1000));
        assert_eq!(s.next_deadline(), Some(SimTime(3_100_000)));
        // Fed by something else too, link 1 takes the packet at its arrival, 2 ms.
        let mut e = two_links_the_second_also_a_first_hop();
        e.inject(SimTime::ZERO, data(0, 0, 1000));
        assert_eq!(e.next_deadline(), Some(SimTime(2 * NANOS_PER_MS)));
        let mut got = Vec::new();
        e.on_timer(SimTime(2 * NANOS_PER_MS - 1), &mut got);
        assert!(got.is_empty());
        e.on_timer(SimTime(2 * NANOS_PER_MS), &mut got);
        assert_eq!(e.next_deadline(), Some(SimTime(3_100_000)));
        for s in [&mut s, &mut e] {
            let mut got = Vec::new();
            s.on_timer(SimTime(10 * NANOS_PER_MS), &mut got);
            assert_eq!(got.len(), 1);
            assert_eq!(got[0].0, SimTime(3_100_000));
            assert_eq!((got[0].1.hop, got[0].1.kind), (2, Kind::Data { seq: 0, len: 960, pkt_no: 1 }));
            assert_eq!(s.next_deadline(), None);
            assert!(s.fabric.out.is_empty());
        }
    }

    #[test]
    fn a_crossed_link_reports_its_drop_at_the_arrival() {
        // Link 0: 80 Mb/s, 1 ms, unbounded; link 1: 8 Mb/s, 1 ms, a buffer of one packet counting
        // the one being sent. Two 1000 B packets at 0 leave link 0 at 0.1 and 0.2 ms and reach
        // link 1 at 1.1 and 1.2 ms: the first is sent until 2.1 ms, the second finds the buffer
        // full. The drop comes out at 1.2 ms, not when link 0 took the packet.
        let link = |rate, limit| Link::new(Role::Bottleneck, rate, NANOS_PER_MS, limit, true, 0.0, Stream::new(1, 1));
        let parts = Parts {
            links: vec![link(80_000_000, QueueLimit::Unbounded), link(8_000_000, QueueLimit::Packets(1))],
            routes: vec![vec![Element::Link(0), Element::Link(1)], vec![]],
            ..Parts::default()
        };
        let mut s = Standalone::new(Fabric::new(parts, vec![(0, 1)], false));
        s.inject(SimTime::ZERO, data(0, 0, 1000));
        s.inject(SimTime::ZERO, data(0, 960, 1000));
        assert!(s.fabric.out.is_empty());
        assert_eq!(s.next_deadline(), Some(SimTime(1_200_000)));
        let mut got = Vec::new();
        s.on_timer(SimTime(1_199_999), &mut got);
        assert!(s.fabric.out.is_empty());
        s.on_timer(SimTime(1_200_000), &mut got);
        assert_eq!(s.fabric.out.len(), 1);
        let NetOut::Dropped(d) = s.fabric.out[0] else { panic!("{:?}", s.fabric.out[0]) };
        assert_eq!((d.why, d.part, d.at), (Why::Full, Element::Link(1), SimTime(1_200_000)));
        assert_eq!(d.pkt.kind, Kind::Data { seq: 960, len: 960, pkt_no: 1 });
        s.on_timer(SimTime(10 * NANOS_PER_MS), &mut got);
        assert_eq!(
            got.iter().map(|(t, p)| (t.0, p.kind)).collect::<Vec<_>>(),
            vec![(3_100_000, data(0, 0, 1000).kind)]
        );
    }

    #[test]
    fn with_taps_on_crossed_links_report_their_enqueues_at_the_arrival() {
        // Link 0: 8 Mb/s, 1 ms; link 1: 80 Mb/s, 1 ms, crossed in order; link 2 only delays, 1 ms.
        // 1000 B injected at 0: link 0's row comes out at once; link 1's at the arrival, 2 ms,
        // holding the packet; link 2's at its arrival, 2 + 0.1 + 1 = 3.1 ms, holding nothing
        // (what reaches it at t leaves at t); delivered at 4.1 ms.
        let link = |rate, limit| Link::new(Role::Bottleneck, rate, NANOS_PER_MS, limit, true, 0.0, Stream::new(1, 1));
        let parts = Parts {
            links: vec![
                link(8_000_000, QueueLimit::Packets(2)),
                link(80_000_000, QueueLimit::Unbounded),
                link(0, QueueLimit::Unbounded),
            ],
            routes: vec![vec![Element::Link(0), Element::Link(1), Element::Link(2)], vec![]],
            ..Parts::default()
        };
        let mut s = Standalone::new(Fabric::new(parts, vec![(0, 1)], true));
        let rows = |s: &mut Standalone| -> Vec<(u32, i64)> {
            s.fabric
                .out
                .drain(..)
                .map(|o| match o {
                    NetOut::Enqueued { link, held, .. } => (link, held),
                    other => panic!("{other:?}"),
                })
                .collect()
        };
        s.inject(SimTime::ZERO, data(0, 0, 1000));
        assert_eq!(rows(&mut s), vec![(0, 1)]);
        let mut got = Vec::new();
        for (at, want) in [(2_000_000, vec![(1, 1)]), (3_100_000, vec![(2, 0)])] {
            assert_eq!(s.next_deadline(), Some(SimTime(at)));
            s.on_timer(SimTime(at - 1), &mut got);
            assert!(s.fabric.out.is_empty());
            s.on_timer(SimTime(at), &mut got);
            assert_eq!(rows(&mut s), want);
        }
        assert_eq!(s.next_deadline(), Some(SimTime(4_100_000)));
        s.on_timer(SimTime(4_100_000), &mut got);
        assert_eq!(got.iter().map(|(t, _)| t.0).collect::<Vec<_>>(), vec![4_100_000]);
    }

    #[test]
    fn which_links_are_crossed_without_an_event() {
        use Crossing::{Delay, Event, InOrder};
        let plain = || {
            Link::new(Role::Bottleneck, 8_000_000, NANOS_PER_MS, QueueLimit::Packets(5), true, 0.0, Stream::new(1, 1))
        };
        let delay = || Link::new(Role::Access, 0, NANOS_PER_MS, QueueLimit::Unbounded, true, 0.0, Stream::new(1, 2));
        let reordering = || {
            let mut l = plain();
            l.reorder = Some((NANOS_PER_MS, Stream::new(1, 3)));
            l
        };
        let lossy_delay = || {
            let mut l = delay();
            l.loss = 0.01;
            l
        };
        let l = Element::Link;
        // (what, the links, the routes across them, the crossings wanted)
        type Case = (&'static str, Vec<Link>, Vec<Route>, Vec<Crossing>);
        let cases: Vec<Case> = vec![
            ("fed only by link 0", vec![plain(), plain()], vec![vec![l(0), l(1)]], vec![Event, InOrder]),
            ("also a first hop", vec![plain(), plain()], vec![vec![l(0), l(1)], vec![l(1)]], vec![Event, Event]),
            (
                "fed by two links",
                vec![plain(), plain(), plain()],
                vec![vec![l(0), l(2)], vec![l(1), l(2)]],
                vec![Event, Event, Event],
            ),
            ("behind a station", vec![plain()], vec![vec![Element::Upstream(0), l(0)]], vec![Event]),
            ("only delays, anywhere", vec![plain(), delay()], vec![vec![l(1)], vec![l(0), l(1)]], vec![Event, Delay]),
            ("a lossy delay", vec![plain(), lossy_delay()], vec![vec![l(0), l(1)]], vec![Event, InOrder]),
            ("behind a reordering link", vec![reordering(), plain()], vec![vec![l(0), l(1)]], vec![Event, Event]),
            ("behind a delay", vec![delay(), plain()], vec![vec![l(0), l(1)]], vec![Delay, Event]),
            ("counting cells", vec![plain(), plain().atm()], vec![vec![l(0), l(1)]], vec![Event, Event]),
            (
                "the same feeder twice",
                vec![plain(), plain()],
                vec![vec![l(0), l(1)], vec![l(0), l(1)]],
                vec![Event, InOrder],
            ),
        ];
        for (what, links, routes, want) in cases {
            assert_eq!(crossings(&links, &routes, &[]), want, "{what}");
        }
    }

    #[test]
    fn a_full_buffer_drops_with_its_reason_and_part() {
        let mut s = two_links();
        // Three packets at once into a buffer of two (counting the one in service): the third is
        // refused by link 0.
        for seq in 0..3 {
            s.inject(SimTime::ZERO, data(0, seq * 960, 1000));
        }
        assert_eq!(s.fabric.out.len(), 1);
        let NetOut::Dropped(d) = s.fabric.out[0] else { panic!("{:?}", s.fabric.out[0]) };
        assert_eq!((d.why, d.part, d.role, d.at), (Why::Full, Element::Link(0), Some(Role::Bottleneck), SimTime::ZERO));
        assert_eq!(d.pkt.kind, Kind::Data { seq: 1920, len: 960, pkt_no: 1 });
        let mut got = Vec::new();
        s.on_timer(SimTime(NANOS_PER_MS * 100), &mut got);
        // Back to back: leaving link 0 at 1 and 2 ms, delivered at 3.1 and 4.1 ms.
        assert_eq!(got.iter().map(|(t, _)| t.0).collect::<Vec<_>>(), vec![3_100_000, 4_100_000]);
    }

    #[test]
    fn an_empty_route_delivers_at_once() {
        let mut s = two_links();
        let ack = Packet { way: Way::Reverse, kind: Kind::Ack { ack: 1, wnd: 8192, sack: 0 }, ..data(0, 0, 40) };
        s.inject(SimTime(5), ack);
        let mut got = Vec::new();
        s.on_timer(SimTime(5), &mut got);
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].0, SimTime(5));
    }
}
