//! `[run]`: duration, warm-up, seed and sampling.

use sanlab_des::NS_PER_S;
use sanlab_model::topology::RunConfig;
use sanlab_spec::{format_duration, Spec, SpecResult};

pub(super) fn read(top: &Spec) -> SpecResult<RunConfig> {
    let run_spec = top.table("run", "run length, seed and sampling")?;
    let duration_ns = run_spec.duration_ns("duration", Some((60 * NS_PER_S, "60s")), "simulated time")?;
    let warmup_ns = run_spec.duration_ns("warmup", Some((0, "0s")), "excluded from summary statistics")?;
    let seed = run_spec.int("seed", Some(1), 0, i64::MAX, "run seed")? as u64;
    let sample_interval_ns = run_spec.duration_ns("sample_interval", Some((NS_PER_S, "1s")), "time-series interval")?;
    if duration_ns == 0 {
        return Err(run_spec.error("duration", "must be positive, e.g. \"60s\""));
    }
    if warmup_ns >= duration_ns {
        return Err(run_spec.error(
            "warmup",
            format!(
                "{} must be shorter than run.duration ({}): run longer than the warm-up (e.g. --duration {}) or shorten it (--set run.warmup=0s)",
                format_duration(warmup_ns),
                format_duration(duration_ns),
                format_duration(2 * warmup_ns)
            ),
        ));
    }
    if sample_interval_ns == 0 {
        return Err(run_spec.error("sample_interval", "must be positive, e.g. \"1s\""));
    }
    run_spec.finish()?;
    Ok(RunConfig { duration_ns, warmup_ns, seed, sample_interval_ns })
}
