//! `[[event]]`: the fault timeline, each event's target resolved to the links, array, controller,
//! replication pair or volume it acts on.

use super::hosts::LinkEnd;
use super::{resolve, NameList};
use sanlab_model::array::replication::Replication;
use sanlab_model::fault::{Fault, Target, EVENTS, MAX_FAULT_EDGES};
use sanlab_model::topology::FaultConfig;
use sanlab_spec::{build_kind, did_you_mean, format_duration, Spec, SpecError, SpecResult};

/// The `[[event]]` timeline: each event's target resolved, within the run, and not overlapping
/// another event of its kind on the same part.
pub(super) fn read_faults(top: &Spec, names: &Names, ends: &[LinkEnd], replications: &[Replication], duration_ns: u64) -> SpecResult<Vec<FaultConfig>> {
    let mut faults: Vec<FaultConfig> = vec![];
    let mut edges = 0u64;
    for e in top.tables("event", "faults at set times: paths, adapters, ports, controllers, arrays, the replication link, ALUA states, a lost volume")? {
        let fault = *build_kind(&e, EVENTS, None)?;
        let config = resolve_target(&e, fault, names, ends, replications)?;
        let fault = &config.fault;
        let s = |ns: u64| format!("{}s", ns as f64 / 1e9);
        if fault.at_ns >= duration_ns {
            return Err(e.error("at", format!("{} is beyond the run ({}): expected a time within it", s(fault.at_ns), s(duration_ns))));
        }
        if let (Some(rep), Some(until)) = (config.replication, fault.until_ns) {
            let election_ns = replications[rep].election_ns;
            if until - fault.at_ns <= election_ns {
                return Err(e.error("until", format!("the link is back before the mediator race is decided ({} after it fails, the pair's `election`): expected until > {}", s(election_ns), s(fault.at_ns + election_ns))));
            }
        }
        // A repeating event holds its part for good.
        let end = |f: &Fault| if f.every_ns.is_some() { u64::MAX } else { f.until_ns.unwrap_or(u64::MAX) };
        let same_part = |o: &FaultConfig| o.links.iter().any(|l| config.links.contains(l)) || (o.links.is_empty() && (o.array, o.replication) == (config.array, config.replication));
        if let Some(other) = faults.iter().find(|o| o.fault.kind() == fault.kind() && same_part(o) && o.fault.at_ns < end(fault) && fault.at_ns < end(&o.fault)) {
            return Err(e.error("at", format!("overlaps another {} event on {} (from {}): expected one at a time per part", fault.kind(), other.target, s(other.fault.at_ns))));
        }
        let own = fault.edges_within(duration_ns);
        edges += own;
        if edges > MAX_FAULT_EDGES {
            return Err(too_many_edges(&e, fault, own, edges, duration_ns));
        }
        faults.push(config);
    }
    Ok(faults)
}

/// The error for the event whose edges take the run's past [`MAX_FAULT_EDGES`]: a repeating one
/// is told the shortest `every` that fits.
fn too_many_edges(e: &Spec, fault: &Fault, own: u64, edges: u64, duration_ns: u64) -> SpecError {
    let others = edges - own;
    let with_others = if others > 0 { format!(", {edges} with the events before it") } else { String::new() };
    let counted = format!("{own} edges (starts and ends) within the run ({}){with_others}, above the limit of {MAX_FAULT_EDGES} (each is a row of the fault timeline, about 4 kB)", format_duration(duration_ns));
    match fault.every_ns {
        Some(every) if others + 2 < MAX_FAULT_EDGES => {
            // Two edges a time: the times that fit, and the period that gives no more.
            let times = (MAX_FAULT_EDGES - others) / 2;
            let shortest_ns = round_up((duration_ns - fault.at_ns).div_ceil(times));
            let repeats = (duration_ns - 1 - fault.at_ns) / every + 1;
            e.error("every", format!("{} repeats {repeats} times: {counted}: expected every >= {} (nearest valid), or a shorter run", format_duration(every), format_duration(shortest_ns)))
        }
        _ => SpecError::new(e.location().to_string(), format!("{counted}: expected fewer events, or a shorter run")),
    }
}

/// `ns` rounded up to whole milliseconds above one, to whole microseconds above one.
fn round_up(ns: u64) -> u64 {
    let unit = [1_000_000, 1_000].into_iter().find(|&u| ns >= u).unwrap_or(1);
    ns.div_ceil(unit) * unit
}

/// Names of what events can target.
pub(super) struct Names<'a> {
    pub paths: NameList,
    pub hosts: &'a NameList,
    pub arrays: &'a NameList,
    pub volumes: &'a NameList,
    pub volume_arrays: &'a [Vec<usize>],
    pub controllers: Vec<u32>,
}

