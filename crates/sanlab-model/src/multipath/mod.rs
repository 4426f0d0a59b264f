//! Multipathing: ALUA target-port-group states, path states, and the path selection policies
//! (PSPs). One file per policy; each registers under its `kind` name in [`PLATFORMS`], by the platform that offers it.
//!
//! A device (one LUN seen by one host) has a list of paths. Before every I/O the device asks its
//! PSP to pick one of the usable paths; on every completion the PSP hears the path's latency.

mod dm_groups;
mod dm_historical_service_time;
mod dm_queue_length;
mod dm_round_robin;
mod dm_service_time;
mod fixed;
mod mpio_least;
mod mpio_round_robin;
mod mru;
mod nvme_numa;
mod nvme_queue_depth;
mod nvme_round_robin;
mod rr;
mod rr_latency;
mod significant_latency;

use sanlab_spec::{Kind, KindDoc};
use std::sync::LazyLock;
use sanlab_des::SimTime;

/// ALUA asymmetric access state of the target port group behind a path (SPC-4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Alua {
    ActiveOptimized,
    ActiveNonOptimized,
    Standby,
    Unavailable,
    /// Changing state (an `alua_state` event's `transition`): no I/O.
    Transitioning,
}

impl Alua {
    pub const NAMES: [&'static str; 5] = ["AO", "ANO", "standby", "unavailable", "transitioning"];

    pub fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }

    pub fn from_name(s: &str) -> Option<Self> {
        [Self::ActiveOptimized, Self::ActiveNonOptimized, Self::Standby, Self::Unavailable, Self::Transitioning].into_iter().find(|a| a.name() == s)
    }
}

/// What the PSP sees of one path.
#[derive(Clone, Copy, Debug)]
pub struct PathState {
    pub alua: Alua,
    /// False when the path is dead or disabled.
    pub up: bool,
    /// I/Os sent down this path and not yet completed.
    pub outstanding: u32,
    /// Their bytes (dm-multipath service-time, Windows MPIO least blocks).
    pub outstanding_bytes: u64,
    /// I/Os in flight on the path's link for every device that uses it: an NVMe controller's
    /// count, shared by all its namespaces (`nr_active`, Linux `nvme_mpath_start_request`).
    pub controller_outstanding: u32,
}

impl PathState {
    pub fn new(alua: Alua) -> Self {
        Self { alua, up: true, outstanding: 0, outstanding_bytes: 0, controller_outstanding: 0 }
    }
}

impl PathState {
    /// Alive and in an active ALUA state.
    pub fn carries_io(&self) -> bool {
        self.up && matches!(self.alua, Alua::ActiveOptimized | Alua::ActiveNonOptimized)
    }
}

/// The paths a policy may use: active-optimized ones, plus active-non-optimized ones when
/// `use_ano` is set or when no active-optimized path is left (ESXi's `useANO` semantics).
#[derive(Clone, Copy)]
pub struct Eligible {
    with_ano: bool,
}

impl Eligible {
    pub fn of(paths: &[PathState], use_ano: bool) -> Self {
        let any_ao = paths.iter().any(|p| p.carries_io() && p.alua == Alua::ActiveOptimized);
        Self { with_ano: use_ano || !any_ao }
    }

    #[inline]
    pub fn contains(self, p: &PathState) -> bool {
        p.carries_io() && (p.alua == Alua::ActiveOptimized || self.with_ano)
    }

    /// The first eligible path at or after `start`, wrapping around.
    pub fn next_from(self, paths: &[PathState], start: usize) -> Option<usize> {
        let n = paths.len();
        (0..n).map(|k| (start + k) % n).find(|&i| self.contains(&paths[i]))
    }
}

/// A decision worth showing the user (a latency PSP excluding paths, a failover).
#[derive(Clone, Debug)]
pub struct PspEvent {
    pub t_ns: SimTime,
    pub event: String,
    pub paths: Vec<usize>,
}

/// A path selection policy.
pub trait PathSelector {
    /// Learns the device's path names (e.g. to resolve a preferred path).
    fn attach(&mut self, _path_names: &[String]) -> Result<(), String> {
        Ok(())
    }

    /// Picks the path for the next I/O of `size_bytes`, or `None` when no path can carry I/O.
    fn select(&mut self, now: SimTime, size_bytes: u32, paths: &[PathState], log: &mut Vec<PspEvent>) -> Option<usize>;

    /// Hears that an I/O completed on `path` after `latency_ns`.
    fn on_complete(&mut self, _now: SimTime, _path: usize, _latency_ns: u64, _size_bytes: u32) {}

    /// Whether `select` reads [`PathState::controller_outstanding`]: the engine refreshes it
    /// from every path's link before each choice only for a selector that does (a pass over the
    /// device's paths per I/O).
    fn reads_controller_load(&self) -> bool {
        false
    }
}

/// Each selector under the multipathing that offers it (`sanlab kinds psp` names it): a host has
/// no platform key, so the selector its scenario gives says which platform it is, and which other
/// selectors it could run (`sanlab advise` offers those).
pub static PLATFORMS: &[(&str, &[Kind<dyn PathSelector>])] = &[
    ("ESXi NMP", &[fixed::KIND, mru::KIND, rr::KIND, rr_latency::KIND]),
    ("ESXi HPP", &[rr_latency::HPP_KIND]),
    ("Linux dm-multipath", &[dm_round_robin::KIND, dm_queue_length::KIND, dm_service_time::KIND, dm_historical_service_time::KIND]),
    ("Linux NVMe", &[nvme_numa::KIND, nvme_round_robin::KIND, nvme_queue_depth::KIND]),
    (
        "Windows MPIO",
        &[
            mru::FAILOVER_ONLY_KIND,
            mpio_round_robin::KIND,
            mpio_round_robin::SUBSET_KIND,
            mpio_least::QUEUE_DEPTH_KIND,
            mpio_least::BLOCKS_KIND,
            mpio_least::WEIGHTED_KIND,
        ],
    ),
    ("sanlab's own", &[significant_latency::KIND]),
];

/// Every selector by `kind` name, in the order of [`PLATFORMS`].
pub static REGISTRY: LazyLock<Vec<Kind<dyn PathSelector>>> =
    LazyLock::new(|| PLATFORMS.iter().flat_map(|(_, kinds)| kinds.iter().copied()).collect());

pub fn kinds() -> Vec<KindDoc> {
    PLATFORMS
        .iter()
        .flat_map(|&(platform, kinds)| {
            sanlab_spec::describe_kinds("psp", kinds).into_iter().map(move |doc| KindDoc { platform: Some(platform), ..doc })
        })
        .collect()
}

#[cfg(test)]
pub(crate) mod test_util {
    use super::*;

    pub fn paths(states: &[(Alua, bool)]) -> Vec<PathState> {
        states.iter().map(|&(alua, up)| PathState { up, ..PathState::new(alua) }).collect()
    }

    pub fn build(kind: &str, params: &str) -> Box<dyn PathSelector> {
        let t: toml::Table = format!("kind = \"{kind}\"\n{params}").parse().unwrap();
        sanlab_spec::build_kind(&sanlab_spec::Spec::new(&t, "psp"), &REGISTRY, None).unwrap()
    }

    /// Paths chosen for `n` I/Os issued one after another, each completing at once.
    pub fn picks(psp: &mut dyn PathSelector, paths: &[PathState], n: usize) -> Vec<usize> {
        let mut log = vec![];
        (0..n).map(|_| psp.select(0, 4096, paths, &mut log).unwrap()).collect()
    }
}
