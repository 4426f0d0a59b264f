//! A finished run's figures, into the report's schema (`crate::report`): rates over the measured
//! time, each entity's latency percentiles, the fault timeline and the conservation check.

use super::World;
use crate::io::Stage;
use crate::report::{
    ArrayReport, Conservation, CoreReport, DeviceReport, DirectionReport, FaultReport, FlowControlReport, HostReport, JobPacing, JobReport, PathReport, PilotFigures, PspEventReport,
    QosReport, QueueReport, RateReport, RunReport, StagesMs, SyncCounts, VmReport, VolumeReport, WindowReport,
};
use sanlab_des::SimTime;
use sanlab_metrics::IoStats;
use sanlab_workload::Pacing;

impl World {
    /// I/Os the VMs completed.
    fn completed_ios(&self) -> u64 {
        self.host.vms().iter().map(|v| v.tally.completed).sum()
    }

    /// What a cost pilot reads of a run: its I/Os, events and time series, without the
    /// percentiles of every entity that [`World::report`] computes (seconds at 10,000 VMs).
    pub fn pilot_figures(&mut self) -> PilotFigures {
        PilotFigures {
            events: self.q.events_processed(),
            ios: self.completed_ios(),
            vms: self.host.vms().iter().map(|v| v.name.clone()).collect(),
            timeseries: self.sampling.take_series(),
        }
    }

    /// The run's results. Moves the time series out of the world: call once, at the end.
    pub fn report(&mut self) -> RunReport {
        let now = self.q.now();
        let measured_s = (now - self.warmup_ns) as f64 / 1e9;
        let per_s = |n: u64| if measured_s > 0.0 { n as f64 / measured_s } else { 0.0 };
        let mbps = |s: &IoStats| if measured_s > 0.0 { s.bytes() as f64 / measured_s / 1e6 } else { 0.0 };

        let conservation = self.conservation();
        let (vm_queues, host_queues) = self.host.queue_reports(now, now - self.warmup_ns);
        let vms = self.vm_reports(now, vm_queues);
        let jobs = self.job_reports(now);
        let (paths, devices, psp_events) = self.device_reports(per_s, mbps);
        let volumes = self.volume_reports(per_s);
        let arrays = self.array_reports(now, per_s, mbps);
        let hosts = self.host_reports(per_s, mbps, host_queues);
        let mut links = self.fabric.link_reports(now - self.warmup_ns);
        links.extend(self.media.link_reports(now - self.warmup_ns));
        RunReport {
            sim_time_s: now as f64 / 1e9,
            seed_matters: self.timing_draws > 0
                || self.array.arrays().iter().enumerate().any(|(k, a)| a.cores.is_some() || a.cache.is_some() || self.media.has_disks(k)),
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
            links,
            faults: self.fault_reports(),
            conservation,
            timeseries: self.sampling.take_series(),
        }
    }

    /// How long each VM's jobs were issuing within the measured window: the union of their
    /// spans, each from the job's start (its startdelay, or when the jobs it waited for ended) to
    /// when it stopped. A VM's rates are over this time, as a job's are over its own: a workload
    /// that ends early (fio `runtime` or `size`, a vdbench run's `elapsed`, a trace) is not
    /// diluted by the rest of the run.
    fn vm_active_s(&self, now: SimTime) -> Vec<f64> {
        let mut spans: Vec<Vec<(SimTime, SimTime)>> = vec![vec![]; self.host.vms().len()];
        for j in self.workload.jobs().iter().filter(|j| j.started) {
            // The job's start, recovered from where its measurement starts (that is its start
            // plus ramp, or the run's warm-up when later: then the span starts there anyway).
            let start_ns = j.measured_from_ns.saturating_sub(j.plan.measured_from_ns.saturating_sub(j.plan.start_ns));
            let (from, to) = (start_ns.max(self.warmup_ns), j.stop_ns.min(now));
            if to > from {
                spans[j.vm].push((from, to));
            }
        }
        spans
            .into_iter()
            .map(|mut s| {
                s.sort_unstable();
                let (mut total, mut reached) = (0, 0);
                for (from, to) in s {
                    total += to.saturating_sub(from.max(reached));
                    reached = reached.max(to);
                }
                total as f64 / 1e9
            })
            .collect()
    }

