//! blkparse's default text output (`%D %2c %8s %5T.%9t %5p %2a %3d `): `maj,min cpu seq sec.nsec
//! pid action RWBS sector + nsectors [process]`. Only lines that start with a device number are
//! events; the per-CPU summary at the end is not. `disk` picks a device (`maj,min`); `action` the
//! event replayed (Q by default, as fio's blktrace replay).

use crate::trace::record::{num, num_times, request, rwbs_op, Line, Select, SECTOR_BYTES};

/// blkparse's action letters (fmt.c VALID_SPECS): Q queued (what fio's blktrace replay uses),
/// G get request, I inserted, D issued to the driver, C completed, M and F merges, and the rest.
pub(crate) const ACTIONS: [&str; 16] = ["Q", "A", "B", "C", "D", "F", "G", "I", "M", "P", "R", "S", "T", "U", "W", "X"];

/// One line, trimmed and not empty; events of the action letter `wanted` are replayed.
pub(crate) fn parse(text: &str, wanted: char, select: &mut Select) -> Result<Line, String> {
    let f: Vec<&str> = text.split_whitespace().collect();
    let is_device = f.first().and_then(|d| d.split_once(',')).is_some_and(|(a, b)| a.parse::<u32>().is_ok() && b.parse::<u32>().is_ok());
    if !is_device {
        return Ok(Line::Other);
    }
    if f.len() < 7 {
        return Err(format!("expected `maj,min cpu seq sec.nsec pid action RWBS ...`, found {} fields", f.len()));
    }
    if f[5] != wanted.to_string() {
        return Ok(Line::Other);
    }
    if !select.keep_disk(f[0])? {
        return Ok(Line::Skipped("other devices"));
    }
    let (sec, frac) = f[3].split_once('.').unwrap_or((f[3], "0"));
    if frac.len() > 9 {
        return Err(format!("time `{}`: expected seconds.nanoseconds", f[3]));
    }
    let at_ns = num_times(sec, "time", 1_000_000_000)?.checked_add(num_times(frac, "time", 10u64.pow(9 - frac.len() as u32))?).ok_or_else(|| format!("time `{}` is out of range", f[3]))?;
    // Records without data are skipped and counted: flushes, barriers and no-data events.
    let op = match rwbs_op(f[6]) {
        Ok(op) => op,
        Err(what) => return Ok(Line::Skipped(what)),
    };
    let (sector, sectors) = match f[7..] {
        [sector, "+", sectors, ..] => (sector, sectors),
        // A completion of no bytes is printed `sector [error]` (a write barrier's data part).
        [sector, ..] if sector.parse::<u64>().is_ok() => return Ok(Line::Skipped("no data")),
        _ => return Err(format!("expected `sector + nsectors` after RWBS `{}`", f[6])),
    };
    let offset_bytes = num_times(sector, "sector", SECTOR_BYTES)?;
    if num::<u64>(sectors, "nsectors")? == 0 {
        return Ok(Line::Skipped("empty"));
    }
    Ok(Line::Io { at_ns, req: request(op, offset_bytes, num_times(sectors, "nsectors", SECTOR_BYTES)?)? })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::face::{Op, Request};

    /// Each line of `text` parsed (trimmed, as the trace's reader hands them), the selection
    /// taking every record.
    fn lines(text: &str) -> Result<Vec<Line>, String> {
        let mut select = Select { device_bytes: u64::MAX, ..Select::default() };
        text.lines().map(|l| parse(l.trim(), 'Q', &mut select)).collect()
    }

    #[test]
    fn blkparse_events() {
        let b = lines("  8,64  11  2949  33.779662409 90790  Q  WS 7614344 + 24 [fio]\n  8,64 11 2950 33.779662500 90790 D W 7614344 + 24 [fio]\nCPU11 (8,64):\n 8,0 0 3 0.5 1 Q FWS [kworker]\n").unwrap();
        assert_eq!(b[0], Line::Io { at_ns: 33_779_662_409, req: Request { op: Op::Write, size_bytes: 12288, offset_bytes: 7_614_344 * 512 } });
        assert_eq!(b[1], Line::Other, "only Q events are replayed by default");
        assert_eq!(b[2], Line::Other, "summary lines are not events");
        assert_eq!(b[3], Line::Skipped("flush"));
    }
}
