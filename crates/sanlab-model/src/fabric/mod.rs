//! The SAN fabric: point-to-point links with a one-way propagation latency and a bandwidth per
//! direction. A frame occupies the sending side of its direction for `bytes × 8 / bandwidth`,
//! first come first served, then travels for the propagation latency.
//!
//! Control frames (command, transfer-ready, status, replication ack) are treated as 0 bytes: at
//! 8–32 Gb/s their serialisation is tens of nanoseconds, below what any study here resolves. They
//! still wait behind a data frame that is being sent.
//!
//! A noisy latency (a distribution, see `noise`) is drawn per frame from the direction's own
//! stream; frames may then arrive out of order, as a jittery path delivers them.

use crate::noise::{Delay, DelayParam, DelaySpec};
use crate::report::{LinkDirectionReport, LinkReport};
use sanlab_spec::{Spec, SpecResult};
use sanlab_des::SimTime;
use sanlab_metrics::Baseline;

/// Propagation delay of light in fibre, for `distance` (≈ 4.9 µs per km, refractive index ≈ 1.47).
pub const NS_PER_KM_FIBRE: f64 = 4_900.0;

/// One direction of a link.
pub struct Direction {
    /// Swapped by a fault that degrades the link.
    pub latency: Delay,
    fibre_ns: u64,
    /// Picoseconds per byte; 0 = unlimited bandwidth.
    ps_per_byte: u64,
    busy_until: SimTime,
    pub bytes: u64,
    busy_ns: u64,
    bytes_at_start: Baseline<u64>,
    busy_at_start: Baseline<u64>,
}

/// Serialisation time per byte at `bandwidth_bps`, in picoseconds (0: unlimited).
pub fn ps_per_byte(bandwidth_bps: Option<f64>) -> u64 {
    bandwidth_bps.map_or(0, |bps| (8e12 / bps).round() as u64)
}

impl Direction {
    fn new(latency: Delay, fibre_ns: u64, bandwidth_bps: Option<f64>) -> Self {
        let ps_per_byte = ps_per_byte(bandwidth_bps);
        Self { latency, fibre_ns, ps_per_byte, busy_until: 0, bytes: 0, busy_ns: 0, bytes_at_start: Baseline::default(), busy_at_start: Baseline::default() }
    }

    /// Sends `bytes` at `now`; returns the time the frame arrives at the far end.
    #[inline]
    pub fn send(&mut self, now: SimTime, bytes: u64) -> SimTime {
        let latency_ns = self.latency.draw_ns() + self.fibre_ns;
        if self.ps_per_byte == 0 {
            return now + latency_ns;
        }
        // A control frame (0 bytes) still waits for the frame ahead of it to leave.
        let tx_ns = (bytes * self.ps_per_byte).div_ceil(1000);
        let start = now.max(self.busy_until);
        self.busy_until = start + tx_ns;
        self.bytes += bytes;
        self.busy_ns += tx_ns;
        self.busy_until + latency_ns
    }

    /// Exchanges the bandwidth (as picoseconds per byte) with `ps_per_byte`: a fault's change and
    /// its undoing.
    pub fn swap_bandwidth(&mut self, ps_per_byte: &mut u64) {
        std::mem::swap(&mut self.ps_per_byte, ps_per_byte);
    }

    /// The measured time starts: bytes and busy time count from here.
    pub fn measure_from(&mut self) {
        self.bytes_at_start.set(self.bytes);
        self.busy_at_start.set(self.busy_ns);
    }

    /// Fraction of the measured time (`span_ns` long) the transmitter was busy (a frame counts
    /// whole when it starts), and the data rate in bytes per second.
    pub fn measured(&self, span_ns: SimTime) -> (f64, f64) {
        if span_ns == 0 {
            return (0.0, 0.0);
        }
        let busy = self.busy_at_start.since(self.busy_ns) as f64 / span_ns as f64;
        (busy, self.bytes_at_start.since(self.bytes) as f64 / (span_ns as f64 / 1e9))
    }
}

