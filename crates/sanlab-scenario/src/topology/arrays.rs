//! `[[array]]`, `[[replication]]` and `[[volume]]`: the storage side, read before the hosts that
//! name it.

use super::{resolve, unique_name, NameList};
use sanlab_model::array::cache::ReadCache;
use sanlab_model::array::cores::Cores;
use sanlab_model::array::qos::QosParams;
use sanlab_model::array::{replication::Replication, MEDIA};
use sanlab_model::fabric::{Link, LinkParams};
use sanlab_model::host::flow_control::REGISTRY as FLOW_CONTROLS;
use sanlab_model::topology::{ArrayConfig, VolumeConfig};
use sanlab_spec::{build_kind, Spec, SpecError, SpecResult};

/// The arrays and what later sections look up in them.
pub(super) struct Arrays {
    pub configs: Vec<ArrayConfig>,
    pub names: NameList,
    /// Per array: the hosts that see its paths as active-optimized.
    pub preferred: Vec<Vec<String>>,
    /// Per array: its vVol protocol endpoint's name.
    pub pes: Vec<String>,
}

/// The volumes and what the VMs' devices need of them.
pub(super) struct Volumes<'a> {
    pub configs: Vec<VolumeConfig>,
    pub names: NameList,
    /// Per volume: the arrays holding it.
    pub arrays: Vec<Vec<usize>>,
    pub is_vvol: Vec<bool>,
    /// Per volume: its own path selection policy, for its devices on every host, if it has one.
    pub psp: Vec<Option<Spec<'a>>>,
}

pub(super) fn arrays(top: &Spec, seed: u64) -> SpecResult<Arrays> {
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
    Ok(Arrays { configs: arrays, names: array_names, preferred, pes })
}

pub(super) fn replications(top: &Spec, array_names: &NameList, seed: u64) -> SpecResult<Vec<Replication>> {
    let mut replications = vec![];
    for r in top.tables("replication", "active-active replication pairs")? {
        let names = r.strings("arrays", "the two arrays of the pair")?;
        if names.len() != 2 || names[0] == names[1] {
            return Err(r.error("arrays", "expected two different array names, e.g. [\"site_a\", \"site_b\"]"));
        }
        let a = resolve(&r, "arrays", &names[0], "array", array_names)?;
        let b = resolve(&r, "arrays", &names[1], "array", array_names)?;
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
    Ok(replications)
}

pub(super) fn volumes<'a>(top: &Spec<'a>, array_names: &NameList, replications: &[Replication]) -> SpecResult<Volumes<'a>> {
    let mut volumes = vec![];
    let mut volume_psp = vec![];
    let mut volume_names = NameList::default();
    let mut volume_arrays: Vec<Vec<usize>> = vec![];
    let mut volume_is_vvol: Vec<bool> = vec![];
    for v in top.tables("volume", "volumes (LUNs, VMFS datastores or vVols)")? {
        let name = unique_name(&v, "volume", &volume_names)?;
        let names = v.strings("arrays", "the array holding it, or two arrays for an active-active replicated volume")?;
        let idx: Vec<usize> = names.iter().map(|n| resolve(&v, "arrays", n, "array", array_names)).collect::<SpecResult<_>>()?;
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
        const PSP_DOC: &str = "this volume's path selection policy on every host, in place of the host's multipath.psp (ESXi sets it per device)";
        let psp = if v.has("psp") { Some(v.kind_table("psp", PSP_DOC)?) } else {
            v.kind_table("psp", PSP_DOC)?;
            None
        };
        if psp.is_some() && vvol {
            return Err(v.error("psp", "a vVol is reached through its protocol endpoint's device, which every vVol of the node shares: set the policy in the host's multipath.psp"));
        }
        v.finish()?;
        volume_psp.push(psp);
        volume_names.push(name.clone());
        volume_arrays.push(idx);
        volume_is_vvol.push(vvol);
        volumes.push(VolumeConfig { name, replication, qos, flow_control });
    }
    Ok(Volumes { configs: volumes, names: volume_names, arrays: volume_arrays, is_vvol: volume_is_vvol, psp: volume_psp })
}
