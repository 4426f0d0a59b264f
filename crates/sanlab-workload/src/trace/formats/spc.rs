//! SPC trace format (UMass Trace Repository: Financial1/2, WebSearch1-3): one record per line,
//! `ASU,LBA,Size,Opcode,Timestamp[,...]`; LBA in 512-byte sectors, Size in bytes, Opcode r or w
//! (either case), Timestamp in seconds since the trace began. ASU is the application storage
//! unit, selected with `disk`.

use crate::trace::record::{num, num_times, request, seconds_ns, Line, Select, SECTOR_BYTES};
use crate::face::Op;

pub(crate) fn parse(text: &str, select: &mut Select) -> Result<Line, String> {
    let f: Vec<&str> = text.split(',').map(str::trim).collect();
    if f.len() < 5 {
        return Err(format!("expected at least 5 comma-separated fields (ASU,LBA,Size,Opcode,Timestamp), found {}", f.len()));
    }
    if !select.keep_disk(f[0])? {
        return Ok(Line::Skipped("other ASUs"));
    }
    let op = match f[3] {
        "r" | "R" => Op::Read,
        "w" | "W" => Op::Write,
        other => return Err(format!("Opcode `{other}`: expected r or w")),
    };
    let at_ns = seconds_ns(f[4], "Timestamp")?;
    Ok(Line::Io { at_ns, req: request(op, num_times(f[1], "LBA", SECTOR_BYTES)?, num(f[2], "Size")?)? })
}
