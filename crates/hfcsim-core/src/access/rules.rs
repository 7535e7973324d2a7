//! What one MAC does differently from another, behind one interface (docs/design.md, habit 15): the station
//! side (`station.rs`), the headend side (`headend.rs`) and the channel (`upstream.rs`) ask these
//! questions and never match on the MAC themselves. Each MAC answers in a module of its own:
//! `ieee80214.rs` (Elloumi et al. Sec. 2: ATM cells in data slots, ternary-tree collision
//! resolution with RQ numbers, `tree.rs`) and `docsis.rs` (DOCSIS RFI/MULPI: requests in
//! minislots, binary exponential backoff, `backoff.rs`, concatenation and fragmentation).
//!
//! A new MAC (OFDMA upstream, LLD's proactive grants) is a module implementing `MacRules` and one
//! arm in `MacKind`'s dispatch (`mac.rs`).

use super::channel::SlotClock;
use super::grants::Grant;
use super::state::{Contend, Contending, MacOut, Station};
use super::tree::{CsGroup, RqStack};
use super::MacConfig;
use crate::time::SimTime;

/// A grant as its station sends in it: the channel's minislot clock, the grant's first minislot,
/// when the station received the message carrying it, and the grant.
#[derive(Clone, Copy, Debug)]
pub(super) struct GrantAt {
    pub(super) clock: SlotClock,
    pub(super) start_minislot: u64,
    pub(super) received: SimTime,
    pub(super) grant: Grant,
}

pub(super) trait MacRules {
    // --- the channel ---

    /// The units a packet of `ip_bytes` takes, as requests and grants count them (802.14: ATM
    /// cells; DOCSIS: frame bytes, turned into minislots per request).
    fn units(&self, cfg: &MacConfig, ip_bytes: u32, background: bool) -> u32;
    /// Minislots per granted unit.
    fn unit_minislots(&self, cfg: &MacConfig) -> u32;
    /// Whether a grant may cover part of a request, and whether consecutive grants to one station
    /// merge (the grant queue, grants.rs).
    fn partial_grants(&self, cfg: &MacConfig) -> bool;
    fn merge_grants(&self) -> bool;

    // --- the headend ---

    /// A contention slot collided: the RQ number its stations retry with.
    fn on_collision(&self, rq: &mut RqStack) -> u32;
    /// Split `contention` slots of a message into contention groups.
    fn contention_groups(&self, rq: &mut RqStack, contention: u32, groups: &mut Vec<CsGroup>);

    // --- the station ---

    /// Whether the station has a request waiting at the headend (it then contends no more).
    fn waiting(&self, st: &Station) -> bool;
    /// A new request enters contention: how the station contends for it.
    fn enter_contention(&self, st: &mut Station, cfg: &MacConfig) -> Contend;
    /// Whether the station learns each outcome from explicit feedback (a `feedback` trace row).
    fn feedback(&self) -> bool;
    /// Its request `req` collided (RQ number `rq`): how it contends again, or None to give up.
    fn retry(&self, st: &mut Station, req: &Contending, rq: u32, cfg: &MacConfig) -> Option<Contend>;
    /// The request given up covered at most this many packets at the head of the FIFO.
    fn given_up_packets(&self, st: &mut Station) -> u32;
    /// Forget the given-up request of `units`.
    fn forget(&self, st: &mut Station, units: u32);
    /// Make a request, sent at `tx`, for seen data no request covers yet: its units, or None.
    fn request(&self, st: &mut Station, cfg: &MacConfig, id: u64, tx: SimTime) -> Option<u32>;
    /// Send in grant `at`: deliver what it completes; the time its burst ends.
    fn send(&self, st: &mut Station, cfg: &MacConfig, at: GrantAt, out: &mut Vec<MacOut>) -> SimTime;
}
