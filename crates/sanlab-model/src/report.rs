//! What a run reports: per VM, job, path, device and array, the PSP's decisions, the
//! conservation check, and the time series. Serialised as the `--json` document.

use crate::engine::World;
use crate::io::Stage;
use sanlab_metrics::{IoStats, LatencyMs, LatencyNs, TimeSeries};
use serde::Serialize;

#[derive(Serialize)]
pub struct VmReport {
    pub name: String,
    pub host: String,
    pub issued: u64,
    pub completed: u64,
    pub in_flight: u64,
    pub iops: f64,
    pub mbps: f64,
    pub read_iops: f64,
    pub write_iops: f64,
    pub lat_ms: LatencyMs,
    pub failed: u64,
    pub failed_by_reason: FailedByReason,
    /// Commands of its requests aborted or refused and sent again.
    pub retried: u64,
}

/// Failed I/Os by why: no path (the host does not queue), APD timeout, PDL.
#[derive(Serialize)]
pub struct FailedByReason {
    pub no_path: u64,
    pub apd_timeout: u64,
    pub pdl: u64,
}

impl From<[u64; 3]> for FailedByReason {
    fn from([no_path, apd_timeout, pdl]: [u64; 3]) -> Self {
        Self { no_path, apd_timeout, pdl }
    }
}

/// One edge of the fault timeline: an event starting or ending, or a mediator's decision.
#[derive(Serialize)]
pub struct FaultReport {
    pub t_s: f64,
    pub kind: &'static str,
    pub phase: &'static str,
    pub target: String,
    /// The device paths it acts on.
    pub paths: Vec<String>,
    pub detail: String,
    /// Longest VM I/O latency of the I/Os completing from this edge to the next (or the run's end).
    pub max_io_latency_ms: f64,
}

/// One direction of a job, shaped like fio's per-direction JSON.
#[derive(Serialize)]
pub struct DirectionReport {
    pub total_ios: u64,
    pub io_bytes: u64,
    pub runtime_ms: f64,
    pub iops: f64,
    pub bw_bytes: f64,
    pub lat_ns: LatencyNs,
    /// fio's bandwidth samples (KiB/s) and IOPS samples over the job's averaging windows.
    pub bw_samples: crate::engine::rates::RateReport,
    pub iops_samples: crate::engine::rates::RateReport,
}

#[derive(Serialize)]
pub struct JobReport {
    pub name: String,
    pub vm: String,
    pub options: std::collections::BTreeMap<String, String>,
    /// fio options the job gave that have no effect on the model.
    pub ignored: Vec<&'static str>,
    pub read: DirectionReport,
    pub write: DirectionReport,
    /// What a fio job found (latency_target's depth, steadystate) or why it ended early.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fio: Option<sanlab_workload::FioFindings>,
    /// Measured submissions by the job's depth after each, in fio's `iodepth_level` buckets
    /// (1, 2, 4, 8, 16, 32, >=64).
    pub iodepth_level: [u64; 7],
    /// Measured syncs of a job that syncs between writes (fio `fsync`, `fdatasync`,
    /// `sync_file_range`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub syncs: Option<SyncCounts>,
    /// The workload entry (`[[vm.job]]`) the job comes from: one fio invocation, one fio document.
    pub entry: String,
    /// When the job stopped issuing, from the run's start (fio's `elapsed` is its invocation's
    /// last end).
    pub end_ms: f64,
    /// Its place in its fio job file or command line (section name, reporting group, options).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fio_place: Option<sanlab_workload::FioPlace>,
}

/// A job's syncs by kind; each ended in the guest at once (see `sanlab-workload`'s `fio/sync.rs`).
#[derive(Serialize)]
pub struct SyncCounts {
    pub fsync: u64,
    pub fdatasync: u64,
    pub sync_file_range: u64,
}

/// A host: what its VMs saw, what its devices saw, and its flow control when it has one.
#[derive(Serialize)]
pub struct HostReport {
    pub name: String,
    pub vms: u32,
    pub iops: f64,
    pub mbps: f64,
    /// VM-observed latency of all the host's VMs.
    pub lat_ms: LatencyMs,
    /// Mean time from dispatch to completion of the host's device requests (its DAVG).
    pub device_lat_ms: f64,
    pub flow_control: Option<FlowControlReport>,
    pub window: Option<WindowReport>,
}

