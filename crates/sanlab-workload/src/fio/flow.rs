//! fio `flow` (axboe/fio flow.c at f5344384): jobs of one job file that share a `flow_id` keep
//! their issued I/Os in the ratio of their `flow` weights. fio keeps one counter per flow (it
//! starts at 1) and one per job; before each I/O a job whose share of the flow's counter exceeds
//! its share of the flow's weight does not issue: it waits `flow_sleep` us after quiescing, or
//! tries again at once. A job joins the flow when it starts and leaves it, counts and weight,
//! when it ends.
//!
//! Our choices: sanlab checks after each completion of a closed-loop job (fio before each
//! issue), and without `flow_sleep` the job waits one I/O time (the latency of the completion)
//! where fio spins until the others have caught up.

use super::values::{err, parse_int, OptionError, OptionValues};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

/// fio's largest weight (flow.h `FLOW_MAX_WEIGHT`).
const MAX_WEIGHT: i64 = 1_000;

/// A member of a flow: its weight, I/Os issued, and when it ends (None while unknown).
#[derive(Debug)]
struct Member {
    weight: u64,
    issued: u64,
    end_ns: Option<u64>,
    done: bool,
}

/// The jobs of one `flow_id`.
#[derive(Debug, Default)]
pub(crate) struct Flow(RefCell<Vec<Member>>);

/// One job's place in its flow; each clone joins on its first request.
#[derive(Clone, Debug)]
pub(crate) struct FlowShare {
    id: u32,
    weight: u64,
    sleep_ns: u64,
    flow: Rc<Flow>,
    member: Option<usize>,
}

impl FlowShare {
    pub(crate) fn from_options(v: &OptionValues) -> Result<Option<FlowShare>, OptionError> {
        let int = |o: &'static str, max: i64| v.get(o).map_or(Ok(0), |s| parse_int(o, s, 0, max));
        let weight = int("flow", MAX_WEIGHT)? as u64;
        let id = int("flow_id", i64::from(u32::MAX))? as u32;
        let sleep_us = int("flow_sleep", i64::from(u32::MAX))? as u64;
        if weight == 0 {
            if let Some(o) = ["flow_id", "flow_sleep"].into_iter().find(|o| v.get(o).is_some()) {
                return Err(err(o, "has no effect without a flow weight: add flow, e.g. flow=1"));
            }
            return Ok(None);
        }
        Ok(Some(FlowShare { id, weight, sleep_ns: sleep_us * 1_000, flow: Rc::default(), member: None }))
    }

    /// Shares the flow of the jobs with the same `flow_id` read so far from one file.
    pub(crate) fn join(&mut self, flows: &mut BTreeMap<u32, Rc<Flow>>) {
        self.flow = flows.entry(self.id).or_default().clone();
    }

    /// The job issued a request.
    pub(crate) fn issued(&mut self) {
        let mut members = self.flow.0.borrow_mut();
        let k = *self.member.get_or_insert_with(|| {
            members.push(Member { weight: self.weight, issued: 0, end_ns: None, done: false });
            members.len() - 1
        });
        members[k].issued += 1;
    }

    /// The job has no more requests: it leaves the flow.
    pub(crate) fn done(&mut self) {
        if let Some(k) = self.member {
            self.flow.0.borrow_mut()[k].done = true;
        }
    }

    /// After a completion at `now_ns`: the pause the job takes when it is ahead of its share.
    /// `ends_at_ns` is when the job's runtime ends, once known.
    pub(crate) fn pause_ns(&mut self, now_ns: u64, latency_ns: u64, ends_at_ns: Option<u64>) -> Option<u64> {
        let k = self.member?;
        let mut members = self.flow.0.borrow_mut();
        if members[k].end_ns.is_none() {
            members[k].end_ns = ends_at_ns;
        }
        let live = members.iter().filter(|m| !m.done && m.end_ns.is_none_or(|e| now_ns < e));
        let (counter, weight) = live.fold((1, 0), |(c, w), m| (c + m.issued, w + m.weight));
        let ahead = members[k].issued as f64 / counter as f64 > self.weight as f64 / weight as f64;
        ahead.then_some(if self.sleep_ns > 0 { self.sleep_ns } else { latency_ns.max(1) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn share(opts: &[(&'static str, &str)]) -> Result<Option<FlowShare>, OptionError> {
        FlowShare::from_options(&OptionValues::of(opts))
    }

    #[test]
    fn a_job_ahead_of_its_weight_waits() {
        let mut flows = BTreeMap::new();
        let (mut heavy, mut light) = (share(&[("flow", "2")]).unwrap().unwrap(), share(&[("flow", "1"), ("flow_sleep", "500")]).unwrap().unwrap());
        heavy.join(&mut flows);
        light.join(&mut flows);
        heavy.issued();
        light.issued();
        light.issued();
        // The count starts at 1: light's 2 of 4 are above its third of the weight, heavy's 1 below two thirds.
        assert_eq!(light.pause_ns(10, 7, None), Some(500_000));
        assert_eq!(heavy.pause_ns(10, 7, Some(20)), None);
        for _ in 0..3 {
            heavy.issued();
        }
        assert_eq!(light.pause_ns(10, 7, None), None, "2 of 7");
        // Once heavy has left (its runtime ended at 20), light has the flow to itself.
        light.issued();
        light.issued();
        assert_eq!(light.pause_ns(30, 7, None), None, "4 of 5, weight 1 of 1");
    }

    #[test]
    fn flow_options_are_checked() {
        assert_eq!(share(&[("flow_sleep", "10")]).err().unwrap().option, "flow_sleep");
        assert!(share(&[("flow", "1001")]).err().unwrap().message.contains("nearest valid: 1000"));
        assert!(share(&[]).unwrap().is_none());
    }
}
