//! A trace of several disks, each onto its own volume. A VM whose trace job has
//! `volumes = { "0" = "vol_a", "1" = "vol_b" }` becomes one VM per disk, `<vm>.<disk>`, on the
//! same host, each on its volume and replaying its disk only (the job's `disk`, and `host` for
//! an MSR `Hostname/DiskNumber` key). A sanlab VM has one virtual disk, so the traced server's
//! disks are VMs of their own: they share the host's device queues, adapters and paths, each with
//! its own virtual disk and adapter queue (our choice; a server's disks share one HBA queue).

use sanlab_spec::{did_you_mean, SpecError};
use toml::{Table, Value};

/// Replaces each VM with a `volumes` map by its VMs per disk, in place of it.
pub fn expand(root: &mut Table) -> Result<(), SpecError> {
    let Some(Value::Array(vms)) = root.get("vm") else { return Ok(()) };
    let has_map = |job: &Value| job.get("kind").and_then(Value::as_str) == Some("trace") && job.get("volumes").is_some();
    if !vms.iter().any(|vm| vm.get("job").and_then(Value::as_array).is_some_and(|jobs| jobs.iter().any(has_map))) {
        return Ok(());
    }
    let volumes: Vec<&str> = root.get("volume").and_then(Value::as_array).map(|a| a.iter().filter_map(|v| v.get("name").and_then(Value::as_str)).collect()).unwrap_or_default();
    let mut out = vec![];
    for (i, vm) in vms.iter().enumerate() {
        let jobs = vm.get("job").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
        let (Some(j), Some(vm_table)) = (jobs.iter().position(has_map), vm.as_table()) else {
            out.push(vm.clone());
            continue;
        };
        let at = format!("vm[{i}].job[{j}]");
        let err = |key: &str, m: String| SpecError::new(format!("{at}.{key}"), m);
        if jobs.len() > 1 {
            return Err(err("volumes", format!("makes one VM per disk of the trace, and this VM runs {} jobs: give the trace job a VM of its own", jobs.len())));
        }
        let job = jobs[0].as_table().expect("a job with keys is a table");
        if expanded(vm_table, job) {
            out.push(vm.clone());
            continue;
        }
        if let Some(key) = ["disk", "host"].into_iter().find(|k| job.contains_key(*k)) {
            return Err(err(key, "selects one disk, and `volumes` maps every disk to a volume: give one of them".into()));
        }
        if vm_table.contains_key("volume") {
            return Err(SpecError::new(format!("vm[{i}].volume"), format!("each disk of the trace has its volume in {at}.volumes: drop vm[{i}].volume")));
        }
        let Some(Value::Table(map)) = job.get("volumes") else {
            return Err(err("volumes", "expected a table of disk = volume, e.g. { \"0\" = \"vol_a\", \"1\" = \"vol_b\" }".into()));
        };
        if map.is_empty() {
            return Err(err("volumes", "maps no disk: expected disk = volume, e.g. { \"0\" = \"vol_a\" }".into()));
        }
        let vm_name = vm_table.get("name").and_then(Value::as_str).unwrap_or_default();
        for (disk, volume) in map {
            let at_disk = |m: String| err(&format!("volumes.\"{disk}\""), m);
            let volume = volume.as_str().ok_or_else(|| at_disk("expected a volume's name".into()))?;
            if !volumes.contains(&volume) {
                return Err(at_disk(format!("`{volume}` is no volume (volumes: {}){}", volumes.join(", "), did_you_mean(volume, volumes.iter().copied()))));
            }
            let mut job = job.clone();
            // MSR's `Hostname/DiskNumber`; a fio iolog's file names (`/dev/sdb`) stay whole.
            let iolog = job.get("format").and_then(Value::as_str) == Some("fio_iolog") || disk.starts_with('/');
            let (host, id) = disk.split_once('/').filter(|_| !iolog).map_or((None, disk.as_str()), |(h, d)| (Some(h), d));
            job.insert("disk".into(), Value::String(id.into()));
            if let Some(h) = host {
                job.insert("host".into(), Value::String(h.into()));
            }
            let suffix = disk.trim_start_matches('/').replace('/', "-");
            if let Some(Value::String(name)) = job.get_mut("name") {
                *name = format!("{name}.{suffix}");
            }
            let mut v = vm_table.clone();
            v.insert("name".into(), Value::String(format!("{vm_name}.{suffix}")));
            v.insert("volume".into(), Value::String(volume.into()));
            v.insert("job".into(), Value::Array(vec![Value::Table(job)]));
            out.push(Value::Table(v));
        }
    }
    root.insert("vm".into(), Value::Array(out));
    Ok(())
}

/// A VM this expansion made (as a resolved scenario written out holds it): its job's `disk` (and
/// `host`) is a key of `volumes` that maps to the VM's volume, so resolving again keeps it.
fn expanded(vm: &Table, job: &Table) -> bool {
    let text = |t: &Table, k: &str| t.get(k).and_then(Value::as_str).map(str::to_string);
    let Some(disk) = text(job, "disk") else { return false };
    let key = text(job, "host").map_or(disk.clone(), |h| format!("{h}/{disk}"));
    let mapped = job.get("volumes").and_then(|m| m.get(&key)).and_then(Value::as_str);
    mapped.is_some() && mapped.map(str::to_string) == text(vm, "volume")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fio_iologs_file_names_map_whole() {
        // `/dev/sdb` is a file name, not MSR's Hostname/DiskNumber.
        let mut root: Table = "volume = [{ name = \"a\" }, { name = \"b\" }]\n[[vm]]\nname = \"db\"\njob = [{ name = \"t\", kind = \"trace\", file = \"two.iolog\", volumes = { \"/dev/sdb\" = \"a\", \"/dev/sdc\" = \"b\" } }]\n".parse().unwrap();
        expand(&mut root).unwrap();
        let vms = root["vm"].as_array().unwrap();
        let got: Vec<(&str, &str, &str, bool)> = vms
            .iter()
            .map(|vm| {
                let job = &vm["job"][0];
                (vm["name"].as_str().unwrap(), vm["volume"].as_str().unwrap(), job["disk"].as_str().unwrap(), job.get("host").is_some())
            })
            .collect();
        assert_eq!(got, [("db.dev-sdb", "a", "/dev/sdb", false), ("db.dev-sdc", "b", "/dev/sdc", false)]);
        // Resolving again keeps them.
        let again = root.clone();
        expand(&mut root).unwrap();
        assert_eq!(root, again);
    }
}