#[derive(Serialize)]
pub struct FlowControlReport {
    pub kind: &'static str,
    pub latency_threshold_ms: f64,
    /// β at the end of the run (Σ shares of busy VMs / share_unit).
    pub beta: f64,
    /// L(t) at the end of the run.
    pub latency_estimate_ms: f64,
}

/// The host's window (sum over its controlled devices), over the measured samples.
#[derive(Serialize)]
pub struct WindowReport {
    #[serde(rename = "final")]
    pub last: f64,
    pub mean: f64,
    pub min: f64,
    pub max: f64,
}

#[derive(Serialize)]
pub struct PathReport {
    pub name: String,
    pub host: String,
    pub array: String,
    pub device: String,
    pub alua: &'static str,
    pub state: &'static str,
    pub ios: u64,
    pub iops: f64,
    pub share: f64,
    pub mbps: f64,
    pub lat_ms: LatencyMs,
    /// Requests moved to another path after this one died, or failed on it.
    pub failed_over: u64,
    /// Commands aborted or refused on this path and sent again.
    pub retried: u64,
    /// The host adapter it leaves from, the array controller and port it reaches.
    pub adapter: String,
    pub controller: String,
    pub port: String,
}

/// A device with esxtop's figures: DQLEN, ACTV, QUED (time averages), and KAVG, DAVG, GAVG
/// (mean ms in the kernel queue, on the path, both).
#[derive(Serialize)]
pub struct DeviceReport {
    pub name: String,
    pub host: String,
    pub volume: String,
    pub queue_depth: u32,
    pub ios: u64,
    pub iops: f64,
    pub lat_ms: LatencyMs,
    pub dqlen_mean: f64,
    pub actv_mean: f64,
    pub qued_mean: f64,
    pub kavg_ms: f64,
    pub davg_ms: f64,
    pub gavg_ms: f64,
    /// QUEUE FULL answers received, and the device depth at the end (after QFULL throttling).
    pub qfull: u64,
    pub depth_end: u32,
    /// Commands aborted on a dead path or refused, and sent again.
    pub retried: u64,
    pub failed: u64,
    pub failed_by_reason: FailedByReason,
}

/// A volume's array-side figures; the QoS fields are present when it has QoS.
#[derive(Serialize)]
pub struct VolumeReport {
    pub name: String,
    pub qos: Option<QosReport>,
}

#[derive(Serialize)]
pub struct QosReport {
    pub min: f64,
    pub max: f64,
    pub burst: f64,
    /// Requests released to the media, per second of measured time.
    pub released_iops: f64,
    /// Mean time a request was held by QoS (latency injected), ms.
    pub held_ms_mean: f64,
    /// Requests held at the end of the run.
    pub held_now: usize,
    pub credit_s: f64,
}

/// One core (or controller): the share of the array's requests whose address segment it owns, its
/// utilisation, and those requests per second.
#[derive(Serialize)]
pub struct CoreReport {
    pub name: String,
    pub share: f64,
    /// Busy share of the time; none for a controller of an array without modelled cores.
    pub util: Option<f64>,
    pub iops: f64,
}

#[derive(Serialize)]
pub struct ArrayReport {
    pub name: String,
    pub cores: Vec<CoreReport>,
    pub controllers: Vec<CoreReport>,
    /// Read hits / reads, when the array has a cache.
    pub cache_hit_ratio: Option<f64>,
    /// Commands refused with QUEUE FULL (target queue at `max_outstanding`).
    pub qfull_sent: u64,
    pub iops: f64,
    pub mbps: f64,
    pub host_ios: u64,
    pub replicated_ios: u64,
    pub utilisation: f64,
    pub lat_ms: LatencyMs,
    /// Disk-group back end: back-end operations, stripe writes, cache, per-disk utilisation.
    pub disk_group: Option<crate::array::disk_group::DiskGroupStats>,
}

#[derive(Serialize)]
pub struct PspEventReport {
    pub t_s: f64,
    pub device: String,
    pub event: String,
    pub paths: Vec<String>,
}

pub use sanlab_metrics::Conservation;

/// A cost pilot's figures ([`World::pilot_figures`]).
pub struct PilotFigures {
    pub events: u64,
    /// I/Os the VMs completed.
    pub ios: u64,
    /// The VMs' names, in order.
    pub vms: Vec<String>,
    pub timeseries: TimeSeries,
}

