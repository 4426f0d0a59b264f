"""What the Linux and Windows readers share: the nearest valid choice for an error, control sequences taken
out of captured terminal output, and the other tools' outputs users hand over by mistake, each
recognised and named with the option it belongs to."""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence

from sanlab.hostimport.records import HostInputError

# A terminal's colour and bold sequences (multipath prints its map line in bold on a terminal;
# `script` and some pasted captures keep the sequence).
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def plain_lines(text: str) -> list[str]:
    """The text's lines, terminal control sequences and carriage returns taken out."""
    return [_ANSI.sub("", line).rstrip("\r") for line in text.split("\n")]


def nearest(value: str, choices: Sequence[str]) -> str:
    """The choice nearest to `value` (always one: an error names the nearest valid choice)."""
    found = difflib.get_close_matches(value, list(choices), n=1, cutoff=0.0)
    return found[0] if found else choices[0]


# Each recognisable output: a pattern of its first meaningful line, what it is, and where it goes.
_KNOWN = (
    (re.compile(r"^nvme-subsys\d+ - NQN="), "`nvme list-subsys` output", "--nvme"),
    (re.compile(r"^Linux \S+ \(.*\)\s+\S+\s+_\S+_"), "an `iostat` capture", "--iostat"),
    (re.compile(r"^/sys/(block|class|devices)/"), "sysfs values (`grep -H . /sys/block/...`)", "--sysfs"),
    (re.compile(r"^\S.*\(\w+\) dm-\d+ |^\S+ dm-\d+ \S+,|^\w+ \([0-9a-fA-F]+\) dm-\d+|^(create|reload): "), "`multipath -ll` output", "--multipath"),
    (re.compile(r"^(naa|eui|t10|mpx)\.\S+$|^(fc|iqn|sas|pscsi|unknown)\.\S*-(naa|eui|t10|mpx)\.|^\s*(Display Name|Group State|Runtime Name|Device Max Queue Depth):"), "an esxcli storage listing", "`sanlab import esxi --esxcli`"),
    (re.compile(r"^\"?\(PDH-CSV"), "an esxtop or typeperf capture (PDH-CSV)", "`sanlab import esxi --esxtop` (esxtop) or `sanlab import windows --typeperf` (typeperf)"),
    (re.compile(r"^MPIO Disk\d+[: ]|^For more information about a particular disk, use 'mpclaim|^MPIO Disk\s+System Disk"), "Windows `mpclaim -s -d` output", "`sanlab import windows --mpclaim`"),
    (re.compile(r"^(hcil|name)\s+(dev|sysfs)\s"), "a `multipathd show paths` (or maps) table, without the maps' path groups", "nowhere: give `multipath -ll`"),
)


def refuse_foreign(lines: Sequence[str], file: str, expected: str, option: str, error: type[HostInputError] = HostInputError) -> None:
    """Refuses, in one line, an empty file or another tool's output recognised by its first
    meaningful line (as `error`, the platform's own); returns when the first line could be
    `expected`'s."""
    number, first = next(((k, line.strip()) for k, line in enumerate(lines, start=1) if line.strip()), (1, ""))
    if not first:
        raise error(f"{file}:1: the file is empty: expected {expected}")
    if "\x00" in first:
        raise error(f"{file}:{number}: binary data, not text: expected {expected}")
    for pattern, what, where in _KNOWN:
        if pattern.search(first) and where != option:
            raise error(f"{file}:{number}: this is {what}, not {expected}: give it to {where}")
