//! The built system a run simulates: every component resolved to indices, every parameter
//! validated. The scenario crate builds it from a file; tests can build it directly.

use crate::array::{cache::ReadCache, cores::Cores, qos::QosParams, replication::Replication, Backend};
use crate::host::flow_control::FlowControl;
use crate::host::device_queue::DeviceQueue;
use crate::fabric::Link;
use crate::multipath::{Alua, PathSelector};
use crate::workload::Workload;

pub struct RunConfig {
    pub duration_ns: u64,
    pub warmup_ns: u64,
    pub seed: u64,
    pub sample_interval_ns: u64,
}

pub struct HostConfig {
    pub name: String,
    pub adapter_queue_depth: u32,
    /// Disk.DiskMaxIOSize: requests above it are split before the device queue.
    pub disk_max_io_size_bytes: u64,
    /// The adapter's own limit (iSCSI MaxIoSizeKB): split below the device queue.
    pub adapter_max_io_size_bytes: u64,
    pub qfull_retry_ns: u64,
    pub failover: crate::host::failover::Failover,
}

pub struct ArrayConfig {
    pub name: String,
    pub backend: Box<Backend>,
    pub cores: Option<Cores>,
    pub cache: Option<ReadCache>,
    pub max_outstanding: Option<u32>,
}

pub struct VolumeConfig {
    pub name: String,
    /// Index into `Topology::replications` when the volume is replicated active-active.
    pub replication: Option<usize>,
    pub qos: Option<QosParams>,
    /// Host-level flow control (PARDA, SIOC) of every host's device for this volume.
    pub flow_control: Option<Box<dyn FlowControl>>,
}

pub struct PathConfig {
    pub name: String,
    pub link: usize,
    pub array: usize,
    pub alua: Alua,
}

/// A device the host sees: a VMFS volume's LUN, or a vVol protocol endpoint.
pub struct DeviceConfig {
    pub name: String,
    pub host: usize,
    pub label: String,
    /// The device queue with its scheduler; its worlds are the VMs' disks.
    pub queue: DeviceQueue,
    pub psp: Box<dyn PathSelector>,
    pub paths: Vec<PathConfig>,
}

pub struct VmConfig {
    pub name: String,
    pub host: usize,
    pub device: usize,
    pub volume: usize,
    /// The VM's world number on its device's queue.
    pub world: u32,
    /// Disk shares (they make the host's β under flow control).
    pub shares: u32,
    pub disk_queue_depth: u32,
    pub adapter_queue_depth: u32,
}

pub struct JobConfig {
    pub name: String,
    pub vm: usize,
    pub workload: Box<dyn Workload>,
}

pub struct Topology {
    pub run: RunConfig,
    pub hosts: Vec<HostConfig>,
    pub arrays: Vec<ArrayConfig>,
    pub replications: Vec<Replication>,
    pub volumes: Vec<VolumeConfig>,
    /// Host-to-array links the paths run over.
    pub links: Vec<Link>,
    pub devices: Vec<DeviceConfig>,
    pub vms: Vec<VmConfig>,
    pub jobs: Vec<JobConfig>,
    pub faults: Vec<FaultConfig>,
}

/// An `[[event]]` on the link of a `[[path]]` of `host`.
pub struct FaultConfig {
    pub link: usize,
    pub host: usize,
    pub fault: crate::fault::Fault,
}