    fn vm_reports(&self, now: SimTime, queues: Vec<[QueueReport; 2]>) -> Vec<VmReport> {
        let mut vm_jobs: Vec<Vec<&IoStats>> = vec![vec![]; self.host.vms().len()];
        for j in self.workload.jobs() {
            vm_jobs[j.vm].extend([&j.read, &j.write]);
        }
        self.host
            .vms()
            .iter()
            .zip(vm_jobs)
            .zip(self.vm_active_s(now))
            .zip(queues)
            .map(|(((v, job_stats), active_s), [disk_queue, adapter_queue])| {
                let per_s = |n: f64| if active_s > 0.0 { n / active_s } else { 0.0 };
                VmReport {
                    name: v.name.clone(),
                    host: self.host.hosts()[v.host].name.clone(),
                    issued: v.tally.issued,
                    completed: v.tally.completed,
                    in_flight: v.tally.issued - v.tally.completed - v.tally.failed,
                    iops: per_s(v.tally.stats.ios() as f64),
                    mbps: per_s(v.tally.stats.bytes() as f64) / 1e6,
                    read_iops: per_s(v.reads as f64),
                    write_iops: per_s(v.writes as f64),
                    lat_ms: if v.tally.stats.keeps_histogram() { v.tally.stats.latency_ms() } else { v.tally.stats.merged(job_stats).latency_ms() },
                    failed: v.tally.failed,
                    failed_by_reason: v.failed_by_reason.into(),
                    retried: v.retried,
                    disk_queue,
                    adapter_queue,
                    stages_ms: {
                        let ios = v.tally.stats.ios();
                        let ms = |sum: u128| if ios > 0 { sum as f64 / ios as f64 / 1e6 } else { 0.0 };
                        let [vm_queues, kavg, fabric, front_end, cores, cache, media] = v.stage_ns_sums;
                        let array = front_end + cores + cache + media;
                        StagesMs {
                            vm_queues: ms(vm_queues),
                            kavg: ms(kavg),
                            davg: ms(fabric + array),
                            fabric: ms(fabric),
                            array: ms(array),
                            array_front_end: ms(front_end),
                            array_cores: ms(cores),
                            array_cache: ms(cache),
                            array_media: ms(media),
                        }
                    },
                }
            })
            .collect()
    }

    fn job_reports(&self, now: SimTime) -> Vec<JobReport> {
        // A job is measured from its own start (run warm-up, fio ramp_time or startdelay) to
        // when it stopped issuing or the run ended, like fio's per-job runtime.
        let direction = |s: &IoStats, window_s: f64, [bw, iops]: [RateReport; 2]| DirectionReport {
            total_ios: s.ios(),
            io_bytes: s.bytes(),
            runtime_ms: window_s * 1e3,
            iops: if window_s > 0.0 { s.ios() as f64 / window_s } else { 0.0 },
            bw_bytes: if window_s > 0.0 { s.bytes() as f64 / window_s } else { 0.0 },
            lat_ns: s.latency_ns(),
            bw_samples: bw,
            iops_samples: iops,
        };
        self.workload
            .jobs()
            .iter()
            .map(|j| {
                let window_s = j.stop_ns.min(now).saturating_sub(j.measured_from_ns) as f64 / 1e9;
                let [bw, iops] = j.rates.report(j.stop_ns.min(now));
                JobReport {
                    name: j.name.clone(),
                    vm: self.host.vms()[j.vm].name.clone(),
                    options: j.plan.options.iter().cloned().collect(),
                    ignored: j.plan.ignored.clone(),
                    read: direction(&j.read, window_s, [bw[0], iops[0]]),
                    write: direction(&j.write, window_s, [bw[1], iops[1]]),
                    fio: j.workload.findings(),
                    iodepth_level: j.rates.depth_levels,
                    entry: j.entry.clone(),
                    end_ms: j.stop_ns.min(now) as f64 / 1e6,
                    fio_place: j.plan.fio_place.clone(),
                    pacing: job_pacing(j.plan.pacing),
                    syncs: j.sync.map(|_| {
                        let [fsync, fdatasync, sync_file_range] = j.rates.syncs;
                        SyncCounts { fsync, fdatasync, sync_file_range }
                    }),
                }
            })
            .collect()
    }

