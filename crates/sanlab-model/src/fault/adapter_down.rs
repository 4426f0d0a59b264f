//! A host adapter (HBA) fails: every path leaving it goes down. The adapter's driver sees its
//! link drop, so by default the host is told at once (`notice`).

use super::{read, Action, Fault, Target};
use sanlab_spec::{Kind, Spec, SpecResult};

pub const KIND: Kind<Fault> = Kind { name: "adapter_down", summary: "a host adapter (HBA) fails: all its paths go down", build };

fn build(spec: &Spec) -> SpecResult<Box<Fault>> {
    let host = spec.string("host", None, "the host, by name")?;
    let adapter = spec.string("adapter", None, "the adapter, as the paths' `adapter` names it (default vmhba0)")?;
    let notice = spec.boolean("notice", true, "the host is told (its driver sees link down); false: commands vanish until their timeout")?;
    Ok(Box::new(read(spec, Target::Adapter { host, adapter }, Action::Down { notice })?))
}