/// The links (paths) an event acts on, and the array, controller, replication pair or volume.
fn resolve_target(e: &Spec, fault: Fault, names: &Names, ends: &[LinkEnd], replications: &[Replication]) -> SpecResult<FaultConfig> {
    let mut c = FaultConfig { target: String::new(), links: vec![], array: None, controller: None, replication: None, volume: None, fault };
    let matching = |keep: &dyn Fn(&LinkEnd) -> bool| -> Vec<usize> { ends.iter().enumerate().filter(|(_, end)| keep(end)).map(|(l, _)| l).collect() };
    let listed = |mut v: Vec<String>| {
        v.sort();
        v.dedup();
        v.join(", ")
    };
    match &c.fault.target {
        Target::Path(name) => {
            c.links = vec![resolve(e, "path", name, "path", &names.paths)?];
            c.target = format!("path {name}");
        }
        Target::Adapter { host, adapter } => {
            let h = resolve(e, "host", host, "host", names.hosts)?;
            c.links = matching(&|end| end.host == h && end.adapter == *adapter);
            if c.links.is_empty() {
                let theirs: Vec<String> = ends.iter().filter(|end| end.host == h).map(|end| end.adapter.clone()).collect();
                return Err(e.error("adapter", format!("host `{host}` has no paths on adapter `{adapter}` (its adapters: {}){}", listed(theirs.clone()), did_you_mean(adapter, theirs.iter().map(String::as_str)))));
            }
            c.target = format!("adapter {host}/{adapter}");
        }
        Target::Port { array, port } => {
            let a = resolve(e, "array", array, "array", names.arrays)?;
            c.links = matching(&|end| end.array == a && end.port == *port);
            if c.links.is_empty() {
                let theirs: Vec<String> = ends.iter().filter(|end| end.array == a).map(|end| end.port.clone()).collect();
                return Err(e.error("port", format!("no path reaches port `{port}` of array `{array}` (its ports with paths: {}){}", listed(theirs.clone()), did_you_mean(port, theirs.iter().map(String::as_str)))));
            }
            c.array = Some(a);
            c.target = format!("port {array}/{port}");
        }
        Target::Controller { array, controller } => {
            let a = resolve(e, "array", array, "array", names.arrays)?;
            let n = names.controllers[a];
            let k = controller.strip_prefix("ctrl").and_then(|k| k.parse::<u32>().ok()).filter(|k| (1..=n).contains(k));
            let Some(k) = k else {
                let all: Vec<String> = (1..=n).map(|k| format!("ctrl{k}")).collect();
                return Err(e.error("controller", format!("array `{array}` has no controller `{controller}`: expected one of {}{}", all.join(", "), did_you_mean(controller, all.iter().map(String::as_str)))));
            };
            c.links = matching(&|end| end.array == a && end.controller == k - 1);
            c.array = Some(a);
            c.controller = Some(k - 1);
            c.target = format!("controller {array}/{controller}");
        }
        Target::Array(array) => {
            let a = resolve(e, "array", array, "array", names.arrays)?;
            c.links = matching(&|end| end.array == a);
            c.array = Some(a);
            c.target = format!("array {array}");
        }
        Target::Replication([x, y]) => {
            let a = resolve(e, "arrays", x, "array", names.arrays)?;
            let b = resolve(e, "arrays", y, "array", names.arrays)?;
            let rep = replications.iter().position(|r| r.arrays.contains(&a) && r.arrays.contains(&b) && a != b);
            c.replication = Some(rep.ok_or_else(|| e.error("arrays", format!("`{x}` and `{y}` are not a [[replication]] pair")))?);
            c.target = format!("replication {x}<->{y}");
        }
        Target::PortGroup { array, controller, hosts } => {
            let a = resolve(e, "array", array, "array", names.arrays)?;
            let k = match controller {
                None => None,
                Some(name) => {
                    let n = names.controllers[a];
                    let all: Vec<String> = (1..=n).map(|k| format!("ctrl{k}")).collect();
                    Some(all.iter().position(|x| x == name).ok_or_else(|| e.error("controller", format!("array `{array}` has no controller `{name}`: expected one of {}{}", all.join(", "), did_you_mean(name, all.iter().map(String::as_str)))))? as u32)
                }
            };
            let hs: Vec<usize> = hosts.iter().map(|h| resolve(e, "hosts", h, "host", names.hosts)).collect::<SpecResult<_>>()?;
            c.links = matching(&|end| end.array == a && k.is_none_or(|k| end.controller == k) && (hs.is_empty() || hs.contains(&end.host)));
            if c.links.is_empty() {
                return Err(e.error("array", format!("no path matches (array `{array}`{}{}): expected a port group some host has paths to", controller.as_ref().map_or(String::new(), |k| format!(", controller `{k}`")), if hosts.is_empty() { String::new() } else { format!(", hosts {}", hosts.join(", ")) })));
            }
            c.array = Some(a);
            c.controller = k;
            c.target = format!("port group {array}{}", controller.as_ref().map_or(String::new(), |k| format!("/{k}")));
        }
        Target::Volume { array, volume } => {
            let a = resolve(e, "array", array, "array", names.arrays)?;
            let v = resolve(e, "volume", volume, "volume", names.volumes)?;
            if !names.volume_arrays[v].contains(&a) {
                return Err(e.error("array", format!("volume `{volume}` is not on array `{array}` (it is on {})", names.volume_arrays[v].iter().map(|&x| format!("`{}`", names.arrays[x])).collect::<Vec<_>>().join(" and "))));
            }
            c.links = matching(&|end| end.array == a);
            c.array = Some(a);
            c.volume = Some(v);
            c.target = format!("volume {volume} on {array}");
        }
    }
    Ok(c)
}
