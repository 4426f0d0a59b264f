//! Tencent Cloud Block Storage traces (SNIA IOTTA, 2018): one record per line,
//! `Timestamp,Offset,Size,IOType,VolumeID`; Timestamp in seconds (Unix time), Offset and Size in
//! 512-byte sectors, IOType 0 read and 1 write. A file holds many volumes: `disk` picks one.

use crate::trace::record::{num_times, request, Line, Select, SECTOR_BYTES};
use crate::face::Op;

pub(crate) fn parse(text: &str, select: &mut Select) -> Result<Line, String> {
    let f: Vec<&str> = text.split(',').map(str::trim).collect();
    if f.len() != 5 {
        return Err(format!("expected 5 comma-separated fields (Timestamp,Offset,Size,IOType,VolumeID), found {}", f.len()));
    }
    if !select.keep_disk(f[4])? {
        return Ok(Line::Skipped("other volumes"));
    }
    let op = match f[3] {
        "0" => Op::Read,
        "1" => Op::Write,
        other => return Err(format!("IOType `{other}`: expected 0 (read) or 1 (write)")),
    };
    Ok(Line::Io { at_ns: num_times(f[0], "Timestamp", 1_000_000_000)?, req: request(op, num_times(f[1], "Offset", SECTOR_BYTES)?, num_times(f[2], "Size", SECTOR_BYTES)?)? })
}
