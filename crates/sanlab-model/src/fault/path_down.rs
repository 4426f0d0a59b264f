//! A path goes down and, with `until`, comes back: a cable pulled, a switch port or an SFP
//! failing. With `notice` the fabric reports it (link down, RSCN) and the host marks the path dead
//! after its notice delay; silently, frames just vanish and the host finds out when a command
//! times out, then its path checker finds the path again once it is back.

use super::{path, read, Action, Fault};
use sanlab_spec::{Kind, Spec, SpecResult};

pub const KIND: Kind<Fault> = Kind { name: "path_down", summary: "a path fails (with notice, or silently) and optionally comes back", build };

fn build(spec: &Spec) -> SpecResult<Box<Fault>> {
    let notice = spec.boolean("notice", true, "the host is told (link down, RSCN); false: commands vanish until their timeout")?;
    Ok(Box::new(read(spec, path(spec)?, Action::Down { notice })?))
}
