//! Disk-group back end: N spinning disks in RAID-5 (or RAID-0) behind a write-back cache, enough
//! to stand in for the EMC CLARiiON CX3-40 of PARDA (Gulati et al., FAST '09), whose experiments
//! ran on 5- and 10-disk RAID-5 groups. The engine calls [`DiskGroup::submit`] when a host request
//! reaches the back end and [`DiskGroup::disk_done`] when a timer the group asked for fires; the
//! group answers through [`DiskOut`]. Service times follow from head positions and the platter's
//! angle, not from random numbers, so runs are deterministic bit for bit.
//!
//! # Drive (source: product manual and data sheet)
//!
//! Seagate Cheetah 15K.5 FC, ST3146855FC (146 GB, 15,000 rpm, 4 Gb/s Fibre Channel), a drive of
//! the CX3 generation. Seagate, *Cheetah 15K.5 FC Product Manual*, publication 100384772 Rev. C,
//! February 2007, <https://www.seagate.com/staticfiles/support/disc/manuals/fc/100384772c.pdf>,
//! performance characteristics: average seek 3.5 ms read / 4.0 ms write, track-to-track 0.2 /
//! 0.4 ms, full stroke 7.4 / 7.9 ms, 15,000 rpm (2.0 ms average latency), sustained media rate
//! 73–125 MB/s, 146.8 GB formatted. Seagate's 15K.5 data sheet, as used in Arpaci-Dusseau,
//! *Operating Systems: Three Easy Pieces*, ch. 37 (Fig. 37.5 and eq. 37.3), agrees on 15,000 rpm,
//! a 4 ms average seek and 125 MB/s at most. The track-to-track, full-stroke, 73 MB/s and capacity
//! figures were not re-read from a copy of the manual while this module was written: check them
//! against the manual's tables.
//!
//! The defaults use the read figures; `write_settle` (0.5 ms, the manual's average write minus
//! average read seek) is added to every write that moves the arm (one constant for all distances
//! is ours). `media_rate` is the mean of the zones' 73 and 125 MB/s: one zone (ours).
//!
//! # Seek (shape: Ruemmler & Wilkes, "An introduction to disk drive modeling", IEEE Computer 1994)
//!
//! For a move over the fraction `x = |Δoffset| / disk_capacity` of the stroke,
//! `seek(x) = track_to_track + a·√x + b·x`: square root for short, acceleration-bound seeks, linear
//! for long, coast-bound ones. `a` and `b` are solved so that `seek(1)` is the full stroke and the
//! mean over random pairs of positions (x has density 2(1 − x): E[√x] = 8/15, E[x] = 1/3) is the
//! manual's average: `a = 5·(avg − t2t − (full − t2t)/3)`, `b = full − t2t − a`. With the
//! defaults a = 4.5 ms and b = 2.7 ms. A negative `a` (average below a third of the stroke) is
//! clamped to 0, a linear curve whose mean then exceeds the average; a negative `b` to 0, a
//! square-root curve whose mean then falls short. A target on the head's track, or less than a
//! track ahead of it, needs no seek: only rotation (ours; a drive's track skew hides the switch to
//! the next track, so sequential runs do not lose a revolution at every track boundary).
//!
//! # Rotation (ours, the usual single-zone abstraction)
//!
//! One revolution takes `60 s / rpm`; a track holds `media_rate × revolution` bytes (396,000 at
//! the defaults); a disk offset's angle is `(offset mod track) / track` and disk i's platter is at
//! `(t / revolution + i / disks) mod 1` at time t: spindles are not synchronised, and spreading
//! their phases evenly keeps runs deterministic (ours). An operation waits after its seek until its
//! first byte comes under the head, then transfers at the media rate; the head ends at the
//! operation's last byte. Times are whole nanoseconds, so a head at most 2 ns past its target
//! counts as on time.
//!
//! # Read-ahead (ours)
//!
//! A drive reads on past a read into its buffer, at the media rate, while it has nothing else to
//! do, up to `read_ahead` bytes. So a read that ends at most `read_ahead` bytes past the end of the
//! disk's previous operation (a read, with nothing in between) needs no positioning: it is done
//! when the read-ahead reaches its last byte, or at once if it already has. This covers the parity
//! element a disk's sequential data skips. Without it, a sequential stream whose next request
//! arrives a little late would wait almost a revolution per request. The 512 KiB default is ours.
//!
//! # Scheduling (ours: tagged command queuing)
//!
//! Each disk serves one operation at a time. Among the first `reorder_window` queued operations
//! (oldest first) it serves the one with the shortest positioning time (SATF), ties to the oldest.
//! Throughput then rises with queue depth and flattens (PARDA's Fig. 6 shape); 1 is FIFO. There is
//! no aging beyond the window.
//!
//! # Layout
//!
//! A stripe is one `stripe_element` per disk; the default element, 128 sectors (65,536 bytes), is
//! CLARiiON's default (EMC, *CLARiiON CX300, CX500, CX500i and CX700 Configuration Planning
//! Guide*, "RAID 5 Group"). RAID-5 rotates parity left-symmetrically (ours: the common layout;
//! EMC's is not documented there): stripe s keeps parity on disk `n − 1 − s mod n` and its data
//! elements on the disks after it, wrapping. RAID-0 has no parity. A host request is cut at element
//! boundaries into per-disk operations; host offsets wrap modulo the group's data capacity (ours).
//!
//! # Reads
//!
//! One disk read per piece; the request is done when all are. (DRAM read hits are the array's read
//! cache, `cache.rs`.) A read whose every byte is dirty in the write cache is served from it at
//! `now + write_ack`; stripes being destaged are not consulted (ours).
//!
//! # Write-back cache
//!
//! A write is acknowledged at `now + write_ack` when the cache has room for it (dirty bytes + size
//! ≤ `write_cache`, or an empty cache, so a write larger than the cache still passes); otherwise it
//! waits, in arrival order, until destaging frees room. Dirty data is a bit per 1/64 of each data
//! element of a stripe (1 KiB pages at 64 KiB elements): a write dirties the pages it touches (a
//! partial page counts whole), and rewriting dirty pages adds nothing (ours).
//!
//! Destaging starts when dirty bytes exceed `high_watermark` % of the cache and stops starting
//! stripes once the dirty bytes not yet being destaged are at most `low_watermark` %; it also runs
//! while writes wait for room. The 80 / 60 % defaults are CLARiiON's (EMC knowledge base, "What
//! should the high/low watermark cache settings be set to on a CLARiiON array?",
//! <https://community.emc.com/docs/DOC-19387>, after *CLARiiON Performance and Availability Release
//! 30 Best Practices*). Stripes go oldest-dirty first, at most `destage_depth` at once (ours), so
//! destaging shares the disk queues with host reads without flooding them. A stripe whose data
//! elements are all wholly dirty is a full-stripe write: every data element and the parity
//! element, no reads. Otherwise each dirty element is a read-modify-write over the span from its
//! first to its last dirty page: read old data and old parity in parallel, then write new data and
//! new parity (4 operations; reconstruct-writes are not modelled). RAID-0 writes each dirty span
//! once. Room is freed when the stripe's last operation completes; a stripe written again while it
//! is being destaged is a new dirty entry (its bytes count twice meanwhile). CLARiiON's idle
//! flushing is not modelled: dirty data below the high watermark stays until there is pressure.
//!
//! The 2 GiB write cache is ours: a CX3-40 figure was not found; CLARiiON storage processors carry
//! up to 4 GB of memory each, most of it cache, and mirror the write cache between the two.
//! `write_ack` (100 µs: the mirror over the CMI plus controller time) is ours too.

