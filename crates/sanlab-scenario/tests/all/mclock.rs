//! mClock end to end (qos.md §2): limits cap a VM, reservations hold against a busier neighbour
//! on the same host, shares divide the rest.
use crate::common::run_text;

/// One host, one device queue of 32 in front of a 5-disk RAID-5 group whose small write cache
/// destages from the start, three VMs with 32 outstanding each.
fn scenario(vm_qos: [&str; 3]) -> String {
    let mut s = String::from(
        r#"schema_version = 1
name = "mclock"
[run]
duration = "40s"
warmup = "10s"
[[array]]
name = "a"
media = { kind = "disk_group", disks = 5, raid = "raid5", write_cache = "64MiB" }
[[volume]]
name = "ds"
arrays = ["a"]
[[host]]
name = "h"
adapter = { kind = "fc", lun_queue_depth = 32 }
scheduler = { kind = "mclock", dsnro = 32 }
[[path]]
host = "h"
array = "a"
"#,
    );
    for (i, qos) in vm_qos.iter().enumerate() {
        s += &format!("[[vm]]\nname = \"vm{i}\"\nhost = \"h\"\nvolume = \"ds\"\n{qos}\n[[vm.job]]\nrw = \"randrw\"\nrwmixread = 67\nbs = \"32k\"\niodepth = 32\noffset = \"{}GiB\"\nsize = \"8GiB\"\n", 8 * i);
    }
    s
}

fn vm_iops(text: &str) -> Vec<f64> {
    run_text(text, &[]).report.vms.iter().map(|v| v.iops).collect()
}

#[test]
fn limits_cap_each_vm() {
    let iops = vm_iops(&scenario(["limit = 300", "limit = 200", "limit = 100"]));
    for (got, want) in iops.iter().zip([300.0, 200.0, 100.0]) {
        assert!((got / want - 1.0).abs() < 0.03, "limit {want}: {got:.1} IOPS ({iops:?})");
    }
}

#[test]
fn a_reservation_holds_and_shares_divide_the_rest() {
    let free = vm_iops(&scenario(["", "", ""]));
    let total: f64 = free.iter().sum();
    for x in &free {
        assert!((x / (total / 3.0) - 1.0).abs() < 0.1, "equal shares: {free:?}");
    }
    // vm0 reserves 60 % of what the device gave all three; the others split the rest 2:1.
    let reservation = (0.6 * total).round();
    let iops = vm_iops(&scenario([&format!("reservation = {reservation}"), "shares = \"high\"", "shares = \"normal\""]));
    assert!(iops[0] >= 0.95 * reservation, "reservation {reservation}: {:.0} IOPS ({iops:?})", iops[0]);
    let ratio = iops[1] / iops[2];
    assert!((1.7..=2.3).contains(&ratio), "shares high:normal -> {ratio:.2} ({iops:?})");
}

/// SIOC's automatic threshold is measured on the healthy array before the run: the run's own
/// `[[event]]`s (here the array failing at 1 s, inside every injector level's measured window)
/// do not reach the injector, which used to measure 0 IOPS and set a 0 ms threshold.
#[test]
fn the_injector_measures_the_healthy_array_not_the_runs_faults() {
    let sioc = "[[volume]]\nname = \"lun\"\narrays = [\"a\"]\nflow_control = { kind = \"sioc\", threshold_mode = \"automatic\", injector_span = \"1GiB\" }\n";
    let healthy = crate::common::on_one_vm(sioc);
    let faulty = format!("{healthy}\n[[event]]\nkind = \"array_down\"\narray = \"a\"\nat = \"1s\"\n");
    let (a, b) = (run_text(&healthy, &[]), run_text(&faulty, &[]));
    let (a, b) = (&a.injector[0], &b.injector[0]);
    assert!(a.peak_iops > 0.0 && a.threshold_ms > 0.0, "{a:?}");
    assert!(b.points.iter().all(|p| p.iops > 0.0), "every level measured the array: {:?}", b.points);
    assert_eq!((b.peak_iops, b.threshold_ms), (a.peak_iops, a.threshold_ms), "the same threshold as without the fault");
}
