//! The built system a run simulates: every component resolved to indices, every parameter
//! validated. The scenario crate builds it from a file; tests can build it directly.

use crate::array::{replication::Replication, Media};
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
    pub max_io_size_bytes: u64,
}

pub struct ArrayConfig {
    pub name: String,
    pub media: Box<dyn Media>,
}

pub struct VolumeConfig {
    pub name: String,
    /// Index into `Topology::replications` when the volume is replicated active-active.
    pub replication: Option<usize>,
}

pub struct PathConfig {
    pub name: String,
    pub link: usize,
    pub array: usize,
    pub alua: Alua,
}

pub struct DeviceConfig {
    pub name: String,
    pub host: usize,
    pub volume: usize,
    pub queue_depth: u32,
    pub psp: Box<dyn PathSelector>,
    pub paths: Vec<PathConfig>,
}

pub struct VmConfig {
    pub name: String,
    pub host: usize,
    pub device: usize,
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
}
