//! How fio samples a job's bandwidth and IOPS for the `bw_min/max/mean/dev/samples` and
//! `iops_*` figures of its output (facts from fio's stat.c `__add_samples`, `add_bw_sample`,
//! `add_iops_sample`, and init.c's log setup, axboe/fio f5344384; HOWTO `bwavgtime`,
//! `iopsavgtime`, `log_avg_msec`):
//!
//! - every `bwavgtime` (`iopsavgtime`) ms of the job's measured time, 500 by default, each
//!   direction that completed I/O in the window gets one sample: its bytes over the window in
//!   KiB/s (its I/Os per second), in whole units;
//! - a job writing the matching log (`write_bw_log`, `write_iops_log`) averages it over
//!   `log_avg_msec`; without `bwavgtime` that also becomes the statistics' window, and when the
//!   log's window is 0 (the default) or the log is compressed (`log_compression`,
//!   `log_store_compressed`), fio logs and samples every I/O instead.

use super::values::{parse_bool, parse_int, OptionError, OptionValues};
use crate::plan::RateSampling;

/// The sampling of bandwidth and of IOPS, `[bw, iops]`, for a job's options; `compressed` says
/// whether its logs are compressed (a `log_compression` above 0).
pub(crate) fn rate_sampling(v: &OptionValues, compressed: bool) -> Result<[RateSampling; 2], OptionError> {
    let ms_of = |o: &'static str, min: i64| v.get(o).map(|s| parse_int(o, s, min, i64::from(u32::MAX)).map(|n| n as u64)).transpose();
    let log_avg_ms = ms_of("log_avg_msec", 0)?.unwrap_or(0);
    let compressed = compressed || v.get("log_store_compressed").map(|s| parse_bool("log_store_compressed", s)).transpose()?.unwrap_or(false);
    let one = |avg_option: &'static str, log_option: &str| -> Result<RateSampling, OptionError> {
        let avg_ms = ms_of(avg_option, 1)?;
        if v.get(log_option).is_none() {
            return Ok(avg_ms.map_or(RateSampling::DEFAULT, |ms| RateSampling::Window { ms }));
        }
        // The log's own window: the smaller of the two when both are given.
        let log_window_ms = avg_ms.map_or(log_avg_ms, |a| a.min(log_avg_ms));
        Ok(if log_window_ms == 0 || compressed { RateSampling::PerIo } else { RateSampling::Window { ms: avg_ms.unwrap_or(log_avg_ms) } })
    };
    Ok([one("bwavgtime", "write_bw_log")?, one("iopsavgtime", "write_iops_log")?])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sampling(options: &[(&'static str, &str)]) -> Result<[RateSampling; 2], OptionError> {
        rate_sampling(&OptionValues::of(options), false)
    }

    #[test]
    fn windows_default_to_500_ms_and_follow_the_avgtime_options() {
        assert_eq!(sampling(&[]).unwrap(), [RateSampling::Window { ms: 500 }; 2]);
        assert_eq!(sampling(&[("bwavgtime", "250"), ("iopsavgtime", "1000")]).unwrap(), [RateSampling::Window { ms: 250 }, RateSampling::Window { ms: 1000 }]);
    }

    #[test]
    fn a_log_without_a_window_samples_every_io() {
        assert_eq!(sampling(&[("write_bw_log", "x")]).unwrap(), [RateSampling::PerIo, RateSampling::Window { ms: 500 }]);
        assert_eq!(sampling(&[("write_iops_log", ""), ("bwavgtime", "100")]).unwrap(), [RateSampling::Window { ms: 100 }, RateSampling::PerIo]);
        // bwavgtime given: the log's window is the smaller, the statistics keep bwavgtime.
        assert_eq!(sampling(&[("write_bw_log", "x"), ("bwavgtime", "100"), ("log_avg_msec", "1000")]).unwrap()[0], RateSampling::Window { ms: 100 });
        assert_eq!(sampling(&[("write_bw_log", "x"), ("bwavgtime", "100")]).unwrap()[0], RateSampling::PerIo);
        // Without it, log_avg_msec is the statistics' window too.
        assert_eq!(sampling(&[("write_bw_log", "x"), ("log_avg_msec", "2000")]).unwrap()[0], RateSampling::Window { ms: 2000 });
        assert_eq!(sampling(&[("write_bw_log", "x"), ("log_avg_msec", "2000"), ("log_store_compressed", "1")]).unwrap()[0], RateSampling::PerIo);
        let v = OptionValues::of(&[("write_iops_log", "x"), ("log_avg_msec", "1000")]);
        assert_eq!(rate_sampling(&v, true).unwrap()[1], RateSampling::PerIo);
    }

    #[test]
    fn bad_windows_are_errors() {
        for (o, s) in [("bwavgtime", "0"), ("iopsavgtime", "-5"), ("log_avg_msec", "1s"), ("log_store_compressed", "maybe")] {
            let e = sampling(&[(o, s)]).unwrap_err();
            assert_eq!(e.option, o, "{s}");
        }
    }
}
