//! SIOC's automatic congestion threshold, found as the product finds it: before the run, an
//! injector on one host issues random reads to the idle datastore at rising outstanding-I/O levels
//! (VMware: "injects random read I/O to the disk, using various amounts of outstanding I/O to
//! measure the latency", a cycle of about 30 s run while the datastore is idle), the peak of the
//! measured throughputs is taken as the datastore's peak, and the threshold is the device latency
//! at `percent_of_peak` % of it (vSphere 5.1+, default 90 %).
//!
//! Each level is its own short run of the same scenario with every VM replaced by the injector
//! (on the host of the volume's first VM, through an ideal virtual adapter), flow control off and
//! none of the scenario's `[[event]]`s: the injector measures the healthy, idle datastore before
//! the run, not the faults the run will meet. A curve with no throughput at all (every level
//! measured 0 IOPS) has no peak and so no threshold: the run is refused with the reason rather
//! than given a 0 ms threshold.
//! Ours where VMware is silent: the levels ([`INJECTOR_OUTSTANDING`]), the read size (a
//! parameter, 8 KiB), the first quarter of each level left out as its warm-up, and the linear
//! interpolation of latency between the two levels around the target throughput.

use crate::topology;
use sanlab_model::host::flow_control::{Injector, INJECTOR_CYCLE_NS, INJECTOR_OUTSTANDING};
use sanlab_spec::{SpecError, SpecResult};
use sanlab_model::topology::Topology;
use sanlab_model::World;
use serde::Serialize;
use toml::{Table, Value};

#[derive(Serialize, Clone, Debug)]
pub struct InjectorPoint {
    pub outstanding: u32,
    pub iops: f64,
    /// Mean device latency (esxtop DAVG) at this level.
    pub latency_ms: f64,
}

/// What the injector measured for one volume, and the threshold it set.
#[derive(Serialize, Clone, Debug)]
pub struct InjectorReport {
    pub volume: String,
    pub host: String,
    pub io_size_bytes: u64,
    pub span_bytes: u64,
    pub points: Vec<InjectorPoint>,
    pub peak_iops: f64,
    pub percent_of_peak: f64,
    pub threshold_ms: f64,
}

/// Sets the thresholds `reports` measured on another build of the same scenario, as
/// [`measure`] set them there.
pub fn apply(reports: &[InjectorReport], topology: &mut Topology) {
    for r in reports {
        if let Some(f) = topology.volumes.iter_mut().find(|v| v.name == r.volume).and_then(|v| v.flow_control.as_mut()) {
            f.set_threshold_ns(r.threshold_ms * 1e6);
        }
    }
}

/// Measures the threshold of every volume whose flow control asks for it, and sets it.
pub fn measure(table: &Table, topology: &mut Topology, base_dir: &std::path::Path) -> SpecResult<Vec<InjectorReport>> {
    let mut reports = vec![];
    for v in 0..topology.volumes.len() {
        let Some(injector) = topology.volumes[v].flow_control.as_ref().and_then(|f| f.injector()).copied() else { continue };
        // A volume no VM uses controls no device: nothing to measure.
        let Some(first_vm) = topology.vms.iter().find(|vm| vm.volume == v) else { continue };
        let host = topology.hosts[first_vm.host].name.clone();
        let volume = topology.volumes[v].name.clone();
        let span = match injector.span_bytes {
            Some(s) => 0..s,
            None => vms_region(topology, v).ok_or_else(|| {
                SpecError::new(
                    format!("volume[{v}].flow_control.injector_span"),
                    format!("the VMs of volume `{volume}` address no fixed region (traces or vdbench jobs): set injector_span to the bytes of the datastore in use, e.g. \"100GiB\""),
                )
            })?,
        };
        let mut points = vec![];
        for outstanding in INJECTOR_OUTSTANDING {
            let level = level_table(table, &host, &volume, &injector, &span, outstanding);
            let mut world = World::new(topology::build(&level, base_dir)?).map_err(|m| SpecError::new(format!("volume[{v}].flow_control"), format!("the injector's run failed: {m}")))?;
            world.run(None);
            let report = world.report();
            let device = &report.devices[0];
            points.push(InjectorPoint { outstanding, iops: device.iops, latency_ms: device.davg_ms });
        }
        let (peak_iops, threshold_ms) = threshold(&points, injector.percent_of_peak);
        if let Some(why) = unmeasured(peak_iops, threshold_ms) {
            return Err(SpecError::new(
                format!("volume[{v}].flow_control.threshold_mode"),
                format!("the injector found no automatic threshold for volume `{volume}` from host `{host}`: {why}; expected a datastore the injector can reach before the run (nearest valid: threshold_mode = \"manual\" with a congestion_threshold)"),
            ));
        }
        if let Some(f) = topology.volumes[v].flow_control.as_mut() {
            f.set_threshold_ns(threshold_ms * 1e6);
        }
        reports.push(InjectorReport {
            volume,
            host,
            io_size_bytes: injector.io_size_bytes,
            span_bytes: span.end - span.start,
            points,
            peak_iops,
            percent_of_peak: injector.percent_of_peak,
            threshold_ms,
        });
    }
    Ok(reports)
}

