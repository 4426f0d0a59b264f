//! Runs one variant of a scenario and prints engine figures; a target for profilers
//! (see docs/performance.md): `cargo run --release --example profile_run -- FILE VARIANT DURATION
//! [THREADS]`. With THREADS, a topology of independent parts runs them on up to that many threads.
use sanlab_scenario::{run_file_parallel, Overrides};
use std::num::NonZeroUsize;

fn usage() -> ! {
    eprintln!("usage: profile_run FILE VARIANT DURATION [THREADS]");
    std::process::exit(2);
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (file, variant, duration, threads) = match args.as_slice() {
        [_, file, variant, duration] => (file, variant, duration, "1"),
        [_, file, variant, duration, threads] => (file, variant, duration, threads.as_str()),
        _ => usage(),
    };
    let Ok(threads) = threads.parse::<NonZeroUsize>() else { usage() };
    let o = Overrides { duration: Some(duration.clone()), ..Overrides::default() };
    match run_file_parallel(std::path::Path::new(file), std::slice::from_ref(variant), &o, None, threads) {
        Ok(r) => {
            let v = &r.variants[0];
            println!("{}: {} I/Os, {} events in {:.3} s: {:.2} M I/Os per s, {:.1} M events per s", v.name, v.report.ios, v.report.events, v.wall_s, v.report.ios as f64 / v.wall_s / 1e6, v.report.events as f64 / v.wall_s / 1e6);
        }
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    }
}
