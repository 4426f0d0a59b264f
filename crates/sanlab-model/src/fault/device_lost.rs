//! An array reports a volume permanently lost (PDL: SCSI sense LOGICAL UNIT NOT SUPPORTED, the
//! volume deleted or unpresented): the host marks each path dead as it reports PDL and sends the
//! command to another path; once no path is left the device is lost and its commands fail at
//! once, without the APD wait (ESXi's PDL handling). With `until` the volume is presented again
//! and its paths come back.

use super::{array, read, Action, Fault, Target};
use sanlab_spec::{Kind, Spec, SpecResult};

pub const KIND: Kind<Fault> = Kind { name: "device_lost", summary: "an array reports a volume permanently lost (PDL): its I/O fails at once", build };

fn build(spec: &Spec) -> SpecResult<Box<Fault>> {
    let array = array(spec)?;
    let volume = spec.string("volume", None, "the volume, by name")?;
    Ok(Box::new(read(spec, Target::Volume { array, volume }, Action::DeviceLost)?))
}
