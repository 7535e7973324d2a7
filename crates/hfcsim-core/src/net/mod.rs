//! The parts a network is built from (docs/design.md, "The network of parts, and the fabric"): a packet follows a
//! route, a sequence of elements, each of which takes it, holds it for a while and hands it on,
//! or drops it with a reason counted. What travels, the packet and its header fields, is
//! `crate::packet` (src/packet.rs): the floor the network, the MACs and TCP all stand on.
//!
//! - `link.rs`: serialisation at a rate (or a schedule of rates), propagation delay, media loss,
//!   jitter, a constant per-packet service time;
//! - `queue.rs`: the buffer ahead of a link, its limit and its discipline (drop-tail, EPD; the
//!   plug point for shapers and AQM);
//! - `atm.rs`: IP over ATM (AAL5 cells) and how a switch is modelled;
//! - `epd.rs`: early packet discard at ATM switches;
//! - `shaper.rs`: the DOCSIS rate cap, a token bucket;
//! - `aqm/`: PIE, DOCSIS-PIE and CoDel;
//! - `servicequeue.rs`: a buffer that decides when it serves (a rate cap, an AQM), with events of
//!   its own, or served by a shared link that pulls from it;
//! - `shared.rs`: a link shared by service queues that takes the next packet from them when it can
//!   send (the DOCSIS downstream channel and the CMTS's scheduler);
//! - `wait.rs`: how long packets waited at each buffer, and what arrivals found there;
//! - this file: elements and routes. `topology.rs` assembles them into a scenario's network and
//!   `fabric.rs` moves packets along routes (`Fabric::arrive` matches on the element).

pub mod aqm;
pub mod atm;
pub mod epd;
pub mod link;
pub mod queue;
pub mod servicequeue;
pub mod shaper;
pub mod shared;
pub mod wait;

pub use atm::SwitchStats;
pub use epd::Epd;
pub use link::{Admitted, Framing, Link, Role};
pub use queue::{Discipline, Occupancy, Queue, QueueLimit, Refusal};

/// One step of a route. Ids index the topology's tables (`Topology::links`); u32 so that no
/// scenario size wraps them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Element {
    /// A FIFO link: departure computed on arrival (link.rs).
    Link(u32),
    /// The shared upstream channel, entered at this station (cable modem): its MAC decides when
    /// the packet reaches the headend (access/upstream.rs), with events of its own.
    Upstream(u32),
    /// A service queue (servicequeue.rs: a rate cap, an AQM): it serves its packets from events of
    /// its own.
    Queue(u32),
}

/// The elements a packet crosses, in order; `Packet::hop` indexes it. Empty: the packet is
/// delivered at once (Lakshman & Madhow's ACKs return immediately).
pub type Route = Vec<Element>;