#[derive(Serialize)]
pub struct RunReport {
    pub sim_time_s: f64,
    pub measured_s: f64,
    pub events: u64,
    pub ios: u64,
    /// Whether the seed can change the figures: a random draw that may shape timing happened
    /// (noise, a read/write mix, a size, an arrival), or an array looks at where I/Os land
    /// (cores, a cache, disks). When false, every seed gives the same figures.
    pub seed_matters: bool,
    pub hosts: Vec<HostReport>,
    pub vms: Vec<VmReport>,
    pub jobs: Vec<JobReport>,
    pub paths: Vec<PathReport>,
    pub devices: Vec<DeviceReport>,
    pub volumes: Vec<VolumeReport>,
    pub arrays: Vec<ArrayReport>,
    pub psp_events: Vec<PspEventReport>,
    pub faults: Vec<FaultReport>,
    pub conservation: Vec<Conservation>,
    pub timeseries: TimeSeries,
}

impl World {
    /// The run's results. Moves the time series out of the world: call once, at the end.
    /// I/Os the VMs completed.
    fn completed_ios(&self) -> u64 {
        self.vms.iter().map(|v| v.tally.completed).sum()
    }

    /// What a cost pilot reads of a run: its I/Os, events and time series, without the
    /// percentiles of every entity that [`World::report`] computes (seconds at 10,000 VMs).
    pub fn pilot_figures(&mut self) -> PilotFigures {
        PilotFigures {
            events: self.q.events_processed(),
            ios: self.completed_ios(),
            vms: self.vms.iter().map(|v| v.name.clone()).collect(),
            timeseries: std::mem::take(&mut self.series),
        }
    }

