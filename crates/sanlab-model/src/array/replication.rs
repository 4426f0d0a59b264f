//! Active-active synchronous replication (the six-step write of Hosterman 2018, docs/references.md): the array that receives a
//! write forwards the data to its peer over the inter-array link and stores it locally at the same
//! time; the peer stores it and acknowledges; only when both are done does the receiving array
//! send status to the host. Reads are served by the receiving array alone.

use crate::fabric::Link;

/// A replication pair and the link between the two arrays (`dirs[0]`: `arrays[0]` → `arrays[1]`).
pub struct Replication {
    pub arrays: [usize; 2],
    pub link: Link,
    /// Pod failover preference: wins the mediator race when the link fails.
    pub preferred: Option<usize>,
    /// From the link failing to the race being decided (writes stall meanwhile).
    pub election_ns: u64,
}

impl Replication {
    /// The peer of `array` and the link direction from `array` to it.
    pub fn peer_of(&self, array: usize) -> (usize, usize) {
        if array == self.arrays[0] { (self.arrays[1], 0) } else { (self.arrays[0], 1) }
    }
}
