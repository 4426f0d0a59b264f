//! Runs one variant of a scenario and prints engine figures; a target for profilers
//! (see docs/performance.md): `cargo run --release --example profile_run -- FILE VARIANT DURATION`.
use sanlab_scenario::{run_file, Overrides};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let [_, file, variant, duration] = args.as_slice() else {
        eprintln!("usage: profile_run FILE VARIANT DURATION");
        std::process::exit(2);
    };
    let o = Overrides { duration: Some(duration.clone()), ..Overrides::default() };
    match run_file(std::path::Path::new(file), std::slice::from_ref(variant), &o, None) {
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
