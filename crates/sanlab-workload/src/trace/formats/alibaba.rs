//! Alibaba Cloud block traces (alibaba/block-traces, io_traces.csv): one record per line,
//! `device_id,opcode,offset,length,timestamp`; opcode R or W, offset and length in bytes,
//! timestamp in microseconds (Unix time). A file holds many virtual disks: `disk` picks one.

use crate::trace::record::{num, num_times, request, Line, Select};
use crate::face::Op;

pub(crate) fn parse(text: &str, select: &mut Select) -> Result<Line, String> {
    let f: Vec<&str> = text.split(',').map(str::trim).collect();
    if f.len() != 5 {
        return Err(format!("expected 5 comma-separated fields (device_id,opcode,offset,length,timestamp), found {}", f.len()));
    }
    if !select.keep_disk(f[0])? {
        return Ok(Line::Skipped("other disks"));
    }
    let op = match f[1] {
        "R" => Op::Read,
        "W" => Op::Write,
        other => return Err(format!("opcode `{other}`: expected R or W")),
    };
    Ok(Line::Io { at_ns: num_times(f[4], "timestamp", 1_000)?, req: request(op, num(f[2], "offset")?, num(f[3], "length")?)? })
}
