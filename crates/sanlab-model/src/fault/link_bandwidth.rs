//! A path's link bandwidth changes and, with `until`, changes back: a link renegotiating to a
//! lower speed (an 16 Gb/s FC port at 4 Gb/s after errors), or an inter-switch link shared with
//! other traffic.

use super::{path, read, Action, Fault};
use sanlab_spec::{Kind, Spec, SpecResult};

pub const KIND: Kind<Fault> = Kind { name: "link_bandwidth", summary: "a path's link bandwidth per direction changes", build };

fn build(spec: &Spec) -> SpecResult<Box<Fault>> {
    let bandwidth = spec.bandwidth_bps("bandwidth", None, "the new bandwidth per direction, e.g. \"4Gb/s\"")?;
    Ok(Box::new(read(spec, path(spec)?, Action::Bandwidth(bandwidth))?))
}
