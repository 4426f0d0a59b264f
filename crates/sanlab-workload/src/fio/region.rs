//! A fio job's region: its size and stop conditions, the files or zones it is cut into, and how
//! each direction's offsets are drawn (`random_distribution`, `blockalign`, `random_generator`,
//! the random map), read from the options; `FioJob` (job.rs) draws from them.

use super::block_sizes::BlockSizes;
use super::lfsr;
use super::random_map::RandomMaps;
use super::values::{err, parse_int, per_direction, Dialect, OptionError, Reader};
use crate::distribution::{Distribution, DistributionSpec};
use sanlab_spec::did_you_mean;

/// One direction's block sizes, offsets and sequential position, laid out for
/// [`super::job::FioJob`]'s: what a request reads of it (the scalars, then a fixed block size or a
/// uniform draw's block count at the start of `sizes` and `offsets`) in one cache line.
#[repr(C, align(64))]
#[derive(Clone, Debug)]
pub(super) struct Direction {
    pub(super) next_seq_bytes: u64,
    /// Offsets align to this: the direction's smallest block size (fio's default `blockalign`).
    pub(super) align_bytes: u64,
    /// rw=randread:N — requests left before the next random offset.
    pub(super) seq_left: u32,
    pub(super) sizes: BlockSizes,
    pub(super) offsets: Distribution,
}

/// Passes over the region of a job that is not time_based and mixes sequential continuations
/// into random offsets (`percentage_random` below 100): fio ends a pass (a loop) when a
/// sequential continuation runs off the region's end (io_u.c `get_next_offset`: "offset >=
/// io_size"; HOWTO `size`, item 5), or after `io_size` bytes, and starts the next pass at the
/// region's start (`fio_file_reset`).
#[derive(Clone, Debug)]
pub(super) struct Passes {
    /// Bytes per pass (fio `io_size`).
    pub(super) bytes: u64,
    /// Passes left after this one.
    pub(super) left: u64,
    /// `issued_bytes` when this pass began.
    pub(super) start_bytes: u64,
}

/// fio `zonemode=strided` (io_u.c `setup_strided_zone_mode`): the job works in a zone of
/// `range` bytes until it has transferred `size` bytes there (going round the zone again when
/// `size` exceeds `range`), then moves `range + skip` on, back to the region's start past its end.
#[derive(Clone, Debug)]
pub(super) struct Zones {
    pub(super) size: u64,
    pub(super) range: u64,
    pub(super) skip: u64,
    /// The current zone's start and the bytes transferred in it.
    pub(super) start: u64,
    pub(super) bytes: u64,
}

/// fio `nrfiles` files of `filesize` bytes, laid one after another in the job's region; fio's
/// default `file_service_type=roundrobin` moves to the next file after each request, and each
/// file keeps its own sequential position per direction.
#[derive(Clone, Debug)]
pub(super) struct JobFiles {
    pub(super) bytes: u64,
    /// The file of the next request, and every file's next sequential offset per direction.
    pub(super) next: usize,
    pub(super) positions: Vec<[u64; 2]>,
}

/// The job's region and stop conditions.
pub(super) struct Region {
    pub(super) offset_bytes: u64,
    pub(super) size_bytes: u64,
    pub(super) nrfiles: u64,
    /// Bytes per file: filesize, or size / nrfiles.
    pub(super) file_bytes: u64,
    /// The largest block size of either direction.
    pub(super) largest: u64,
    pub(super) time_based: bool,
    pub(super) loops: u64,
    pub(super) io_bytes: u64,
    pub(super) number_ios: u64,
}

