//! Linux dm-multipath `service-time` (drivers/md/dm-ps-service-time.c; multipath-tools' default
//! selector, "service-time 0"): the path of the group whose estimated service time
//! `(in-flight bytes + this I/O's bytes) / relative_throughput` is lowest; ties go to the higher
//! throughput, then rotate. A path with relative throughput 0 is used only when no path with a
//! positive one is left. No latency is measured.

use super::dm_groups::{least, DmGroups};
use super::{PathSelector, PathState, PspEvent};
use sanlab_spec::{did_you_mean, Kind, Spec, SpecResult};
use sanlab_des::SimTime;

pub const KIND: Kind<dyn PathSelector> = Kind {
    name: "dm_service_time",
    summary: "Linux dm-multipath service-time: least (in-flight bytes + size) / relative_throughput",
    build,
};

struct DmServiceTime {
    groups: DmGroups,
    /// Per path name, from the scenario; resolved at attach.
    throughput_by_name: Vec<(String, u32)>,
    throughput: Vec<u32>,
    next: usize,
}

fn build(spec: &Spec) -> SpecResult<Box<dyn PathSelector>> {
    let groups = DmGroups::read(spec)?;
    let table = spec.table("relative_throughput", "per path name, 0..=100 (default 1; 0: only when no other path is left)")?;
    let mut throughput_by_name = vec![];
    for (name, _) in table.entries() {
        let t = table.int(name, None, 0, 100, "relative throughput of this path")?;
        throughput_by_name.push((name.to_string(), t as u32));
    }
    table.finish()?;
    Ok(Box::new(DmServiceTime { groups, throughput_by_name, throughput: vec![], next: 0 }))
}

impl PathSelector for DmServiceTime {
    fn attach(&mut self, names: &[String]) -> Result<(), String> {
        self.throughput = vec![1; names.len()];
        for (name, t) in &self.throughput_by_name {
            let i = names.iter().position(|n| n == name).ok_or_else(|| {
                format!("relative_throughput names `{name}`, which is not a path of this device{}", did_you_mean(name, names.iter().map(String::as_str)))
            })?;
            self.throughput[i] = *t;
        }
        Ok(())
    }

    fn select(&mut self, now: SimTime, size: u32, paths: &[PathState], _log: &mut Vec<PspEvent>) -> Option<usize> {
        let in_group = self.groups.choose(now, paths)?;
        let any_positive = (0..paths.len()).any(|i| in_group.has(i, &paths[i]) && self.throughput[i] > 0);
        let candidate = |i: usize| in_group.has(i, &paths[i]) && (self.throughput[i] > 0 || !any_positive);
        // Lowest service time; among equal ones the higher throughput (the key's small second term).
        let key = |i: usize| {
            let t = f64::from(self.throughput[i].max(1));
            (paths[i].outstanding_bytes as f64 + f64::from(size)) / t - t * 1e-9
        };
        let pick = least(paths.len(), self.next, candidate, key)?;
        self.next = (pick + 1) % paths.len();
        Some(pick)
    }
}

#[cfg(test)]
mod tests {
    use super::super::{test_util::*, Alua::*};

    #[test]
    fn bytes_in_flight_over_relative_throughput() {
        let mut p = paths(&[(ActiveOptimized, true), (ActiveOptimized, true)]);
        let mut s = build("dm_service_time", "");
        s.attach(&["a".into(), "b".into()]).unwrap();
        p[0].outstanding_bytes = 8192;
        assert_eq!(s.select(0, 4096, &p, &mut vec![]), Some(1));
        let mut s = build("dm_service_time", "relative_throughput = { a = 4 }");
        s.attach(&["a".into(), "b".into()]).unwrap();
        // a: (8192 + 4096) / 4 = 3072 < b: 4096 / 1.
        assert_eq!(s.select(0, 4096, &p, &mut vec![]), Some(0));
        let mut s = build("dm_service_time", "relative_throughput = { b = 0 }");
        s.attach(&["a".into(), "b".into()]).unwrap();
        assert_eq!(s.select(0, 4096, &p, &mut vec![]), Some(0), "b only when a is gone");
        assert!(build("dm_service_time", "relative_throughput = { c = 1 }").attach(&["a".into()]).unwrap_err().contains("`c`, which is not a path"));
    }
}
