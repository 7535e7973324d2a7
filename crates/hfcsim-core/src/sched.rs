//! The event queue: ordered by (time, insertion counter), so ties break by insertion order
//! (SimPy's `schedule`; docs/design.md, principle 2).
//!
//! The heap holds small keys, (time, counter, the event's slot in a slab beside it) packed in one
//! u128: a sift moves 16-byte keys and compares once, never moving the events themselves (a
//! packet's event is 48 bytes). (time, counter) is unique, so the order is total and the slot
//! never decides. The slab's slots are reused: in its steady state a run allocates nothing here.
//!
//! The packing bounds a run to 2^40 events pushed (a day at ten million a second) and 2^24
//! pending at once (about a gigabyte of them); beyond either it stops with an error rather than
//! misorder. With the slot beside the u128, keys were 32 bytes: 1.4 % more instructions on
//! `docsis-1000-modems.toml`, and twice the heap's memory.
//!
//! Tried and dropped: a 4-ary heap (12 % more instructions than std's bottom-up binary heap), and a
//! radix heap over the same u128 keys (9 % more instructions in the whole 1,000-modem run: with
//! nanosecond times a key moved down about five buckets before it was popped).

use crate::slab::Slab;
use crate::time::SimTime;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// (time, insertion counter, slot) as one number: time in the high 64 bits, then the counter in
/// 40 bits, then the event's slot in 24. One comparison orders two, and a key is 16 bytes.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Key {
    order: u128,
}

/// Bits of a key that hold the slot, below the insertion counter.
const SLOT_BITS: u32 = 24;

impl PartialOrd for Key {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Key {
    // Reversed: BinaryHeap is a max-heap and we want the earliest (time, seq) first. The counter
    // makes every order unique, so the slot never decides.
    #[inline(always)]
    fn cmp(&self, other: &Self) -> Ordering {
        other.order.cmp(&self.order)
    }
}

pub struct EventQueue<E> {
    heap: BinaryHeap<Key>,
    /// The events, by slot; `None` in a free slot.
    slab: Slab<Option<E>>,
    next_seq: u64,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        EventQueue { heap: BinaryHeap::with_capacity(1024), slab: Slab::with_capacity(1024), next_seq: 0 }
    }
}

impl<E> EventQueue<E> {
    #[inline]
    pub fn push(&mut self, time: SimTime, event: E) {
        let seq = self.next_seq;
        assert!(seq < 1 << (64 - SLOT_BITS), "fewer than 2^40 events pushed in one run");
        self.next_seq += 1;
        let slot = self.slab.insert(Some(event));
        assert!(slot < 1 << SLOT_BITS, "fewer than 2^24 pending events");
        self.heap.push(Key { order: (time.0 as u128) << 64 | (seq as u128) << SLOT_BITS | slot as u128 });
    }

    #[inline]
    pub fn pop(&mut self) -> Option<(SimTime, E)> {
        let key = self.heap.pop()?;
        let slot = (key.order as u32) & ((1 << SLOT_BITS) - 1);
        let event = self.slab[slot as usize].take().expect("a queued slot holds its event");
        self.slab.free(slot);
        Some((SimTime((key.order >> 64) as u64), event))
    }

    /// When the earliest event is due.
    #[inline]
    pub fn peek_time(&self) -> Option<SimTime> {
        self.heap.peek().map(|k| SimTime((k.order >> 64) as u64))
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn earliest_first_then_insertion_order() {
        let mut q = EventQueue::default();
        q.push(SimTime(5), "b");
        q.push(SimTime(1), "a");
        q.push(SimTime(5), "c");
        q.push(SimTime(5), "d");
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).map(|(_, e)| e).collect();
        assert_eq!(order, vec!["a", "b", "c", "d"]);
    }

    /// The reference queue's next event: the least (time, insertion number), removed.
    fn pop_first(reference: &mut Vec<(u64, u64)>) -> (u64, u64) {
        let i = (0..reference.len()).min_by_key(|&i| reference[i]).expect("not empty");
        reference.remove(i)
    }

    proptest! {
        /// Any interleaving of pushes and pops pops exactly what a sort by (time, insertion)
        /// of the events pushed so far gives: the reference is a plain list searched each time.
        #[test]
        fn pops_in_time_then_insertion_order(ops in proptest::collection::vec((any::<bool>(), 0u64..40), 0..400)) {
            let mut q = EventQueue::default();
            let mut reference: Vec<(u64, u64)> = Vec::new(); // (time, insertion number)
            for (k, (push, t)) in ops.into_iter().enumerate() {
                if push || reference.is_empty() {
                    q.push(SimTime(t), k as u64);
                    reference.push((t, k as u64));
                } else {
                    let (t, k) = pop_first(&mut reference);
                    prop_assert_eq!(q.pop(), Some((SimTime(t), k)));
                }
                prop_assert_eq!(q.len(), reference.len());
                prop_assert_eq!(q.peek_time(), reference.iter().min().map(|&(t, _)| SimTime(t)));
            }
            reference.sort();
            let rest: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
            prop_assert_eq!(rest, reference.into_iter().map(|(t, k)| (SimTime(t), k)).collect::<Vec<_>>());
        }

        /// As a run uses it: each push at the last popped time plus a delay, from 0 to far ahead,
        /// many at the same instant, and now and then one in the past. The same reference.
        #[test]
        fn pops_in_order_as_a_run_pushes(ops in proptest::collection::vec((0u8..4, 0u32..64, any::<u64>()), 0..600)) {
            let mut q = EventQueue::default();
            let mut reference: Vec<(u64, u64)> = Vec::new();
            let mut now = 0u64;
            for (k, (what, shift, r)) in ops.into_iter().enumerate() {
                if what > 0 || reference.is_empty() {
                    let t = match what {
                        0 | 1 => now.saturating_add(r >> shift), // any delay, far ones included
                        2 => now,                                 // the same instant
                        _ => now.saturating_sub(r % 3),           // now and then in the past
                    };
                    q.push(SimTime(t), k as u64);
                    reference.push((t, k as u64));
                } else {
                    let (t, k) = pop_first(&mut reference);
                    prop_assert_eq!(q.pop(), Some((SimTime(t), k)));
                    now = t;
                }
                prop_assert_eq!(q.len(), reference.len());
                prop_assert_eq!(q.peek_time(), reference.iter().min().map(|&(t, _)| SimTime(t)));
            }
            reference.sort();
            let rest: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
            prop_assert_eq!(rest, reference.into_iter().map(|(t, k)| (SimTime(t), k)).collect::<Vec<_>>());
        }
    }
}