    /// Every device's paths, the devices, and the PSPs' decisions.
    fn device_reports(&self, per_s: impl Fn(u64) -> f64 + Copy, mbps: impl Fn(&IoStats) -> f64 + Copy) -> (Vec<PathReport>, Vec<DeviceReport>, Vec<PspEventReport>) {
        let mut paths = vec![];
        let mut devices = vec![];
        let mut psp_events = vec![];
        let hosts = self.host.hosts();
        for (device_index, d) in self.host.devices().iter().enumerate() {
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
                    host: hosts[d.host].name.clone(),
                    array: self.array.name(p.array).to_string(),
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
                    device_index,
                });
            }
            let mean = |sum: f64| if d.windows == 0 { 0.0 } else { sum / d.windows as f64 };
            let per_io_ms = |sum: u128| if d.tally.stats.ios() == 0 { 0.0 } else { sum as f64 / d.tally.stats.ios() as f64 / 1e6 };
            devices.push(DeviceReport {
                name: d.name.clone(),
                host: hosts[d.host].name.clone(),
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
                    device_index,
                });
            }
        }
        (paths, devices, psp_events)
    }

    fn volume_reports(&self, per_s: impl Fn(u64) -> f64) -> Vec<VolumeReport> {
        self.array
            .volumes()
            .iter()
            .map(|v| VolumeReport {
                name: v.name.clone(),
                qos: v.qos.as_ref().map(|q| QosReport {
                    min: q.params.min_iops,
                    max: q.params.max_iops,
                    burst: q.params.burst_iops,
                    released_iops: per_s(q.measured().0),
                    held_ms_mean: match q.measured() {
                        (0, _) => 0.0,
                        (n, held_ns) => held_ns as f64 / n as f64 / 1e6,
                    },
                    held_now: q.held(),
                    credit_s: q.credit_s(),
                }),
            })
            .collect()
    }

    fn array_reports(&mut self, now: SimTime, per_s: impl Fn(u64) -> f64 + Copy, mbps: impl Fn(&IoStats) -> f64) -> Vec<ArrayReport> {
        let span_ns = now - self.warmup_ns;
        (0..self.array.arrays().len())
            .map(|k| {
                // With cores, `with_controllers` sums them; without, the paths' I/O tells each one's load.
                let cores = self.array.core_reports(k, now, span_ns, per_s);
                let controllers = if self.array.arrays()[k].cores.is_some() { vec![] } else { self.controllers_by_paths(k, per_s) };
                let a = &self.array.arrays()[k];
                ArrayReport {
                    cores,
                    controllers,
                    qfull_sent: a.qfull_sent,
                    cache_hit_ratio: a.cache.as_ref().and_then(|c| (c.hits + c.misses > 0).then(|| c.hits as f64 / (c.hits + c.misses) as f64)),
                    name: a.name.clone(),
                    iops: per_s(a.tally.stats.ios()),
                    mbps: mbps(&a.tally.stats),
                    host_ios: a.tally.completed,
                    replicated_ios: self.media.replicated_ios(k),
                    utilisation: self.media.utilisation(k, now, span_ns),
                    lat_ms: a.tally.stats.latency_ms(),
                    disk_group: self.media.disk_group_stats(k, now, span_ns),
                }
            })
            .map(with_controllers)
            .collect()
    }

    /// The fault timeline; the last edge's latency window runs to the end of the run.
    fn fault_reports(&self) -> Vec<FaultReport> {
        let (log, edge_max_latency_ns) = self.faults.edges();
        let last = log.len().saturating_sub(1);
        log.iter()
            .enumerate()
            .map(|(i, e)| {
                let f = &self.faults.runs()[e.fault];
                let max_ns = if i == last { edge_max_latency_ns } else { e.max_latency_ns };
                let paths = self.host.devices().iter().flat_map(|d| d.paths.iter().zip(&d.path_links).filter(|(_, l)| f.links.contains(l)).map(|(p, _)| p.name.clone())).collect();
                FaultReport { t_s: e.t_ns as f64 / 1e9, kind: f.kind, phase: e.phase, target: f.target.clone(), paths, detail: e.detail.clone(), max_io_latency_ms: max_ns as f64 / 1e6 }
            })
            .collect()
    }

    fn host_reports(&self, per_s: impl Fn(u64) -> f64, mbps: impl Fn(&IoStats) -> f64, queues: Vec<QueueReport>) -> Vec<HostReport> {
        self.host
            .hosts()
            .iter()
            .enumerate()
            .zip(queues)
            .map(|((h, host), adapter_queue)| {
                let devices: Vec<_> = self.host.devices().iter().filter(|d| d.host == h).collect();
                let (device_ns, device_ios) = devices.iter().fold((0u128, 0u64), |(ns, n), d| (ns + d.device_ns_sum, n + d.tally.stats.ios()));
                let controlled: Vec<_> = devices.iter().filter_map(|d| d.flow.as_ref()).collect();
                let flow_control = controlled.first().map(|f| FlowControlReport {
                    kind: self.array.flow(f.volume).expect("a controlled device's volume has flow control").0,
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
                    vms: self.host.vms().iter().filter(|v| v.host == h).count() as u32,
                    iops: per_s(host.stats.ios()),
                    mbps: mbps(&host.stats),
                    lat_ms: host.stats.latency_ms(),
                    device_lat_ms: if device_ios == 0 { 0.0 } else { device_ns as f64 / device_ios as f64 / 1e6 },
                    flow_control,
                    window,
                    adapter_queue,
                }
            })
            .collect()
    }

    /// Counts what each component holds by walking the live requests, independently of the
    /// issued/completed counters, so a lost or duplicated request shows up as a mismatch.
    pub fn conservation(&self) -> Vec<Conservation> {
        let (vms, devices, jobs, arrays) = (self.host.vms(), self.host.devices(), self.workload.jobs(), self.array.arrays());
        let mut vm_live = vec![0u64; vms.len()];
        let mut dev_live = vec![0u64; devices.len()];
        let mut path_live: Vec<Vec<u64>> = devices.iter().map(|d| vec![0; d.paths.len()]).collect();
        let mut array_live = vec![0u64; arrays.len()];
        let mut job_live = vec![0u64; jobs.len()];
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
                vm_live[jobs[io.job as usize].vm] += 1;
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
        for (v, live) in vms.iter().zip(vm_live) {
            out.push(v.tally.conservation(format!("vm/{}", v.name), live));
        }
        for (job, live) in jobs.iter().zip(job_live) {
            out.push(Conservation { component: format!("job/{}", job.name), issued: job.issued, completed: job.completed, failed: job.failed, in_flight: live });
        }
        for ((d, live), paths_live) in devices.iter().zip(dev_live).zip(path_live) {
            out.push(d.tally.conservation(format!("device/{}", d.name), live));
            for (p, live) in d.paths.iter().zip(paths_live) {
                out.push(p.tally.conservation(format!("path/{}", p.name), live));
            }
        }
        for (a, live) in arrays.iter().zip(array_live) {
            out.push(a.tally.conservation(format!("array/{}", a.name), live));
        }
        out
    }
}

