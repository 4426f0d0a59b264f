//! Builds a [`Topology`] from a resolved scenario table, strictly: every section is read through
//! a [`Spec`], every name reference is checked, and unknown keys are errors.

use sanlab_des::NS_PER_S;
use sanlab_model::array::{replication::Replication, MEDIA};
use sanlab_model::fabric::{Link, LinkParams};
use sanlab_model::fault::{Fault, Target, EVENTS};
use sanlab_model::host::failover::Failover;
use sanlab_model::array::cache::ReadCache;
use sanlab_model::array::cores::Cores;
use sanlab_model::array::qos::QosParams;
use sanlab_model::host::adapters::{DISK_MAX_IO_SIZE_BYTES, HOST_ADAPTERS, VIRTUAL_ADAPTERS};
use sanlab_model::host::device_queue::{DeviceQueue, QfullRules};
use sanlab_model::host::flow_control::REGISTRY as FLOW_CONTROLS;
use sanlab_model::host::scheduler::REGISTRY as SCHEDULERS;
use sanlab_model::multipath::{Alua, REGISTRY as PSPS};
use sanlab_spec::names::{claim_file_name, escaped, file_name};
use sanlab_spec::{build_kind, did_you_mean, format_duration, Spec, SpecError, SpecResult};
use sanlab_model::topology::*;
use sanlab_workload::REGISTRY as WORKLOADS;
use std::collections::HashMap;
use toml::Table;

pub const SCHEMA_VERSION: i64 = 1;

/// Names in definition order, indexed: a scenario may define 10,000 VMs, and a linear search per
/// reference made building one quadratic.
#[derive(Default)]
struct NameList {
    names: Vec<String>,
    index: HashMap<String, usize>,
}

impl NameList {
    fn position(&self, name: &str) -> Option<usize> {
        self.index.get(name).copied()
    }

    fn push(&mut self, name: String) {
        self.index.insert(name.clone(), self.names.len());
        self.names.push(name);
    }
}

impl std::ops::Deref for NameList {
    type Target = [String];
    fn deref(&self) -> &[String] {
        &self.names
    }
}

/// Finds `name` among `names`, or explains which names exist.
fn resolve(spec: &Spec, key: &str, name: &str, what: &str, names: &NameList) -> SpecResult<usize> {
    names.position(name).ok_or_else(|| {
        let list = if names.is_empty() { "none is defined".to_string() } else { format!("defined: {}", names.join(", ")) };
        spec.error(key, format!("no {what} named `{name}` ({list}){}", did_you_mean(name, names.iter().map(String::as_str))))
    })
}

fn unique_name(spec: &Spec, what: &str, names: &NameList) -> SpecResult<String> {
    let name = spec.string("name", None, "unique name")?;
    if name.is_empty() {
        return Err(spec.error("name", "must not be empty"));
    }
    if names.position(&name).is_some() {
        return Err(spec.error("name", format!("{what} `{name}` is defined twice")));
    }
    Ok(name)
}

/// A VM disk's shares: ESXi's names (Disk.SharesLow/Normal/High) or a custom number.
fn read_shares(v: &Spec) -> SpecResult<u32> {
    const NAMED: [(&str, u32); 3] = [("low", 500), ("normal", 1000), ("high", 2000)];
    const RANGE: std::ops::RangeInclusive<u32> = 100..=10_000;
    let text = v.scalar_text("shares", "shares", "normal", "disk shares: low (500), normal (1000), high (2000) or a number 100..=10000")?.unwrap_or_else(|| "normal".into());
    if let Some((_, n)) = NAMED.iter().find(|(name, _)| *name == text) {
        return Ok(*n);
    }
    match text.parse::<u32>() {
        Ok(n) if RANGE.contains(&n) => Ok(n),
        Ok(n) => Err(v.error("shares", format!("{n} is out of range: expected low, normal, high or 100..=10000 (nearest valid: {})", n.clamp(*RANGE.start(), *RANGE.end())))),
        Err(_) => Err(v.error("shares", format!("`{text}`: expected low, normal, high or a number 100..=10000{}", did_you_mean(&text, NAMED.iter().map(|(n, _)| *n))))),
    }
}

