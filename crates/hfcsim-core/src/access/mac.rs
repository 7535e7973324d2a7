//! The scenario's MAC (`upstream.mac`) answers `MacRules` through its own module: the one place
//! that matches on the MAC.

use super::docsis::Docsis;
use super::ieee80214::Ieee80214;
use super::rules::{GrantAt, MacRules};
use super::state::{Contend, Contending, MacOut, Station};
use super::tree::{CsGroup, RqStack};
use super::{MacConfig, MacKind};
use crate::time::SimTime;

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
            MacKind::Fifo => unreachable!("a FIFO upstream has no MAC (topology::mac_spec)"),
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
    fn send(&self, st: &mut Station, cfg: &MacConfig, at: GrantAt, out: &mut Vec<MacOut>) -> SimTime {
        dispatch!(self, m => m.send(st, cfg, at, out))
    }
}
