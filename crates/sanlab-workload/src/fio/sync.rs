//! fio's `fsync`, `fdatasync` and `sync_file_range`: a sync every N writes (io_u.c
//! `get_rw_ddir`, `should_fsync`). The sync ends in the guest: the VM's virtual disk reports
//! write-through caching, so Linux completes an empty flush without sending it (block/blk-flush.c
//! `blk_insert_flush`) and nothing reaches the path. It takes no simulated time; fio counts it.

use super::values::{err, parse_int, OptionError, OptionValues};
use crate::plan::SyncSchedule;

/// fio's sync kinds, in the order it checks them.
const SYNC_KINDS: [&str; 3] = ["fsync", "fdatasync", "sync_file_range"];

/// The options' schedule, or None when the job never syncs.
pub(crate) fn schedule(v: &OptionValues) -> Result<Option<SyncSchedule>, OptionError> {
    let mut every_writes = [0; 3];
    for (k, name) in SYNC_KINDS.into_iter().enumerate().take(2) {
        if let Some(s) = v.get(name) {
            every_writes[k] = parse_int(name, s, 0, i64::from(u32::MAX))? as u64;
        }
    }
    if let Some(s) = v.get("sync_file_range") {
        every_writes[2] = sync_file_range_writes(s)?;
    }
    Ok(SyncSchedule::every(every_writes))
}

/// `sync_file_range=str[:int]`: flags from wait_before, write, wait_after joined by commas, then
/// the writes between calls, 1 without (HOWTO `sync_file_range`; options.c `str_sfr_cb`).
fn sync_file_range_writes(s: &str) -> Result<u64, OptionError> {
    const FLAGS: [&str; 3] = ["wait_before", "write", "wait_after"];
    let (flags, count) = s.split_once(':').map_or((s, None), |(f, c)| (f, Some(c)));
    for flag in flags.split(',').map(str::trim) {
        if flag.is_empty() {
            return Err(err("sync_file_range", format!("`{s}` has no flag before the count: expected wait_before, write or wait_after, e.g. \"write:8\"")));
        }
        if !FLAGS.contains(&flag) {
            return Err(err("sync_file_range", format!("unknown flag `{flag}`: expected wait_before, write or wait_after{}", sanlab_spec::did_you_mean(flag, FLAGS))));
        }
    }
    count.map_or(Ok(1), |c| parse_int("sync_file_range", c, 0, i64::from(u32::MAX)).map(|n| n as u64))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schedule(opts: &[(&'static str, &str)]) -> Result<Option<SyncSchedule>, OptionError> {
        super::schedule(&OptionValues::of(opts))
    }

    /// Syncs of a job issuing `writes` writes at depth 1 (each completes before the next).
    fn syncs_at_depth_one(s: &mut SyncSchedule, writes: u64) -> [u64; 3] {
        let mut counts = [0; 3];
        for _ in 0..writes {
            if let Some(k) = s.due(true) {
                counts[k] += 1;
            }
            s.issued(true);
            s.completed();
        }
        counts
    }

    #[test]
    fn a_sync_every_n_writes_but_not_after_the_last() {
        // Debian's fio 3.33: 256 writes with fsync=4 give 63 syncs (none after the final write).
        let mut s = schedule(&[("fsync", "4")]).unwrap().unwrap();
        assert_eq!(syncs_at_depth_one(&mut s, 256), [63, 0, 0]);
        // fsync is checked before fdatasync: at 12 writes fsync=4 and fdatasync=6 give one fsync.
        let mut s = schedule(&[("fsync", "4"), ("fdatasync", "6")]).unwrap().unwrap();
        assert_eq!(syncs_at_depth_one(&mut s, 13), [3, 1, 0]);
        let mut s = schedule(&[("sync_file_range", "wait_before,write:4")]).unwrap().unwrap();
        assert_eq!(syncs_at_depth_one(&mut s, 256), [0, 0, 63]);
        assert_eq!(schedule(&[("fsync", "0")]).unwrap(), None);
    }

    #[test]
    fn in_flight_writes_allow_one_sync_per_completion() {
        // fsync=1 at depth 8 (Debian's fio 3.33 with libaio: 249 syncs for 256 writes): after the
        // first write a sync, then none until a completion; from then one before each write.
        let mut s = schedule(&[("fsync", "1")]).unwrap().unwrap();
        let mut syncs = 0;
        for k in 0..256 {
            if k >= 8 {
                s.completed();
            }
            syncs += u64::from(s.due(true).is_some());
            s.issued(true);
        }
        assert_eq!(syncs, 249);
        // A ramp: the count of writes starts over at the measured start.
        let mut s = schedule(&[("fsync", "4")]).unwrap().unwrap();
        let ramp: Vec<bool> = (0..10).map(|_| {
            let due = s.due(false).is_some();
            s.issued(true);
            s.completed();
            due
        }).collect();
        assert_eq!(ramp.iter().filter(|&&d| d).count(), 2);
        assert_eq!(syncs_at_depth_one(&mut s, 1000), [249, 0, 0]);
    }

    #[test]
    fn sync_file_range_errors_name_what_was_expected() {
        let e = schedule(&[("sync_file_range", "write,wait_aftr:8")]).unwrap_err();
        assert!(e.message.contains("unknown flag `wait_aftr`") && e.message.contains("wait_after"), "{}", e.message);
        let e = schedule(&[("sync_file_range", ":8")]).unwrap_err();
        assert!(e.message.contains("no flag before the count"), "{}", e.message);
        let e = schedule(&[("sync_file_range", "write:-1")]).unwrap_err();
        assert!(e.message.contains("expected 0..=4294967295 (nearest valid: 0)"), "{}", e.message);
        // Without a count fio syncs after every write (Debian's fio 3.33: 15 for 16 writes).
        let mut s = schedule(&[("sync_file_range", "write")]).unwrap().unwrap();
        assert_eq!(syncs_at_depth_one(&mut s, 16), [0, 0, 15]);
        assert!(schedule(&[("fsync", "-1")]).is_err());
    }
}
