//! An arena with a free list: slots are reused, so once warm it does not allocate. Requests in
//! flight, disk operations, anything the event loop creates and retires by the million.

use std::ops::{Index, IndexMut};

pub struct Slab<T> {
    items: Vec<T>,
    live: Vec<bool>,
    free: Vec<u32>,
}

impl<T> Default for Slab<T> {
    fn default() -> Self {
        Self { items: vec![], live: vec![], free: vec![] }
    }
}

impl<T> Slab<T> {
    /// Stores `item` in a free slot (or a new one) and returns the slot.
    #[inline]
    pub fn insert(&mut self, item: T) -> u32 {
        if let Some(i) = self.free.pop() {
            self.items[i as usize] = item;
            self.live[i as usize] = true;
            i
        } else {
            self.items.push(item);
            self.live.push(true);
            (self.items.len() - 1) as u32
        }
    }

    /// Frees slot `i` for reuse; its item stays until overwritten.
    #[inline]
    pub fn remove(&mut self, i: u32) {
        debug_assert!(self.live[i as usize]);
        self.live[i as usize] = false;
        self.free.push(i);
    }

    #[inline]
    pub fn get(&self, i: u32) -> &T {
        &self.items[i as usize]
    }

    #[inline]
    pub fn get_mut(&mut self, i: u32) -> &mut T {
        &mut self.items[i as usize]
    }

    /// The items still in use.
    pub fn live(&self) -> impl Iterator<Item = &T> {
        self.items.iter().zip(&self.live).filter(|(_, l)| **l).map(|(item, _)| item)
    }

    /// Slots ever allocated (the high-water mark of items in use at once).
    pub fn capacity(&self) -> usize {
        self.items.len()
    }
}

impl<T> Index<u32> for Slab<T> {
    type Output = T;
    #[inline]
    fn index(&self, i: u32) -> &T {
        &self.items[i as usize]
    }
}

impl<T> IndexMut<u32> for Slab<T> {
    #[inline]
    fn index_mut(&mut self, i: u32) -> &mut T {
        &mut self.items[i as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::Slab;

    #[test]
    fn slots_are_reused_and_live_items_counted() {
        let mut s = Slab::default();
        let (a, b) = (s.insert("a"), s.insert("b"));
        assert_eq!((a, b), (0, 1));
        s.remove(a);
        assert_eq!(s.live().copied().collect::<Vec<_>>(), ["b"]);
        assert_eq!(s.insert("c"), a, "a freed slot is reused before the slab grows");
        assert_eq!((s[a], s[b], s.capacity()), ("c", "b", 2));
        s[b] = "d";
        assert_eq!(*s.get(b), "d");
    }
}
