//! Host-level flow control: each host sizes its device queue (the window) from a cluster-wide
//! latency signal, so that hosts sharing an array divide it by their shares without a central
//! scheduler. PARDA (Gulati, Ahmad, Waldspurger, FAST '09, §3.2) and its product form, VMware
//! Storage I/O Control (SIOC).
//!
//! Every `period` each controlled host publishes its mean device latency and I/O count for the
//! volume (the paper's shared file, one block per host; SIOC's `iormstat.sf`); every host reads
//! the I/O-weighted average `l` of them all and updates
//!
//! ```text
//! L(t)   = (1 − α)·l + α·L(t−1)                              (Eq. 1)
//! w(t+1) = (1 − γ)·w(t) + γ·((𝓛 / L(t))·w(t) + β)            (Eq. 2), clamped to [w_min, w_max]
//! ```
//!
//! Flow control is set per volume (a datastore: SIOC is enabled per datastore, PARDA's 𝓛 is one
//! per volume) and runs on every host with a device for it. β is the host's share of the array:
//! the sum of the shares of its VMs that were busy in the last period, divided by `share_unit`
//! (PARDA §3.3: β ∝ Σ VM shares; §3.4 lowers it while a VM idles).
//! Ours where the paper is silent: the hosts update in step at the end of each period; a VM counts
//! as idle for a period in which it sent nothing to the device and had nothing outstanding; a period
//! without any I/O leaves L and w unchanged; the window applied to the device queue is w rounded to
//! the nearest integer (at least 1); w starts at w_max, and w_max is at most the device's LUN
//! queue depth.

use sanlab_spec::{format_duration, Kind, KindDoc, Spec, SpecResult};

/// The window law's parameters, shared by PARDA and SIOC.
#[derive(Clone, Copy, Debug)]
pub struct WindowLaw {
    pub threshold_ns: f64,
    pub alpha: f64,
    pub gamma: f64,
    pub period_ns: u64,
    pub w_min: f64,
    pub w_max: f64,
    /// β = Σ busy VM shares / share_unit.
    pub share_unit: f64,
}

/// SIOC's automatic threshold (vSphere 5.1+): before the run, an injector issues random reads at
/// rising outstanding-I/O levels to the idle datastore; the threshold is the latency at which the
/// throughput reaches `percent_of_peak` % of the peak it found.
#[derive(Clone, Copy, Debug)]
pub struct Injector {
    pub percent_of_peak: f64,
    pub io_size_bytes: u64,
    /// The datastore span the injector reads over; None: the region the volume's VMs address.
    pub span_bytes: Option<u64>,
}

/// Outstanding-I/O levels the injector steps through (ours: the product does not publish its own).
pub const INJECTOR_OUTSTANDING: [u32; 7] = [1, 2, 4, 8, 16, 32, 64];
/// The injector's whole cycle: "about 30 seconds" (VMware Storage DRS white paper, quoted by
/// Cormac Hogan, "Storage I/O Control – Workload Injector Behaviour", 2013).
pub const INJECTOR_CYCLE_NS: u64 = 30_000_000_000;

impl WindowLaw {
    /// The law on a device whose LUN queue depth is `depth`: the queue depth is min(LUN depth,
    /// window), so a window above the LUN depth would not bind and would only delay control.
    pub fn within_depth(mut self, depth: u32) -> Self {
        self.w_max = self.w_max.min(f64::from(depth));
        self.w_min = self.w_min.min(self.w_max);
        self
    }
}

/// A volume's flow control, run by each host on its device for the volume.
pub trait FlowControl {
    fn kind(&self) -> &'static str;
    fn law(&self) -> &WindowLaw;
    /// Set when the threshold is to be measured by injecting load before the run.
    fn injector(&self) -> Option<&Injector> {
        None
    }
    /// The threshold the injector found.
    fn set_threshold_ns(&mut self, threshold_ns: f64);
}

struct Controller {
    kind: &'static str,
    law: WindowLaw,
    injector: Option<Injector>,
}

impl FlowControl for Controller {
    fn kind(&self) -> &'static str {
        self.kind
    }

    fn law(&self) -> &WindowLaw {
        &self.law
    }

    fn injector(&self) -> Option<&Injector> {
        self.injector.as_ref()
    }

    fn set_threshold_ns(&mut self, threshold_ns: f64) {
        self.law.threshold_ns = threshold_ns;
    }
}

