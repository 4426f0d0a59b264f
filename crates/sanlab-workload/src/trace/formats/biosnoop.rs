//! bcc `biosnoop` output: a header line naming the columns (`TIME(s) COMM PID DISK T SECTOR
//! BYTES [QUE(ms)] LAT(ms)`), then one completed request per line, whitespace-separated. TIME is
//! seconds since tracing began; T is R or W (other flags: skipped); SECTOR in 512-byte sectors.
//! `disk` picks a DISK (e.g. sda) when several are traced.

use crate::trace::record::{num, num_times, request, seconds_ns, Line, Select, SECTOR_BYTES};
use crate::face::Op;

/// Column positions, from the header.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Columns {
    count: usize,
    time: usize,
    disk: usize,
    kind: usize,
    sector: usize,
    bytes: usize,
}

pub(crate) fn is_header(text: &str) -> bool {
    text.starts_with("TIME(s)")
}

pub(crate) fn header(text: &str) -> Result<Columns, String> {
    let names: Vec<&str> = text.split_whitespace().collect();
    let at = |n: &str| names.iter().position(|x| *x == n).ok_or_else(|| format!("biosnoop header without a `{n}` column: expected TIME(s) COMM PID DISK T SECTOR BYTES ... LAT(ms)"));
    Ok(Columns { count: names.len(), time: at("TIME(s)")?, disk: at("DISK")?, kind: at("T")?, sector: at("SECTOR")?, bytes: at("BYTES")? })
}

pub(crate) fn parse(text: &str, columns: &Option<Columns>, select: &mut Select) -> Result<Line, String> {
    if is_header(text) {
        return Ok(Line::Other);
    }
    let Some(c) = columns else {
        return Err("expected biosnoop's header line first (TIME(s) COMM PID DISK T SECTOR BYTES ... LAT(ms))".into());
    };
    let f: Vec<&str> = text.split_whitespace().collect();
    if f.len() != c.count {
        return Err(format!("expected {} whitespace-separated fields as the header names, found {} (a COMM with blanks?)", c.count, f.len()));
    }
    if !select.keep_disk(f[c.disk])? {
        return Ok(Line::Skipped("other disks"));
    }
    let op = match f[c.kind] {
        "R" => Op::Read,
        "W" => Op::Write,
        _ => return Ok(Line::Skipped("neither read nor write")),
    };
    Ok(Line::Io { at_ns: seconds_ns(f[c.time], "TIME(s)")?, req: request(op, num_times(f[c.sector], "SECTOR", SECTOR_BYTES)?, num(f[c.bytes], "BYTES")?)? })
}