impl World {
    /// An array's controllers by the host I/O its paths carried through their ports.
    fn controllers_by_paths(&self, array: usize, per_s: impl Fn(u64) -> f64) -> Vec<CoreReport> {
        let mut ios = vec![0u64; self.array.arrays()[array].controllers as usize];
        for p in self.host.devices().iter().flat_map(|d| &d.paths).filter(|p| p.array == array) {
            ios[p.controller as usize] += p.tally.stats.ios();
        }
        let total: u64 = ios.iter().sum();
        let share = |n: u64| if total == 0 { 0.0 } else { n as f64 / total as f64 };
        ios.iter().enumerate().map(|(c, &n)| CoreReport { name: format!("ctrl{}", c + 1), share: share(n), util: None, iops: per_s(n) }).collect()
    }
}

/// A job's pacing as the report writes it.
fn job_pacing(pacing: Pacing) -> JobPacing {
    match pacing {
        Pacing::Closed { depth } => JobPacing::Closed { depth },
        Pacing::Open { depth, rate_iops, poisson } => JobPacing::Open { depth, rate_iops, poisson },
        Pacing::Timed { depth } => JobPacing::Timed { depth },
        Pacing::Shared { depth } => JobPacing::Shared { depth },
    }
}

/// Controller figures from the cores': shares and rates add up, utilisation is the mean.
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
