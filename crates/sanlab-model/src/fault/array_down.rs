//! A whole array fails: every port goes dark (hosts are told, RSCN) and every command it held is
//! lost. A replicated volume stays online on the peer, which wins the mediator race unopposed.

use super::{array, read, Action, Fault, Target};
use sanlab_spec::{Kind, Spec, SpecResult};

pub const KIND: Kind<Fault> = Kind { name: "array_down", summary: "a whole array fails; its replication peer keeps the volumes", build };

fn build(spec: &Spec) -> SpecResult<Box<Fault>> {
    Ok(Box::new(read(spec, Target::Array(array(spec)?), Action::ArrayDown)?))
}
