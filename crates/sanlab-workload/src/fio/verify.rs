//! fio's `verify` as I/O: the reads it adds to a writing job (`verify`, `do_verify`,
//! `verify_backlog`, `verify_backlog_batch`; backend.c `do_verify`, io_u.c `get_next_verify`).

use super::values::{err, OptionError, Reader};

/// The reads that fio's `verify` adds to a writing job (backend.c `do_verify`, io_u.c
/// `get_next_verify`): every written block is read back, after every `verify_backlog` writes
/// (interleaved with the writes) and at the end of each loop once the writes are done (fio waits
/// for them first), unless the job is time_based (fio skips the phase when the runtime ends it).
#[derive(Clone, Debug)]
pub(super) struct Verify {
    /// Read back after this many logged writes, `batch` at a time.
    backlog: Option<(u64, u64)>,
    /// Bytes per loop when each loop ends with a verify phase.
    loop_bytes: Option<u64>,
    /// `issued_bytes` at which the current loop's writes are all issued.
    boundary_bytes: u64,
    /// Written blocks not read back yet: offset within the region, size.
    log: std::collections::VecDeque<(u64, u32)>,
    /// Logged writes since the last backlog batch, and reads of the batch left.
    since_batch: u64,
    batch_left: u64,
    /// The loop's verify phase is reading the log back.
    draining: bool,
    /// Sequential jobs read back by offset (fio's rb-tree); random ones in written order.
    by_offset: bool,
}

impl Verify {
    /// fio `verify` (any method but 0) with do_verify (default 1), verify_backlog[_batch], on a
    /// job of `mode` reading `read_pct` % that does `io_bytes` per loop.
    pub(super) fn from_options(r: &Reader, mode: &str, read_pct: f64, random: bool, time_based: bool, io_bytes: u64) -> Result<Option<Verify>, OptionError> {
        let verify = match r.v.get("verify").map(str::trim) {
            None | Some("0") => None,
            Some(_) if read_pct >= 100.0 => {
                return Err(err("verify", format!("a read-only job (rw={mode}) checks data that an earlier run wrote, which sanlab does not model; sanlab models the reads that verify adds to a writing job: drop verify, or make the job write (rw=write, randwrite, rw or randrw)")));
            }
            Some(_) => {
                let backlog = r.int_of("verify_backlog", 0, 0, i64::MAX)? as u64;
                let batch = r.int_of("verify_backlog_batch", backlog as i64, 0, i64::MAX)? as u64;
                let at_end = r.bool_of("do_verify", true)? && !time_based;
                let loop_bytes = at_end.then_some(io_bytes);
                Some(Verify { backlog: (backlog > 0).then_some((backlog, if batch == 0 { backlog } else { batch })), loop_bytes, boundary_bytes: io_bytes, log: Default::default(), since_batch: 0, batch_left: 0, draining: false, by_offset: !random })
            }
        };
        Ok(verify)
    }

    /// The next read-back, if the job is verifying now.
    pub(super) fn next_read(&mut self) -> Option<(u64, u32)> {
        if self.batch_left > 0 || self.draining {
            self.batch_left = self.batch_left.saturating_sub(1);
            if let Some(r) = self.log.pop_front() {
                return Some(r);
            }
            self.batch_left = 0;
            self.draining = false;
        }
        None
    }

    /// At the end of a loop's writes: start reading the log back. Returns whether it started.
    pub(super) fn start_phase(&mut self, issued_bytes: u64) -> bool {
        let Some(lb) = self.loop_bytes.filter(|_| !self.draining && issued_bytes >= self.boundary_bytes) else {
            return false;
        };
        self.boundary_bytes += lb;
        if self.by_offset {
            self.log.make_contiguous().sort_unstable();
        }
        self.draining = !self.log.is_empty();
        self.draining
    }

    pub(super) fn logged(&mut self, offset: u64, size: u32) {
        self.log.push_back((offset, size));
        if let Some((every, batch)) = self.backlog {
            self.since_batch += 1;
            if self.since_batch >= every {
                self.since_batch = 0;
                self.batch_left = batch;
            }
        }
    }
}
