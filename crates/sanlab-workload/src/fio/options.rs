//! Every option fio accepts (axboe/fio `options.c` and the engines' option tables at f5344384,
//! HOWTO.rst), each with what sanlab does with it: models it, accepts it without effect on the
//! model (and lists it once per run as "ignored: ..."), or stops with why it cannot be modelled.
//! An option fio does not know is an error naming the nearest one. `sanlab kinds` prints the
//! table (extension point `fio_option`), and docs/models/fio.md gives its counts.
//! Below them, fio's own command-line options (`--output`, `-o`, …), which job files may not hold,
//! and which of the job options its command line reads as flags.

use sanlab_spec::{did_you_mean, KindDoc, ParamDoc, Spec, SpecResult};

/// How an option reaches the model.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Effect {
    /// Shapes the requests, their pacing or the job's phases.
    Model,
    /// Read for sanlab's fio-compatible output (names, groups, logs); no effect on the requests.
    Report,
    /// Accepted without effect on the model; `doc` says why.
    Ignored,
    /// fio has it and sanlab cannot model it: an error, with `doc` saying why.
    Unmodelled,
}

pub(crate) struct FioOption {
    pub name: &'static str,
    pub aliases: &'static [&'static str],
    pub effect: Effect,
    /// Also a parameter of the `fio` kind (the others only make sense in job files).
    pub scenario: bool,
    pub ty: &'static str,
    pub default: &'static str,
    pub doc: &'static str,
}

impl FioOption {
    /// The option's value as a scenario writes it, as text: a string or a number, or `true` /
    /// `false` for a boolean option only. `iodepth = true` was read as 1: a boolean where a
    /// number is expected is refused.
    pub(crate) fn scenario_text(&self, spec: &Spec) -> SpecResult<Option<String>> {
        let boolean = matches!(self.ty, "boolean" | "bool");
        match spec.raw(self.name) {
            Some(v @ toml::Value::Boolean(_)) if !boolean && !spec.is_describing() => Err(spec.mistyped(self.name, &format!("{} as a string or a number", self.ty), v)),
            _ => spec.scalar_text(self.name, self.ty, self.default, self.doc),
        }
    }
}

