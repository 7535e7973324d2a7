//! What one MAC does differently from another, behind one interface (STYLE item 15): the station
//! side (`station.rs`), the headend side (`headend.rs`) and the channel (`upstream.rs`) ask these
//! questions and never match on the MAC themselves. Each MAC answers in a module of its own:
//! `ieee80214.rs` (Elloumi et al. Sec. 2: ATM cells in data slots, ternary-tree collision
//! resolution with RQ numbers, `tree.rs`) and `docsis.rs` (DOCSIS RFI/MULPI: requests in
//! minislots, binary exponential backoff, `backoff.rs`, concatenation and fragmentation).
//!
//! A new MAC (OFDMA upstream, LLD's proactive grants) is a module implementing `MacRules` and one
//! arm in `MacKind`'s dispatch below.

use super::channel::SlotClock;
use super::docsis::Docsis;
use super::grants::Grant;
use super::ieee80214::Ieee80214;
use super::station::{Contend, Contending, Station};
use super::tree::{CsGroup, RqStack};
use super::upstream::MacOut;
use super::{MacConfig, MacKind};
use crate::time::SimTime;

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
    /// Send in grant `g`, starting at `start_minislot`, as received at `r`: deliver what it
    /// completes; the time its burst ends.
    #[allow(clippy::too_many_arguments)]
    fn send(
        &self,
        st: &mut Station,
        cfg: &MacConfig,
        clock: &SlotClock,
        start_minislot: u64,
        r: SimTime,
        g: Grant,
        out: &mut Vec<MacOut>,
    ) -> SimTime;
}

/// The scenario's MAC answers through its module: one dispatch, here.
macro_rules! dispatch {
    ($self:ident, $rules:ident => $e:expr) => {
        match $self {
            MacKind::Ieee80214 => {
                let $rules = Ieee80214;
                $e
            }
            MacKind::Docsis => {
                let $rules = Docsis;
                $e
            }
        }
    };
}

impl MacRules for MacKind {
    #[inline]
    fn units(&self, cfg: &MacConfig, ip_bytes: u32, background: bool) -> u32 {
        dispatch!(self, r => r.units(cfg, ip_bytes, background))
    }
    #[inline]
    fn unit_minislots(&self, cfg: &MacConfig) -> u32 {
        dispatch!(self, r => r.unit_minislots(cfg))
    }
    fn partial_grants(&self, cfg: &MacConfig) -> bool {
        dispatch!(self, r => r.partial_grants(cfg))
    }
    fn merge_grants(&self) -> bool {
        dispatch!(self, r => r.merge_grants())
    }
    fn on_collision(&self, rq: &mut RqStack) -> u32 {
        dispatch!(self, r => r.on_collision(rq))
    }
    fn contention_groups(&self, rq: &mut RqStack, contention: u32, groups: &mut Vec<CsGroup>) {
        dispatch!(self, r => r.contention_groups(rq, contention, groups))
    }
    #[inline]
    fn waiting(&self, st: &Station) -> bool {
        dispatch!(self, r => r.waiting(st))
    }
    fn enter_contention(&self, st: &mut Station, cfg: &MacConfig) -> Contend {
        dispatch!(self, r => r.enter_contention(st, cfg))
    }
    fn feedback(&self) -> bool {
        dispatch!(self, r => r.feedback())
    }
    fn retry(&self, st: &mut Station, req: &Contending, rq: u32, cfg: &MacConfig) -> Option<Contend> {
        dispatch!(self, r => r.retry(st, req, rq, cfg))
    }
    fn given_up_packets(&self, st: &mut Station) -> u32 {
        dispatch!(self, r => r.given_up_packets(st))
    }
    fn forget(&self, st: &mut Station, units: u32) {
        dispatch!(self, r => r.forget(st, units))
    }
    #[inline]
    fn request(&self, st: &mut Station, cfg: &MacConfig, id: u64, tx: SimTime) -> Option<u32> {
        dispatch!(self, r => r.request(st, cfg, id, tx))
    }
    #[inline]
    fn send(
        &self,
        st: &mut Station,
        cfg: &MacConfig,
        clock: &SlotClock,
        start_minislot: u64,
        r: SimTime,
        g: Grant,
        out: &mut Vec<MacOut>,
    ) -> SimTime {
        dispatch!(self, m => m.send(st, cfg, clock, start_minislot, r, g, out))
    }
}
