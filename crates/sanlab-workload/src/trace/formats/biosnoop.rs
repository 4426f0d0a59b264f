//! bcc `biosnoop` output: a header line naming the columns (`TIME(s) COMM PID DISK T SECTOR
//! BYTES [QUE(ms)] LAT(ms)`), then one completed request per line, whitespace-separated. TIME is
//! seconds since tracing began; T is R or W (bcc's Python tool) or the request's RWBS flags
//! (libbpf-tools: `WS`, `RA`, `FWS`, read as blkparse's); SECTOR in 512-byte sectors. `disk`
//! picks a DISK (e.g. sda) when several are traced.
//!
//! Rows that carry no read or write are skipped and counted (biosnoop.py, bcc issue 3901):
//! a request without a disk (`rq_disk` NULL: SCSI commands without data, flushes) prints an
//! empty DISK, so its row has one field fewer; a flush prints the kernel's "no sector",
//! 18446744073709551615 (u64 -1), and 0 BYTES; a request whose issuer was not seen prints `?`,
//! PID 0, SECTOR 0 and no DISK.

use crate::trace::record::{num, num_times, request, rwbs_op, seconds_ns, Line, Select, SECTOR_BYTES};

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
    let c = Columns { count: names.len(), time: at("TIME(s)")?, disk: at("DISK")?, kind: at("T")?, sector: at("SECTOR")?, bytes: at("BYTES")? };
    if c.time > c.disk || c.kind < c.disk || c.sector < c.disk || c.bytes < c.disk {
        return Err("biosnoop header with TIME(s) after DISK, or T, SECTOR or BYTES before it: expected TIME(s) COMM PID DISK T SECTOR BYTES ... LAT(ms)".into());
    }
    Ok(c)
}

pub(crate) fn parse(text: &str, columns: &Option<Columns>, select: &mut Select) -> Result<Line, String> {
    if is_header(text) {
        return Ok(Line::Other);
    }
    let Some(c) = columns else {
        return Err("expected biosnoop's header line first (TIME(s) COMM PID DISK T SECTOR BYTES ... LAT(ms))".into());
    };
    let f: Vec<&str> = text.split_whitespace().collect();
    // Columns before DISK are counted from the left, DISK and those after it from the right: a
    // COMM with blanks adds fields on the left, an empty DISK takes one away.
    if f.len() + 1 < c.count {
        return Err(format!("expected {} whitespace-separated fields as the header names, found {}", c.count, f.len()));
    }
    let right = |column: usize| f[f.len() - (c.count - column)];
    // A disk name is never a number: the PID in DISK's place says DISK is empty.
    let disk = Some(right(c.disk)).filter(|d| d.parse::<u64>().is_err());
    if f.len() + 1 == c.count && disk.is_some() {
        return Err(format!("expected {} whitespace-separated fields as the header names (one fewer when DISK is empty), found {} with DISK `{}`", c.count, f.len(), right(c.disk)));
    }
    let sector = num::<u64>(right(c.sector), "SECTOR")?;
    let bytes = num::<u64>(right(c.bytes), "BYTES")?;
    if sector == u64::MAX {
        return Ok(Line::Skipped("no sector (flush)"));
    }
    if bytes == 0 {
        return Ok(Line::Skipped("no data"));
    }
    let Some(disk) = disk else {
        return Ok(Line::Skipped("no disk"));
    };
    if !select.keep_disk(disk)? {
        return Ok(Line::Skipped("other disks"));
    }
    let op = match rwbs_op(right(c.kind)) {
        Ok(op) => op,
        Err(what) => return Ok(Line::Skipped(what)),
    };
    Ok(Line::Io { at_ns: seconds_ns(f[c.time], "TIME(s)")?, req: request(op, num_times(right(c.sector), "SECTOR", SECTOR_BYTES)?, bytes)? })
}