const PARDA: Kind<dyn FlowControl> = Kind { name: "parda", summary: "PARDA (FAST '09): window from the cluster-wide latency, β from VM shares", build: build_parda };
const SIOC: Kind<dyn FlowControl> = Kind {
    name: "sioc",
    summary: "VMware Storage I/O Control: PARDA with a manual (5-100 ms) or automatic congestion threshold",
    build: build_sioc,
};
pub static REGISTRY: &[Kind<dyn FlowControl>] = &[PARDA, SIOC];

pub fn kinds() -> Vec<KindDoc> {
    sanlab_spec::describe_kinds("flow_control", REGISTRY)
}

/// The shortest period: PARDA's hosts exchange their mean latencies through a file on the shared
/// datastore every 2 s (FAST '09, §4), SIOC every 4 s; each period's mean must span many I/Os (a
/// disk I/O takes 5-10 ms), and a 1 ns period only floods the run with updates (a hang found
/// while fuzzing). 10 ms is well below any real configuration.
const MIN_PERIOD_NS: u64 = 10_000_000;

/// The parameters both kinds read; `threshold` is read by each kind (its range differs).
fn read_law(spec: &Spec, threshold_ns: u64, w_max_default: i64) -> SpecResult<WindowLaw> {
    let alpha = spec.float("alpha", 0.002, 0.0, 1.0, "weight of the past in the latency EWMA (Eq. 1; the paper used 0.002)")?;
    let gamma = spec.float("gamma", 0.8, 0.0, 1.0, "smoothing of the window law (Eq. 2; the paper used 0.8)")?;
    let period_ns = spec.duration_ns("period", Some((2_000_000_000, "2s")), "how often hosts exchange latencies and update their windows (the paper: 2 s)")?;
    let w_min = spec.int("w_min", Some(4), 1, 4096, "smallest window (ours: the paper gives no value)")?;
    let w_max = spec.int("w_max", Some(w_max_default), 1, 4096, "largest window (the paper's Table 6 used 64)")?;
    let share_unit = spec.float("share_unit", 1000.0, 1e-9, 1e9, "VM shares per unit of β: β = Σ shares of a host's busy VMs / share_unit")?;
    if period_ns < MIN_PERIOD_NS {
        return Err(spec.error("period", format!("{} is too short for hosts to exchange their latencies: expected at least 10ms (nearest valid: 10ms; PARDA's paper updates every 2 s, SIOC every 4 s, and a period must span many I/Os for its mean latency to mean anything)", format_duration(period_ns))));
    }
    if w_min > w_max {
        return Err(spec.error("w_min", format!("{w_min} is above w_max = {w_max}: expected w_min <= w_max (nearest valid: {w_max})")));
    }
    Ok(WindowLaw {
        threshold_ns: threshold_ns as f64,
        alpha,
        gamma,
        period_ns,
        w_min: w_min as f64,
        w_max: w_max as f64,
        share_unit,
    })
}

fn build_parda(spec: &Spec) -> SpecResult<Box<dyn FlowControl>> {
    let threshold_ns = spec.duration_ns("latency_threshold", Some((30_000_000, "30ms")), "𝓛: the cluster-wide device latency the hosts aim at")?;
    if threshold_ns == 0 {
        return Err(spec.error("latency_threshold", "must be positive, e.g. \"30ms\""));
    }
    let law = read_law(spec, threshold_ns, 64)?;
    Ok(Box::new(Controller { kind: "parda", law, injector: None }))
}

/// SIOC's congestion threshold range (vSphere API `StorageIORMInfo.congestionThreshold`, ms).
const SIOC_THRESHOLD_NS: (u64, u64) = (5_000_000, 100_000_000);

