//! The IEEE 802.14 MAC's own rules (Elloumi, Golmie, Afifi & Su, Sec. 2 and Table 1): a station
//! asks for data slots, one ATM cell each (AAL5: a packet's cells, the last padded); a collision
//! gives the colliding stations an RQ number and the headend opens contention groups for them
//! (ternary-tree resolution, tree.rs), newcomers waiting for the RQ 0 group; a request is retried
//! until `max_retries`.

use super::channel::{aal5_cells, raw_cells};
use super::rules::{GrantAt, MacRules};
use super::state::{Contend, Contending, MacOut, Station};
use super::tree::{CsGroup, RqStack};
use super::MacConfig;
use crate::time::SimTime;

pub(super) struct Ieee80214;

impl MacRules for Ieee80214 {
    #[inline]
    fn units(&self, _cfg: &MacConfig, ip_bytes: u32, background: bool) -> u32 {
        // Elloumi Sec. 4: a background packet is raw cells; a TCP packet is AAL5-framed.
        if background {
            raw_cells(ip_bytes)
        } else {
            aal5_cells(ip_bytes)
        }
    }

    #[inline]
    fn unit_minislots(&self, cfg: &MacConfig) -> u32 {
        cfg.data_slot_minislots
    }

    fn partial_grants(&self, _cfg: &MacConfig) -> bool {
        true
    }

    fn merge_grants(&self) -> bool {
        true
    }

    fn on_collision(&self, rq: &mut RqStack) -> u32 {
        rq.collided()
    }

    fn contention_groups(&self, rq: &mut RqStack, contention: u32, groups: &mut Vec<CsGroup>) {
        rq.allocate(0, contention, groups)
    }

    #[inline]
    fn waiting(&self, st: &Station) -> bool {
        st.outstanding > 0
    }

    fn enter_contention(&self, _st: &mut Station, _cfg: &MacConfig) -> Contend {
        Contend::Waiting(0)
    }

    fn feedback(&self) -> bool {
        true
    }

    fn retry(&self, _st: &mut Station, req: &Contending, rq: u32, cfg: &MacConfig) -> Option<Contend> {
        (req.tries < cfg.max_retries).then_some(Contend::Waiting(rq))
    }

    fn given_up_packets(&self, _st: &mut Station) -> u32 {
        u32::MAX
    }

    fn forget(&self, st: &mut Station, units: u32) {
        st.covered -= units as u64;
        st.outstanding -= units as u64;
    }

    #[inline]
    fn request(&self, st: &mut Station, cfg: &MacConfig, _id: u64, tx: SimTime) -> Option<u32> {
        let units = (st.visible - st.covered).min(cfg.max_request as u64) as u32;
        if units == 0 {
            return None;
        }
        st.outstanding += units as u64;
        // The packets whose first cell this request covers are requested now.
        let (from, to) = (st.covered, st.covered + units as u64);
        let mut before = 0u64;
        let mut marked = (u64::MAX, 0);
        let popped = st.popped;
        for (i, item) in st.queue.iter_mut().take(st.seen).enumerate() {
            if before >= from && before < to {
                item.requested = tx;
                let no = popped + i as u64;
                marked = (marked.0.min(no), no + 1);
            }
            before += item.left as u64;
        }
        st.marked = if marked.0 < marked.1 { marked } else { (0, 0) };
        st.covered += units as u64;
        Some(units)
    }

    #[inline]
    fn send(&self, st: &mut Station, cfg: &MacConfig, at: GrantAt, out: &mut Vec<MacOut>) -> SimTime {
        let GrantAt { clock, start_minislot, received: r, grant: g } = at;
        // One cell per data slot, from the head of the FIFO; a packet is whole when its last cell
        // arrives (AAL5 reassembly at the headend).
        let ds_minislots = cfg.data_slot_minislots as u64;
        let mut burst_end = SimTime::ZERO;
        st.outstanding -= g.units as u64;
        for i in 0..g.units as u64 {
            let start = clock.start(start_minislot + i * ds_minislots);
            let end = clock.start(start_minislot + (i + 1) * ds_minislots);
            burst_end = end;
            let Some(item) = st.queue.front_mut() else { break };
            item.left -= 1;
            item.granted = r;
            st.visible -= 1;
            st.covered -= 1;
            if item.left == 0 {
                let item = st.queue.pop_front().expect("front");
                st.popped += 1;
                st.seen -= 1;
                st.delivered(item, start, end, out);
            }
        }
        burst_end
    }
}
