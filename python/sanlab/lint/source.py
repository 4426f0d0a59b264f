"""The benchmark being linted: a fio job file, a fio command line or a vdbench parameter file.

The engine reads it (the same readers `sanlab run` uses, so a file it cannot read gets the same
error); this module only knows how to name it in a scenario, where an option is written, and
how to write a copy with one option changed, for the simulation that shows a finding's effect.
"""

from __future__ import annotations

import fnmatch
import os
import re
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from sanlab.errors import UserError
from sanlab.formatting import shown_name
from sanlab.input_files import read_text
from sanlab.toml_text import toml_value

WHAT = "a fio job file, a fio command line in a file, or a vdbench parameter file"


class LintInputError(UserError):
    """The benchmark cannot be read: the message says which file and why."""


@dataclass(frozen=True)
class Benchmark:
    """A benchmark as written: `kind` is the sanlab job kind that reads it."""

    kind: str
    text: str
    path: Path | None  # None for a command line given on sanlab's own command line
    rd: str | None = None  # the vdbench run linted, when the file has several
    variables: tuple[tuple[str, str], ...] = ()  # a vdbench file's $variables, as vdbench's name=value

    @property
    def label(self) -> str:
        return str(self.path) if self.path else "the command line"

    def job_table(self, fixed: str | None = None) -> str:
        """The `[[vm.job]]` value (an inline TOML table) that runs this benchmark; `fixed`, the
        command line or the file to run instead."""
        if self.kind == "fio":
            return toml_value({"name": "lint", "kind": "fio", "cmdline": fixed or self.text})
        assert self.path is not None
        table: dict[str, object] = {"name": "lint", "kind": self.kind, "file": fixed or str(self.path.resolve())}
        if self.rd is not None:
            table["rd"] = self.rd
        if self.variables:
            table["vars"] = dict(self.variables)
        return toml_value(table)

    @contextmanager
    def fixed_job_table(self, option: str, value: str | None) -> Iterator[str]:
        """The `[[vm.job]]` value that runs the benchmark with `option` set to `value` (None:
        removed). A file's fixed text is a copy in memory (`in_memory`) whose includes name the
        original's folder, so that they read the files the benchmark as written reads."""
        text = self.with_option(option, value)
        if self.kind == "fio":
            yield self.job_table(text)
            return
        assert self.path is not None
        with in_memory(self.path.name, self._includes_from_original(text)) as copy:
            yield self.job_table(str(copy))

    def _includes_from_original(self, text: str) -> str:
        """`text` with each relative include of its own lines written under the original's
        folder: the engine resolves an include beside the file naming it (fio/file.rs,
        vdbench/parm.rs), and the copy is read from /proc/self/fd. (A /tmp copy read
        `include ../x.fio` from /tmp, where anyone can plant it.) An include the line cannot
        name so (a folder with a control character; for vdbench a quote, or a `$` or `!` it
        would substitute; a name starting with a variable) is left: it resolves under
        /proc/self/fd, where nothing can be planted, and the fix is not simulated."""
        assert self.path is not None
        folder = str(self.path.resolve().parent)
        if shown_name(folder) != folder or (self.kind == "vdbench" and any(c in folder for c in "\"$!")):
            return text
        out = []
        for line in text.splitlines():
            if self.kind == "fio_file" and (m := re.fullmatch(r"\s*include\s+(\S.*?)\s*", line)):
                line = f"include {os.path.join(folder, m.group(1))}"
            elif self.kind == "vdbench" and (m := re.fullmatch(r"\s*include=(.*)", line)) and not m.group(1).lstrip('"').startswith(("/", "$", "!")):
                # Quoted, the folder keeps its blanks: vdbench cuts a line at its first blank outside quotes.
                line = f'include="{folder}/"{m.group(1)}'
            out.append(line)
        return "\n".join(out) + "\n"

    def run_lines(self) -> list[tuple[int, str]]:
        """(line number, text) of the lines that matter to the linted run: every line, except in a
        vdbench file of several runs, where only the run's rd line, the workloads it names, the
        storage those name, and the defaults count."""
        lines = [(n, _without_comment(self.kind, line)) for n, line in enumerate(self.text.splitlines(), start=1)]
        if self.kind != "vdbench" or self.rd is None:
            return lines

        def named(key: str, body: str) -> str | None:
            m = re.match(rf"\s*{key}\s*=\s*([^,\s]+)", body, re.IGNORECASE)
            return m.group(1) if m else None

        def referenced(key: str, body: str) -> list[str]:
            m = re.search(rf",\s*{key}\s*=\s*(\([^)]*\)|[^,\s]+)", body, re.IGNORECASE)
            return re.split(r"[,\s]+", m.group(1).strip("()")) if m else []

        # A run expanded from one rd (a curve point `c_(50%)`, a for loop's `sweep xfersize=4k`)
        # keeps that rd's name first.
        rd = self.rd
        run = [(n, body) for n, body in lines if (name := named("rd", body)) and (rd == name or rd.startswith((f"{name}_(", f"{name} ")))]
        wds = [w for _, body in run for w in referenced("wd", body)]
        wd_lines = [(n, body) for n, body in lines if (name := named("wd", body)) and (name.lower() == "default" or any(fnmatch.fnmatch(name, w) for w in wds))]
        sds = [sd for _, body in wd_lines for sd in referenced("sd", body)]
        sd_lines = [(n, body) for n, body in lines if (name := named("sd", body)) and (name.lower() == "default" or any(fnmatch.fnmatch(name, sd) for sd in sds))]
        return sorted(run + wd_lines + sd_lines)

    def line_of(self, option: str) -> int | None:
        """The first line (1-based; for a command line, the argument's number) that sets `option`."""
        if self.kind == "fio":
            for n, word in enumerate(self.text.split()):
                if re.fullmatch(rf"-{{1,2}}{re.escape(option)}(=.*)?", word):
                    return n
            return None
        pattern = _option_pattern(self.kind, option)
        return next((n for n, body in self.run_lines() if pattern.search(body)), None)

    def with_option(self, option: str, value: str | None) -> str:
        """The text with `option` set to `value` in every job (None: removed everywhere)."""
        if self.kind == "fio":
            words = [w for w in self.text.split() if not re.fullmatch(rf"-{{1,2}}{re.escape(option)}(=.*)?", w)]
            if value is None:
                return " ".join(words)
            # An option after a job's --name applies to that job: set it in each.
            out: list[str] = []
            for word in words:
                out.append(word)
                if re.fullmatch(r"-{1,2}name=.*", word):
                    out.append(f"--{option}={value}")
            return " ".join(out)
        lines = self.text.splitlines()
        pattern = _option_pattern(self.kind, option)
        if self.kind == "fio_file":
            kept = [line for line in lines if not pattern.search(_without_comment(self.kind, line))]
            if value is None:
                return "\n".join(kept) + "\n"
            # Appended to every section, fio reads it over whatever came before.
            out = []
            in_section = False
            for line in kept:
                if line.strip().startswith("["):
                    if in_section:
                        out.append(f"{option}={value}")
                    in_section = True
                out.append(line)
            out.append(f"{option}={value}")
            return "\n".join(out) + "\n"
        # vdbench: on each workload definition (wd=) line, replacing or adding the key.
        out = []
        for line in lines:
            body = _without_comment(self.kind, line)
            if pattern.search(body):
                line = pattern.sub("" if value is None else f",{option}={value}", body)
            elif value is not None and re.match(r"\s*wd\s*=", body, re.IGNORECASE) and not re.match(r"\s*wd\s*=\s*default\b", body, re.IGNORECASE):
                line = body.rstrip() + f",{option}={value}"
            out.append(line)
        return "\n".join(out) + "\n"


