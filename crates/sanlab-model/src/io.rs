//! The request that travels the I/O path, and the slab that holds requests in flight.

use sanlab_des::SimTime;

pub use sanlab_workload::Op;

pub const NONE: u32 = u32::MAX;

/// One I/O: a VM's request, or one piece of it after splitting at the adapter's max I/O size.
#[derive(Clone, Copy, Debug)]
pub struct Io {
    pub op: Op,
    pub size_bytes: u32,
    pub offset_bytes: u64,
    pub job: u32,
    /// The split parent, or NONE for a VM-level request.
    pub parent: u32,
    /// A piece cut below the device queue (at the adapter's max I/O size); its parent is the
    /// device-level request, which keeps its device slot until every piece is back.
    pub wire: bool,
    pub volume: u32,
    /// The VM's world number on its device (for the scheduler).
    pub world: u32,
    /// Pieces still outstanding (parents only).
    pub children_left: u32,
    pub device: u32,
    pub path: u32,
    /// The link of its path (set with the path): every frame crosses it.
    pub link: u32,
    /// Array that received the command (where it is being served), or NONE.
    pub array: u32,
    /// Steps the array still waits for before it can send status (local store, peer ack).
    pub array_pending: u8,
    /// Where the request is now, for the conservation check.
    pub stage: Stage,
    pub t_issue: SimTime,
    pub t_device: SimTime,
    pub t_dispatch: SimTime,
    pub t_array: SimTime,
    /// The answering attempt's time in the array, from the command's arrival to its status: front
    /// end (a QoS hold, a write's data transfer), cores, then cache or media (and a replica's
    /// acknowledgement), each written as the request leaves that part; of the piece back last,
    /// for a request cut in pieces.
    pub array_ns: [SimTime; 3],
    /// The answering attempt was served by a cache (a read hit, or a write the write-back cache
    /// acknowledged): its last part of `array_ns` is cache time, not media time.
    pub from_cache: bool,
}

/// Where a request is, for counting what each component holds at the end of a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    /// In the VM's queues (waiting for a virtual disk or adapter slot), or split and waiting for
    /// its pieces.
    Vm,
    /// In the host device queue, not yet on a path.
    Device,
    /// On a path: adapter queue, wire, array.
    Path,
}

impl Io {
    pub fn new(op: Op, size_bytes: u32, offset_bytes: u64, job: u32, now: SimTime) -> Self {
        Self {
            op,
            size_bytes,
            offset_bytes,
            job,
            parent: NONE,
            wire: false,
            volume: NONE,
            world: 0,
            children_left: 0,
            device: NONE,
            path: NONE,
            link: NONE,
            array: NONE,
            array_pending: 0,
            stage: Stage::Vm,
            t_issue: now,
            t_device: 0,
            t_dispatch: 0,
            t_array: 0,
            array_ns: [0; 3],
            from_cache: false,
        }
    }
}

/// Requests in flight.
pub type Slab = sanlab_des::Slab<Io>;
