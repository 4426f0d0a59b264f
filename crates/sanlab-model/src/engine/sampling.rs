//! The time series: every sample interval, each entity's interval figures.

use super::{pack, Ev, World};

impl World {
    pub(super) fn sample(&mut self) {
        let now = self.q.now();
        let window = now - self.last_sample_ns;
        self.last_sample_ns = now;
        let secs = window as f64 / 1e9;
        let measured = now > self.warmup_ns;
        let Self { series, vms, devices, arrays, hosts, .. } = self;
        series.begin_sample(now);
        for v in vms.iter_mut() {
            v.tally.sample(series, secs);
        }
        for (h, host) in hosts.iter_mut().enumerate() {
            host.series.sample(series, &mut host.stats, secs);
            if let Some(flow) = host.flow.as_mut() {
                // A host with several controlled devices: their windows add up; L is the first one's.
                let controlled = || devices.iter().filter(|d| d.host == h).filter_map(|d| d.flow.as_ref());
                let window: f64 = controlled().map(|f| f64::from(f.state.depth())).sum();
                let estimate_ms = controlled().next().map_or(0.0, |f| f.state.latency_estimate_ns / 1e6);
                let beta: f64 = controlled().map(|f| f.state.beta).sum();
                series.push(flow.series[0], window);
                series.push(flow.series[1], estimate_ms);
                series.push(flow.series[2], beta);
                if measured {
                    flow.window_sum += window;
                    flow.window_samples += 1;
                    flow.window_min = flow.window_min.min(window);
                    flow.window_max = flow.window_max.max(window);
                }
            }
        }
        for a in arrays.iter_mut() {
            a.tally.sample(series, secs);
            if let Some(cores) = a.cores.as_mut() {
                for (k, centre) in cores.centres.iter_mut().enumerate() {
                    let busy = centre.busy_ns(now);
                    let (owned0, busy0) = a.core_last[k];
                    series.push(a.core_series[k][0], (cores.owned[k] - owned0) as f64 / secs);
                    series.push(a.core_series[k][1], (busy - busy0) as f64 / window.max(1) as f64);
                    a.core_last[k] = (cores.owned[k], busy);
                }
            }
        }
        for d in devices.iter_mut() {
            d.tally.sample(series, secs);
            for p in &mut d.paths {
                p.tally.sample(series, secs);
            }
            let (dqlen, actv, qued) = d.q.take_averages(now, window);
            d.dqlen_sum += dqlen;
            d.actv_sum += actv;
            d.qued_sum += qued;
            d.windows += 1;
            for (id, x) in d.queue_series.into_iter().zip([dqlen, actv, qued]) {
                series.push(id, x);
            }
            d.by_direction.sample(series, secs);
        }
        let next = now + self.sample_ns;
        if next <= self.end_ns {
            self.q.schedule_at(next, pack(Ev::Sample, 0));
        }
    }
}
