//! An array front-end port fails: every path to it, from every host, goes down. The fabric
//! reports it (RSCN), so by default the hosts are told (`notice`).

use super::{array, read, Action, Fault, Target};
use sanlab_spec::{Kind, Spec, SpecResult};

pub const KIND: Kind<Fault> = Kind { name: "port_down", summary: "an array front-end port fails: all paths to it go down", build };

fn build(spec: &Spec) -> SpecResult<Box<Fault>> {
    let array = array(spec)?;
    let port = spec.string("port", None, "the port as `ct<controller>.fc<n>`, e.g. \"ct0.fc1\" (the paths report shows each path's)")?;
    let notice = spec.boolean("notice", true, "the hosts are told (RSCN); false: commands vanish until their timeout")?;
    Ok(Box::new(read(spec, Target::Port { array, port }, Action::Down { notice })?))
}
