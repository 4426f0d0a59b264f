//! blktrace's binary files as it writes them, one per CPU (`sdb.blktrace.0`, `sdb.blktrace.1`,
//! ...): naming any of them reads them all, merged by time. Each record is `struct
//! blk_io_trace` (blktrace_api.h): magic, sequence (u32), time in ns (u64), sector (u64), bytes,
//! action, pid, device, cpu (u32), error, pdu_len (u16), 48 bytes in the writer's byte order
//! (the magic says which), then `pdu_len` bytes of payload.

use crate::trace::record::{request, Line, Select, SECTOR_BYTES};
use crate::face::Op;
use std::io::Read;
use std::path::{Path, PathBuf};

const RECORD_BYTES: usize = 48;
const MAGIC: u32 = 0x6561_7400;
const VERSION: u32 = 0x07;
/// Category bits above the action code (BLK_TC_SHIFT).
const TC_SHIFT: u32 = 16;
const TC_WRITE: u32 = 1 << 1;
const TC_FLUSH: u32 = 1 << 2;
const TC_NOTIFY: u32 = 1 << 10;
const TC_DISCARD: u32 = 1 << 13;

/// The action code of each of blkparse's letters (enum blktrace_act).
pub(crate) fn action_code(letter: char) -> Option<u32> {
    Some(match letter {
        'Q' => 1,
        'M' => 2,
        'F' => 3,
        'G' => 4,
        'S' => 5,
        'R' => 6,
        'D' => 7,
        'C' => 8,
        'P' => 9,
        'U' => 10,
        'T' => 11,
        'I' => 12,
        'X' => 13,
        'B' => 14,
        'A' => 15,
        _ => return None,
    })
}

/// The per-CPU files of the trace `path` names: `<stem>.blktrace.<cpu>` beside it.
fn cpu_files(path: &Path) -> std::io::Result<Vec<PathBuf>> {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
    let Some((stem, cpu)) = name.rsplit_once(".blktrace.").filter(|(_, c)| c.parse::<u32>().is_ok()) else {
        return Err(std::io::Error::new(std::io::ErrorKind::InvalidInput, "a binary blktrace file is named <device>.blktrace.<cpu>, e.g. sdb.blktrace.0"));
    };
    let _ = cpu;
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let mut files: Vec<(u32, PathBuf)> = std::fs::read_dir(dir)?
        .filter_map(Result::ok)
        .filter_map(|e| {
            let n = e.file_name().to_str()?.to_string();
            let cpu = n.strip_prefix(stem)?.strip_prefix(".blktrace.")?.parse::<u32>().ok()?;
            Some((cpu, e.path()))
        })
        .collect();
    files.sort();
    Ok(files.into_iter().map(|f| f.1).collect())
}

/// One CPU's file: its next record, read ahead.
struct Cpu {
    input: Box<dyn Read>,
    head: Option<Record>,
    path: PathBuf,
    /// Bytes read of the file.
    offset: u64,
}

/// A file that ends inside a record (a copy cut short): the partial record is not replayed, and
/// the job's options say where it was cut.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Cut {
    pub(crate) path: PathBuf,
    /// Where the partial record starts.
    pub(crate) offset: u64,
    /// Its bytes in the file, and the bytes a whole record has.
    pub(crate) bytes: u64,
    pub(crate) record_bytes: u64,
}