use crate::io::Op;
use sanlab_spec::{Spec, SpecResult};
use sanlab_des::SimTime;
use serde::Serialize;
use std::collections::{HashMap, VecDeque};
use std::ops::{Index, IndexMut};

/// What the disk group asks of the engine after a call. The engine clears both vectors before each
/// call and reuses them.
#[derive(Default)]
pub struct DiskOut {
    /// (time, disk index): arm a timer; at that time the engine calls `disk_done(time, disk)`.
    pub timers: Vec<(SimTime, u32)>,
    /// (time, token): the host request `token` is finished at that time.
    pub done: Vec<(SimTime, u64)>,
}

/// Figures for the report.
#[derive(Serialize, Clone, Debug, Default, PartialEq)]
pub struct DiskGroupStats {
    pub disks: u32,
    pub raid: &'static str,
    /// Disk operations issued.
    pub backend_reads: u64,
    pub backend_writes: u64,
    /// Stripes destaged as full-stripe writes.
    pub full_stripe_writes: u64,
    /// Elements destaged by read-modify-write.
    pub rmw_writes: u64,
    /// Host reads served from dirty data in the write cache.
    pub write_cache_read_hits: u64,
    pub dirty_bytes_now: u64,
    pub write_cache_bytes: u64,
    /// Host writes that waited for cache room.
    pub writes_waited: u64,
    /// Fraction of `[0, now]` each disk was busy.
    pub disk_utilisation: Vec<f64>,
}

/// Pages of a data element, one bit each in its dirty mask.
const PAGES_PER_ELEMENT: u64 = 64;
/// Whole-nanosecond times can put the head a hair past a target it should just meet.
const ROUNDING_SLACK_NS: f64 = 2.0;

/// Seek time over a fraction of the full stroke.
#[derive(Clone, Copy, Debug)]
struct SeekCurve {
    track_to_track_ns: f64,
    sqrt_ns: f64,
    linear_ns: f64,
}

impl SeekCurve {
    /// The curve with `seek(1) = full_stroke` whose mean over random position pairs is `average`.
    fn fit(track_to_track_ns: f64, average_ns: f64, full_stroke_ns: f64) -> Self {
        let span_ns = full_stroke_ns - track_to_track_ns;
        // a·8/15 + b/3 = average − t2t and a + b = span give a = 5·(average − t2t − span/3).
        let sqrt_ns = (5.0 * (average_ns - track_to_track_ns - span_ns / 3.0)).clamp(0.0, span_ns);
        Self { track_to_track_ns, sqrt_ns, linear_ns: span_ns - sqrt_ns }
    }

    fn seek_ns(&self, fraction: f64) -> f64 {
        self.track_to_track_ns + self.sqrt_ns * fraction.sqrt() + self.linear_ns * fraction
    }
}

/// The mechanics shared by every disk of the group.
struct Drive {
    seek: SeekCurve,
    write_settle_ns: f64,
    revolution_ns: f64,
    bytes_per_ns: f64,
    track_bytes: f64,
    capacity_bytes: f64,
    read_ahead_bytes: f64,
}

/// When an operation started now would have its head in place and when it would end.
struct Service {
    positioning_ns: f64,
    /// When the head has passed the operation's last byte (earlier than `end_ns` only for data
    /// the read-ahead already holds).
    head_done_ns: f64,
    end_ns: f64,
}

fn fraction_of_turn(x: f64) -> f64 {
    x - x.floor()
}

impl Drive {
    fn seek_ns(&self, from: u64, to: u64, write: bool) -> f64 {
        let same_track = (from as f64 / self.track_bytes).floor() == (to as f64 / self.track_bytes).floor();
        let just_ahead = to >= from && ((to - from) as f64) < self.track_bytes;
        if same_track || just_ahead {
            return 0.0;
        }
        let settle_ns = if write { self.write_settle_ns } else { 0.0 };
        self.seek.seek_ns(from.abs_diff(to) as f64 / self.capacity_bytes) + settle_ns
    }

