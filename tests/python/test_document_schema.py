"""`document.py` and the engine's JSON document agree: every key the engine writes is declared
there with its type, every key declared required is written, and every declared key is written
by at least one run of a corpus that covers the engine's features (so a key the engine renames
or drops fails here, not in a reader far away)."""

from __future__ import annotations

import types
import typing
from pathlib import Path
from typing import Any, NotRequired, get_args, get_origin, get_type_hints

import pytest

from sanlab import document, engine
from sanlab.replications import combine

ROOT = Path(__file__).resolve().parents[2]
ONE_VM = ROOT / "tests" / "data" / "scenarios" / "one_vm.toml"
STUDIES = ROOT / "scenarios" / "studies"
FIO_BASE = "fio --name=j --ioengine=libaio --bs=4k --size=1g --time_based --runtime=5"


def _fio(tmp_path: Path, name: str, options: str) -> Path:
    """One VM running a fio command line on the shared one-VM base (for fio's findings)."""
    scenario = tmp_path / f"{name}.toml"
    scenario.write_text(
        f'schema_version = 1\nname = "{name}"\nbase = "{ONE_VM.as_posix()}"\n[run]\nduration = "5s"\n'
        '[[vm]]\nname = "vm"\nhost = "h"\nvolume = "lun"\nadapter = { kind = "ideal" }\n'
        f'[[vm.job]]\nkind = "fio"\ncmdline = "{FIO_BASE} {options}"\n',
        encoding="utf-8",
    )
    return scenario


def _corpus(tmp_path: Path) -> list[tuple[str, document.Document]]:
    """Runs that between them write every key: flow control, disk groups and cores (SIOC against
    PARDA), QoS (the noisy neighbour), faults and path events (failover, its fault moved early),
    fio's places and findings (latency target, steady state, syncs, an error), an open loop."""
    short = ["run.warmup=0s"]
    fault = 'event=[{ kind = "path_down", path = "local-0", at = "0.5s", until = "1s" }]'
    return [
        ("sioc_vs_parda", engine.run(STUDIES / "sioc_vs_parda.toml", sets=short, duration="5s")),
        ("noisy_neighbor", engine.run(STUDIES / "noisy_neighbor.toml", ["base"], short, duration="2s")),
        ("failover", engine.run(STUDIES / "failover.toml", ["notice-rr_iops1"], [*short, fault], duration="2s")),
        ("fio_file", engine.run(ROOT / "scenarios" / "examples" / "fio_file.toml", sets=short, duration="1s")),
        ("latency_target", engine.run(_fio(tmp_path, "lt", "--rw=randrw --iodepth=32 --latency_target=650us --latency_window=100ms --fsync=4"))),
        ("steadystate", engine.run(_fio(tmp_path, "ss", "--rw=randwrite --iodepth=4 --rate_iops=2000 --rate_process=poisson --ss=lat:50% --ss_dur=1 --fdatasync=2 --sync_file_range=write:3"))),
        ("error", engine.run(_fio(tmp_path, "err", "--rw=randread --iodepth=1 --rate_iops_min=20000"))),
        # Replications as sanlab combines them: means, intervals and each replica.
        ("replicated", combine(engine.run(STUDIES / "noisy_neighbor.toml", ["base"], short, duration="1s", replications=2))),
    ]


def _optional_keys(typed: type) -> set[str]:
    hints = get_type_hints(typed, include_extras=True)
    if not typed.__total__:  # type: ignore[attr-defined]
        return set(hints)
    return {key for key, hint in hints.items() if get_origin(hint) is NotRequired}


class _Checker:
    """Walks a document beside its declared type, noting what disagrees and which keys it saw."""

    def __init__(self) -> None:
        self.problems: set[str] = set()
        self.seen: dict[str, set[str]] = {}

    def check(self, value: Any, declared: Any, where: str) -> None:
        origin = get_origin(declared)
        if declared is Any:
            return
        if typing.is_typeddict(declared):
            self._typed(value, declared, where)
        elif origin in (typing.Union, types.UnionType):
            if value is None and type(None) in get_args(declared):
                return
            others = [arg for arg in get_args(declared) if arg is not type(None)]
            if len(others) == 1:
                self.check(value, others[0], where)
        elif origin is list:
            if not isinstance(value, list):
                self.problems.add(f"{where}: expected a list, the engine writes {type(value).__name__}")
                return
            for item in value:
                self.check(item, get_args(declared)[0], f"{where}[]")
        elif origin is dict:
            if not isinstance(value, dict):
                self.problems.add(f"{where}: expected an object, the engine writes {type(value).__name__}")
                return
            for item in value.values():
                self.check(item, get_args(declared)[1], f"{where}{{}}")
        elif declared is float:
            if isinstance(value, bool) or not isinstance(value, int | float):
                self.problems.add(f"{where}: expected a number, the engine writes {type(value).__name__}")
        elif declared in (int, str, bool) and (type(value) is not declared):
            self.problems.add(f"{where}: expected {declared.__name__}, the engine writes {type(value).__name__}")

    def _typed(self, value: Any, declared: type, where: str) -> None:
        name = declared.__name__
        if not isinstance(value, dict):
            self.problems.add(f"{where}: expected an object ({name}), the engine writes {type(value).__name__}")
            return
        hints = get_type_hints(declared)
        seen = self.seen.setdefault(name, set())
        for key, item in value.items():
            if key not in hints:
                self.problems.add(f"{name}: the engine writes `{key}` (at {where}); document.py does not declare it")
                continue
            seen.add(key)
            self.check(item, hints[key], f"{where}.{key}")
        for key in set(hints) - _optional_keys(declared) - set(value):
            self.problems.add(f"{name}: `{key}` is declared required; the engine left it out (at {where})")


def _typed_dicts() -> dict[str, type]:
    return {name: item for name, item in vars(document).items() if isinstance(item, type) and typing.is_typeddict(item)}


@pytest.fixture(scope="module")
def checked(tmp_path_factory: pytest.TempPathFactory) -> _Checker:
    checker = _Checker()
    for name, doc in _corpus(tmp_path_factory.mktemp("schema")):
        checker.check(doc, document.Document, name)
    return checker


def test_every_key_the_engine_writes_is_declared_with_its_type(checked: _Checker) -> None:
    assert not checked.problems, "\n".join(sorted(checked.problems))


def test_every_declared_key_is_written_by_some_run(checked: _Checker) -> None:
    never = {
        name: sorted(set(get_type_hints(typed)) - checked.seen.get(name, set()))
        for name, typed in _typed_dicts().items()
    }
    never["Document"].remove("notes")  # sanlab's, not the engine's (results.json, --json)
    never["Document"].remove("precision")  # `sanlab run --precision`'s
    never["Document"].remove("warmup")  # `sanlab run --warmup auto`'s
    never["Variant"].remove("ci95_method")  # `sanlab run --replications 1`'s
    never = {name: keys for name, keys in never.items() if keys}
    assert not never, f"declared in document.py, written by no run of the corpus: {never}"


def test_the_checker_finds_a_disagreement() -> None:
    checker = _Checker()
    checker.check({"name": "vm", "host": 1}, document.VmReport, "vm")
    assert any("host" in problem and "expected str" in problem for problem in checker.problems)
    assert any("`issued` is declared required" in problem for problem in checker.problems)
    checker.check({"mean": 1.0, "extra": 2}, document.LatencyMs, "lat")
    assert any("`extra`" in problem for problem in checker.problems)
