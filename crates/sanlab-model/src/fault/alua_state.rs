//! A target port group changes its ALUA state (SPC-4; multipath.md §1.5): the array's paths (to
//! one controller, or all; for some hosts, or all) report AO, ANO, standby or unavailable, after
//! `transition` in the transitioning state (no I/O). Hosts learn it at once here (the array's
//! UNIT ATTENTION and the SATP's re-read of the port groups take a command round trip: below what
//! the studies resolve). With `until` the advertised states return.

use super::{array, read, Action, Fault, Target};
use crate::multipath::Alua;
use sanlab_spec::{Kind, Spec, SpecResult};

pub const KIND: Kind<Fault> = Kind { name: "alua_state", summary: "a target port group changes ALUA state (AO, ANO, standby, unavailable; transitioning first)", build };

fn build(spec: &Spec) -> SpecResult<Box<Fault>> {
    let array = array(spec)?;
    let controller = spec.opt_string("controller", "only the paths to this controller, e.g. \"ct1\"; default: all of the array's")?;
    let hosts = spec.strings("hosts", "only these hosts' paths; default: every host's")?;
    let names = ["AO", "ANO", "standby", "unavailable"];
    let state = spec.choice("state", &names, None, "the new state")?;
    let state = Alua::from_name(state).expect("listed");
    let transition_ns = spec.duration_ns("transition", Some((0, "0s")), "time in the transitioning state first (no I/O on the paths)")?;
    let target = Target::PortGroup { array, controller, hosts };
    Ok(Box::new(read(spec, target, Action::AluaState { state, transition_ns })?))
}