    fn service(&self, disk: &Disk, now: SimTime, op: &DiskOp) -> Service {
        let now_ns = now as f64;
        let op_end = op.offset + op.size_bytes;
        if !op.write && disk.last_was_read && op.offset >= disk.head_offset && (op_end - disk.head_offset) as f64 <= self.read_ahead_bytes {
            let head_done_ns = disk.idle_since_ns as f64 + (op_end - disk.head_offset) as f64 / self.bytes_per_ns;
            return Service { positioning_ns: 0.0, head_done_ns, end_ns: head_done_ns.max(now_ns) };
        }
        let seek_ns = self.seek_ns(disk.head_offset, op.offset, op.write);
        let target = fraction_of_turn(op.offset as f64 / self.track_bytes);
        let under_head = fraction_of_turn((now_ns + seek_ns) / self.revolution_ns + disk.phase);
        let mut wait_ns = fraction_of_turn(target - under_head) * self.revolution_ns;
        if wait_ns > self.revolution_ns - ROUNDING_SLACK_NS {
            wait_ns = 0.0;
        }
        let positioning_ns = seek_ns + wait_ns;
        let end_ns = now_ns + positioning_ns + op.size_bytes as f64 / self.bytes_per_ns;
        Service { positioning_ns, head_done_ns: end_ns, end_ns }
    }
}

/// Where RAID puts the bytes of the group.
#[derive(Clone, Copy)]
struct Layout {
    disks: u32,
    parity: bool,
    element_bytes: u64,
    stripes: u64,
}

/// The part of a host request that falls in one data element.
#[derive(Clone, Copy)]
struct Piece {
    stripe: u64,
    element: u32,
    within_bytes: u64,
    size_bytes: u64,
}

impl Layout {
    fn data_disks(&self) -> u32 {
        self.disks - u32::from(self.parity)
    }

    fn data_bytes(&self) -> u64 {
        self.stripes * u64::from(self.data_disks()) * self.element_bytes
    }

    /// Left-symmetric: parity starts on the last disk and moves one disk left per stripe.
    fn parity_disk(&self, stripe: u64) -> u32 {
        self.disks - 1 - (stripe % u64::from(self.disks)) as u32
    }

    fn data_disk(&self, stripe: u64, element: u32) -> u32 {
        if self.parity {
            (self.parity_disk(stripe) + 1 + element) % self.disks
        } else {
            element
        }
    }

    fn disk_offset(&self, stripe: u64, within_bytes: u64) -> u64 {
        stripe * self.element_bytes + within_bytes
    }

    fn pieces(&self, offset_bytes: u64, size_bytes: u64) -> Pieces {
        Pieces { layout: *self, next_bytes: offset_bytes % self.data_bytes(), left_bytes: size_bytes }
    }
}

struct Pieces {
    layout: Layout,
    next_bytes: u64,
    left_bytes: u64,
}

impl Iterator for Pieces {
    type Item = Piece;

    fn next(&mut self) -> Option<Piece> {
        if self.left_bytes == 0 {
            return None;
        }
        let l = &self.layout;
        let element_index = self.next_bytes / l.element_bytes;
        let within_bytes = self.next_bytes % l.element_bytes;
        let size_bytes = (l.element_bytes - within_bytes).min(self.left_bytes);
        let data_disks = u64::from(l.data_disks());
        self.left_bytes -= size_bytes;
        self.next_bytes = (self.next_bytes + size_bytes) % l.data_bytes();
        Some(Piece { stripe: element_index / data_disks, element: (element_index % data_disks) as u32, within_bytes, size_bytes })
    }
}

/// A slab with a free list: slots are reused, so a warm slab does not allocate.
struct Slab<T> {
    items: Vec<T>,
    free: Vec<u32>,
}

impl<T> Default for Slab<T> {
    fn default() -> Self {
        Self { items: vec![], free: vec![] }
    }
}

impl<T> Slab<T> {
    fn insert(&mut self, item: T) -> u32 {
        match self.free.pop() {
            Some(slot) => {
                self.items[slot as usize] = item;
                slot
            }
            None => {
                self.items.push(item);
                (self.items.len() - 1) as u32
            }
        }
    }

    fn release(&mut self, slot: u32) {
        self.free.push(slot);
    }

    #[cfg(test)]
    fn live(&self) -> usize {
        self.items.len() - self.free.len()
    }
}

impl<T> Index<u32> for Slab<T> {
    type Output = T;
    fn index(&self, slot: u32) -> &T {
        &self.items[slot as usize]
    }
}

impl<T> IndexMut<u32> for Slab<T> {
    fn index_mut(&mut self, slot: u32) -> &mut T {
        &mut self.items[slot as usize]
    }
}

/// One operation of one disk.
#[derive(Clone, Copy)]
struct DiskOp {
    job: u32,
    offset: u64,
    size_bytes: u64,
    write: bool,
}

/// What a set of disk operations is for; it finishes when its last operation does.
#[derive(Clone, Copy)]
enum Job {
    HostRead { token: u64 },
    /// A stripe's destage; `bytes` of cache room come free when it ends.
    Destage { bytes: u64 },
    /// Old data and old parity of one element's dirty span are being read; the writes follow.
    ReadModifyWrite { destage: u32, data_disk: u32, parity_disk: u32, offset: u64, size_bytes: u64 },
}

#[derive(Clone, Copy)]
struct JobSlot {
    job: Job,
    ops_left: u32,
}

#[derive(Default)]
struct Disk {
    /// Operations waiting, oldest first.
    queue: VecDeque<u32>,
    serving: Option<u32>,
    /// Fraction of a turn the platter leads disk 0's.
    phase: f64,
    head_offset: u64,
    /// When the head passed the last byte of the latest operation.
    idle_since_ns: u64,
    last_was_read: bool,
    started_ns: u64,
    busy_ns: u64,
}

/// A host write waiting for cache room.
#[derive(Clone, Copy)]
struct WaitingWrite {
    token: u64,
    offset_bytes: u64,
    size_bytes: u64,
}

/// Dirty data per stripe and the room it takes.
struct WriteCache {
    capacity_bytes: u64,
    high_bytes: u64,
    low_bytes: u64,
    ack_ns: u64,
    page_bytes: u64,
    data_disks: usize,
    /// Stripe → slot of `stripe_of` / `masks`.
    index: HashMap<u64, u32>,
    stripe_of: Slab<u64>,
    /// `data_disks` page masks per slot.
    masks: Vec<u64>,
    /// Slots in the order their stripes became dirty.
    oldest: VecDeque<u32>,
    /// Including stripes being destaged: their room is freed when the destage ends.
    dirty_bytes: u64,
    destaging_bytes: u64,
    flushing: bool,
    waiting: VecDeque<WaitingWrite>,
}

