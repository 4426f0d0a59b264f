//! A rate is I/Os over the time the workload ran: a vdbench run's warm-up comes before its
//! elapsed time, a curve point's rate is a share of its max run's own rate, and a VM whose
//! workload ends before the run is not diluted by the rest of the run.
use crate::common::{on_one_vm, repo, run_text};

fn vdbench_vm(file: &str, duration: &str) -> String {
    on_one_vm(&format!(
        "[run]\nduration = \"{duration}\"\nwarmup = \"0s\"\n[[array]]\nname = \"a\"\nmedia = {{ kind = \"flash\", read_latency = \"100us\", write_latency = \"20us\", servers = 64 }}\n[[vm]]\nname = \"vm\"\nhost = \"h\"\nvolume = \"lun\"\nadapter = {{ kind = \"ideal\" }}\n[[vm.job]]\nkind = \"vdbench\"\nfile = {:?}\n",
        repo(file).display().to_string()
    ))
}

#[test]
fn a_vdbench_warmup_comes_before_its_elapsed_time_and_a_curve_point_is_a_share_of_its_max_run() {
    let text = vdbench_vm("tests/data/rates/curve_warmup.vdb", "60s");
    let path = crate::common::write_scenario(&text);
    let r = sanlab_scenario::run_file(&path, &[], &sanlab_scenario::Overrides::default(), None).unwrap_or_else(|e| panic!("{e}"));
    let names: Vec<&str> = r.variants.iter().map(|v| v.name.as_str()).collect();
    assert_eq!(names, ["SQL threads=26", "SQL_(10%) threads=26", "SQL_(50%) threads=26"]);
    let job_iops = |i: usize| {
        let j = &r.variants[i].report.jobs[0];
        // Measured over elapsed = 30 s, after the 30 s warm-up.
        assert_eq!((j.read.runtime_ms, j.end_ms), (30_000.0, 60_000.0), "{}", r.variants[i].name);
        (j.read.total_ios + j.write.total_ios) as f64 / 30.0
    };
    let max = job_iops(0);
    assert!(max > 1000.0, "the max run measured {max} IOPS");
    for (i, share) in [(1, 0.10), (2, 0.50)] {
        let got = job_iops(i);
        assert!((got / (share * max) - 1.0).abs() < 0.01, "{}: {got} IOPS, {share} of {max}", r.variants[i].name);
    }
}

#[test]
fn a_vm_whose_workload_ends_early_is_rated_over_the_time_it_ran() {
    let job = |extra: &str| format!("[[vm.job]]\nrw = \"randread\"\niodepth = 4\n{extra}\n");
    let scenario = |extra: &str| on_one_vm(&format!("[run]\nduration = \"4s\"\nwarmup = \"0s\"\n[[vm]]\nname = \"vm\"\nhost = \"h\"\nvolume = \"lun\"\nadapter = {{ kind = \"ideal\" }}\n{}", job(extra)));
    let vm = |extra: &str| {
        let v = &run_text(&scenario(extra), &[]).report.vms[0];
        (v.completed, v.iops)
    };
    let (whole_ios, whole_iops) = vm("");
    let (half_ios, half_iops) = vm("runtime = \"2s\"");
    // Half the I/Os, over the 2 s the job ran: the same rate, checked against I/Os ÷ time.
    assert!((half_ios as f64 / whole_ios as f64 - 0.5).abs() < 0.01, "{half_ios} vs {whole_ios}");
    assert!((half_iops / (half_ios as f64 / 2.0) - 1.0).abs() < 0.01, "{half_iops} IOPS for {half_ios} I/Os in 2 s");
    assert!((half_iops / whole_iops - 1.0).abs() < 0.01, "{half_iops} vs {whole_iops}");
    // A job that starts late is rated from its start; one that never starts has no rate.
    let (late_ios, late_iops) = vm("startdelay = \"3s\"");
    assert!(late_ios > 0 && (late_iops / late_ios as f64 - 1.0).abs() < 0.01, "{late_iops} IOPS for {late_ios} I/Os in 1 s");
    assert_eq!(vm("startdelay = \"10s\""), (0, 0.0));
}
