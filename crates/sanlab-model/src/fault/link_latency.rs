//! A path's link latency changes and, with `until`, changes back: a degrading path (a marginal
//! SFP retransmitting, a congested inter-switch link, a longer WAN route).

use super::{path, read, Action, Fault};
use crate::noise::DelaySpec;
use sanlab_spec::{Kind, Spec, SpecResult};

pub const KIND: Kind<Fault> = Kind { name: "link_latency", summary: "a path's one-way link latency changes (a degrading path)", build };

fn build(spec: &Spec) -> SpecResult<Box<Fault>> {
    let latency = spec.delay_param("latency", (0, "required"), "the new one-way latency: a duration or a distribution")?;
    if !spec.has("latency") && !spec.is_describing() {
        return Err(spec.error("latency", "is required: expected a duration (\"2ms\") or a distribution table"));
    }
    Ok(Box::new(read(spec, path(spec)?, Action::Latency(latency))?))
}
