//! `[[host]]` and `[[path]]`: adapters, queue depths, the host's failover timings, multipathing
//! and scheduler tables (read when its devices are), and the links from hosts to arrays.

use super::arrays::Arrays;
use super::{resolve, unique_name, NameList};
use sanlab_model::fabric::{Link, LinkParams};
use sanlab_model::host::adapters::{DISK_MAX_IO_SIZE_BYTES, HOST_ADAPTERS};
use sanlab_model::host::device_queue::QfullRules;
use sanlab_model::host::failover::Failover;
use sanlab_model::host::scheduler::REGISTRY as SCHEDULERS;
use sanlab_model::multipath::{Alua, REGISTRY as PSPS};
use sanlab_model::topology::{DeviceConfig, HostConfig, PathConfig};
use sanlab_spec::{build_kind, did_you_mean, format_duration, Spec, SpecError, SpecResult};

/// The hosts, and the tables their devices are built from.
pub(super) struct Hosts<'a> {
    pub configs: Vec<HostConfig>,
    pub names: NameList,
    pub psp_specs: Vec<Spec<'a>>,
    pub sched_specs: Vec<Spec<'a>>,
    pub qfull: Vec<QfullRules>,
    pub lun_depths: Vec<u32>,
}

/// Every `[[path]]`'s links, named, with both ends.
pub(super) struct Paths {
    pub links: Vec<Link>,
    pub names: NameList,
    pub ends: Vec<LinkEnd>,
}

/// Both ends of a `[[path]]`'s link: host and its adapter, array, controller and port, and an
/// explicit ALUA state.
pub(super) struct LinkEnd {
    pub host: usize,
    pub array: usize,
    pub alua: Option<Alua>,
    pub adapter: String,
    pub controller: u32,
    pub port: String,
}