/// A full-duplex link. `dirs[0]` goes away from the initiator (host → array, or array → peer).
pub struct Link {
    pub name: String,
    pub dirs: [Direction; 2],
}

pub const OUTBOUND: usize = 0;
pub const INBOUND: usize = 1;

/// What a `link` table says; several links can be made from one (a `[[path]]` with `count`).
#[derive(Clone)]
pub struct LinkParams {
    pub latency: DelayParam,
    pub fibre_ns: u64,
    pub bandwidth_bps: Option<f64>,
}

impl LinkParams {
    /// Reads `latency` (plus `distance_km` of fibre) and `bandwidth`.
    pub fn from_spec(spec: Spec) -> SpecResult<Self> {
        let latency = spec.delay_param("latency", (0, "0us"), "one-way latency: a duration, or a distribution (switch queueing, WAN jitter)")?;
        let distance_km = spec.float("distance_km", 0.0, 0.0, 40_000.0, "fibre length; adds 4.9 us per km one way")?;
        let bandwidth = spec.bandwidth_bps("bandwidth", Some((0.0, "unlimited")), "per direction, e.g. \"16Gb/s\" (FC) or \"25Gb/s\" (Ethernet)")?;
        spec.finish()?;
        Ok(Self { latency, fibre_ns: (distance_km * NS_PER_KM_FIBRE).round() as u64, bandwidth_bps: (bandwidth > 0.0).then_some(bandwidth) })
    }
}

impl Link {
    /// Both directions over the measured time, `span_ns` long; `kind` says what the link joins.
    pub fn report(&self, kind: &'static str, span_ns: SimTime) -> LinkReport {
        let [outbound, inbound] = self.dirs.each_ref().map(|d| {
            let (busy, bytes_per_s) = d.measured(span_ns);
            LinkDirectionReport { busy, mbps: bytes_per_s / 1e6 }
        });
        LinkReport { name: self.name.clone(), kind, outbound, inbound }
    }

    /// The measured time starts, in both directions.
    pub fn measure_from(&mut self) {
        for d in &mut self.dirs {
            d.measure_from();
        }
    }

    /// Each direction draws a noisy latency from its own stream, `link/<name>/<out|in>/latency`.
    pub fn new(name: String, p: &LinkParams, run_seed: u64) -> Self {
        let dir = |d: &str| Direction::new(p.latency.stream(run_seed, &format!("link/{name}/{d}/latency")), p.fibre_ns, p.bandwidth_bps);
        let dirs = [dir("out"), dir("in")];
        Self { name, dirs }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serialisation_is_fifo_and_adds_latency() {
        let mut d = Direction::new(Delay::Fixed(1_000), 0, Some(8e9)); // 1 byte per ns
        assert_eq!(d.send(0, 500), 1_500);
        // Second frame waits for the first to leave the transmitter.
        assert_eq!(d.send(100, 500), 2_000);
        assert_eq!(d.send(5_000, 0), 6_000);
        let (busy, bytes_per_s) = d.measured(2_000);
        assert!((busy - 0.5).abs() < 1e-9 && (bytes_per_s - 5e8).abs() < 1.0, "{busy} {bytes_per_s}");
        // The measured time starts later: only what is sent from then on counts.
        d.measure_from();
        d.send(6_000, 1_000);
        let (busy, _) = d.measured(2_000);
        assert!((busy - 0.5).abs() < 1e-9, "{busy}");
    }

    #[test]
    fn distance_adds_fibre_delay() {
        let t: toml::Table = "distance_km = 100\nbandwidth = \"16Gb/s\"".parse().unwrap();
        let mut l = Link::new("x".into(), &LinkParams::from_spec(Spec::new(&t, "link")).unwrap(), 1);
        assert_eq!(l.dirs[0].send(0, 0), 490_000);
    }
}
