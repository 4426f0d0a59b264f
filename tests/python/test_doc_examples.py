"""Every example in README.md, docs/**/*.md and the subcommands' --help runs, as it is written.

What is collected, page by page and in the page's order:

- in fenced blocks (```sh, ```console, ```bash or unmarked), every line that starts with
  `sanlab`, `.venv/bin/sanlab` or `$ ` before either, and every `.venv/bin/python docs/...`
  script line (a trailing `\\` joins lines, `# ...` is a comment, `> FILE` sends stdout to FILE).
  A `$ ` command's following lines are its output. Synopses, whose first argument is a
  capitalised placeholder (`SCENARIO`, `RUN_DIR`, `FILE`), are not examples;
- inline code spans `sanlab ...` or `.venv/bin/sanlab ...` whose first argument is a file path,
  and `sanlab kinds`;
- ```python blocks that use sanlab, run as they are;
- ```toml blocks that are whole scenarios (they start with `schema_version`): written next to
  the scenario their `base` names, then checked with `sanlab validate`;
- the `e.g.` example of every option in every subcommand's --help (from `build_parser()`, the
  parser `--help` prints), each on the metro study.

How each runs: through the `cli` fixture (`python -m sanlab.cli`), from a working directory
holding copies of scenarios/, docs/studies/ and tests/data/, so that every repository-relative path resolves
and run folders land in the copy; a page's examples share one directory, in order (a `report`
reads the folder its page's `run` wrote). `validate`, `report`, `compare`, `kinds` and the Python
code run as written; one that leaves nothing behind (`kinds`, `validate`) runs once however many
pages show it. A `run` or `sweep` example (the choice that keeps this file well under a minute on
two shared cores):

- runs for real when a later example of its page reads what it writes (its `--out` folder, its
  JSON), and so do the README's: with `--duration 0.2s` in place of its own duration, plus
  `--set run.warmup=0s` when the scenario's warm-up is longer; a sweep goes to one Dask cluster
  this module starts (`--scheduler` its address), so the cluster starts once;
- is otherwise checked as `sanlab validate` checks it, without its cost pilot:
  `sanlab.validate(..., cost=False)` with the same scenario, `--variant`s, `--set`s and duration
  (for a sweep, at every point of its grid) builds every variant without simulating; so is one
  that cannot run that short (its faults come later in the run).

The --help examples run for real on the metro study, `run`, `sweep` and `validate` with
`--variant alua_rr` (the sweep's `--scheduler` example address is this module's cluster).

A `$ ` example shown with an `error:` line must fail with exit code 2 and exactly that message;
one shown with other output must print that output's first line. A script that reads the run
folder of an example that was only checked cannot run: those are listed in NOT_RUN, and the test
fails if the list and the pages disagree. The benchmarks' commands (`.venv/bin/python benches/...`)
and commands of other tools (make, dask, chromium) are not collected.
"""

from __future__ import annotations

import itertools
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

import sanlab
from sanlab.cli import build_parser
from sanlab.sweep import Axis

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
SHORT = "0.2s"
METRO = "scenarios/studies/metro_cluster_psp.toml"
NOT_RUN = {
    # The failover study runs 30 variants of 150 s (its faults start at 60 s): only checked here.
    ("docs/studies/failover.md", ".venv/bin/python docs/studies/failover_table.py runs/failover"),
}

Cli = Callable[..., subprocess.CompletedProcess[str]]
_ONCE: dict[tuple[str, ...], subprocess.CompletedProcess[str]] = {}

FENCE = re.compile(r"^```([\w-]*)[^\n]*\n(.*?)^```[ \t]*$", re.S | re.M)
COMMAND = re.compile(r"^(?:\$ )?(?:\.venv/bin/)?sanlab\s")
SCRIPT = re.compile(r"^(?:\$ )?\.venv/bin/python docs/")
INLINE = re.compile(r"`((?:\.venv/bin/)?sanlab(?: [^`]*)?)`")
PLACEHOLDER = re.compile(r"^[A-Z][A-Z_]+$")
SHELL_BLOCKS = {"", "sh", "console", "bash", "shell"}


