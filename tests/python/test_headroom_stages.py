"""Where the latency goes in `sanlab headroom`'s answer (docs/headroom.md#the-answer-and-its-interval):
each curve point's `stages_ms`, the worst judged VMs' stages as the engine measures them (VM
queues + KAVG + DAVG = the mean, fabric + array = DAVG), the means over the point's seeds; and
headroom.html's table of them today and at the limit.

On M/M/1 every microsecond is the array's: the VM and the ideal host queue nothing (VM queues,
KAVG and fabric are 0 at every load), so the array's time is the whole mean and grows with the
load, from 1/(μ − λ) = 0.2 ms today to the SLO's 0.5 ms at its limit (λ = 8,000). Noise: 3 s runs
(2 s measured, 10,000 to 20,000 I/Os), 3 to 12 seeds a point, common random numbers.

On the metro study with more VMs like vm1 (32 writes outstanding each, every delay fixed), what
grows is KAVG: from two VMs on ESXi clamps the device queue to DSNRO = 32 slots, a write holds its
slot for the 2.263 ms of DAVG, so n VMs' 32 n writes wait (n − 1) × 2.263 ms in the queue."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from sanlab.headroom.answer import text_lines
from test_headroom import METRO, MM1, _headroom

STAGES = ("vm_queues", "kavg", "davg", "fabric", "array")


def _adds_up(stages: dict[str, float]) -> None:
    assert stages["vm_queues"] + stages["kavg"] + stages["davg"] == pytest.approx(stages["mean"], rel=1e-9)
    assert stages["fabric"] + stages["array"] == pytest.approx(stages["davg"], rel=1e-9)


def test_on_mm1_the_array_takes_the_whole_mean_and_grows_with_the_load(tmp_path: Path) -> None:
    """mean <= 0.5 ms holds up to λ = 8,000; at every point the stages add up to the mean SLO's
    figure, all of it the array's, rising with the load."""
    doc = _headroom(str(MM1), "--slo", "mean<=0.5ms", "--duration", "3s", "--seed", "1", out=tmp_path / "h")
    assert doc["factor"] * 5000 == pytest.approx(8000, rel=0.03)  # 1/(μ − λ) = 0.5 ms
    arrays = []
    for point in doc["curve"]:
        stages = point["stages_ms"]["source"]
        _adds_up(stages)
        # The point's mean SLO figure (the worst judged VM's mean, over the seeds) is the stages' sum.
        assert stages["mean"] == pytest.approx(point["figures"]["mean<=0.5ms"]["mean"], rel=1e-9)
        assert stages["vm_queues"] == stages["kavg"] == stages["fabric"] == 0.0
        assert stages["array"] == stages["davg"] == pytest.approx(stages["mean"], rel=1e-9)
        if point["factor"] < 1.9:  # ×2 offers 10,000 IOPS to a server of μ = 10,000: no steady state
            arrays.append((point["factor"], stages["array"]))
    values = [array for _, array in sorted(arrays)]
    assert values == sorted(values) and len(values) >= 4
    today = next(point for point in doc["curve"] if point["factor"] == 1.0)
    assert today["stages_ms"]["source"]["array"] == pytest.approx(0.2, rel=0.05)
    at_limit = next(point for point in doc["curve"] if point["factor"] == doc["bracket"][0])
    assert at_limit["stages_ms"]["source"]["array"] == pytest.approx(0.5, rel=0.05)


def test_on_the_metro_study_more_vms_wait_in_the_device_queue(tmp_path: Path) -> None:
    """p99 <= 5 ms holds for 2 VMs, not 3; KAVG is (n − 1) × DAVG, and headroom.html's table shows
    today, the limit and the count past it."""
    out = tmp_path / "m"
    doc = _headroom(str(METRO), "--variant", "alua_rr", "--grow", "vms", "--slo", "p99<=5ms", out=out)
    assert doc["bracket"] == [2.0, 3.0] and doc["vms"] == 2
    davg: list[float] = []
    for point in doc["curve"]:
        count = round(point["factor"])
        for vm, stages in point["stages_ms"].items():
            _adds_up(stages)
            # The links' 2 × 50 µs outside the array; n VMs' writes wait n − 1 writes' DAVG for a slot.
            assert stages["vm_queues"] == 0.0 and stages["fabric"] == pytest.approx(0.1, rel=1e-6)
            expected = (count - 1) * stages["davg"]
            assert stages["kavg"] == pytest.approx(expected, rel=0.01, abs=1e-9), (count, vm)
            davg.append(stages["davg"])
    assert max(davg) == pytest.approx(2.263, rel=0.001) and min(davg) == pytest.approx(2.263, rel=0.001)
    # The terminal's line for the limit: 2 VMs, each write waiting one other's DAVG in the queue.
    assert (
        "where the latency goes at the limit (VM vm1, the worst by p99<=5ms; mean 4.53 ms): VM queues 0, "
        "KAVG 2.26, fabric 0.100, "
        "array front end 0.116, cores 0, cache 0, media 2.05 ms"
    ) in text_lines(doc)
    page = (out / "headroom.html").read_text(encoding="utf-8")
    table = page[page.index("Where the latency goes, today and at the limit") :].split("</table>")[0]
    rows = [re.findall(r"<td[^>]*>(.*?)</td>", row) for row in re.findall(r"<tr><td>.*?</tr>", table)]
    # load, IOPS, the worst VM, then VM queues, KAVG, DAVG, fabric, array, its front end (the
    # write's data after XFER_RDY), cores (none modelled), cache (none), media (with the peer's copy)
    # and mean (ms) as the terminal writes them
    array = ["0.100", "2.16", "0.116", "0", "0", "2.05"]
    assert rows == [
        ["today, ×1", "14,144", "vm1", "0", "0", "2.26", *array, "2.26"],
        ["at the limit (holds), ×2", "14,143", "vm1", "0", "2.26", "2.26", *array, "4.53"],
        ["past it (fails), ×3", "14,143", "vm1", "0", "4.53", "2.26", *array, "6.79"],
    ]
