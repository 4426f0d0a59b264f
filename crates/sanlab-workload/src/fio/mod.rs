//! fio job options (axboe/fio HOWTO.rst at f5344384, and the code named beside each quirk). One
//! option reader serves the `fio` kind (options in the scenario) and `fio_file` (job files read as
//! they are): both collect option texts, then [`FioJob::from_options`] turns them into a job.
//!
//! What the two differ in is [`Dialect`]: sizes in a scenario follow sanlab's units (KiB = 1024,
//! KB = 1000) and a scenario job runs for the whole run by default; a job file follows fio, whose
//! `kb_base=1024` makes k and KB 1024 but KiB 1000, whose jobs stop after `size` bytes unless
//! `time_based`, and whose default engine (psync) keeps one request outstanding whatever `iodepth`.
//!
//! Files, from the floor up: `values.rs` (option texts, units, fio's number parsers) and
//! `options.rs` (every option fio knows, its command line's own too) at the bottom; the option groups with their own state
//! (`block_sizes.rs`, `verify.rs`, `region.rs`, `steer.rs`, `flow.rs`, `sync.rs`, `rates.rs`,
//! `lfsr.rs`, `random_map.rs`); `job.rs` (the job, built from options, drawing requests); `file.rs`
//! (job files) and `cmdline.rs` (command lines); this file, the face.

mod block_sizes;
mod cmdline;
mod file;
mod flow;
mod job;
mod lfsr;
mod options;
mod random_map;
mod rates;
mod region;
mod steer;
mod sync;
#[cfg(test)]
mod tests;
mod values;
mod verify;

pub(crate) use file::KIND as FILE_KIND;
pub(crate) use options::{coverage as option_coverage, kinds as option_kinds};

use job::FioJob;
use options::OPTIONS;
use values::{Dialect, OptionValues};
use crate::face::JobSource;
use sanlab_spec::{Kind, Spec, SpecResult};

pub const KIND: Kind<dyn JobSource> = Kind {
    name: "fio",
    summary: "fio job options in the scenario (rw, bs, bssplit, iodepth, rate_iops, random_distribution, thinktime, ...)",
    build,
};

fn build(spec: &Spec) -> SpecResult<Box<dyn JobSource>> {
    let cmdline = spec.opt_string("cmdline", "a fio command line, e.g. \"fio --name=w --ioengine=libaio --iodepth=8 --rw=randwrite --bs=512k\"; read with fio's units and defaults, instead of the keys below")?;
    if let Some(text) = cmdline {
        let device_size_bytes = spec.size_bytes("device_size", Some((100 << 30, "100GiB")), "with cmdline: disk size for jobs without --size and for sizes in percent")?;
        return Ok(Box::new(cmdline::cmdline_jobs(&text, device_size_bytes).map_err(|e| spec.error("cmdline", e))?));
    }
    let mut values = OptionValues::default();
    for o in OPTIONS.iter().filter(|o| o.scenario) {
        if let Some(text) = o.scenario_text(spec)? {
            values.set(o.name, text);
        }
    }
    if spec.is_describing() {
        return Ok(Box::new(FioJob::from_options(&OptionValues::default(), Dialect::Scenario).expect("defaults are valid")));
    }
    let job = FioJob::from_options(&values, Dialect::Scenario).map_err(|e| spec.error(e.option, e.message))?;
    Ok(Box::new(job))
}