@dataclass(frozen=True)
class Example:
    """One example of a page: a command line, Python code or a whole scenario file."""

    page: str
    kind: str  # "command", "python" or "scenario"
    text: str
    output: tuple[str, ...] = ()

    def __str__(self) -> str:
        return f"{self.page}: {self.text.splitlines()[0]}"


def _shell_examples(page: str, body: str) -> Iterator[Example]:
    lines = body.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i].strip()
        while line.endswith("\\") and i + 1 < len(lines):
            i += 1
            line = line[:-1].rstrip() + " " + lines[i].strip()
        i += 1
        if not (COMMAND.match(line) or SCRIPT.match(line)):
            continue
        output: list[str] = []
        if line.startswith("$ "):
            while i < len(lines) and lines[i].strip() and not lines[i].startswith("$ "):
                output.append(lines[i].rstrip())
                i += 1
        if not _is_synopsis(line):
            yield Example(page, "command", line, tuple(output))


def _is_synopsis(line: str) -> bool:
    words = line.removeprefix("$ ").split()
    return len(words) > 2 and bool(PLACEHOLDER.match(words[2]))


def _inline_examples(page: str, prose: str) -> Iterator[Example]:
    for match in INLINE.finditer(prose):
        words = match.group(1).split()
        if words[1:] == ["kinds"] or (len(words) > 2 and ("/" in words[2] or words[2].endswith(".toml"))):
            if not _is_synopsis(match.group(1)):
                yield Example(page, "command", match.group(1))


def collect(path: Path) -> list[Example]:
    """A page's examples in the page's order."""
    page = str(path.relative_to(ROOT))
    text = path.read_text(encoding="utf-8")
    examples: list[Example] = []
    end = 0
    for fence in FENCE.finditer(text):
        examples.extend(_inline_examples(page, text[end : fence.start()]))
        end = fence.end()
        lang, body = fence.group(1), fence.group(2)
        if lang in SHELL_BLOCKS:
            examples.extend(_shell_examples(page, body))
        elif lang == "python" and re.search(r"^(import|from) sanlab", body, re.M):
            examples.append(Example(page, "python", body))
        elif lang == "toml" and body.lstrip().startswith("schema_version"):
            examples.append(Example(page, "scenario", body))
    examples.extend(_inline_examples(page, text[end:]))
    return examples


EXAMPLES = {str(path.relative_to(ROOT)): collect(path) for path in PAGES}
PAGES_WITH_EXAMPLES = sorted(page for page, found in EXAMPLES.items() if found)


@pytest.fixture(scope="module")
def scheduler() -> Iterator[str]:
    """The address of a Dask cluster every sweep of this module runs on."""
    from distributed import LocalCluster

    # The scheduler's HTTP server on a free port: other test files' clusters may run beside it.
    with LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None, scheduler_kwargs={"dashboard_address": ":0"}) as cluster:
        yield cluster.scheduler_address


def _workdir(tmp_path: Path) -> Path:
    work = tmp_path / "repo"
    shutil.copytree(ROOT / "scenarios", work / "scenarios")
    shutil.copytree(ROOT / "docs" / "studies", work / "docs" / "studies")
    # The captures the import examples read (1.9 MB).
    shutil.copytree(ROOT / "tests" / "data", work / "tests" / "data")
    return work


def _message(work: Path, scenario: str, variants: list[str] | None, sets: list[str]) -> str:
    """The engine's message for the scenario with these variants and overrides ("" when valid)."""
    try:
        sanlab.validate(work / scenario, set=sets, variants=variants, cost=False)
    except sanlab.ScenarioError as error:
        return str(error)
    return ""


def _short(work: Path, scenario: str, variants: list[str] | None, sets: list[str]) -> list[str] | None:
    """The extra arguments that make a run short, or None when the scenario cannot run that short."""
    for extra in ([], ["run.warmup=0s"]):
        if not _message(work, scenario, variants, [*sets, *extra, f"run.duration={SHORT}"]):
            return ["--duration", SHORT, *(item for value in extra for item in ("--set", value))]
    return None