    pub fn report(&mut self) -> RunReport {
        let now = self.q.now();
        let measured_s = (now - self.warmup_ns) as f64 / 1e9;
        let per_s = |n: u64| if measured_s > 0.0 { n as f64 / measured_s } else { 0.0 };
        let mbps = |s: &IoStats| if measured_s > 0.0 { s.bytes() as f64 / measured_s / 1e6 } else { 0.0 };

        let conservation = self.conservation();
        let mut vm_jobs: Vec<Vec<&IoStats>> = vec![vec![]; self.vms.len()];
        for j in &self.jobs {
            vm_jobs[j.vm].extend([&j.read, &j.write]);
        }
        let vms = self
            .vms
            .iter()
            .zip(vm_jobs)
            .map(|(v, job_stats)| VmReport {
                name: v.name.clone(),
                host: self.hosts[v.host].name.clone(),
                issued: v.tally.issued,
                completed: v.tally.completed,
                in_flight: v.tally.issued - v.tally.completed - v.tally.failed,
                iops: per_s(v.tally.stats.ios()),
                mbps: mbps(&v.tally.stats),
                read_iops: per_s(v.reads),
                write_iops: per_s(v.writes),
                lat_ms: if v.tally.stats.keeps_histogram() { v.tally.stats.latency_ms() } else { v.tally.stats.merged(job_stats).latency_ms() },
                failed: v.tally.failed,
                failed_by_reason: v.failed_by_reason.into(),
                retried: v.retried,
            })
            .collect();
        // A job is measured from its own start (run warm-up, fio ramp_time or startdelay) to
        // when it stopped issuing or the run ended, like fio's per-job runtime.
        let direction = |s: &IoStats, window_s: f64, [bw, iops]: [crate::engine::rates::RateReport; 2]| DirectionReport {
            total_ios: s.ios(),
            io_bytes: s.bytes(),
            runtime_ms: window_s * 1e3,
            iops: if window_s > 0.0 { s.ios() as f64 / window_s } else { 0.0 },
            bw_bytes: if window_s > 0.0 { s.bytes() as f64 / window_s } else { 0.0 },
            lat_ns: s.latency_ns(),
            bw_samples: bw,
            iops_samples: iops,
        };
        let jobs = self
            .jobs
            .iter()
            .map(|j| {
                let window_s = j.stop_ns.min(now).saturating_sub(j.measured_from_ns) as f64 / 1e9;
                let [bw, iops] = j.rates.report(j.stop_ns.min(now));
                JobReport {
                    name: j.name.clone(),
                    vm: self.vms[j.vm].name.clone(),
                    options: j.workload.options().into_iter().collect(),
                    ignored: j.workload.ignored(),
                    read: direction(&j.read, window_s, [bw[0], iops[0]]),
                    write: direction(&j.write, window_s, [bw[1], iops[1]]),
                    fio: j.workload.findings(),
                    iodepth_level: j.rates.depth_levels,
                    entry: j.entry.clone(),
                    end_ms: j.stop_ns.min(now) as f64 / 1e6,
                    fio_place: j.workload.fio_place(),
                    syncs: j.sync.map(|_| {
                        let [fsync, fdatasync, sync_file_range] = j.rates.syncs;
                        SyncCounts { fsync, fdatasync, sync_file_range }
                    }),
                }
            })
            .collect();
        let mut paths = vec![];
        let mut devices = vec![];
        let mut psp_events = vec![];
        for d in &self.devices {
            let total: u64 = d.paths.iter().map(|p| p.tally.stats.ios()).sum();
            for (p, st) in d.paths.iter().zip(&d.states) {
                let state = if !st.up {
                    "dead"
                } else if p.tally.stats.ios() > 0 {
                    "active (I/O)"
                } else if matches!(st.alua, crate::multipath::Alua::Standby) {
                    "standby"
                } else {
                    "active"
                };
                paths.push(PathReport {
                    name: p.name.clone(),
                    host: self.hosts[d.host].name.clone(),
                    array: self.arrays[p.array].name.clone(),
                    device: d.name.clone(),
                    alua: st.alua.name(),
                    state,
                    ios: p.tally.stats.ios(),
                    iops: per_s(p.tally.stats.ios()),
                    share: if total == 0 { 0.0 } else { p.tally.stats.ios() as f64 / total as f64 },
                    mbps: mbps(&p.tally.stats),
                    lat_ms: p.tally.stats.latency_ms(),
                    failed_over: p.tally.failed,
                    retried: p.retried,
                    adapter: p.adapter.clone(),
                    controller: format!("ctrl{}", p.controller + 1),
                    port: p.port.clone(),
                });
            }
            let mean = |sum: f64| if d.windows == 0 { 0.0 } else { sum / d.windows as f64 };
            let per_io_ms = |sum: u128| if d.tally.stats.ios() == 0 { 0.0 } else { sum as f64 / d.tally.stats.ios() as f64 / 1e6 };
            devices.push(DeviceReport {
                name: d.name.clone(),
                host: self.hosts[d.host].name.clone(),
                volume: d.label.clone(),
                queue_depth: d.q.lun_depth(),
                ios: d.tally.stats.ios(),
                iops: per_s(d.tally.stats.ios()),
                lat_ms: d.tally.stats.latency_ms(),
                dqlen_mean: mean(d.dqlen_sum),
                actv_mean: mean(d.actv_sum),
                qued_mean: mean(d.qued_sum),
                kavg_ms: per_io_ms(d.kernel_ns_sum),
                davg_ms: per_io_ms(d.device_ns_sum),
                gavg_ms: per_io_ms(d.kernel_ns_sum + d.device_ns_sum),
                qfull: d.qfull_seen,
                depth_end: d.q.depth(),
                retried: d.retried,
                failed: d.tally.failed,
                failed_by_reason: d.failed_by_reason.into(),
            });
            for e in &d.psp_log {
                psp_events.push(PspEventReport {
                    t_s: e.t_ns as f64 / 1e9,
                    device: d.name.clone(),
                    event: e.event.clone(),
                    paths: e.paths.iter().map(|&i| d.paths[i].name.clone()).collect(),
                });
            }
        }
        let volumes = self
            .volumes
            .iter()
            .map(|v| VolumeReport {
                name: v.name.clone(),
                qos: v.qos.as_ref().map(|q| QosReport {
                    min: q.params.min_iops,
                    max: q.params.max_iops,
                    burst: q.params.burst_iops,
                    released_iops: if now > 0 { q.released as f64 / (now as f64 / 1e9) } else { 0.0 },
                    held_ms_mean: if q.released == 0 { 0.0 } else { q.held_ns_sum as f64 / q.released as f64 / 1e6 },
                    held_now: q.held(),
                    credit_s: q.credit_s(),
                }),
            })
            .collect();
        // With cores, `with_controllers` sums them; without, the paths' I/O tells each one's load.
        let front_ends: Vec<Vec<CoreReport>> =
            (0..self.arrays.len()).map(|a| if self.arrays[a].cores.is_some() { vec![] } else { self.controllers_by_paths(a, per_s) }).collect();
        let arrays = self
            .arrays
            .iter_mut()
            .zip(front_ends)
            .map(|(a, front_end)| ArrayReport {
                cores: a.cores.as_mut().map_or(vec![], |c| {
                    let total: u64 = c.owned.iter().sum();
                    (0..c.centres.len())
                        .map(|k| CoreReport {
                            name: c.name(k),
                            share: if total == 0 { 0.0 } else { c.owned[k] as f64 / total as f64 },
                            util: Some(c.centres[k].utilisation(now)),
                            iops: c.owned[k] as f64 / (now as f64 / 1e9).max(1e-9),
                        })
                        .collect()
                }),
                controllers: front_end,
                qfull_sent: a.qfull_sent,
                cache_hit_ratio: a.cache.as_ref().and_then(|c| (c.hits + c.misses > 0).then(|| c.hits as f64 / (c.hits + c.misses) as f64)),
                name: a.name.clone(),
                iops: per_s(a.tally.stats.ios()),
                mbps: mbps(&a.tally.stats),
                host_ios: a.tally.completed,
                replicated_ios: a.replicated_ios,
                utilisation: a.backend.utilisation(now),
                lat_ms: a.tally.stats.latency_ms(),
                disk_group: match &mut a.backend {
                    crate::array::Backend::Disks(g) => Some(g.stats(now)),
                    crate::array::Backend::Servers { .. } => None,
                },
            })
            .collect::<Vec<ArrayReport>>();
        let arrays = arrays.into_iter().map(with_controllers).collect();
        let hosts = self.host_reports(per_s, mbps);
        RunReport {
            sim_time_s: now as f64 / 1e9,
            seed_matters: self.timing_draws > 0
                || self.arrays.iter().any(|a| a.cores.is_some() || a.cache.is_some() || matches!(a.backend, crate::array::Backend::Disks(_))),
            measured_s,
            events: self.q.events_processed(),
            ios: self.completed_ios(),
            hosts,
            vms,
            jobs,
            paths,
            devices,
            volumes,
            arrays,
            psp_events,
            faults: self.fault_reports(),
            conservation,
            timeseries: std::mem::take(&mut self.series),
        }
    }

