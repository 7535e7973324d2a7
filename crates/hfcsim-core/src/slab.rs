//! A slab: values kept by a u32 id while something else holds the id (a packet parked at a timed
//! part, an ACK's SACK blocks while it travels, an event in the heap, a crossed link's report
//! waiting for its time). Freed ids are reused, last freed first, so a run in its steady state
//! allocates nothing; the order ids come back in is part of a run's determinism.

use std::ops::{Deref, DerefMut};

pub struct Slab<T> {
    items: Vec<T>,
    free: Vec<u32>,
}

impl<T> Default for Slab<T> {
    fn default() -> Self {
        Slab { items: Vec::new(), free: Vec::new() }
    }
}

impl<T> Slab<T> {
    pub fn with_capacity(n: usize) -> Self {
        Slab { items: Vec::with_capacity(n), free: Vec::new() }
    }

    /// Keep `value`; its id, the last freed one if any.
    #[inline]
    pub fn insert(&mut self, value: T) -> u32 {
        match self.free.pop() {
            Some(id) => {
                self.items[id as usize] = value;
                id
            }
            None => {
                self.items.push(value);
                u32::try_from(self.items.len() - 1).expect("fewer than 2^32 values kept at once")
            }
        }
    }

    /// `id` may be given out again; its value stays readable until then.
    #[inline]
    pub fn free(&mut self, id: u32) {
        self.free.push(id);
    }

    /// Free `id` and return its value.
    #[inline]
    pub fn remove(&mut self, id: u32) -> T
    where
        T: Copy,
    {
        self.free(id);
        self.items[id as usize]
    }
}

/// The values by id (a free id's value is stale).
impl<T> Deref for Slab<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        &self.items
    }
}

impl<T> DerefMut for Slab<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        &mut self.items
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_reused_last_freed_first() {
        let mut s = Slab::default();
        assert_eq!((s.insert('a'), s.insert('b'), s.insert('c')), (0, 1, 2));
        assert_eq!(s.remove(0), 'a');
        s.free(2);
        assert_eq!(s.insert('d'), 2);
        assert_eq!(s.insert('e'), 0);
        assert_eq!(s.insert('f'), 3);
        assert_eq!(&s[..], &['e', 'b', 'd', 'f']);
    }
}