impl WriteCache {
    fn page_mask(&self, piece: &Piece) -> u64 {
        let first = piece.within_bytes / self.page_bytes;
        let last = (piece.within_bytes + piece.size_bytes - 1) / self.page_bytes;
        (u64::MAX >> (PAGES_PER_ELEMENT - 1 - last)) & (u64::MAX << first)
    }

    fn has_room(&self, size_bytes: u64) -> bool {
        self.dirty_bytes == 0 || self.dirty_bytes + size_bytes <= self.capacity_bytes
    }

    /// Dirties the pages of `piece`.
    fn mark(&mut self, piece: &Piece) {
        let slot = match self.index.get(&piece.stripe) {
            Some(&slot) => slot,
            None => {
                let slot = self.stripe_of.insert(piece.stripe);
                let base = slot as usize * self.data_disks;
                if self.masks.len() < base + self.data_disks {
                    self.masks.resize(base + self.data_disks, 0);
                }
                self.masks[base..base + self.data_disks].fill(0);
                self.index.insert(piece.stripe, slot);
                self.oldest.push_back(slot);
                slot
            }
        };
        let mask = self.page_mask(piece);
        let dirty = &mut self.masks[slot as usize * self.data_disks + piece.element as usize];
        self.dirty_bytes += u64::from((mask & !*dirty).count_ones()) * self.page_bytes;
        *dirty |= mask;
    }

    /// Whether every byte of `piece` is dirty here.
    fn holds(&self, piece: &Piece) -> bool {
        let mask = self.page_mask(piece);
        self.index.get(&piece.stripe).is_some_and(|&slot| self.masks[slot as usize * self.data_disks + piece.element as usize] & mask == mask)
    }

    fn mask(&self, slot: u32, element: u32) -> u64 {
        self.masks[slot as usize * self.data_disks + element as usize]
    }

    /// Whether the watermarks or waiting writes call for another stripe to be destaged.
    fn wants_destage(&mut self) -> bool {
        if self.dirty_bytes > self.high_bytes {
            self.flushing = true;
        }
        if self.dirty_bytes - self.destaging_bytes <= self.low_bytes {
            self.flushing = false;
        }
        self.flushing || !self.waiting.is_empty()
    }
}

#[derive(Default)]
struct Counters {
    backend_reads: u64,
    backend_writes: u64,
    full_stripe_writes: u64,
    rmw_writes: u64,
    write_cache_read_hits: u64,
    writes_waited: u64,
}

/// N disks in a RAID group behind a write-back cache; see the module documentation.
pub struct DiskGroup {
    layout: Layout,
    drive: Drive,
    reorder_window: usize,
    destage_depth: u32,
    destages_in_flight: u32,
    disks: Vec<Disk>,
    ops: Slab<DiskOp>,
    jobs: Slab<JobSlot>,
    cache: WriteCache,
    counters: Counters,
}

fn ms(ns: u64) -> String {
    format!("{}ms", ns as f64 / 1e6)
}

impl DiskGroup {
    /// Reads every parameter from `spec` (the array's `media` table); the caller calls `finish`.
    pub fn from_spec(spec: &Spec) -> SpecResult<Self> {
        let disks = spec.int("disks", Some(5), 1, 64, "disks in the group (PARDA's CX3-40 groups: 5 and 10)")? as u32;
        let raid = spec.choice("raid", &["raid5", "raid0"], Some("raid5"), "raid5: rotating parity, needs 3+ disks; raid0: striping only")?;
        let element_bytes = spec.size_bytes("stripe_element", Some((64 << 10, "64KiB")), "bytes per disk per stripe (CLARiiON default: 128 sectors)")?;
        let rpm = spec.int("rpm", Some(15_000), 1, 100_000, "spindle speed, revolutions per minute")?;
        let track_to_track_ns = spec.duration_ns("seek_track_to_track", Some((200_000, "0.2ms")), "seek to the adjacent track")?;
        let average_ns = spec.duration_ns("seek_average", Some((3_500_000, "3.5ms")), "mean seek between random positions")?;
        let full_stroke_ns = spec.duration_ns("seek_full_stroke", Some((7_400_000, "7.4ms")), "seek across the whole disk")?;
        let write_settle_ns = spec.duration_ns("write_settle", Some((500_000, "0.5ms")), "added to a write's seek when the arm moves")?;
        let media_bps = spec.bandwidth_bps("media_rate", Some((792e6, "99MB/s")), "sustained media transfer rate (mean over the zones)")?;
        let capacity_bytes = spec.size_bytes("disk_capacity", Some((146_800_000_000, "146800000000")), "formatted capacity of one disk")?;
        let read_ahead_bytes = spec.size_bytes("read_ahead", Some((512 << 10, "512KiB")), "a disk keeps reading this far past a read while idle (0: off)")?;
        let reorder_window = spec.int("reorder_window", Some(32), 1, 1 << 16, "queued operations a disk picks the nearest among (1: FIFO)")?;
        let cache_bytes = spec.size_bytes("write_cache", Some((2 << 30, "2GiB")), "write-back cache size")?;
        let ack_ns = spec.service_ns("write_ack", (100_000, "100us"), "latency of a write acknowledged from the cache")?;
        let high = spec.int("high_watermark", Some(80), 1, 100, "percent dirty that starts destaging")?;
        let low = spec.int("low_watermark", Some(60), 0, 99, "percent dirty at which destaging stops")?;
        let destage_depth = spec.int("destage_depth", Some(8), 1, 1 << 16, "stripes being destaged at once")? as u32;

        let parity = raid == "raid5";
        if parity && disks < 3 {
            return Err(spec.error("disks", format!("RAID-5 needs at least 3 disks, got {disks} (nearest valid: 3); raid = \"raid0\" takes fewer")));
        }
        if element_bytes < 512 || element_bytes % 512 != 0 {
            let nearest = (element_bytes.div_ceil(512) * 512).max(512);
            return Err(spec.error("stripe_element", format!("{element_bytes} bytes is not a whole number of 512-byte sectors (nearest valid: {nearest})")));
        }
        if capacity_bytes < element_bytes {
            return Err(spec.error("disk_capacity", format!("{capacity_bytes} bytes holds no {element_bytes}-byte stripe element (nearest valid: {element_bytes})")));
        }
        if track_to_track_ns >= full_stroke_ns {
            return Err(spec.error("seek_track_to_track", format!("{} must be below seek_full_stroke = {}", ms(track_to_track_ns), ms(full_stroke_ns))));
        }
        if !(track_to_track_ns..=full_stroke_ns).contains(&average_ns) {
            let nearest = average_ns.clamp(track_to_track_ns, full_stroke_ns);
            return Err(spec.error(
                "seek_average",
                format!("{} must lie between seek_track_to_track = {} and seek_full_stroke = {} (nearest valid: {})", ms(average_ns), ms(track_to_track_ns), ms(full_stroke_ns), ms(nearest)),
            ));
        }
        if low >= high {
            return Err(spec.error("low_watermark", format!("{low} % must be below high_watermark = {high} % (nearest valid: {})", high - 1)));
        }
        if cache_bytes < element_bytes {
            return Err(spec.error("write_cache", format!("{cache_bytes} bytes holds no {element_bytes}-byte stripe element (nearest valid: {element_bytes})")));
        }

        let revolution_ns = 60e9 / rpm as f64;
        let bytes_per_ns = media_bps / 8e9;
        let layout = Layout { disks, parity, element_bytes, stripes: capacity_bytes / element_bytes };
        let percent = |p: i64| cache_bytes / 100 * p as u64;
        Ok(Self {
            layout,
            drive: Drive {
                seek: SeekCurve::fit(track_to_track_ns as f64, average_ns as f64, full_stroke_ns as f64),
                write_settle_ns: write_settle_ns as f64,
                revolution_ns,
                bytes_per_ns,
                track_bytes: bytes_per_ns * revolution_ns,
                capacity_bytes: capacity_bytes as f64,
                read_ahead_bytes: read_ahead_bytes as f64,
            },
            reorder_window: reorder_window as usize,
            destage_depth,
            destages_in_flight: 0,
            disks: (0..disks).map(|i| Disk { phase: f64::from(i) / f64::from(disks), ..Disk::default() }).collect(),
            ops: Slab::default(),
            jobs: Slab::default(),
            cache: WriteCache {
                capacity_bytes: cache_bytes,
                high_bytes: percent(high),
                low_bytes: percent(low),
                ack_ns,
                page_bytes: element_bytes / PAGES_PER_ELEMENT,
                data_disks: layout.data_disks() as usize,
                index: HashMap::new(),
                stripe_of: Slab::default(),
                masks: vec![],
                oldest: VecDeque::new(),
                dirty_bytes: 0,
                destaging_bytes: 0,
                flushing: false,
                waiting: VecDeque::new(),
            },
            counters: Counters::default(),
        })
    }

