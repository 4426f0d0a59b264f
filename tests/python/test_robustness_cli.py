"""Issue 27, round 3, the command line: every argument error is one `error:` line with exit 2."""

from __future__ import annotations

import pytest

from sanlab.cli import build_parser, main
from sanlab.commands.options import SEED_LIMIT


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["run", "x.toml", "--seed", "-1"], "sanlab run: argument --seed: expected a seed 0 to 2**63-1"),
        (["run", "x.toml", "--seed", str(2**63)], f"the nearest is {2**63 - 1}"),
        (["run", "x.toml", "--seed", str(2**64)], f"got {2**64}"),
        (["sweep", "x.toml", "--vary", "a=1", "--seed", str(2**63)], "sanlab sweep: argument --seed"),
        (["run", "x.toml", "--seed", "abc"], "expected a whole number"),
        (["run", "x.toml", "--quiet", "--verbose"], "not allowed with argument --quiet"),
        (["run"], "required: SCENARIO"),
        (["simulate"], "invalid choice: 'simulate'"),
        ([], "required: COMMAND"),
        # 2**64 variants at once was an OverflowError in the engine's thread; workers had no bound.
        (["run", "x.toml", "--jobs", str(2**64)], f"--jobs: expected 1 to 1024, got {2**64}; the nearest is 1024"),
        (["sweep", "x.toml", "--vary", "a=1", "--workers", "5000"], "--workers: expected 1 to 1024"),
        (["calibrate", "x.toml", "--measured", "m", "--free", "a=1..2", "-o", "o", "--workers", "0"], "the nearest is 1"),
        (["advise", "x.toml", "--seed", str(2**63)], "sanlab advise: argument --seed"),
    ],
)
def test_an_argument_error_is_one_line(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # argparse printed the usage, then `sanlab run: error: ...`: two lines or more.
    assert main(args) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("error: ")
    assert captured.err.count("\n") == 1
    assert message in captured.err
    assert "usage:" not in captured.err


def test_the_seed_limit_is_the_one_the_help_states(capsys: pytest.CaptureFixture[str]) -> None:
    assert SEED_LIMIT == 2**63
    assert build_parser().parse_args(["run", "x.toml", "--seed", str(SEED_LIMIT - 1)]).seed == SEED_LIMIT - 1
    assert build_parser().parse_args(["run", "x.toml", "--seed", "0"]).seed == 0
    with pytest.raises(SystemExit) as exited:
        build_parser().parse_args(["run", "--help"])
    assert exited.value.code == 0
    out = " ".join(capsys.readouterr().out.split())
    assert out.startswith("usage: sanlab run")
    assert "base seed, 0 to 2**63-1 (9223372036854775807)" in out
    assert "2**64" not in out
