//! A trace's records, the floor every trace format reads onto: what one line holds ([`Line`]),
//! which records are replayed and where they land ([`Select`]), and the field parsers the
//! formats share.

use crate::face::{Op, Request};
use sanlab_spec::number::SIZE;

pub(super) const SECTOR_BYTES: u64 = 512;

/// Which records of a trace are replayed: one disk (MSR DiskNumber, SPC ASU, Alibaba
/// device_id, Tencent VolumeID, biosnoop DISK) and host (MSR Hostname), reads or writes only,
/// a time window; and where they land on a volume of `device_bytes`.
#[derive(Clone, Debug, Default)]
pub(super) struct Select {
    pub(super) disk: Option<String>,
    pub(super) host: Option<String>,
    /// Disks (or hosts) seen when none is selected, to refuse mixing several (first few kept).
    pub(super) seen: Vec<String>,
    /// `volumes`: every disk of the trace has a volume, by these keys (disk ids, or MSR
    /// `Hostname/DiskNumber`); a record of another disk is an error. Empty without a map.
    pub(super) mapped: Vec<String>,
    /// With a map keyed by disk alone: the one MSR Hostname its disks belong to.
    pub(super) mapped_host: Option<String>,
    pub(super) op: Option<Op>,
    pub(super) from_ns: u64,
    pub(super) to_ns: Option<u64>,
    pub(super) device_bytes: u64,
    pub(super) offset_wrap: bool,
    /// The first record kept: time zero of the window.
    pub(super) origin_ns: Option<u64>,
}

/// Disks named in a "several disks" message at most.
const MAX_SEEN: usize = 8;

impl Select {
    pub(super) fn keep_disk(&mut self, id: &str) -> Result<bool, String> {
        self.check_mapped(id, id)?;
        Ok(self.keep_disk_seen_as(id, id))
    }

    /// With `volumes`: the record's disk (`id`, or MSR `host/disk` as `full`) must have one.
    pub(super) fn check_mapped(&self, id: &str, full: &str) -> Result<(), String> {
        if self.mapped.is_empty() || self.mapped.iter().any(|k| k == full || k == id) {
            return Ok(());
        }
        Err(format!("disk `{full}` has no volume in `volumes` (it maps {}): add it, e.g. \"{full}\" = \"<volume>\"", self.mapped.join(", ")))
    }

    /// `id` against the selected disk; without one, `label` is what is seen (MSR: host/disk).
    pub(super) fn keep_disk_seen_as(&mut self, id: &str, label: &str) -> bool {
        match &self.disk {
            Some(d) => d == id,
            None => {
                if self.seen.len() < MAX_SEEN && !self.seen.iter().any(|s| s == label) {
                    self.seen.push(label.to_string());
                }
                true
            }
        }
    }

    pub(super) fn keep_host(&mut self, host: &str) -> bool {
        self.host.as_ref().is_none_or(|h| h == host)
    }

    /// A record read or written: kept (its offset checked or wrapped), or skipped by the
    /// selection.
    pub(super) fn admit(&mut self, at_ns: u64, mut req: Request) -> Result<Line, String> {
        if self.op.is_some_and(|op| op != req.op) {
            return Ok(Line::Skipped(if req.op == Op::Read { "reads (writes only)" } else { "writes (reads only)" }));
        }
        let origin = *self.origin_ns.get_or_insert(at_ns);
        let t = at_ns.saturating_sub(origin);
        if t < self.from_ns || self.to_ns.is_some_and(|to| t >= to) {
            return Ok(Line::Skipped("outside from/to"));
        }
        let size = u64::from(req.size_bytes);
        if req.offset_bytes.saturating_add(size) > self.device_bytes {
            if !self.offset_wrap || size > self.device_bytes {
                return Err(format!(
                    "offset {} + {size} bytes ends beyond the volume's {} bytes (device_size): set device_size to the traced disk's size or leave it unset (the volume then covers the trace), or offset_wrap = true",
                    req.offset_bytes, self.device_bytes
                ));
            }
            // Wrapped onto the volume, kept within it and sector-aligned.
            req.offset_bytes = (req.offset_bytes % self.device_bytes).min(self.device_bytes - size) / SECTOR_BYTES * SECTOR_BYTES;
        }
        Ok(Line::Io { at_ns, req })
    }
}

/// What one line holds.
#[derive(Debug, PartialEq)]
pub(super) enum Line {
    /// A read or write at a trace time.
    Io { at_ns: u64, req: Request },
    /// A record sanlab does not replay (sync, trim, flush, discard, fio v3 wait), by name.
    Skipped(&'static str),
    /// Headers, file actions, other blkparse events, summaries, blank lines.
    Other,
}

pub(super) fn num<T: std::str::FromStr>(field: &str, what: &str) -> Result<T, String> {
    field.trim().parse().map_err(|_| format!("{what} `{field}` is not a whole number in range"))
}

/// `field` (a whole number) times `unit`, if the product fits.
pub(super) fn num_times(field: &str, what: &str, unit: u64) -> Result<u64, String> {
    num::<u64>(field, what)?.checked_mul(unit).ok_or_else(|| format!("{what} `{}` is out of range", field.trim()))
}

/// Seconds with up to 9 decimals (`33.779662409`), in ns.
pub(super) fn seconds_ns(field: &str, what: &str) -> Result<u64, String> {
    let field = field.trim();
    let (sec, frac) = field.split_once('.').unwrap_or((field, "0"));
    if frac.len() > 9 || frac.is_empty() {
        return Err(format!("{what} `{field}`: expected seconds with at most 9 decimals"));
    }
    num_times(sec, what, 1_000_000_000)?.checked_add(num_times(frac, what, 10u64.pow(9 - frac.len() as u32))?).ok_or_else(|| format!("{what} `{field}` is out of range"))
}

/// What blkparse's RWBS flags (and libbpf-tools biosnoop's T column, the same string) say a
/// request is: the first of R, W, D (discard), F (flush: before R or W, a preflush), B (barrier,
/// older kernels) or N (no data: plugs, unplugs). Not a read or write: skipped, by name.
pub(super) fn rwbs_op(flags: &str) -> Result<Op, &'static str> {
    match flags.chars().find(|c| matches!(c, 'R' | 'W' | 'D' | 'F' | 'B' | 'N')) {
        Some('R') => Ok(Op::Read),
        Some('W') => Ok(Op::Write),
        Some('D') => Err("discard"),
        Some('B') => Err("barrier"),
        Some('N') => Err("no data"),
        _ => Err("flush"),
    }
}

pub(super) fn request(op: Op, offset_bytes: u64, size: u64) -> Result<Request, String> {
    let size_bytes = u32::try_from(size).ok().filter(|s| *s > 0).ok_or_else(|| format!("request size {size} bytes is out of range: expected 1..=4 GiB"))?;
    if offset_bytes > SIZE.max() {
        return Err(format!("offset {offset_bytes} bytes is beyond the largest size sanlab accepts, {}", SIZE.max_text()));
    }
    Ok(Request { op, size_bytes, offset_bytes })
}
