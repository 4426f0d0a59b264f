"""A Windows host in: `mpclaim -s -d` and `mpclaim -s -d N` (the Microsoft DSM's MPIO disks and
their paths) read by `mpclaim.py` into the records of `records.py`, and a `typeperf
"\\PhysicalDisk(*)\\*"` capture read by `typeperf.py`; `topology.py` makes of the listings the
host's arrays, volumes and links, and `scenario.py` the scenario, with the builders the Linux
import uses (`hostimport/topology.py`, `hostimport/load.py`; docs/from-your-host.md, "A Windows
host")."""
