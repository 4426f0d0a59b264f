//! `[[vm]]` and `[[vm.job]]`: each VM's virtual adapter, shares and IOPS limits, the host device
//! its volume becomes (built with the host's PSP and scheduler when first used), and its jobs.

use super::arrays::{Arrays, Volumes};
use super::hosts::{device_paths, Hosts, Paths};
use super::{resolve, unique_name, NameList};
use sanlab_model::fabric::Link;
use sanlab_model::host::adapters::VIRTUAL_ADAPTERS;
use sanlab_model::host::device_queue::DeviceQueue;
use sanlab_model::host::scheduler::REGISTRY as SCHEDULERS;
use sanlab_model::multipath::{Alua, REGISTRY as PSPS};
use sanlab_model::topology::{DeviceConfig, JobConfig, VmConfig};
use sanlab_spec::names::claim_file_name;
use sanlab_spec::{build_kind, did_you_mean, Spec, SpecError, SpecResult};
use sanlab_workload::REGISTRY as WORKLOADS;
use std::collections::HashMap;

/// The VMs, the host devices their volumes became, and their jobs.
pub(super) struct Built {
    pub devices: Vec<DeviceConfig>,
    /// Per device: where its path selection policy was written (for `attach_policies`).
    pub psp_at: Vec<String>,
    pub vms: Vec<VmConfig>,
    pub jobs: Vec<JobConfig>,
}

pub(super) fn vms(top: &Spec, arrays: &Arrays, volumes: &Volumes, hosts: &Hosts, paths: &Paths, sample_interval_ns: u64) -> SpecResult<Built> {
    let (array_names, preferred, pes) = (&arrays.names, &arrays.preferred, &arrays.pes);
    let (volume_names, volume_arrays, volume_is_vvol) = (&volumes.names, &volumes.arrays, &volumes.is_vvol);
    let (host_names, host_psp_specs, host_sched_specs, host_qfull, lun_depths) = (&hosts.names, &hosts.psp_specs, &hosts.sched_specs, &hosts.qfull, &hosts.lun_depths);
    let (links, link_ends) = (&paths.links, &paths.ends);
    let hosts = &hosts.configs;
    // A volume's own policy that no device uses is still checked.
    for psp in volumes.psp.iter().flatten() {
        build_kind(psp, &PSPS, Some("fixed"))?;
    }
    let mut psp_at: Vec<String> = vec![];
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
        let host = resolve(&v, "host", &host_name, "host", host_names)?;
        let volume_name = v.string("volume", None, "volume its virtual disk lives on")?;
        let volume = resolve(&v, "volume", &volume_name, "volume", volume_names)?;
        let ad = v.table("adapter", "virtual SCSI adapter")?;
        let kinds: Vec<&'static str> = VIRTUAL_ADAPTERS.iter().map(|a| a.kind).collect();
        let kind = ad.choice("kind", &kinds, Some("pvscsi"), "pvscsi, lsilogic or ideal")?;
        let va = VIRTUAL_ADAPTERS.iter().find(|a| a.kind == kind).expect("listed");
        let disk_q = ad.int("disk_queue_depth", Some(i64::from(va.disk_queue.0)), 1, i64::from(va.disk_queue.1), "virtual disk queue depth")?;
        let adapter_q = ad.int("queue_depth", Some(i64::from(va.adapter_queue.0)), 1, i64::from(va.adapter_queue.1), "virtual adapter queue depth")?;
        ad.finish()?;
        let shares = read_shares(&v)?;
        let reservation_iops = v.rate_iops("reservation", 10_000_000.0, "IOPS guaranteed under contention, I/Os in the scheduler's cost units (mclock scheduler; 0 = none)")?;
        let limit_iops = v.rate_iops("limit", 10_000_000.0, "IOPS cap, I/Os in the scheduler's cost units (mclock scheduler; 0 = unlimited)")?;
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
                let host_psp = host_psp_specs[host].kind_table("psp", "path selection policy")?;
                let psp_spec = match &volumes.psp[volume] {
                    Some(own) => {
                        // The host's policy is checked even where every volume has its own.
                        build_kind(&host_psp, &PSPS, Some("fixed"))?;
                        own
                    }
                    None => &host_psp,
                };
                let psp = build_kind(psp_spec, &PSPS, Some("fixed"))?;
                let paths = device_paths(host, &volume_arrays[volume], link_ends, links, preferred, &host_names[host]);
                psp_at.push(psp_spec.location().to_string());
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
                jobs.push(JobConfig { name: n, vm: vm_index, workload: instance.workload, plan: instance.plan, after: instance.after.iter().map(|k| first + k).collect(), set: first, entry: job_name.clone() });
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
    Ok(Built { devices, psp_at, vms, jobs })
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

/// A link that carries several devices names each device's path `<link>:<device>`.
pub(super) fn name_shared_paths(devices: &mut [DeviceConfig], links: &[Link], host_names: &NameList) {
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
}

/// Each device's path selection policy takes its paths by their final names (after
/// `name_shared_paths`), which a preferred path is written with; errors name the policy's table.
pub(super) fn attach_policies(devices: &mut [DeviceConfig], psp_at: &[String]) -> SpecResult<()> {
    for (d, at) in devices.iter_mut().zip(psp_at) {
        let names: Vec<String> = d.paths.iter().map(|p| p.name.clone()).collect();
        d.psp.attach(&names).map_err(|m| SpecError::new(at.clone(), m))?;
    }
    Ok(())
}
