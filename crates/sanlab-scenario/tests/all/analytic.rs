//! Queueing theory, with models built from ordinary scenario parts.
use crate::common::{claim, run};
use sanlab_scenario::Overrides;

#[test]
fn mm1_and_md1_mean_response_time_within_2_percent() {
    let r = run("scenarios/validation/mm1.toml", &["mm1", "md1"], Overrides::default());
    for (v, id) in r.variants.iter().zip(["mm1.response", "md1.response"]) {
        let vm = &v.report.vms[0];
        claim(id, vm.lat_ms.mean);
        // The arrival rate is honoured (open loop, no backlog).
        assert!((vm.iops - 5000.0).abs() / 5000.0 < 0.01, "{}: {} IOPS", v.name, vm.iops);
        // Utilisation of the single server is rho = 0.5.
        assert!((v.report.arrays[0].utilisation - 0.5).abs() < 0.01);
    }
}

#[test]
fn closed_loop_obeys_littles_law_within_1_percent() {
    let r = run("scenarios/validation/littles_law.toml", &[], Overrides::default());
    let vm = &r.variants[0].report.vms[0];
    let n = 16.0;
    let by_little = n / (vm.lat_ms.mean / 1e3);
    assert!((vm.iops - by_little).abs() / by_little < 0.01, "X = {} vs N/R = {by_little}", vm.iops);
    claim("little.closed_loop", vm.iops);
    assert!((vm.lat_ms.mean - 0.6).abs() < 0.006);
}
