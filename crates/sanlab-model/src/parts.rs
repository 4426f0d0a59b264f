//! Independent parts of a topology, run apart and reported as one run.
//!
//! Hosts, arrays and volumes fall into groups that share nothing: no path, link, volume,
//! replication pair or job dependency crosses from one group to another (an estate of several
//! clusters, each with its own arrays). Each group's events then depend only on its own: every
//! component draws from a random stream named after it, and events at one instant leave in the
//! order they were scheduled, which only the group's own events decide. So a group run alone
//! gives its entities the figures of the whole run, bit for bit, and the parts of a topology may
//! run on separate cores. [`merge`] puts their reports back in the whole run's order.
//!
//! A topology with fault events is not split: a fault's report row holds the longest latency of
//! every VM between its edges.

use crate::engine::build::{SeriesStep, SERIES_STEPS};
use crate::report::RunReport;
use crate::topology::Topology;
use sanlab_metrics::TimeSeries;

/// One part: the whole topology's indices of its entities, each list in ascending order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Part {
    pub hosts: Vec<usize>,
    pub arrays: Vec<usize>,
    pub replications: Vec<usize>,
    pub volumes: Vec<usize>,
    pub links: Vec<usize>,
    pub devices: Vec<usize>,
    pub vms: Vec<usize>,
    pub jobs: Vec<usize>,
}

/// Connected groups over hosts, arrays, volumes and links (nodes in that order).
struct Groups {
    parent: Vec<usize>,
    arrays_from: usize,
    volumes_from: usize,
    links_from: usize,
}

impl Groups {
    fn new(t: &Topology) -> Self {
        let arrays_from = t.hosts.len();
        let volumes_from = arrays_from + t.arrays.len();
        let links_from = volumes_from + t.volumes.len();
        Self { parent: (0..links_from + t.links.len()).collect(), arrays_from, volumes_from, links_from }
    }

    fn root(&mut self, mut x: usize) -> usize {
        while self.parent[x] != x {
            self.parent[x] = self.parent[self.parent[x]];
            x = self.parent[x];
        }
        x
    }

    fn join(&mut self, a: usize, b: usize) {
        let (a, b) = (self.root(a), self.root(b));
        self.parent[a.max(b)] = a.min(b);
    }

    fn host(&self, h: usize) -> usize {
        h
    }

    fn array(&self, a: usize) -> usize {
        self.arrays_from + a
    }

    fn volume(&self, v: usize) -> usize {
        self.volumes_from + v
    }

    fn link(&self, l: usize) -> usize {
        self.links_from + l
    }
}

/// The topology's independent groups gathered into at most `most` parts of about equal numbers
/// of jobs (largest group first, into the part with the fewest), each part's entities in the
/// whole's order. One part (the whole) when the topology has fault events, one group, or
/// `most` is 1.
pub fn parts(t: &Topology, most: usize) -> Vec<Part> {
    let whole = || vec![whole_part(t)];
    if most < 2 || !t.faults.is_empty() {
        return whole();
    }
    let mut g = Groups::new(t);
    for d in &t.devices {
        for p in &d.paths {
            g.join(g.host(d.host), g.link(p.link));
            g.join(g.host(d.host), g.array(p.array));
        }
    }
    for r in &t.replications {
        g.join(g.array(r.arrays[0]), g.array(r.arrays[1]));
    }
    for (k, v) in t.volumes.iter().enumerate() {
        if let Some(r) = v.replication {
            g.join(g.volume(k), g.array(t.replications[r].arrays[0]));
        }
    }
    for vm in &t.vms {
        g.join(g.host(vm.host), g.volume(vm.volume));
        g.join(g.host(vm.host), g.host(t.devices[vm.device].host));
    }
    for j in &t.jobs {
        let host_of = |job: usize| t.vms[t.jobs[job].vm].host;
        for &other in j.after.iter().chain([&j.set]) {
            g.join(g.host(t.vms[j.vm].host), g.host(host_of(other)));
        }
    }
    // Each node's group (its root), and each group's jobs.
    let root: Vec<usize> = (0..g.parent.len()).map(|x| g.root(x)).collect();
    let mut weight = vec![0usize; root.len()];
    for j in &t.jobs {
        weight[root[g.host(t.vms[j.vm].host)]] += 1;
    }
    let mut groups: Vec<usize> = (0..root.len()).filter(|&x| root[x] == x && weight[x] > 0).collect();
    if groups.len() < 2 {
        return whole();
    }
    groups.sort_by_key(|&x| (std::cmp::Reverse(weight[x]), x));
    let count = most.min(groups.len());
    let mut load = vec![0usize; count];
    let mut part_of_root = vec![0usize; root.len()];
    for x in groups {
        let lightest = (0..count).min_by_key(|&k| (load[k], k)).unwrap_or(0);
        load[lightest] += weight[x];
        part_of_root[x] = lightest;
    }
    // Groups without jobs (an array no host uses, say) go with the first part.
    let part_of = |node: usize| part_of_root[root[node]];
    let mut out = vec![Part::default(); count];
    for h in 0..t.hosts.len() {
        out[part_of(g.host(h))].hosts.push(h);
    }
    for a in 0..t.arrays.len() {
        out[part_of(g.array(a))].arrays.push(a);
    }
    for v in 0..t.volumes.len() {
        out[part_of(g.volume(v))].volumes.push(v);
    }
    for l in 0..t.links.len() {
        out[part_of(g.link(l))].links.push(l);
    }
    for (r, rep) in t.replications.iter().enumerate() {
        out[part_of(g.array(rep.arrays[0]))].replications.push(r);
    }
    for (d, dev) in t.devices.iter().enumerate() {
        out[part_of(g.host(dev.host))].devices.push(d);
    }
    for (v, vm) in t.vms.iter().enumerate() {
        out[part_of(g.host(vm.host))].vms.push(v);
    }
    for (j, job) in t.jobs.iter().enumerate() {
        out[part_of(g.host(t.vms[job.vm].host))].jobs.push(j);
    }
    out
}

