//! dm-multipath's path groups (PGs), shared by the Linux selectors: multipathd groups the paths
//! (`path_grouping_policy`) and orders the groups by priority; the kernel sends I/O to one group
//! and "doesn't change PG until it has no remaining paths" (`choose_pgpath`, drivers/md/dm-mpath.c),
//! then takes the best group with a usable path. The selector picks within the group.
//!
//! Priorities are the `alua` prioritizer's (multipath-tools libmultipath/prioritizers/alua.c):
//! active-optimized 50, active-non-optimized 10. `failback` (multipath.conf): `manual` (the default)
//! stays on the group it fell back to; `immediate` returns to a better group as soon as it has a
//! usable path; `followover` returns only when a path of the better group comes back from failed
//! (not when its state merely changes); N seconds returns N seconds after the better group became
//! usable. Ours: the group of a `failover` policy is one path, ordered by priority then by the
//! device's path order; multipathd's checker interval is not modelled (the kernel sees a path come
//! back at once).

use super::{Alua, PathState};
use sanlab_spec::{Spec, SpecResult};
use sanlab_des::{SimTime, NS_PER_S};

#[derive(Clone, Copy, PartialEq, Debug)]
enum Grouping {
    GroupByPrio,
    Multibus,
    Failover,
}

#[derive(Clone, Copy, PartialEq, Debug)]
enum Failback {
    Manual,
    Immediate,
    Followover,
    After(SimTime),
}

pub(super) struct DmGroups {
    grouping: Grouping,
    failback: Failback,
    /// The group in use: (priority, id).
    current: Option<(u32, usize)>,
    /// When a better group than the current one became usable (deferred failback).
    better_since: Option<SimTime>,
    /// Each path's `up` at the previous selection (followover).
    was_up: Vec<bool>,
}

fn alua_prio(alua: Alua) -> u32 {
    match alua {
        Alua::ActiveOptimized => 50,
        Alua::ActiveNonOptimized => 10,
        Alua::Standby => 1,
        // multipath-tools prioritizers/alua.c: every other state gets 0.
        Alua::Unavailable | Alua::Transitioning => 0,
    }
}

impl Grouping {
    /// (priority, id) of the group a path belongs to.
    fn group(self, i: usize, p: &PathState) -> (u32, usize) {
        match self {
            Grouping::GroupByPrio => (alua_prio(p.alua), 0),
            Grouping::Multibus => (0, 0),
            Grouping::Failover => (alua_prio(p.alua), i),
        }
    }
}

/// The path group chosen for an I/O.
#[derive(Clone, Copy)]
pub(super) struct InGroup {
    grouping: Grouping,
    chosen: (u32, usize),
}

impl InGroup {
    /// Whether path `i` belongs to the group and can carry I/O.
    pub fn has(self, i: usize, p: &PathState) -> bool {
        p.carries_io() && self.grouping.group(i, p) == self.chosen
    }
}

impl DmGroups {
    pub fn read(spec: &Spec) -> SpecResult<Self> {
        let grouping = match spec.choice("path_grouping_policy", &["group_by_prio", "multibus", "failover"], Some("group_by_prio"), "how multipathd groups paths (alua devices: group_by_prio)")? {
            "multibus" => Grouping::Multibus,
            "failover" => Grouping::Failover,
            _ => Grouping::GroupByPrio,
        };
        let failback = match spec.scalar_text("failback", "failback", "manual", "manual, immediate, followover, or seconds before failing back")?.as_deref() {
            None | Some("manual") => Failback::Manual,
            Some("immediate") => Failback::Immediate,
            Some("followover") => Failback::Followover,
            Some(text) => match text.parse::<u64>() {
                Ok(s) if (1..=86_400).contains(&s) => Failback::After(s * NS_PER_S),
                _ => return Err(spec.error("failback", format!("`{text}`: expected manual, immediate, followover or whole seconds 1..=86400"))),
            },
        };
        Ok(Self { grouping, failback, current: None, better_since: None, was_up: vec![] })
    }

    fn group(&self, i: usize, p: &PathState) -> (u32, usize) {
        self.grouping.group(i, p)
    }

    /// The best group with a usable path: highest priority, then first in path order.
    fn best(&self, paths: &[PathState]) -> Option<(u32, usize)> {
        let usable = paths.iter().enumerate().filter(|(_, p)| p.carries_io());
        usable.map(|(i, p)| self.group(i, p)).min_by_key(|&(prio, id)| (std::cmp::Reverse(prio), id))
    }

    fn usable(&self, group: (u32, usize), paths: &[PathState]) -> bool {
        paths.iter().enumerate().any(|(i, p)| p.carries_io() && self.group(i, p) == group)
    }

