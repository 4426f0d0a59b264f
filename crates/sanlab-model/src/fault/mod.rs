//! The fault timeline: `[[event]]` tables that take a path down and bring it back, with notice
//! or silently, or change a link's latency, at set times.
//!
//! With `until` an event is undone then; with `every` as well it repeats (a flapping path).
//!
//! A path here is a `[[path]]` entry: the link from a host port to an array port, which every
//! device of the host whose volume the array holds uses. How hosts react (notice delay, command
//! timeout, path checker) is the host's `failover` table, `host::Failover`.

mod link_latency;
mod path_down;

use crate::noise::DelayParam;
use crate::spec::{Kind, KindDoc, Spec, SpecResult};

/// What happens to the path at `at_ns`, undone at `until_ns`.
pub enum Action {
    /// The link goes down; with `notice` the host is told (link down, RSCN), else its commands
    /// vanish and it finds out at their timeout.
    Down { notice: bool },
    /// The link's one-way latency becomes this (a degrading path).
    Latency(DelayParam),
}

/// One `[[event]]` as read: the path by name, resolved by the scenario builder.
pub struct Fault {
    pub path: String,
    pub at_ns: u64,
    pub until_ns: Option<u64>,
    /// Repeats with this period (a flapping path): each time from `at + n·every` to `until + n·every`.
    pub every_ns: Option<u64>,
    pub action: Action,
}

pub static EVENTS: &[Kind<Fault>] = &[path_down::KIND, link_latency::KIND];

pub fn kinds() -> Vec<KindDoc> {
    crate::spec::describe_kinds("event", EVENTS)
}

/// The keys every event has: its path and when.
fn read(spec: &Spec, action: Action) -> SpecResult<Fault> {
    let path = spec.string("path", None, "the [[path]] it happens to")?;
    let at_ns = spec.duration_ns("at", None, "when, from the start of the run")?;
    let until = spec.duration_ns("until", Some((0, "never")), "when it is undone (the path comes back); default: never")?;
    let every = spec.duration_ns("every", Some((0, "never")), "repeat period (a flapping path); needs `until`, longer than until - at")?;
    let s = |ns: u64| ns as f64 / 1e9;
    if until != 0 && until <= at_ns {
        return Err(spec.error("until", format!("{}s is not after `at` ({}s): expected until > at", s(until), s(at_ns))));
    }
    if every != 0 && until == 0 {
        return Err(spec.error("every", "needs `until`: how long each time lasts"));
    }
    if every != 0 && every <= until - at_ns {
        return Err(spec.error("every", format!("{}s is not longer than each time ({}s, until - at): expected every > until - at", s(every), s(until - at_ns))));
    }
    Ok(Fault { path, at_ns, until_ns: (until != 0).then_some(until), every_ns: (every != 0).then_some(every), action })
}
