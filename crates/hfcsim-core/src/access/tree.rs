//! IEEE 802.14 collision resolution: a ternary tree walked with Request Queue (RQ) numbers.
//!
//! Elloumi et al. Sec. 2 (after the IEEE 802.14 draft): newcomers send their request in a
//! contention slot (CS) of the group with RQ = 0. Each collided CS is given an RQ number in the
//! feedback; the stations that collided in it retry in the CS group the headend allocates for that
//! RQ, each picking one of its 3 slots at random ("in the range (0..2)"). Groups are allocated "in
//! the order of decreasing RQ values".
//!
//! Where the paper is silent, chosen here (and listed in the issue note):
//! - RQ numbers are handed out increasing, one per collided slot, in slot order; allocating the
//!   highest first makes the walk depth-first (a stack), the order of the 802.14 draft's ternary
//!   tree (Golmie, Saintillan, Su, "A review of contention resolution algorithms for IEEE 802.14
//!   networks", IEEE Communications Surveys 2(1), 1999, Sec. 3).
//! - Collision-resolution groups take a frame's contention slots first; the newcomer group
//!   (RQ = 0) gets what is left, possibly nothing: newcomers are held back while a resolution uses
//!   every slot ("blocked access"), so a resolution always ends.
//! - A group that does not fit whole in what is left of a frame waits for the next frame.

/// Slots in each collision-resolution group: the tree is ternary.
pub const GROUP_SLOTS: u32 = 3;

/// One group of contention slots in a frame: `count` slots from `first` (an offset in the
/// frame), for the stations holding request queue number `rq` (0 = newcomers).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CsGroup {
    pub rq: u32,
    pub first: u32,
    pub count: u32,
}

/// The headend's side of the tree: RQ numbers waiting for their group.
#[derive(Debug, Default)]
pub struct RqStack {
    /// Pending RQ numbers, highest (most recent) last.
    pending: Vec<u32>,
    next: u32,
}

impl RqStack {
    /// A slot collided: the RQ number its stations will retry with.
    pub fn collided(&mut self) -> u32 {
        self.next += 1;
        self.pending.push(self.next);
        self.next
    }

    pub fn pending(&self) -> usize {
        self.pending.len()
    }

    /// Lay out `slots` contention slots starting at offset `first`: groups of 3 for the highest
    /// pending RQ numbers, then the rest for newcomers (RQ = 0).
    pub fn allocate(&mut self, first: u32, slots: u32, out: &mut Vec<CsGroup>) {
        let mut at = first;
        let end = first + slots;
        while end - at >= GROUP_SLOTS {
            let Some(rq) = self.pending.pop() else { break };
            out.push(CsGroup { rq, first: at, count: GROUP_SLOTS });
            at += GROUP_SLOTS;
        }
        if at < end {
            out.push(CsGroup { rq: 0, first: at, count: end - at });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_in_decreasing_rq_order_then_newcomers() {
        let mut s = RqStack::default();
        assert_eq!((s.collided(), s.collided()), (1, 2));
        let mut g = Vec::new();
        s.allocate(0, 8, &mut g);
        assert_eq!(
            g,
            vec![
                CsGroup { rq: 2, first: 0, count: 3 },
                CsGroup { rq: 1, first: 3, count: 3 },
                CsGroup { rq: 0, first: 6, count: 2 }
            ]
        );
        // A deeper collision is served before its elders: depth first.
        assert_eq!(s.collided(), 3);
        s.collided();
        g.clear();
        s.allocate(0, 4, &mut g);
        assert_eq!(g, vec![CsGroup { rq: 4, first: 0, count: 3 }, CsGroup { rq: 0, first: 3, count: 1 }]);
        g.clear();
        s.allocate(0, 3, &mut g);
        assert_eq!(g, vec![CsGroup { rq: 3, first: 0, count: 3 }]);
        assert_eq!(s.pending(), 0);
    }
}