def _without(args: list[str], option: str) -> list[str]:
    """The arguments without an option and its value."""
    out: list[str] = []
    skip = False
    for arg in args:
        if skip:
            skip = False
        elif arg == option:
            skip = True
        elif not arg.startswith(option + "="):
            out.append(arg)
    return out


@dataclass
class Page:
    """Runs a page's examples in order, in one working directory."""

    cli: Cli
    work: Path
    scheduler: Callable[[], str]
    real_runs: bool = False
    later: str = ""
    checked_outs: set[str] = field(default_factory=set)
    not_run: list[tuple[str, str]] = field(default_factory=list)

    def run(self, example: Example) -> None:
        getattr(self, f"_{example.kind}")(example)

    def _python(self, example: Example) -> None:
        done = subprocess.run(
            [sys.executable, "-c", example.text], cwd=self.work, capture_output=True, text=True, timeout=300
        )
        assert done.returncode == 0, f"{example}\n{done.stderr}"

    def _scenario(self, example: Example) -> None:
        table = tomllib.loads(example.text)
        folder = self.work / "scenarios"
        if "base" in table:
            (base,) = (path.parent for path in folder.rglob(table["base"]))
            folder = base
        path = folder / f"{table['name']}.toml"
        path.write_text(example.text, encoding="utf-8")
        done = self.cli("validate", str(path.relative_to(self.work)), cwd=self.work)
        assert done.returncode == 0, f"{example}\n{done.stderr}"

    def _command(self, example: Example) -> None:
        words = shlex.split(example.text.removeprefix("$ "), comments=True)
        stdout_file = None
        if ">" in words:
            at = words.index(">")
            words, stdout_file = words[:at], words[at + 1]
        if words[0].endswith("python"):
            self._script(example, words[1:], stdout_file)
            return
        args = words[1:]
        fails = any(line.startswith("error:") for line in example.output)
        if args[0] in ("run", "sweep") and not fails:
            real = self.real_runs or (stdout_file is not None and stdout_file in self.later)
            prepared = self._prepared(example, args, real)
            if prepared is None:
                return
            args = prepared
        stateless = stdout_file is None and args[0] in ("kinds", "validate")
        done = _ONCE.get(tuple(args)) if stateless else None
        if done is None:
            done = self.cli(*args, cwd=self.work)
            if stateless:
                _ONCE[tuple(args)] = done
        if stdout_file is not None:
            (self.work / stdout_file).write_text(done.stdout, encoding="utf-8")
        self._compare(example, done)

    def _script(self, example: Example, args: list[str], stdout_file: str | None) -> None:
        if any(arg.rstrip("/") in self.checked_outs for arg in args):
            self.not_run.append((example.page, example.text))
            return
        done = subprocess.run(
            [sys.executable, *args], cwd=self.work, capture_output=True, text=True, timeout=300
        )
        assert done.returncode == 0, f"{example}\n{done.stderr}"
        if stdout_file is not None:
            (self.work / stdout_file).write_text(done.stdout, encoding="utf-8")

    def _prepared(self, example: Example, args: list[str], real: bool) -> list[str] | None:
        """The arguments a run or sweep runs with, or None when it was checked instead."""
        parsed = build_parser().parse_args(args)
        out = None if parsed.out is None else str(parsed.out).rstrip("/")
        real = real or (out is not None and out in self.later)
        short = _short(self.work, parsed.scenario, parsed.variants, list(parsed.sets)) if real else None
        if short is None:
            self._check(example, parsed)
            if out is not None:
                self.checked_outs.add(out)
            return None
        args = [*_without(args, "--duration"), *short]
        if args[0] == "sweep":
            args = [*_without(_without(args, "--scheduler"), "--workers"), "--scheduler", self.scheduler()]
        return args

    def _check(self, example: Example, parsed: Any) -> None:
        """Checks a run or sweep as `sanlab validate` would, at every point of a sweep's grid."""
        sets = [*parsed.sets, *([f"run.duration={parsed.duration}"] if parsed.duration else [])]
        points: Iterator[tuple[str, ...]] = iter([()])
        if parsed.command == "sweep":
            axes = [Axis.parse(text) for text in parsed.vary]
            points = itertools.product(*([f"{axis.key}={value}" for value in axis.values] for axis in axes))
        for point in points:
            message = _message(self.work, parsed.scenario, parsed.variants, [*sets, *point])
            assert not message, f"{example}: {message}"

    def _compare(self, example: Example, done: subprocess.CompletedProcess[str]) -> None:
        shown = [line for line in example.output if line.strip()]
        if shown and shown[0].startswith("error:"):
            assert done.returncode == 2, f"{example}: expected exit 2, got {done.returncode}\n{done.stderr}"
            printed = done.stderr.strip().splitlines()
            assert printed == shown, f"{example}: the page shows a message the command no longer prints"
            return
        assert done.returncode == 0, f"{example}: exit {done.returncode}\n{done.stderr}"
        if shown:
            printed = done.stdout.strip().splitlines()
            assert printed and printed[0].rstrip() == shown[0].rstrip(), (
                f"{example}: the page shows {shown[0]!r}, the command prints {printed[:1]!r}"
            )