/// Region and stop conditions: offset, size, nrfiles and filesize (checked against the block
/// sizes and the rw skip), time_based, loops, io_size, number_ios.
pub(super) fn region(opts: &Reader, sizes: &[BlockSizes; 2], seq_add_bytes: i64) -> Result<Region, OptionError> {
    let (v, units) = (opts.v, &opts.units);
    let offset_bytes = opts.size_of("offset", 0)?;
    // Without size, a scenario job addresses 1 GiB; fio addresses the device from offset on.
    let default_size = match units.dialect {
        Dialect::JobFile { device_size_bytes } => device_size_bytes.saturating_sub(offset_bytes),
        Dialect::Scenario => 1 << 30,
    };
    // nrfiles files of filesize bytes (default size / nrfiles); size defaults to their sum.
    let nrfiles = opts.int_of("nrfiles", 1, 1, 65_536)? as u64;
    let file_bytes = v.get("filesize").map(|s| units.size(s).map_err(|e| err("filesize", e))).transpose()?;
    let default_size = file_bytes.map_or(default_size, |f| f.saturating_mul(nrfiles));
    let size_bytes = opts.size_of("size", default_size)?;
    let file_bytes = file_bytes.unwrap_or(size_bytes / nrfiles);
    if file_bytes.saturating_mul(nrfiles) > size_bytes {
        return Err(err("filesize", format!("{nrfiles} files of {file_bytes} bytes do not fit in size ({size_bytes} bytes): raise size or leave it out")));
    }
    let largest = u64::from(sizes[0].max().max(sizes[1].max()));
    if size_bytes < largest {
        return Err(err("size", format!("{size_bytes} bytes is smaller than the block size {largest}")));
    }
    if seq_add_bytes.unsigned_abs() >= size_bytes {
        return Err(err("rw", format!("a skip of {} bytes does not fit in the job's {size_bytes} bytes: expected less than size", seq_add_bytes.unsigned_abs())));
    }
    let time_based = opts.bool_of("time_based", opts.scenario())?;
    let loops = opts.int_of("loops", 1, 1, i64::from(u32::MAX))? as u64;
    let io_bytes = opts.size_of("io_size", size_bytes)?;
    let number_ios = opts.int_of("number_ios", 0, 0, i64::MAX)? as u64;
    Ok(Region { offset_bytes, size_bytes, nrfiles, file_bytes, largest, time_based, loops, io_bytes, number_ios })
}

/// Where a job's requests go: each direction's offsets, the zones or files they lie in, and
/// fio's random generator or random map.
pub(super) struct Offsets {
    pub(super) dirs: [Direction; 2],
    pub(super) zones: Option<Zones>,
    pub(super) files: Option<JobFiles>,
    pub(super) lfsr: Option<(u64, Option<lfsr::BlockCycle>)>,
    pub(super) random_map: Option<RandomMaps>,
}