    /// A host request reaches the back end (`token` is opaque here).
    pub fn submit(&mut self, now: SimTime, token: u64, op: Op, offset_bytes: u64, size_bytes: u32, out: &mut DiskOut) {
        let size_bytes = u64::from(size_bytes);
        match op {
            Op::Read => {
                if self.layout.pieces(offset_bytes, size_bytes).all(|p| self.cache.holds(&p)) {
                    self.counters.write_cache_read_hits += 1;
                    out.done.push((now + self.cache.ack_ns, token));
                    return;
                }
                let job = self.jobs.insert(JobSlot { job: Job::HostRead { token }, ops_left: 0 });
                for p in self.layout.pieces(offset_bytes, size_bytes) {
                    let disk = self.layout.data_disk(p.stripe, p.element);
                    self.issue(disk, self.layout.disk_offset(p.stripe, p.within_bytes), p.size_bytes, false, job);
                }
            }
            Op::Write => {
                let write = WaitingWrite { token, offset_bytes, size_bytes };
                if self.cache.waiting.is_empty() && self.cache.has_room(size_bytes) {
                    self.admit(now, write, out);
                } else {
                    self.counters.writes_waited += 1;
                    self.cache.waiting.push_back(write);
                }
                self.destage();
            }
        }
        self.start_idle_disks(now, out);
    }

    /// Disk `disk` finished the operation it was serving.
    pub fn disk_done(&mut self, now: SimTime, disk: u32, out: &mut DiskOut) {
        let d = &mut self.disks[disk as usize];
        let op = d.serving.take().expect("a disk timer fires only while the disk serves an operation");
        d.busy_ns += now - d.started_ns;
        let job = self.ops[op].job;
        self.ops.release(op);
        self.op_done(now, job, out);
        self.start_idle_disks(now, out);
    }

    /// Mean fraction of time the disks were busy over `[0, now]`.
    pub fn utilisation(&mut self, now: SimTime) -> f64 {
        (0..self.disks.len()).map(|d| self.disk_utilisation(d, now)).sum::<f64>() / self.disks.len() as f64
    }

    /// Figures for the report; utilisation over `[0, now]`.
    pub fn stats(&mut self, now: SimTime) -> DiskGroupStats {
        let c = &self.counters;
        DiskGroupStats {
            disks: self.layout.disks,
            raid: if self.layout.parity { "raid5" } else { "raid0" },
            backend_reads: c.backend_reads,
            backend_writes: c.backend_writes,
            full_stripe_writes: c.full_stripe_writes,
            rmw_writes: c.rmw_writes,
            write_cache_read_hits: c.write_cache_read_hits,
            dirty_bytes_now: self.cache.dirty_bytes,
            write_cache_bytes: self.cache.capacity_bytes,
            writes_waited: c.writes_waited,
            disk_utilisation: (0..self.disks.len()).map(|d| self.disk_utilisation(d, now)).collect(),
        }
    }

    fn disk_utilisation(&self, disk: usize, now: SimTime) -> f64 {
        let d = &self.disks[disk];
        let serving_ns = if d.serving.is_some() { now.saturating_sub(d.started_ns) } else { 0 };
        if now == 0 { 0.0 } else { (d.busy_ns + serving_ns) as f64 / now as f64 }
    }