/// The bytes the volume's VMs address: from the lowest start to the highest end of their jobs.
fn vms_region(topology: &Topology, volume: usize) -> Option<std::ops::Range<u64>> {
    topology
        .jobs
        .iter()
        .filter(|j| topology.vms[j.vm].volume == volume)
        .filter_map(|j| j.plan.region_bytes.clone())
        .reduce(|a, b| a.start.min(b.start)..a.end.max(b.end))
}

/// The scenario with the injector as its only VM and no flow control, for one level.
fn level_table(table: &Table, host: &str, volume: &str, injector: &Injector, span: &std::ops::Range<u64>, outstanding: u32) -> Table {
    let level_ns = INJECTOR_CYCLE_NS / INJECTOR_OUTSTANDING.len() as u64;
    let mut t = table.clone();
    t.remove("variant");
    // The injector runs before the run, on the healthy array: the run's faults are not its.
    t.remove("event");
    let seed = t.get("run").and_then(|r| r.get("seed")).cloned().unwrap_or(Value::Integer(1));
    let ns = |n: u64| Value::String(format!("{n}ns"));
    t.insert("run".into(), Value::Table(Table::from_iter([("duration".into(), ns(level_ns)), ("warmup".into(), ns(level_ns / 4)), ("sample_interval".into(), ns(level_ns)), ("seed".into(), seed)])));
    if let Some(Value::Array(volumes)) = t.get_mut("volume") {
        for v in volumes.iter_mut().filter_map(Value::as_table_mut) {
            v.remove("flow_control");
        }
    }
    let job = Table::from_iter([
        ("kind".to_string(), Value::from("fio")),
        ("rw".into(), Value::from("randread")),
        ("bs".into(), Value::from(injector.io_size_bytes.to_string())),
        ("iodepth".into(), Value::from(i64::from(outstanding))),
        ("offset".into(), Value::from(span.start.to_string())),
        ("size".into(), Value::from((span.end - span.start).to_string())),
    ]);
    let vm = Table::from_iter([
        ("name".to_string(), Value::from("sioc-injector")),
        ("host".into(), Value::from(host)),
        ("volume".into(), Value::from(volume)),
        ("adapter".into(), Value::Table(Table::from_iter([("kind".to_string(), Value::from("ideal"))]))),
        ("job".into(), Value::Array(vec![Value::Table(job)])),
    ]);
    t.insert("vm".into(), Value::Array(vec![Value::Table(vm)]));
    t
}

/// The peak throughput, and the latency where the curve first reaches `percent` % of it
/// (interpolated linearly between the levels on each side).
fn threshold(points: &[InjectorPoint], percent: f64) -> (f64, f64) {
    let peak = points.iter().map(|p| p.iops).fold(0.0, f64::max);
    let target = peak * percent / 100.0;
    let i = points.iter().position(|p| p.iops >= target).unwrap_or(points.len() - 1);
    if i == 0 {
        return (peak, points[0].latency_ms);
    }
    let (a, b) = (&points[i - 1], &points[i]);
    let f = (target - a.iops) / (b.iops - a.iops);
    (peak, a.latency_ms + f * (b.latency_ms - a.latency_ms))
}

/// Why a measured curve gives no threshold (no throughput at any level, or no latency), if so.
fn unmeasured(peak_iops: f64, threshold_ms: f64) -> Option<String> {
    if peak_iops.is_nan() || peak_iops <= 0.0 {
        Some(format!("it measured {peak_iops} IOPS at every level"))
    } else if threshold_ms.is_nan() || threshold_ms <= 0.0 || threshold_ms.is_infinite() {
        Some(format!("the latency at the target throughput is {threshold_ms} ms"))
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(outstanding: u32, iops: f64, latency_ms: f64) -> InjectorPoint {
        InjectorPoint { outstanding, iops, latency_ms }
    }

    #[test]
    fn the_threshold_is_the_latency_at_the_percent_of_peak() {
        let curve = [p(1, 100.0, 10.0), p(2, 180.0, 11.0), p(4, 200.0, 20.0), p(8, 190.0, 42.0)];
        // 90 % of 200 = 180: exactly the second level.
        assert_eq!(threshold(&curve, 90.0), (200.0, 11.0));
        // 95 % = 190: halfway from 180 to 200 IOPS, so halfway from 11 to 20 ms.
        assert_eq!(threshold(&curve, 95.0), (200.0, 15.5));
        assert_eq!(threshold(&curve, 50.0), (200.0, 10.0));
    }

    #[test]
    fn a_curve_with_no_throughput_sets_no_threshold() {
        let dead = [p(1, 0.0, 0.0), p(2, 0.0, 0.0), p(4, 0.0, 0.0)];
        let (peak, ms) = threshold(&dead, 90.0);
        assert_eq!((peak, ms), (0.0, 0.0), "what the injector would have set");
        assert!(unmeasured(peak, ms).unwrap().contains("measured 0 IOPS at every level"));
        let curve = [p(1, 100.0, 10.0), p(2, 180.0, 11.0)];
        let (peak, ms) = threshold(&curve, 90.0);
        assert_eq!(unmeasured(peak, ms), None);
    }
}
