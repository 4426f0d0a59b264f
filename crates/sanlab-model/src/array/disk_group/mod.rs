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
//! A second class, `drive = "ultrastar_146z10"`, is a 10,000 rpm drive: IBM, *Hard disk drive
//! specifications, Ultrastar 146Z10*, S07N9742-03, Rev. 2.2, February 2002, §4.5: average seek
//! 4.7 ms read / 5.9 ms write (146 GB model), full stroke 10.5 ms read; its track-to-track seek
//! (0.3 ms), media rate (50 MB/s, from the spec's throughput formula) and capacity are ours
//! (docs/models/array.md has the arithmetic). A key given beside `drive` overrides its figure.
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
//! (oldest first: the commands the array has passed to the drive) it serves the one with the
//! shortest positioning time (SATF), ties to the oldest. Throughput then rises with queue depth and
//! flattens (PARDA's Fig. 6 shape); 1 is FIFO. There is no aging beyond the window. Each command
//! first spends `command_overhead` (0 by default; the Ultrastar's spec gives under 0.4 ms for the
//! drive itself) before the arm moves; the platter turns meanwhile.
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

mod drive;
mod layout;
#[cfg(test)]
mod tests;
mod write_cache;

use crate::io::Op;
use drive::{Disk, DiskOp, Drive, SeekCurve, Service, DRIVE_CLASSES, DRIVE_CLASS_NAMES};
use layout::Layout;
use sanlab_des::{SimTime, Slab};
use sanlab_metrics::TimeWeighted;
use sanlab_spec::{Spec, SpecResult};
use serde::Serialize;
use std::collections::{HashMap, VecDeque};
use write_cache::{WaitingWrite, WriteCache, PAGES_PER_ELEMENT};

/// What the disk group asks of the engine after a call. The engine clears both vectors before each
/// call and reuses them.
#[derive(Default)]
pub struct DiskOut {
    /// (time, disk index): arm a timer; at that time the engine calls `disk_done(time, disk)`.
    pub timers: Vec<(SimTime, u32)>,
    /// (time, token, from cache): the host request `token` is finished at that time, served by
    /// the write-back cache (a read of dirty data, a write acknowledged) or by the disks.
    pub done: Vec<(SimTime, u64, bool)>,
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
    /// Dirty bytes, time-averaged over the measured time.
    pub dirty_bytes_mean: f64,
    pub write_cache_bytes: u64,
    /// Host writes that waited for cache room.
    pub writes_waited: u64,
    /// Fraction of the measured time each disk was busy.
    pub disk_utilisation: Vec<f64>,
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
        let class = spec.choice("drive", &DRIVE_CLASS_NAMES, Some(DRIVE_CLASSES[0].name), "drive model whose datasheet gives the defaults of the drive keys below")?;
        let class = DRIVE_CLASSES.iter().find(|c| c.name == class).expect("choice is one of the names");
        let rpm = spec.int("rpm", Some(class.rpm), 1, 100_000, "spindle speed, revolutions per minute")?;
        let track_to_track_ns = spec.duration_ns("seek_track_to_track", Some((class.seek_track_to_track_ns, &ms(class.seek_track_to_track_ns))), "seek to the adjacent track")?;
        let average_ns = spec.duration_ns("seek_average", Some((class.seek_average_ns, &ms(class.seek_average_ns))), "mean seek between random positions")?;
        let full_stroke_ns = spec.duration_ns("seek_full_stroke", Some((class.seek_full_stroke_ns, &ms(class.seek_full_stroke_ns))), "seek across the whole disk")?;
        let write_settle_ns = spec.duration_ns("write_settle", Some((class.write_settle_ns, &ms(class.write_settle_ns))), "added to a write's seek when the arm moves")?;
        let media_bps = spec.bandwidth_bps("media_rate", Some((class.media_bps, &format!("{}MB/s", class.media_bps / 8e6))), "sustained media transfer rate (mean over the zones)")?;
        let capacity_bytes = spec.size_bytes("disk_capacity", Some((class.capacity_bytes, &class.capacity_bytes.to_string())), "formatted capacity of one disk")?;
        let command_overhead_ns = spec.duration_ns("command_overhead", Some((0, "0s")), "time each disk command takes before the arm moves (firmware and controller)")?;
        let read_ahead_bytes = spec.size_bytes("read_ahead", Some((512 << 10, "512KiB")), "a disk keeps reading this far past a read while idle (0: off)")?;
        let reorder_window = spec.int("reorder_window", Some(32), 1, 1 << 16, "commands the array passes to each disk at once, among which it picks the nearest (1: FIFO)")?;
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
                command_overhead_ns: command_overhead_ns as f64,
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
                dirty_area: TimeWeighted::default(),
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
                    out.done.push((now + self.cache.ack_ns, token, true));
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
        self.ops.remove(op);
        self.op_done(now, job, out);
        self.start_idle_disks(now, out);
    }

    /// The measured time starts at `now`: utilisation and the cache's mean fullness count from here.
    pub fn measure_from(&mut self, now: SimTime) {
        for d in &mut self.disks {
            let busy = d.busy_to(now);
            d.busy_at_start.set(busy);
        }
        self.cache.account(now);
        self.cache.dirty_area = TimeWeighted::default();
        self.cache.dirty_area.advance(now, [0]);
    }

    /// Mean fraction of the measured time (`span_ns` up to `now`) the disks were busy.
    pub fn utilisation(&mut self, now: SimTime, span_ns: SimTime) -> f64 {
        (0..self.disks.len()).map(|d| self.disk_utilisation(d, now, span_ns)).sum::<f64>() / self.disks.len() as f64
    }

    /// Figures for the report; utilisation and mean fullness over the measured time, `span_ns`
    /// up to `now`.
    pub fn stats(&mut self, now: SimTime, span_ns: SimTime) -> DiskGroupStats {
        self.cache.account(now);
        let dirty_bytes_mean = if span_ns == 0 { 0.0 } else { self.cache.dirty_area.area()[0] as f64 / span_ns as f64 };
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
            dirty_bytes_mean,
            write_cache_bytes: self.cache.capacity_bytes,
            writes_waited: c.writes_waited,
            disk_utilisation: (0..self.disks.len()).map(|d| self.disk_utilisation(d, now, span_ns)).collect(),
        }
    }

    fn disk_utilisation(&self, disk: usize, now: SimTime, span_ns: SimTime) -> f64 {
        let d = &self.disks[disk];
        if span_ns == 0 { 0.0 } else { d.busy_at_start.since(d.busy_to(now)) as f64 / span_ns as f64 }
    }

    /// Acknowledges a write the cache has room for and dirties its pages.
    fn admit(&mut self, now: SimTime, write: WaitingWrite, out: &mut DiskOut) {
        self.cache.account(now);
        for p in self.layout.pieces(write.offset_bytes, write.size_bytes) {
            self.cache.mark(&p);
        }
        out.done.push((now + self.cache.ack_ns, write.token, true));
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
            self.cache.stripe_of.remove(slot);
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
        self.jobs.remove(job);
        match finished {
            Job::HostRead { token } => out.done.push((now, token, false)),
            Job::ReadModifyWrite { destage, data_disk, parity_disk, offset, size_bytes } => {
                self.issue(data_disk, offset, size_bytes, true, destage);
                self.issue(parity_disk, offset, size_bytes, true, destage);
                self.op_done(now, destage, out);
            }
            Job::Destage { bytes } => {
                self.cache.account(now);
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