    /// The fault timeline; the last edge's latency window runs to the end of the run.
    fn fault_reports(&self) -> Vec<FaultReport> {
        let last = self.fault_log.len().saturating_sub(1);
        self.fault_log
            .iter()
            .enumerate()
            .map(|(i, e)| {
                let f = &self.faults[e.fault];
                let max_ns = if i == last { self.edge_max_latency_ns } else { e.max_latency_ns };
                let paths = self.devices.iter().flat_map(|d| d.paths.iter().filter(|p| f.links.contains(&p.link)).map(|p| p.name.clone())).collect();
                FaultReport { t_s: e.t_ns as f64 / 1e9, kind: f.kind, phase: e.phase, target: f.target.clone(), paths, detail: e.detail.clone(), max_io_latency_ms: max_ns as f64 / 1e6 }
            })
            .collect()
    }

    fn host_reports(&self, per_s: impl Fn(u64) -> f64, mbps: impl Fn(&IoStats) -> f64) -> Vec<HostReport> {
        self.hosts
            .iter()
            .enumerate()
            .map(|(h, host)| {
                let devices: Vec<_> = self.devices.iter().filter(|d| d.host == h).collect();
                let (device_ns, device_ios) = devices.iter().fold((0u128, 0u64), |(ns, n), d| (ns + d.device_ns_sum, n + d.tally.stats.ios()));
                let controlled: Vec<_> = devices.iter().filter_map(|d| d.flow.as_ref()).collect();
                let flow_control = controlled.first().map(|f| FlowControlReport {
                    kind: self.volumes[f.volume].flow.expect("a controlled device's volume has flow control").0,
                    latency_threshold_ms: f.state.law.threshold_ns / 1e6,
                    beta: controlled.iter().map(|f| f.state.beta).sum(),
                    latency_estimate_ms: f.state.latency_estimate_ns / 1e6,
                });
                let window = host.flow.as_ref().filter(|f| f.window_samples > 0).map(|f| WindowReport {
                    last: controlled.iter().map(|f| f64::from(f.state.depth())).sum(),
                    mean: f.window_sum / f.window_samples as f64,
                    min: f.window_min,
                    max: f.window_max,
                });
                HostReport {
                    name: host.name.clone(),
                    vms: self.vms.iter().filter(|v| v.host == h).count() as u32,
                    iops: per_s(host.stats.ios()),
                    mbps: mbps(&host.stats),
                    lat_ms: host.stats.latency_ms(),
                    device_lat_ms: if device_ios == 0 { 0.0 } else { device_ns as f64 / device_ios as f64 / 1e6 },
                    flow_control,
                    window,
                }
            })
            .collect()
    }