    /// Chooses the group for this I/O.
    pub fn choose(&mut self, now: SimTime, paths: &[PathState]) -> Option<InGroup> {
        let best = self.best(paths)?;
        let current = self.current.filter(|&g| self.usable(g, paths));
        let came_back = self.was_up.len() == paths.len() && paths.iter().enumerate().any(|(i, p)| p.up && !self.was_up[i] && self.group(i, p) == best);
        self.was_up.clear();
        self.was_up.extend(paths.iter().map(|p| p.up));
        let chosen = match current {
            Some(c) if c != best => {
                let since = *self.better_since.get_or_insert(now);
                let back = match self.failback {
                    Failback::Manual => false,
                    Failback::Immediate => true,
                    Failback::Followover => came_back,
                    Failback::After(wait) => now >= since + wait,
                };
                if back { best } else { c }
            }
            Some(c) => c,
            None => best,
        };
        if chosen == best {
            self.better_since = None;
        }
        self.current = Some(chosen);
        Some(InGroup { grouping: self.grouping, chosen })
    }
}

/// The candidate with the smallest `key`; ties go to the first at or after `start` in path order
/// (dm's selectors move the chosen path to the tail of their list, which rotates ties).
pub(super) fn least(n: usize, start: usize, candidate: impl Fn(usize) -> bool, key: impl Fn(usize) -> f64) -> Option<usize> {
    let mut best: Option<(f64, usize)> = None;
    for i in (0..n).map(|k| (start + k) % n) {
        if candidate(i) {
            let k = key(i);
            if best.is_none_or(|(b, _)| k < b) {
                best = Some((k, i));
            }
        }
    }
    best.map(|(_, i)| i)
}

#[cfg(test)]
mod tests {
    use super::super::{test_util::paths, Alua::*};
    use super::*;

    fn groups(params: &str) -> DmGroups {
        let t: toml::Table = params.parse().unwrap();
        DmGroups::read(&Spec::new(&t, "psp")).unwrap()
    }

    fn members(g: &mut DmGroups, now: SimTime, p: &[PathState]) -> Vec<usize> {
        let g = g.choose(now, p).unwrap();
        (0..p.len()).filter(|&i| g.has(i, &p[i])).collect()
    }

    #[test]
    fn failback_modes() {
        let up = paths(&[(ActiveOptimized, true), (ActiveNonOptimized, true)]);
        let ao_down = paths(&[(ActiveOptimized, false), (ActiveNonOptimized, true)]);
        for (mode, back_at_once) in [("manual", false), ("immediate", true), ("followover", true)] {
            let mut g = groups(&format!("failback = \"{mode}\""));
            assert_eq!(members(&mut g, 0, &up), vec![0]);
            assert_eq!(members(&mut g, 1, &ao_down), vec![1], "{mode}: falls to the ANO group");
            assert_eq!(members(&mut g, 2, &up), if back_at_once { vec![0] } else { vec![1] }, "{mode}");
        }
        let mut g = groups("failback = 10");
        members(&mut g, 0, &up);
        members(&mut g, 0, &ao_down);
        assert_eq!(members(&mut g, NS_PER_S, &up), vec![1], "deferred");
        assert_eq!(members(&mut g, 11 * NS_PER_S, &up), vec![0], "10 s after the AO group returned");
    }

    #[test]
    fn followover_ignores_a_state_change_without_a_path_coming_back() {
        // On the ANO group after the AO path failed; then a standing ANO path turns AO.
        let fell_back = paths(&[(ActiveOptimized, false), (ActiveNonOptimized, true), (ActiveNonOptimized, true)]);
        let turned = paths(&[(ActiveOptimized, false), (ActiveNonOptimized, true), (ActiveOptimized, true)]);
        for (mode, after) in [("followover", vec![1]), ("immediate", vec![2])] {
            let mut g = groups(&format!("failback = \"{mode}\""));
            assert_eq!(members(&mut g, 0, &fell_back), vec![1, 2]);
            assert_eq!(members(&mut g, 1, &turned), after, "{mode}");
        }
    }

    #[test]
    fn grouping_policies() {
        let p = paths(&[(ActiveNonOptimized, true), (ActiveOptimized, true), (ActiveOptimized, true)]);
        assert_eq!(members(&mut groups(""), 0, &p), vec![1, 2]);
        assert_eq!(members(&mut groups("path_grouping_policy = \"multibus\""), 0, &p), vec![0, 1, 2]);
        assert_eq!(members(&mut groups("path_grouping_policy = \"failover\""), 0, &p), vec![1]);
        let e = DmGroups::read(&Spec::new(&"failback = \"soon\"".parse().unwrap(), "psp")).err().unwrap();
        assert!(e.message.contains("expected manual, immediate, followover"), "{}", e.message);
    }

    #[test]
    fn least_rotates_ties_from_start() {
        let load = [2.0, 1.0, 1.0, 3.0];
        assert_eq!(least(4, 0, |_| true, |i| load[i]), Some(1));
        assert_eq!(least(4, 2, |_| true, |i| load[i]), Some(2));
        assert_eq!(least(4, 0, |i| i != 1 && i != 2, |i| load[i]), Some(0));
    }
}
