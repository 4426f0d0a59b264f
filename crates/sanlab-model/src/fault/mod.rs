//! The fault timeline: `[[event]]` tables that break a part of the system at set times and,
//! with `until`, repair it; with `every` as well the event repeats (a flapping path).
//!
//! One file per kind. Each names its target (a path, a host adapter, an array port, controller or
//! the whole array, a replication pair, a volume on an array) by name; the scenario builder
//! resolves it. How hosts react (notice delay, command timeout, path checker, APD timeout) is the
//! host's `failover` table, `host::Failover`.

mod adapter_down;
mod alua_state;
mod array_down;
mod controller_down;
mod device_lost;
mod link_bandwidth;
mod link_latency;
mod path_down;
mod port_down;
mod replication_down;

use crate::multipath::Alua;
use crate::noise::DelayParam;
use sanlab_spec::{Kind, KindDoc, Spec, SpecResult};

/// What an event does, from `at_ns` until `until_ns`.
pub enum Action {
    /// The links go down; with `notice` the host is told (link down, RSCN), else its commands
    /// vanish and it finds out at their timeout.
    Down { notice: bool },
    /// The link's one-way latency becomes this (a degrading path).
    Latency(DelayParam),
    /// The link's bandwidth per direction becomes this (bits per second).
    Bandwidth(f64),
    /// A controller fails: its ports go down with notice, its cores' segments move to the
    /// surviving controllers, and the array holds new commands for `takeover_ns` meanwhile.
    ControllerDown { takeover_ns: u64 },
    /// The whole array fails: every port goes dark; a replication peer wins the mediator race.
    ArrayDown,
    /// The replication link between the pair fails: writes stall for the election, then one
    /// array keeps the volumes and the other stops serving them.
    ReplicationDown,
    /// The target port groups behind the paths report this ALUA state, after `transition_ns`
    /// in the transitioning state.
    AluaState { state: Alua, transition_ns: u64 },
    /// The array reports the volume permanently lost (PDL): commands fail at once.
    DeviceLost,
}

/// What an event acts on, by name as written; the scenario builder resolves it.
pub enum Target {
    Path(String),
    Adapter { host: String, adapter: String },
    /// `port` as `ct<c>.fc<j>` (the array's controller and its port).
    Port { array: String, port: String },
    Controller { array: String, controller: String },
    Array(String),
    Replication([String; 2]),
    /// A target port group: the array's paths (to one controller, or all), for some hosts or all.
    PortGroup { array: String, controller: Option<String>, hosts: Vec<String> },
    /// A volume on an array: every path to the array of the devices for that volume.
    Volume { array: String, volume: String },
}

/// One `[[event]]` as read.
pub struct Fault {
    pub target: Target,
    pub at_ns: u64,
    pub until_ns: Option<u64>,
    /// Repeats with this period (a flapping path): each time from `at + n·every` to `until + n·every`.
    pub every_ns: Option<u64>,
    pub action: Action,
}

impl Fault {
    /// The kind's name, as in the scenario (`path_down`, ...).
    pub fn kind(&self) -> &'static str {
        match &self.action {
            Action::Down { .. } => match self.target {
                Target::Adapter { .. } => "adapter_down",
                Target::Port { .. } => "port_down",
                _ => "path_down",
            },
            Action::Latency(_) => "link_latency",
            Action::Bandwidth(_) => "link_bandwidth",
            Action::ControllerDown { .. } => "controller_down",
            Action::ArrayDown => "array_down",
            Action::ReplicationDown => "replication_down",
            Action::AluaState { .. } => "alua_state",
            Action::DeviceLost => "device_lost",
        }
    }
}

/// Most edges (starts and ends) the `[[event]]`s of a run may have together: 131,072. Each is a
/// row of the run's fault timeline, with the host's path events it causes: about 3-4 kB at the
/// peak of `sanlab run` (measured 2026-11-26: a flapping path's 20,000 edges added 61 MB, 6,000
/// added 26 MB), so 131,072 edges hold about 0.5 GB, under the request slab's 600 MB. A path
/// flapping every millisecond for a minute (121,000 edges, the report's largest measured case)
/// fits; `every = "2us"` over 3 s (3 M edges) ended in "memory allocation failed".
pub const MAX_FAULT_EDGES: u64 = 1 << 17;

/// Bytes one edge costs while the engine runs (its timeline row, the path events it causes):
/// about 730, measured (`every = "2us"` over 3 s, 3 M edges, peaked at 2.2 GB in the engine).
pub const EDGE_ENGINE_BYTES: u64 = 730;
/// Bytes one edge costs in the results the run keeps until it writes them (the timeline row and
/// path events as Python objects, JSON and the report): 3.1 kB, the slope measured above.
pub const EDGE_RESULT_BYTES: u64 = 3_100;

impl Fault {
    /// Edges within a run that ends at `end_ns`, as the engine meets them: a start at `at` (and
    /// with `every` at each `at + n·every` before the end), an end at `until` (and each
    /// `until + n·every`) before the end.
    pub fn edges_within(&self, end_ns: u64) -> u64 {
        edges_within(self.at_ns, self.until_ns, self.every_ns, end_ns)
    }
}