fn build_sioc(spec: &Spec) -> SpecResult<Box<dyn FlowControl>> {
    let mode = spec.choice("threshold_mode", &["manual", "automatic"], Some("manual"), "congestionThresholdMode: manual, or automatic (measured by injecting load before the run)")?;
    let threshold_ns = spec.duration_ns("congestion_threshold", Some((30_000_000, "30ms")), "manual congestion threshold, 5-100 ms (vSphere default 30 ms)")?;
    let percent_of_peak = spec.float("percent_of_peak", 90.0, 50.0, 100.0, "automatic mode: the threshold is the latency at this percent of peak throughput (vSphere: 50-100, default 90)")?;
    let io_size_bytes = spec.size_bytes("injector_io_size", Some((8192, "8KiB")), "automatic mode: size of the injector's random reads (ours: VMware does not publish it)")?;
    let span_bytes = spec.size_bytes("injector_span", Some((0, "the VMs' region")), "automatic mode: bytes of the volume the injector reads over; default the region its VMs address")?;
    let automatic = mode == "automatic";
    for (key, set) in [("congestion_threshold", !automatic), ("percent_of_peak", automatic), ("injector_io_size", automatic), ("injector_span", automatic)] {
        if spec.has(key) && !set {
            return Err(spec.error(key, format!("has no effect with threshold_mode = \"{mode}\": remove it, or set threshold_mode = \"{}\"", if automatic { "manual" } else { "automatic" })));
        }
    }
    if io_size_bytes == 0 || io_size_bytes % 512 != 0 {
        return Err(spec.error("injector_io_size", format!("{io_size_bytes} bytes: expected a positive multiple of 512 (nearest valid: {})", (io_size_bytes / 512).max(1) * 512)));
    }
    if spec.has("injector_span") && span_bytes < io_size_bytes {
        return Err(spec.error("injector_span", format!("smaller than one injector read ({io_size_bytes} bytes)")));
    }
    let (lo, hi) = SIOC_THRESHOLD_NS;
    if !(lo..=hi).contains(&threshold_ns) {
        let nearest = if threshold_ns < lo { "5ms" } else { "100ms" };
        return Err(spec.error("congestion_threshold", format!("{} ms is out of range: expected 5ms..=100ms (nearest valid: {nearest})", threshold_ns as f64 / 1e6)));
    }
    // SIOC lets a host's window grow to the device's own queue depth (the LUN depth caps it).
    let mut law = read_law(spec, threshold_ns, 4096)?;
    let injector = automatic.then_some(Injector { percent_of_peak, io_size_bytes, span_bytes: (span_bytes > 0).then_some(span_bytes) });
    if automatic {
        law.threshold_ns = f64::NAN; // measured before the run
    }
    Ok(Box::new(Controller { kind: "sioc", law, injector }))
}

/// The running state of one controlled device.
#[derive(Clone, Debug)]
pub struct WindowState {
    pub law: WindowLaw,
    /// L(t), ns.
    pub latency_estimate_ns: f64,
    /// w(t), unrounded.
    pub window: f64,
    pub beta: f64,
}

impl WindowState {
    pub fn new(law: WindowLaw) -> Self {
        Self { law, latency_estimate_ns: 0.0, window: law.w_max, beta: 0.0 }
    }

    /// One period's update from the cluster-wide latency `cluster_latency_ns` (Eq. 1 and 2);
    /// `busy_shares` is the sum of the shares of the host's VMs busy in the period. The first
    /// observation seeds L.
    pub fn update(&mut self, cluster_latency_ns: f64, busy_shares: f64) {
        let law = &self.law;
        self.beta = busy_shares / law.share_unit;
        self.latency_estimate_ns =
            if self.latency_estimate_ns == 0.0 { cluster_latency_ns } else { (1.0 - law.alpha) * cluster_latency_ns + law.alpha * self.latency_estimate_ns };
        let w = self.window;
        let target = law.threshold_ns / self.latency_estimate_ns * w + self.beta;
        self.window = ((1.0 - law.gamma) * w + law.gamma * target).clamp(law.w_min, law.w_max);
    }