def _option_pattern(kind: str, option: str) -> re.Pattern[str]:
    if kind == "fio_file":
        return re.compile(rf"^\s*{re.escape(option)}\s*(=.*)?$")
    # vdbench: key=value among comma-separated keys; a value may be a parenthesised list.
    return re.compile(rf",?\s*\b{re.escape(option)}\s*=\s*(\([^)]*\)|[^,\s]*)", re.IGNORECASE)


def _without_comment(kind: str, line: str) -> str:
    if kind == "fio_file":
        return "" if line.lstrip().startswith((";", "#")) else line
    return "" if line.lstrip().startswith(("*", "#", "/")) else line


def _looks_like_vdbench(text: str) -> bool:
    return re.search(r"^\s*(sd|wd|rd|fsd|fwd|hd)\s*=", text, re.MULTILINE | re.IGNORECASE) is not None


def _looks_like_cmdline(text: str) -> bool:
    first = text.strip().split(maxsplit=2)
    words = first[1:] if first[:1] == ["sudo"] else first
    return bool(words) and (words[0] in ("fio", "fio.exe") or words[0].endswith(("/fio", "\\fio.exe")))


@contextmanager
def in_memory(name: str, text: str) -> Iterator[Path]:
    """`text` as a file in this process's memory (a memfd, Linux), named by its /proc/self/fd
    path for the engine, which runs in this process: a killed lint leaves no file behind, and
    no other user can write beside it."""
    if not hasattr(os, "memfd_create"):  # not Linux: a private folder, removed on the way out
        with tempfile.TemporaryDirectory(prefix="sanlab-lint-") as folder:
            path = Path(folder) / name
            path.write_text(text, encoding="utf-8")
            yield path
        return
    with open(os.memfd_create(name), "w", encoding="utf-8") as file:
        file.write(text)
        file.flush()
        yield Path(f"/proc/self/fd/{file.fileno()}")


def read_benchmark(file: str | None, cmdline: str | None, rd: str | None = None, variables: tuple[tuple[str, str], ...] = ()) -> Benchmark:
    """The benchmark from a file (its kind recognised from its content) or a command line."""
    if cmdline is not None:
        return Benchmark("fio", cmdline, None)
    assert file is not None
    path = Path(file)
    # As the engine reads it: a regular file up to 16 MiB (a FIFO blocked for ever, /dev/zero ran out of memory).
    text = read_text(path, WHAT)
    try:
        str(path.resolve()).encode("utf-8")
    except UnicodeEncodeError:  # the engine's scenario names it in UTF-8
        raise LintInputError(f"{path}: its path is not UTF-8 text, which the engine reads file names as: rename it") from None
    if rd is not None and not _looks_like_vdbench(text):
        raise LintInputError(f"{path}: --rd picks a vdbench run, and this is no vdbench parameter file")
    if _looks_like_cmdline(text):
        return Benchmark("fio", text, path)
    if _looks_like_vdbench(text):
        return Benchmark("vdbench", text, path, rd, variables)
    if variables:
        raise LintInputError(f"{path}: --var gives a vdbench file's $variables, and this is no vdbench parameter file")
    return Benchmark("fio_file", text, path)


KIND_NAMES = {"fio_file": "fio job file", "fio": "fio command line", "vdbench": "vdbench parameter file"}