pub(super) fn hosts<'a>(top: &Spec<'a>) -> SpecResult<Hosts<'a>> {
    let mut hosts = vec![];
    let mut host_names = NameList::default();
    let mut host_psp_specs = vec![];
    let mut host_sched_specs = vec![];
    let mut host_qfull = vec![];
    let mut lun_depths = vec![];
    for h in top.tables("host", "ESXi hosts")? {
        let name = unique_name(&h, "host", &host_names)?;
        let ad = h.table("adapter", "the host's storage adapter")?;
        let kinds: Vec<&'static str> = HOST_ADAPTERS.iter().map(|a| a.kind).collect();
        let kind = ad.choice("kind", &kinds, Some("fc"), "fc, sw_iscsi or ideal")?;
        let dflt = HOST_ADAPTERS.iter().find(|a| a.kind == kind).expect("listed");
        let lun = ad.int("lun_queue_depth", Some(i64::from(dflt.lun_queue_depth.0)), 1, i64::from(dflt.lun_queue_depth.1), "device (LUN) queue depth, e.g. iscsivmk_LunQDepth")?;
        let aq = ad.int("queue_depth", Some(i64::from(dflt.queue_depth.0)), 1, i64::from(dflt.queue_depth.1), "adapter-wide queue depth")?;
        let max_io = ad.size_bytes("max_io_size", Some((dflt.max_io_size_bytes.unwrap_or(u64::MAX), "adapter default (sw_iscsi 128KiB, fc none)")), "the adapter cuts requests above this, below the device queue (ISCSI.MaxIoSizeKB)")?;
        if max_io == 0 || (max_io != u64::MAX && max_io > dflt.max_io_size_limit_bytes) {
            return Err(ad.error("max_io_size", format!("{max_io} bytes is out of range for a {kind} adapter: expected 1..={} bytes", dflt.max_io_size_limit_bytes)));
        }
        let qfull = QfullRules {
            sample_size: ad.int("qfull_sample_size", Some(0), 0, 64, "Disk.QFullSampleSize: QUEUE FULLs that halve the LUN depth; 0 = adaptive depth off")? as u32,
            threshold: ad.int("qfull_threshold", Some(8), 1, 16, "Disk.QFullThreshold: good completions per slot given back")? as u32,
        };
        let qfull_retry = ad.duration_ns("qfull_retry", Some((1_000_000, "1ms")), "wait before resending a command refused with QUEUE FULL (ours)")?;
        // A command refused with QUEUE FULL is resent after at least 100 us (Linux re-runs a busy
        // device's queue after SCSI_QUEUE_DELAY, 3 ms): at 1 ns against a full target queue every
        // refused command was resent each nanosecond and the run never ended (found fuzzing).
        if qfull_retry < 100_000 {
            return Err(ad.error("qfull_retry", format!("{} resends a refused command faster than a target frees a slot: expected at least 100us (nearest valid: 100us; Linux waits 3 ms, SCSI_QUEUE_DELAY)", format_duration(qfull_retry))));
        }
        ad.finish()?;
        let (disk_min, disk_default, disk_max) = DISK_MAX_IO_SIZE_BYTES;
        let disk_max_io = h.size_bytes("disk_max_io_size", Some((disk_default, "32767KiB")), "Disk.DiskMaxIOSize: split above the device queue")?;
        if !(disk_min..=disk_max).contains(&disk_max_io) {
            return Err(h.error("disk_max_io_size", format!("{disk_max_io} bytes is out of range: expected 32KiB..=32767KiB")));
        }
        let failover = Failover::from_spec(h.table("failover", "how the host reacts to a failing path: notice, command_timeout, path_check")?)?;
        host_psp_specs.push(h.table("multipath", "multipathing of this host's devices")?);
        host_sched_specs.push(h.kind_table("scheduler", "host I/O scheduler: dispatch discipline and DSNRO rules")?);
        h.finish()?;
        host_names.push(name.clone());
        lun_depths.push(lun as u32);
        host_qfull.push(qfull);
        hosts.push(HostConfig { name, adapter_queue_depth: aq as u32, disk_max_io_size_bytes: disk_max_io, adapter_max_io_size_bytes: max_io, qfull_retry_ns: qfull_retry, failover });
    }
    Ok(Hosts { configs: hosts, names: host_names, psp_specs: host_psp_specs, sched_specs: host_sched_specs, qfull: host_qfull, lun_depths })
}

/// Every host an array prefers exists.
pub(super) fn check_preferred(preferred: &[Vec<String>], host_names: &NameList) -> SpecResult<()> {
    for (a, hosts_listed) in preferred.iter().enumerate() {
        for h in hosts_listed {
            if host_names.position(h).is_none() {
                return Err(SpecError::new(
                    format!("array[{a}].preferred_hosts"),
                    format!("no host named `{h}` (defined: {}){}", host_names.join(", "), did_you_mean(h, host_names.iter().map(String::as_str))),
                ));
            }
        }
    }
    Ok(())
}