    /// The device queue depth the window allows.
    pub fn depth(&self) -> u32 {
        (self.window.round() as u32).max(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn law() -> WindowLaw {
        WindowLaw { threshold_ns: 30e6, alpha: 0.002, gamma: 0.8, period_ns: 2_000_000_000, w_min: 4.0, w_max: 256.0, share_unit: 1000.0 }
    }

    /// A toy array with a fixed throughput: latency = total window / throughput (Little's law).
    fn converge(betas: &[f64], throughput_per_ns: f64, periods: usize) -> (Vec<f64>, f64) {
        let mut hosts: Vec<WindowState> = betas.iter().map(|_| WindowState::new(law())).collect();
        let mut latency = 0.0;
        for _ in 0..periods {
            let total: f64 = hosts.iter().map(|h| h.window).sum();
            latency = total / throughput_per_ns;
            for (h, beta) in hosts.iter_mut().zip(betas) {
                h.update(latency, beta * 1000.0);
            }
        }
        (hosts.iter().map(|h| h.window).collect(), latency)
    }

    #[test]
    fn windows_settle_in_proportion_to_beta_near_the_threshold() {
        // 3,000 IOPS: 𝓛 = 30 ms holds 90 requests in the array.
        let (w, latency) = converge(&[1.0, 1.0, 2.0, 2.0], 3_000.0 / 1e9, 200);
        assert!((w[2] / w[0] - 2.0).abs() < 0.01, "{w:?}");
        // Fixed point: w* = β L / (L − 𝓛), so L sits slightly above 𝓛.
        assert!(latency > 30e6 && latency < 33e6, "{latency}");
        let expected = 1.0 * latency / (latency - 30e6);
        assert!((w[0] - expected).abs() / expected < 0.01, "{} vs {expected}", w[0]);
    }

    #[test]
    fn the_window_is_clamped() {
        let mut s = WindowState::new(law());
        for _ in 0..50 {
            s.update(1e9, 1000.0); // far above 𝓛: the window shrinks to w_min
        }
        assert_eq!(s.window, 4.0);
        for _ in 0..500 {
            s.update(1e6, 1000.0); // far below: grows to w_max
        }
        assert_eq!(s.window, 256.0);
        assert_eq!(s.depth(), 256);
    }

    #[test]
    fn beta_follows_busy_shares() {
        let mut s = WindowState::new(law());
        s.update(30e6, 3000.0);
        assert_eq!(s.beta, 3.0);
        s.update(30e6, 2000.0);
        assert_eq!(s.beta, 2.0);
    }

    fn build(kind: &str, params: &str) -> SpecResult<Box<dyn FlowControl>> {
        let t: toml::Table = format!("kind = \"{kind}\"\n{params}").parse().unwrap();
        sanlab_spec::build_kind(&Spec::new(&t, "volume[0].flow_control"), REGISTRY, None)
    }

    #[test]
    fn bad_parameters_are_located() {
        let e = |k: &str, p: &str| build(k, p).err().unwrap_or_else(|| panic!("{k} {p} accepted"));
        assert!(e("parda", "gamma = 1.5").message.contains("expected 0..=1"));
        assert!(e("parda", "alpha = -0.1").message.contains("expected 0..=1"));
        assert!(e("parda", "latency_threshold = \"0ms\"").message.contains("must be positive"));
        assert_eq!(e("parda", "w_min = 64\nw_max = 8").location, "volume[0].flow_control.w_min");
        assert!(e("parda", "period = \"0s\"").message.contains("expected at least 10ms"));
        // A 1 ns period hung the run (an update every nanosecond); 10 ms is accepted.
        let x = e("sioc", "period = \"1ns\"");
        assert_eq!(x.location, "volume[0].flow_control.period");
        assert!(x.message.starts_with("1ns is too short") && x.message.contains("nearest valid: 10ms"), "{}", x.message);
        assert!(build("parda", "period = \"10ms\"").is_ok());
        let x = e("sioc", "congestion_threshold = \"2ms\"");
        assert!(x.message.contains("nearest valid: 5ms"), "{}", x.message);
        let auto = build("sioc", "threshold_mode = \"automatic\"").unwrap();
        assert_eq!(auto.injector().map(|i| i.percent_of_peak), Some(90.0));
        assert!(e("sioc", "threshold_mode = \"automatic\"\ncongestion_threshold = \"20ms\"").message.contains("has no effect"));
        assert!(e("sioc", "percent_of_peak = 80").message.contains("set threshold_mode = \"automatic\""));
        assert!(e("sioc", "threshold_mode = \"automatic\"\npercent_of_peak = 40").message.contains("expected 50..=100"));
        assert!(build("sioc", "congestion_threshold = \"100ms\"").is_ok());
    }
}
