//! The cable access network's shared upstream: many stations (cable modems) feeding one channel
//! through a request/grant MAC.
//!
//! ```text
//!  station 0 ─┐  requests in contention slots, data in granted slots    ┌─ headend ──> route on
//!  station 1 ─┼──────────────── upstream channel (minislots) ──────────>│  (to the server)
//!     ...     │<──────── frames / MAPs: grants, feedback, on the downstream ─┘
//!  station N ─┘
//! ```
//!
//! - `channel.rs`: the minislot clock, ATM cells and DOCSIS bursts;
//! - `upstream.rs`: the stations and the headend as one pure state machine handed the time
//!   (`enqueue`, `on_timer`, `next_deadline`), with the common request/grant machinery;
//! - `tree.rs`: IEEE 802.14's ternary-tree collision resolution (Elloumi et al. Sec. 2);
//! - `backoff.rs`: DOCSIS truncated binary exponential backoff;
//! - `bonding.rs`: DOCSIS 3.0 upstream bonding, a modem's flow over several channels, resequenced;
//! - `grants.rs`: the headend's grant schedulers, FCFS and round robin (Elloumi et al. Sec. 2);
//! - `background.rs`: Poisson background sources at the stations (Elloumi et al. Sec. 4);
//! - `serviceflow.rs`: a DOCSIS modem's upstream service flow, whose queue is its station's;
//! - `spacing.rs`: Elloumi et al.'s ACK-spacing algorithm (Sec. 6.2, Fig. 18) and the headend's
//!   constant-rate grants it relies on.

pub mod background;
pub mod backoff;
pub mod bonding;
pub mod channel;
mod docsis;
pub mod grants;
mod headend;
mod ieee80214;
mod mac;
pub mod plant;
mod rules;
pub mod serviceflow;
pub mod spacing;
mod state;
mod station;
pub mod tree;
pub mod upstream;

pub use state::{MacEvent, MacMetrics, MacOut, StationMetrics, UpBurst, BACKGROUND};
pub use upstream::Upstream;

use crate::net::QueueLimit;
use crate::time::Nanos;

/// The MAC kind and the grant scheduler are the schema's (`upstream.mac`, `upstream.scheduler`);
/// a FIFO upstream has no MAC, so `MacKind::Fifo` never reaches this module.
pub use crate::scenario::{AckSpacing, GrantScheduler, MacKind};

/// How a frame's minislots are split between contention and data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ContentionAlloc {
    /// A fixed number of contention slots in every frame (Elloumi et al. Sec. 5.2: 20).
    Fixed(u32),
    /// Whatever grants leave over, but at least this many.
    Leftover(u32),
}

/// Everything the MAC needs to know, resolved from the scenario.
#[derive(Clone, Debug)]
pub struct MacConfig {
    pub kind: MacKind,
    pub rate_bps: u64,
    pub minislot_bytes: u32,
    /// Minislots per 802.14 frame or DOCSIS MAP; with dynamic MAPs, the longest.
    pub frame_minislots: u32,
    /// DOCSIS dynamic MAPs: the shortest MAP. Equal to `frame_minislots`: every MAP that long.
    pub min_frame_minislots: u32,
    pub contention: ContentionAlloc,
    /// 802.14: minislots per data slot (one ATM cell MPDU; Elloumi Table 1: 64/16 = 4).
    pub data_slot_minislots: u32,
    pub scheduler: GrantScheduler,
    /// Largest request: data slots (802.14) or minislots (DOCSIS).
    pub max_request: u32,
    pub piggyback: bool,
    pub concatenation: bool,
    pub fragmentation: bool,
    pub max_burst_bytes: u32,
    /// Headend processing: a frame or MAP reaches a station this long after it was decided,
    /// plus the station's propagation delay.
    pub headend_delay: Nanos,
    pub backoff_start: u32,
    pub backoff_end: u32,
    /// Transmissions of one request before it (and its packets) are discarded.
    pub max_retries: u32,
    /// DOCSIS: preamble and guard time per burst, bytes.
    pub burst_overhead_bytes: u32,
    /// DOCSIS: the burst profile's FEC (channel.rs).
    pub fec: channel::Fec,
    /// DOCSIS: bytes added to each IP packet (Ethernet header and CRC, DOCSIS MAC header).
    pub frame_overhead_bytes: u32,
    /// The downstream interleaver's latency (plant.rs): every MAP reaches a station this much later.
    pub interleave: Nanos,
    /// DOCSIS: the modem's MAP processing time; it acts on a MAP this long after receiving it.
    pub map_processing: Nanos,
    /// DOCSIS maintenance regions: every `maintenance_interval` (0 = none) one MAP carries
    /// `maintenance_minislots` no request or data may use (upstream.rs).
    pub maintenance_interval: Nanos,
    pub maintenance_minislots: u32,
}

/// One station: where it is and what it holds and sends besides TCP.
#[derive(Clone, Debug)]
pub struct StationConfig {
    /// One-way propagation delay to the headend (distance x 5 us/km, Elloumi Table 1).
    pub one_way: Nanos,
    pub distance_km: f64,
    pub group: u32,
    /// The station's MAC FIFO (IP bytes or packets).
    pub queue: QueueLimit,
    /// Poisson background packets per second, and their size in bytes.
    pub background_pps: f64,
    pub background_bytes: u32,
    /// Requests piggybacked in this station's granted data (Elloumi et al. Sec. 6.1); None = the
    /// channel's `MacConfig::piggyback`.
    pub piggyback: Option<bool>,
    /// Elloumi et al.'s ACK spacing with this filter (802.14 with fixed contention only).
    pub ack_spacing: AckSpacing,
    /// DOCSIS upstream bonding (bonding.rs): bytes of the segment header each request's burst carries;
    /// 0 = not bonded.
    pub segment_header_bytes: u32,
    /// Which of a bonded modem's sub-stations this is (0 = its first channel, and every unbonded
    /// station): the others draw from streams of their own.
    pub sub: u32,
}
