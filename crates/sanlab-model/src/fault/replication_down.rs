//! The replication link between an active-active pair fails (arrays.md §1.5): writes to the
//! pair's volumes stall while both arrays race to the mediator (the replication's `election`
//! time); the pair's `preferred` array wins if set, else the first to reach the mediator (a draw
//! from the run's seed). The winner serves alone (writes without the mirror round trip); the loser
//! stops serving the volumes and answers with ALUA state unavailable, so hosts move to the
//! winner's paths. With `until` the link returns; the loser serves again once it has resynced
//! (at once here: our simplification).

use super::{read, Action, Fault, Target};
use sanlab_spec::{Kind, Spec, SpecResult};

pub const KIND: Kind<Fault> = Kind { name: "replication_down", summary: "the replication link of an active-active pair fails: mediator race, the loser stops serving", build };

fn build(spec: &Spec) -> SpecResult<Box<Fault>> {
    let arrays = spec.strings("arrays", "the pair, as in its [[replication]]")?;
    let pair = match <[String; 2]>::try_from(arrays) {
        Ok(pair) => pair,
        Err(_) if spec.is_describing() => [String::new(), String::new()],
        Err(_) => return Err(spec.error("arrays", "expected the two arrays of a [[replication]] pair, e.g. [\"local\", \"remote\"]")),
    };
    Ok(Box::new(read(spec, Target::Replication(pair), Action::ReplicationDown)?))
}