const fn opt(name: &'static str, aliases: &'static [&'static str], ty: &'static str, default: &'static str, doc: &'static str) -> FioOption {
    FioOption { name, aliases, effect: Effect::Model, scenario: true, ty, default, doc }
}

/// A modelled option read only from job files and command lines.
const fn file_opt(name: &'static str, aliases: &'static [&'static str], ty: &'static str, doc: &'static str) -> FioOption {
    FioOption { name, aliases, effect: Effect::Model, scenario: false, ty, default: "", doc }
}

const fn report(name: &'static str, aliases: &'static [&'static str], doc: &'static str) -> FioOption {
    FioOption { name, aliases, effect: Effect::Report, scenario: false, ty: "", default: "", doc }
}

const fn ignored(name: &'static str, aliases: &'static [&'static str], why: &'static str) -> FioOption {
    FioOption { name, aliases, effect: Effect::Ignored, scenario: false, ty: "", default: "", doc: why }
}

const fn cannot(name: &'static str, aliases: &'static [&'static str], why: &'static str) -> FioOption {
    FioOption { name, aliases, effect: Effect::Unmodelled, scenario: false, ty: "", default: "", doc: why }
}

// Why options are accepted without effect.
const FILES: &str = "file naming and file setup: the job addresses the VM's virtual disk";
const ENGINE: &str = "engine tuning: how fio hands requests to the kernel, not what reaches the disk";
const RANDOM: &str = "fio's random generator and seed: sanlab draws from its own seeded streams";
const SOFT_RANDOM_MAP: &str = "what fio does when it cannot allocate its random map: sanlab always keeps it";
const CACHE: &str = "page cache, open flags and final syncs: sanlab models the disk as fio sees it with direct=1";
const PROCESS: &str = "CPU, memory, priority and process placement of fio itself";
const REPORT: &str = "what fio prints or logs";
const BUFFERS: &str = "buffer contents (patterns, compression, dedupe): sanlab does not model data";
const ERRORS: &str = "error handling: a sanlab job stops at its first failed request, as fio does by default";
const VERIFY_CONTENT: &str = "what verification checks in the data: sanlab models the reads it adds, not the data";
const DEPRECATED: &str = "deprecated: fio ignores it too";
const FINAL_SYNC: &str = "a sync at the job's end: it ends in the guest (write-through virtual disk), and fio counts it nowhere";
const BARRIER: &str = "fio 3.33 marks every Nth write as a barrier, but no engine acts on the mark: the writes are plain writes";
const FILL_DEVICE: &str = "on a raw device fio's job covers the device from offset, as without the option (HOWTO fill_device)";

// Why options cannot be modelled.
const TRIM: &str = "trims are not modelled";
const REPLAY: &str = "replay a log with kind = \"trace\", format = \"fio_iolog\"";
const ZBD: &str = "zoned block devices (zonemode=zbd) are not modelled";
const FDP: &str = "NVMe flexible data placement is not modelled";
const VERIFY: &str = "this form of verification is not modelled: use verify with do_verify and verify_backlog";
const RATE_THINK: &str = "rate_ignore_thinktime is not modelled yet";
const THINK: &str = "think-time variants other than thinktime/thinktime_blocks are not modelled yet";
const SHAPE: &str = "this variant of fio's offset or block-size sequence is not modelled";
const SPRANDOM: &str = "sprandom (SSD preconditioning through fio's random map) is not modelled";
const FILL: &str = "filling or pre-reading a file system is not modelled";
const RAMP_SIZE: &str = "a ramp measured in bytes is not modelled: use ramp_time";
const PROFILE: &str = "fio's built-in profiles (tiobench, act) are not modelled: write the jobs out";
const PROFILE_OPTION: &str = "an option of fio's tiobench or act profile: no effect without --profile, in fio as here";
// Options of engines that are not block I/O.
const NETWORK: &str = "an option of fio's network engines (net, netsplice, rdma): sanlab simulates block I/O on a disk";
const CPUIO: &str = "an option of fio's cpuio engine: sanlab simulates block I/O on a disk";
const EXEC: &str = "an option of fio's exec engine: sanlab simulates block I/O on a disk";
const HTTP: &str = "an option of fio's http engine: sanlab simulates block I/O on a disk";
const CEPH: &str = "an option of fio's rados and rbd engines: sanlab simulates block I/O on a disk";
const FILEOPS: &str = "an option of fio's file-operation engines (filestat, e4defrag): sanlab simulates block I/O on a disk";
const DISTRIBUTED: &str = "an option of fio's distributed file system engines (libhdfs, nfs, dfs): sanlab simulates block I/O on a disk";
const GLUSTER: &str = "an option of fio's GlusterFS engines (gfapi, gfapi_async): sanlab simulates block I/O on a disk";
const RPMA: &str = "an option of fio 3.33's librpma engines (RDMA to persistent memory): sanlab simulates block I/O on a disk";
const GPU: &str = "an option of fio's GPU direct-storage engines (libcufile, libhipfile): sanlab simulates block I/O on a disk";

/// Every option fio accepts, options.c first, then the block engines' and other engines' own.
pub(crate) static OPTIONS: &[FioOption] = &[
    opt("rw", &["readwrite"], "choice", "read", "read, write, randread, randwrite, rw, randrw; `randread:8` takes a new random offset every 8 requests, `write:4k` leaves a 4k hole after each"),
    opt("rwmixread", &[], "integer", "50", "percent reads of rw/randrw"),
    opt("rwmixwrite", &[], "integer", "50", "percent writes of rw/randrw (the later of rwmixread/rwmixwrite wins)"),
    opt("bs", &["blocksize"], "size", "4k", "block size; \"8k,32k\" gives reads 8k and writes 32k"),
    opt("bsrange", &["blocksize_range"], "size range", "none", "random block sizes in multiples of the smallest, e.g. \"4k-64k\" (per direction with a comma)"),
    opt("bssplit", &[], "string", "none", "block size mix, e.g. \"4k/60:64k/40\"; a blank share takes what is left; per direction with a comma"),
    opt("iodepth", &[], "integer", "1", "requests kept outstanding (one with a sync ioengine)"),
    opt("ioengine", &[], "choice", "libaio", "block engines: async ones (libaio, io_uring, posixaio, null, libiscsi, nbd, ...) keep iodepth outstanding; sync ones (psync, sync, pvsync2, mmap, ...) one. Job files default to psync, fio's Linux default"),
    opt("numjobs", &[], "integer", "1", "identical clones of this job"),
    opt("offset_increment", &[], "size", "0", "clone k starts at offset + k x offset_increment"),
    opt("rate_iops", &[], "IOPS", "0", "open-loop arrival rate; \"500,100\" paces reads and writes each on its own, as fio does (a mixed job then mixes at those rates); 0 = closed loop"),
    opt("rate", &[], "bytes/s", "0", "bandwidth cap, per direction as \"1m,500k\"; it wins over rate_iops, as in fio, and paces at rate / mean block size (exact for a fixed block size); 0 = no cap"),
    opt("blockalign", &["ba"], "size", "bs", "boundary random offsets align to, per direction; default the smallest block size"),
    opt("thinktime_spin", &[], "duration", "0", "part of thinktime fio spends spinning on the CPU: the pause is thinktime either way (microseconds without a unit)"),
    opt("thinktime_iotime", &[], "duration", "0", "also pause after issuing for this long, whichever of it and thinktime_blocks comes first (seconds without a unit)"),
    file_opt("verify", &[], "choice", "a method (md5, crc32c, ...) makes a writing job read back every block it wrote: at the end of each loop (unless time_based) and after every verify_backlog writes; 0 = none; an error on a read-only job"),
    file_opt("do_verify", &[], "boolean", "1: read back at the end of each loop (0: only verify_backlog reads)"),
    file_opt("verify_backlog", &[], "integer", "read back after this many writes, interleaved with the writes"),
    file_opt("verify_backlog_batch", &[], "integer", "blocks read back each time (default verify_backlog)"),
    file_opt("zonemode", &[], "choice", "none or strided: the job works zonesize bytes in a zone of zonerange bytes, then skips zoneskip; zbd is an error"),
    file_opt("zonesize", &[], "size", "with zonemode=strided: bytes transferred in a zone before moving on"),
    file_opt("zonerange", &[], "size", "with zonemode=strided: the zone's size (default zonesize)"),
    file_opt("zoneskip", &[], "size", "with zonemode=strided: bytes skipped after each zone"),
    file_opt("nrfiles", &["nr_files"], "integer", "files per job, laid one after another in the job's region and served round robin (fio's default file_service_type), each with its own position"),
    file_opt("filesize", &[], "size", "each file's size (default size / nrfiles; size defaults to nrfiles x filesize)"),
    opt("rate_process", &[], "choice", "linear", "arrival spacing with rate_iops: linear or poisson"),
    opt("runtime", &["timeout"], "duration", "0", "stop issuing after this long (seconds without a unit); 0 = the run's duration"),
    opt("time_based", &[], "boolean", "1", "run until runtime even after io_size bytes; job files default to 0 (fio's default): the job stops after io_size (or size) bytes"),
    opt("ramp_time", &[], "duration", "0", "lead-in left out of this job's statistics; it adds to runtime as in fio (seconds without a unit)"),
    opt("startdelay", &[], "duration", "0", "idle time before the job starts (seconds without a unit)"),
    opt("size", &[], "size", "1GiB", "region the job addresses, from offset (job files: a percent of device_size)"),
    opt("io_size", &["io_limit"], "size", "size", "bytes to transfer before the job stops, unless time_based"),
    opt("number_ios", &[], "integer", "0", "stop after this many requests; 0 = no limit"),
    opt("loops", &[], "integer", "1", "passes over io_size, unless time_based"),
    opt("offset", &["fileoffset"], "size", "0", "start of the region"),
    opt("percentage_random", &[], "integer", "100", "with randread/randwrite/randrw: percent of requests at a random offset; the others continue from where the direction's previous request ended; \"100,0\" per direction; sequential modes ignore it"),
    opt("random_distribution", &[], "string", "random", "random, zipf:theta[:centre], pareto:h[:centre], normal:dev[:centre], zoned:access/range%:..., zoned_abs:access/size:... (zoned per direction with a comma)"),
    opt("thinktime", &[], "duration", "0", "pause after every thinktime_blocks requests, once they completed (microseconds without a unit)"),
    opt("thinktime_blocks", &[], "integer", "1", "requests between pauses; it caps the queue depth as in fio"),
    FioOption { name: "group_reporting", aliases: &[], effect: Effect::Report, scenario: true, ty: "boolean", default: "0", doc: "accepted; fio uses it only to sum clones in its report" },
    file_opt("kb_base", &[], "choice", "1024 (fio's default: k and KB are 1024, KiB 1000) or 1000"),
    report("name", &[], "the job's name (a job file's section name otherwise)"),
    report("description", &[], "the job's description in fio's output"),
    report("new_group", &[], "starts a new reporting group"),
    file_opt("stonewall", &["wait_for_previous"], "flag", "the job starts once every job above it has finished, as in fio"),
    file_opt("wait_for", &[], "job name", "the job starts once every clone of that job (defined above it) has finished"),
    report("unit_base", &[], "bits or bytes in fio's printed output"),
    ignored("filename", &[], FILES),
    ignored("filetype", &[], FILES),
    ignored("directory", &[], FILES),
    ignored("filename_format", &[], FILES),
    ignored("unique_filename", &[], FILES),
    ignored("lockfile", &[], FILES),
    ignored("opendir", &[], FILES),
    cannot("rw_sequencer", &[], SHAPE),
    ignored("iodepth_batch", &["iodepth_batch_submit"], ENGINE),
    ignored("iodepth_batch_complete_min", &["iodepth_batch_complete"], ENGINE),
    ignored("iodepth_batch_complete_max", &[], ENGINE),
    ignored("iodepth_low", &[], ENGINE),
    ignored("serialize_overlap", &[], ENGINE),
    ignored("io_submit_mode", &[], ENGINE),
    ignored("fill_device", &["fill_fs"], FILL_DEVICE),
    ignored("file_append", &[], FILES),
    cannot("offset_align", &[], SHAPE),
    cannot("num_range", &[], TRIM),
    cannot("bs_unaligned", &["blocksize_unaligned"], SHAPE),
    cannot("bs_is_seq_rand", &[], SHAPE),
    ignored("randrepeat", &["allrandrepeat"], RANDOM),
    ignored("randseed", &[], RANDOM),
    file_opt("norandommap", &[], "boolean", "draw random offsets with replacement; without it a uniform random job covers every block of its region once before any repeats, as fio's random map does"),
    ignored("softrandommap", &[], SOFT_RANDOM_MAP),
    cannot("sprandom", &[], SPRANDOM),
    cannot("spr_num_regions", &[], SPRANDOM),
    cannot("spr_op", &[], SPRANDOM),
    cannot("spr_cs", &[], SPRANDOM),
    file_opt("random_generator", &[], "choice", "tausworthe (default) or tausworthe64: offsets drawn with replacement; lfsr: a uniform random job's offsets never repeat a block until every block of its region has been used (a cycle of our own, not fio's register; see docs)"),
    cannot("random_sequence_stride", &[], SHAPE),
    ignored("percentage_sequential", &[], DEPRECATED),
    ignored("openfiles", &[], FILES),
    ignored("file_service_type", &[], FILES),
    ignored("fallocate", &[], FILES),
    ignored("fadvise_hint", &[], FILES),
    opt("fsync", &[], "integer", "0", "an fsync every this many writes, as fio schedules it; it ends in the guest (write-through virtual disk) and takes no simulated time, and fio's JSON counts it under `sync`; 0 = none"),
    opt("fdatasync", &[], "integer", "0", "as fsync, with fdatasync; fsync is checked first when both are due"),
    file_opt("sync_file_range", &[], "flags[:integer]", "as fsync, with sync_file_range: flags from wait_before, write, wait_after, then the writes between calls (1 without), e.g. \"wait_before,write:8\""),
    ignored("write_barrier", &[], BARRIER),
    ignored("direct", &[], CACHE),
    ignored("atomic", &[], CACHE),
    ignored("buffered", &[], CACHE),
    ignored("overwrite", &[], FILES),
    cannot("verify_only", &[], VERIFY),
    cannot("ramp_size", &[], RAMP_SIZE),
    ignored("clocksource", &[], PROCESS),
    ignored("mem", &["iomem"], ENGINE),
    ignored("iomem_align", &["mem_align"], ENGINE),
    ignored("verify_policy", &[], VERIFY_CONTENT),
    ignored("verifysort", &[], DEPRECATED),
    ignored("verifysort_nr", &[], DEPRECATED),
    ignored("verify_interval", &[], VERIFY_CONTENT),
    ignored("verify_offset", &[], VERIFY_CONTENT),
    ignored("verify_pattern", &[], VERIFY_CONTENT),
    ignored("verify_pattern_interval", &[], VERIFY_CONTENT),
    ignored("verify_fatal", &[], VERIFY_CONTENT),
    ignored("verify_dump", &[], VERIFY_CONTENT),
    ignored("verify_async", &[], VERIFY_CONTENT),
    ignored("verify_async_cpus", &[], VERIFY_CONTENT),
    cannot("experimental_verify", &[], VERIFY),
    ignored("verify_state_load", &[], VERIFY_CONTENT),
    ignored("verify_state_save", &[], VERIFY_CONTENT),
    ignored("verify_write_sequence", &[], VERIFY_CONTENT),
    ignored("verify_header_seed", &[], VERIFY_CONTENT),
    cannot("trim_percentage", &[], TRIM),
    cannot("trim_verify_zero", &[], TRIM),
    cannot("trim_backlog", &[], TRIM),
    cannot("trim_backlog_batch", &[], TRIM),
    ignored("write_iolog", &[], REPORT),
    cannot("read_iolog", &[], REPLAY),
    cannot("read_iolog_chunked", &[], REPLAY),
    cannot("replay_no_stall", &[], REPLAY),
    cannot("replay_redirect", &[], REPLAY),
    cannot("replay_scale", &[], REPLAY),
    cannot("replay_align", &[], REPLAY),
    cannot("replay_time_scale", &[], REPLAY),
    cannot("replay_skip", &[], REPLAY),
    cannot("merge_blktrace_file", &[], REPLAY),
    cannot("merge_blktrace_scalars", &[], REPLAY),
    cannot("merge_blktrace_iters", &[], REPLAY),
    ignored("exec_prerun", &[], PROCESS),
    ignored("exec_postrun", &[], PROCESS),
    ignored("ioscheduler", &[], PROCESS),
    cannot("zonecapacity", &[], ZBD),
    cannot("read_beyond_wp", &[], ZBD),
    cannot("max_open_zones", &[], ZBD),
    cannot("job_max_open_zones", &[], ZBD),
    cannot("ignore_zone_limits", &[], ZBD),
    cannot("zone_reset_threshold", &[], ZBD),
    cannot("zone_reset_frequency", &[], ZBD),
    cannot("recover_zbd_write_error", &[], ZBD),
    cannot("write_zone_remainder", &[], ZBD),
    cannot("fdp", &[], FDP),
    cannot("dataplacement", &["data_placement"], FDP),
    cannot("plid_select", &["fdp_pli_select"], FDP),
    cannot("plids", &["fdp_pli"], FDP),
    cannot("dp_scheme", &[], FDP),
    ignored("lockmem", &[], PROCESS),
    ignored("rwmixcycle", &[], DEPRECATED),
    ignored("comm", &[], PROCESS),
    ignored("nice", &[], PROCESS),
    ignored("prio", &[], PROCESS),
    ignored("prioclass", &[], PROCESS),
    ignored("priohint", &[], PROCESS),
    cannot("thinkcycles", &[], THINK),
    cannot("thinktime_blocks_type", &[], THINK),
    file_opt("rate_min", &["ratemin"], "bytes/s[,bytes/s]", "end the job with an error (EIO) when a direction's bandwidth over rate_cycle falls below this (backend.c `check_min_rate`)"),
    file_opt("rate_iops_min", &[], "IOPS[,IOPS]", "end the job with an error (EIO) when a direction's IOPS over rate_cycle fall below this"),
    file_opt("rate_cycle", &["ratecycle"], "ms", "the window of rate_min and rate_iops_min (default 1000)"),
    cannot("rate_ignore_thinktime", &[], RATE_THINK),
    file_opt("max_latency", &[], "time[,time]", "end the job with ETIMEDOUT at a completion later than this, per direction; bare numbers are us (io_u.c `lat_fatal`)"),
    file_opt("latency_target", &[], "time", "search for the deepest queue (up to iodepth) whose latency meets this (io_u.c `lat_target_check`); bare numbers are us"),
    file_opt("latency_window", &[], "time", "the window each depth of the latency-target search runs for; bare numbers are us"),
    file_opt("latency_percentile", &[], "percent", "the share of a window's I/Os that must meet latency_target (default 100)"),
    file_opt("latency_run", &[], "bool", "keep adjusting the depth for the whole run instead of ending at the depth found"),
    ignored("invalidate", &[], CACHE),
    ignored("sync", &[], CACHE),
    ignored("write_hint", &[], ENGINE),
    ignored("create_serialize", &[], FILES),
    ignored("create_fsync", &[], FILES),
    ignored("create_on_open", &[], FILES),
    ignored("create_only", &[], FILES),
    ignored("allow_file_create", &[], FILES),
    ignored("allow_mounted_write", &[], FILES),
    cannot("pre_read", &[], FILL),
    ignored("cpumask", &[], PROCESS),
    ignored("cpus_allowed", &[], PROCESS),
    ignored("cpus_allowed_policy", &[], PROCESS),
    ignored("numa_cpu_nodes", &[], PROCESS),
    ignored("numa_mem_policy", &[], PROCESS),
    ignored("gpu_dev_id", &[], PROCESS),
    ignored("end_fsync", &[], FINAL_SYNC),
    ignored("fsync_on_close", &[], FINAL_SYNC),
    ignored("end_syncfs", &[], CACHE),
    ignored("unlink", &[], FILES),
    ignored("unlink_each_loop", &[], FILES),
    file_opt("exitall", &[], "flag", "when a job ends, end the others of its group (see exit_what), as fio does (libfio.c `fio_terminate_threads`)"),
    file_opt("exit_what", &[], "choice", "what exitall ends: group (default), stonewall (every running job; later groups still run) or all"),
    file_opt("exitall_on_error", &[], "flag", "when this job ends in error (a failed I/O, a missed rate_min or latency_target), end the others as exitall does"),
    ignored("thread", &[], PROCESS),
    report("per_job_logs", &[], "with 0, one log file per kind for all jobs (name_bw.log) instead of name_bw.N.log"),
    report("write_bw_log", &[], "write fio's bandwidth log (name_bw.N.log, KiB/s) from the VM's time series"),
    report("write_lat_log", &[], "write fio's latency logs (name_lat.N.log, name_clat.N.log, ns) from the VM's time series"),
    report("write_iops_log", &[], "write fio's IOPS log (name_iops.N.log) from the VM's time series"),
    ignored("log_entries", &[], REPORT),
    report("log_avg_msec", &[], "the logs' window in ms (a multiple of the run's sample_interval); with write_bw_log or write_iops_log and no bwavgtime / iopsavgtime, also the samples' window, and 0 samples every I/O, as in fio"),
    ignored("log_hist_msec", &[], REPORT),
    ignored("log_hist_coarseness", &[], REPORT),
    ignored("write_hist_log", &[], REPORT),
    ignored("log_window_value", &["log_max_value"], REPORT),
    ignored("log_offset", &[], REPORT),
    ignored("log_prio", &[], REPORT),
    ignored("log_issue_time", &[], REPORT),
    report("log_compression", &[], "a compressed log makes fio sample its log's rate every I/O, and so does sanlab's output; the logs sanlab writes are not compressed"),
    ignored("log_compression_cpus", &[], REPORT),
    report("log_store_compressed", &[], "like log_compression: the rate samples are taken every I/O"),
    ignored("log_alternate_epoch", &["log_unix_epoch"], REPORT),
    ignored("log_alternate_epoch_clock_id", &[], REPORT),
    ignored("block_error_percentiles", &[], REPORT),
    report("bwavgtime", &[], "the window (ms, 500 by default) of the bandwidth samples behind the output's bw_min/max/mean/dev/samples (stat.c)"),
    report("iopsavgtime", &[], "the window (ms, 500 by default) of the IOPS samples behind the output's iops_min/max/mean/stddev/samples"),
    ignored("stats", &[], REPORT),
    ignored("zero_buffers", &[], BUFFERS),
    ignored("refill_buffers", &[], BUFFERS),
    ignored("scramble_buffers", &[], BUFFERS),
    ignored("buffer_pattern", &[], BUFFERS),
    ignored("buffer_compress_percentage", &[], BUFFERS),
    ignored("buffer_compress_chunk", &[], BUFFERS),
    ignored("dedupe_percentage", &[], BUFFERS),
    ignored("dedupe_global", &[], BUFFERS),
    ignored("dedupe_mode", &[], BUFFERS),
    ignored("dedupe_working_set_percentage", &[], BUFFERS),
    ignored("clat_percentiles", &[], REPORT),
    ignored("lat_percentiles", &[], REPORT),
    ignored("slat_percentiles", &[], REPORT),
    ignored("percentile_list", &[], REPORT),
    ignored("significant_figures", &[], REPORT),
    ignored("disk_util", &[], REPORT),
    ignored("gtod_reduce", &[], REPORT),
    ignored("disable_lat", &[], REPORT),
    ignored("disable_clat", &[], REPORT),
    ignored("disable_slat", &[], REPORT),
    ignored("disable_bw_measurement", &["disable_bw"], REPORT),
    ignored("gtod_cpu", &[], PROCESS),
    ignored("job_start_clock_id", &[], PROCESS),
    ignored("unified_rw_reporting", &[], REPORT),
    ignored("continue_on_error", &[], ERRORS),
    ignored("ignore_error", &[], ERRORS),
    ignored("error_dump", &[], ERRORS),
    cannot("profile", &[], PROFILE),
    // fio registers its profiles' options with the job options, so a job file may set them
    // (examples/steadystate.fio has `threads=1`); without --profile they do nothing.
    ignored("threads", &[], PROFILE_OPTION),
    ignored("dir", &[], PROFILE_OPTION),
    ignored("device-names", &[], PROFILE_OPTION),
    ignored("load", &[], PROFILE_OPTION),
    ignored("test-duration", &[], PROFILE_OPTION),
    ignored("threads-per-queue", &[], PROFILE_OPTION),
    ignored("read-req-num-512-blocks", &[], PROFILE_OPTION),
    ignored("large-block-op-kbytes", &[], PROFILE_OPTION),
    ignored("prep", &[], PROFILE_OPTION),
    ignored("block", &[], PROFILE_OPTION),
    ignored("numruns", &[], PROFILE_OPTION),
    ignored("cgroup", &[], PROCESS),
    ignored("cgroup_nodelete", &[], PROCESS),
    ignored("cgroup_weight", &[], PROCESS),
    ignored("uid", &[], PROCESS),
    ignored("gid", &[], PROCESS),
    ignored("hugepage-size", &[], PROCESS),
    file_opt("flow_id", &[], "int", "the flow a job shares with the jobs of the same id (default 0; flow.c)"),
    file_opt("flow", &[], "weight", "keep the job's issued I/Os in this ratio to the others of its flow_id (1..=1000)"),
    ignored("flow_watermark", &[], DEPRECATED),
    file_opt("flow_sleep", &[], "us", "the wait of a job ahead of its share (default 0: sanlab waits one I/O time)"),
    file_opt("steadystate", &["ss"], "criterion:limit", "iops, iops_slope, bw or bw_slope with a limit, in % of the mean with `%` (steadystate.c)"),
    file_opt("steadystate_duration", &["ss_dur"], "time", "end the job once the criterion holds over this window of samples; bare numbers are seconds"),
    file_opt("steadystate_ramp_time", &["ss_ramp"], "time", "start sampling this long (plus one interval) after the job's start"),
    file_opt("steadystate_check_interval", &["ss_interval"], "time", "the sample interval (default 1s)"),
    ignored("userspace_reap", &[], ENGINE),
    ignored("nowait", &[], ENGINE),
    ignored("libaio_vectored", &[], ENGINE),
    ignored("hipri", &[], ENGINE),
    ignored("readfua", &[], ENGINE),
    ignored("writefua", &[], ENGINE),
    ignored("write_mode", &[], ENGINE),
    ignored("verify_mode", &[], ENGINE),
    ignored("fixedbufs", &[], ENGINE),
    ignored("registerfiles", &[], ENGINE),
    ignored("sqthread_poll", &[], ENGINE),
    ignored("sqthread_poll_cpu", &[], ENGINE),
    ignored("nonvectored", &[], ENGINE),
    ignored("uncached", &[], ENGINE),
    ignored("force_async", &[], ENGINE),
    ignored("cmd_type", &[], ENGINE),
    ignored("cdb_len", &[], ENGINE),
    ignored("verify_bytchk", &[], ENGINE),
    ignored("read_mode", &[], ENGINE),
    ignored("md_per_io_size", &[], ENGINE),
    ignored("pi_act", &[], ENGINE),
    ignored("pi_chk", &[], ENGINE),
    ignored("apptag", &[], ENGINE),
    ignored("apptag_mask", &[], ENGINE),
    ignored("deac", &[], ENGINE),
    ignored("hipri_percentage", &[], ENGINE),
    ignored("sg_write_mode", &[], ENGINE),
    ignored("stream_id", &[], ENGINE),
    ignored("initiator", &[], ENGINE),
    ignored("uri", &[], ENGINE),
    ignored("libblkio_driver", &[], ENGINE),
    ignored("libblkio_path", &[], ENGINE),
    ignored("libblkio_pre_connect_props", &[], ENGINE),
    ignored("libblkio_num_entries", &[], ENGINE),
    ignored("libblkio_queue_size", &[], ENGINE),
    ignored("libblkio_pre_start_props", &[], ENGINE),
    ignored("libblkio_vectored", &[], ENGINE),
    ignored("libblkio_write_zeroes_on_trim", &[], ENGINE),
    ignored("libblkio_wait_mode", &[], ENGINE),
    ignored("libblkio_force_enable_completion_eventfd", &[], ENGINE),
    ignored("thp", &[], ENGINE),
    ignored("no_completion_thread", &[], ENGINE),
    ignored("xnvme_be", &[], ENGINE),
    ignored("xnvme_mem", &[], ENGINE),
    ignored("xnvme_async", &[], ENGINE),
    ignored("xnvme_sync", &[], ENGINE),
    ignored("xnvme_admin", &[], ENGINE),
    ignored("xnvme_dev_nsid", &[], ENGINE),
    ignored("xnvme_dev_subnqn", &[], ENGINE),
    ignored("xnvme_iovec", &[], ENGINE),
    ignored("skip_bad", &[], ENGINE),
    ignored("cmdprio_percentage", &[], ENGINE),
    ignored("cmdprio_class", &[], ENGINE),
    ignored("cmdprio_hint", &[], ENGINE),
    ignored("cmdprio", &[], ENGINE),
    ignored("cmdprio_bssplit", &[], ENGINE),
    cannot("hostname", &[], NETWORK),
    cannot("port", &[], NETWORK),
    cannot("protocol", &["proto"], NETWORK),
    cannot("nodelay", &[], NETWORK),
    cannot("listen", &[], NETWORK),
    cannot("pingpong", &[], NETWORK),
    cannot("interface", &[], NETWORK),
    cannot("ttl", &[], NETWORK),
    cannot("window_size", &[], NETWORK),
    cannot("mss", &[], NETWORK),
    cannot("bindname", &[], NETWORK),
    cannot("verb", &[], NETWORK),
    cannot("cpuload", &[], CPUIO),
    cannot("cpumode", &[], CPUIO),
    cannot("cpuchunks", &[], CPUIO),
    cannot("exit_on_io_done", &[], CPUIO),
    cannot("program", &[], EXEC),
    cannot("arguments", &[], EXEC),
    cannot("grace_time", &[], EXEC),
    cannot("std_redirect", &[], EXEC),
    cannot("https", &[], HTTP),
    cannot("http_host", &[], HTTP),
    cannot("http_user", &[], HTTP),
    cannot("http_pass", &[], HTTP),
    cannot("http_s3_key", &[], HTTP),
    cannot("http_s3_keyid", &[], HTTP),
    cannot("http_s3_security_token", &[], HTTP),
    cannot("http_swift_auth_token", &[], HTTP),
    cannot("http_s3_region", &[], HTTP),
    cannot("http_s3_sse_customer_key", &[], HTTP),
    cannot("http_s3_sse_customer_algorithm", &[], HTTP),
    cannot("http_s3_storage_class", &[], HTTP),
    cannot("http_mode", &[], HTTP),
    cannot("http_verbose", &[], HTTP),
    cannot("http_object_mode", &[], HTTP),
    cannot("clustername", &[], CEPH),
    cannot("rbdname", &[], CEPH),
    cannot("pool", &[], CEPH),
    cannot("clientname", &[], CEPH),
    cannot("conf", &[], CEPH),
    cannot("busy_poll", &[], CEPH),
    cannot("touch_objects", &[], CEPH),
    cannot("rbd_encryption_format", &[], CEPH),
    cannot("rbd_encryption_passphrase", &[], CEPH),
    cannot("stat_type", &[], FILEOPS),
    cannot("donorname", &[], FILEOPS),
    cannot("inplace", &[], FILEOPS),
    cannot("namenode", &[], DISTRIBUTED),
    cannot("hdfsdirectory", &[], DISTRIBUTED),
    cannot("chunk_size", &["chunck_size"], DISTRIBUTED),
    cannot("single_instance", &[], DISTRIBUTED),
    cannot("hdfs_use_direct", &[], DISTRIBUTED),
    cannot("nfs_url", &[], DISTRIBUTED),
    cannot("cont", &[], DISTRIBUTED),
    cannot("object_class", &[], DISTRIBUTED),
    cannot("svcl", &[], DISTRIBUTED),
    cannot("volume", &[], GLUSTER),
    cannot("brick", &[], GLUSTER),
    cannot("single-instance", &[], GLUSTER),
    cannot("serverip", &[], RPMA),
    cannot("busy_wait_polling", &[], RPMA),
    cannot("direct_write_to_pmem", &[], RPMA),
    cannot("gpu_dev_ids", &[], GPU),
    cannot("cuda_io", &[], GPU),
    cannot("rocm_io", &[], GPU),
];

/// Engines that complete each request before the next is issued (fio `FIO_SYNCIO` with a
/// `queue` that completes): one request outstanding whatever `iodepth` says, as fio notes
/// "queue depth will be capped at 1".
pub(crate) const SYNC_ENGINES: [&str; 10] = ["sync", "psync", "vsync", "pvsync", "pvsync2", "mmap", "splice", "libzbc", "mtd", "sg"];
/// Engines that keep `iodepth` requests in flight (libiscsi is flagged FIO_SYNCIO but queues).
pub(crate) const ASYNC_ENGINES: [&str; 11] = ["libaio", "io_uring", "io_uring_cmd", "posixaio", "solarisaio", "windowsaio", "null", "libiscsi", "nbd", "libblkio", "xnvme"];
/// fio's engines that do not do block I/O on a disk.
pub(crate) const NON_BLOCK_ENGINES: [&str; 33] = [
    "net", "netsplice", "rdma", "cpuio", "exec", "http", "rados", "rbd", "falloc", "ftruncate", "e4defrag", "gfapi", "gfapi_async", "libhdfs", "nfs", "dfs",
    "ime_psync", "ime_psyncv", "ime_aio", "libcufile", "libhipfile", "dev-dax", "libpmem", "page_fault", "filecreate", "filestat", "filedelete", "dircreate",
    "dirstat", "dirdelete", "guasi", "binject", "pmemblk",
];

/// An option by its name or one of its aliases.
pub(crate) fn lookup(name: &str) -> Option<&'static FioOption> {
    OPTIONS.iter().find(|o| o.name == name || o.aliases.contains(&name))
}

/// The message for an option sanlab does not accept: one fio lacks, or one sanlab cannot model.
pub(crate) fn unknown_option(name: &str) -> String {
    if let Some(o) = lookup(name).filter(|o| o.effect == Effect::Unmodelled) {
        return format!("fio option `{name}` cannot be modelled: {}", o.doc);
    }
    let names = OPTIONS.iter().flat_map(|o| std::iter::once(o.name).chain(o.aliases.iter().copied()));
    format!("unknown fio option `{name}`{}", did_you_mean(name, names))
}

/// How many options (names, not aliases) have each effect: modelled, accepted without effect
/// (Report and Ignored), cannot be modelled.
pub fn coverage() -> [usize; 3] {
    let count = |f: fn(Effect) -> bool| OPTIONS.iter().filter(|o| f(o.effect)).count();
    [count(|e| e == Effect::Model), count(|e| matches!(e, Effect::Report | Effect::Ignored)), count(|e| e == Effect::Unmodelled)]
}

/// The table for `sanlab kinds`: the modelled options with their types and defaults, then the
/// others grouped by why they are accepted without effect or cannot be modelled.
pub fn kinds() -> Vec<KindDoc> {
    let names = |o: &FioOption| std::iter::once(o.name).chain(o.aliases.iter().copied()).collect::<Vec<_>>().join(" | ");
    let by_reason = |effects: &[Effect], ty: &'static str| {
        let mut groups: Vec<(&'static str, Vec<String>)> = vec![];
        for o in OPTIONS.iter().filter(|o| effects.contains(&o.effect)) {
            match groups.iter_mut().find(|g| g.0 == o.doc) {
                Some(g) => g.1.push(names(o)),
                None => groups.push((o.doc, vec![names(o)])),
            }
        }
        groups.into_iter().map(|(why, opts)| ParamDoc { name: opts.join(", "), ty, default: why.to_string(), doc: why }).collect()
    };
    let modelled = OPTIONS.iter().filter(|o| o.effect == Effect::Model).map(|o| ParamDoc { name: names(o), ty: o.ty, default: o.default.to_string(), doc: o.doc }).collect();
    vec![
        KindDoc { extension_point: "fio_option", kind: "modelled", summary: "fio options that shape the requests, their pacing or the job's phases", params: modelled, platform: None },
        KindDoc { extension_point: "fio_option", kind: "accepted", summary: "accepted without effect on the model; listed once per run as \"ignored: ...\"", params: by_reason(&[Effect::Report, Effect::Ignored], "accepted"), platform: None },
        KindDoc { extension_point: "fio_option", kind: "cannot_be_modelled", summary: "fio options sanlab stops at, saying why", params: by_reason(&[Effect::Unmodelled], "error"), platform: None },
    ]
}

/// Whether an option of fio's own takes an argument (getopt's `has_arg`).
#[derive(Clone, Copy, PartialEq, Debug)]
pub(super) enum Argument {
    No,
    /// In the same word (`--output=f`, `-of`) or the next one (`--output f`, `-o f`).
    Required,
    /// Only in the same word (`--bandwidth-log=x`, `-bx`).
    Optional,
}

/// What an option of fio's own does to what sanlab simulates.
#[derive(Clone, Copy, PartialEq, Debug)]
pub(super) enum Use {
    /// It changes what fio prints, where, or how fio runs itself: accepted without effect.
    NoEffect,
    /// fio does something else than run the jobs: refused, for this reason.
    Refused(&'static str),
}

/// One of fio's own command-line options (init.c `l_opts`, axboe/fio at f5344384).
pub(super) struct OwnOption {
    pub(super) long: &'static str,
    pub(super) short: char,
    pub(super) argument: Argument,
    pub(super) effect: Use,
}

const PRINTS: Use = Use::Refused("fio prints something and exits: it runs no job");
const REMOTE: Use = Use::Refused("it runs fio as a client or server of other machines: describe each machine's jobs on its own host");
const SELF_TEST: Use = Use::Refused("a self-test of fio's own code: it does no I/O");

/// Job and engine options fio reads as flags (type FIO_OPT_STR_SET in options.c and engines/*.c,
/// at f5344384): on the command line only `--flag=value` gives them a value.
pub(super) const FLAGS: [&str; 27] = [
    "bs_unaligned", "blocksize_unaligned", "norandommap", "time_based", "verify_only", "exitall", "exitall_on_error", "stonewall", "wait_for_previous",
    "new_group", "thread", "group_reporting", "zero_buffers", "refill_buffers", "dummy", "fixedbufs", "hipri", "libblkio_force_enable_completion_eventfd",
    "libblkio_vectored", "libblkio_write_zeroes_on_trim", "listen", "no_completion_thread", "pingpong", "registerfiles", "sqthread_poll", "userspace_reap", "xnvme_iovec",
];

const fn own(long: &'static str, short: char, argument: Argument, effect: Use) -> OwnOption {
    OwnOption { long, short, argument, effect }
}

pub(super) const OWN_OPTIONS: [OwnOption; 40] = {
    use Argument::*;
    use Use::NoEffect;
    [
        own("output", 'o', Required, NoEffect),
        own("latency-log", 'l', Required, NoEffect),
        own("bandwidth-log", 'b', Optional, NoEffect),
        own("minimal", 'm', No, NoEffect),
        own("output-format", 'F', Required, NoEffect),
        own("append-terse", 'f', Optional, NoEffect),
        own("version", 'v', No, PRINTS),
        own("help", 'h', No, PRINTS),
        own("cmdhelp", 'c', Optional, PRINTS),
        own("enghelp", 'i', Optional, PRINTS),
        own("showcmd", 's', No, PRINTS),
        own("readonly", 'r', No, NoEffect),
        own("eta", 'e', Required, NoEffect),
        own("eta-interval", 'O', Required, NoEffect),
        own("eta-newline", 'E', Required, NoEffect),
        own("debug", 'd', Required, NoEffect),
        own("parse-only", 'P', No, Use::Refused("fio parses the jobs and exits: nothing runs")),
        own("section", 'x', Required, Use::Refused("it picks sections of a job file: read the file with kind = \"fio_file\" and `jobs = [...]`")),
        own("inflate-log", 'X', Required, PRINTS),
        own("alloc-size", 'a', Required, NoEffect),
        own("profile", 'p', Required, Use::Refused("a profile (tiobench, act) makes its own jobs: give sanlab the jobs themselves")),
        own("warnings-fatal", 'w', No, NoEffect),
        own("max-jobs", 'j', Required, NoEffect),
        own("terse-version", 'V', Required, NoEffect),
        own("server", 'S', Optional, REMOTE),
        own("server-internal", 'N', Required, REMOTE),
        own("daemonize", 'D', Required, REMOTE),
        own("client", 'C', Required, REMOTE),
        own("remote-config", 'R', Required, REMOTE),
        own("cpuclock-test", 'T', No, SELF_TEST),
        own("crctest", 'G', Optional, SELF_TEST),
        own("memcpytest", 'M', Optional, SELF_TEST),
        own("idle-prof", 'I', Required, NoEffect),
        own("status-interval", 'L', Required, NoEffect),
        own("trigger-file", 'W', Required, NoEffect),
        own("trigger-timeout", 'B', Required, NoEffect),
        own("trigger", 'H', Required, NoEffect),
        own("trigger-remote", 'J', Required, NoEffect),
        own("aux-path", 'K', Required, NoEffect),
        own("merge-blktrace-only", 'A', No, Use::Refused("fio merges blktrace files and exits: it runs no job")),
    ]
};

/// fio's own option of this long name.
pub(super) fn own_option(long: &str) -> Option<&'static OwnOption> {
    OWN_OPTIONS.iter().find(|o| o.long == long)
}