/// Offsets: random_distribution, zonemode (zonesize, zonerange, zoneskip), the files,
/// blockalign, random_generator and norandommap.
pub(super) fn offsets(opts: &Reader, random: bool, region: &Region, sizes: [BlockSizes; 2]) -> Result<Offsets, OptionError> {
    let (v, units) = (opts.v, &opts.units);
    let Region { size_bytes, nrfiles, file_bytes, largest, .. } = *region;
    let dist_text = v.get("random_distribution").unwrap_or("random");
    let size_bytes_fn = |s: &str| units.size(s);
    let mut specs = [DistributionSpec::Uniform, DistributionSpec::Uniform];
    if dist_text.trim_start().starts_with("zoned") {
        let (name, lists) = dist_text.trim().split_once(':').ok_or_else(|| err("random_distribution", format!("`{dist_text}`: expected zones after a colon, e.g. \"zoned:60/10:40/90\"")))?;
        for (d, list) in per_direction(lists).iter().enumerate() {
            if let Some(list) = list {
                specs[d] = DistributionSpec::parse(&format!("{name}:{list}"), &size_bytes_fn).map_err(|e| err("random_distribution", e))?;
            }
        }
    } else {
        let one = DistributionSpec::parse(dist_text, &size_bytes_fn).map_err(|e| err("random_distribution", e))?;
        specs = [one.clone(), one];
    }
    // zonemode=strided: random offsets are drawn within a zone of zonerange bytes.
    let zones = match v.get("zonemode").map(str::trim) {
        None | Some("none") => None,
        Some("strided") => {
            let zone_size = opts.size_of("zonesize", 0)?;
            if zone_size == 0 {
                return Err(err("zonesize", "zonemode=strided needs zonesize, the bytes to transfer in each zone, e.g. zonesize=256m"));
            }
            let range = opts.size_of("zonerange", zone_size)?;
            if range < largest || range > size_bytes {
                return Err(err("zonerange", format!("{range} bytes: a zone must hold a block ({largest} bytes) and fit in the job's {size_bytes} bytes")));
            }
            Some(Zones { size: zone_size, range, skip: opts.size_of("zoneskip", 0)?, start: 0, bytes: 0 })
        }
        Some("zbd") => return Err(err("zonemode", "zoned block devices (zonemode=zbd) are not modelled: use zonemode=strided or none")),
        Some(other) => return Err(err("zonemode", format!("unknown zonemode `{other}`: expected none, strided or zbd{}", did_you_mean(other, ["none", "strided", "zbd"])))),
    };
    let files = (nrfiles > 1).then(|| JobFiles { bytes: file_bytes, next: 0, positions: vec![[0; 2]; nrfiles as usize] });
    if files.is_some() && (file_bytes < largest || zones.is_some()) {
        return Err(err("nrfiles", format!("files of {file_bytes} bytes must hold a block ({largest} bytes), and files with zonemode are not modelled")));
    }
    let drawn_bytes = zones.as_ref().map_or(files.as_ref().map_or(size_bytes, |f| f.bytes), |z| z.range);
    // fio `blockalign`: the boundary random offsets align to; default the smallest block.
    let mut aligns = [None; 2];
    if let Some(ba) = v.get("blockalign") {
        for (d, s) in per_direction(ba).iter().enumerate() {
            if let Some(s) = s {
                aligns[d] = Some(u64::from(units.block_size(s).map_err(|e| err("blockalign", e))?));
            }
        }
    }
    let mut dirs: Vec<Direction> = vec![];
    for (d, sizes) in sizes.into_iter().enumerate() {
        let align_bytes = aligns[d].unwrap_or(u64::from(sizes.min()));
        // Reads and writes alike share one build: a zipf table over millions of blocks costs.
        let offsets = match dirs.first() {
            Some(r) if specs[0] == specs[1] && r.align_bytes == align_bytes => r.offsets.clone(),
            _ => specs[d].build(drawn_bytes / align_bytes, align_bytes).map_err(|e| err("random_distribution", e))?,
        };
        dirs.push(Direction { sizes, align_bytes, offsets, next_seq_bytes: 0, seq_left: 0 });
    }
    let dirs: [Direction; 2] = dirs.try_into().expect("two directions");
    // fio `random_generator`: lfsr never repeats a block before all are used; it applies to
    // the uniform distribution only (fio's zipf, pareto, normal and zoned draws ignore it).
    let lfsr = match v.get("random_generator").map(str::trim) {
        None | Some("tausworthe" | "tausworthe64") => None,
        Some("lfsr") if random && specs.iter().all(|s| *s == DistributionSpec::Uniform) => {
            if zones.is_some() || files.is_some() {
                return Err(err("random_generator", "random_generator=lfsr with zonemode=strided or nrfiles above 1 is not modelled: use tausworthe (the default)"));
            }
            Some((dirs[0].align_bytes.min(dirs[1].align_bytes), None))
        }
        Some("lfsr") => None,
        Some(other) => return Err(err("random_generator", format!("unknown value `{other}`: expected tausworthe, lfsr or tausworthe64{}", did_you_mean(other, ["tausworthe", "lfsr", "tausworthe64"])))),
    };
    // fio keeps its random map for uniform random jobs without norandommap (filesetup.c
    // `init_random_map`); sanlab's own keys draw with replacement, as they always have.
    let random_map = (!opts.scenario() && random && lfsr.is_none() && zones.is_none() && specs.iter().all(|s| *s == DistributionSpec::Uniform) && !opts.bool_of("norandommap", false)?)
        .then(|| RandomMaps::new(dirs[0].align_bytes.min(dirs[1].align_bytes), if nrfiles > 1 { file_bytes } else { size_bytes }, nrfiles as usize));
    Ok(Offsets { dirs, zones, files, lfsr, random_map })
}

/// percentage_random per direction, and the passes over the region that it or a random map
/// makes (see [`Passes`]).
pub(super) fn passes(opts: &Reader, mode: &str, random: bool, read_pct: f64, region: &Region, random_map: &Option<RandomMaps>) -> Result<([u64; 2], Option<Passes>), OptionError> {
    let v = opts.v;
    let Region { size_bytes, time_based, loops, io_bytes, .. } = *region;
    // percentage_random per direction (HOWTO: "as described in blocksize"), 0..=100 as fio's
    // `maxval` allows. Only random modes consult it (io_u.c `get_next_block` calls
    // `should_do_random` under `td_random`); sequential modes accept and ignore it.
    let mut perc_random = [100u64; 2];
    if let Some(text) = v.get("percentage_random") {
        for (d, s) in per_direction(text).iter().enumerate() {
            if let Some(s) = s {
                perc_random[d] = parse_int("percentage_random", s, 0, 100)? as u64;
            }
        }
    }
    let in_use = [read_pct > 0.0, read_pct < 100.0];
    let mixes_sequential = random && (0..2).any(|d| in_use[d] && perc_random[d] < 100);
    // fio wraps a sequential continuation to the region's start when time_based, or for a
    // mixed job whose io_size exceeds size (io_u.c `get_next_seq_offset`); otherwise it ends
    // the pass.
    let wraps = time_based || (mode == "randrw" && io_bytes > size_bytes);
    // A full random map ends the pass too (io_u.c `get_next_rand_block`).
    let passes = ((mixes_sequential || random_map.is_some()) && !wraps).then_some(Passes { bytes: io_bytes, left: loops - 1, start_bytes: 0 });
    Ok((perc_random, passes))
}