/// [`Fault::edges_within`] of a fault at `at_ns`, undone at `until_ns`, repeating every `every_ns`.
pub fn edges_within(at_ns: u64, until_ns: Option<u64>, every_ns: Option<u64>, end_ns: u64) -> u64 {
    if at_ns >= end_ns {
        return 0;
    }
    match (until_ns, every_ns) {
        (Some(until), Some(every)) => {
            let starts = (end_ns - 1 - at_ns) / every + 1;
            let finished = if until < end_ns { (end_ns - 1 - until) / every + 1 } else { 0 };
            starts + finished.min(starts)
        }
        (Some(until), None) => 1 + u64::from(until < end_ns),
        (None, _) => 1,
    }
}

pub static EVENTS: &[Kind<Fault>] = &[
    path_down::KIND,
    link_latency::KIND,
    link_bandwidth::KIND,
    adapter_down::KIND,
    port_down::KIND,
    controller_down::KIND,
    array_down::KIND,
    replication_down::KIND,
    alua_state::KIND,
    device_lost::KIND,
];

pub fn kinds() -> Vec<KindDoc> {
    sanlab_spec::describe_kinds("event", EVENTS)
}

/// The keys every event has: when, and when undone.
fn read(spec: &Spec, target: Target, action: Action) -> SpecResult<Fault> {
    let at_ns = spec.duration_ns("at", None, "when, from the start of the run")?;
    let until = spec.duration_ns("until", Some((0, "never")), "when it is undone (the part is repaired); default: never")?;
    let every = spec.duration_ns("every", Some((0, "never")), "repeat period (a flapping path); needs `until`, longer than until - at")?;
    let s = |ns: u64| ns as f64 / 1e9;
    // 0 is the default's "never": written, it is a mistake (`until = "0s"` is not after any `at`,
    // `every = "0s"` repeats nothing), not a way to say never.
    if spec.has("until") && until == 0 {
        return Err(spec.error("until", format!("0s is not after `at` ({}s): expected until > at, or no `until` for a fault that lasts", s(at_ns))));
    }
    if spec.has("every") && every == 0 {
        return Err(spec.error("every", "0s repeats nothing: expected a period longer than until - at, or no `every` for a fault that happens once"));
    }
    if until != 0 && until <= at_ns {
        return Err(spec.error("until", format!("{}s is not after `at` ({}s): expected until > at", s(until), s(at_ns))));
    }
    if every != 0 && until == 0 {
        return Err(spec.error("every", "needs `until`: how long each time lasts"));
    }
    if every != 0 && every <= until - at_ns {
        return Err(spec.error("every", format!("{}s is not longer than each time ({}s, until - at): expected every > until - at", s(every), s(until - at_ns))));
    }
    Ok(Fault { target, at_ns, until_ns: (until != 0).then_some(until), every_ns: (every != 0).then_some(every), action })
}

/// The `path` key of the events on one path's link.
fn path(spec: &Spec) -> SpecResult<Target> {
    Ok(Target::Path(spec.string("path", None, "the [[path]] it happens to")?))
}

fn array(spec: &Spec) -> SpecResult<String> {
    spec.string("array", None, "the array, by name")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fault(text: &str) -> SpecResult<Box<Fault>> {
        let t: toml::Table = format!("kind = \"path_down\"\npath = \"p\"\n{text}").parse().unwrap();
        sanlab_spec::build_kind(&Spec::new(&t, "event[0]"), EVENTS, None)
    }

    #[test]
    fn edges_are_counted_as_the_engine_meets_them() {
        let f = |text: &str| fault(text).unwrap();
        assert_eq!(f("at = \"1s\"").edges_within(3_000_000_000), 1);
        assert_eq!(f("at = \"3s\"").edges_within(3_000_000_000), 0);
        assert_eq!(f("at = \"1s\"\nuntil = \"2s\"").edges_within(3_000_000_000), 2);
        assert_eq!(f("at = \"1s\"\nuntil = \"4s\"").edges_within(3_000_000_000), 1);
        // Starts at 0, 2, 4, 6, 8 s and ends at 1, 3, 5, 7 s: the one at 9 s is the run's end.
        assert_eq!(f("at = \"0s\"\nuntil = \"1s\"\nevery = \"2s\"").edges_within(9_000_000_000), 9);
        assert_eq!(f("at = \"0s\"\nuntil = \"1s\"\nevery = \"2s\"").edges_within(9_000_000_001), 10);
        // The reproducer: every 2 us over 3 s, 1.5 M times.
        assert_eq!(f("at = \"0s\"\nuntil = \"1us\"\nevery = \"2us\"").edges_within(3_000_000_000), 3_000_000);
    }

    #[test]
    fn zero_is_not_never_when_written() {
        let e = fault("at = \"1s\"\nuntil = \"0s\"").err().unwrap();
        assert_eq!(e.location, "event[0].until");
        assert!(e.message.starts_with("0s is not after `at` (1s): expected until > at"), "{}", e.message);
        let e = fault("at = \"1s\"\nuntil = \"2s\"\nevery = \"0s\"").err().unwrap();
        assert_eq!(e.location, "event[0].every");
        assert!(e.message.starts_with("0s repeats nothing"), "{}", e.message);
        assert!(fault("at = \"1s\"").unwrap().until_ns.is_none());
    }
}
