//! The drive's mechanics (seek curve, rotation, read-ahead) and one disk's queue and head; the
//! sources and our choices are in the header of `mod.rs`.

use sanlab_des::SimTime;
use std::collections::VecDeque;

/// Whole-nanosecond times can put the head a hair past a target it should just meet.
pub(super) const ROUNDING_SLACK_NS: f64 = 2.0;

/// Seek time over a fraction of the full stroke.
#[derive(Clone, Copy, Debug)]
pub(super) struct SeekCurve {
    pub(super) track_to_track_ns: f64,
    pub(super) sqrt_ns: f64,
    pub(super) linear_ns: f64,
}

impl SeekCurve {
    /// The curve with `seek(1) = full_stroke` whose mean over random position pairs is `average`.
    pub(super) fn fit(track_to_track_ns: f64, average_ns: f64, full_stroke_ns: f64) -> Self {
        let span_ns = full_stroke_ns - track_to_track_ns;
        // a·8/15 + b/3 = average − t2t and a + b = span give a = 5·(average − t2t − span/3).
        let sqrt_ns = (5.0 * (average_ns - track_to_track_ns - span_ns / 3.0)).clamp(0.0, span_ns);
        Self { track_to_track_ns, sqrt_ns, linear_ns: span_ns - sqrt_ns }
    }

    pub(super) fn seek_ns(&self, fraction: f64) -> f64 {
        self.track_to_track_ns + self.sqrt_ns * fraction.sqrt() + self.linear_ns * fraction
    }
}

/// A drive model's datasheet figures: the defaults of the group's drive keys (sources in the
/// header of `mod.rs`).
pub(super) struct DriveClass {
    pub(super) name: &'static str,
    pub(super) rpm: i64,
    pub(super) seek_track_to_track_ns: u64,
    pub(super) seek_average_ns: u64,
    pub(super) seek_full_stroke_ns: u64,
    pub(super) write_settle_ns: u64,
    /// Bits per second.
    pub(super) media_bps: f64,
    pub(super) capacity_bytes: u64,
}

pub(super) const DRIVE_CLASSES: [DriveClass; 2] = [
    DriveClass {
        name: "cheetah_15k5",
        rpm: 15_000,
        seek_track_to_track_ns: 200_000,
        seek_average_ns: 3_500_000,
        seek_full_stroke_ns: 7_400_000,
        write_settle_ns: 500_000,
        media_bps: 792e6,
        capacity_bytes: 146_800_000_000,
    },
    DriveClass {
        name: "ultrastar_146z10",
        rpm: 10_000,
        seek_track_to_track_ns: 300_000,
        seek_average_ns: 4_700_000,
        seek_full_stroke_ns: 10_500_000,
        write_settle_ns: 1_200_000,
        media_bps: 400e6,
        capacity_bytes: 146_800_000_000,
    },
];

pub(super) const DRIVE_CLASS_NAMES: [&str; DRIVE_CLASSES.len()] = {
    let mut names = [""; DRIVE_CLASSES.len()];
    let mut i = 0;
    while i < names.len() {
        names[i] = DRIVE_CLASSES[i].name;
        i += 1;
    }
    names
};

/// The mechanics shared by every disk of the group.
pub(super) struct Drive {
    pub(super) seek: SeekCurve,
    pub(super) write_settle_ns: f64,
    pub(super) revolution_ns: f64,
    pub(super) bytes_per_ns: f64,
    pub(super) track_bytes: f64,
    pub(super) capacity_bytes: f64,
    pub(super) read_ahead_bytes: f64,
    /// Time the drive spends on each command before it moves the arm (0: none).
    pub(super) command_overhead_ns: f64,
}

/// When an operation started now would have its head in place and when it would end.
pub(super) struct Service {
    pub(super) positioning_ns: f64,
    /// When the head has passed the operation's last byte (earlier than `end_ns` only for data
    /// the read-ahead already holds).
    pub(super) head_done_ns: f64,
    pub(super) end_ns: f64,
}

pub(super) fn fraction_of_turn(x: f64) -> f64 {
    x - x.floor()
}

impl Drive {
    pub(super) fn seek_ns(&self, from: u64, to: u64, write: bool) -> f64 {
        let same_track = (from as f64 / self.track_bytes).floor() == (to as f64 / self.track_bytes).floor();
        let just_ahead = to >= from && ((to - from) as f64) < self.track_bytes;
        if same_track || just_ahead {
            return 0.0;
        }
        let settle_ns = if write { self.write_settle_ns } else { 0.0 };
        self.seek.seek_ns(from.abs_diff(to) as f64 / self.capacity_bytes) + settle_ns
    }

    pub(super) fn service(&self, disk: &Disk, now: SimTime, op: &DiskOp) -> Service {
        // The command is processed first; the arm moves once it is.
        let now_ns = now as f64 + self.command_overhead_ns;
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

/// One operation of one disk.
#[derive(Clone, Copy)]
pub(super) struct DiskOp {
    pub(super) job: u32,
    pub(super) offset: u64,
    pub(super) size_bytes: u64,
    pub(super) write: bool,
}

#[derive(Default)]
pub(super) struct Disk {
    /// Operations waiting, oldest first.
    pub(super) queue: VecDeque<u32>,
    pub(super) serving: Option<u32>,
    /// Fraction of a turn the platter leads disk 0's.
    pub(super) phase: f64,
    pub(super) head_offset: u64,
    /// When the head passed the last byte of the latest operation.
    pub(super) idle_since_ns: u64,
    pub(super) last_was_read: bool,
    pub(super) started_ns: u64,
    pub(super) busy_ns: u64,
    /// Its busy time (the operation in progress included) when the measured time started.
    pub(super) busy_at_start: sanlab_metrics::Baseline<u64>,
}

impl Disk {
    /// Busy time up to `now`, the operation in progress included.
    pub(super) fn busy_to(&self, now: u64) -> u64 {
        self.busy_ns + if self.serving.is_some() { now.saturating_sub(self.started_ns) } else { 0 }
    }
}