/// Reads into `buf` until it is full or the input ends; the bytes read.
fn read_full(input: &mut dyn Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match input.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

#[derive(Clone, Copy, Debug)]
struct Record {
    time_ns: u64,
    sector: u64,
    bytes: u32,
    action: u32,
    device: u32,
}

/// The CPU files merged by time; records are numbered in the order they are replayed.
pub(crate) struct Merged {
    cpus: Vec<Cpu>,
    pub(crate) record: usize,
    /// The first file found to end inside a record.
    pub(crate) cut: Option<Cut>,
}

impl Merged {
    pub(crate) fn open(path: &Path, max_bytes: u64) -> std::io::Result<Merged> {
        let mut cpus = vec![];
        for f in cpu_files(path)? {
            let input: Box<dyn Read> = Box::new(std::io::BufReader::new(crate::input::open_input(&f, max_bytes)?));
            cpus.push(Cpu { input, head: None, path: f, offset: 0 });
        }
        Ok(Merged { cpus, record: 0, cut: None })
    }

    /// Reads `cpu`'s next record ahead; at a partial one, its file ends there (see [`Cut`]).
    fn fill(cpu: &mut Cpu, cut: &mut Option<Cut>) -> Result<(), String> {
        if cpu.head.is_some() {
            return Ok(());
        }
        let at = cpu.offset;
        let mut partial = |bytes: usize, record_bytes: usize| {
            cut.get_or_insert(Cut { path: cpu.path.clone(), offset: at, bytes: bytes as u64, record_bytes: record_bytes as u64 });
        };
        let mut b = [0u8; RECORD_BYTES];
        match read_full(&mut cpu.input, &mut b) {
            Ok(RECORD_BYTES) => {}
            Ok(0) => return Ok(()),
            Ok(n) => {
                partial(n, RECORD_BYTES);
                return Ok(());
            }
            Err(e) => return Err(format!("cannot read: {e}")),
        }
        let le = |i: usize| u32::from_le_bytes(b[i..i + 4].try_into().expect("4 bytes"));
        let little = le(0) & 0xffff_ff00 == MAGIC;
        let big = u32::from_be_bytes(b[0..4].try_into().expect("4 bytes")) & 0xffff_ff00 == MAGIC;
        if !little && !big {
            return Err(format!("not a blktrace record: magic {:#010x}, expected {MAGIC:#010x} (is this blkparse text? use format = \"blkparse\")", le(0)));
        }
        let u32_at = |i: usize| if little { le(i) } else { u32::from_be_bytes(b[i..i + 4].try_into().expect("4 bytes")) };
        let u64_at = |i: usize| if little { u64::from_le_bytes(b[i..i + 8].try_into().expect("8 bytes")) } else { u64::from_be_bytes(b[i..i + 8].try_into().expect("8 bytes")) };
        if u32_at(0) & 0xff != VERSION {
            return Err(format!("blktrace version {} : expected {VERSION}", u32_at(0) & 0xff));
        }
        let pdu_len = if little { u16::from_le_bytes([b[46], b[47]]) } else { u16::from_be_bytes([b[46], b[47]]) };
        let mut pdu = vec![0u8; usize::from(pdu_len)];
        let n = read_full(&mut cpu.input, &mut pdu).map_err(|e| format!("record payload of {pdu_len} bytes: cannot read: {e}"))?;
        if n < pdu.len() {
            partial(RECORD_BYTES + n, RECORD_BYTES + pdu.len());
            return Ok(());
        }
        cpu.offset += (RECORD_BYTES + pdu.len()) as u64;
        cpu.head = Some(Record { time_ns: u64_at(8), sector: u64_at(16), bytes: u32_at(24), action: u32_at(28), device: u32_at(36) });
        Ok(())
    }

    /// The next record of all CPUs (the earliest), as a trace line; None at the end.
    pub(crate) fn next(&mut self, wanted: u32, select: &mut Select) -> Option<Result<Line, String>> {
        for cpu in &mut self.cpus {
            if let Err(e) = Self::fill(cpu, &mut self.cut) {
                self.record += 1;
                return Some(Err(e));
            }
        }
        let cpu = self.cpus.iter_mut().filter(|c| c.head.is_some()).min_by_key(|c| c.head.map(|h| h.time_ns))?;
        let r = cpu.head.take().expect("filled");
        self.record += 1;
        Some(line(r, wanted, select))
    }
}

fn line(r: Record, wanted: u32, select: &mut Select) -> Result<Line, String> {
    let category = r.action >> TC_SHIFT;
    if category & TC_NOTIFY != 0 || r.action & 0xffff != wanted {
        return Ok(Line::Other);
    }
    // The kernel's MKDEV: major above 20 bits of minor.
    if !select.keep_disk(&format!("{},{}", r.device >> 20, r.device & 0xf_ffff))? {
        return Ok(Line::Skipped("other devices"));
    }
    let op = if category & TC_DISCARD != 0 {
        return Ok(Line::Skipped("discard"));
    } else if category & TC_WRITE != 0 && r.bytes > 0 {
        Op::Write
    } else if r.bytes > 0 {
        Op::Read
    } else if category & TC_FLUSH != 0 {
        return Ok(Line::Skipped("flush"));
    } else {
        return Ok(Line::Skipped("no data"));
    };
    let offset = r.sector.checked_mul(SECTOR_BYTES).ok_or_else(|| format!("sector {} is out of range", r.sector))?;
    Ok(Line::Io { at_ns: r.time_ns, req: request(op, offset, u64::from(r.bytes))? })
}