fn whole_part(t: &Topology) -> Part {
    Part {
        hosts: (0..t.hosts.len()).collect(),
        arrays: (0..t.arrays.len()).collect(),
        replications: (0..t.replications.len()).collect(),
        volumes: (0..t.volumes.len()).collect(),
        links: (0..t.links.len()).collect(),
        devices: (0..t.devices.len()).collect(),
        vms: (0..t.vms.len()).collect(),
        jobs: (0..t.jobs.len()).collect(),
    }
}

/// The whole's index → the part's (`usize::MAX` where the part has none).
fn local_of(whole: &[usize], n: usize) -> Vec<usize> {
    let mut local = vec![usize::MAX; n];
    for (k, &w) in whole.iter().enumerate() {
        local[w] = k;
    }
    local
}

/// The items of `items` at the indices `keep` (ascending).
fn kept<T>(items: Vec<T>, keep: &[usize]) -> Vec<T> {
    let mut next = keep.iter().peekable();
    items.into_iter().enumerate().filter_map(|(k, item)| (next.next_if_eq(&&k).is_some()).then_some(item)).collect()
}

impl Topology {
    /// The part `p` of this topology (from [`parts`]), its references renumbered within it.
    pub fn into_part(self, p: &Part) -> Topology {
        let host = local_of(&p.hosts, self.hosts.len());
        let array = local_of(&p.arrays, self.arrays.len());
        let replication = local_of(&p.replications, self.replications.len());
        let volume = local_of(&p.volumes, self.volumes.len());
        let link = local_of(&p.links, self.links.len());
        let device = local_of(&p.devices, self.devices.len());
        let vm = local_of(&p.vms, self.vms.len());
        let job = local_of(&p.jobs, self.jobs.len());
        let mut replications = kept(self.replications, &p.replications);
        for r in &mut replications {
            r.arrays = r.arrays.map(|a| array[a]);
            r.preferred = r.preferred.map(|a| array[a]);
        }
        let mut volumes = kept(self.volumes, &p.volumes);
        for v in &mut volumes {
            v.replication = v.replication.map(|r| replication[r]);
        }
        let mut devices = kept(self.devices, &p.devices);
        for d in &mut devices {
            d.host = host[d.host];
            for path in &mut d.paths {
                path.link = link[path.link];
                path.array = array[path.array];
            }
        }
        let mut vms = kept(self.vms, &p.vms);
        for v in &mut vms {
            (v.host, v.device, v.volume) = (host[v.host], device[v.device], volume[v.volume]);
        }
        let mut jobs = kept(self.jobs, &p.jobs);
        for j in &mut jobs {
            j.vm = vm[j.vm];
            j.set = job[j.set];
            j.after.iter_mut().for_each(|a| *a = job[*a]);
        }
        Topology {
            run: self.run,
            hosts: kept(self.hosts, &p.hosts),
            arrays: kept(self.arrays, &p.arrays),
            replications,
            volumes,
            links: kept(self.links, &p.links),
            devices,
            vms,
            jobs,
            faults: self.faults,
        }
    }
}

/// An ordering key: items of an earlier section first, then by the whole's index.
fn key(section: usize, index: usize) -> usize {
    (section << 40) | index
}

