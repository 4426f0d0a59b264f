//! fio iolog (HOWTO "Trace file format v2/v3", iolog.c `read_iolog`): a header line naming the
//! version, then v2 lines `file action [offset length]`, with `wait` (µs, relative) for timing, or
//! v3 lines that start with a timestamp in µs since the run began. Reads and writes of several
//! files are several disks: `disk` picks one file, `volumes` maps each onto its volume.

use crate::face::Op;
use crate::trace::record::{num, num_times, request, Line, Select};

/// fio iolog v2: "Everything below 100 is discarded" for `wait` (HOWTO, trace file format v2).
const MIN_WAIT_US: u64 = 100;

/// Where a log's reading stands: its version, once its header is read, and v2's accumulated
/// waits.
#[derive(Clone, Debug, Default)]
pub(crate) struct Iolog {
    version: Option<u8>,
    wait_ns: u64,
}

impl Iolog {
    /// One line of the log, trimmed and not empty.
    pub(crate) fn parse(&mut self, text: &str, select: &mut Select) -> Result<Line, String> {
        let Some(version) = self.version else {
            self.version = match text {
                "fio version 2 iolog" => Some(2),
                "fio version 3 iolog" => Some(3),
                _ => return Err(format!("expected the header `fio version 2 iolog` or `fio version 3 iolog`, found `{text}` (fio dropped v1 logs in 1.20)")),
            };
            return Ok(Line::Other);
        };
        let fields: Vec<&str> = text.split_whitespace().collect();
        let (at_ns, rest) = if version == 3 {
            let (ts, rest) = fields.split_first().expect("non-empty line");
            (num_times(ts, "timestamp", 1_000)?, rest)
        } else {
            (self.wait_ns, &fields[..])
        };
        match rest {
            [_file, "add" | "open" | "close"] => Ok(Line::Other),
            [file, action, offset, length] => {
                let (offset, length): (u64, u64) = (num(offset, "offset")?, num(length, "length")?);
                // A log of several files is several disks, as the other formats': `disk` picks
                // one, `volumes` maps each onto its volume, and without either it is refused.
                if matches!(*action, "read" | "write") && !select.keep_disk(file)? {
                    return Ok(Line::Skipped("other files"));
                }
                match *action {
                    "read" => Ok(Line::Io { at_ns, req: request(Op::Read, offset, length)? }),
                    "write" => Ok(Line::Io { at_ns, req: request(Op::Write, offset, length)? }),
                    "wait" if version == 2 => {
                        if offset >= MIN_WAIT_US {
                            self.wait_ns = offset.checked_mul(1_000).and_then(|w| w.checked_add(self.wait_ns)).ok_or_else(|| format!("wait `{offset}` takes the log's time out of range"))?;
                        }
                        Ok(Line::Other)
                    }
                    // fio ignores `wait` in v3 logs: timestamps do its job.
                    "wait" => Ok(Line::Skipped("wait")),
                    "sync" => Ok(Line::Skipped("sync")),
                    "datasync" => Ok(Line::Skipped("datasync")),
                    "trim" => Ok(Line::Skipped("trim")),
                    other => Err(format!("unknown action `{other}`: expected read, write, wait, sync, datasync or trim")),
                }
            }
            _ => {
                let ts = if version == 3 { "timestamp " } else { "" };
                Err(format!("expected `{ts}filename action offset length` or `{ts}filename add|open|close`, found {} fields", fields.len()))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::face::Request;

    /// Each line of `text` parsed (trimmed, as the trace's reader hands them), the selection
    /// taking every record.
    fn lines(text: &str) -> Result<Vec<Line>, String> {
        let (mut log, mut select) = (Iolog::default(), Select { device_bytes: u64::MAX, ..Select::default() });
        text.lines().map(|l| log.parse(l.trim(), &mut select)).collect()
    }

    #[test]
    fn iolog_v2_accumulates_waits_and_v3_reads_timestamps() {
        let v2 = lines("fio version 2 iolog\n/dev/sdb add\n/dev/sdb open\n/dev/sdb read 4096 8192\n/dev/sdb wait 50 0\n/dev/sdb wait 2000 0\n/dev/sdb write 0 4096\n/dev/sdb trim 0 4096\n").unwrap();
        assert_eq!(v2[3], Line::Io { at_ns: 0, req: Request { op: Op::Read, size_bytes: 8192, offset_bytes: 4096 } });
        assert_eq!(v2[6], Line::Io { at_ns: 2_000_000, req: Request { op: Op::Write, size_bytes: 4096, offset_bytes: 0 } }, "waits below 100 us are discarded");
        assert_eq!(v2[7], Line::Skipped("trim"));
        let v3 = lines("fio version 3 iolog\n150 /dev/sdb read 0 4096\n").unwrap();
        assert_eq!(v3[1], Line::Io { at_ns: 150_000, req: Request { op: Op::Read, size_bytes: 4096, offset_bytes: 0 } });
        assert!(lines("fio version 1 iolog\n").unwrap_err().contains("expected the header"));
        assert!(lines("fio version 2 iolog\n/dev/sdb rite 0 4096\n").unwrap_err().contains("unknown action `rite`"));
    }
}
