"""Every shipped scenario's results, dumped to one JSON file, and two dumps compared key by key: the
check that a change not meant to change the model leaves every study's and example's figures
identical, bit for bit.

    .venv/bin/python benches/dump_scenarios.py dump before.json   # on the old main
    .venv/bin/python benches/dump_scenarios.py dump after.json    # on the new one
    .venv/bin/python benches/dump_scenarios.py compare before.json after.json

Each file runs for its warm-up plus `--seconds` (default 4) of simulated time, or as written when
that is shorter; a file that cannot run so short (an event beyond the run, a variant's longer
warm-up) runs as written with `--full` (minutes: the failover and poor-health studies), else keeps
its error message, which must be the same on both sides. `wall_s` is left out; keys only one side
has are listed.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from sanlab import engine
from sanlab.analysis.health import duration_s

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("scenarios/studies", "scenarios/examples", "scenarios/validation")


def _duration(text: dict[str, Any], seconds: float) -> str | None:
    run = text.get("run", {})
    short_s = duration_s(run.get("warmup", "0s")) + seconds
    return f"{short_s:g}s" if short_s < duration_s(run.get("duration", "60s")) else None


def dump(out: Path, seconds: float, full: bool) -> None:
    import tomllib

    results: dict[str, Any] = {}
    for folder in FOLDERS:
        for path in sorted((ROOT / folder).glob("*.toml")):
            text = tomllib.loads(path.read_text(encoding="utf-8"))
            if "name" not in text:
                continue  # a base for other files, not a scenario of its own
            key = str(path.relative_to(ROOT))
            try:
                doc = engine.run(path, duration=_duration(text, seconds))
            except Exception as error:  # recorded: the other side must fail alike
                if not full:
                    results[key] = f"error: {error}"
                    continue
                doc = engine.run(path)
            for variant in doc["variants"]:
                variant.pop("wall_s")
            results[key] = doc
            print(key, file=sys.stderr)
    out.write_text(json.dumps(results, sort_keys=True), encoding="utf-8")


def differences(a: Any, b: Any, at: str = "") -> list[str]:
    if isinstance(a, dict) and isinstance(b, dict):
        found = [f"{at}.{k}: only in {'the first' if k in a else 'the second'}" for k in sorted(set(a) ^ set(b))]
        return found + [d for k in sorted(set(a) & set(b)) for d in differences(a[k], b[k], f"{at}.{k}")]
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [d for i, (x, y) in enumerate(zip(a, b, strict=True)) for d in differences(x, y, f"{at}[{i}]")]
    return [] if a == b else [f"{at}: {str(a)[:80]} != {str(b)[:80]}"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    dumping = commands.add_parser("dump")
    dumping.add_argument("out", type=Path)
    dumping.add_argument("--seconds", type=float, default=4.0, help="simulated seconds after the warm-up")
    dumping.add_argument("--full", action="store_true", help="run as written the files that cannot run short")
    comparing = commands.add_parser("compare")
    comparing.add_argument("dumps", type=Path, nargs=2)
    args = parser.parse_args()
    if args.command == "dump":
        dump(args.out, args.seconds, args.full)
        return 0
    first, second = (json.loads(p.read_text(encoding="utf-8")) for p in args.dumps)
    found = differences(first, second)
    for line in found[:200]:
        print(line)
    print(f"{len(found)} differences over {len(first)} files")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