    /// Acknowledges a write the cache has room for and dirties its pages.
    fn admit(&mut self, now: SimTime, write: WaitingWrite, out: &mut DiskOut) {
        for p in self.layout.pieces(write.offset_bytes, write.size_bytes) {
            self.cache.mark(&p);
        }
        out.done.push((now + self.cache.ack_ns, write.token));
    }

    /// Queues a disk operation for `job`.
    fn issue(&mut self, disk: u32, offset: u64, size_bytes: u64, write: bool, job: u32) {
        let op = self.ops.insert(DiskOp { job, offset, size_bytes, write });
        self.disks[disk as usize].queue.push_back(op);
        self.jobs[job].ops_left += 1;
        if write { self.counters.backend_writes += 1 } else { self.counters.backend_reads += 1 }
    }

    /// Starts destaging the oldest dirty stripes while the cache calls for it.
    fn destage(&mut self) {
        while self.destages_in_flight < self.destage_depth && self.cache.wants_destage() {
            let Some(slot) = self.cache.oldest.pop_front() else { break };
            let stripe = self.cache.stripe_of[slot];
            self.cache.index.remove(&stripe);
            let data_disks = self.layout.data_disks();
            let dirty_pages: u32 = (0..data_disks).map(|e| self.cache.mask(slot, e).count_ones()).sum();
            let bytes = u64::from(dirty_pages) * self.cache.page_bytes;
            let job = self.jobs.insert(JobSlot { job: Job::Destage { bytes }, ops_left: 0 });
            self.cache.destaging_bytes += bytes;
            self.destages_in_flight += 1;
            let element_bytes = self.layout.element_bytes;
            let at = self.layout.disk_offset(stripe, 0);
            if self.layout.parity && (0..data_disks).all(|e| self.cache.mask(slot, e) == u64::MAX) {
                self.counters.full_stripe_writes += 1;
                for e in 0..data_disks {
                    self.issue(self.layout.data_disk(stripe, e), at, element_bytes, true, job);
                }
                self.issue(self.layout.parity_disk(stripe), at, element_bytes, true, job);
            } else {
                for e in 0..data_disks {
                    let mask = self.cache.mask(slot, e);
                    if mask == 0 {
                        continue;
                    }
                    let first_page = u64::from(mask.trailing_zeros());
                    let pages = PAGES_PER_ELEMENT - u64::from(mask.leading_zeros()) - first_page;
                    let offset = at + first_page * self.cache.page_bytes;
                    let size_bytes = pages * self.cache.page_bytes;
                    let data_disk = self.layout.data_disk(stripe, e);
                    if self.layout.parity {
                        self.counters.rmw_writes += 1;
                        let parity_disk = self.layout.parity_disk(stripe);
                        let rmw = self.jobs.insert(JobSlot { job: Job::ReadModifyWrite { destage: job, data_disk, parity_disk, offset, size_bytes }, ops_left: 0 });
                        self.jobs[job].ops_left += 1;
                        self.issue(data_disk, offset, size_bytes, false, rmw);
                        self.issue(parity_disk, offset, size_bytes, false, rmw);
                    } else {
                        self.issue(data_disk, offset, size_bytes, true, job);
                    }
                }
            }
            self.cache.stripe_of.release(slot);
        }
    }

    /// One operation (or child job) of `job` is done.
    fn op_done(&mut self, now: SimTime, job: u32, out: &mut DiskOut) {
        let slot = &mut self.jobs[job];
        slot.ops_left -= 1;
        if slot.ops_left > 0 {
            return;
        }
        let finished = slot.job;
        self.jobs.release(job);
        match finished {
            Job::HostRead { token } => out.done.push((now, token)),
            Job::ReadModifyWrite { destage, data_disk, parity_disk, offset, size_bytes } => {
                self.issue(data_disk, offset, size_bytes, true, destage);
                self.issue(parity_disk, offset, size_bytes, true, destage);
                self.op_done(now, destage, out);
            }
            Job::Destage { bytes } => {
                self.cache.dirty_bytes -= bytes;
                self.cache.destaging_bytes -= bytes;
                self.destages_in_flight -= 1;
                while let Some(&write) = self.cache.waiting.front() {
                    if !self.cache.has_room(write.size_bytes) {
                        break;
                    }
                    self.cache.waiting.pop_front();
                    self.admit(now, write, out);
                }
                self.destage();
            }
        }
    }