/// Each of `items` with its key.
fn keyed<T>(items: Vec<T>, key: impl Fn(usize, &T) -> usize) -> impl Iterator<Item = (usize, T)> {
    items.into_iter().enumerate().map(move |(k, item)| (key(k, &item), item))
}

/// Items with their keys, in key order (the order they came in among equal keys).
fn in_order<T>(mut items: Vec<(usize, T)>) -> Vec<T> {
    items.sort_by_key(|(key, _)| *key);
    items.into_iter().map(|(_, item)| item).collect()
}

/// The keys of a part's conservation rows: its VMs, jobs, each device then its paths, arrays
/// (the order of `World::conservation`).
fn conservation_keys(p: &Part, paths_per_device: &[usize]) -> Vec<usize> {
    let mut keys: Vec<usize> = p.vms.iter().map(|&v| key(0, v)).collect();
    keys.extend(p.jobs.iter().map(|&j| key(1, j)));
    for (&d, &paths) in p.devices.iter().zip(paths_per_device) {
        keys.extend(std::iter::repeat_n(key(2, d), 1 + paths));
    }
    keys.extend(p.arrays.iter().map(|&a| key(3, a)));
    keys
}

/// The reports of the parts of one topology, each run apart over the same time, as the report of
/// one run of the whole: every list in the whole's order, the run's counts summed. The sample
/// events every part handles are counted once.
pub fn merge(parts: Vec<(RunReport, &Part)>) -> RunReport {
    let (sim_time_s, measured_s) = (parts[0].0.sim_time_s, parts[0].0.measured_s);
    let samples = parts[0].0.timeseries.samples() as u64;
    let of_parts: Vec<&Part> = parts.iter().map(|(_, p)| *p).collect();
    let (mut events, mut ios, mut seed_matters) = (samples, 0, false);
    let (mut hosts, mut vms, mut jobs, mut paths, mut devices, mut volumes) = (vec![], vec![], vec![], vec![], vec![], vec![]);
    let (mut arrays, mut psp_events, mut links, mut conservation, mut series) = (vec![], vec![], vec![], vec![], vec![]);
    for (r, p) in parts {
        assert_eq!((r.sim_time_s, r.measured_s), (sim_time_s, measured_s), "the parts ran over the same time");
        assert!(r.faults.is_empty(), "a topology with faults runs whole");
        events += r.events - samples;
        ios += r.ios;
        seed_matters |= r.seed_matters;
        let mut paths_per_device = vec![0; p.devices.len()];
        r.paths.iter().for_each(|x| paths_per_device[x.device_index] += 1);
        let keys = conservation_keys(p, &paths_per_device);
        assert_eq!(keys.len(), r.conservation.len(), "a conservation row per VM, job, device, path and array");
        conservation.extend(keys.into_iter().zip(r.conservation));
        hosts.extend(keyed(r.hosts, |k, _| p.hosts[k]));
        vms.extend(keyed(r.vms, |k, _| p.vms[k]));
        jobs.extend(keyed(r.jobs, |k, _| p.jobs[k]));
        paths.extend(keyed(r.paths, |_, x| p.devices[x.device_index]));
        devices.extend(keyed(r.devices, |k, _| p.devices[k]));
        volumes.extend(keyed(r.volumes, |k, _| p.volumes[k]));
        arrays.extend(keyed(r.arrays, |k, _| p.arrays[k]));
        psp_events.extend(keyed(r.psp_events, |_, x| p.devices[x.device_index]));
        // The paths' links, then the replication pairs' (`World::report`).
        let path_links = p.links.len();
        links.extend(keyed(r.links, |k, _| if k < path_links { key(0, p.links[k]) } else { key(1, p.replications[k - path_links]) }));
        series.push(r.timeseries);
    }
    let whole_index = |k: usize, step: u8, index: usize| {
        let p = of_parts[k];
        match SERIES_STEPS[usize::from(step)] {
            SeriesStep::Host => p.hosts[index],
            SeriesStep::Array => p.arrays[index],
            SeriesStep::Device => p.devices[index],
            SeriesStep::HostFlow | SeriesStep::Vm => p.vms[index],
        }
    };
    RunReport {
        sim_time_s,
        measured_s,
        events,
        ios,
        seed_matters,
        hosts: in_order(hosts),
        vms: in_order(vms),
        jobs: in_order(jobs),
        paths: in_order(paths),
        devices: in_order(devices),
        volumes: in_order(volumes),
        arrays: in_order(arrays),
        psp_events: in_order(psp_events),
        links: in_order(links),
        faults: vec![],
        conservation: in_order(conservation),
        timeseries: TimeSeries::merge(series, whole_index),
    }
}