pub(super) fn paths(top: &Spec, host_names: &NameList, arrays: &Arrays, seed: u64) -> SpecResult<Paths> {
    let (array_names, arrays) = (&arrays.names, &arrays.configs);
    let mut links = vec![];
    let mut path_names = NameList::default();
    let mut link_ends: Vec<LinkEnd> = vec![];
    let mut paths_between: std::collections::HashMap<(usize, usize), u32> = Default::default();
    let mut ports_taken: std::collections::HashMap<(usize, usize, u32), u32> = Default::default();
    for p in top.tables("path", "host-to-array paths; `count` makes several alike")? {
        let host_name = p.string("host", None, "host name")?;
        let host = resolve(&p, "host", &host_name, "host", host_names)?;
        let array_name = p.string("array", None, "array name")?;
        let array = resolve(&p, "array", &array_name, "array", array_names)?;
        let prefix = p.opt_string("name", "path name (with count > 1: a prefix, numbered from 0); default <host>-<array>")?;
        let prefix = prefix.unwrap_or_else(|| format!("{host_name}-{array_name}"));
        let count = p.int("count", Some(1), 1, 1024, "number of identical paths")?;
        let alua = match p.opt_string("alua", "override the advertised ALUA state: AO, ANO, standby, unavailable")? {
            None => None,
            Some(s) => Some(Alua::from_name(&s).ok_or_else(|| {
                p.error("alua", format!("unknown state `{s}`: expected one of {}{}", Alua::NAMES.join(", "), did_you_mean(&s, Alua::NAMES)))
            })?),
        };
        let link = LinkParams::from_spec(p.table("link", "latency / distance_km / bandwidth")?)?;
        let adapter = p.string("adapter", Some("vmhba0"), "the host adapter (HBA) the paths leave from; an adapter_down event takes all its paths")?;
        let controllers = arrays[array].controllers;
        let pinned = if p.has("controller") { Some(p.int("controller", None, 1, i64::from(controllers), "the array controller the paths reach (1-based, ctrl1); default: path i on controller i mod controllers")? as u32 - 1) } else { None };
        for i in 0..count {
            let name = if count == 1 { prefix.clone() } else { format!("{prefix}-{i}") };
            if path_names.position(&name).is_some() {
                return Err(p.error("name", format!("path `{name}` is defined twice")));
            }
            links.push(Link::new(name.clone(), &link, seed));
            path_names.push(name);
            // A host's paths to an array alternate across its controllers; each takes the next
            // port of its controller, so every host's k-th path reaches the same port.
            let earlier = paths_between.entry((host, array)).or_insert(0);
            let controller = pinned.unwrap_or(*earlier % controllers);
            *earlier += 1;
            let port = ports_taken.entry((host, array, controller)).or_insert(0);
            *port += 1;
            let port = format!("ctrl{}.fc{port}", controller + 1);
            link_ends.push(LinkEnd { host, array, alua, adapter: adapter.clone(), controller, port });
        }
        p.finish()?;
    }
    Ok(Paths { links, names: path_names, ends: link_ends })
}

/// The multipathing and scheduler tables of every host are checked, and closed, once its devices
/// are built.
pub(super) fn finish_tables(host_psp_specs: Vec<Spec>, host_sched_specs: Vec<Spec>, hosts: &[HostConfig], devices: &[DeviceConfig]) -> SpecResult<()> {
    let mut host_has_device = vec![false; hosts.len()];
    for d in devices {
        host_has_device[d.host] = true;
    }
    for (h, (mp, sched)) in host_psp_specs.into_iter().zip(host_sched_specs).enumerate() {
        // A host without devices still gets its tables checked.
        if !host_has_device[h] {
            build_kind(&mp.kind_table("psp", "path selection policy")?, &PSPS, Some("fixed"))?;
            build_kind(&sched, SCHEDULERS, Some("esxi"))?;
        }
        mp.finish()?;
    }
    Ok(())
}

/// The paths of a device of `host` on `arrays`: every path from the host to one of them, with its
/// ALUA state (explicit, or from the arrays' preferred-host lists).
pub(super) fn device_paths(host: usize, arrays: &[usize], ends: &[LinkEnd], links: &[Link], preferred: &[Vec<String>], host_name: &str) -> Vec<PathConfig> {
    let any_preference = arrays.iter().any(|&a| preferred[a].iter().any(|h| h == host_name));
    ends.iter()
        .enumerate()
        .filter(|(_, e)| e.host == host && arrays.contains(&e.array))
        .map(|(i, e)| {
            let advertised = if !any_preference || preferred[e.array].iter().any(|h| h == host_name) { Alua::ActiveOptimized } else { Alua::ActiveNonOptimized };
            PathConfig { name: links[i].name.clone(), link: i, array: e.array, alua: e.alua.unwrap_or(advertised), adapter: e.adapter.clone(), controller: e.controller, port: e.port.clone() }
        })
        .collect()
}