def test_the_examples_are_collected() -> None:
    """The collector finds the kinds of example the pages show (it must not go blind)."""
    found = [example for examples in EXAMPLES.values() for example in examples]
    readme = EXAMPLES["README.md"]
    assert any(example.output and example.output[0].startswith("error:") for example in readme)
    assert any(example.text.startswith(".venv/bin/sanlab sweep") for example in found)
    assert any(example.text.startswith(".venv/bin/sanlab compare") for example in found)
    assert any(example.kind == "python" for example in found)
    assert any(example.kind == "scenario" for example in found)
    assert all(not _is_synopsis(example.text) for example in found)
    assert len(found) >= 20, [str(example) for example in found]


@pytest.mark.parametrize("page", PAGES_WITH_EXAMPLES)
def test_page_examples_run(page: str, cli: Cli, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    """Each of the page's examples runs as written (see the module's docstring for the shortening)."""
    runner = Page(cli, _workdir(tmp_path), lambda: request.getfixturevalue("scheduler"), page == "README.md")
    examples = EXAMPLES[page]
    for at, example in enumerate(examples):
        runner.later = "\n".join(later.text for later in examples[at + 1 :])
        runner.run(example)
    expected = {item for item in NOT_RUN if item[0] == page}
    assert set(runner.not_run) == expected


def _help_examples() -> dict[str, list[tuple[str, str]]]:
    """Per subcommand, (option, example value) for every `e.g.` in its --help."""
    parser = build_parser()
    (commands,) = (action for action in parser._actions if action.__class__.__name__ == "_SubParsersAction")
    found: dict[str, list[tuple[str, str]]] = {}
    for name, sub in commands.choices.items():
        for action in sub._actions:
            match = re.search(r"e\.g\.\s+(\S+)", action.help or "")
            if match and action.option_strings:
                found.setdefault(name, []).append((action.option_strings[-1], match.group(1).rstrip(",)")))
    return found


def test_help_examples_run(cli: Cli, tmp_path: Path, scheduler: str) -> None:
    """Every --help example, on the metro study: run, sweep and validate with `--variant alua_rr`;
    a sweep's `--scheduler` example address is this module's cluster."""
    work = _workdir(tmp_path)
    found = _help_examples()
    assert {"run", "sweep", "validate"} <= set(found), found
    for command, examples in found.items():
        args = [command, METRO, "--variant", "alua_rr"]
        for option, value in examples:
            args += [option, scheduler if option == "--scheduler" else value]
        done = cli(*args, cwd=work)
        assert done.returncode == 0, f"sanlab {' '.join(args)}\n{done.stderr}"
