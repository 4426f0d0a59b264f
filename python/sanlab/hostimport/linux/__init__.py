"""A Linux host in: `multipath -ll` (dm-multipath), `nvme list-subsys` (NVMe native multipath),
the block queue settings of `/sys/block` and an `iostat -x` capture, each read by a module of its
own into the records of `records.py`; `topology.py` makes of them the host's arrays, volumes and
links, and `scenario.py` the scenario, with the builders the Windows import uses too
(`hostimport/topology.py`: the model and its scenario text, `hostimport/load.py`: each volume's
load and its array's speed from a capture; docs/from-your-host.md, "A Linux host")."""
