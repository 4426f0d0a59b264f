//! Every integration test of the scenario crate in one binary: each test file is a module, so the
//! engine is linked once rather than once per file.

mod common;
mod analytic;
mod bad_input;
mod corpus_end_to_end;
mod cost;
mod failover;
mod fuzz;
mod hitarea_study;
mod mclock;
mod metro_study;
mod noise;
mod noisy_study;
mod parda_calibrated_study;
mod parda_study;
mod parts;
mod path_selectors;
mod rates;
mod replications;
mod vdbench_runs;
mod workload_kinds;
