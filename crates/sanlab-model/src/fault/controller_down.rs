//! An array controller fails: its front-end ports go dark (the hosts are told, RSCN), the
//! address segments its cores own move to the surviving controllers, and while they take over the
//! array holds every new command (`takeover`). With `until` the controller comes back and takes
//! its segments again (without a second pause: our simplification).

use super::{array, read, Action, Fault, Target};
use sanlab_spec::{Kind, Spec, SpecResult};

pub const KIND: Kind<Fault> = Kind { name: "controller_down", summary: "an array controller fails: its ports go, its work moves to the survivor after a takeover pause", build };

fn build(spec: &Spec) -> SpecResult<Box<Fault>> {
    let array = array(spec)?;
    let controller = spec.string("controller", None, "the controller, e.g. \"ct0\"")?;
    let takeover_ns = spec.duration_ns("takeover", Some((2_000_000_000, "2s")), "the survivor holds new commands this long while it takes over (ours: sources give \"seconds\")")?;
    Ok(Box::new(read(spec, Target::Controller { array, controller }, Action::ControllerDown { takeover_ns })?))
}