    /// Counts what each component holds by walking the live requests, independently of the
    /// issued/completed counters, so a lost or duplicated request shows up as a mismatch.
    pub fn conservation(&self) -> Vec<Conservation> {
        let mut vm_live = vec![0u64; self.vms.len()];
        let mut dev_live = vec![0u64; self.devices.len()];
        let mut path_live: Vec<Vec<u64>> = self.devices.iter().map(|d| vec![0; d.paths.len()]).collect();
        let mut array_live = vec![0u64; self.arrays.len()];
        let mut job_live = vec![0u64; self.jobs.len()];
        for io in self.ios.live() {
            if io.array != crate::io::NONE {
                array_live[io.array as usize] += 1;
            }
            if io.parent == crate::io::NONE {
                job_live[io.job as usize] += 1;
            }
            // Pieces cut below the device queue belong to their device-level request.
            if io.wire {
                continue;
            }
            if io.parent == crate::io::NONE {
                vm_live[self.jobs[io.job as usize].vm] += 1;
            }
            match io.stage {
                Stage::Vm => {}
                Stage::Device => dev_live[io.device as usize] += 1,
                Stage::Path => {
                    dev_live[io.device as usize] += 1;
                    path_live[io.device as usize][io.path as usize] += 1;
                }
            }
        }
        let mut out = vec![];
        for (v, live) in self.vms.iter().zip(vm_live) {
            out.push(v.tally.conservation(format!("vm/{}", v.name), live));
        }
        for (job, live) in self.jobs.iter().zip(job_live) {
            out.push(Conservation { component: format!("job/{}", job.name), issued: job.issued, completed: job.completed, failed: job.failed, in_flight: live });
        }
        for ((d, live), paths_live) in self.devices.iter().zip(dev_live).zip(path_live) {
            out.push(d.tally.conservation(format!("device/{}", d.name), live));
            for (p, live) in d.paths.iter().zip(paths_live) {
                out.push(p.tally.conservation(format!("path/{}", p.name), live));
            }
        }
        for (a, live) in self.arrays.iter().zip(array_live) {
            out.push(a.tally.conservation(format!("array/{}", a.name), live));
        }
        out
    }
}

/// Controller figures from the cores': shares and rates add up, utilisation is the mean.
impl World {
    /// An array's controllers by the host I/O its paths carried through their ports.
    fn controllers_by_paths(&self, array: usize, per_s: impl Fn(u64) -> f64) -> Vec<CoreReport> {
        let mut ios = vec![0u64; self.arrays[array].controllers as usize];
        for p in self.devices.iter().flat_map(|d| &d.paths).filter(|p| p.array == array) {
            ios[p.controller as usize] += p.tally.stats.ios();
        }
        let total: u64 = ios.iter().sum();
        let share = |n: u64| if total == 0 { 0.0 } else { n as f64 / total as f64 };
        ios.iter().enumerate().map(|(c, &n)| CoreReport { name: format!("ctrl{}", c + 1), share: share(n), util: None, iops: per_s(n) }).collect()
    }
}

fn with_controllers(mut a: ArrayReport) -> ArrayReport {
    if a.cores.is_empty() {
        return a;
    }
    let mut controllers: Vec<CoreReport> = vec![];
    for c in &a.cores {
        let name = c.name.split('.').next().unwrap_or(&c.name).to_string();
        match controllers.iter_mut().find(|x| x.name == name) {
            Some(x) => {
                x.share += c.share;
                x.iops += c.iops;
                x.util = x.util.zip(c.util).map(|(a, b)| a + b);
            }
            None => controllers.push(CoreReport { name, share: c.share, util: c.util, iops: c.iops }),
        }
    }
    let per = controllers.first().map_or(1, |x| a.cores.iter().filter(|c| c.name.starts_with(&format!("{}.", x.name))).count());
    for x in &mut controllers {
        x.util = x.util.map(|u| u / per as f64);
    }
    a.controllers = controllers;
    a
}
