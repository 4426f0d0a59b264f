//! MSR Cambridge CSV (SNIA IOTTA README): `Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime`,
//! Timestamp in FILETIME ticks, Offset and Size in bytes, an optional header line. `host` and
//! `disk` pick a Hostname and DiskNumber; a file of several hosts maps `Hostname/DiskNumber`.

use crate::face::Op;
use crate::trace::record::{num, num_times, request, Line, Select};

/// MSR timestamps are Windows FILETIME: 100 ns ticks.
const FILETIME_TICK_NS: u64 = 100;

/// Line `number` of the file, trimmed and not empty.
pub(crate) fn parse(number: usize, text: &str, select: &mut Select) -> Result<Line, String> {
    let f: Vec<&str> = text.split(',').collect();
    if number == 1 && f.first().is_some_and(|t| t.trim().eq_ignore_ascii_case("timestamp")) {
        return Ok(Line::Other);
    }
    if f.len() != 7 {
        return Err(format!("expected 7 comma-separated fields (Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime), found {}", f.len()));
    }
    let (host, disk) = (f[1].trim(), f[2].trim());
    select.check_mapped(disk, &format!("{host}/{disk}"))?;
    if !select.mapped.is_empty() && select.host.is_none() && *select.mapped_host.get_or_insert_with(|| host.to_string()) != host {
        return Err(format!("Hostname `{host}` after `{}`: a file of several hosts maps Hostname/DiskNumber, e.g. volumes = {{ \"{host}/{disk}\" = \"<volume>\" }}", select.mapped_host.as_deref().unwrap_or_default()));
    }
    if !select.keep_host(host) {
        return Ok(Line::Skipped("other hosts"));
    }
    // Hosts and disks together: web,0 and src1,0 are different volumes.
    let label = if select.host.is_some() { f[2].trim().to_string() } else { format!("{}/{}", f[1].trim(), f[2].trim()) };
    if !select.keep_disk_seen_as(f[2].trim(), &label) {
        return Ok(Line::Skipped("other disks"));
    }
    let at_ns = num_times(f[0], "Timestamp", FILETIME_TICK_NS)?;
    let op = match f[3].trim().to_ascii_lowercase().as_str() {
        "read" => Op::Read,
        "write" => Op::Write,
        other => return Err(format!("Type `{other}`: expected Read or Write")),
    };
    Ok(Line::Io { at_ns, req: request(op, num(f[4], "Offset")?, num(f[5], "Size")?)? })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::face::Request;

    /// Each line of `text` parsed (trimmed, as the trace's reader hands them), the selection
    /// taking every record.
    fn lines(text: &str) -> Result<Vec<Line>, String> {
        let mut select = Select { device_bytes: u64::MAX, ..Select::default() };
        text.lines().enumerate().map(|(i, l)| parse(i + 1, l.trim(), &mut select)).collect()
    }

    #[test]
    fn msr_records() {
        let m = lines("128166372003061629,web,0,Read,7014609920,24576,41286\n").unwrap();
        assert_eq!(m[0], Line::Io { at_ns: 12_816_637_200_306_162_900, req: Request { op: Op::Read, size_bytes: 24576, offset_bytes: 7_014_609_920 } });
        assert!(lines("1,web,0,Erase,0,512,1\n").unwrap_err().contains("Type `erase`"));
    }
}
