//! Runs made before the run: the cost pilot (what a run will take, for `sanlab validate` and the
//! memory check) and the PARDA injector's measurement of the array.

pub(crate) mod cost;
pub(crate) mod injector;