    /// Every idle disk with queued work starts the operation nearest its head (SATF in the window).
    fn start_idle_disks(&mut self, now: SimTime, out: &mut DiskOut) {
        for index in 0..self.disks.len() {
            let disk = &self.disks[index];
            if disk.serving.is_some() || disk.queue.is_empty() {
                continue;
            }
            let mut best: Option<(usize, Service)> = None;
            for (position, &op) in disk.queue.iter().take(self.reorder_window).enumerate() {
                let s = self.drive.service(disk, now, &self.ops[op]);
                if best.as_ref().is_none_or(|(_, b)| s.positioning_ns < b.positioning_ns) {
                    best = Some((position, s));
                }
            }
            let (position, service) = best.expect("the queue is not empty");
            let disk = &mut self.disks[index];
            let op = disk.queue.remove(position).expect("position is within the queue");
            let DiskOp { offset, size_bytes, write, .. } = self.ops[op];
            let end_ns = (service.end_ns.round() as SimTime).max(now);
            disk.serving = Some(op);
            disk.started_ns = now;
            disk.head_offset = offset + size_bytes;
            disk.idle_since_ns = (service.head_done_ns.round() as SimTime).min(end_ns);
            disk.last_was_read = !write;
            out.timers.push((end_ns, index as u32));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;

    const KIB: u64 = 1024;

    fn group(extra: &str) -> DiskGroup {
        let t: toml::Table = extra.parse().unwrap();
        let spec = Spec::new(&t, "array[0].media");
        let g = DiskGroup::from_spec(&spec).unwrap();
        spec.finish().unwrap();
        g
    }

    fn error(extra: &str) -> sanlab_spec::SpecError {
        let t: toml::Table = extra.parse().unwrap();
        DiskGroup::from_spec(&Spec::new(&t, "array[0].media")).err().expect("should be rejected")
    }

    /// splitmix64: deterministic request positions for the tests.
    struct Positions(u64);

    impl Positions {
        fn below(&mut self, n: u64) -> u64 {
            self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            (z ^ (z >> 31)) % n
        }
    }

    #[derive(PartialEq, Eq, PartialOrd, Ord)]
    enum Event {
        Disk(u32),
        Done(u64),
    }

    /// Plays the engine: timers and completions in time order, a closed loop of `depth` requests.
    struct Run {
        group: DiskGroup,
        done: Vec<(SimTime, u64)>,
        /// Stats and time when `warmup` requests were done.
        at_warmup: Option<(DiskGroupStats, SimTime)>,
        end_ns: SimTime,
    }

    fn closed_loop(group: DiskGroup, depth: usize, total: usize, warmup: usize, mut request: impl FnMut(usize) -> (Op, u64, u32)) -> Run {
        let mut run = Run { group, done: vec![], at_warmup: None, end_ns: 0 };
        let mut out = DiskOut::default();
        let mut events = BinaryHeap::new();
        let mut seq = 0u64;
        let mut submitted = 0;
        let mut now = 0;
        loop {
            while submitted < total && submitted < run.done.len() + depth {
                let (op, offset, size) = request(submitted);
                run.group.submit(now, submitted as u64, op, offset, size, &mut out);
                submitted += 1;
            }
            for (t, disk) in out.timers.drain(..) {
                events.push(Reverse((t, seq, Event::Disk(disk))));
                seq += 1;
            }
            for (t, token) in out.done.drain(..) {
                events.push(Reverse((t, seq, Event::Done(token))));
                seq += 1;
            }
            let Some(Reverse((t, _, event))) = events.pop() else { break };
            now = t;
            match event {
                Event::Disk(disk) => run.group.disk_done(now, disk, &mut out),
                Event::Done(token) => {
                    run.done.push((now, token));
                    if run.done.len() == warmup {
                        run.at_warmup = Some((run.group.stats(now), now));
                    }
                }
            }
        }
        run.end_ns = now;
        run
    }

    fn random_reads(group: DiskGroup, depth: usize, total: usize, size: u64) -> Run {
        let span = group.layout.data_bytes() / size;
        let mut at = Positions(7);
        closed_loop(group, depth, total, 0, |_| (Op::Read, at.below(span) * size, size as u32))
    }

    fn mean_service_ms(run: &Run) -> f64 {
        run.end_ns as f64 / run.done.len() as f64 / 1e6
    }

    const ONE_DISK: &str = "disks = 1\nraid = \"raid0\"";

    #[test]
    fn seek_curve_meets_the_datasheet() {
        let c = SeekCurve::fit(0.2e6, 3.5e6, 7.4e6);
        assert!((c.sqrt_ns - 4.5e6).abs() < 1.0 && (c.linear_ns - 2.7e6).abs() < 1.0, "{c:?}");
        assert!((c.seek_ns(1.0) - 7.4e6).abs() < 1.0);
        // Mean over x with density 2(1 − x), midpoint rule.
        let n = 200_000;
        let mean: f64 = (0..n).map(|i| (i as f64 + 0.5) / n as f64).map(|x| c.seek_ns(x) * 2.0 * (1.0 - x) / n as f64).sum();
        assert!((mean - 3.5e6).abs() < 1e3, "mean seek {mean}");
        // An average below a third of the stroke clamps to a straight line.
        let linear = SeekCurve::fit(0.2e6, 1.0e6, 7.4e6);
        assert_eq!(linear.sqrt_ns, 0.0);
        assert!((linear.seek_ns(1.0) - 7.4e6).abs() < 1.0);
    }

    #[test]
    fn left_symmetric_layout() {
        let g = group("");
        let l = g.layout;
        assert_eq!((0..5).map(|s| l.parity_disk(s)).collect::<Vec<_>>(), [4, 3, 2, 1, 0]);
        assert_eq!((0..4).map(|e| l.data_disk(1, e)).collect::<Vec<_>>(), [4, 0, 1, 2]);
        let pieces: Vec<_> = l.pieces(60 * KIB, 8 * KIB).map(|p| (p.stripe, p.element, p.within_bytes, p.size_bytes)).collect();
        assert_eq!(pieces, [(0, 0, 60 * KIB, 4 * KIB), (0, 1, 0, 4 * KIB)]);
        let last = l.pieces(4 * 64 * KIB + 1, 1).next().unwrap();
        assert_eq!((last.stripe, last.element, last.within_bytes), (1, 0, 1));
    }

    #[test]
    fn random_reads_at_depth_one_cost_average_seek_half_turn_and_transfer() {
        let run = random_reads(group(ONE_DISK), 1, 20_000, 4 * KIB);
        let expected_ms = 3.5 + 2.0 + 4096.0 / 99e6 * 1e3;
        let got = mean_service_ms(&run);
        assert!((got / expected_ms - 1.0).abs() < 0.05, "mean service {got:.3} ms, datasheet {expected_ms:.3} ms");
    }

    #[test]
    fn reordering_raises_throughput_with_queue_depth() {
        let fifo = mean_service_ms(&random_reads(group(ONE_DISK), 1, 20_000, 4 * KIB));
        let satf = mean_service_ms(&random_reads(group(&format!("{ONE_DISK}\nreorder_window = 32")), 32, 20_000, 4 * KIB));
        assert!(fifo / satf >= 1.8, "depth 32 gives {:.2}x depth 1", fifo / satf);
        let deep_fifo = mean_service_ms(&random_reads(group(&format!("{ONE_DISK}\nreorder_window = 1")), 32, 20_000, 4 * KIB));
        assert!((deep_fifo / fifo - 1.0).abs() < 0.05, "FIFO at depth 32 {deep_fifo:.3} ms vs depth 1 {fifo:.3} ms");
    }

    /// Back-end operations per host request between warm-up and the end.
    fn ops_per_request(run: &mut Run) -> f64 {
        let (before, _) = run.at_warmup.as_ref().unwrap();
        let (last_ns, _) = *run.done.last().unwrap();
        let mut g = run.group.stats(last_ns);
        // Count only operations issued up to the last host completion (the tail of the destage
        // queue runs on afterwards).
        g.backend_reads -= before.backend_reads;
        g.backend_writes -= before.backend_writes;
        let requests = run.done.iter().filter(|&&(t, _)| t > run.at_warmup.as_ref().unwrap().1).count();
        (g.backend_reads + g.backend_writes) as f64 / requests as f64
    }

    #[test]
    fn random_small_writes_cost_four_operations_each() {
        let g = group("write_cache = \"1MiB\"");
        let span = g.layout.data_bytes() / (8 * KIB);
        let mut at = Positions(11);
        let mut run = closed_loop(g, 32, 30_000, 10_000, |_| (Op::Write, at.below(span) * 8 * KIB, 8 * 1024));
        let ratio = ops_per_request(&mut run);
        assert!((ratio / 4.0 - 1.0).abs() < 0.03, "{ratio:.3} back-end operations per host write");
        let s = run.group.stats(run.end_ns);
        assert_eq!(s.full_stripe_writes, 0);
        assert!(s.writes_waited > 20_000, "steady state is destage-bound: {} waited", s.writes_waited);
    }

    #[test]
    fn sequential_writes_become_full_stripe_writes() {
        let g = group("write_cache = \"4MiB\"");
        let mut run = closed_loop(g, 4, 8_000, 2_000, |i| (Op::Write, i as u64 * 64 * KIB, 64 * 1024));
        let ratio = ops_per_request(&mut run);
        assert!((ratio / 1.25 - 1.0).abs() < 0.03, "{ratio:.3} back-end operations per 64 KiB element, RAID-5 4+1 wants 5/4");
        let s = run.group.stats(run.end_ns);
        assert_eq!(s.rmw_writes, 0);
        assert!(s.full_stripe_writes > 1_000, "{s:?}");
        assert_eq!(s.backend_reads, 0);
    }

    #[test]
    fn sequential_reads_beat_random_reads() {
        let random = mean_service_ms(&random_reads(group(""), 1, 5_000, 4 * KIB));
        let sequential = mean_service_ms(&closed_loop(group(""), 1, 5_000, 0, |i| (Op::Read, i as u64 * 4 * KIB, 4096)));
        assert!(random / sequential >= 5.0, "sequential {sequential:.4} ms, random {random:.3} ms per read");
    }

    /// Reads and writes of assorted sizes, crossing elements and stripes.
    fn mixed(depth: usize) -> Run {
        let g = group("write_cache = \"2MiB\"\ndestage_depth = 3");
        let span = g.layout.data_bytes() / 512;
        let mut at = Positions(3);
        closed_loop(g, depth, 5_000, 0, |i| {
            let op = if i % 3 == 0 { Op::Read } else { Op::Write };
            let hot = at.below(4) == 0; // a quarter of the requests revisit a small area
            let offset = if hot { at.below(64) * 8 * KIB } else { at.below(span) * 512 };
            (op, offset, (1 + at.below(512)) as u32 * 1024)
        })
    }

    #[test]
    fn every_request_completes_once_and_nothing_is_left_in_flight() {
        let run = mixed(16);
        let mut tokens: Vec<u64> = run.done.iter().map(|&(_, t)| t).collect();
        tokens.sort_unstable();
        assert_eq!(tokens, (0..5_000).collect::<Vec<u64>>());
        let g = &run.group;
        assert_eq!(g.ops.live(), 0);
        assert_eq!(g.jobs.live(), 0);
        assert!(g.disks.iter().all(|d| d.queue.is_empty() && d.serving.is_none()));
        assert!(g.cache.waiting.is_empty() && g.destages_in_flight == 0 && g.cache.destaging_bytes == 0);
        assert!(g.cache.dirty_bytes <= g.cache.high_bytes);
        assert!(g.counters.write_cache_read_hits > 0, "the hot area is read back from the cache");
    }

    #[test]
    fn identical_runs_are_identical() {
        let a = mixed(8);
        let b = mixed(8);
        assert_eq!(a.done, b.done);
        assert!(a.done.windows(2).all(|w| w[0].0 <= w[1].0));
    }

    #[test]
    fn a_read_of_dirty_data_is_served_from_the_cache() {
        let mut g = group("");
        let mut out = DiskOut::default();
        g.submit(1_000, 1, Op::Write, 64 * KIB, 16 * 1024, &mut out);
        g.submit(2_000, 2, Op::Read, 68 * KIB, 4 * 1024, &mut out);
        assert_eq!(out.done, [(101_000, 1), (102_000, 2)]);
        assert!(out.timers.is_empty());
        g.submit(3_000, 3, Op::Read, 78 * KIB, 4 * 1024, &mut out);
        assert_eq!(out.timers.len(), 1, "half of this read is not in the cache");
    }

    #[test]
    fn parameter_errors_name_the_key() {
        let e = error("disks = 2");
        assert_eq!(e.location, "array[0].media.disks");
        assert!(e.message.contains("RAID-5 needs at least 3 disks") && e.message.contains("nearest valid: 3"), "{}", e.message);
        let e = error("high_watermark = 60\nlow_watermark = 60");
        assert_eq!(e.location, "array[0].media.low_watermark");
        assert!(e.message.contains("nearest valid: 59"), "{}", e.message);
        let e = error("seek_average = \"9ms\"");
        assert_eq!(e.location, "array[0].media.seek_average");
        assert!(e.message.contains("nearest valid: 7.4ms"), "{}", e.message);
        let e = error("stripe_element = \"1000\"");
        assert!(e.message.contains("nearest valid: 1024"), "{}", e.message);
        assert!(DiskGroup::from_spec(&Spec::new(&"disks = 2\nraid = \"raid0\"".parse().unwrap(), "m")).is_ok());
    }

    #[test]
    fn describe_mode_builds_with_defaults() {
        let spec = Spec::describing();
        let g = DiskGroup::from_spec(&spec).unwrap();
        assert_eq!(g.disks.len(), 5);
        let docs = spec.into_docs();
        assert!(docs.iter().any(|d| d.name == "high_watermark" && d.default == "80"));
    }
}