/// The top-level keys of a scenario, in the order the reader takes them.
const SECTIONS: [&str; 12] = ["schema_version", "name", "description", "variant", "run", "array", "replication", "volume", "host", "path", "vm", "event"];

/// `base_dir` is the scenario file's folder; job files and traces named in it are relative to it.
pub fn build(root: &Table, base_dir: &std::path::Path) -> SpecResult<Topology> {
    // A mistyped section (`[[paths]]`) is named before what its absence breaks elsewhere.
    if let Some(key) = root.keys().find(|k| !SECTIONS.contains(&k.as_str())) {
        return Err(SpecError::new(key.clone(), format!("unknown key `{key}`; expected one of: {}{}", SECTIONS.join(", "), did_you_mean(key, SECTIONS))));
    }
    let top = Spec::new(root, "").with_base_dir(base_dir);
    let version = top.int("schema_version", None, 1, i64::MAX, "scenario format version")?;
    if version != SCHEMA_VERSION {
        return Err(top.error("schema_version", format!("version {version} is not supported: this sanlab reads schema_version = {SCHEMA_VERSION}")));
    }
    file_name(&top.string("name", None, "scenario name")?).map_err(|e| top.error("name", e))?;
    top.opt_string("description", "what the scenario shows")?;
    top.tables("variant", "named overrides, each a `set` table of path = value")?;

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
    let run = RunConfig { duration_ns, warmup_ns, seed, sample_interval_ns };

    // Arrays.
    let mut arrays = vec![];
    let mut array_names = NameList::default();
    let mut preferred: Vec<Vec<String>> = vec![];
    let mut pes: Vec<String> = vec![];
    for a in top.tables("array", "storage arrays")? {
        let name = unique_name(&a, "array", &array_names)?;
        let a = a.with_streams(seed, format!("array/{name}"));
        preferred.push(a.strings("preferred_hosts", "ALUA preferred array: these hosts see this array's paths as active-optimized, others' as non-optimized")?);
        let pe = a.opt_string("pe", "name of this array node's vVol protocol endpoint; default <array>-pe")?.unwrap_or_else(|| format!("{name}-pe"));
        if let Some(other) = pes.iter().position(|p| *p == pe) {
            return Err(a.error("pe", format!("protocol endpoint `{pe}` is already array `{}`'s: a PE belongs to one array node; give this one another name", array_names[other])));
        }
        pes.push(pe);
        let backend = build_kind(&a.kind_table("media", "back end: flash, or a disk group")?, MEDIA, Some("flash"))?;
        let cores = if a.has("cores") { Some(Cores::from_spec(a.table("cores", "controllers and cores owning address segments")?)?) } else {
            a.table("cores", "controllers and cores owning address segments")?;
            None
        };
        let cache = if a.has("cache") { Some(ReadCache::from_spec(a.table("cache", "read cache")?)?) } else {
            a.table("cache", "read cache")?;
            None
        };
        let max_outstanding = a.int("max_outstanding", Some(0), 0, 1 << 24, "target queue: host commands held at once before QUEUE FULL; 0 = unlimited")?;
        let cores_controllers = cores.as_ref().map(|c| i64::from(c.controllers));
        let controllers = a.int("controllers", Some(cores_controllers.unwrap_or(2)), 1, 1024, "storage controllers; their front-end ports carry the paths (default: cores.controllers, else 2)")?;
        if cores_controllers.is_some_and(|c| c != controllers) {
            return Err(a.error("controllers", format!("{controllers} differs from cores.controllers ({}): give the count once, in cores", cores_controllers.unwrap_or(0))));
        }
        a.finish()?;
        array_names.push(name.clone());
        arrays.push(ArrayConfig { name, backend, cores, cache, max_outstanding: (max_outstanding > 0).then_some(max_outstanding as u32), controllers: controllers as u32 });
    }
    if arrays.is_empty() {
        return Err(SpecError::new("array", "at least one [[array]] is required"));
    }

    // Replication pairs.
    let mut replications = vec![];
    for r in top.tables("replication", "active-active replication pairs")? {
        let names = r.strings("arrays", "the two arrays of the pair")?;
        if names.len() != 2 || names[0] == names[1] {
            return Err(r.error("arrays", "expected two different array names, e.g. [\"site_a\", \"site_b\"]"));
        }
        let a = resolve(&r, "arrays", &names[0], "array", &array_names)?;
        let b = resolve(&r, "arrays", &names[1], "array", &array_names)?;
        let link = Link::new(format!("{}<->{}", names[0], names[1]), &LinkParams::from_spec(r.table("link", "inter-array link")?)?, seed);
        let preferred = match r.opt_string("preferred", "pod failover preference: the array that keeps the volumes when the link fails; default: the first to reach the mediator")? {
            None => None,
            Some(p) if p == names[0] => Some(a),
            Some(p) if p == names[1] => Some(b),
            Some(p) => return Err(r.error("preferred", format!("`{p}` is not in the pair: expected `{}` or `{}`", names[0], names[1]))),
        };
        let election_ns = r.duration_ns("election", Some((5_000_000_000, "5s")), "writes stall this long when the link fails, until the mediator race is decided (ours: sources give 1-10 s)")?;
        if election_ns == 0 {
            return Err(r.error("election", "must be positive, e.g. \"5s\""));
        }
        r.finish()?;
        replications.push(Replication { arrays: [a, b], link, preferred, election_ns });
    }

    // Volumes.
    let mut volumes = vec![];
    let mut volume_names = NameList::default();
    let mut volume_arrays: Vec<Vec<usize>> = vec![];
    let mut volume_is_vvol: Vec<bool> = vec![];
    for v in top.tables("volume", "volumes (LUNs, VMFS datastores or vVols)")? {
        let name = unique_name(&v, "volume", &volume_names)?;
        let names = v.strings("arrays", "the array holding it, or two arrays for an active-active replicated volume")?;
        let idx: Vec<usize> = names.iter().map(|n| resolve(&v, "arrays", n, "array", &array_names)).collect::<SpecResult<_>>()?;
        let vvol = v.choice("type", &["vmfs", "vvol"], Some("vmfs"), "vmfs: its own device; vvol: reached through the array's protocol endpoint")? == "vvol";
        v.opt_string("container", "vVol storage container (vVols of every container share the node's PE)")?;
        if vvol && idx.len() != 1 {
            return Err(v.error("arrays", "a vVol lives on one array node: give one array"));
        }
        if !vvol && v.has("container") {
            return Err(v.error("container", "only vVols have a storage container: set type = \"vvol\" or remove it"));
        }
        let qos = if v.has("qos") { Some(QosParams::from_spec(v.table("qos", "SolidFire-style QoS: min, max, burst in 4K IOPS")?)?) } else {
            v.table("qos", "SolidFire-style QoS: min, max, burst in 4K IOPS")?;
            None
        };
        let replication = match idx.as_slice() {
            [_] => None,
            [a, b] => Some(replications.iter().position(|r: &Replication| r.arrays.contains(a) && r.arrays.contains(b)).ok_or_else(|| {
                v.error("arrays", format!("`{}` and `{}` have no [[replication]] pair; add one with arrays = [\"{}\", \"{}\"]", names[0], names[1], names[0], names[1]))
            })?),
            _ => return Err(v.error("arrays", "expected one array, or two for a replicated volume")),
        };
        if qos.is_some() && replication.is_some() {
            return Err(v.error("qos", "QoS on a replicated volume is not modelled: give QoS to single-array volumes"));
        }
        const FLOW_DOC: &str = "host-level flow control of every host using this volume: kind = \"parda\" or \"sioc\"";
        let flow_control = if v.has("flow_control") { Some(build_kind(&v.kind_table("flow_control", FLOW_DOC)?, FLOW_CONTROLS, None)?) } else {
            v.kind_table("flow_control", FLOW_DOC)?;
            None
        };
        if flow_control.is_some() && vvol {
            return Err(v.error("flow_control", "flow control runs per VMFS datastore: a vVol shares its protocol endpoint's device with other vVols; use type = \"vmfs\""));
        }
        v.finish()?;
        volume_names.push(name.clone());
        volume_arrays.push(idx);
        volume_is_vvol.push(vvol);
        volumes.push(VolumeConfig { name, replication, qos, flow_control });
    }

    // Hosts.
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
        if qfull_retry == 0 {
            return Err(ad.error("qfull_retry", "must be positive, e.g. \"1ms\""));
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

    // Paths (host-to-array links).
    let mut links = vec![];
    let mut path_names = NameList::default();
    let mut link_ends: Vec<LinkEnd> = vec![];
    let mut paths_between: std::collections::HashMap<(usize, usize), u32> = Default::default();
    let mut ports_taken: std::collections::HashMap<(usize, usize, u32), u32> = Default::default();
    for p in top.tables("path", "host-to-array paths; `count` makes several alike")? {
        let host_name = p.string("host", None, "host name")?;
        let host = resolve(&p, "host", &host_name, "host", &host_names)?;
        let array_name = p.string("array", None, "array name")?;
        let array = resolve(&p, "array", &array_name, "array", &array_names)?;
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

    // VMs, their devices and jobs.
    let mut devices: Vec<DeviceConfig> = vec![];
    let mut device_index: HashMap<(usize, String), usize> = HashMap::new();
    let mut vms = vec![];
    let mut vm_names = NameList::default();
    let mut jobs = vec![];
    let mut job_files = HashMap::new();
    let mut entry_files = HashMap::new();
    let multi_host = hosts.len() > 1;
    for v in top.tables("vm", "virtual machines")? {
        let name = unique_name(&v, "vm", &vm_names)?;
        let host_name = v.string("host", None, "host it runs on")?;
        let host = resolve(&v, "host", &host_name, "host", &host_names)?;
        let volume_name = v.string("volume", None, "volume its virtual disk lives on")?;
        let volume = resolve(&v, "volume", &volume_name, "volume", &volume_names)?;
        let ad = v.table("adapter", "virtual SCSI adapter")?;
        let kinds: Vec<&'static str> = VIRTUAL_ADAPTERS.iter().map(|a| a.kind).collect();
        let kind = ad.choice("kind", &kinds, Some("pvscsi"), "pvscsi, lsilogic or ideal")?;
        let va = VIRTUAL_ADAPTERS.iter().find(|a| a.kind == kind).expect("listed");
        let disk_q = ad.int("disk_queue_depth", Some(i64::from(va.disk_queue.0)), 1, i64::from(va.disk_queue.1), "virtual disk queue depth")?;
        let adapter_q = ad.int("queue_depth", Some(i64::from(va.adapter_queue.0)), 1, i64::from(va.adapter_queue.1), "virtual adapter queue depth")?;
        ad.finish()?;
        let shares = read_shares(&v)?;
        let reservation_iops = v.float("reservation", 0.0, 0.0, 10_000_000.0, "IOPS guaranteed under contention, I/Os in the scheduler's cost units (mclock scheduler; 0 = none)")?;
        let limit_iops = v.float("limit", 0.0, 0.0, 10_000_000.0, "IOPS cap, I/Os in the scheduler's cost units (mclock scheduler; 0 = unlimited)")?;
        if limit_iops > 0.0 && limit_iops < reservation_iops {
            return Err(v.error("limit", format!("{limit_iops} IOPS is a limit below the reservation ({reservation_iops} IOPS): expected limit >= reservation, or 0 for none (nearest valid: {reservation_iops})")));
        }
        // A VMFS volume is its own device; vVols are reached through their array node's PE.
        let (key, label) = if volume_is_vvol[volume] {
            let pe = &pes[volume_arrays[volume][0]];
            (pe.clone(), format!("PE {pe}"))
        } else {
            (volume_name.clone(), volume_name.clone())
        };
        let dev_name = if multi_host { format!("{host_name}:{key}") } else { key };
        let device = match device_index.get(&(host, dev_name.clone())) {
            Some(&d) => d,
            None => {
                let psp_spec = host_psp_specs[host].kind_table("psp", "path selection policy")?;
                let mut psp = build_kind(&psp_spec, PSPS, Some("fixed"))?;
                let paths = device_paths(host, &volume_arrays[volume], &link_ends, &links, &preferred, &host_names[host]);
                let names: Vec<String> = paths.iter().map(|p| p.name.clone()).collect();
                psp.attach(&names).map_err(|m| SpecError::new(psp_spec.location(), m))?;
                let discipline = build_kind(&host_sched_specs[host], SCHEDULERS, Some("esxi"))?;
                if !paths.iter().any(|p| matches!(p.alua, Alua::ActiveOptimized | Alua::ActiveNonOptimized)) {
                    return Err(v.error(
                        "volume",
                        format!("host `{host_name}` has no active path to volume `{volume_name}`: add a [[path]] from `{host_name}` to {}", volume_arrays[volume].iter().map(|&a| format!("`{}`", array_names[a])).collect::<Vec<_>>().join(" or ")),
                    ));
                }
                device_index.insert((host, dev_name.clone()), devices.len());
                devices.push(DeviceConfig { name: dev_name, host, label, queue: DeviceQueue::new(lun_depths[host], discipline, host_qfull[host]), psp, paths });
                devices.len() - 1
            }
        };
        // Only mclock enforces reservations and limits; the other disciplines would ignore them.
        for (key, iops) in [("reservation", reservation_iops), ("limit", limit_iops)] {
            if iops > 0.0 && !devices[device].queue.honours_qos() {
                return Err(v.error(key, format!("an IOPS {key} needs the mclock scheduler: set {}.kind = \"mclock\"", host_sched_specs[host].location())));
            }
        }
        let world = devices[device].queue.add_world(sanlab_model::host::scheduler::WorldQos { shares, reservation_iops, limit_iops });
        let job_specs = v.tables("job", "workloads this VM runs")?;
        if job_specs.is_empty() {
            return Err(v.error("job", "a VM needs at least one [[vm.job]], e.g. kind = \"fio\", rw = \"randread\""));
        }
        let vm_index = vms.len();
        for (k, j) in job_specs.into_iter().enumerate() {
            let job_name = j.opt_string("name", "job name; default <vm>-<n>")?.unwrap_or_else(|| format!("{name}-{k}"));
            let workload = build_kind(&j, WORKLOADS, Some("fio"))?;
            workload.check_sampling(sample_interval_ns).map_err(|(key, e)| j.error(key, e))?;
            let first = jobs.len();
            // Each job writes its fio logs, and each entry <variant>/fio/<entry>.json.
            for instance in workload.instances() {
                let n = instance.suffix.map_or_else(|| job_name.clone(), |s| format!("{job_name}.{s}"));
                claim_file_name(&n, "jobs", &mut job_files).map_err(|e| j.error("name", e))?;
                jobs.push(JobConfig { name: n, vm: vm_index, workload: instance.workload, after: instance.after.iter().map(|k| first + k).collect(), set: first, entry: job_name.clone() });
            }
            claim_file_name(&job_name, "workload entries", &mut entry_files).map_err(|e| j.error("name", e))?;
        }
        v.finish()?;
        vm_names.push(name.clone());
        vms.push(VmConfig { name, host, device, volume, world, shares, disk_queue_depth: disk_q as u32, adapter_queue_depth: adapter_q as u32 });
    }
    if vms.is_empty() {
        return Err(SpecError::new("vm", "at least one [[vm]] with a [[vm.job]] is required"));
    }
    let mut host_has_device = vec![false; hosts.len()];
    for d in &devices {
        host_has_device[d.host] = true;
    }
    for (h, (mp, sched)) in host_psp_specs.into_iter().zip(host_sched_specs).enumerate() {
        // A host without devices still gets its tables checked.
        if !host_has_device[h] {
            build_kind(&mp.kind_table("psp", "path selection policy")?, PSPS, Some("fixed"))?;
            build_kind(&sched, SCHEDULERS, Some("esxi"))?;
        }
        mp.finish()?;
    }
    // A link that carries several devices names each device's path `<link>:<device>`.
    let mut link_users: Vec<Vec<usize>> = vec![vec![]; links.len()];
    for (d, device) in devices.iter().enumerate() {
        for p in &device.paths {
            if link_users[p.link].last() != Some(&d) {
                link_users[p.link].push(d);
            }
        }
    }
    for (i, users) in link_users.into_iter().enumerate() {
        if users.len() > 1 {
            for d in users {
                // The link belongs to one host, so the device's own part of its name suffices.
                let host_prefix = format!("{}:", host_names[devices[d].host]);
                let dev_name = devices[d].name.strip_prefix(&host_prefix).unwrap_or(&devices[d].name).to_string();
                for p in devices[d].paths.iter_mut().filter(|p| p.link == i) {
                    p.name = format!("{}:{dev_name}", links[i].name);
                }
            }
        }
    }
    let names = Names { paths: path_names, hosts: &host_names, arrays: &array_names, volumes: &volume_names, volume_arrays: &volume_arrays, controllers: arrays.iter().map(|a| a.controllers).collect() };
    let faults = read_faults(&top, &names, &link_ends, &replications, duration_ns)?;
    top.finish()?;
    let topology = Topology { run, hosts, arrays, replications, volumes, links, devices, vms, jobs, faults };
    check_limits(&topology)?;
    Ok(topology)
}

/// Refuses a run whose time series or request slab would exceed its limit, before it starts.
fn check_limits(t: &Topology) -> SpecResult<()> {
    let cost = t.cost();
    if cost.series_bytes > MAX_SERIES_BYTES {
        let per_sample = cost.series_bytes / cost.samples.max(1);
        let min_interval_us = (u128::from(t.run.duration_ns) * u128::from(per_sample)).div_ceil(u128::from(MAX_SERIES_BYTES) * 1_000);
        return Err(SpecError::new(
            "run.sample_interval",
            format!(
                "{} samples of {} entities make about {} of time series, above the limit of {}: use a sample_interval of at least {min_interval_us}us",
                cost.samples,
                cost.entities,
                human_bytes(cost.series_bytes),
                human_bytes(MAX_SERIES_BYTES)
            ),
        ));
    }
    let mut outstanding = 0;
    for job in &t.jobs {
        outstanding += u64::from(job.workload.pacing().depth());
        if outstanding > MAX_OUTSTANDING {
            return Err(SpecError::new(
                format!("vm[{}]", job.vm),
                format!("with job `{}`, the jobs would keep {} requests outstanding (iodepth x numjobs, summed), above the limit of {MAX_OUTSTANDING}: lower iodepth or numjobs", escaped(&job.name), cost.outstanding),
            ));
        }
    }
    Ok(())
}

/// The `[[event]]` timeline: each event's target resolved, within the run, and not overlapping
/// another event of its kind on the same part.
fn read_faults(top: &Spec, names: &Names, ends: &[LinkEnd], replications: &[Replication], duration_ns: u64) -> SpecResult<Vec<FaultConfig>> {
    let mut faults: Vec<FaultConfig> = vec![];
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
        faults.push(config);
    }
    Ok(faults)
}

/// Names of what events can target.
struct Names<'a> {
    paths: NameList,
    hosts: &'a NameList,
    arrays: &'a NameList,
    volumes: &'a NameList,
    volume_arrays: &'a [Vec<usize>],
    controllers: Vec<u32>,
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

/// Both ends of a `[[path]]`'s link: host and its adapter, array, controller and port, and an
/// explicit ALUA state.
struct LinkEnd {
    host: usize,
    array: usize,
    alua: Option<Alua>,
    adapter: String,
    controller: u32,
    port: String,
}

/// The paths of a device of `host` on `arrays`: every path from the host to one of them, with its
/// ALUA state (explicit, or from the arrays' preferred-host lists).
fn device_paths(host: usize, arrays: &[usize], ends: &[LinkEnd], links: &[Link], preferred: &[Vec<String>], host_name: &str) -> Vec<PathConfig> {
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
